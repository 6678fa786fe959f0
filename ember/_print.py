"""torch-style ``repr`` of tensors."""
import numpy as np

from . import _dtype

_OPTIONS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80, "sci_mode": None}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Sets how tensors print (as ``torch.set_printoptions``)."""
    if profile == "default":
        _OPTIONS.update(precision=4, threshold=1000, edgeitems=3, linewidth=80)
    elif profile == "short":
        _OPTIONS.update(precision=2, threshold=1000, edgeitems=2, linewidth=80)
    elif profile == "full":
        _OPTIONS.update(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)
    for k, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                 ("linewidth", linewidth)):
        if v is not None:
            _OPTIONS[k] = v
    _OPTIONS["sci_mode"] = sci_mode


def _float_formatter(a):
    finite = a[np.isfinite(a)]
    prec = _OPTIONS["precision"]
    if finite.size == 0:
        return lambda v: _special(v) or f"{v:.{prec}f}"
    absf = np.abs(finite)
    nonzero = absf[absf > 0]
    ints = bool(np.all(finite == np.round(finite)))
    big, small = (float(nonzero.max()), float(nonzero.min())) if nonzero.size else (0.0, 0.0)
    sci = _OPTIONS["sci_mode"]
    if sci is None:
        sci = nonzero.size > 0 and (big / small > 1000.0 or big > 1e8 or small < 1e-4)
        if ints and big <= 1e8:
            sci = False
    if sci:
        return lambda v: _special(v) or f"{v:.{prec}e}"
    if ints:
        return lambda v: _special(v) or f"{v:.0f}."
    return lambda v: _special(v) or f"{v:.{prec}f}"


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def tensor_repr(t):
    a = t._data if t.device.type == "cpu" else t._data.get()
    if a.dtype == _dtype.bfloat16.np or a.dtype == np.float16:
        a = a.astype(np.float32)
    if a.dtype.kind == "f":
        fmt = _float_formatter(a)
        formatter = {"float_kind": fmt}
    elif a.dtype.kind == "b":
        formatter = {"bool": lambda v: "True" if v else "False"}
    elif a.dtype.kind == "c":
        formatter = None
    else:
        formatter = {"int": str}
    prefix = "tensor("
    if a.size == 0 and a.ndim != 1:
        body = "[]"
    elif a.ndim == 0:
        body = formatter and list(formatter.values())[0](a.item() if a.dtype.kind != "f" else a.item()) or str(a)
    else:
        body = np.array2string(a, separator=", ", prefix=prefix, formatter=formatter,
                               threshold=_OPTIONS["threshold"], edgeitems=_OPTIONS["edgeitems"],
                               max_line_width=_OPTIONS["linewidth"])
    suffix = []
    if a.size == 0 and a.ndim != 1:
        suffix.append(f"size={tuple(a.shape)}")
    if t.device.type != "cpu":
        suffix.append(f"device='{t.device}'")
    if t.dtype not in (_dtype.get_default_dtype(), _dtype.int64, _dtype.bool) or (
            a.size == 0 and t.dtype is not _dtype.get_default_dtype()):
        suffix.append(f"dtype=ember.{t.dtype.name}")
    if t.grad_fn is not None:
        suffix.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t._requires_grad:
        suffix.append("requires_grad=True")
    return prefix + body + "".join(", " + s for s in suffix) + ")"
