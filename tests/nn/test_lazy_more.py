"""Lazy convolutions and norms against torch (materialization on the first forward, becoming ``cls_to_become``,
state_dict, loading a state_dict), UninitializedBuffer, and nn.utils.skip_init."""
import copy
import doctest

import numpy as np
import pytest
import torch

import ember
from ember.nn.modules import lazy

from .torch_ref import check_module, close, same_error

LAZY = {  # name: (constructor args, input shape)
    "LazyConv1d": ((4, 3), (2, 3, 8)),
    "LazyConv2d": ((4, 3, {"padding": 1, "bias": False}), (2, 3, 6, 6)),
    "LazyConv3d": ((2, 2, {"groups": 2}), (1, 4, 4, 4, 4)),
    "LazyConvTranspose1d": ((4, 3, {"stride": 2}), (2, 3, 5)),
    "LazyConvTranspose2d": ((3, 2), (2, 3, 4, 4)),
    "LazyConvTranspose3d": ((2, 2), (1, 3, 3, 3, 3)),
    "LazyBatchNorm1d": ((), (4, 3, 5)),
    "LazyBatchNorm2d": (({"momentum": None},), (4, 3, 4, 4)),
    "LazyBatchNorm3d": (({"affine": False},), (2, 3, 3, 3, 3)),
    "LazyInstanceNorm1d": ((), (2, 3, 6)),
    "LazyInstanceNorm2d": (({"track_running_stats": False},), (2, 3, 5, 5)),
    "LazyInstanceNorm3d": (({"affine": False},), (2, 3, 3, 3, 3)),
}


def _build(lib, name):
    args, _ = LAZY[name]
    kwargs = args[-1] if args and isinstance(args[-1], dict) else {}
    pos = args[:-1] if kwargs else args
    return getattr(lib.nn, name)(*pos, **kwargs)


@pytest.mark.parametrize("name", LAZY)
def test_materialize_on_first_forward(name):
    t, e = _build(torch, name), _build(ember, name)
    assert repr(e) == repr(t)
    assert e.has_uninitialized_params()
    assert [(k, type(v).__name__) for k, v in e.named_parameters()] == \
        [(k, type(v).__name__) for k, v in t.named_parameters()]
    assert [(k, type(v).__name__) for k, v in e.named_buffers()] == \
        [(k, type(v).__name__) for k, v in t.named_buffers()]
    x = np.random.default_rng(0).standard_normal(LAZY[name][1]).astype(np.float32)
    yt, ye = t(torch.tensor(x)), e(ember.tensor(x))
    assert type(e).__name__ == type(t).__name__ == name[4:]
    assert type(e) is getattr(ember.nn, name[4:])
    assert repr(e) == repr(t)
    assert {k: tuple(v.shape) for k, v in e.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    assert [type(v).__name__ for v in e.parameters()] == ["Parameter"] * len(list(t.parameters()))
    assert [type(v).__name__ for v in e.buffers()] == ["Tensor"] * len(list(t.buffers()))
    assert ye.shape == tuple(yt.shape)
    # once materialized, it computes as torch's with the same state
    check_module(t, e, x, steps=2)


@pytest.mark.parametrize("name", LAZY)
@pytest.mark.filterwarnings("ignore:input's size at dim=1 does not match num_features")  # torch warns too
def test_load_state_dict_materializes(name):
    x = np.random.default_rng(1).standard_normal(LAZY[name][1]).astype(np.float32)
    source = _build(torch, name)
    source(torch.tensor(x))
    t, e = _build(torch, name), _build(ember, name)
    t.load_state_dict(source.state_dict())
    e.load_state_dict(source.state_dict())
    assert not e.has_uninitialized_params()
    for k, v in t.state_dict().items():
        close(e.state_dict()[k], v, what=k)
    t.eval()
    e.eval()
    if "InstanceNorm" in name and t.affine:  # num_features stays 0 after loading, in torch too
        same_error(lambda: e(ember.tensor(x)), lambda: t(torch.tensor(x)))
        return
    close(e(ember.tensor(x)), t(torch.tensor(x)))
    assert type(e).__name__ == name[4:]


def test_norm_defaults_and_bias():
    for name in ("LazyBatchNorm2d", "LazyInstanceNorm2d"):
        e, t = getattr(ember.nn, name)(bias=False), getattr(torch.nn, name)(bias=False)
        assert list(e.state_dict()) == list(t.state_dict())
        assert (e.affine, e.track_running_stats, e.num_features) == (t.affine, t.track_running_stats, 0)
    e = ember.nn.LazyBatchNorm1d(dtype=ember.float64)
    e(ember.randn(3, 2, dtype=ember.float64))
    assert e.weight.dtype is e.running_mean.dtype is ember.float64 and e.num_batches_tracked.dtype is ember.int64


def test_instance_norm_unbatched():
    """torch reads the features from dim 1 even of an unbatched input (and then fails); ember reads dim 0."""
    x = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    e = ember.nn.LazyInstanceNorm1d()
    y = e(ember.tensor(x))
    assert e.num_features == 3
    t = torch.nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
    e.load_state_dict(t.state_dict())
    close(e(ember.tensor(x)), t(torch.tensor(x)))
    assert y.shape == (3, 6)


def test_input_dim_errors():
    for name, shape in (("LazyBatchNorm2d", (2, 3)), ("LazyInstanceNorm1d", (2, 3, 4, 5))):
        same_error(lambda: getattr(ember.nn, name)()(ember.zeros(*shape)),
                   lambda: getattr(torch.nn, name)()(torch.zeros(*shape)))


def test_deepcopy_lazy():
    e = ember.nn.LazyBatchNorm1d()
    c = copy.deepcopy(e)
    assert isinstance(c.running_mean, ember.nn.UninitializedBuffer) and c.has_uninitialized_params()
    c(ember.randn(4, 2))
    assert type(c) is ember.nn.BatchNorm1d and type(e) is ember.nn.LazyBatchNorm1d


def test_uninitialized_buffer():
    b = ember.nn.UninitializedBuffer(dtype=ember.float64, persistent=False)
    assert isinstance(b, ember.nn.Buffer) and repr(b) == "<UninitializedBuffer>"
    m = ember.nn.Module()
    m.b = b
    assert list(m.state_dict()) == [] and list(dict(m.named_buffers())) == ["b"]
    b.materialize((2, 3))
    assert type(b) is ember.Tensor and b.shape == (2, 3) and b.dtype is ember.float64


def test_skip_init():
    ember.manual_seed(0)
    expected = ember.rand(3)
    ember.manual_seed(0)
    m = ember.nn.utils.skip_init(ember.nn.Linear, 10, 5, bias=False, dtype=ember.float64)
    close(ember.rand(3), expected)  # no random numbers drawn
    t = torch.nn.utils.skip_init(torch.nn.Linear, 10, 5, bias=False, dtype=torch.float64)
    assert type(m) is ember.nn.Linear and repr(m) == repr(t)
    assert m.weight.shape == tuple(t.weight.shape) and m.weight.dtype is ember.float64 and m.weight.requires_grad
    assert m.weight.device == ember.device("cpu")

    class NoDevice(ember.nn.Module):
        pass

    class TNoDevice(torch.nn.Module):
        pass

    same_error(lambda: ember.nn.utils.skip_init(NoDevice), lambda: torch.nn.utils.skip_init(TNoDevice))
    with pytest.raises(RuntimeError, match="Expected a Module"):
        ember.nn.utils.skip_init(int)


def test_docstring_examples():
    result = doctest.testmod(lazy, globs={"ember": ember}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
    from ember.nn.utils import init
    result = doctest.testmod(init, globs={"ember": ember, "skip_init": init.skip_init},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
