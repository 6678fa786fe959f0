"""Primitives of ``nn.functional``: pointwise activations (one pass forward, a fused backward) and embedding.

Two families. Piecewise-linear activations (relu, hardtanh, leaky_relu, threshold, the shrinks, hardsigmoid,
rrelu) have a gradient ``g * slope`` with a constant slope per element: their backward is ``MaskedScale``, which
is linear in ``g`` and hence its own derivative. Smooth activations (gelu, silu, mish, the elu family, softplus,
logsigmoid, hardswish) compute ``f'(x)`` along with ``f(x)`` in forward (the formulas share their terms, and the
block of ``x`` is then in cache), so that their backward ``ActGrad`` is one product ``g * f'(x)``; its own backward
uses ``f''`` for higher-order gradients. A derivative ``f'`` is written once over a namespace of array functions
(``_Raw`` for arrays, ``_T`` for Tensors).
"""
import math

import numpy as np

from .. import _dtype
from .._creation import zeros_like
from .._device import special_module
from .._tensor import Tensor
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled
from .._kernels import compiled
from .._kernels.elementwise import blockwise
from .binary import _where
from .pool import masked
from .reduce import _quiet, _tname
from ._ufunc_at import ufunc_at

_SQRT1_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_K_TANH = math.sqrt(2 / math.pi)  # gelu's tanh approximation: tanh(K (x + C x^3))
_C_TANH = 0.044715
_SIXTH = 0.1666666716337204  # 1/6 rounded to float32: torch's hardsigmoid gradient uses it in every dtype


def check_float(x, kernel):
    """torch's error for an activation that has no integer kernel."""
    if x.dtype.kind in "biu":
        dt = _dtype.from_numpy_dtype(x.dtype)
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_tname(dt)}\'')


class _Raw:
    """The functions the activation formulas use, on arrays of one array module."""
    _cache = {}

    def __new__(cls, xp):
        ns = cls._cache.get(xp)
        if ns is None:
            ns = cls._cache[xp] = object.__new__(cls)
            sp = special_module(xp)
            ns.xp = xp
            ns.exp, ns.expm1, ns.tanh, ns.log1p, ns.abs, ns.where = (xp.exp, xp.expm1, xp.tanh, xp.log1p, xp.abs,
                                                                     xp.where)
            ns.ndtr = sp.ndtr
            ns.relu = lambda x: xp.maximum(x, 0)
            ns.min0 = lambda x: xp.minimum(x, 0)
        return ns

    def sigmoid(self, x):
        """``1 / (1 + exp(-x))``: 2x faster than scipy's expit, and exact to an ulp (exp overflows to 0)."""
        e = self.xp.exp(-x)
        e += 1
        return self.xp.reciprocal(e, out=e)


class _T:
    """The same functions on Tensors (differentiable)."""
    exp = staticmethod(lambda x: x.exp())
    expm1 = staticmethod(lambda x: x.expm1())
    tanh = staticmethod(lambda x: x.tanh())
    log1p = staticmethod(lambda x: x.log1p())
    abs = staticmethod(lambda x: x.abs())
    sigmoid = staticmethod(lambda x: x.sigmoid())
    relu = staticmethod(lambda x: x.clamp_min(0))
    min0 = staticmethod(lambda x: x.clamp_max(0))
    where = staticmethod(_where)


# -- piecewise-linear activations ------------------------------------------------------------------------------------
class MaskedScale(Function):
    """``g * pos`` where ``mask`` holds, ``g * neg`` elsewhere (constants: ``pos`` and ``neg`` are numbers or
    arrays). Linear in ``g``, so its backward is itself. The activation's input (or output) ``x``, when given,
    gets a zero gradient: a create_graph backward reaches it, as torch's."""

    @staticmethod
    def forward(ctx, g, x=None, *, mask, pos, neg):
        ctx.mask, ctx.pos, ctx.neg, ctx.joined = mask, pos, neg, x is not None
        if type(pos) is int and type(neg) is int and (pos, neg) in ((0, 1), (1, 0)):  # relu and the like
            return masked(g, mask, invert=pos == 0)
        return ctx.xp.where(mask, _scaled(ctx.xp, g, pos), _scaled(ctx.xp, g, neg))

    @staticmethod
    def backward(ctx, gg):
        g = MaskedScale.apply(gg, mask=ctx.mask, pos=ctx.pos, neg=ctx.neg)
        return (g, zeros_like(gg)) if ctx.joined else g


def _scaled(xp, g, c):
    if isinstance(c, (int, float)):
        if c == 0:
            return xp.zeros((), g.dtype)
        if c == 1:
            return g
    return g * c


class _Piecewise(Function):
    """``forward`` computes ``y`` and, when a gradient is needed, the mask (and slopes) of MaskedScale, and saves
    what torch's op saves (``x``, or ``y`` for relu): it joins the graph of a create_graph backward."""
    half_in_float32 = True

    @staticmethod
    def backward(ctx, grad):
        if grad_enabled():  # create_graph
            return MaskedScale.apply(grad, *ctx.saved_tensors, mask=ctx.mask, pos=ctx.pos, neg=ctx.neg)
        return MaskedScale.apply(grad, mask=ctx.mask, pos=ctx.pos, neg=ctx.neg)


class Relu(_Piecewise):
    no_complex = NotImplementedError, "clamp is not supported for complex types"

    @staticmethod
    def forward(ctx, x):
        y = ctx.xp.maximum(x, x.dtype.type(0))
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = y <= 0, 0, 1  # NaN passes its gradient, as torch's
            ctx.save_for_backward(y)
        return y


class Hardtanh(_Piecewise):
    no_complex = NotImplementedError, "clamp is not supported for complex types"

    @staticmethod
    def forward(ctx, x, lo, hi):
        y = ctx.xp.clip(x, lo, hi).astype(x.dtype, copy=False)
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = (x <= lo) | (x >= hi), 0, 1
            ctx.save_for_backward(x)
        return y


class Threshold(_Piecewise):
    no_complex = "threshold_cpu"

    @staticmethod
    def forward(ctx, x, threshold, value):
        if x.dtype == bool:
            raise NotImplementedError("\"threshold_cpu\" not implemented for 'Bool'")
        low = x <= threshold
        y = ctx.xp.where(low, ctx.xp.asarray(value).astype(x.dtype), x)
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = low, 0, 1
            ctx.save_for_backward(x)
        return y


class LeakyRelu(_Piecewise):
    no_complex = "leaky_relu_cpu"

    @staticmethod
    def forward(ctx, x, slope):
        check_float(x, "leaky_relu_cpu")
        pos = x > 0
        y = ctx.xp.where(pos, x, x * x.dtype.type(slope))
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = pos, 1, slope
            ctx.save_for_backward(x)
        return y


class RreluNoise(_Piecewise):
    """Randomized leaky relu in training: ``x * r`` with ``r`` uniform in ``[lower, upper]`` where ``x <= 0``."""

    @staticmethod
    def forward(ctx, x, r):
        pos = x > 0
        r = r.astype(x.dtype, copy=False)
        y = ctx.xp.where(pos, x, x * r)
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = pos, 1, r
            ctx.save_for_backward(x)
        return y


class PreluKernel(Function):
    """``x`` where positive, ``weight * x`` elsewhere (``weight`` broadcasts to ``x``). The input gradient is
    ``MaskedScale``'s (joining the graph of a create_graph backward) plus the weight's share, linear in ``weight``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, x, weight):
        check_float(x, "prelu_cpu")
        if x.dtype != weight.dtype:
            raise RuntimeError(f"prelu: Type promoting not supported. Got {_tname(x.dtype)} and "
                               f"{_tname(weight.dtype)}")
        pos = x > 0
        ctx.mask = pos
        ctx.save_for_backward(x, weight)
        return ctx.xp.where(pos, x, weight * x)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        neg = ~(x > 0)  # NaN takes the negative branch, as torch's
        gx = gw = None
        if ctx.needs_input_grad[0]:
            joined = (x,) if grad_enabled() else ()
            gx = MaskedScale.apply(grad, *joined, mask=ctx.mask, pos=1, neg=0) + _where(neg, grad * weight, 0.0)
        if ctx.needs_input_grad[1]:
            gw = _where(neg, grad * x, 0.0)
        return gx, gw


class Hardshrink(_Piecewise):
    no_complex = "hardshrink_cpu"

    @staticmethod
    def forward(ctx, x, lambd):
        check_float(x, "hardshrink_cpu")
        inner = (x >= -lambd) & (x <= lambd)
        y = ctx.xp.where(inner, ctx.xp.zeros((), x.dtype), x)
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = inner, 0, 1
            ctx.save_for_backward(x)
        return y


class Softshrink(_Piecewise):
    no_complex = "softshrink_check"

    @staticmethod
    def forward(ctx, x, lambd):
        check_float(x, "softshrink_check")
        y = x - ctx.xp.clip(x, -lambd, lambd).astype(x.dtype, copy=False)  # 0 inside, x -+ lambd outside
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = (x >= -lambd) & (x <= lambd), 0, 1
            ctx.save_for_backward(x)
        return y


class Hardsigmoid(_Piecewise):
    no_complex = "hardsigmoid_cpu"

    @staticmethod
    def forward(ctx, x):
        check_float(x, "hardsigmoid_cpu")
        y = ctx.xp.clip(x + 3, 0, 6).astype(x.dtype, copy=False)
        y /= 6
        if ctx.needs_input_grad[0]:
            ctx.mask, ctx.pos, ctx.neg = (x > -3) & (x < 3), _SIXTH, 0
            ctx.save_for_backward(x)
        return y


# -- smooth activations ----------------------------------------------------------------------------------------------
class _Smooth(Function):
    """``y = f(x)``. Subclasses give, over a namespace ``m`` of array functions (``_Raw`` or ``_T``): ``aux(m, x)``,
    an intermediate shared by ``f(m, x, a)`` and the derivative ``df(m, x, a)``, and the second derivative
    ``d2f(x)`` on Tensors; or ``raw`` directly."""
    half_in_float32 = True
    kernel = ""

    @classmethod
    def forward(cls, ctx, x, **p):
        check_float(x, cls.kernel)
        xp = ctx.xp
        m = _Raw(xp)
        need = ctx.needs_input_grad[0]
        with _quiet(xp):
            r = blockwise(xp, lambda x, out: cls.raw(m, x, out, **p), x, nout=2 if need else 1)
        if not need:
            return r
        y, ctx.d = r
        ctx.p = p
        ctx.save_for_backward(x)
        return y

    @classmethod
    def raw(cls, m, x, out, **p):
        """Writes ``f(x)`` into ``out[0]`` and, if there is ``out[1]``, ``f'(x)`` into it."""
        a = cls.aux(m, x, **p)
        out[0][...] = cls.f(m, x, a, **p)
        if len(out) > 1:
            out[1][...] = cls.df(m, x, a, **p)

    @classmethod
    def backward(cls, ctx, grad):
        (x,) = ctx.saved_tensors
        return ActGrad.apply(grad, x, act=cls, d=ctx.d, p=ctx.p)


class ActGrad(Function):
    """``g * f'(x)`` of the smooth activation ``act``, ``d = f'(x)`` kept from its forward; differentiable again
    through ``f''``."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, g, x, act, d, p):
        ctx.act, ctx.p = act, p
        ctx.save_for_backward(g, x)
        with _quiet(ctx.xp):
            return blockwise(ctx.xp, ctx.xp.multiply, g, d)

    @staticmethod
    def backward(ctx, gg):
        g, x = ctx.saved_tensors
        act, p = ctx.act, ctx.p
        dg = gg * act.df(_T, x, act.aux(_T, x, **p), **p) if ctx.needs_input_grad[0] else None
        dx = gg * g * act.d2f(x, **p) if ctx.needs_input_grad[1] else None
        return dg, dx


_P, _B = compiled.GELU_P, compiled.GELU_B  # 1 - Phi(|x|) = exp(-x^2 / 2) t poly(t), t = 1 / (|x| + 1 / _P)


def _gelu_f32(x, out):
    """Writes gelu of float32 ``x`` into ``out[0]`` (and its derivative into ``out[1]`` if given): three passes
    with numba (``compiled.gelu_f32``), else the NumPy reference ``_gelu_f32_numpy``."""
    half_square = compiled.kernel("half_square", x.size)
    if half_square is None:
        return _gelu_f32_numpy(x, out)
    x = x.reshape(-1)
    e = np.empty_like(x)
    half_square(x, e)
    np.exp(e, out=e)
    compiled.kernel("gelu_f32_grad" if len(out) > 1 else "gelu_f32", x.size)(x, e, *(o.reshape(-1) for o in out))


def _gelu_f32_numpy(x, out):
    """Writes gelu of float32 ``x`` into ``out[0]`` (and its derivative ``Phi(x) + x phi(x)`` into ``out[1]`` if
    given): ~25 in-place NumPy passes, the derivative sharing the value's terms; 4x faster than scipy.special's
    erf alone (which computes in float64). Absolute error below 5e-7 (torch's float32 gelu: 1.2e-6)."""
    ax = np.abs(x)
    t = ax + 1 / _P
    np.reciprocal(t, out=t)
    q = t * _B[4]
    for b in _B[3::-1]:
        q += b
        q *= t
    e = x * x
    e *= -0.5
    np.exp(e, out=e)  # sqrt(2 pi) phi(x)
    q *= e  # 1 - Phi(|x|)
    np.subtract(0.5, q, out=q)  # |Phi(x) - 1/2|
    if len(out) == 1:
        ax *= q
        y = np.multiply(x, 0.5, out=out[0])
        y += ax  # x Phi(x) = x / 2 + |x| |Phi(x) - 1/2|
        return
    qi = q.view(np.int32)  # Phi(x) = 1/2 + |Phi(x) - 1/2| with the sign of x
    qi |= x.view(np.int32) & np.int32(-1 << 31)
    q += 0.5
    np.multiply(x, q, out=out[0])
    e *= x
    e *= _INV_SQRT_2PI
    np.add(e, q, out=out[1])


class Gelu(_Smooth):
    """``x * Phi(x)``; ``a = Phi(x)``."""
    kernel = "GeluKernelImpl"
    no_complex = kernel

    @classmethod
    def raw(cls, m, x, out):
        if m.xp is np and x.dtype == np.float32:
            return _gelu_f32(x, out)
        return super().raw(m, x, out)

    @staticmethod
    def aux(m, x):
        return m.ndtr(x) if m is not _T else (x * _SQRT1_2).erf() * 0.5 + 0.5

    @staticmethod
    def f(m, x, a):
        return x * a

    @staticmethod
    def df(m, x, a):
        return a + x * m.exp(x * x * -0.5) * _INV_SQRT_2PI

    @staticmethod
    def d2f(x):
        return (x * x * -0.5).exp() * _INV_SQRT_2PI * (2 - x * x)


class GeluTanh(_Smooth):
    """``0.5 * x * (1 + tanh(K * (x + C * x^3)))``; ``a`` is the tanh."""
    kernel = "GeluKernelImpl"
    no_complex = kernel

    @staticmethod
    def aux(m, x):
        return m.tanh((x + x * x * x * _C_TANH) * _K_TANH)

    @staticmethod
    def f(m, x, a):
        return x * (a + 1) * 0.5

    @staticmethod
    def df(m, x, a):
        return (a + 1) * 0.5 + x * 0.5 * (1 - a * a) * ((x * x * (3 * _C_TANH) + 1) * _K_TANH)

    @staticmethod
    def d2f(x):
        x2 = x * x
        t = ((x + _C_TANH * x2 * x) * _K_TANH).tanh()
        du = (1 + 3 * _C_TANH * x2) * _K_TANH
        return (1 - t * t) * (du + x * 0.5 * (6 * _C_TANH * _K_TANH * x - 2 * t * du * du))


class Silu(_Smooth):
    """``x * sigmoid(x)``; ``a`` is the sigmoid."""
    kernel = "silu_cpu"

    @staticmethod
    def aux(m, x):
        return m.sigmoid(x)

    @staticmethod
    def f(m, x, a):
        return x * a

    @staticmethod
    def df(m, x, a):
        return a * (1 + x * (1 - a))

    @staticmethod
    def d2f(x):
        s = x.sigmoid()
        return s * (1 - s) * (2 + x * (1 - 2 * s))


def _softplus(m, x):
    """``log(1 + exp(x))`` without overflow."""
    return m.log1p(m.exp(-m.abs(x))) + m.relu(x)


class Mish(_Smooth):
    """``x * tanh(softplus(x))``; ``a`` is the tanh."""
    kernel = "mish_cpu"
    no_complex = kernel

    @staticmethod
    def aux(m, x):
        return m.tanh(_softplus(m, x))

    @staticmethod
    def f(m, x, a):
        return x * a

    @staticmethod
    def df(m, x, a):
        return a + x * m.sigmoid(x) * (1 - a * a)

    @staticmethod
    def d2f(x):
        s, t = x.sigmoid(), _softplus(_T, x).tanh()
        return (1 - t * t) * s * (2 + x * (1 - s - 2 * t * s))


class Elu(_Smooth):
    """elu, selu and celu: ``scale * x`` above 0, ``scale * alpha * (exp(x * input_scale) - 1)`` below;
    ``a = expm1(min(x, 0) * input_scale)``."""
    kernel = "elu_cpu"
    no_complex = kernel

    @staticmethod
    def aux(m, x, alpha, scale, input_scale):
        return m.expm1(m.min0(x) * input_scale)

    @staticmethod
    def f(m, x, a, alpha, scale, input_scale):
        return m.where(x > 0, x * scale, a * (alpha * scale))

    @staticmethod
    def df(m, x, a, alpha, scale, input_scale):
        return m.where(x > 0, scale, (a + 1) * (alpha * scale * input_scale))

    @staticmethod
    def d2f(x, alpha, scale, input_scale):
        # torch's second derivative is 0 at x == 0 (strictly negative side only)
        return _where(x < 0, (x.clamp_max(0) * input_scale).exp() * (alpha * scale * input_scale ** 2), 0.0)


class Softplus(_Smooth):
    """``log1p(exp(beta * x)) / beta``, and ``x`` where ``beta * x > threshold``; ``a = exp(beta * x)``."""
    kernel = "softplus_cpu"
    no_complex = kernel

    @staticmethod
    def aux(m, x, beta, threshold):
        return m.exp(x * beta)

    @staticmethod
    def f(m, x, a, beta, threshold):
        return m.where(x * beta > threshold, x, m.log1p(a) / beta)

    @staticmethod
    def df(m, x, a, beta, threshold):
        return m.where(x * beta > threshold, 1.0, a / (a + 1))

    @staticmethod
    def d2f(x, beta, threshold):
        s = (x * beta).sigmoid()
        return _where(x * beta > threshold, 0.0, s * (1 - s) * beta)


class LogSigmoid(_Smooth):
    """``min(x, 0) - log1p(exp(-|x|))``; ``a = exp(-|x|)``."""
    kernel = "log_sigmoid_cpu"
    no_complex = kernel

    @staticmethod
    def aux(m, x):
        return m.exp(-m.abs(x))

    @staticmethod
    def f(m, x, a):
        return m.min0(x) - m.log1p(a)

    @staticmethod
    def df(m, x, a):  # sigmoid(-x)
        return m.where(x >= 0, a, 1.0) / (a + 1)

    @classmethod
    def backward(cls, ctx, grad):
        (x,) = ctx.saved_tensors
        if x.dtype is _dtype.float16 or x.dtype is _dtype.bfloat16:  # the kernel keeps exp(-|x|) in the half dtype
            xp, xf = ctx.xp, x._data.astype(np.float32)
            a = xp.exp(-xp.abs(xf)).astype(x._data.dtype).astype(np.float32)
            ctx.d = cls.df(_Raw(xp), xf, a)
        return super().backward(ctx, grad)

    @staticmethod
    def d2f(x):
        return -(x.sigmoid() * (-x).sigmoid())


class Hardswish(_Smooth):
    """``x * clip(x + 3, 0, 6) / 6``; ``a`` is the clip."""
    kernel = "hardswish_cpu"
    no_complex = kernel

    @staticmethod
    def aux(m, x):
        return (x + 3).clamp(0, 6) if m is _T else m.xp.clip(x + 3, 0, 6)

    @staticmethod
    def f(m, x, a):
        return x * a / 6

    @staticmethod
    def df(m, x, a):
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
    ufunc_at(xp, "add", out, index, src if coef is None else src * coef[:, None].astype(src.dtype))
    return out


class Embedding(Function):
    """Rows ``weight[index]``; the gradient of ``weight`` sums the rows' gradients, skipping ``padding_idx`` and
    dividing by each index's count with ``scale_grad_by_freq``. With ``sparse``, a leaf ``weight``'s gradient is a
    sparse COO tensor: one entry per looked-up index (padding left out) holding its row's gradient."""

    @staticmethod
    def forward(ctx, w, index, padding_idx, scale_grad_by_freq, sparse=False):
        xp = ctx.xp
        if index.size and (index.min() < 0 or index.max() >= w.shape[0]):
            raise IndexError("index out of range in self")
        ctx.num, ctx.padding_idx, ctx.scale, ctx.sparse = w.shape[0], padding_idx, scale_grad_by_freq, sparse
        ctx.save_for_backward(index)
        return xp.take(w, index, axis=0)

    @staticmethod
    def backward(ctx, grad):
        (index,) = ctx.saved_tensors
        xp = ctx.xp
        flat = index._data.reshape(-1)
        if ctx.sparse and ctx._edges and isinstance(ctx._edges[0][0], Tensor):  # a leaf weight; others get it dense
            return _sparse_rows(ctx, flat, grad), None
        coef = None
        if ctx.padding_idx >= 0:
            coef = (flat != ctx.padding_idx).astype(xp.float64)
        if ctx.scale:
            counts = xp.bincount(flat, minlength=ctx.num)[flat]
            coef = (1.0 if coef is None else coef) / counts
        g = grad.reshape(-1, grad.shape[-1])
        if grad_enabled():  # create_graph: index_add is differentiable in the gradient
            from .._creation import zeros
            if coef is not None:
                g = g * Tensor._make(coef[:, None].astype(g.dtype.np), g.dtype, g.device)
            out = zeros((ctx.num, g.shape[1]), dtype=g.dtype, device=g.device)
            return out.index_add(0, Tensor._make(flat, index.dtype, index.device), g), None
        src = g._data
        half = src.dtype in (_dtype.float16.np, _dtype.bfloat16.np)
        out = _accumulate_rows(xp, flat, src.astype(xp.float32) if half else src, ctx.num, coef)
        return Tensor._make(out.astype(src.dtype, copy=False), g.dtype, g.device), None


def _sparse_rows(ctx, flat, grad):
    """The sparse COO gradient of an embedding table: the rows of ``grad`` at the indices ``flat``, padding left
    out, uncoalesced."""
    from .._sparse import _make
    if ctx.scale:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
    g = grad.reshape(-1, grad.shape[-1])
    if ctx.padding_idx >= 0:
        keep = ctx.xp.flatnonzero(flat != ctx.padding_idx)
        if len(keep) < len(flat):
            flat = flat[keep]
            g = g.index_select(0, Tensor._make(keep, _dtype.int64, g.device))
    index = Tensor._make(flat.astype(ctx.xp.int64).reshape(1, -1), _dtype.int64, g.device)
    return _make(index, g, (ctx.num, g.shape[1]), len(flat) < 2)
