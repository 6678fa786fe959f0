"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm and the legacy CrossMapLRN2d."""

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]
import numbers

from ... import _creation
from ...autograd.function import Function
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


def _shape(normalized_shape):
    return (normalized_shape,) if isinstance(normalized_shape, numbers.Integral) else tuple(normalized_shape)


class LocalResponseNorm(Module):
    """Normalizes each element by the squares of ``size`` neighbouring channels (dim 1)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class _CrossMapLRN2d(Function):
    """torch's legacy cross-channel LRN, kept bit for bit: its running channel sum never drops channel 0 once past
    it, and its backward (not the forward's exact gradient) sums over a window shifted by one channel."""

    @staticmethod
    def forward(ctx, x, size, alpha, beta, k):
        xp = ctx.xp
        C = x.shape[1]
        half = int((size - 1) / 2 + 1)
        sq = x * x
        padded = xp.zeros(x.shape[:1] + (C + 2 * half - 2,) + x.shape[2:], x.dtype)
        padded[:, half - 1:half - 1 + C] = sq
        scale = sum(padded[:, j:j + C] for j in range(2 * half - 1))  # channels c - half + 1 .. c + half - 1
        scale[:, half:] += sq[:, :1]
        scale *= alpha / size
        scale += k
        out = (x * scale ** -beta).astype(x.dtype, copy=False)  # bfloat16 ** float gives float32
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(x, out, scale)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, out, scale = ctx.saved_tensors
        size, C = ctx.size, x.shape[1]
        pre = int(size - (size - 1) / 2)
        ratio = F.pad(grad * out / scale, (0, 0, 0, 0, pre, size - 1 - pre))
        acc = sum(ratio[:, j:j + C] for j in range(size))  # channels c - pre .. c + size - 1 - pre
        return grad * scale ** -ctx.beta - (2 * ctx.alpha * ctx.beta / size) * x * acc


class CrossMapLRN2d(Module):
    """Local response normalization across channels of (N, C, H, W) inputs, as torch's legacy
    ``nn.CrossMapLRN2d``: ``x / (k + alpha / size * sum of x^2 over nearby channels) ** beta``, with that module's
    windows and gradient (use :class:`LocalResponseNorm` for the standard one).

    Example::

        >>> nn.CrossMapLRN2d(3)(ember.ones(1, 4, 1, 1)).shape
        ember.Size([1, 4, 1, 1])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        return _CrossMapLRN2d.apply(input, size=self.size, alpha=self.alpha, beta=self.beta, k=self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class LayerNorm(Module):
    """Normalizes over the trailing ``normalized_shape`` dims, with an elementwise ``weight`` and ``bias``.

    Example::

        >>> nn.LayerNorm(2)(ember.tensor([[1., 3.]])).detach()
        tensor([[-1.0000,  1.0000]])
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(self.normalized_shape, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(_creation.empty(self.normalized_shape, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalizes each of ``num_groups`` groups of channels of each sample, with a per-channel affine."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        if affine:
            self.weight = Parameter(_creation.empty(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(_creation.empty(num_channels, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """``x / sqrt(mean(x ** 2) + eps) * weight`` over the trailing ``normalized_shape`` dims (``eps`` None: the
    dtype's machine epsilon)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _shape(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
