"""``ember.nn.attention``: the backend choice of :func:`ember.nn.functional.scaled_dot_product_attention`.

ember has one attention implementation, the math one, on every device: the backends chosen are validated, kept (read
back through ``ember.backends.cuda.*_sdp_enabled``) and restored as torch's, and change no computation.
"""
import contextlib
import enum

from ...backends import cuda as _cuda

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.Enum):
    """The backends of scaled dot product attention, for :func:`sdpa_kernel`."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__


_FLAGS = {SDPBackend.CUDNN_ATTENTION: "cudnn", SDPBackend.FLASH_ATTENTION: "flash",
          SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.MATH: "math"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Enables exactly ``backends`` (an :class:`SDPBackend` or a list of them) for scaled dot product attention
    inside the block, and restores the previous ones after it. ``set_priority`` (the list's order as the order of
    preference) is accepted; ember's one implementation needs no order.

    Example::

        >>> from ember.nn.attention import SDPBackend, sdpa_kernel
        >>> with sdpa_kernel(SDPBackend.MATH):
        ...     ember.backends.cuda.flash_sdp_enabled()
        False
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    previous = dict(_cuda._sdp_enabled)
    _cuda._sdp_enabled.update({name: backend in backends for backend, name in _FLAGS.items()})
    try:
        yield {}
    finally:
        _cuda._sdp_enabled.update(previous)
