"""The autocast state the ops read, and the input casts of its two op lists (the user-facing switch is
``ember.amp.autocast``).

``ACTIVE`` is None outside autocast, else a mapping ``{device type: dtype}`` of the devices it is on for. It is a
context variable, so that it is per thread (as torch's) and the intra-op threads see the caller's. The functions
wrapped in ``lower_precision_inputs`` (matrix products, linear, convolutions, attention) get their floating tensor
arguments cast to that dtype (float64 excepted, as torch); those wrapped in ``float32_inputs`` (the losses) get their
float16 and bfloat16 arguments cast to float32; CPU autocast has its own float32 list (``cpu_float32_inputs``: 3-D
pools, reflection/replication padding, linear algebra, FFTs) and widest-type list (``cpu_widest_inputs``). The casts
are differentiable, and backward runs outside autocast: gradients flow back in the dtypes of forward.
"""
import contextvars
import contextlib
import functools

from . import _dtype

ACTIVE = contextvars.ContextVar("ember_autocast", default=None)


def _device_type(x):
    return x.device.type if hasattr(x, "_data") else None


def _to_lower(x):
    target = ACTIVE.get().get(_device_type(x))
    if target is not None and x.dtype.is_floating_point and x.dtype is not _dtype.float64 and x.dtype is not target:
        return x.to(target)
    return x


def _casting(convert, fn):
    """``fn`` whose tensor arguments (not ``out``), and those in list arguments, pass through ``convert`` under
    autocast."""
    def each(x):  # a tensor, or a list of them (multi_dot)
        return type(x)(map(convert, x)) if isinstance(x, (list, tuple)) else convert(x)

    @functools.wraps(fn)
    def cast(*args, **kwargs):
        if ACTIVE.get() is None:
            return fn(*args, **kwargs)
        return fn(*map(each, args), **{k: v if k == "out" else each(v) for k, v in kwargs.items()})
    return cast


def lower_precision_inputs(fn):
    """``fn`` computing in autocast's lower-precision dtype: its floating tensor arguments cast down."""
    return _casting(_to_lower, fn)


def input_precision(fn):
    """``fn`` computing in its inputs' dtypes under autocast (as torch's ops on neither list), although built on
    products that autocast casts."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        if ACTIVE.get() is None:
            return fn(*args, **kwargs)
        with _off():
            return fn(*args, **kwargs)
    return run


@contextlib.contextmanager
def _off():
    """Autocast off inside (an op built on products that autocast would cast)."""
    token = ACTIVE.set(None)
    try:
        yield
    finally:
        ACTIVE.reset(token)


def _to_float32(x):
    if _device_type(x) in ACTIVE.get() and x.dtype in (_dtype.float16, _dtype.bfloat16):
        return x.to(_dtype.float32)
    return x


def float32_inputs(fn):
    """``fn`` (a loss) computing in float32 under autocast: its float16 and bfloat16 tensor arguments cast up."""
    return _casting(_to_float32, fn)


def cpu_float32(x):
    """``x`` cast to float32 if it is a float16 or bfloat16 CPU tensor under CPU autocast: the input of the ops only
    CPU autocast runs in float32 (3-D pooling, unpooling, grid sampling)."""
    active = ACTIVE.get()
    if active is not None and "cpu" in active and _device_type(x) == "cpu" and x.dtype in (_dtype.float16,
                                                                                          _dtype.bfloat16):
        return x.to(_dtype.float32)
    return x


def cpu_float32_inputs(fn):
    """``fn`` computing in float32 under CPU autocast: its float16 and bfloat16 CPU tensor arguments cast up, and the
    products it is built on left in that dtype."""
    def each(x):  # a tensor, or a list of them
        return type(x)(map(cpu_float32, x)) if isinstance(x, (list, tuple)) else cpu_float32(x)

    @functools.wraps(fn)
    def run(*args, **kwargs):  # one frame, as the functions' warnings count them
        active = ACTIVE.get()
        if active is None or "cpu" not in active:
            return fn(*args, **kwargs)
        args, kwargs = tuple(map(each, args)), {k: v if k == "out" else each(v) for k, v in kwargs.items()}
        with _off():
            return fn(*args, **kwargs)
    return run


def cpu_widest_inputs(fn):
    """``fn`` computing in the widest floating dtype of its inputs under CPU autocast (float64 inputs aside): its
    float16 and bfloat16 CPU tensor arguments cast to float32 when one of them is float32."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        active = ACTIVE.get()
        if active is None or "cpu" not in active:
            return fn(*args, **kwargs)
        tensors = [a for a in (*args, *kwargs.values()) if _device_type(a) == "cpu"]
        if not any(t.dtype is _dtype.float32 for t in tensors):
            return fn(*args, **kwargs)
        return fn(*map(cpu_float32, args), **{k: cpu_float32(v) for k, v in kwargs.items()})
    return run
