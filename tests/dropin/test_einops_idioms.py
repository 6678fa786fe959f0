"""einops (rearrange/reduce/repeat/pack/unpack/einsum/parse_shape and the layers) on ember tensors against torch."""
import subprocess
import sys

import numpy as np
import pytest
import torch

import ember

einops = pytest.importorskip("einops")
from einops import EinopsError, einsum, pack, parse_shape, rearrange, reduce, repeat, unpack  # noqa: E402
from einops.layers.torch import EinMix as TEinMix, Rearrange as TRearrange, Reduce as TReduce  # noqa: E402

from ember.nn.einops import EinMix, Rearrange, Reduce  # noqa: E402


def _r(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _close(e, t, rtol=1e-6, atol=1e-6):
    assert type(e).__module__.startswith("ember") and tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype) == str(t.dtype).replace("torch", "ember")
    np.testing.assert_allclose(e.detach().float().numpy(), t.detach().float().numpy(), rtol=rtol, atol=atol)


def _grads(fn, *arrays, rtol=1e-6, atol=1e-6):
    """``fn(lib, *tensors)`` in both libraries: outputs and input gradients under a random output gradient."""
    res = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *ts)
        g = lib.tensor(_r(*out.shape, seed=7)).to(out.dtype)
        out.backward(g)
        res.append((out, [t.grad for t in ts]))
    _close(res[0][0], res[1][0], rtol, atol)
    for ge, gt in zip(res[0][1], res[1][1]):
        _close(ge, gt, rtol, atol)


def test_import_ember_does_not_import_einops():
    code = "import sys, ember; print('einops' in sys.modules, 'ember._einops' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split() == ["False"] * 2
    for pre in ("import einops, ember", "import ember, einops",
                # an availability probe must not consume the hook that defines ember's backend
                "import importlib.util, ember; importlib.util.find_spec('einops'); import einops"):
        code = pre + "; print(einops.rearrange(ember.ones(2, 3), 'a b -> b a').shape)"
        assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == \
            "ember.Size([3, 2])", pre


def test_vit_patchify_and_unpatchify():
    x = _r(2, 3, 8, 12)
    _grads(lambda lib, t: rearrange(t, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4), x)
    _grads(lambda lib, t: rearrange(rearrange(t, "b c (h p) (w q) -> b (h w) (p q c)", p=2, q=2),
                                    "b (h w) (p q c) -> b c (h p) (w q)", h=4, p=2, q=2) * 2, x)
    # a non-contiguous input and a space-to-depth
    _grads(lambda lib, t: rearrange(t.transpose(2, 3), "b c (w s1) (h s2) -> b (c s1 s2) w h", s1=2, s2=2), x)


@pytest.mark.parametrize("heads", [1, 4])
def test_attention_head_split_and_merge(heads):
    q, k, v = _r(2, 5, 8, seed=1), _r(2, 5, 8, seed=2), _r(2, 5, 8, seed=3)

    def attn(lib, q, k, v):
        q, k, v = (rearrange(t, "b n (h d) -> b h n d", h=heads) for t in (q, k, v))
        dots = einsum(q, k, "b h i d, b h j d -> b h i j") * (8 // heads) ** -0.5
        out = einsum(dots.softmax(dim=-1), v, "b h i j, b h j d -> b h i d")
        return rearrange(out, "b h n d -> b n (h d)")
    _grads(attn, q, k, v, rtol=1e-5)
    # qkv packed in one projection, split by rearrange
    _grads(lambda lib, t: rearrange(t, "b n (three h d) -> three b h n d", three=3, h=heads)[1], _r(2, 5, 24))


def test_rotary_embedding_and_attention_mask():
    def rope(lib, x):
        inv_freq = 1.0 / (10000 ** (lib.arange(0, 8, 2).float() / 8))
        freqs = repeat(lib.einsum("i, j -> i j", lib.arange(5).float(), inv_freq), "... n -> ... (n r)", r=2)
        x1, x2 = rearrange(x, "... (d r) -> ... d r", r=2).unbind(dim=-1)
        rotated = rearrange(lib.stack((-x2, x1), dim=-1), "... d r -> ... (d r)")
        return x * freqs.cos() + rotated * freqs.sin()
    _grads(rope, _r(2, 3, 5, 8), rtol=1e-5)

    def masked(lib, dots):
        mask = lib.tensor([[True, True, False, True, False], [True, False, True, True, True]])
        mask = rearrange(mask, "b j -> b 1 1 j")
        return dots.masked_fill(~mask, -lib.finfo(dots.dtype).max).softmax(dim=-1)
    _grads(masked, _r(2, 3, 5, 5), rtol=1e-5)


@pytest.mark.parametrize("op", ["mean", "sum", "max", "min", "prod"])
def test_reduce_pooling(op):
    x = _r(2, 3, 4, 6)
    _grads(lambda lib, t: reduce(t, "b c h w -> b c", op), x, rtol=1e-5)
    _grads(lambda lib, t: reduce(t, "b c (h 2) (w 2) -> b c h w", op), x, rtol=1e-5)
    _grads(lambda lib, t: reduce(t, "b c h w -> b 1 h w", op), x, rtol=1e-5)
    _grads(lambda lib, t: reduce(t, "b ... w -> ... b", op), x, rtol=1e-5)


def test_reduce_dtypes_and_errors():
    xi = np.arange(24).reshape(2, 3, 4)
    for op in ("sum", "max", "min", "prod"):
        _close(reduce(ember.tensor(xi), "a b c -> a", op), reduce(torch.tensor(xi), "a b c -> a", op))
    xb = xi % 5 != 0
    for op in ("any", "all"):
        _close(reduce(ember.tensor(xb), "a b c -> c", op), reduce(torch.tensor(xb), "a b c -> c", op))
    _close(reduce(ember.tensor(xi, dtype=ember.float16), "a b c -> a", "mean"),
           reduce(torch.tensor(xi, dtype=torch.float16), "a b c -> a", "mean"), rtol=1e-3)
    for lib in (ember, torch):
        with pytest.raises(NotImplementedError):  # mean of integers is refused
            reduce(lib.tensor(xi), "a b c -> a", "mean")
        with pytest.raises(EinopsError):
            rearrange(lib.tensor(xi), "a (b p) c -> a b p c", p=2)
        with pytest.raises(EinopsError):
            rearrange(lib.tensor(xi), "a b -> b a")


def test_repeat_cls_tokens_and_upsampling():
    cls, x = _r(1, 1, 8), _r(3, 4, 8, seed=1)
    _grads(lambda lib, c, t: lib.cat([repeat(c, "1 1 d -> b 1 d", b=3), t], dim=1), cls, x)
    _grads(lambda lib, c: repeat(c, "() n d -> b n d", b=2) * 1.5, cls)
    _grads(lambda lib, t: repeat(t, "b h w -> b (h 2) (w 3)"), x)
    _grads(lambda lib, t: repeat(t, "b n d -> b n d r", r=2), x)
    for lib in (ember, torch):  # a broadcast view, as torch's backend gives
        assert repeat(lib.tensor(cls), "1 1 d -> b 1 d", b=3).stride() == (0, 8, 1)


def test_pack_unpack():
    cls, patches, reg = _r(2, 8), _r(2, 3, 4, 8, seed=1), _r(2, 4, 8, seed=2)

    def f(lib, c, p, r):
        packed, ps = pack([c, p, r], "b * d")
        assert [tuple(s) for s in ps] == [(), (3, 4), (4,)]
        c2, p2, r2 = unpack(packed * 2, ps, "b * d")
        return lib.cat([c2[:, None], p2.flatten(1, 2) * 3, r2], dim=1)
    _grads(f, cls, patches, reg)
    _grads(lambda lib, t: unpack(t, [[2], [1, 3]], "b * d")[1], _r(2, 5, 4))
    for lib in (ember, torch):
        with pytest.raises(EinopsError):
            unpack(lib.ones(2, 5, 4), [[2], [1, 2]], "b * d")


def test_einsum_patterns():
    a, b, c = _r(2, 3, 4), _r(2, 4, 5, seed=1), _r(3, 4, seed=2)
    _grads(lambda lib, x, y: einsum(x, y, "batch i j, batch j k -> batch i k"), a, b, rtol=1e-5)
    _grads(lambda lib, x, w: einsum(x, w, "b i j, i j -> b"), a, c, rtol=1e-5)
    _grads(lambda lib, x: einsum(x, "b i j -> b"), a, rtol=1e-5)
    _grads(lambda lib, x, y: einsum(x, y, "... i j, ... j k -> ... i k"), a, b, rtol=1e-5)
    _grads(lambda lib, x, w: einsum(x, w, w, "b i j, i j, i j -> b i"), a, c, rtol=1e-5)


def test_parse_shape_list_inputs_and_asnumpy():
    x = _r(2, 3, 4, 5)
    assert parse_shape(ember.tensor(x), "b c _ w") == parse_shape(torch.tensor(x), "b c _ w") == dict(b=2, c=3, w=5)
    assert parse_shape(ember.tensor(x), "b ...") == {"b": 2}
    _close(rearrange([ember.tensor(x[i]) for i in range(2)], "b c h w -> c (b h) w"),
           rearrange([torch.tensor(x[i]) for i in range(2)], "b c h w -> c (b h) w"))
    np.testing.assert_array_equal(einops.asnumpy(ember.tensor(x, requires_grad=True) * 1), x)
    _grads(lambda lib, t: rearrange(t, "b c h w -> (b c) h w", **parse_shape(t, "b c _ _")), x)


def _copy(src, dst):
    dst.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def test_layers_vit_stem_and_pooling_head():
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(TRearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4),
                               torch.nn.Linear(48, 16), torch.nn.GELU(), TReduce("b n d -> b d", "mean"),
                               torch.nn.Linear(16, 10))
    enet = ember.nn.Sequential(Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=4, p2=4),
                               ember.nn.Linear(48, 16), ember.nn.GELU(), Reduce("b n d -> b d", "mean"),
                               ember.nn.Linear(16, 10))
    _copy(tnet, enet)
    assert repr(enet[0]) == repr(tnet[0]) and repr(enet[3]) == repr(tnet[3])
    x, g = _r(2, 3, 16, 8), _r(2, 10, seed=5)
    xs = [ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)]
    outs = [enet(xs[0]), tnet(xs[1])]
    outs[0].backward(ember.tensor(g))
    outs[1].backward(torch.tensor(g))
    _close(outs[0], outs[1], 1e-5, 1e-6)
    _close(xs[0].grad, xs[1].grad, 1e-5, 1e-6)
    for (ne, pe), (nt, pt) in zip(enet.named_parameters(), tnet.named_parameters()):
        assert ne == nt
        _close(pe.grad, pt.grad, 1e-5, 1e-6)
    with pytest.raises(EinopsError):
        enet[0](ember.ones(2, 3, 15, 8))


@pytest.mark.parametrize("args", [
    ("b t c -> b t d", dict(weight_shape="c d", bias_shape="d", c=8, d=6)),
    ("b (h w) c -> b h w d", dict(weight_shape="c d", h=2, d=6, c=8)),  # pre/post rearrange, no bias
    ("b t c -> b t h d", dict(weight_shape="c h d", bias_shape="h d", c=8, h=2, d=3)),
])
def test_einmix(args):
    pattern, kw = args
    tm, em = TEinMix(pattern, **kw), EinMix(pattern, **kw)
    assert repr(em) == repr(tm)
    assert {k: tuple(v.shape) for k, v in em.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in tm.state_dict().items()}
    bound = float(tm.weight.detach().abs().max()) * 2  # the same uniform bound, not zeros
    assert 0 < float(em.weight.detach().abs().max()) <= bound
    _copy(tm, em)
    x, g = _r(2, 4, 8), None
    res = []
    for lib, m in ((ember, em), (torch, tm)):
        xt = lib.tensor(x, requires_grad=True)
        out = m(xt)
        g = _r(*out.shape, seed=3)
        out.backward(lib.tensor(g))
        res.append([out, xt.grad] + [p.grad for p in m.parameters()])
    for e, t in zip(*res):
        _close(e, t, 1e-5, 1e-6)
