"""Window functions for spectral analysis (``hann_window`` ... ``kaiser_window``), computed as torch computes them:
in the requested dtype, step by step, so that float32 windows match torch's to the last bit."""
import math

from .. import _dtype
from .._creation import arange, empty, ones
from ..autograd.grad_mode import no_grad

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]


def _window(name, window_length, periodic, dtype, device, requires_grad, fn):
    """Torch's checks and edge cases around ``fn(k, N)``, the symmetric window of ``N`` points from ``k =
    arange(N)``; a periodic window is the symmetric one of ``N + 1`` points without its last."""
    dtype = _dtype.get_default_dtype() if dtype is None else dtype
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={window_length}")
    if not (dtype.is_floating_point or dtype.is_complex):  # complex ones fail in arange, as torch's
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length <= 1:
        make = empty if window_length == 0 else ones
        return make(window_length, dtype=dtype, device=device, requires_grad=requires_grad)
    n = window_length + 1 if periodic else window_length
    with no_grad():
        w = fn(arange(n, dtype=dtype, device=device), n)
    return w[:window_length].clone().requires_grad_(requires_grad) if periodic else w.requires_grad_(requires_grad)


def _hamming(alpha, beta):
    return lambda k, n: (k * (2 * math.pi / (n - 1))).cos() * -beta + alpha


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window ``0.5 - 0.5 cos(2 pi k / (N - 1))``, ``N = window_length + 1`` when ``periodic``.

    Example::

        >>> ember.hann_window(4)
        tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad, _hamming(0.5, 0.5))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """The Hamming window ``alpha - beta cos(2 pi k / (N - 1))``, ``N = window_length + 1`` when ``periodic``."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad, _hamming(alpha, beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window ``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))``."""
    def fn(k, n):
        k = k * (math.pi / (n - 1))
        return (k * 4).cos() * 0.08 - (k * 2).cos() * 0.5 + 0.42
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad, fn)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular window ``1 - |2k / (N - 1) - 1|``."""
    def fn(k, n):
        w = k * (2.0 / (n - 1))
        half = ((n - 1) >> 1) + 1
        w[half:] = w[half:] * -1 + 2
        return w
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad, fn)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """The Kaiser window ``I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta)``, ``a = (N - 1) / 2``."""
    def fn(k, n):
        a = (n - 1) / 2.0
        b = k.new_full((), beta)
        return (b * (1 - ((k - a) / a).pow(2)).abs().sqrt()).i0() / b.i0()
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, fn)
