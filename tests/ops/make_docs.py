"""Writes docs/ops.md, the op coverage table, from the op table: ``python -m tests.ops.make_docs``."""
import pathlib

from .op_db import OPS

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "ops.md"


def render():
    lines = ["# Op coverage", "",
             "Generated from `tests/ops/op_db.py` by `python -m tests.ops.make_docs`; `tests/ops/test_docs.py` fails "
             "when it is stale. Each checked column is a test run against PyTorch: forward values and dtype, "
             "non-contiguous inputs, gradients with a random output gradient, and float64 `gradcheck` (central "
             "differences).", "",
             "| op | category | dtypes | forward | non-contiguous | backward | gradcheck | notes |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    yes = "yes"
    for op in sorted(OPS, key=lambda o: (o.category, o.name)):
        fwd = "no" if "forward" in op.skips else yes
        nc = yes if op.noncontig and "noncontig" not in op.skips else "no"
        floats = op.grad and any(d in ("float32", "float64") for d in op.dtypes)
        bwd = (yes if "backward" not in op.skips else "no") if floats else "n/a"
        gc = (yes if op.gradcheck and "gradcheck" not in op.skips and "float64" in op.dtypes else "no") \
            if floats else "n/a"
        notes = "; ".join(f"{k}: {v}" for k, v in op.skips.items()).replace("|", "/").replace("\n", " ")
        if floats and not op.gradcheck and "gradcheck" not in op.skips:
            notes = notes or "row of edge values (inf, nan, poles, ties): compared with torch, not gradchecked"
        elif floats and "float64" not in op.dtypes:
            notes = notes or "a dtype-argument variant without float64 samples; the op's main row is gradchecked"
        lines.append(f"| {op.name} | {op.category} | {', '.join(op.dtypes)} | {fwd} | {nc} | {bwd} | {gc} | "
                     f"{notes} |")
    n_grad = sum(1 for o in OPS if o.grad)
    lines += ["", f"{len(OPS)} ops in the table, {n_grad} differentiable."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(render())
    print(f"wrote {DOC}")
