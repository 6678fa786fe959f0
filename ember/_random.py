"""Random numbers: a Generator per device, the default generators, and sampling functions.

The CPU generator is NumPy's PCG64; its state (seed, PCG64 state and increment) round-trips through
``get_state``/``set_state`` exactly. A CUDA generator is, like torch's, a (seed, offset) pair: each call draws from a
fresh cuRAND Philox stream keyed by both, then advances the offset. Streams are reproducible, not torch's bits.
"""
import contextlib
import functools
import math
import os
import struct
import warnings

import numpy as np

from . import _dtype
from ._creation import _factory, _factory_size, _finish, _number, _size
from ._fill import write_values
from ._device import CPU, array_module, device as _device_cls, meta_array, normalize
from ._tensor import Tensor, register
from .autograd.function import Function
from .autograd.grad_mode import grad_enabled
from ._ops.memory_format import as_format, laid_out, like_strides
from ._ops.view import broadcast_pair

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state", "fork_rng", "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
           "poisson", "binomial", "rand_like", "randn_like", "randint_like"]

_DEFAULT_SEED = 67280421310721  # torch's default CPU seed
_U64 = 2 ** 64


def _check_seed(seed, op="manual_seed"):
    if isinstance(seed, Tensor):
        seed = seed.item()
    if isinstance(seed, np.integer):
        seed = int(seed)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise RuntimeError(f"{op} expected a long, but got {type(seed).__name__}")
    if not -2 ** 63 <= seed < _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed % _U64  # negative seeds wrap around, as torch's


class Generator:
    """A pseudo-random number generator for one device, as ``torch.Generator``.

    Example::

        >>> g = ember.Generator().manual_seed(0)
        >>> a = ember.rand(2, generator=g)
        >>> _ = g.manual_seed(0)
        >>> ember.rand(2, generator=g).tolist() == a.tolist()
        True
    """

    def __init__(self, device="cpu"):
        dev = _device_cls(device)
        if dev.type == "cuda":
            try:
                dev = normalize(dev)
                array_module(dev)  # raises without CuPy and a GPU
            except AssertionError as e:  # where torch's tensors raise AssertionError, its Generator raises this
                raise RuntimeError(f"Cannot get CUDA generator without ATen_cuda library ({e})") from None
        elif dev.type != "cpu":
            raise RuntimeError(f"{dev.type.upper()} device type not an accelerator.")
        self.device = dev
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        """Seeds the generator; returns it."""
        self._seed = _check_seed(seed)
        if self.device.type == "cpu":
            self._np = np.random.Generator(np.random.PCG64(self._seed))
        else:
            self._offset = 0
        return self

    def seed(self):
        """Seeds the generator from the OS's entropy; returns that seed."""
        s = int.from_bytes(os.urandom(8), "little") >> 1
        self.manual_seed(s)
        return s

    def initial_seed(self):
        """The seed the generator was last seeded with."""
        return self._seed

    def get_state(self):
        """The generator's state as a uint8 tensor (pass it to ``set_state`` to replay from here)."""
        if self.device.type == "cpu":
            st = self._np.bit_generator.state
            raw = struct.pack("<Q16s16sII", self._seed, st["state"]["state"].to_bytes(16, "little"),
                              st["state"]["inc"].to_bytes(16, "little"), st["has_uint32"], st["uinteger"])
        else:
            raw = struct.pack("<QQ", self._seed, self._offset)
        return Tensor._make(np.frombuffer(raw, np.uint8).copy(), _dtype.uint8, CPU)

    def set_state(self, new_state):
        """Restores a state from ``get_state`` (a uint8 tensor, or bytes); returns the generator."""
        if isinstance(new_state, (bytes, bytearray)):
            raw = bytes(new_state)
        else:
            dt = getattr(new_state, "dtype", None)
            if dt is None or str(dt).rpartition(".")[2] != "uint8":
                raise TypeError("RNG state must be a torch.ByteTensor")
            raw = np.asarray(new_state.detach().cpu() if hasattr(new_state, "detach") else new_state,
                             dtype=np.uint8).tobytes()
        size = 48 if self.device.type == "cpu" else 16
        if len(raw) != size:
            raise RuntimeError(f"Expected a {self.device.type} generator state of size {size} but found the input "
                               f"RNG state size to be {len(raw)}")
        if self.device.type == "cpu":
            seed, state, inc, has, uint = struct.unpack("<Q16s16sII", raw)
            bg = np.random.PCG64()
            bg.state = {"bit_generator": "PCG64", "state": {"state": int.from_bytes(state, "little"),
                                                             "inc": int.from_bytes(inc, "little")},
                        "has_uint32": has, "uinteger": uint}
            self._seed, self._np = seed, np.random.Generator(bg)
        else:
            self._seed, self._offset = struct.unpack("<QQ", raw)
        return self

    def clone_state(self):
        """A new generator on this device in this one's current state (the two then draw the same numbers)."""
        return Generator(self.device).set_state(self.get_state())

    def get_offset(self):
        """The offset of a CUDA generator's stream (a CPU generator has none)."""
        if self.device.type == "cpu":
            raise RuntimeError("CPU Generator does not use offset")
        return self._offset

    def set_offset(self, offset):
        """Sets the offset of a CUDA generator's stream; returns the generator."""
        if self.device.type == "cpu":
            raise RuntimeError("CPU Generator does not use offset")
        self._offset = _check_seed(offset, "set_offset")
        return self

    def graphsafe_get_state(self):
        """Not supported: no generator here is registered with CUDA graphs."""
        raise NotImplementedError("graphsafe_get_state is not supported in this Generator")

    def graphsafe_set_state(self, state):
        """Not supported: no generator here is registered with CUDA graphs."""
        raise NotImplementedError("graphsafe_set_state is not supported in this Generator")

    def __repr__(self):
        return f"<ember.Generator object at {hex(id(self))}>"

    def _sampler(self):
        """Something with NumPy's sampling methods for this device's arrays, advancing the generator."""
        if self.device.type == "cpu":
            return self._np
        self._offset += 1
        return _CupySampler(array_module(self.device), self._seed, self._offset - 1)


class _CupySampler:
    """One call's draws on a CUDA device: a Philox stream keyed by the generator's (seed, offset)."""

    def __init__(self, cp, seed, offset):
        from cupy.cuda import curand
        key = int(np.random.SeedSequence([seed, offset]).generate_state(1, np.uint64)[0])
        self.rs = cp.random.RandomState(key, method=curand.CURAND_RNG_PSEUDO_PHILOX4_32_10)

    def random(self, size, dtype):
        return self.rs.random_sample(size, dtype)

    def standard_normal(self, size, dtype):
        return self.rs.standard_normal(size, dtype)

    def integers(self, low, high, size, dtype=np.int64):
        return self.rs.randint(low, high, size, dtype)

    def poisson(self, lam):
        return self.rs.poisson(lam, None, np.float64)

    def binomial(self, n, p):
        return self.rs.binomial(n, p, None, np.int64)

    def permutation(self, n):
        return self.rs.permutation(n)


class _MetaSampler:
    """Draws on the meta device: arrays of the drawn shape that hold no values (see ``meta_array``)."""

    def random(self, size, dtype):
        return meta_array(size, dtype)

    def standard_normal(self, size, dtype):
        return meta_array(size, dtype)

    def integers(self, low, high, size, dtype=np.int64):
        return meta_array(size, dtype)

    def poisson(self, lam):
        return meta_array(np.shape(lam), np.float64)

    def binomial(self, n, p):
        return meta_array(np.broadcast_shapes(np.shape(n), np.shape(p)), np.int64)

    def permutation(self, n):
        return meta_array((n,), np.int64)


_META_SAMPLER = _MetaSampler()
default_generator = Generator()
_cuda_generators = {}


def cuda_generator(index):
    """The default generator of CUDA device ``index``."""
    g = _cuda_generators.get(index)
    if g is None:
        g = _cuda_generators[index] = Generator(_device_cls("cuda", index))
    return g


def _sampler(generator, dev):
    if dev.type == "meta":
        return _META_SAMPLER
    if generator is None:
        generator = default_generator if dev.type == "cpu" else cuda_generator(dev.index)
    elif not isinstance(generator, Generator):
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")
    elif generator.device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator._sampler()


# -- global seeding --------------------------------------------------------------------------------------------------
def manual_seed(seed):
    """Seeds the default CPU generator and every CUDA device's; returns the CPU generator."""
    seed = _check_seed(int(seed))
    default_generator.manual_seed(seed)
    from ._device import cuda_available
    if cuda_available():
        for i in range(array_module(_device_cls("cuda", 0)).cuda.runtime.getDeviceCount()):
            cuda_generator(i).manual_seed(seed)
    return default_generator


def seed():
    """Seeds every default generator from the OS's entropy; returns the seed."""
    s = default_generator.seed()
    manual_seed(s)
    return s


def initial_seed():
    """The seed of the default CPU generator."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default CPU generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the default CPU generator's state."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Restores the CPU generator's state (and the listed CUDA devices') on leaving the block."""
    if not enabled:
        yield
        return
    from ._device import cuda_available
    if devices is None:
        devices = range(array_module(_device_cls("cuda", 0)).cuda.runtime.getDeviceCount()) \
            if cuda_available() else ()
    gens = [default_generator] + [cuda_generator(_device_cls(d).index if not isinstance(d, int) else d)
                                  for d in devices]
    states = [g.get_state() for g in gens]
    try:
        yield
    finally:
        for g, s in zip(gens, states):
            g.set_state(s)


# -- sampling helpers ------------------------------------------------------------------------------------------------
def _float_work(dt):
    """The NumPy dtype to draw floats in for ``dt`` (halves are drawn in float32 and rounded)."""
    return np.float64 if dt is _dtype.float64 else np.float32


def _need_float(dt, kernel):
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_name(dt)}'")


def _draws(sampler, kind, shape, dt):
    """``sampler.<kind>`` samples ("random": uniform on ``[0, 1)``, "standard_normal") for dtype ``dt``. A complex
    one gets independent real and imaginary parts, normal ones of variance 1/2 each, so that ``E|z|**2 == 1``."""
    if not dt.is_complex:
        return getattr(sampler, kind)(shape, _float_work(dt))
    work = np.float64 if dt is _dtype.complex128 else np.float32
    pairs = getattr(sampler, kind)(tuple(shape) + (2,), work)
    if kind == "standard_normal":
        pairs = pairs * work(0.5 ** 0.5)
    return pairs[..., 0] + 1j * pairs[..., 1]


def _need_real(dt, kernel):
    if dt.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.scalar_name(dt)}'")


class _Sample(Function):
    """Random draws as a graph node: differentiable inputs (a mean, a probability) get a zero gradient, as torch's."""

    @staticmethod
    def forward(ctx, *inputs, value):
        return value

    @staticmethod
    def backward(ctx, grad):
        from ._creation import zeros_like
        return tuple(zeros_like(grad) if n else None for n in ctx.needs_input_grad)


_SAMPLE_NODES = {name: type(name, (_Sample,), {}) for name in ("Normal", "Bernoulli", "Poisson",
                                                                             "Binomial")}


def _result(arr, dt, dev, inputs, name, out=None):
    """Wraps drawn values; a graph node named ``name`` links them to inputs that require grad."""
    arr = arr.astype(dt.np, copy=False)
    if any(isinstance(x, Tensor) and x._requires_grad for x in inputs):
        t = _SAMPLE_NODES[name].apply(*inputs, value=arr)
        return t if out is None else _finish(t._data, dt, dev, False, out)
    return _finish(arr, dt, dev, False, out)


# -- factories -------------------------------------------------------------------------------------------------------
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, **kw):
    """Uniform samples from ``[0, 1)`` of the given size (for complex ones, the real and imaginary parts)."""
    shape = _factory_size(size, "rand", kw)
    dt, dev = _factory("rand", dtype, device, out)
    _need_float(dt.to_real(), "check_uniform_bounds")
    arr = _draws(_sampler(generator, dev), "random", shape, dt)
    return _finish(arr.astype(dt.np, copy=False), dt, dev, requires_grad, out)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, **kw):
    """Standard normal samples of the given size; complex ones have independent real and imaginary parts of
    variance 1/2."""
    shape = _factory_size(size, "randn", kw)
    dt, dev = _factory("randn", dtype, device, out)
    _need_float(dt.to_real(), "normal_kernel_cpu")
    arr = _draws(_sampler(generator, dev), "standard_normal", shape, dt)
    return _finish(arr.astype(dt.np, copy=False), dt, dev, requires_grad, out)


def _int_bound(x, name, op, pos=None):
    if isinstance(x, Tensor):
        if x.numel() != 1 or x.dtype.is_floating_point or x.dtype.is_complex:  # torch: one-element integer only
            raise TypeError(f"{op}(): argument '{name}'{f' (position {pos})' if pos else ''} must be int, not Tensor")
        x = x.item()
    if isinstance(x, np.integer):
        x = int(x)
    if not isinstance(x, int) or isinstance(x, bool):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{op}(): argument '{name}'{where} must be int, not {type(x).__name__}")
    if not -2 ** 63 <= x < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    return x


def _random_ints(sampler, low, high, shape, dt):
    """Integers in ``[low, high)`` stored as ``dt``; torch's bound checks."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if dt.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types")
    if dt.is_floating_point:
        lo, hi, name = float(_dtype.finfo(dt).min), float(_dtype.finfo(dt).max), _dtype.c_name(dt)
    else:
        lo, hi = (0, 1) if dt is _dtype.bool else (np.iinfo(dt.np).min, np.iinfo(dt.np).max)
        name = _dtype.c_name(dt) if dt is _dtype.bool else _C_TYPE[dt.name]
    for v, what in ((low, "from"), (high - 1, "to - 1")):
        if not lo <= v <= hi:
            raise RuntimeError(f"{what} is out of bounds for {name}")
        if dt.is_floating_point and abs(v) > 2 ** _MANT[dt.name]:
            warnings.warn(f"{what} is out of bounds [-(2^{_MANT[dt.name]}), 2^{_MANT[dt.name]}]. Due to precision "
                          f"limitations {name} can support discrete uniform distribution only within this range.")
    return sampler.integers(low, high, shape, dtype=np.int64).astype(dt.np)


_C_TYPE = {"uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int", "int64": "long",
           "uint16": "short unsigned int", "uint32": "unsigned int", "uint64": "long unsigned int"}


def randint(*args, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False, low=None, high=None, size=None):
    """Uniform integers in ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``; int64 unless
    ``dtype`` says otherwise."""
    args = list(args)
    npos = len(args)
    if size is None and args:
        size = args.pop()
    if high is None and args:
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if args or size is None or high is None:
        raise TypeError("randint() received an invalid combination of arguments: expected (high, size) or "
                        "(low, high, size)")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position {2 if low == 0 else 3}) must be tuple of ints, "
                        f"not {type(size).__name__}")
    low = _int_bound(low, "low", "randint", 1 if npos == 3 else None)
    high = _int_bound(high, "high", "randint", npos - 1 if npos >= 2 else None)
    shape = _size((size,), "randint")
    dt, dev = _factory("randint", dtype, device, out, default=_dtype.int64)
    arr = _random_ints(_sampler(generator, dev), low, high, shape, dt)
    return _finish(arr, dt, dev, requires_grad, out)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` says otherwise)."""
    n = _int_bound(n, "n", "randperm")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt, dev = _factory("randperm", dtype, device, out, default=_dtype.int64)
    if dt is _dtype.bool or dt.is_complex:
        raise NotImplementedError(f"\"randperm\" not implemented for '{_dtype.scalar_name(dt)}'")
    if n and not dt.is_floating_point and n - 1 > np.iinfo(dt.np).max:
        raise RuntimeError(f"value cannot be converted to type {_dtype.c_name(dt)} without overflow")
    # past these, the float dtype cannot hold every index exactly
    if dt.name in _PERM_MAX and n > _PERM_MAX[dt.name][0] and dev.type != "meta":
        raise RuntimeError(f"n cannot be greater than {_PERM_MAX[dt.name][1]} for {_dtype.scalar_name(dt)} type.")
    arr = _sampler(generator, dev).permutation(n).astype(dt.np)
    return _finish(arr, dt, dev, requires_grad, out)


_PERM_MAX = {"float16": (2049, "2049"), "float32": (2 ** 24 + 1, "2^24+1"), "float64": (2 ** 53 + 1, "2^53+1")}


def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Normal samples: ``normal(mean, std)`` with tensor (broadcast) or number arguments, at least one a tensor,
    or ``normal(mean, std, size)`` with numbers.

    Example::

        >>> ember.normal(ember.zeros(2), 1.0).shape
        ember.Size([2])
    """
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mt or st):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float), but "
                            "expected (Tensor mean, Tensor std), (Tensor mean, float std), (float mean, Tensor std) "
                            "or (float mean, float std, tuple of ints size)")
        m, s = _number(mean, "normal"), _number(std, "normal")
        if not s >= 0:  # NaN included
            raise RuntimeError(f"normal expects std >= 0.0, but found std {s:g}")
        shape = _size((size,) if isinstance(size, (tuple, list)) else (size,), "normal")
        dt, dev = _factory("normal", dtype, device, out)
        _need_float(dt.to_real(), "normal_kernel_cpu")
        z = _draws(_sampler(generator, dev), "standard_normal", shape, dt)
        m = complex(m, m) if dt.is_complex else m  # the mean of both parts
        return _finish((z * s + m).astype(dt.np, copy=False), dt, dev, requires_grad, out)
    if size is not None:
        raise TypeError(f"normal() received an invalid combination of arguments - got ({type(mean).__name__}, "
                        f"{type(std).__name__}, {type(size).__name__}): a size goes with a float mean and std only")
    ref = mean if mt else std
    dev = ref.device
    dt = _dtype.promote_types(mean.dtype, std.dtype) if mt and st else ref.dtype
    if st and std.dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    _need_float(dt.to_real(), "normal_kernel_cpu")
    if dt.is_complex and mean._requires_grad:
        raise RuntimeError("normal does not support automatic differentiation for outputs with complex dtype.")
    if st:
        if not (std._data >= 0).all():  # NaN included
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    shape = broadcast_pair(mean.shape, std.shape) if mt and st else ref.shape
    work = dt.np if dt.is_complex else _float_work(dt)
    z = _draws(_sampler(generator, dev), "standard_normal", shape, dt)
    m = mean._data.astype(work) if mt else mean
    s = std._data.astype(work) if st else std
    return _result(z * s + m, dt, dev, (mean, std), "Normal", out)


def bernoulli(input, p=None, *, generator=None, out=None):
    """Draws 0/1 with probability ``input`` (or the scalar ``p``) per element, in ``input``'s dtype."""
    if p is not None:
        if out is not None:
            raise TypeError("bernoulli() received an invalid combination of arguments: a float p takes no out=")
        return _bernoulli_scalar(input, p, generator, out)
    _need_real((input if out is None else out).dtype, "bernoulli_tensor_cpu_self_")
    _need_float(input.dtype, "bernoulli_tensor_cpu_p_")
    probs = input._data
    if probs.size and not ((probs >= 0) & (probs <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    u = _sampler(generator, input.device).random(probs.shape, np.float64)
    return _result(u < probs, input.dtype if out is None else out.dtype, input.device, (input,), "Bernoulli", out)


def _bernoulli_scalar(input, p, generator, out):
    p = _number(p, "bernoulli")
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    _need_real((input if out is None else out).dtype, "bernoulli_scalar_cpu_")
    u = _sampler(generator, input.device).random(input.shape, np.float64)
    return _result(u < p, input.dtype if out is None else out.dtype, input.device, (input,), "Bernoulli", out)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Samples category indices from the rows of ``input`` (non-negative weights): without replacement each
    index at most once per row.

    Example::

        >>> ember.multinomial(ember.tensor([0., 1., 0.]), 1)
        tensor([1])
    """
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.scalar_name(input.dtype)}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if input.device.type == "meta":  # no weights to check or draw from: only the shape
        return _finish(meta_array(input.shape[:-1] + (num_samples,), np.int64), _dtype.int64, input.device, False, out)
    k = input.shape[-1]
    if not replacement and num_samples > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if k > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    xp = array_module(input.device)
    if k == 0 and (input.ndim == 1 or input.shape[0]):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    p = input._data.astype(np.float64).reshape(-1, max(k, 1))
    rows = p.shape[0]
    if p.size:
        if not (xp.isfinite(p) & (p >= 0)).all():
            if not replacement or num_samples == 1:
                raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
            if not (p >= 0).all():  # NaN included
                raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        total = p.sum(axis=1)
        if (total <= 0).any():
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    sampler = _sampler(generator, input.device)
    if rows == 0:
        idx = xp.zeros((0, num_samples), np.int64)
    elif replacement:
        # Inverse CDF for every row at once: row r's CDF is shifted to [r, r + 1) so one search serves all rows.
        cdf = xp.cumsum(p, axis=1) / total[:, None]
        cdf[:, -1] = 1.0
        shift = xp.arange(rows, dtype=np.float64)[:, None]
        u = sampler.random((rows, num_samples), np.float64)
        idx = xp.searchsorted((cdf + shift).ravel(), (u + shift).ravel(), side="right").reshape(rows, -1)
        idx = xp.minimum(idx - (shift * k).astype(np.int64), k - 1)
    else:
        # Exponential races: sorting E / p samples without replacement, in draw order; as in torch, categories of
        # probability 0 come last once the others are drawn.
        e = -xp.log1p(-sampler.random(p.shape, np.float64))
        with np.errstate(divide="ignore"):
            keys = xp.where(p > 0, e / p, xp.inf)
        idx = xp.argsort(keys, axis=1, kind="stable")[:, :num_samples]
    idx = idx.reshape(input.shape[:-1] + (num_samples,)).astype(np.int64)
    return _finish(idx, _dtype.int64, input.device, False, out)


def poisson(input, generator=None):
    """Poisson samples with the rates in ``input``, in ``input``'s dtype."""
    _need_float(input.dtype, "poisson_cpu")
    lam = input._data.astype(np.float64)
    if lam.size and not (lam >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    finite = array_module(input.device).isfinite(lam)
    draws = _sampler(generator, input.device).poisson(array_module(input.device).where(finite, lam, 0))
    draws = array_module(input.device).where(finite, draws, -2.0 ** 63)
    return _result(draws, input.dtype, input.device, (input,), "Poisson")


def binomial(count, prob, generator=None):
    """The number of successes in ``count`` trials of probability ``prob`` (tensors of one floating dtype,
    broadcast), as ``count``'s dtype.

    Example::

        >>> ember.binomial(ember.tensor([10., 0.]), ember.tensor([1., 0.5]))
        tensor([10.,  0.])
    """
    for name, pos, t in (("count", 1, count), ("prob", 2, prob)):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' (position {pos}) must be Tensor, not {type(t).__name__}")
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_dtype.scalar_name(count.dtype)}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {_dtype.scalar_name(prob.dtype)} but expected "
                           f"{_dtype.scalar_name(count.dtype)}")
    xp = array_module(count.device)
    n, p = xp.broadcast_arrays(xp.maximum(count._data.astype(np.float64), 0), xp.clip(prob._data.astype(np.float64),
                                                                                        0, 1))
    draws = _sampler(generator, count.device).binomial(xp.floor(n).astype(np.int64), p)
    return _result(xp.where(p >= 1, n, draws), count.dtype, count.device, (count, prob), "Binomial")


def _like_args(input, dtype, device):
    return (_dtype.to_dtype(dtype) if dtype is not None else input.dtype,
            input.device if device is None else normalize(device))


def _laid_like(t, input, memory_format):
    """Fresh samples ``t`` laid out as ``empty_like(input, memory_format=memory_format)`` would be."""
    strides = like_strides(input._data, as_format(memory_format))
    if strides is not None:
        t._data = laid_out(array_module(t.device), t._data, strides)
    return t


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """Uniform ``[0, 1)`` samples with the shape (and, unless given, dtype and device) of ``input``."""
    dt, dev = _like_args(input, dtype, device)
    t = rand(input.shape, generator=generator, dtype=dt, device=dev, requires_grad=requires_grad)
    return _laid_like(t, input, memory_format)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """Standard normal samples with the shape (and, unless given, dtype and device) of ``input``."""
    dt, dev = _like_args(input, dtype, device)
    t = randn(input.shape, generator=generator, dtype=dt, device=dev, requires_grad=requires_grad)
    return _laid_like(t, input, memory_format)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """Integers in ``[low, high)`` (``randint_like(input, high)`` for ``[0, high)``) shaped like ``input``."""
    if high is None:
        low, high = 0, low
    dt, dev = _like_args(input, dtype, device)
    t = randint(low, high, input.shape, generator=generator, dtype=dt, device=dev, requires_grad=requires_grad)
    return _laid_like(t, input, memory_format)


# -- in-place samplers (Tensor methods) ------------------------------------------------------------------------------
def _no_data(sample_):
    """The in-place sampler ``sample_`` as a method that leaves a meta tensor as it is (it holds no values), as
    torch's does."""
    @functools.wraps(sample_)
    def method(self, *args, **kwargs):
        return self if self.device.type == "meta" else sample_(self, *args, **kwargs)
    return method


def _fill_random(self, arr, opname):
    value = Tensor._make(arr.astype(self.dtype.np, copy=False), self.dtype, self.device)
    return write_values(self, value, opname)


_UNSET = object()


def _no_extra_kw(op, kw):
    if kw:
        raise TypeError(f"{op}() got an unexpected keyword argument '{next(iter(kw))}'")


def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    """Fills this tensor with uniform samples from ``[from, to)`` (for a complex one, its real and imaginary
    parts)."""
    from_ = kw.pop("from", from_)
    _no_extra_kw("uniform_", kw)
    real = self.dtype.to_real()
    _need_float(real, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > to={to:g}")
    info = _dtype.finfo(real)
    if not (info.min <= from_ <= info.max):
        raise RuntimeError(f"from is out of bounds for {_dtype.c_name(real)}")
    if not (info.min <= to <= info.max):
        raise RuntimeError(f"to is out of bounds for {_dtype.c_name(real)}")
    sampler = _sampler(generator, self.device)
    out = _drawn_in_place(self)
    if out is not None:  # the same draws and arithmetic as below, in the tensor's own memory
        sampler.random(dtype=out.dtype, out=out)
        _scale_in_place(self, out, to - from_, from_)
        return self
    u = _draws(sampler, "random", self.shape, self.dtype)
    return _fill_random(self, u * (to - from_) + (complex(from_, from_) if self.dtype.is_complex else from_),
                        "uniform")


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fills this tensor with normal samples (for a complex one, its real and imaginary parts are each normal of
    standard deviation ``std / sqrt(2)``)."""
    _need_float(self.dtype.to_real(), "normal_kernel_cpu")
    if not std >= 0:  # NaN included
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    sampler = _sampler(generator, self.device)
    out = _drawn_in_place(self)
    if out is not None:
        sampler.standard_normal(dtype=out.dtype, out=out)
        _scale_in_place(self, out, std, mean)
        return self
    z = _draws(sampler, "standard_normal", self.shape, self.dtype)
    return _fill_random(self, z * std + (complex(mean, mean) if self.dtype.is_complex else mean), "normal")


def _drawn_in_place(self):
    """The array of a CPU float32/float64 tensor whose samples can be drawn straight into its memory (dense and
    writable, no write to record in a graph), else None."""
    a = self._data
    if self.device is not CPU or self.dtype not in _DRAWN_IN_PLACE or not a.flags.c_contiguous or \
            not a.flags.writeable or (self._requires_grad and grad_enabled()):
        return None
    return a


def _scale_in_place(self, out, scale, shift):
    """``out * scale + shift`` in place (skipping the identity steps), and the in-place write counted."""
    if scale != 1:
        out *= scale
    if shift != 0:
        out += shift
    self._vc[0] += 1


_DRAWN_IN_PLACE = frozenset((_dtype.float32, _dtype.float64))


def bernoulli_(self, p=0.5, *, generator=None):
    """Fills this tensor with 0/1 draws of probability ``p`` (a number, or a tensor broadcast to this one)."""
    if isinstance(p, Tensor):
        _need_real(self.dtype, "bernoulli_tensor_cpu_self_")
        _need_float(p.dtype, "bernoulli_tensor_cpu_p_")
        if not all(a == b or a == 1 for a, b in zip(p.shape[::-1], self.shape[::-1])) or p.ndim > self.ndim:
            raise RuntimeError(f"The expanded size of the tensor ({self.shape[-1]}) must match the existing size "
                               f"({p.shape[-1]}) at non-singleton dimension {self.ndim - 1}.  Target sizes: "
                               f"{list(self.shape)}.  Tensor sizes: {list(p.shape)}")
        probs = p._data.astype(np.float64)
        if probs.size and not ((probs >= 0) & (probs <= 1)).all():
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
        if p.device is not self.device:
            probs = p.to(self.device)._data.astype(np.float64)
    else:
        probs = _number(p, "bernoulli_")
        if not 0 <= probs <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={probs:g}")
        _need_real(self.dtype, "bernoulli_scalar_cpu_")
    u = _sampler(generator, self.device).random(self.shape, np.float64)
    return _fill_random(self, u < probs, "bernoulli")


def random_(self, from_=_UNSET, to=_UNSET, *, generator=None, **kw):
    """Fills this tensor with integers from ``[from, to)``; ``random_(to)`` means ``[0, to)``; with no bounds (or
    ``to=None``), every integer the dtype holds exactly from ``from`` on (up to 2**mantissa for floats)."""
    if "from" in kw and to is _UNSET and "to" not in kw:
        raise TypeError("random_() received an invalid combination of arguments - got (from=int), but expected "
                        "(), (int to) or (int from, int to)")
    from_, to = kw.pop("from", from_), kw.pop("to", to)
    _no_extra_kw("random_", kw)
    if to is _UNSET:
        from_, to = 0, (None if from_ is _UNSET else from_)
    from_ = 0 if from_ is _UNSET else from_
    if self.dtype.is_complex and to is None:
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{_dtype.scalar_name(self.dtype)}'")
    if to is None:
        dt = self.dtype
        to = 2 if dt is _dtype.bool else 2 ** _MANT[dt.name] + 1 if dt.is_floating_point else \
            int(np.iinfo(dt.np).max) + 1
    arr = _random_ints(_sampler(generator, self.device), int(from_), int(to), self.shape, self.dtype)
    return _fill_random(self, arr, "random")


_MANT = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def _continuous(self, cap):
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{cap} distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {_dtype.scalar_name(self.dtype)}")


def exponential_(self, lambd=1.0, *, generator=None):
    """Fills this tensor with exponential samples of rate ``lambd``."""
    _continuous(self, "Exponential")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    u = _sampler(generator, self.device).random(self.shape, _float_work(self.dtype))
    return _fill_random(self, -array_module(self.device).log1p(-u) / lambd, "exponential")


def geometric_(self, p, *, generator=None):
    """Fills this tensor with the number of Bernoulli(``p``) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self.dtype is _dtype.bool or self.dtype.is_complex:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for '{_dtype.scalar_name(self.dtype)}'")
    xp = array_module(self.device)
    u = _sampler(generator, self.device).random(self.shape, np.float64)
    return _fill_random(self, xp.ceil(xp.log1p(-u) / math.log1p(-p)), "geometric")


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills this tensor with samples whose logarithm is normal(``mean``, ``std``)."""
    _need_float(self.dtype, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    xp = array_module(self.device)
    z = _sampler(generator, self.device).standard_normal(self.shape, _float_work(self.dtype))
    return _fill_random(self, xp.exp(z * std + mean), "log_normal")


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fills this tensor with Cauchy samples."""
    if not self.dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {'long int' if self.dtype is _dtype.int64 else self.dtype.name}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    xp = array_module(self.device)
    u = _sampler(generator, self.device).random(self.shape, np.float64)
    return _fill_random(self, median + sigma * xp.tan(math.pi * (u - 0.5)), "cauchy")


def _bernoulli_method(self, p=None, *, generator=None):
    return bernoulli(self, p, generator=generator)


register(uniform_=_no_data(uniform_), normal_=_no_data(normal_), bernoulli_=_no_data(bernoulli_),
         random_=_no_data(random_), exponential_=_no_data(exponential_), geometric_=_no_data(geometric_),
         log_normal_=_no_data(log_normal_), cauchy_=_no_data(cauchy_), bernoulli=_bernoulli_method,
         multinomial=multinomial)
