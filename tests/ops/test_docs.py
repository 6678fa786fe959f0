from .make_docs import DOC, render


def test_ops_doc_is_current():
    assert DOC.exists() and DOC.read_text() == render(), "docs/ops.md is stale: run python -m tests.ops.make_docs"
