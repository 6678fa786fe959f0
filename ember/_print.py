"""``repr`` of tensors, character for character as torch prints them (torch/_tensor_str.py's algorithm)."""
import math

import numpy as np

from . import _dtype


class _Options:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _Options()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Sets how tensors print, as ``torch.set_printoptions``.

    Args:
        precision: digits after the decimal point (default 4).
        threshold: element count above which the repr is summarised with ``...`` (default 1000).
        edgeitems: items shown at each end of a summarised dimension (default 3).
        linewidth: characters per line (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"`` presets.
        sci_mode: force (True) or forbid (False) scientific notation; None chooses automatically.
    """
    preset = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}.get(profile)
    if preset is not None:  # an unknown profile changes nothing, as torch
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = preset
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict."""
    return {k: getattr(PRINT_OPTS, k) for k in ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")}


class _Formatter:
    """Chooses one width and notation (integer-valued, fixed or scientific) for all the values of a tensor."""

    def __init__(self, values, floating):
        self.floating = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        p = PRINT_OPTS.precision
        if not floating:
            for v in values.tolist():
                self.max_width = max(self.max_width, len(str(v)))
        else:
            vals = values[np.isfinite(values) & (values != 0)]
            if vals.size:
                absv = np.abs(vals)
                lo, hi = absv.min(), absv.max()
                self.int_mode = bool(np.all(vals == np.ceil(vals)))
                sci = PRINT_OPTS.sci_mode
                self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4) if sci is None else sci
                fmt, extra = (f"{{:.{p}e}}", 0) if self.sci_mode else ("{:.0f}", 1) if self.int_mode else \
                    (f"{{:.{p}f}}", 0)
                for v in vals.tolist():
                    self.max_width = max(self.max_width, len(fmt.format(v)) + extra)

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{p}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{p}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _val_str(val, f1, f2):
    if f2 is None:
        return f1.format(val)
    real = f1.format(val.real)
    imag = (f2.format(val.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector_str(a, indent, summarize, f1, f2):
    element_length = f1.width() + 2 + (f2.width() + 1 if f2 is not None else 0)
    per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / element_length)))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = [_val_str(v, f1, f2) for v in a[:e].tolist()] + [" ..."] + \
            [_val_str(v, f1, f2) for v in a[-e:].tolist()]
    else:
        data = [_val_str(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with(a, indent, summarize, f1, f2):
    if a.ndim == 0:
        return _val_str(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        slices = [_tensor_str_with(a[i], indent + 1, summarize, f1, f2) for i in range(e)] + ["..."] + \
            [_tensor_str_with(a[i], indent + 1, summarize, f1, f2) for i in range(len(a) - e, len(a))]
    else:
        slices = [_tensor_str_with(a[i], indent + 1, summarize, f1, f2) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(a):
    """The elements a summarised print shows: the first and last ``edgeitems`` along every long dimension."""
    e = PRINT_OPTS.edgeitems
    for axis, n in enumerate(a.shape):
        if n > 2 * e:
            a = np.take(a, list(range(e)) + list(range(n - e, n)), axis=axis)
    return a


def _tensor_str(a, indent):
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    if a.dtype.kind == "c":
        part = _summarized(a) if summarize else a
        f1 = _Formatter(part.real.astype(np.float64).ravel(), True)
        f2 = _Formatter(part.imag.astype(np.float64).ravel(), True)
        return _tensor_str_with(a, indent, summarize, f1, f2)
    if a.dtype.kind == "f" or a.dtype in _dtype.ML_NP:
        a = a.astype(np.float64) if a.dtype != np.float64 else a
    part = _summarized(a) if summarize else a
    return _tensor_str_with(a, indent, summarize, _Formatter(part.ravel(), a.dtype.kind == "f"), None)


def _add_suffixes(tensor_str, suffixes, indent):
    out = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            out.append(", " + suffix)
            last_line_len += len(suffix) + 2
    out.append(")")
    return "".join(out)


def tensor_repr(t, tensor_contents=None):
    """torch's ``repr`` of the tensor ``t`` (``ember.`` in place of ``torch.`` in dtypes)."""
    plain = type(t).__name__ in ("Tensor", "Parameter")
    prefix = "tensor(" if plain else f"{type(t).__name__}("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    default = _dtype.get_default_dtype()
    if t.device.type == "meta":  # no values to print
        suffixes.append(f"size={tuple(t._data.shape)}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype}")
        body = "..."
    elif (a := t._data if t.device.type == "cpu" else t._data.get()).size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if t.dtype is not default:
            suffixes.append(f"dtype={t.dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        if t.dtype not in (default, _dtype.complex_default(), _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={t.dtype}")
        body = _tensor_str(a, indent)
    if tensor_contents is not None:
        body = tensor_contents
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{t.grad_fn.name().rpartition('::')[2]}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + body, suffixes, indent)
