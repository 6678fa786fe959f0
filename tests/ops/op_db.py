"""The op table: every op ember implements, with samples, dtypes and tolerances. ``docs/ops.md`` is made from it.

Each category lives in its own file (``db_*.py``) and contributes a list ``OPS``.
"""
import importlib
import pkgutil
import pathlib

_here = pathlib.Path(__file__).parent
OPS = []
for _m in sorted(p.stem for p in _here.glob("db_*.py")):
    OPS.extend(importlib.import_module(f"tests.ops.{_m}").OPS)

_names = [o.name for o in OPS]
_dups = {n for n in _names if _names.count(n) > 1}
assert not _dups, f"duplicate op names in the op table: {sorted(_dups)}"
