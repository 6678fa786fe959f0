"""ember.onnx.export of tensor ops, one mapping at a time: onnxruntime and ember.onnx.load against ember."""
import math

import pytest

import ember
import ember.nn as nn

from .helpers import check


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def x34(rows=3):
    return ember.randn(rows, 4) * 2


def pos34(rows=3):
    return ember.rand(rows, 4) + 0.1


def ints34(rows=3):
    return ember.randint(-9, 10, (rows, 4))


# (id, function, example inputs) -- each also exported with a dynamic first dim when the inputs are one float tensor
OPS = [
    ("add_scalar", lambda x: x + 1.5, x34), ("radd_int", lambda x: 2 + x, x34),
    ("sub_broadcast", lambda x: x - x[0], x34),
    ("mul", lambda x: x * x, x34), ("div", lambda x: x / 3, x34), ("rdiv", lambda x: 1 / x, pos34),
    ("pow_scalar", lambda x: x ** 3, x34), ("rpow", lambda x: 2 ** x, x34), ("pow_tensor", lambda x: x ** x, pos34),
    ("maximum", lambda x: ember.maximum(x, x.flip(1)), x34), ("minimum", lambda x: ember.minimum(x, ember.tensor(0.5)), x34),
    ("floor_divide", lambda x: x // 0.7, x34), ("remainder", lambda x: x % 0.7, x34),
    ("fmod", lambda x: x.fmod(0.7), x34),
    ("div_trunc", lambda x: x.div(0.7, rounding_mode="trunc"), x34), ("hypot", lambda x: x.hypot(x + 1), x34),
    ("int_ops", lambda x: (x // 4, x % 4, x.div(4, rounding_mode="trunc"), -x, x.abs(), x * 3 - 1), ints34),
    ("int_true_div", lambda x: x / 4, ints34), ("int_pow", lambda x: x ** 2, ints34),
    ("compare", lambda x: (x > 0, x >= 0.5, x < x.sum(0), x <= 0, x == x.round(), x != 0), x34),
    ("logical", lambda x: ((x > 0) & (x < 1), (x > 0) | (x < -1), (x > 0) ^ (x > 1), ~(x > 0),
                           ember.logical_and(x > 0, x < 2)), x34),
    ("bitwise_bool", lambda x: ((x > 0) & (x < 1), (x > 0) | (x < 1), ~(x > 0)), x34),
    ("predicates", lambda x: (x.isnan(), x.isinf(), x.isfinite(), x.isposinf(), x.isneginf()),
     lambda: ember.tensor([[1.0, math.inf, -math.inf, math.nan]])),
    ("where", lambda x: ember.where(x > 0, x, x * 0.1), x34), ("masked_fill", lambda x: x.masked_fill(x < 0, 2.0), x34),
    ("clamp", lambda x: (x.clamp(-1, 1), x.clamp(min=0), x.clamp(max=x.mean())), x34),
    ("lerp", lambda x: ember.lerp(x, x.flip(0), 0.3), x34),
    ("unary", lambda x: (x.neg(), x.abs(), x.sign(), x.floor(), x.ceil(), x.round(), x.round(decimals=1),
                         x.trunc(), x.frac(), x.exp(), x.exp2(), x.expm1(), x.sin(), x.cos(), x.tan(), x.atan(),
                         x.sinh(), x.cosh(), x.asinh(), x.tanh(), x.sigmoid(), x.erf(), x.erfc()), x34),
    ("unary_positive", lambda x: (x.log(), x.log2(), x.log10(), x.log1p(), x.sqrt(), x.rsqrt(), x.reciprocal(),
                                  (x + 1).acosh(), (x * 0.9).asin(), (x * 0.9).acos(),
                                  (x * 0.9).atanh()), pos34),
    ("unary_on_ints", lambda x: (x.exp(), x.sqrt(), x.sigmoid()), lambda: ember.randint(0, 5, (3, 4))),
    ("casts", lambda x: (x.int(), x.long() * 2, x.double().float(), (x > 0).int(), x.to(ember.float64)), x34),
    ("sum_mean", lambda x: (x.sum(), x.sum(1), x.mean(0, keepdim=True), x.sum((0, 1), keepdim=True)), x34),
    ("sum_int", lambda x: (x.sum(1), x.sum()), ints34),
    ("prod", lambda x: x.prod(1), x34), ("logsumexp", lambda x: x.logsumexp(1), x34),
    ("extremes", lambda x: (x.max(), x.min(), x.amax(1), x.amin((0, 1)), x.max(1).values, x.min(0).indices,
                            x.max(1, keepdim=True).indices, x.argmax(), x.argmin(1, keepdim=True), x.argmax(0)), x34),
    ("var_std", lambda x: (x.var(1), x.std(0, keepdim=True), x.var(correction=0), x.std()), x34),
    ("norms", lambda x: (x.norm(), x.norm(dim=1), x.norm(p=1, dim=0), x.norm(p=3, dim=1),
                         ember.linalg.vector_norm(x, math.inf, 1), ember.linalg.vector_norm(x, 0, 1)), x34),
    ("all_any", lambda x: ((x > 0).all(1), (x > 0).any(), (x > -5).all()), x34),
    ("count_nonzero", lambda x: ember.count_nonzero(x.round(), 1), x34),
    ("cumsum", lambda x: (x.cumsum(1), x.cumsum(0)), x34),
    ("softmax", lambda x: (x.softmax(0), x.log_softmax(-1), ember.softmax(x, 1, dtype=ember.float64)), x34),
    ("matmul", lambda x: (x @ x.t(), x.t() @ x, x @ x[0], ember.mm(x, x.t()), ember.addmm(x[:, :3], x, x.t()[:, :3],
                                                                                         beta=0.5, alpha=2)), x34),
    ("batched_matmul", lambda x: (x.view(3, 2, 2) @ x.view(3, 2, 2), ember.baddbmm(x.view(3, 2, 2), x.view(3, 2, 2),
                                                                                  x.view(3, 2, 2)),
                                  ember.addbmm(x[0].view(2, 2), x.view(3, 2, 2), x.view(3, 2, 2))), x34),
    ("einsum", lambda x: (ember.einsum("ij,kj->ik", x, x), ember.einsum("ij->j", x), ember.einsum("ii->i", x[:, :3])),
     x34),
    ("views", lambda x: (x.view(2, 6), x.reshape(-1), x.t(), x.permute(1, 0), x.unsqueeze(1), x[None].squeeze(0),
                         x.flatten(), x.unflatten(1, (2, 2)), x.expand(2, 3, 4), x.movedim(0, 1), x.mT, x.view(-1, 2)),
     x34),
    ("slicing", lambda x: (x[1], x[-1], x[:, 2], x[1:, ::2], x[..., 1:3], x[None, 1:, None], x[:, -2:],
                           x.narrow(1, 1, 2), x.select(0, 2), x[2:1]), x34),
    ("split", lambda x: (*x.split(2, 1), *x.split([1, 3], 1), *x.chunk(2, 1), *x.tensor_split(3, 1), *x.unbind(1)),
     x34),
    ("split_static", lambda x: (*x.chunk(2, 0), *x.unbind(0)), lambda: ember.randn(2, 4, 1)),
    ("joins", lambda x: (ember.cat([x, x * 2], 1), ember.stack([x, x], 2), ember.cat([x.int(), x]),
                         ember.hstack([x, x]), ember.vstack([x, x[:1]])), x34),
    ("roll_flat", lambda x: (x.roll(2), x.roll((1, -1), (0, 1))), lambda: ember.randn(2, 4)),
    ("rearrange", lambda x: (x.flip(0, 1), x.roll(1, 1), x.repeat(2, 1, 1), x.tile(2), x.tril(),
                             x.triu(1), x.clone(), x.contiguous()), x34),
    ("gathers", lambda x: (x[ember.tensor([2, 0])], x[:, ember.tensor([[1], [3]])], x[[0, 2], [1, 3]],
                           x[ember.tensor([0, 1])][:, [2, 0]], x.index_select(1, ember.tensor([3, 0])),
                           x.gather(1, ember.tensor([[0, 1], [2, 3], [1, 1]])), x.take_along_dim(
                               ember.tensor([[0], [1], [3]]), 1), x[[True, False, True]]), x34),
    ("pads", lambda x: (nn.functional.pad(x, (1, 2)), nn.functional.pad(x, (1, 1, 2, 0), value=3.0),
                        nn.functional.pad(x, (-1, 1))), x34),
    ("fill", lambda x: (x.new_zeros(3, 4).fill_(2.0) + x, ember.zeros_like(x), ember.ones_like(x) * x,
                        ember.full_like(x, 7.0)), x34),
]


@pytest.mark.parametrize("fn,make", [c[1:] for c in OPS], ids=[c[0] for c in OPS])
def test_op(fn, make):
    ember.manual_seed(0)
    x = make()
    dynamic = {"input_0": {0: "n"}} if x.dtype.is_floating_point and x.shape[0] == 3 else None
    others = [make()] if dynamic is None else []
    try:  # most ops also take other lengths of the first dim; those whose shapes do not are exported static
        with ember.no_grad():
            fn(make(5))
    except (RuntimeError, IndexError, TypeError):
        dynamic = None
    check(Fn(fn), x, dynamic, others if dynamic is None else [make(5)])


def test_bitwise_integers_need_opset_18():
    fn = lambda x: (x & 3, x | 4, x ^ 5, ~x)  # noqa: E731
    with pytest.raises(ember.onnx.UnsupportedOperatorError, match="BitwiseAnd: bitwise ops on integers need opset 18"):
        check(Fn(fn), ints34())
    check(Fn(fn), ints34(), opset_version=18)


@pytest.mark.parametrize("opset", [17, 18, 21])
def test_reductions_across_opsets(opset):
    """ReduceMean/Max/... take their axes as an attribute before opset 18 and as an input from 18."""
    fn = lambda x: (x.mean(1), x.amax(0), x.amin(1), x.prod(0), x.logsumexp(1), x.norm(dim=1), x.sum(0))  # noqa
    check(Fn(fn), x34(), opset_version=opset)
