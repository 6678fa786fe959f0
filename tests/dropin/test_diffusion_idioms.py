"""Idioms of diffusion and score-based model code (DDPM/DDIM/improved-DDPM/EDM/latent-diffusion reference
implementations: schedules, UNets, classifier-free guidance, EMA, samplers, mixed and half precision) against torch."""
import copy
import math

import numpy as np
import pytest
import torch

import ember


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().double().numpy(), t.detach().double().numpy(), rtol=rtol, atol=atol)


def _arr(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _sync(e_module, t_module):
    e_module.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t_module.state_dict().items()})
    return e_module


# -- a small DDPM: schedules, UNet, loss, sampling -------------------------------------------------------------------
def _build(lib):
    nn, F = lib.nn, lib.nn.functional

    def cosine_beta_schedule(T, s=0.008):
        x = lib.linspace(0, T, T + 1, dtype=lib.float64)
        ac = lib.cos(((x / T) + s) / (1 + s) * math.pi * 0.5) ** 2
        ac = ac / ac[0]
        return lib.clip(1 - (ac[1:] / ac[:-1]), 0, 0.999)

    def extract(a, t, x_shape):
        return a.gather(-1, t).reshape(t.shape[0], *((1,) * (len(x_shape) - 1)))

    class SinusoidalPosEmb(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dim = dim

        def forward(self, x):
            half = self.dim // 2
            emb = lib.exp(lib.arange(half, device=x.device) * -(math.log(10000) / (half - 1)))
            emb = x[:, None] * emb[None, :]
            return lib.cat((emb.sin(), emb.cos()), dim=-1)

    class ResBlock(nn.Module):
        def __init__(self, cin, cout, tdim):
            super().__init__()
            self.norm1, self.conv1 = nn.GroupNorm(4, cin), nn.Conv2d(cin, cout, 3, padding=1)
            self.temb = nn.Sequential(nn.SiLU(), nn.Linear(tdim, cout * 2))
            self.norm2, self.drop = nn.GroupNorm(4, cout), nn.Dropout(0.1)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, t):
            h = self.conv1(F.silu(self.norm1(x)))
            scale, shift = self.temb(t)[:, :, None, None].chunk(2, dim=1)
            h = self.norm2(h) * (1 + scale) + shift
            return self.conv2(self.drop(F.silu(h))) + self.skip(x)

    class Attention(nn.Module):  # guided-diffusion's QKVAttentionLegacy, with einsum
        def __init__(self, ch, heads=2):
            super().__init__()
            self.heads, self.norm = heads, nn.GroupNorm(4, ch)
            self.qkv, self.proj = nn.Conv2d(ch, ch * 3, 1, bias=False), nn.Conv2d(ch, ch, 1)

        def forward(self, x):
            b, c, h, w = x.shape
            q, k, v = self.qkv(self.norm(x)).reshape(b * self.heads, 3 * c // self.heads, h * w).split(
                c // self.heads, dim=1)
            scale = 1 / math.sqrt(math.sqrt(c // self.heads))
            weight = lib.einsum("bct,bcs->bts", q * scale, k * scale)
            weight = lib.softmax(weight.float(), dim=-1).type(weight.dtype)
            return x + self.proj(lib.einsum("bts,bcs->bct", weight, v).reshape(b, -1, h, w))

    class BmmAttention(nn.Module):  # DDPM's AttnBlock
        def __init__(self, ch):
            super().__init__()
            self.norm, self.q, self.k = nn.GroupNorm(4, ch), nn.Conv2d(ch, ch, 1), nn.Conv2d(ch, ch, 1)
            self.v, self.o = nn.Conv2d(ch, ch, 1), nn.Conv2d(ch, ch, 1)

        def forward(self, x):
            h_ = self.norm(x)
            b, c, h, w = x.shape
            q = self.q(h_).reshape(b, c, h * w).permute(0, 2, 1)
            w_ = F.softmax(lib.bmm(q, self.k(h_).reshape(b, c, h * w)) * (int(c) ** (-0.5)), dim=2)
            return x + self.o(lib.bmm(self.v(h_).reshape(b, c, h * w), w_.permute(0, 2, 1)).reshape(b, c, h, w))

    class UNet(nn.Module):
        def __init__(self, ch=8, num_classes=3):
            super().__init__()
            tdim = ch * 4
            self.num_classes = num_classes
            self.time_mlp = nn.Sequential(SinusoidalPosEmb(ch), nn.Linear(ch, tdim), nn.GELU(), nn.Linear(tdim, tdim))
            self.label_emb = nn.Embedding(num_classes + 1, tdim)  # the last class: unconditional
            self.inc = nn.Conv2d(3, ch, 3, padding=1)
            self.down = ResBlock(ch, ch, tdim)
            self.ds = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
            self.mid = ResBlock(ch, ch * 2, tdim)
            self.attn, self.attn2 = Attention(ch * 2), BmmAttention(ch * 2)
            self.us = nn.Conv2d(ch * 2, ch * 2, 3, padding=1)
            self.up = ResBlock(ch * 3, ch, tdim)
            self.out = nn.Sequential(nn.GroupNorm(4, ch), nn.SiLU(), nn.Conv2d(ch, 3, 3, padding=1))

        def forward(self, x, t, y):
            temb = self.time_mlp(t) + self.label_emb(y)
            h1 = self.down(self.inc(x), temb)
            h = self.attn2(self.attn(self.mid(self.ds(h1), temb)))
            h = self.us(F.interpolate(h, scale_factor=2, mode="nearest"))
            return self.out(self.up(lib.cat([h, h1], dim=1), temb))

    class Diffusion(nn.Module):
        def __init__(self, model, T, objective):
            super().__init__()
            self.model, self.T, self.objective = model, T, objective
            betas = cosine_beta_schedule(T) if objective == "pred_noise" else \
                lib.linspace(1e-4 * 1000 / T, 0.02 * 1000 / T, T, dtype=lib.float64)
            ac = lib.cumprod(1. - betas, dim=0)
            ac_prev = F.pad(ac[:-1], (1, 0), value=1.)
            reg = lambda name, val: self.register_buffer(name, val.to(lib.float32))
            reg("alphas_cumprod", ac)
            reg("sqrt_ac", lib.sqrt(ac))
            reg("sqrt_1m_ac", lib.sqrt(1. - ac))
            reg("sqrt_recip_ac", lib.sqrt(1. / ac))
            reg("sqrt_recipm1_ac", lib.sqrt(1. / ac - 1))
            post_var = betas * (1. - ac_prev) / (1. - ac)
            reg("post_logvar", lib.log(post_var.clamp(min=1e-20)))
            reg("coef1", betas * lib.sqrt(ac_prev) / (1. - ac))
            reg("coef2", (1. - ac_prev) * lib.sqrt(1. - betas) / (1. - ac))
            snr = ac / (1 - ac)
            clipped = snr.clone().clamp_(max=5.0)
            reg("loss_weight", clipped / (snr + 1) if objective == "pred_v" else clipped / snr)

        def predictions(self, x, t, y, guidance=0.0):
            if guidance > 0:  # classifier-free guidance: one batch of conditional and unconditional inputs
                y_in = lib.cat([y, lib.full_like(y, self.model.num_classes)])
                cond, uncond = self.model(lib.cat([x] * 2), lib.cat([t] * 2), y_in).chunk(2)
                out = uncond + (1 + guidance) * (cond - uncond)
            else:
                out = self.model(x, t, y)
            if self.objective == "pred_noise":
                x0 = (extract(self.sqrt_recip_ac, t, x.shape) * x - extract(self.sqrt_recipm1_ac, t, x.shape) * out)
                return out, x0.clamp(-1., 1.)
            x0 = lib.clamp(extract(self.sqrt_ac, t, x.shape) * x - extract(self.sqrt_1m_ac, t, x.shape) * out, -1, 1)
            eps = (extract(self.sqrt_recip_ac, t, x.shape) * x - x0) / extract(self.sqrt_recipm1_ac, t, x.shape)
            return eps, x0

        @lib.no_grad()
        def ddpm_sample(self, y, noises, guidance):
            img = noises[0]
            for i, t in enumerate(reversed(range(0, self.T, 12))):
                bt = lib.full((img.shape[0],), t, device=img.device, dtype=lib.long)
                _, x0 = self.predictions(img, bt, y, guidance)
                mean = extract(self.coef1, bt, img.shape) * x0 + extract(self.coef2, bt, img.shape) * img
                img = mean + (0.5 * extract(self.post_logvar, bt, img.shape)).exp() * (noises[i + 1] if t else 0.)
            return (img + 1) * 0.5

        @lib.inference_mode()
        def ddim_sample(self, y, noises, steps=4, eta=0.5):
            times = list(reversed(lib.linspace(-1, self.T - 1, steps=steps + 1).int().tolist()))
            img = noises[0]
            for i, (time, time_next) in enumerate(zip(times[:-1], times[1:])):
                eps, x0 = self.predictions(img, lib.full((img.shape[0],), time, dtype=lib.long), y)
                if time_next < 0:
                    return x0
                alpha, alpha_next = self.alphas_cumprod[time], self.alphas_cumprod[time_next]
                sigma = eta * ((1 - alpha / alpha_next) * (1 - alpha_next) / (1 - alpha)).sqrt()
                c = (1 - alpha_next - sigma ** 2).sqrt()
                img = x0 * alpha_next.sqrt() + c * eps + sigma * noises[i + 1]
            return img

        def forward(self, x0, y, t, noise, drop):
            y = lib.where(drop < 0.25, lib.full_like(y, self.model.num_classes), y)  # label dropout for CFG
            x = extract(self.sqrt_ac, t, x0.shape) * x0 + extract(self.sqrt_1m_ac, t, x0.shape) * noise
            out = self.model(x, t, y)
            target = noise if self.objective == "pred_noise" else \
                extract(self.sqrt_ac, t, x0.shape) * noise - extract(self.sqrt_1m_ac, t, x0.shape) * x0
            loss = F.mse_loss(out, target, reduction="none")
            loss = loss.mean(dim=list(range(1, loss.ndim))) * extract(self.loss_weight, t, (loss.shape[0],))
            return loss.mean()

    return UNet, Diffusion


class _EMA:
    def __init__(self, lib, model, decay):
        self.lib, self.decay, self.shadow = lib, decay, copy.deepcopy(model).eval().requires_grad_(False)

    def update(self, model, step):
        with self.lib.no_grad():
            if step % 2:
                for ema_p, p in zip(self.shadow.parameters(), model.parameters()):
                    ema_p.lerp_(p, 1 - self.decay)
            else:
                msd = model.state_dict()
                for k, v in self.shadow.state_dict().items():
                    if v.dtype.is_floating_point:
                        v.mul_(self.decay).add_(msd[k].detach(), alpha=1 - self.decay)


@pytest.mark.parametrize("objective", ["pred_noise", "pred_v"])
def test_ddpm_training_and_sampling(objective):
    """Schedules as buffers, the weighted loss and its gradients, AdamW with a warmup LambdaLR, gradient clipping,
    EMA by ``lerp_`` and ``mul_/add_``, and DDPM (with classifier-free guidance) and DDIM sampling from the same
    noises."""
    B, T = 4, 50
    x0, noise = np.random.default_rng(0).uniform(-1, 1, (B, 3, 8, 8)).astype(np.float32), _arr((B, 3, 8, 8), 1)
    t, y = np.array([0, 13, 30, 49]), np.array([0, 1, 2, 1])
    drop = np.array([0.1, 0.5, 0.9, 0.3], np.float32)
    noises = _arr((6, B, 3, 8, 8), 2)
    res, sd = {}, None
    for lib in (torch, ember):
        UNet, Diffusion = _build(lib)
        lib.manual_seed(0)
        net = UNet()
        sd = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()} if lib is torch else sd
        net.load_state_dict({k: lib.tensor(v) for k, v in sd.items()})
        net.eval()  # dropout off, as its masks come from each library's own generator
        diff = Diffusion(net, T, objective)
        args = [lib.tensor(a) for a in (x0, y, t, noise, drop)]
        opt = lib.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.01)
        sched = lib.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 3))
        ema, out = _EMA(lib, net, 0.9), []
        for step in range(3):
            opt.zero_grad(set_to_none=True)
            loss = diff(*args)
            loss.backward()
            out += [loss, lib.nn.utils.clip_grad_norm_(net.parameters(), 1.0)]
            if step == 0:
                out += [p.grad.clone() for p in net.parameters()]
            opt.step()
            sched.step()
            ema.update(net, step)
        out += list(net.parameters()) + list(ema.shadow.parameters()) + [diff.loss_weight, diff.post_logvar]
        diff.model = ema.shadow
        nz = [lib.tensor(a) for a in noises]
        out += [diff.ddpm_sample(args[1], nz, guidance=1.5), diff.ddim_sample(args[1], nz)]
        res[lib.__name__] = out
    for i, (e, t_) in enumerate(zip(res["ember"], res["torch"])):
        # DDIM's steps amplify a last-bit difference of the weights about 1e4 times (torch's own, fused or not)
        _close(e, t_, rtol=2e-4, atol=2e-4 if i == len(res["torch"]) - 1 else 2e-5)


def test_sinusoidal_embeddings_and_scheduler_idioms():
    """guided-diffusion's timestep_embedding (odd dim padded), diffusers' flip_sin_to_cos, scaled-linear betas,
    add_noise with unsqueezed per-sample coefficients, zero-terminal-SNR rescaling and dynamic thresholding."""
    res = []
    for lib in (torch, ember):
        ts = lib.tensor([0, 1, 500, 999])
        half = 3
        freqs = lib.exp(-math.log(10000) * lib.arange(start=0, end=half, dtype=lib.float32) / half)
        emb = lib.cat([lib.cos(ts[:, None].float() * freqs[None]), lib.sin(ts[:, None].float() * freqs[None])], -1)
        emb = lib.cat([emb, lib.zeros_like(emb[:, :1])], dim=-1)
        flipped = lib.nn.functional.pad(lib.cat([emb[:, half:], emb[:, :half]], dim=-1), (0, 1, 0, 0))
        betas = lib.linspace(0.00085 ** 0.5, 0.012 ** 0.5, 1000, dtype=lib.float32) ** 2
        ac = lib.cumprod(1.0 - betas, dim=0)
        sqrt_ap = (ac[ts] ** 0.5).flatten()
        while len(sqrt_ap.shape) < 4:
            sqrt_ap = sqrt_ap.unsqueeze(-1)
        noisy = sqrt_ap * lib.tensor(_arr((4, 3, 2, 2))) + (1 - ac[ts]).sqrt()[:, None, None, None]
        abs_ = ac.sqrt()
        a0, aT = abs_[0].clone(), abs_[-1].clone()
        abs_ -= aT
        abs_ *= a0 / (a0 - aT)
        sample = lib.tensor(_arr((4, 3, 2, 2), 1, 3.0))
        flat = sample.reshape(4, 3 * np.prod((2, 2)))
        s = lib.clamp(lib.quantile(flat.abs(), 0.9, dim=1), min=1, max=2.5).unsqueeze(1)
        thresholded = (lib.clamp(flat, -s, s) / s).reshape(4, 3, 2, 2)
        res.append([emb, flipped, noisy, abs_ ** 2, thresholded])
    for e, t in zip(*res):
        _close(e, t, rtol=1e-5, atol=1e-6)


# -- mixed and half precision ------------------------------------------------------------------------------------
def test_autocast_group_norm_after_conv_keeps_the_half_dtype():
    """Under CPU autocast a conv's bfloat16 output goes through GroupNorm with float32 parameters: the result stays
    bfloat16 (the affine computed in float32 and rounded once) and the parameters get float32 gradients."""
    res = []
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.GroupNorm(4, 8), torch.nn.SiLU(),
                             torch.nn.Conv2d(8, 3, 1))
    torch.nn.init.normal_(tm[1].weight)
    torch.nn.init.normal_(tm[1].bias)
    em = _sync(ember.nn.Sequential(ember.nn.Conv2d(3, 8, 3, padding=1), ember.nn.GroupNorm(4, 8), ember.nn.SiLU(),
                                   ember.nn.Conv2d(8, 3, 1)), tm)
    for lib, m in ((ember, em), (torch, tm)):
        x = lib.tensor(_arr((2, 3, 8, 8)))
        with lib.autocast("cpu", dtype=lib.bfloat16):
            h = m[1](m[0](x))
            out = m[3](m[2](h))
            loss = lib.nn.functional.mse_loss(out, x)
        loss.backward()
        res.append([h, out, loss, m[1].weight.grad, m[1].bias.grad, m[0].bias.grad])
    assert res[0][0].dtype == ember.bfloat16
    for e, t in zip(*res):
        _close(e, t, rtol=1e-2, atol=1e-3)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("norm", ["group", "batch", "instance", "layer"])
def test_norms_of_half_inputs_with_float32_parameters(dtype, norm):
    """The normalizations accept float32 parameters for a half input: the result in the input's dtype, the weight
    and bias gradients float32 (not rounded through the half dtype)."""
    x, w, b, g = _arr((4, 8, 6, 6)), _arr(8, 1), _arr(8, 2), _arr((4, 8, 6, 6), 3)
    res = []
    for lib in (ember, torch):
        F = lib.nn.functional
        xt = lib.tensor(x).to(getattr(lib, dtype)).requires_grad_()
        wt, bt = lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)
        y = {"group": lambda: F.group_norm(xt, 4, wt, bt), "batch": lambda: F.batch_norm(xt, None, None, wt, bt, True),
             "instance": lambda: F.instance_norm(xt, weight=wt, bias=bt),
             "layer": lambda: F.layer_norm(xt.transpose(1, 3), (8,), wt, bt)}[norm]()
        y.backward(lib.tensor(g).to(y.dtype).reshape(y.shape))
        res.append([y, xt.grad, wt.grad, bt.grad])
    tol = 1e-2 if dtype == "bfloat16" else 2e-3
    _close(res[0][0], res[1][0], rtol=tol, atol=tol)
    _close(res[0][1], res[1][1], rtol=tol, atol=tol)
    if norm != "layer":  # torch rounds layer_norm's parameter gradients through the half dtype
        _close(res[0][2], res[1][2], rtol=1e-5, atol=1e-4)
        _close(res[0][3], res[1][3], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("x_dtype,p_dtype,b_dtype", [
    ("float32", "bfloat16", "bfloat16"), ("float64", "float32", "float32"), ("bfloat16", "float16", "float16"),
    ("bfloat16", "float32", "bfloat16"), ("float32", "float32", "float64"), ("float16", "float64", "float64"),
])
@pytest.mark.parametrize("norm", ["group", "layer", "batch"])
def test_norm_parameter_dtype_errors(x_dtype, p_dtype, b_dtype, norm):
    """Any other mix of dtypes is refused, with torch's exception type."""
    def call(lib):
        F = lib.nn.functional
        x, w, b = lib.ones(2, 4, 3, dtype=getattr(lib, x_dtype)), lib.ones(4), lib.zeros(4)
        w, b = w.to(getattr(lib, p_dtype)), b.to(getattr(lib, b_dtype))
        {"group": lambda: F.group_norm(x, 2, w, b), "layer": lambda: F.layer_norm(x.transpose(1, 2), (4,), w, b),
         "batch": lambda: F.batch_norm(x, None, None, w, b, True)}[norm]()
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)):
        call(ember)


@pytest.mark.filterwarnings("ignore:Mismatch dtype")
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_rms_norm_default_eps_of_halves_is_float32s(dtype):
    """With no ``eps``, a half input uses float32's machine epsilon (the dtype it is computed in): small
    activations are not crushed by bfloat16's epsilon."""
    x = np.full((2, 4), 0.01, np.float32)
    x[1] = _arr(4)
    res = [lib.nn.RMSNorm(4).to(getattr(lib, dtype))(lib.tensor(x).to(getattr(lib, dtype))) for lib in (ember, torch)]
    _close(*res, rtol=0, atol=0)
    res = [lib.nn.functional.rms_norm(lib.tensor(x), (4,), lib.ones(4).to(getattr(lib, dtype)))
           for lib in (ember, torch)]
    _close(*res, rtol=1e-6, atol=1e-6)  # a float32 input keeps its dtype whatever the weight's


def test_half_bias_gradients_accumulate_in_float32():
    """Bias gradients of a bfloat16 model (a conv's, and a broadcast add's) are sums accumulated in float32 and
    rounded once, as torch's."""
    x, w, g = _arr((4, 16, 8, 8)), _arr((8, 16, 3, 3), 1, 0.1), _arr((4, 8, 8, 8), 2)
    res = []
    for lib in (ember, torch):
        cb, ab = (lib.zeros(8, dtype=lib.bfloat16, requires_grad=True) for _ in range(2))
        ct = lib.zeros(16, 8, 4, 4, dtype=lib.bfloat16)
        ctb = lib.zeros(8, dtype=lib.bfloat16, requires_grad=True)
        xb = lib.tensor(x).bfloat16()
        y = lib.nn.functional.conv2d(xb, lib.tensor(w).bfloat16(), cb, padding=1)
        (y + ab[:, None, None]).backward(lib.tensor(g).bfloat16())
        lib.nn.functional.conv_transpose2d(xb, ct, ctb, stride=2, padding=1).sum().backward()
        res.append([cb.grad, ab.grad, ctb.grad])
    for e, t in zip(*res):
        _close(e, t, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=0.1)), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01, maximize=True)),
    ("Adam", dict(lr=1e-2, weight_decay=0.1)), ("Adam", dict(lr=1e-2, amsgrad=True)),
    ("AdamW", dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-6)),
])
def test_half_precision_optimizer_steps(dtype, name, kwargs):
    """A model trained in pure bfloat16/float16: each of torch's in-place update ops computes in float32 and rounds
    once (an ``add`` taking its ``alpha`` in the parameter's dtype), so the steps agree bit for bit but for the
    rare float32 tie that torch's fused multiply-adds round the other way."""
    w = _arr((32, 32))
    res = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.tensor(w).to(getattr(lib, dtype)))
        opt = getattr(lib.optim, name)([p], **kwargs)
        for i in range(4):
            p.grad = lib.tensor(_arr((32, 32), i + 1)).to(p.dtype)
            opt.step()
        res.append([p] + [v for v in opt.state[p].values() if v.ndim])
    ulp = 2.0 ** (-7 if dtype == "bfloat16" else -10)
    for e, t in zip(*res):
        e, t = e.detach().float().numpy(), t.detach().float().numpy()
        same = (e == t) | np.isnan(e) & np.isnan(t)  # float16 Adam's eps of 1e-8 underflows: NaNs, in both
        assert (~same).sum() <= 2  # rounding each op to the half dtype: 5-10% differ
        np.testing.assert_allclose(e, t, rtol=2 * ulp, atol=0)


# -- EDM's attention with its own backward ------------------------------------------------------------------------
def _attention_op(lib):
    class AttentionOp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, q, k):
            w = lib.einsum("ncq,nck->nqk", q.to(lib.float32), (k / np.sqrt(k.shape[1])).to(lib.float32))
            w = w.softmax(dim=2).to(q.dtype)
            ctx.save_for_backward(q, k, w)
            return w

        @staticmethod
        def backward(ctx, dw):
            q, k, w = ctx.saved_tensors
            db = lib._softmax_backward_data(grad_output=dw.to(lib.float32), output=w.to(lib.float32), dim=2,
                                            input_dtype=lib.float32)
            dq = lib.einsum("nck,nqk->ncq", k.to(lib.float32), db).to(q.dtype) / np.sqrt(k.shape[1])
            dk = lib.einsum("ncq,nqk->nck", q.to(lib.float32), db).to(k.dtype) / np.sqrt(k.shape[1])
            return dq, dk
    return AttentionOp


def test_edm_attention_op_with_softmax_backward_data():
    res = []
    for lib in (ember, torch):
        q, k = lib.tensor(_arr((4, 8, 16)), requires_grad=True), lib.tensor(_arr((4, 8, 16), 1), requires_grad=True)
        w = _attention_op(lib).apply(q, k)
        a = lib.einsum("nqk,nck->ncq", w, lib.tensor(_arr((4, 8, 16), 2)))
        a.backward(lib.tensor(_arr((4, 8, 16), 3)))
        y, g = lib.tensor(_arr((3, 5), 4)).log_softmax(-1), lib.tensor(_arr((3, 5), 5), requires_grad=True)
        lg = lib._log_softmax_backward_data(g, y, -1, lib.float32)
        res.append([a, q.grad, k.grad, lg, lib.autograd.grad(lg.square().sum(), g)[0]])
    for e, t in zip(*res):
        _close(e, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda lib, g, y: lib._softmax_backward_data(g.double(), y, 1, lib.float32),
    lambda lib, g, y: lib._softmax_backward_data(g, y, 1, lib.float16),
    lambda lib, g, y: lib._softmax_backward_data(g, y, 2, lib.float32),
    lambda lib, g, y: lib._softmax_backward_data(g, y[:2], 1, lib.float32),
])
def test_softmax_backward_data_errors(call):
    with pytest.raises(Exception) as want:
        call(torch, torch.ones(3, 4), torch.ones(3, 4).softmax(1))
    with pytest.raises(type(want.value)):
        call(ember, ember.ones(3, 4), ember.ones(3, 4).softmax(1))


# -- numpy interplay and layouts ------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:__array_wrap__:DeprecationWarning")  # torch's
def test_numpy_ufuncs_on_tensors_give_tensors():
    """latent-diffusion's make_ddim_sampling_parameters mixes a tensor and NumPy arrays under ``np.sqrt``; its
    sampler registers ``np.sqrt(1. - ddim_alphas)``, a tensor."""
    res = []
    for lib in (ember, torch):
        alphacums = lib.cumprod(1 - lib.linspace(0.00085, 0.012, 100, dtype=lib.float64), 0).float()
        ddim_timesteps = np.arange(0, 100, 10) + 1
        alphas = alphacums[ddim_timesteps]
        alphas_prev = np.asarray([alphacums[0]] + alphacums[ddim_timesteps[:-1]].tolist())
        sigmas = 0.5 * np.sqrt((1 - alphas_prev) / (1 - alphas) * (1 - alphas / alphas_prev))
        m = lib.nn.Module()
        m.register_buffer("ddim_sqrt_one_minus_alphas", np.sqrt(1. - alphas))
        res.append([sigmas, m.ddim_sqrt_one_minus_alphas, np.maximum(alphas, 0.5), np.greater(alphas, 0.5)])
    for e, t in zip(*res):
        assert isinstance(e, ember.Tensor)
        _close(e, t, rtol=1e-6, atol=1e-7)


def test_results_of_permuted_inputs_are_contiguous():
    """Reductions, softmax, the normalizations and cat lay out their results contiguously (channels_last kept by
    batch_norm and cat) whatever their inputs' layouts, so ``.view`` works on them as in torch."""
    x = _arr((4, 6, 5))
    calls = [lambda lib, t: t.sum(-1), lambda lib, t: t.mean(1, keepdim=True), lambda lib, t: t.amax(0),
             lambda lib, t: t.std(-1), lambda lib, t: t.norm(dim=-1), lambda lib, t: (t > 0).any(-1),
             lambda lib, t: t.softmax(-1), lambda lib, t: t.log_softmax(1),
             lambda lib, t: lib.nn.functional.layer_norm(t, (4,)), lambda lib, t: lib.nn.functional.rms_norm(t, (4,)),
             lambda lib, t: lib.nn.functional.instance_norm(t),
             lambda lib, t: lib.nn.functional.batch_norm(t, None, None, training=True),
             lambda lib, t: lib.cat([t, t], 1), lambda lib, t: lib.stack([t, t], 1)]
    for call in calls:
        e, t = (call(lib, lib.tensor(x).transpose(0, 2)) for lib in (ember, torch))
        assert e.stride() == t.stride()
        _close(e.view(-1), t.view(-1), rtol=1e-5, atol=1e-6)
    for lib in (ember, torch):  # channels_last stays channels_last
        cl = lib.tensor(_arr((2, 4, 3, 3))).to(memory_format=lib.channels_last)
        assert lib.cat([cl, cl], 1).is_contiguous(memory_format=lib.channels_last)
        assert lib.nn.functional.batch_norm(cl, None, None, training=True).is_contiguous(
            memory_format=lib.channels_last)
        assert lib.nn.functional.layer_norm(cl, (3,)).is_contiguous()
