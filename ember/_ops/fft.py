"""Discrete Fourier transforms (``ember.fft``) and the short-time transforms ``stft``/``istft``.

Three primitives carry every transform: complex-to-complex (C2C), real-to-complex onesided (R2C) and
complex-to-real (C2R). Each one's gradient is another of them with the normalization swapped (the adjoint of an
unnormalized DFT is the unnormalized inverse DFT); R2C and C2R weigh the half spectrum (halving or doubling the bins
whose mirror image lies outside it), as torch's ``fft_r2c_backward``/``fft_c2r_backward`` do. Zero-padding and
truncation to ``n``/``s`` is its own op (Resize), whose adjoint is the opposite resize.
"""
import warnings

from .. import _dtype
from .._autocast import cpu_float32_inputs
from .._creation import arange, ones
from .._tensor import register, wrap_dim, write_out
from ..autograd.function import Function

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_NORMS = {None: "backward", "backward": "backward", "forward": "forward", "ortho": "ortho"}
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


class Resize(Function):
    """Zero-pads or truncates ``x`` at the end of each of ``dims`` to ``sizes``."""

    @staticmethod
    def forward(ctx, x, dims, sizes):
        ctx.dims, ctx.sizes = dims, [x.shape[d] for d in dims]
        shape, keep = list(x.shape), [slice(None)] * x.ndim
        for d, s in zip(dims, sizes):
            shape[d], keep[d] = s, slice(0, min(s, x.shape[d]))
        y = ctx.xp.zeros(shape, x.dtype)
        y[tuple(keep)] = x[tuple(keep)]
        return y

    @staticmethod
    def backward(ctx, grad):
        return Resize.apply(grad, dims=ctx.dims, sizes=ctx.sizes)


class C2C(Function):
    """``fftn`` (``forward``) or ``ifftn`` over ``dims``."""

    @staticmethod
    def forward(ctx, x, dims, norm, forward):
        ctx.dims, ctx.norm, ctx.fwd = dims, norm, forward
        f = ctx.xp.fft.fftn if forward else ctx.xp.fft.ifftn
        return f(x, axes=dims, norm=norm).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return C2C.apply(grad, dims=ctx.dims, norm=_SWAP[ctx.norm], forward=not ctx.fwd)


class R2C(Function):
    """``rfftn`` over ``dims`` (the last one halved); its conjugate with the inverse's scaling when not ``forward``
    (``ihfftn``)."""

    @staticmethod
    def forward(ctx, x, dims, norm, forward):
        ctx.dims, ctx.norm, ctx.fwd, ctx.n = dims, norm, forward, x.shape[dims[-1]]
        y = ctx.xp.fft.rfftn(x, axes=dims, norm=norm if forward else _SWAP[norm])
        y = y.astype(_dtype.from_numpy_dtype(x.dtype).to_complex().np, copy=False)
        return y if forward else y.conj()

    @staticmethod
    def backward(ctx, grad):
        # The adjoint zero-fills the missing half, inverts and keeps the real part: an irfftn of the half spectrum
        # whose bins with a mirror image outside it are halved (irfftn counts those twice).
        grad = _weigh(grad, ctx.dims[-1], ctx.n, 0.5)
        return C2R.apply(grad, dims=ctx.dims, n=ctx.n, norm=_SWAP[ctx.norm], forward=not ctx.fwd)


class C2R(Function):
    """``irfftn`` over ``dims`` to ``n`` points along the last one; ``hfftn`` (conjugated input, forward scaling)
    when ``forward``."""

    @staticmethod
    def forward(ctx, x, dims, n, norm, forward):
        ctx.dims, ctx.norm, ctx.fwd, ctx.n = dims, norm, forward, n
        s = [x.shape[d] for d in dims[:-1]] + [n]
        y = ctx.xp.fft.irfftn(x.conj() if forward else x, s=s, axes=dims, norm=_SWAP[norm] if forward else norm)
        return y.astype(x.real.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        # Each bin of the half spectrum but 0 and n/2 stands for itself and its mirror image: its gradient doubles.
        grad = R2C.apply(grad, dims=ctx.dims, norm=_SWAP[ctx.norm], forward=not ctx.fwd)
        return _weigh(grad, ctx.dims[-1], ctx.n, 2.0)


def _weigh(g, dim, n, w):
    """``g`` with bins ``1 .. n - (n//2 + 1)`` along ``dim`` multiplied by ``w``."""
    m = n - (n // 2 + 1)
    if m <= 0:
        return g
    scale = ones(g.shape[dim], dtype=g.dtype.to_real(), device=g.device)
    scale[1:m + 1] = w
    return g * scale.reshape([-1] + [1] * (g.ndim - 1 - dim))


# -- argument handling ----------------------------------------------------------------------------------------------
def _norm(norm):
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return _NORMS[norm]


def _float_dtype(x):
    """The real dtype ``x`` is transformed in: integers promote to the default dtype; half types are refused as by
    torch on CPU."""
    d = x.dtype
    if d is _dtype.float16 or d is _dtype.bfloat16:
        raise RuntimeError(f"Unsupported dtype {_dtype.scalar_name(d)}")
    return d.to_real() if d.is_floating_point or d.is_complex else _dtype.get_default_dtype()


def _as_complex(x):
    d = _float_dtype(x)
    if x.dtype.is_complex:
        return x
    return x.to(d.to_complex())


def _as_real(x, name):
    if x.dtype.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {_dtype.scalar_name(x.dtype)}")
    d = _float_dtype(x)
    return x if x.dtype is d else x.to(d)


def _dims_sizes(x, s, dim):
    """Torch's canonical ``(dims, sizes)`` of an n-dimensional transform; a size of -1 keeps the input's."""
    if dim is not None:
        dims = [wrap_dim(d, x.ndim) for d in ((dim,) if isinstance(dim, int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {x.ndim} dimensions.")
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = list(range(x.ndim))
    sizes = [x.shape[d] for d in dims] if s is None else [x.shape[d] if n == -1 else n for d, n in zip(dims, s)]
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return tuple(dims), sizes


def _resize(x, dims, sizes):
    if all(x.shape[d] == n for d, n in zip(dims, sizes)):
        return x
    return Resize.apply(x, dims=dims, sizes=sizes)


def _c2c(input, s, dim, norm, forward, out):
    norm = _norm(norm)
    x = _as_complex(input)
    dims, sizes = _dims_sizes(x, s, dim)
    y = C2C.apply(_resize(x, dims, sizes), dims=dims, norm=norm, forward=forward) if dims else x.clone()
    return write_out(y, out)


def _r2c(input, s, dim, norm, forward, out, name):
    norm = _norm(norm)
    x = _as_real(input, name)
    dims, sizes = _dims_sizes(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    return write_out(R2C.apply(_resize(x, dims, sizes), dims=dims, norm=norm, forward=forward), out)


def _c2r(input, s, dim, norm, forward, out, name):
    norm = _norm(norm)
    x = _as_complex(input)
    dims, sizes = _dims_sizes(x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    if s is None or s[-1] == -1:
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
        if sizes[-1] < 1:
            raise RuntimeError(f"Invalid number of data points ({sizes[-1]}) specified")
    n = sizes[-1]
    x = _resize(x, dims, sizes[:-1] + [n // 2 + 1])
    return write_out(C2R.apply(x, dims=dims, n=n, norm=norm, forward=forward), out)


def _n(n):
    return None if n is None else (n,)


# -- public transforms ----------------------------------------------------------------------------------------------
@cpu_float32_inputs  # on CPU autocast's float32 list
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform of ``input`` along ``dim``, zero-padded or trimmed to ``n``
    points. ``norm``: ``"backward"`` (no scaling, the default), ``"ortho"`` (1/sqrt(n)) or ``"forward"`` (1/n).

    Example::

        >>> ember.fft.fft(ember.arange(4.))
        tensor([ 6.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    return _c2c(input, _n(n), (dim,), norm, True, out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`fft` (``norm="backward"`` scales by 1/n)."""
    return _c2c(input, _n(n), (dim,), norm, False, out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional :func:`fftn` over ``dim``."""
    return _c2c(input, s, dim, norm, True, out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional :func:`ifftn` over ``dim``."""
    return _c2c(input, s, dim, norm, False, out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional discrete Fourier transform over ``dim`` (all dimensions, or the last ``len(s)``), with
    each transformed dimension resized to ``s``."""
    return _c2c(input, s, dim, norm, True, out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`fftn`."""
    return _c2c(input, s, dim, norm, False, out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The :func:`fft` of a real ``input``: only the ``n // 2 + 1`` non-negative frequencies.

    Example::

        >>> ember.fft.rfft(ember.arange(4.))
        tensor([ 6.+0.j, -2.+2.j, -2.+0.j])
    """
    return _r2c(input, _n(n), (dim,), norm, True, out, "rfft")


@cpu_float32_inputs  # on CPU autocast's float32 list
def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`rfft`: a real signal of ``n`` points (default ``2 * (input.size(dim) - 1)``)."""
    return _c2r(input, _n(n), (dim,), norm, False, out, "irfft")


@cpu_float32_inputs  # on CPU autocast's float32 list
def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional :func:`rfftn` over ``dim``."""
    return _r2c(input, s, dim, norm, True, out, "rfftn")


@cpu_float32_inputs  # on CPU autocast's float32 list
def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional :func:`irfftn` over ``dim``."""
    return _c2r(input, s, dim, norm, False, out, "irfftn")


@cpu_float32_inputs  # on CPU autocast's float32 list
def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The :func:`fftn` of a real ``input``, halved along the last transformed dimension."""
    return _r2c(input, s, dim, norm, True, out, "rfftn")


@cpu_float32_inputs  # on CPU autocast's float32 list
def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`rfftn`: a real signal, ``s[-1]`` points (default ``2 * (m - 1)``) along the last
    dimension."""
    return _c2r(input, s, dim, norm, False, out, "irfftn")


@cpu_float32_inputs  # on CPU autocast's float32 list
def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The :func:`fft` of a signal with Hermitian symmetry given by its first half ``input``: a real signal of
    ``n`` points (default ``2 * (input.size(dim) - 1)``)."""
    return _c2r(input, _n(n), (dim,), norm, True, out, "hfft")


@cpu_float32_inputs  # on CPU autocast's float32 list
def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`hfft`: the half spectrum of the :func:`ifft` of a real ``input``."""
    return _r2c(input, _n(n), (dim,), norm, False, out, "ihfft")


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional :func:`hfftn` over ``dim``."""
    return _c2r(input, s, dim, norm, True, out, "hfftn")


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """The two-dimensional :func:`ihfftn` over ``dim``."""
    return _r2c(input, s, dim, norm, False, out, "ihfftn")


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The n-dimensional :func:`hfft`: a real signal from a half-Hermitian ``input``."""
    return _c2r(input, s, dim, norm, True, out, "hfftn")


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`hfftn`."""
    return _r2c(input, s, dim, norm, False, out, "ihfftn")


# -- frequencies and shifts -----------------------------------------------------------------------------------------
def _freq_dtype(name, dtype):
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an :func:`fft` of ``n`` points with sample spacing ``d``.

    Example::

        >>> ember.fft.fftfreq(4)
        tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    _freq_dtype("fftfreq", dtype)
    k = arange(n, dtype=dtype or _dtype.get_default_dtype(), device=device)
    k[(n + 1) // 2:] = arange(-(n // 2), 0, dtype=k.dtype, device=device)
    return write_out((k * (1.0 / (n * d))).requires_grad_(requires_grad), out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an :func:`rfft` of ``n`` points with sample spacing ``d``."""
    _freq_dtype("rfftfreq", dtype)
    k = arange(n // 2 + 1, dtype=dtype or _dtype.get_default_dtype(), device=device)
    return write_out((k * (1.0 / (n * d))).requires_grad_(requires_grad), out)


def _shift(input, dim, half):
    dims = range(input.ndim) if dim is None else (dim,) if isinstance(dim, int) else dim
    dims = [wrap_dim(d, input.ndim) for d in dims]
    return input.roll([half(input.shape[d]) for d in dims], dims) if dims else input.clone()


def fftshift(input, dim=None):
    """``input`` rolled so that the zero frequency of an :func:`fftn` output is centered (all of ``dim``)."""
    return _shift(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`."""
    return _shift(input, dim, lambda n: (n + 1) // 2)


# -- short-time Fourier transform -----------------------------------------------------------------------------------
def _desc(t):
    return "None" if t is None else f"{t.type()}{{{list(t.shape)}}}"


def _opt(b):
    return "None" if b is None else int(b)


def _centered_window(window, win_length, n_fft, like, op):
    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    elif window.ndim != 1 or window.shape[0] != win_length:
        raise RuntimeError(f"{op} : expected a 1D window tensor of size equal to win_length={win_length}, but got "
                           f"window with size {list(window.shape)}")
    if win_length < n_fft:
        from ..nn.functional import pad
        left = (n_fft - win_length) // 2
        window = pad(window, (left, n_fft - win_length - left))
    return window


@cpu_float32_inputs  # on CPU autocast's float32 list
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    """The short-time Fourier transform: the :func:`ember.fft.fft` of each windowed frame of ``n_fft`` samples,
    frames ``hop_length`` (default ``n_fft // 4``) apart. ``center`` pads the signal by ``n_fft // 2`` on both
    sides with ``pad_mode``; ``normalized`` scales by ``n_fft ** -0.5``.

    Shape:
        - input: ``(L)`` or ``(B, L)``
        - output: ``(n_fft // 2 + 1, n_frames)`` (onesided) or ``(n_fft, n_frames)``, with the batch dimension first

    Example::

        >>> ember.stft(ember.ones(64), 16, window=ember.hann_window(16), return_complex=True).shape
        ember.Size([9, 17])
    """
    from ..nn.functional import pad
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        dim = input.ndim
        p = n_fft // 2
        input = pad(input.view([1] * (3 - dim) + list(input.shape)), [p, p], pad_mode)
        input = input.view(input.shape[-dim:])
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    op = (f"stft({input.type()}{list(input.shape)}, n_fft={n_fft}, hop_length={hop_length}, win_length="
          f"{win_length}, window={_desc(window)}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
          f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)})")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known to cause "
                      "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
                      "recommended to reduce spectral leakage.To suppress this warning and use a rectangular window, "
                      "explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    complex_fft = input.dtype.is_complex or window is not None and window.dtype.is_complex
    if return_complex is None:
        if not complex_fft:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will "
                               "further require that return_complex=True in a future PyTorch release.")
        return_complex = True
    if not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                      "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                      "still call torch.view_as_real on the complex output to recover the old return format.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{op} : expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"{op} : expected a 1D or 2D tensor")
    x = input if input.ndim == 2 else input.unsqueeze(0)  # (B, L)
    length = x.shape[1]
    if not 0 < n_fft <= length:
        raise RuntimeError(f"{op} : expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"{op} : expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{op} : expected 0 < win_length <= n_fft, but got win_length={win_length}")
    window = _centered_window(window, win_length, n_fft, x, op)
    if align_to_window and win_length < n_fft:  # frames start where the window does, not where n_fft does
        left = (n_fft - win_length) // 2
        x = pad(x, (left, n_fft - win_length - left))
    onesided = not complex_fft if onesided is None else onesided
    if onesided and complex_fft:
        raise RuntimeError(f"{op} : Cannot have onesided output if window or input is complex")
    frames = x.unfold(-1, n_fft, hop_length) * window  # (B, n_frames, n_fft)
    norm = "ortho" if normalized else "backward"
    spec = (rfft(frames, norm=norm) if onesided else fft(frames, norm=norm)).transpose(1, 2)
    spec = spec if input.ndim == 2 else spec.squeeze(0)
    if not return_complex:
        from .. import view_as_real
        return view_as_real(spec)
    return spec


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft` by windowed overlap-add, divided by the summed squared window.

    Shape:
        - input: ``(n_freq, n_frames)`` or ``(B, n_freq, n_frames)``, complex
        - output: ``(L)`` or ``(B, L)``

    Example::

        >>> x = ember.randn(64)
        >>> w = ember.hann_window(16)
        >>> y = ember.istft(ember.stft(x, 16, window=w, return_complex=True), 16, window=w, length=64)
        >>> bool(ember.allclose(x, y, atol=1e-5))
        True
    """
    from ..nn.functional import fold, pad
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    op = (f"istft({input.type()}{list(input.shape)}, n_fft={n_fft}, hop_length={hop_length}, win_length="
          f"{win_length}, window={_desc(window)}, center={int(center)}, normalized={int(normalized)}, "
          f"onesided={_opt(onesided)}, length={'None' if length is None else length}, "
          f"return_complex={int(return_complex)})")
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide the same "
                      "window used by stft to make the inversion lossless.To suppress this warning and use a "
                      "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{op}: expected a tensor with 2 or 3 dimensions of complex dtype")
    x = input if input.ndim == 3 else input.unsqueeze(0)  # (B, n_freq, n_frames)
    n_freq, n_frames = x.shape[1], x.shape[2]
    onesided = n_freq != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != n_freq:
        raise RuntimeError(f"{op}: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft / 2 + 1 when onesided=True, but got {n_freq}")
    if not onesided and n_fft != n_freq:
        raise RuntimeError(f"{op}: expected the frequency dimension (3rd to the last) of the input tensor to match "
                           f"n_fft when onesided=False, but got {n_freq}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError(f"{op}: expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"{op}: expected 0 < win_length <= n_fft")
    window = _centered_window(window, win_length, n_fft, x, op)
    norm = "ortho" if normalized else "backward"
    x = x.transpose(1, 2)  # (B, n_frames, n_freq)
    if return_complex:
        if onesided:
            raise RuntimeError(f"{op}: cannot have onesided output if window or input is complex")
        frames = ifft(x, n_fft, norm=norm)
    else:
        if window.dtype.is_complex:
            raise RuntimeError(f"{op}: Complex windows are incompatible with return_complex=False")
        frames = irfft(x if onesided else x[..., :n_fft // 2 + 1], n_fft, norm=norm)
    frames = frames * window  # (B, n_frames, n_fft)
    total = n_fft + hop_length * (n_frames - 1)

    def overlap_add(f):
        return fold(f.transpose(1, 2), (1, total), (1, n_fft), stride=(1, hop_length)).reshape(f.shape[0], total)
    y = overlap_add(frames)
    envelope = overlap_add(window.pow(2).expand(1, n_frames, n_fft))
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else total - n_fft // 2 if center else total
    y, envelope = y[:, start:end], envelope[:, start:end]
    if bool(envelope.abs().min() < 1e-11):
        raise RuntimeError(f"{op} window overlap add min: 1")
    y = y / envelope
    if end > total:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded with zeros "
                      "in the tail. Please check your center and hop_length settings.")
        y = pad(y, (0, end - total))
    return y if input.ndim == 3 else y.squeeze(0)


register(stft=stft, istft=istft)
