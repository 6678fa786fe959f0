"""The convolution family as models use it (channels_last layers, gradient penalties, depthwise and causal
convolutions, conv_tbc, ``nn.grad``, ``torch.convolution``, lazy layers, init, unfold/fold) against torch: values,
gradients, dtypes, strides and errors."""
import math

import numpy as np
import pytest
import torch

import ember

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")
rng = np.random.default_rng(0)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def close(e, t, tol=1e-5):
    if isinstance(t, (tuple, list)):
        assert len(e) == len(t)
        for a, b in zip(e, t):
            close(a, b, tol)
        return
    assert tuple(e.shape) == tuple(t.shape), (e.shape, t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], (e.dtype, t.dtype)
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), rtol=tol, atol=tol)


def both(fn, tol=1e-5):
    """Runs ``fn(lib)`` for ember and torch and compares what it returns (tensors, tuples of them, plain values)."""
    re, rt = fn(ember), fn(torch)
    for a, b in zip(re if isinstance(re, tuple) else (re,), rt if isinstance(rt, tuple) else (rt,)):
        if isinstance(b, torch.Tensor) or isinstance(b, list) and b and isinstance(b[0], torch.Tensor):
            close(a, b, tol)
        else:
            assert a == b, (a, b)


def same_error(fn, match=True):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)) as ee:
        fn(ember)
    if match:
        assert str(ee.value).replace("ember.", "") == str(te.value).replace("torch.", "")


def load(m, lib, **arrays):
    m.load_state_dict({k: lib.tensor(v) for k, v in arrays.items()})
    return m


X, W, B = rand(2, 4, 7, 6), rand(6, 2, 3, 3), rand(6)  # a grouped (groups=2) 2-D convolution
WT, BT = rand(4, 3, 3, 3), rand(6)  # its transposed counterpart (groups=2)


# -- layouts -----------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", ["input", "weight", "module", "transposed", "3d"])
def test_channels_last_outputs_and_grads(case):
    """A channels_last input or weight gives a channels_last output (ResNets after ``.to(channels_last)``)."""
    def run(lib):
        F, cl = lib.nn.functional, lib.channels_last
        x = lib.tensor(X)
        if case == "input":
            x = x.to(memory_format=cl).requires_grad_()
            y = F.conv2d(x, lib.tensor(W), lib.tensor(B), padding=1, groups=2)
        elif case == "weight":
            x.requires_grad_()
            y = F.conv2d(x, lib.tensor(W).to(memory_format=cl), stride=2, groups=2)
        elif case == "module":
            m = load(lib.nn.Conv2d(4, 6, 3, padding=1, groups=2), lib, weight=W, bias=B).to(memory_format=cl)
            x = x.to(memory_format=cl).requires_grad_()
            y = lib.nn.functional.relu(m(x))
        elif case == "transposed":
            x = x.to(memory_format=cl).requires_grad_()
            y = F.conv_transpose2d(x, lib.tensor(WT), lib.tensor(BT), stride=2, output_padding=1, groups=2)
        else:
            x = lib.tensor(X[:, :3, :4, None].repeat(3, 3)).to(memory_format=lib.channels_last_3d).requires_grad_()
            y = F.conv3d(x, lib.tensor(W[:, :, None].repeat(2, 2)[:, :1].repeat(3, 1)), padding=(1, 0, 1))
        y.backward(lib.ones_like(y) * 0.5)
        return y, y.stride(), x.grad, x.grad.stride()
    both(run, 1e-4)


def test_noncontiguous_weight_and_input():
    w = rand(3, 3, 6, 2)
    both(lambda lib: lib.nn.functional.conv2d(lib.tensor(X)[:, ::2].transpose(2, 3),
                                              lib.tensor(w).permute(2, 3, 0, 1)[:, :, :, :2], padding=(2, 1)))


# -- gradients ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,w,b,kw", [
    ("conv2d", W, B, dict(stride=2, padding=1, groups=2)),
    ("conv2d", W, B, dict(padding="same", dilation=(2, 1), groups=2)),
    ("conv_transpose2d", WT, BT, dict(stride=2, padding=1, output_padding=1, groups=2)),
])
def test_gradient_penalty_double_backward(fn, w, b, kw):
    """``||d out / d x|| - 1`` squared, then backward: second-order gradients of every argument."""
    def run(lib):
        x, wt, bt = (lib.tensor(a, requires_grad=True) for a in (X, w, b))
        y = getattr(lib.nn.functional, fn)(x, wt, bt, **kw)
        g, = lib.autograd.grad(y.square().sum(), x, create_graph=True)
        (g.flatten(1).norm(2, dim=1) - 1).pow(2).mean().backward()
        return y, g, x.grad, wt.grad, bt.grad
    both(run, 1e-4)


def test_wgan_gp_discriminator():
    t = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 4, 2, 1), torch.nn.LeakyReLU(0.2), torch.nn.Conv2d(8, 1, 4, 1, 0))
    sd = {k: v.numpy() for k, v in t.state_dict().items()}
    real, fake, alpha = rand(2, 3, 10, 10), rand(2, 3, 10, 10), rng.random((2, 1, 1, 1)).astype(np.float32)

    def run(lib):
        D = lib.nn.Sequential(lib.nn.Conv2d(3, 8, 4, 2, 1), lib.nn.LeakyReLU(0.2), lib.nn.Conv2d(8, 1, 4, 1, 0))
        load(D, lib, **sd)
        a = lib.tensor(alpha)
        inter = (a * lib.tensor(real) + (1 - a) * lib.tensor(fake)).requires_grad_(True)
        out = D(inter)
        g = lib.autograd.grad(outputs=out, inputs=inter, grad_outputs=lib.ones_like(out), create_graph=True,
                              retain_graph=True, only_inputs=True)[0]
        gp = ((g.view(g.size(0), -1).norm(2, dim=1) - 1) ** 2).mean() * 10
        gp.backward()
        return (gp,) + tuple(p.grad for p in D.parameters())
    both(run, 1e-4)


def test_gradcheck_float64():
    F = ember.nn.functional
    x = ember.tensor(rand(1, 4, 4, 4).astype(np.float64), requires_grad=True)
    w = ember.tensor(rand(2, 2, 2, 2).astype(np.float64), requires_grad=True)
    b = ember.tensor(rand(2).astype(np.float64), requires_grad=True)
    same = lambda x, w, b: F.conv2d(x, w, b, padding="same", groups=2, dilation=(1, 2))  # even kernel
    assert ember.autograd.gradcheck(same, (x, w, b))
    assert ember.autograd.gradgradcheck(same, (x, w, b))
    x1 = ember.tensor(rand(1, 2, 3).astype(np.float64), requires_grad=True)
    w1 = ember.tensor(rand(2, 2, 3).astype(np.float64), requires_grad=True)
    t1 = lambda x, w: F.conv_transpose1d(x, w, stride=2, dilation=2, output_padding=1)
    assert ember.autograd.gradcheck(t1, (x1, w1))
    assert ember.autograd.gradgradcheck(t1, (x1, w1))
    tbc = lambda x, w, b: F.conv_tbc(x, w, b, 1)
    xs = ember.tensor(rand(4, 2, 2).astype(np.float64), requires_grad=True)
    assert ember.autograd.gradcheck(tbc, (xs, ember.tensor(rand(3, 2, 3).astype(np.float64), requires_grad=True),
                                          ember.tensor(rand(3).astype(np.float64), requires_grad=True)))


def test_only_weight_requires_grad():
    def run(lib):
        w = lib.tensor(W[:, :1].repeat(4, 1), requires_grad=True)
        y = lib.nn.functional.conv2d(lib.tensor(X), w, stride=2, padding=(0, 1))
        return lib.autograd.grad(y.pow(2).sum(), w)[0]
    both(run, 1e-4)


# -- model idioms ------------------------------------------------------------------------------------------------------
def test_depthwise_separable_and_multiplier():
    dw, pw, pb, gy, dm = rand(4, 1, 3, 3), rand(8, 4, 1, 1), rand(8), rand(2, 8, 7, 6), rand(8, 1, 3, 3)

    def run(lib):
        m = lib.nn.Sequential(lib.nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False), lib.nn.Conv2d(4, 8, 1))
        load(m, lib, **{"0.weight": dw, "1.weight": pw, "1.bias": pb})
        x = lib.tensor(X, requires_grad=True)
        y = m(x)
        z = lib.nn.functional.conv2d(x, lib.tensor(dm), padding=2, dilation=2, groups=4)  # depth multiplier 2
        (y * lib.tensor(gy)).sum().add(z.square().sum()).backward()
        return y, z, x.grad, m[0].weight.grad, m[1].weight.grad, m[1].bias.grad
    both(run, 1e-4)


def test_causal_conv1d():
    """WaveNet/TCN: left padding then a dilated conv, or symmetric padding and the tail chopped."""
    x, w = rand(2, 3, 10), rand(5, 3, 3)

    def run(lib):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.conv1d(lib.nn.functional.pad(xt, (4, 0)), wt, dilation=2)
        m = load(lib.nn.Conv1d(3, 5, 3, padding=4, dilation=2, bias=False), lib, weight=w)
        z = m(xt)[..., :-4]
        (y.sum() + z.square().sum()).backward()
        return y, z, xt.grad, wt.grad, m.weight.grad
    both(run, 1e-4)


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_same_padding_even_kernel_dilation_modes(mode):
    w, x = rand(3, 2, 4), rand(2, 2, 11)

    def run(lib):
        m = load(lib.nn.Conv1d(2, 3, 4, padding="same", dilation=3, padding_mode=mode, bias=False), lib, weight=w)
        xt = lib.tensor(x, requires_grad=True)
        y = m(xt)
        y.backward(lib.ones_like(y))
        return y, xt.grad, m.weight.grad, list(m._reversed_padding_repeated_twice)
    both(run)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_modules(dtype):
    def run(lib):
        dt = getattr(lib, dtype)
        c = load(lib.nn.Conv2d(4, 6, 3, padding=1, groups=2), lib, weight=W, bias=B).to(dt)
        t = load(lib.nn.ConvTranspose2d(4, 6, 3, stride=2, groups=2), lib, weight=WT, bias=BT).to(dt)
        x = lib.tensor(X).to(dt).requires_grad_()
        y, z = c(x), t(x)
        (y.float().sum() + z.float().sum()).backward()
        return y, z, x.grad, c.weight.grad, t.weight.grad, t.bias.grad
    both(run, 0.25 if dtype == "bfloat16" else 0.05)


def test_float64_modules_and_input_dtype_errors():
    both(lambda lib: load(lib.nn.Conv2d(4, 6, 3, groups=2, dtype=lib.float64), lib, weight=W, bias=B)(
        lib.tensor(X.astype(np.float64))), 1e-12)
    for call in (lambda lib: lib.nn.Conv2d(4, 6, 3)(lib.tensor(X, dtype=lib.float64)),  # the bias is named first
                 lambda lib: lib.nn.Conv2d(4, 6, 3, bias=False)(lib.tensor(X, dtype=lib.float64)),
                 lambda lib: lib.nn.functional.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4, 3, 3, 3).double(),
                                                      lib.ones(4)),
                 lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 3, 5, 5).double(), lib.ones(3, 4, 3, 3),
                                                                lib.ones(4))):
        same_error(call)


def test_empty_batches():
    def run(lib):
        c, t = lib.nn.Conv2d(4, 2, 3), lib.nn.ConvTranspose2d(4, 2, 3, stride=2)
        x = lib.zeros(0, 4, 5, 5, requires_grad=True)
        y, z = c(x), t(x)
        (y.sum() + z.sum()).backward()
        return y.shape, z.shape, x.grad.shape, c.weight.grad.abs().sum(), t.bias.grad
    both(run)


# -- conv_tbc, nn.grad, torch.convolution ------------------------------------------------------------------------------
XT, WTBC, BTBC = rand(6, 2, 3), rand(3, 3, 4), rand(4)


@pytest.mark.parametrize("pad", [-1, 0, 1, 2])
def test_conv_tbc(pad):
    g = rand(6 + 2 * pad - 2, 2, 4)

    def run(lib):
        x, w, b = (lib.tensor(a, requires_grad=True) for a in (XT, WTBC, BTBC))
        y = lib.conv_tbc(x, w, b, pad) if pad != 2 else lib.nn.functional.conv_tbc(x, w, b, pad=pad)
        y.backward(lib.tensor(g))
        return y, y.stride(), x.grad, w.grad, b.grad
    both(run, 1e-4)
    both(lambda lib: lib.conv_tbc(lib.tensor(XT[:2]), lib.tensor(WTBC), lib.tensor(BTBC)).shape)  # empty output


@pytest.mark.parametrize("call", [
    lambda lib: lib.conv_tbc(lib.ones(5, 2), lib.ones(3, 3, 4), lib.ones(4)),
    lambda lib: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(3, 4), lib.ones(4)),
    lambda lib: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(3, 3, 4), lib.ones(4, 1)),
    lambda lib: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(3, 2, 4), lib.ones(4)),
    lambda lib: lib.conv_tbc(lib.ones(5, 2, 3), lib.ones(3, 3, 4), lib.ones(5)),
    lambda lib: lib.conv_tbc(lib.ones(1, 2, 3), lib.ones(5, 3, 4), lib.ones(4)),
])
def test_conv_tbc_errors(call):
    same_error(call)


@pytest.mark.parametrize("n,xs,ws,kw", [
    (1, (2, 3, 9), (4, 3, 3), dict(stride=2, padding=1)),
    (2, (2, 4, 8, 7), (6, 2, 3, 3), dict(stride=2, padding=(1, 2), dilation=(2, 1), groups=2)),
    (2, (1, 2, 8, 7), (3, 2, 3, 3), dict(stride=2)),  # a stride that leaves input rows unread
    (3, (1, 2, 4, 4, 3), (3, 2, 2, 3, 2), dict(padding=1)),
])
def test_nn_grad(n, xs, ws, kw):
    """``torch.nn.grad.conv*d_input``/``_weight`` (also ``F.grad``) give what autograd gives."""
    x, w = rand(*xs), rand(*ws)

    def run(lib):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = getattr(lib.nn.functional, f"conv{n}d")(xt, wt, **kw)
        go = lib.tensor(rng.standard_normal(tuple(y.shape)).astype(np.float32) if lib is ember else GO[0])
        GO[0] = go.numpy()
        gx, gw = lib.autograd.grad(y, (xt, wt), go)
        ng = lib.nn.functional.grad
        return (gx, gw, getattr(ng, f"conv{n}d_input")(list(xt.shape), wt, go, **kw),
                getattr(lib.nn.grad, f"conv{n}d_weight")(xt, wt.shape, go, **kw))
    GO = [None]
    re = run(ember)
    rt = run(torch)
    close(re, rt, 1e-4)
    close(re[2], re[0], 1e-5)


def test_torch_convolution():
    def run(lib):
        x = lib.tensor(X)
        return (lib.convolution(x, lib.tensor(W), lib.tensor(B), [2, 1], [1, 0], [1, 2], False, [0, 0], 2),
                lib.convolution(x, lib.tensor(WT), None, [2, 2], [1, 1], [1, 1], True, [1, 0], 2))
    both(run)
    same_error(lambda lib: lib.convolution(lib.ones(3, 5, 5), lib.ones(4, 3, 3, 3), None, [1, 1], [0, 0], [1, 1],
                                           False, [0, 0], 1))
    same_error(lambda lib: lib.convolution(lib.ones(1, 3, 5, 5), lib.ones(4, 3), None, [1, 1], [0, 0], [1, 1],
                                           False, [0, 0], 1))


# -- modules: ConvTranspose output_size, lazy, init, state_dict --------------------------------------------------------
def test_conv_transpose_subclass_output_padding():
    """A subclass of ``_ConvTransposeNd`` whose forward calls ``_output_padding`` with the layer's geometry."""
    def run(lib):
        class UpConv(lib.nn.modules.conv._ConvTransposeNd):
            def __init__(self):
                super().__init__(4, 6, (3, 3), (2, 2), (1, 1), (1, 1), True, (0, 0), 2, True, "zeros")

            def forward(self, x, output_size=None):
                op = self._output_padding(x, output_size, self.stride, self.padding, self.kernel_size, 2,
                                          self.dilation)
                return lib.nn.functional.conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding, op,
                                                          self.groups, self.dilation)
        m = load(UpConv(), lib, weight=WT, bias=BT)
        x = lib.tensor(X)
        return m(x), m(x, output_size=[14, 12]), m(x, output_size=(2, 6, 13, 11)), \
            m._output_padding(x, (2, 6, 14, 12), [2, 2], [1, 1], [3, 3], 2, [1, 1])
    both(run)
    for size in ((15, 11), [2, 6, 12, 12]):
        same_error(lambda lib: lib.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1)(lib.ones(2, 4, 7, 6),
                                                                                      output_size=size))
    same_error(lambda lib: lib.nn.ConvTranspose1d(4, 3, 3, stride=3)(lib.ones(4, 5), output_size=[1, 2, 3]))


def test_conv_transpose_output_size_unbatched_and_dilated():
    def run(lib):
        t1 = lib.nn.ConvTranspose1d(4, 3, 3, stride=3, padding=1)
        t2 = lib.nn.ConvTranspose2d(4, 3, 3, stride=2, dilation=2)
        return (t1(lib.ones(4, 5), output_size=[14]).shape, t1(lib.ones(4, 5), output_size=[3, 15]).shape,
                t2(lib.ones(1, 4, 5, 5), output_size=lib.Size([13, 14])).shape)
    both(run)


def test_lazy_conv_modules():
    def run(lib):
        a = lib.nn.LazyConv2d(6, 3, padding=1, groups=2, bias=False)
        ya = a(lib.tensor(X))
        t = lib.nn.LazyConvTranspose2d(6, 3, stride=2, groups=2)
        yt = t(lib.tensor(X), output_size=[15, 14])
        d = lib.nn.LazyConv1d(4, 3, dtype=lib.float64)
        yd = d(lib.ones(2, 3, 5, dtype=lib.float64))
        return (ya.shape, tuple(a.weight.shape), a.bias, type(a).__name__, a.in_channels, yt.shape,
                tuple(t.weight.shape), type(t).__name__, yd.dtype is lib.float64, d.weight.dtype is lib.float64)
    both(run)
    same_error(lambda lib: lib.nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 5, 5)))


def test_init_ranges_and_reset_parameters():
    """kaiming_uniform_(a=sqrt(5)): weight and bias in U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in over groups."""
    ember.manual_seed(0)
    for m in (ember.nn.Conv1d(5, 7, 3), ember.nn.Conv2d(4, 8, (3, 2), groups=2), ember.nn.Conv3d(2, 3, 2),
              ember.nn.ConvTranspose2d(4, 6, 3, groups=2), ember.nn.ConvTranspose1d(3, 5, 4)):
        fan_in = m.weight.shape[1] * math.prod(m.weight.shape[2:])
        bound = 1 / math.sqrt(fan_in)
        assert ember.nn.init._calculate_fan_in_and_fan_out(m.weight)[0] == fan_in
        w, b = m.weight.detach().numpy(), m.bias.detach().numpy()
        assert np.abs(w).max() <= bound and np.abs(b).max() <= bound and w.std() > bound / 2.5
    m = ember.nn.Conv2d(16, 32, 3)
    ember.nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")  # the ResNet init
    ember.nn.init.constant_(m.bias, 0)
    assert abs(m.weight.std().item() - math.sqrt(2 / (32 * 9))) < 0.01 and m.bias.abs().sum().item() == 0
    m.reset_parameters()
    assert m.weight.abs().max().item() <= 1 / math.sqrt(16 * 9) and m.bias.abs().sum().item() > 0


def test_state_dict_keys_and_shapes():
    def run(lib):
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3, bias=False), lib.nn.BatchNorm2d(4),
                              lib.nn.ConvTranspose2d(4, 2, 2, 2, groups=2), lib.nn.LazyConv1d(3, 2))
        sd = m.state_dict()
        return list(sd), [tuple(v.shape) for k, v in sd.items() if not k.startswith("3.")]
    both(run)


# -- unfold / fold -----------------------------------------------------------------------------------------------------
def test_unfold_fold_round_trip_and_conv_as_matmul():
    kw = dict(kernel_size=(3, 2), padding=1, stride=(2, 1), dilation=(1, 2))
    x, w, b = rand(2, 3, 8, 7), rand(4, 3, 3, 3), rand(4)

    def run(lib):
        F = lib.nn.functional
        xt = lib.tensor(x, requires_grad=True)
        cols = F.unfold(xt, **kw)
        ones = F.fold(F.unfold(lib.ones_like(xt), **kw), (8, 7), **kw)
        back = F.fold(cols, (8, 7), **kw) / ones.clamp(min=1)
        c3 = F.unfold(xt, 3, padding=1)  # (N, C * 9, L): a convolution as one matmul
        out = (lib.tensor(w).view(4, -1) @ c3).view(2, 4, 8, 7) + lib.tensor(b).view(1, -1, 1, 1)
        ref = F.conv2d(xt, lib.tensor(w), lib.tensor(b), padding=1)
        (back.sum() + out.square().sum()).backward()
        return cols, back, ones, out, ref, xt.grad
    both(run, 1e-4)


# -- errors ------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.functional.conv1d(lib.ones(1, 3, 5), lib.ones(4, 3)),  # the weight's dims first
    lambda lib: lib.nn.functional.conv2d(lib.ones(1, 3, 5, 5), lib.ones(4)),
    lambda lib: lib.nn.functional.conv_transpose1d(lib.ones(1, 3, 5), lib.ones(3, 4)),
    lambda lib: lib.nn.functional.conv1d(lib.ones(1, 2, 5), lib.ones(1, 2, 2), stride=2, padding="same"),
    lambda lib: lib.nn.Conv1d(2, 2, 3, stride=2, padding="same"),
    lambda lib: lib.nn.Conv2d(3, 4, 3)(lib.ones(2, 4, 5, 5)),
    lambda lib: lib.nn.Conv2d(3, 4, 3)(lib.ones(2, 3, 2, 5)),
    lambda lib: lib.nn.Conv2d(4, 6, 3, groups=4),
    lambda lib: lib.nn.ConvTranspose2d(4, 6, 3, groups=4),
    lambda lib: lib.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=2)(lib.ones(1, 3, 4, 4)),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 3, 4, 4), lib.ones(4, 2, 3, 3), groups=2),
    lambda lib: lib.nn.functional.conv_transpose2d(lib.ones(1, 4, 4, 4), lib.ones(4, 2, 3, 3), groups=3),
])
def test_errors(call):
    same_error(call)


@pytest.mark.parametrize("mode,p,shape", [("reflect", 2, (1, 2, 2, 5)), ("reflect", 3, (1, 2, 3, 3)),
                                          ("circular", 4, (1, 2, 3, 3))])
def test_padding_mode_too_large(mode, p, shape):
    same_error(lambda lib: lib.nn.Conv2d(2, 2, 1, padding=p, padding_mode=mode)(lib.ones(*shape)), match=False)
