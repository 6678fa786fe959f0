"""Memory formats as torch lays them out: channels_last(_3d) strides from factories, copies and conversions,
``is_contiguous(memory_format=...)`` by torch's stride rules, preserve_format's strides, and right values from ops
on channels_last inputs."""
import numpy as np
import pytest
import torch

import ember

SHAPES = [(2, 3, 4, 5), (2, 1, 4, 5), (2, 3, 1, 1), (1, 3, 1, 1), (2, 3, 1, 5), (1, 1, 1, 1), (2, 3, 4, 1),
          (0, 3, 4, 5), (2, 0, 4, 5)]
SHAPES_3D = [(2, 3, 4, 5, 6), (2, 1, 4, 5, 6), (2, 3, 1, 1, 1), (1, 3, 4, 1, 2)]


def fmts(m):
    return {"cl": m.channels_last, "cl3": m.channels_last_3d, "c": m.contiguous_format, "p": m.preserve_format}


def same(fn):
    """``fn(torch)`` and ``fn(ember)`` give equal results or raise the same exception type."""
    out = []
    for m in (torch, ember):
        try:
            out.append(fn(m))
        except Exception as e:  # noqa: BLE001 (compared below)
            out.append(type(e))
    assert out[0] == out[1], out


def nonempty(shape):
    return 0 not in shape  # NumPy gives empty arrays zero strides, torch C strides: their layouts are not compared


# tensors of the same shape in several layouts: plain, channels_last, permuted, sliced, expanded
LAYOUTS = {
    "plain": lambda m, s: m.empty(s),
    "channels_last": lambda m, s: m.empty(s).contiguous(memory_format=m.channels_last),
    "nhwc_permute": lambda m, s: m.empty(s[0], s[2], s[3], s[1]).permute(0, 3, 1, 2),
    "transposed": lambda m, s: m.empty(s[0], s[1], s[3], s[2]).transpose(2, 3),
    "sliced": lambda m, s: m.empty(s[0], s[1], s[2], 2 * s[3])[..., ::2],
    "expanded": lambda m, s: m.empty(s[0], 1, s[2], s[3]).expand(s),
    "cl_sliced": lambda m, s: m.empty(s[0], s[1], 2 * s[2], s[3], memory_format=m.channels_last)[:, :, ::2],
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_is_contiguous_and_suggested_layouts(shape, layout):
    if not nonempty(shape) and layout not in ("plain", "channels_last"):
        pytest.skip("the strides of empty views differ (NumPy's zeros)")
    make = LAYOUTS[layout]
    for f in ("cl", "c", "p", "cl3"):
        same(lambda m: make(m, shape).is_contiguous(memory_format=fmts(m)[f]))
    same(lambda m: make(m, shape).is_contiguous())


@pytest.mark.parametrize("shape", [s for s in SHAPES if nonempty(s)])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_preserve_format_strides(shape, layout):
    make = LAYOUTS[layout]
    same(lambda m: make(m, shape).stride())
    same(lambda m: make(m, shape).clone().stride())
    same(lambda m: m.empty_like(make(m, shape)).stride())
    same(lambda m: m.zeros_like(make(m, shape), dtype=m.float64).stride())
    same(lambda m: m.full_like(make(m, shape), 2.0).stride())
    same(lambda m: m.ones_like(make(m, shape), memory_format=m.preserve_format).stride())
    same(lambda m: m.rand_like(make(m, shape)).stride())
    same(lambda m: m.randn_like(make(m, shape)).stride())
    same(lambda m: m.randint_like(make(m, shape), 5).stride())
    for f in ("cl", "c"):
        same(lambda m: make(m, shape).clone(memory_format=fmts(m)[f]).stride())
        same(lambda m: make(m, shape).contiguous(memory_format=fmts(m)[f]).stride())
        same(lambda m: make(m, shape).to(memory_format=fmts(m)[f]).stride())
        same(lambda m: m.zeros_like(make(m, shape), memory_format=fmts(m)[f]).stride())
        same(lambda m: m.randn_like(make(m, shape), memory_format=fmts(m)[f]).stride())


@pytest.mark.parametrize("seed", range(30))
def test_preserve_format_of_random_strided_views(seed):
    # permuted, sliced and expanded layouts of random shapes: torch's non-overlapping-and-dense test and
    # infer_dense_strides decide the strides
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 5))
    shape = tuple(int(s) for s in rng.integers(1, 4, n))
    perm = tuple(int(p) for p in rng.permutation(n))
    step = tuple(int(s) for s in rng.integers(1, 3, n))
    expand_dim = int(rng.integers(0, n + 1))

    def make(m):
        x = m.empty([s * k for s, k in zip(shape, step)])[tuple(slice(None, None, k) for k in step)].permute(perm)
        if expand_dim < n and x.shape[expand_dim] == 1:
            x = x.expand(*[3 if d == expand_dim else -1 for d in range(n)])
        return x
    same(lambda m: make(m).stride())
    same(lambda m: make(m).clone().stride())
    same(lambda m: m.empty_like(make(m)).stride())


@pytest.mark.parametrize("shape", SHAPES)
def test_factories(shape):
    same(lambda m: m.empty(shape, memory_format=m.channels_last).stride())
    same(lambda m: m.empty(*shape, memory_format=m.contiguous_format).is_contiguous())
    same(lambda m: m.empty(shape, memory_format=m.channels_last).is_contiguous(memory_format=m.channels_last))
    same(lambda m: m.empty(shape, memory_format=m.preserve_format))
    same(lambda m: m.empty(shape, memory_format=m.channels_last_3d))
    same(lambda m: m.zeros(shape, memory_format=m.channels_last))  # torch has no such argument here


@pytest.mark.parametrize("shape", SHAPES_3D)
def test_channels_last_3d(shape):
    same(lambda m: m.empty(shape, memory_format=m.channels_last_3d).stride())
    same(lambda m: m.empty(shape).contiguous(memory_format=m.channels_last_3d).stride())
    same(lambda m: m.empty(shape).to(memory_format=m.channels_last_3d).is_contiguous(
        memory_format=m.channels_last_3d))
    same(lambda m: m.empty_like(m.empty(shape, memory_format=m.channels_last_3d)).stride())
    same(lambda m: m.empty(shape).is_contiguous(memory_format=m.channels_last_3d))
    same(lambda m: m.empty(shape).clone(memory_format=m.channels_last))


def test_rank_errors_and_preserve():
    same(lambda m: m.empty(2, 3, 4).contiguous(memory_format=m.channels_last))
    same(lambda m: m.empty(2, 3, 4).to(memory_format=m.channels_last))
    same(lambda m: m.empty(2, 3, 4).clone(memory_format=m.channels_last_3d))
    same(lambda m: m.zeros_like(m.empty(2, 3, 4), memory_format=m.channels_last))
    same(lambda m: m.empty(2, 3, 4).transpose(1, 2).contiguous(memory_format=m.preserve_format))
    same(lambda m: m.empty(2, 3, 4).transpose(1, 2).is_contiguous(memory_format=m.preserve_format))


def test_to_aliases_as_torch():
    # torch returns the tensor itself when the layout its strides suggest is the one asked for
    for name, make in LAYOUTS.items():
        for f in ("cl", "c", "p"):
            same(lambda m: (lambda x: x.to(memory_format=fmts(m)[f]) is x)(make(m, (2, 3, 4, 5))))
            if name != "expanded" or f != "p":  # a cast keeps NumPy's order "K" there, not torch's strides
                same(lambda m: (lambda x: x.to(m.float64, memory_format=fmts(m)[f]).stride())(make(m, (2, 3, 4, 5))))
            same(lambda m: (lambda x: x.to(memory_format=fmts(m)[f], copy=True) is x)(make(m, (2, 3, 4, 5))))


def test_values_and_gradients_survive_layout_changes():
    a = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    t = torch.tensor(a, requires_grad=True)
    e = ember.tensor(a, requires_grad=True)
    tc, ec = t.contiguous(memory_format=torch.channels_last), e.contiguous(memory_format=ember.channels_last)
    assert ec.stride() == tc.stride()
    np.testing.assert_array_equal(ec.detach().numpy(), a)
    g = np.random.default_rng(1).standard_normal(a.shape).astype(np.float32)
    (tc * torch.tensor(g)).sum().backward()
    (ec * ember.tensor(g)).sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())
    x = ember.zeros(2, 3, 4, 5).to(memory_format=ember.channels_last)
    x[:, 1] = 7.0
    assert x.stride() == (60, 1, 15, 3) and float(x[1, 1, 2, 3]) == 7.0 and float(x.sum()) == 7.0 * 40


def test_conv_batchnorm_relu_chain_on_channels_last():
    # ops need not keep the format, but their values and gradients must be torch's
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    g = rng.standard_normal((2, 4, 4, 4)).astype(np.float32)
    outs = []
    for m in (torch, ember):
        m.manual_seed(0)
        net = m.nn.Sequential(m.nn.Conv2d(3, 4, 3, padding=1), m.nn.BatchNorm2d(4), m.nn.ReLU(), m.nn.MaxPool2d(2))
        outs.append(net)
    outs[1].load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in outs[0].state_dict().items()})
    res = []
    for m, net in zip((torch, ember), outs):
        net = net.to(memory_format=m.channels_last)
        assert net[0].weight.is_contiguous(memory_format=m.channels_last)
        xi = m.tensor(x).to(memory_format=m.channels_last).requires_grad_()
        y = net(xi)
        y.backward(m.tensor(g))
        res.append((y.detach().numpy(), xi.grad.numpy(), net[0].weight.grad.numpy(), net[1].running_var.numpy(),
                    net[0].weight.stride()))
    for r_t, r_e in zip(*res):
        if isinstance(r_t, tuple):
            assert r_t == r_e
        else:
            np.testing.assert_allclose(r_e, r_t, rtol=1e-4, atol=1e-5)


def test_module_to_memory_format_only_4d_and_5d():
    for m in (torch, ember):
        net = m.nn.Sequential(m.nn.Conv2d(3, 4, 3), m.nn.Linear(4, 2), m.nn.BatchNorm2d(4))
        net.to(memory_format=m.channels_last)
        assert net[0].weight.stride() == (27, 1, 9, 3) and net[1].weight.stride() == (4, 1)
    same(lambda m: m.nn.Conv3d(2, 2, 1).to(memory_format=m.channels_last))
    same(lambda m: m.nn.Conv3d(3, 2, 2).to(memory_format=m.channels_last_3d).weight.stride())
