"""Primitives of ``nn.functional``: pointwise activations (one pass forward, a fused backward) and embedding.

Two families. Piecewise-linear activations (relu, hardtanh, leaky_relu, threshold, the shrinks, hardsigmoid,
rrelu) have a gradient ``g * slope`` with a constant slope per element: their backward is ``MaskedScale``, which
is linear in ``g`` and hence its own derivative. Smooth activations (gelu, silu, mish, the elu family, softplus,
logsigmoid, hardswish) compute ``g * f'(x)`` in ``ActGrad``; its backward uses ``f''`` for higher-order gradients.
A derivative ``f'`` is written once over a namespace of array functions (``_Raw`` for arrays, ``_T`` for Tensors).
"""
import math

from .. import _dtype
from .._device import special_module
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import STATE
from .binary import _where
from .reduce import _quiet, _tname

_SQRT1_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_K_TANH = math.sqrt(2 / math.pi)  # gelu's tanh approximation: tanh(K (x + C x^3))
_C_TANH = 0.044715


def check_float(x, kernel):
    """torch's error for an activation that has no integer kernel."""
    if x.dtype.kind in "biu":
        dt = _dtype.from_numpy_dtype(x.dtype)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_tname(dt)}\'')


class _Raw:
    """The functions the derivative formulas use, on arrays of one array module."""
    _cache = {}

    def __new__(cls, xp):
        ns = cls._cache.get(xp)
        if ns is None:
            ns = cls._cache[xp] = object.__new__(cls)
            sp = special_module(xp)
            ns.exp, ns.tanh, ns.log1p, ns.abs, ns.where = xp.exp, xp.tanh, xp.log1p, xp.abs, xp.where
            ns.erf, ns.sigmoid = sp.erf, sp.expit
            ns.relu = lambda x: xp.maximum(x, 0)
        return ns


class _T:
    """The same functions on Tensors (differentiable)."""
    exp = staticmethod(lambda x: x.exp())
    tanh = staticmethod(lambda x: x.tanh())
    log1p = staticmethod(lambda x: x.log1p())
    abs = staticmethod(lambda x: x.abs())
    erf = staticmethod(lambda x: x.erf())
    sigmoid = staticmethod(lambda x: x.sigmoid())
    relu = staticmethod(lambda x: x.clamp_min(0))
    where = staticmethod(_where)


def _softplus(m, x):
    """``log(1 + exp(x))`` without overflow."""
    return m.log1p(m.exp(-m.abs(x))) + m.relu(x)


# -- piecewise-linear activations ------------------------------------------------------------------------------------
class MaskedScale(Function):
    """``g * pos`` where ``mask`` holds, ``g * neg`` elsewhere (constants: ``pos`` and ``neg`` are numbers or
    arrays). Linear in ``g``, so its backward is itself."""

    @staticmethod
    def forward(ctx, g, mask, pos, neg):
        ctx.mask, ctx.pos, ctx.neg = mask, pos, neg
        a = g if isinstance(pos, (int, float)) and pos == 1 else g * pos
        if isinstance(neg, (int, float)) and neg == 0:
            return ctx.xp.where(mask, a, ctx.xp.zeros((), g.dtype))
        return ctx.xp.where(mask, a, g * neg)

    @staticmethod
    def backward(ctx, gg):
        return MaskedScale.apply(gg, mask=ctx.mask, pos=ctx.pos, neg=ctx.neg)


class _Piecewise(Function):
    """``forward`` computes ``y`` and, when a gradient is needed, the mask (and slopes) of MaskedScale."""
    half_in_float32 = True

    @staticmethod
    def backward(ctx, grad):
        return MaskedScale.apply(grad, mask=ctx.mask, pos=ctx.pos, neg=ctx.neg)


class Relu(_Piecewise):
    @staticmethod
    def forward(ctx, x):
        y = ctx.xp.maximum(x, x.dtype.type(0)) if x.dtype.kind != "b" else x.copy()
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = ~(y <= 0), 1, 0  # NaN passes its gradient, as torch's
        return y


class Hardtanh(_Piecewise):
    @staticmethod
    def forward(ctx, x, lo, hi):
        y = ctx.xp.clip(x, lo, hi).astype(x.dtype, copy=False)
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = ~((x <= lo) | (x >= hi)), 1, 0
        return y


class Threshold(_Piecewise):
    @staticmethod
    def forward(ctx, x, threshold, value):
        low = x <= threshold
        y = ctx.xp.where(low, ctx.xp.asarray(value).astype(x.dtype), x)
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = ~low, 1, 0
        return y


class LeakyRelu(_Piecewise):
    @staticmethod
    def forward(ctx, x, slope):
        check_float(x, "leaky_relu_cpu")
        pos = x > 0
        y = ctx.xp.where(pos, x, x * x.dtype.type(slope))
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = pos, 1, slope
        return y


class RreluNoise(_Piecewise):
    """Randomized leaky relu in training: ``x * r`` with ``r`` uniform in ``[lower, upper]`` where ``x <= 0``."""

    @staticmethod
    def forward(ctx, x, r):
        check_float(x, "leaky_relu_cpu")
        pos = x > 0
        r = r.astype(x.dtype, copy=False)
        y = ctx.xp.where(pos, x, x * r)
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = pos, 1, r
        return y


class Hardshrink(_Piecewise):
    @staticmethod
    def forward(ctx, x, lambd):
        check_float(x, "hardshrink_cpu")
        inner = (x >= -lambd) & (x <= lambd)
        y = ctx.xp.where(inner, ctx.xp.zeros((), x.dtype), x)
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = ~inner, 1, 0
        return y


class Softshrink(_Piecewise):
    @staticmethod
    def forward(ctx, x, lambd):
        check_float(x, "softshrink_check")
        y = x - ctx.xp.clip(x, -lambd, lambd).astype(x.dtype, copy=False)  # 0 inside, x -+ lambd outside
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = ~((x >= -lambd) & (x <= lambd)), 1, 0
        return y


class Hardsigmoid(_Piecewise):
    @staticmethod
    def forward(ctx, x):
        check_float(x, "hardsigmoid_cpu")
        y = ctx.xp.clip(x + 3, 0, 6).astype(x.dtype, copy=False)
        y /= 6
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = (x > -3) & (x < 3), 1 / 6, 0
        return y


# -- smooth activations ----------------------------------------------------------------------------------------------
class _Smooth(Function):
    """``y = f(x)``; subclasses give ``f`` (arrays), ``df`` (over a namespace) and ``d2f`` (Tensors)."""
    half_in_float32 = True
    kernel = ""

    @classmethod
    def forward(cls, ctx, x, **p):
        check_float(x, cls.kernel)
        ctx.p = p
        ctx.save_for_backward(x)
        with _quiet(ctx.xp):
            return cls.f(ctx.xp, x, **p)

    @classmethod
    def backward(cls, ctx, grad):
        (x,) = ctx.saved_tensors
        return ActGrad.apply(grad, x, act=cls, p=ctx.p)


class ActGrad(Function):
    """``g * f'(x)`` of the smooth activation ``act``, in one pass; differentiable again through ``f''``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, x, act, p):
        ctx.act, ctx.p = act, p
        ctx.save_for_backward(g, x)
        with _quiet(ctx.xp):
            d = act.df(_Raw(ctx.xp), x, **p)
        d *= g
        return d

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        act, p = ctx.act, ctx.p
        dg = gg * act.df(_T, x, **p) if ctx.needs_input_grad[0] else None
        dx = gg * g * act.d2f(x, **p) if ctx.needs_input_grad[1] else None
        return dg, dx


class Gelu(_Smooth):
    kernel = "GeluKernelImpl"

    @staticmethod
    def f(xp, x):
        y = special_module(xp).erf(x * _SQRT1_2)
        y += 1
        y *= x
        y *= 0.5
        return y

    @staticmethod
    def df(m, x):
        return (m.erf(x * _SQRT1_2) + 1) * 0.5 + x * m.exp(x * x * -0.5) * _INV_SQRT_2PI

    @staticmethod
    def d2f(x):
        return (x * x * -0.5).exp() * _INV_SQRT_2PI * (2 - x * x)


class GeluTanh(_Smooth):
    kernel = "GeluKernelImpl"

    @staticmethod
    def f(xp, x):
        y = xp.tanh((x + _C_TANH * x * x * x) * _K_TANH)
        y += 1
        y *= x
        y *= 0.5
        return y

    @staticmethod
    def df(m, x):
        x2 = x * x
        t = m.tanh((x + _C_TANH * x2 * x) * _K_TANH)
        return (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * ((1 + 3 * _C_TANH * x2) * _K_TANH)

    @staticmethod
    def d2f(x):
        x2 = x * x
        t = ((x + _C_TANH * x2 * x) * _K_TANH).tanh()
        du = (1 + 3 * _C_TANH * x2) * _K_TANH
        return (1 - t * t) * (du + x * 0.5 * (6 * _C_TANH * _K_TANH * x - 2 * t * du * du))


class Silu(_Smooth):
    kernel = "silu_cpu"

    @staticmethod
    def f(xp, x):
        return x * special_module(xp).expit(x)

    @staticmethod
    def df(m, x):
        s = m.sigmoid(x)
        return s * (1 + x * (1 - s))

    @staticmethod
    def d2f(x):
        s = x.sigmoid()
        return s * (1 - s) * (2 + x * (1 - 2 * s))


class Mish(_Smooth):
    kernel = "mish_cpu"

    @staticmethod
    def f(xp, x):
        return x * xp.tanh(_softplus(_Raw(xp), x))

    @staticmethod
    def df(m, x):
        s, t = m.sigmoid(x), m.tanh(_softplus(m, x))
        return t + x * s * (1 - t * t)

    @staticmethod
    def d2f(x):
        s, t = x.sigmoid(), _softplus(_T, x).tanh()
        return (1 - t * t) * s * (2 + x * (1 - s - 2 * t * s))


class Elu(_Smooth):
    """elu, selu and celu: ``scale * x`` above 0, ``scale * alpha * (exp(x * input_scale) - 1)`` below."""
    kernel = "elu_cpu"

    @staticmethod
    def f(xp, x, alpha, scale, input_scale):
        neg = xp.expm1(xp.minimum(x, 0) * input_scale)
        neg *= alpha * scale
        return xp.where(x > 0, x * scale, neg)

    @staticmethod
    def df(m, x, alpha, scale, input_scale):
        return m.where(x > 0, scale, m.exp(-m.relu(-x) * input_scale) * (alpha * scale * input_scale))

    @staticmethod
    def d2f(x, alpha, scale, input_scale):
        # torch's second derivative is 0 at x == 0 (strictly negative side only)
        return _where(x < 0, (x.clamp_max(0) * input_scale).exp() * (alpha * scale * input_scale ** 2), 0.0)


class Softplus(_Smooth):
    kernel = "softplus_cpu"

    @staticmethod
    def f(xp, x, beta, threshold):
        bx = x * beta
        return xp.where(bx > threshold, x, xp.log1p(xp.exp(bx)) / beta)

    @staticmethod
    def df(m, x, beta, threshold):
        bx = x * beta
        return m.where(bx > threshold, 1.0, m.sigmoid(bx))

    @staticmethod
    def d2f(x, beta, threshold):
        s = (x * beta).sigmoid()
        return _where(x * beta > threshold, 0.0, s * (1 - s) * beta)


class LogSigmoid(_Smooth):
    kernel = "log_sigmoid_cpu"

    @staticmethod
    def f(xp, x):
        return -_softplus(_Raw(xp), -x)

    @staticmethod
    def df(m, x):
        return m.sigmoid(-x)

    @staticmethod
    def d2f(x):
        return -(x.sigmoid() * (-x).sigmoid())


class Hardswish(_Smooth):
    kernel = "hardswish_cpu"

    @staticmethod
    def f(xp, x):
        y = xp.clip(x + 3, 0, 6).astype(x.dtype, copy=False)
        y *= x
        y /= 6
        return y

    @staticmethod
    def df(m, x):
        return m.where(x <= -3, 0.0, m.where(x < 3, x / 3 + 0.5, 1.0))

    @staticmethod
    def d2f(x):
        return ((x > -3) & (x < 3)).to(x.dtype) / 3


# -- embedding -------------------------------------------------------------------------------------------------------
def _accumulate_rows(xp, index, src, num, coef):
    """``out[index[k]] += coef[k] * src[k]`` into zeros ``(num, D)``; ``coef`` may be None (all ones)."""
    n, d = src.shape
    if xp.__name__ == "numpy":  # a sparse (rows x tokens) matrix product beats ufunc.at by ~10x on CPU
        import scipy.sparse
        rows, inv = xp.unique(index, return_inverse=True)
        data = xp.ones(n, src.dtype) if coef is None else coef.astype(src.dtype)
        m = scipy.sparse.csr_matrix((data, (inv.reshape(-1), xp.arange(n))), shape=(len(rows), n))
        out = xp.zeros((num, d), src.dtype)
        out[rows] = m @ src
        return out
    out = xp.zeros((num, d), src.dtype)
    xp.add.at(out, index, src if coef is None else src * coef[:, None].astype(src.dtype))
    return out


class Embedding(Function):
    """Rows ``weight[index]``; the gradient of ``weight`` sums the rows' gradients, skipping ``padding_idx`` and
    dividing by each index's count with ``scale_grad_by_freq``."""

    @staticmethod
    def forward(ctx, w, index, padding_idx, scale_grad_by_freq):
        xp = ctx.xp
        if index.size and (index.min() < 0 or index.max() >= w.shape[0]):
            raise IndexError("index out of range in self")
        ctx.num, ctx.padding_idx, ctx.scale = w.shape[0], padding_idx, scale_grad_by_freq
        ctx.save_for_backward(index)
        return xp.take(w, index, axis=0)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        xp = ctx.xp
        flat = index._data.reshape(-1)
        coef = None
        if ctx.padding_idx >= 0:
            coef = (flat != ctx.padding_idx).astype(xp.float64)
        if ctx.scale:
            counts = xp.bincount(flat, minlength=ctx.num)[flat]
            coef = (1.0 if coef is None else coef) / counts
        g = grad.reshape(-1, grad.shape[-1])
        if STATE.enabled:  # create_graph: index_add is differentiable in the gradient
            from .._creation import zeros
            if coef is not None:
                g = g * Tensor._make(coef[:, None].astype(g.dtype.np), g.dtype, g.device)
            out = zeros((ctx.num, g.shape[1]), dtype=g.dtype, device=g.device)
            return out.index_add(0, Tensor._make(flat, index.dtype, index.device), g), None
        src = g._data
        half = src.dtype in (_dtype.float16.np, _dtype.bfloat16.np)
        out = _accumulate_rows(xp, flat, src.astype(xp.float32) if half else src, ctx.num, coef)
        return Tensor._make(out.astype(src.dtype, copy=False), g.dtype, g.device), None
