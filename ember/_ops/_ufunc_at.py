"""``ufunc.at`` (unbuffered accumulation at indices, repeated indices included) on NumPy or CuPy. CuPy's takes only
some dtypes (``add``: no bool, 8/16-bit integers or bfloat16; ``minimum``/``maximum``: no float16 either;
``multiply``: none): those accumulate in a wider dtype, and products on the host, then are written back."""
import numpy as np

_CUPY_AT = {"add": ("int32", "int64", "uint32", "uint64", "float16", "float32", "float64"),
            "minimum": ("int32", "int64", "uint32", "uint64", "float32", "float64"),
            "maximum": ("int32", "int64", "uint32", "uint64", "float32", "float64"),
            "multiply": ()}  # the dtypes CuPy's ufunc.at accepts


def ufunc_at(xp, name, out, key, values):
    """``getattr(xp, name).at(out, key, values)``."""
    if xp is np or out.dtype.name in _CUPY_AT[name]:
        getattr(xp, name).at(out, key, values)
        return
    values = xp.asarray(values)
    if name == "multiply":
        host = xp.asnumpy(out)
        key = tuple(xp.asnumpy(k) if hasattr(k, "device") else k for k in key) if isinstance(key, tuple) else \
            (xp.asnumpy(key) if hasattr(key, "device") else key)
        np.multiply.at(host, key, xp.asnumpy(values))
        out[...] = xp.asarray(host)
        return
    wide = np.float32 if out.dtype.kind in "fV" else np.int64
    work = out.astype(wide)
    getattr(xp, name).at(work, key, values.astype(wide))
    out[...] = work.astype(out.dtype)
