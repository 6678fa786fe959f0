"""ember.library.custom_op and ember.ops against torch's."""
import numpy as np
import pytest
import torch

import ember

_count = iter(range(10 ** 6))


def _ns(lib):
    """A fresh operator name per definition: torch keeps its registrations for the whole process."""
    return f"embertest::op{next(_count)}"


def _numpy_sin(lib):
    @lib.library.custom_op(_ns(lib), mutates_args=())
    def nsin(x: lib.Tensor) -> lib.Tensor:
        return lib.from_numpy(np.sin(x.detach().numpy()))
    return nsin


@pytest.mark.parametrize("with_setup", [True, False])
def test_autograd_formula(with_setup):
    x = np.random.default_rng(0).standard_normal(5)
    grads = []
    for lib in (ember, torch):
        op = _numpy_sin(lib)
        if with_setup:
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            def backward(ctx, grad):
                return grad * ctx.saved_tensors[0].cos()
            op.register_autograd(backward, setup_context=setup_context)
        xt = lib.tensor(x, requires_grad=True)
        y = op(xt)
        assert y.requires_grad
        if with_setup:
            y.sum().backward()
            grads.append(xt.grad.numpy())
        else:
            with pytest.raises(RuntimeError, match="no autograd formula was registered"):
                y.sum().backward()
    if with_setup:
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
        np.testing.assert_allclose(grads[0], np.cos(x), rtol=1e-12)


def test_keyword_only_inputs_reach_setup_context_and_ops_namespace():
    res = []
    for lib in (ember, torch):
        name = _ns(lib)

        @lib.library.custom_op(name, mutates_args=())
        def scaled(x: lib.Tensor, *, scale: float = 2.0) -> lib.Tensor:
            return x * scale

        def setup(ctx, inputs, keyword_only_inputs, output):
            ctx.scale = keyword_only_inputs["scale"]
        scaled.register_autograd(lambda ctx, g: g * ctx.scale, setup_context=setup)
        x = lib.ones(3, requires_grad=True)
        ns, op = name.split("::")
        y = getattr(getattr(lib.ops, ns), op)(x, scale=3.0) + getattr(getattr(lib.ops, ns), op).default(x)
        y.sum().backward()
        res.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])


def test_mutated_arguments_and_tuple_outputs():
    for lib in (ember, torch):
        @lib.library.custom_op(_ns(lib), mutates_args={"out"})
        def add_into(x: lib.Tensor, out: lib.Tensor) -> None:
            out.add_(x)

        @lib.library.custom_op(_ns(lib), mutates_args=())
        def two(x: lib.Tensor, k: float) -> tuple[lib.Tensor, lib.Tensor]:
            return x * k, x + k
        o = lib.zeros(3)
        before = o._version
        assert add_into(lib.ones(3), o) is None
        assert o.tolist() == [1.0, 1.0, 1.0] and o._version - before == 2
        a, b = two(lib.ones(2), 2.0)
        assert a.tolist() == [2.0, 2.0] and b.tolist() == [3.0, 3.0]


def test_kernels_per_device_and_fake():
    for lib in (ember, torch):
        @lib.library.custom_op(_ns(lib), mutates_args=())
        def plus(x: lib.Tensor) -> lib.Tensor:
            return x + 1
        assert plus(lib.zeros(1)).tolist() == [1.0]

        @plus.register_kernel("cpu")
        def _(x):
            return x + 100
        assert plus(lib.zeros(1)).tolist() == [100.0]

        @lib.library.custom_op(_ns(lib), mutates_args=())
        def doubled(x: lib.Tensor) -> lib.Tensor:
            return x.repeat(2)

        @doubled.register_fake
        def _(x):
            return x.new_empty(2 * x.shape[0])
        y = doubled(lib.empty(3, device="meta"))
        assert tuple(y.shape) == (6,) and y.device.type == "meta"


def test_schema_errors_match_torch():
    def no_annotation(x):
        return x

    for lib in (ember, torch):
        def no_return(x: lib.Tensor):
            return x

        def clone(x: lib.Tensor) -> lib.Tensor:
            return x.clone()
        with pytest.raises(ValueError, match="Parameter x must have a type annotation"):
            lib.library.custom_op(_ns(lib), mutates_args=())(no_annotation)
        with pytest.raises(ValueError, match="No return type annotation"):
            lib.library.custom_op(_ns(lib), mutates_args=())(no_return)
        with pytest.raises(ValueError, match="in mutates_args were not found"):
            lib.library.custom_op(_ns(lib), mutates_args=("y",))(clone)
        with pytest.raises(TypeError):
            lib.library.custom_op(_ns(lib))

        @lib.library.custom_op(_ns(lib), mutates_args=())
        def alias(x: lib.Tensor) -> lib.Tensor:
            return x
        with pytest.raises(RuntimeError, match="must not also be an input"):
            alias(lib.ones(2))
    with pytest.raises(ValueError, match="namespace::name"):
        ember.library.custom_op("no_namespace", mutates_args=())(lambda x: x)
    with pytest.raises(AttributeError):
        ember.ops.embertest.never_defined


def test_aten_namespace_calls_ember_functions():
    a, b = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])
    assert ember.ops.aten.add(a, b).tolist() == torch.ops.aten.add(torch.tensor([1.0, 2.0]),
                                                                    torch.tensor([3.0, 4.0])).tolist()
    assert ember.ops.aten.mul.Tensor(a, b).tolist() == [3.0, 8.0]
    assert ember.ops.aten.relu.default(ember.tensor([-1.0, 1.0])).tolist() == [0.0, 1.0]
