"""Identity, Linear, Bilinear and LazyLinear."""
import math

from ... import _creation
from ...autograd.grad_mode import no_grad
from .. import init
from ..functional.linear import bilinear, linear
from ..parameter import Parameter
from .lazy import LazyModuleMixin, UninitializedParameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments.

    Example::

        >>> ember.nn.Identity(54, unused=0.1)(ember.ones(2))
        tensor([1., 1.])
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """Applies an affine map ``y = x A^T + b``.

    Args:
        in_features (int): size of each input sample
        out_features (int): size of each output sample
        bias (bool): whether to learn an additive bias. Default: ``True``

    Shape:
        - Input: :math:`(*, H_{in})`, Output: :math:`(*, H_{out})`

    Attributes:
        weight: :math:`(out\\_features, in\\_features)`, from :math:`U(-\\sqrt{k}, \\sqrt{k})`, :math:`k = 1/in`
        bias: :math:`(out\\_features)`, from the same distribution

    Example::

        >>> ember.nn.Linear(20, 30)(ember.randn(128, 20)).shape
        ember.Size([128, 30])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """kaiming_uniform_(a=sqrt(5)) for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """Applies ``y = x_1^T A x_2 + b``.

    Args:
        in1_features (int), in2_features (int): sizes of the two inputs
        out_features (int): size of the output
        bias (bool): whether to learn an additive bias. Default: ``True``

    Shape:
        - Input1: :math:`(*, H_{in1})`, Input2: :math:`(*, H_{in2})`, Output: :math:`(*, H_{out})`

    Example::

        >>> ember.nn.Bilinear(20, 30, 40)(ember.randn(128, 20), ember.randn(128, 30)).shape
        ember.Size([128, 40])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_creation.empty((out_features, in1_features, in2_features), device=device,
                                                dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """U(-1/sqrt(in1_features), 1/sqrt(in1_features)) for the weight and the bias."""
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is inferred from the first input; it then becomes a :class:`Linear`.

    Example::

        >>> m = ember.nn.LazyLinear(3)
        >>> m(ember.ones(2, 5)).shape, m
        (ember.Size([2, 3]), Linear(in_features=5, out_features=3, bias=True))
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
