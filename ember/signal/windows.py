"""Window functions of ``torch.signal.windows``, SciPy's conventions: ``M`` points, symmetric unless ``sym=False``
(then periodic, as for spectral analysis). Each is computed as torch computes it, from a ``linspace`` of phases."""
import math

from .. import _dtype
from .._creation import empty, linspace, ones, tensor, arange
from .._layout import strided

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine", "general_hamming", "hamming",
           "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    """Torch's argument checks; the dtype after defaulting, and the window of ``M <= 1`` points if that is all."""
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _phases(M, start, step, dtype, device, requires_grad):
    return linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``.

    Example::

        >>> ember.signal.windows.exponential(3, tau=0.5)
        tensor([0.1353, 1.0000, 0.1353])
    """
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    return _phases(M, -center / tau, 1 / tau, dtype, device, requires_grad).abs().neg().exp()


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The cosine (sine) window ``sin(pi (n + 0.5) / M)``."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    return _phases(M, 0.5 * step, step, dtype, device, requires_grad).sin()


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Gaussian window ``exp(-(n - (M - 1) / 2)^2 / (2 std^2))``."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    step = 1 / (std * math.sqrt(2))
    k = _phases(M, -(M if not sym and M > 1 else M - 1) / 2.0 * step, step, dtype, device, requires_grad)
    return (-(k ** 2)).exp()


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Kaiser window ``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return (empty if M == 0 else ones)((M,), dtype=dtype, device=device, requires_grad=requires_grad)
    b = tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / (M if not sym else M - 1)
    end = b.minimum(-b + (M - 1) * step)
    k = linspace(-b, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return (b * b - k.pow(2)).sqrt().i0() / b.i0()


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The weighted sum of cosines ``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dtype = _checks("general_cosine", M, dtype, layout)
    if M <= 1:
        return (empty if M == 0 else ones)((M,), dtype=dtype, device=device, requires_grad=requires_grad)
    if not hasattr(a, "__iter__"):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    k = _phases(M, 0, 2 * math.pi / (M if not sym else M - 1), dtype, device, requires_grad)
    a_i = tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device, requires_grad=requires_grad)
    i = arange(a_i.shape[0], dtype=dtype, device=device, requires_grad=requires_grad)
    return (a_i.unsqueeze(-1) * (i.unsqueeze(-1) * k).cos()).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The generalized Hamming window ``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hamming window, :func:`general_hamming` with ``alpha = 0.54``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hann window, :func:`general_hamming` with ``alpha = 0.5``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Blackman window, :func:`general_cosine` with ``a = [0.42, 0.5, 0.08]``."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The triangular window ``1 - |2n / (M - 1) - 1|``."""
    dtype = _checks("bartlett", M, dtype, layout)
    if M <= 1:
        return (empty if M == 0 else ones)((M,), dtype=dtype, device=device, requires_grad=requires_grad)
    return 1 - _phases(M, -1, 2 / (M if not sym else M - 1), dtype, device, requires_grad).abs()
