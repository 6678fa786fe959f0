"""GAN, VAE and normalizing-flow idioms (DCGAN, WGAN-GP, StyleGAN-lite layers with R1, VAEs, RealNVP, Glow, MADE)
run under ember and torch on the same weights and inputs: losses, gradients (double backward included) and
optimizer steps."""
import math

import numpy as np
import pytest
import torch

import ember


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def _all_close(es, ts, rtol=1e-5, atol=1e-6):
    assert len(es) == len(ts)
    for e, t in zip(es, ts):
        _close(e, t, rtol, atol)


def _copy(me, mt):
    """torch's state (parameters, buffers, spectral-norm vectors) into the ember module."""
    me.load_state_dict({k: ember.tensor(v.detach().numpy().copy()) for k, v in mt.state_dict().items()})


def _arr(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _both(make):
    """The same module built in both libraries, ember's holding torch's weights."""
    torch.manual_seed(0)
    mt, me = make(torch), make(ember)
    _copy(me, mt)
    return me, mt


# -- GANs --------------------------------------------------------------------------------------------------------------
def _dcgan(lib):
    nn = lib.nn
    G = nn.Sequential(
        nn.ConvTranspose2d(8, 16, 4, 1, 0, bias=False), nn.BatchNorm2d(16), nn.ReLU(True),
        nn.ConvTranspose2d(16, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(True),
        nn.ConvTranspose2d(8, 3, 4, 2, 1, bias=False), nn.Tanh())
    D = nn.Sequential(
        nn.Conv2d(3, 4, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(4, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(8, 1, 4, 1, 0, bias=False), nn.Sigmoid())

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)
    G.apply(weights_init)
    D.apply(weights_init)
    return nn.ModuleDict({"G": G, "D": D})


def test_dcgan_training_steps():
    """The DCGAN tutorial loop: BCELoss on real/fake labels, ``fake.detach()`` for D, Adam with betas=(0.5, 0.999),
    BatchNorm running statistics, and sampling in eval mode."""
    me, mt = _both(_dcgan)
    real, noises = _arr((6, 3, 16, 16), 0), [_arr((6, 8, 1, 1), i + 1) for i in range(2)]
    res = []
    for lib, m in ((ember, me), (torch, mt)):
        G, D = m["G"], m["D"]
        crit = lib.nn.BCELoss()
        oD = lib.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
        oG = lib.optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
        out = []
        for noise in noises:
            D.zero_grad()
            label = lib.full((6,), 1.0, dtype=lib.float)
            err_real = crit(D(lib.from_numpy(real)).view(-1), label)
            err_real.backward()
            fake = G(lib.from_numpy(noise))
            label.fill_(0.0)
            err_fake = crit(D(fake.detach()).view(-1), label)
            err_fake.backward()
            oD.step()
            G.zero_grad()
            label.fill_(1.0)
            err_g = crit(D(fake).view(-1), label)
            err_g.backward()
            oG.step()
            out += [err_real, err_fake, err_g, fake]
        G.eval()
        with lib.no_grad():
            out.append(G(lib.from_numpy(noises[0])))
        res.append(out + list(m.parameters()) + list(m.buffers()))
    _all_close(*res, rtol=1e-4, atol=1e-5)


def _wgan(lib):
    nn = lib.nn
    D = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.LeakyReLU(0.2), nn.InstanceNorm2d(8, affine=True),
                      nn.Conv2d(8, 16, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.Linear(16 * 4 * 4, 1))
    G = nn.Sequential(nn.Linear(8, 16 * 4 * 4), nn.Unflatten(1, (16, 4, 4)), nn.Upsample(scale_factor=2),
                      nn.Conv2d(16, 12, 3, 1, 1), nn.PixelShuffle(2), nn.Tanh())
    return nn.ModuleDict({"G": G, "D": D})


def _gradient_penalty(lib, D, real, fake, alpha):
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interp = D(interp)
    grads = lib.autograd.grad(outputs=d_interp, inputs=interp, grad_outputs=lib.ones_like(d_interp),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]
    grads = grads.view(grads.size(0), -1)
    return ((grads.norm(2, dim=1) - 1) ** 2).mean()


def test_wgan_gp_double_backward_and_optimizer_steps():
    """WGAN-GP: the penalty's double backward into D's weights, ``requires_grad_(False)`` on D for the G step,
    Adam(0.5, 0.999) for D and RMSprop for G."""
    me, mt = _both(_wgan)
    real = _arr((4, 3, 16, 16), 0)
    zs = [_arr((4, 8), i + 1) for i in range(2)]
    alphas = [np.random.default_rng(9 + i).random((4, 1, 1, 1)).astype(np.float32) for i in range(2)]
    res = []
    for lib, m in ((ember, me), (torch, mt)):
        G, D = m["G"], m["D"]
        oD = lib.optim.Adam(D.parameters(), lr=1e-3, betas=(0.5, 0.999))
        oG = lib.optim.RMSprop(G.parameters(), lr=5e-4)
        out = []
        for z, a in zip(zs, alphas):
            D.requires_grad_(True)
            oD.zero_grad()
            r, fake = lib.from_numpy(real), G(lib.from_numpy(z)).detach()
            gp = _gradient_penalty(lib, D, r, fake, lib.from_numpy(a))
            loss_d = D(fake).mean() - D(r).mean() + 10 * gp
            loss_d.backward()
            out += [gp, loss_d] + [p.grad.clone() for p in D.parameters()]
            oD.step()
            D.requires_grad_(False)
            oG.zero_grad()
            loss_g = -D(G(lib.from_numpy(z))).mean()
            loss_g.backward()  # D's gradients stay those of its own step
            oG.step()
            out += [loss_g] + [p.grad for p in D.parameters()]
        res.append(out + list(m.parameters()))
    _all_close(*res, rtol=1e-4, atol=1e-5)


def _stylegan(lib):
    nn, F = lib.nn, lib.nn.functional

    class EqualLinear(nn.Module):
        def __init__(self, i, o, bias_init=0.0, lr_mul=1.0):
            super().__init__()
            self.weight = nn.Parameter(lib.randn(o, i).div_(lr_mul))
            self.bias = nn.Parameter(lib.zeros(o).fill_(bias_init))
            self.scale, self.lr_mul = (1 / math.sqrt(i)) * lr_mul, lr_mul

        def forward(self, x):
            return F.linear(x, self.weight * self.scale, bias=self.bias * self.lr_mul)

    class ModulatedConv2d(nn.Module):
        def __init__(self, cin, cout, k, style_dim):
            super().__init__()
            self.weight = nn.Parameter(lib.randn(1, cout, cin, k, k))
            self.scale, self.pad, self.cout, self.k = 1 / math.sqrt(cin * k * k), k // 2, cout, k
            self.modulation = EqualLinear(style_dim, cin, bias_init=1)

        def forward(self, x, style):
            b, c, h, w = x.shape
            style = self.modulation(style).view(b, 1, c, 1, 1)
            weight = self.scale * self.weight * style
            demod = lib.rsqrt(weight.pow(2).sum([2, 3, 4]) + 1e-8)
            weight = (weight * demod.view(b, self.cout, 1, 1, 1)).view(b * self.cout, c, self.k, self.k)
            out = F.conv2d(x.view(1, b * c, h, w), weight, padding=self.pad, groups=b)
            return out.view(b, self.cout, *out.shape[2:])

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.mapping = nn.Sequential(EqualLinear(8, 8, lr_mul=0.01), nn.LeakyReLU(0.2),
                                         EqualLinear(8, 8, lr_mul=0.01))
            self.conv = ModulatedConv2d(4, 6, 3, 8)
            self.noise_weight = nn.Parameter(lib.zeros(1))
            self.bias = nn.Parameter(lib.zeros(1, 6, 1, 1))

        def forward(self, x, z, noise):
            out = self.conv(x, self.mapping(z)) + self.noise_weight * noise
            return F.leaky_relu(out + self.bias, negative_slope=0.2) * math.sqrt(2)

    class Disc(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.utils.spectral_norm(nn.Conv2d(6, 8, 3, 1, 1))
            self.c2 = nn.utils.parametrizations.spectral_norm(nn.Conv2d(8, 8, 4, 2, 1))
            self.fc = nn.utils.weight_norm(nn.Linear(8 * 4 * 4, 1))
            self.fc2 = nn.utils.parametrizations.weight_norm(nn.Linear(8 * 4 * 4, 1))

        def forward(self, x):
            x = F.leaky_relu(self.c1(x), 0.2)
            x = F.leaky_relu(self.c2(x), 0.2).flatten(1)
            return self.fc(x) + self.fc2(x)
    return nn.ModuleDict({"G": Block(), "D": Disc()})


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_stylegan_lite_r1_hinge_and_spectral_norm():
    """Equalized learning rate, modulated/demodulated conv as a grouped conv (``groups=batch``), noise injection,
    both spectral_norm and weight_norm flavours, softplus and hinge losses with R1 on real images; the power
    iteration's vectors are compared too."""
    me, mt = _both(_stylegan)
    x0, z, noise, real = _arr((3, 4, 8, 8), 0), _arr((3, 8), 1), _arr((3, 1, 8, 8), 2), _arr((3, 6, 8, 8), 3)
    res = []
    for lib, m in ((ember, me), (torch, mt)):
        F = lib.nn.functional
        G, D = m["G"], m["D"]
        oG = lib.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.99), eps=1e-8)
        oD = lib.optim.Adam(D.parameters(), lr=2e-3, betas=(0.0, 0.99))
        out = []
        for _ in range(2):
            G.requires_grad_(False)
            D.requires_grad_(True)
            fake = G(lib.from_numpy(x0), lib.from_numpy(z), lib.from_numpy(noise))
            r = lib.from_numpy(real).requires_grad_()
            real_pred, fake_pred = D(r), D(fake)
            d_loss = F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()
            hinge = F.relu(1 - real_pred).mean() + F.relu(1 + fake_pred).mean()
            grad_real, = lib.autograd.grad(outputs=real_pred.sum(), inputs=r, create_graph=True)
            r1 = grad_real.pow(2).reshape(grad_real.shape[0], -1).sum(1).mean()
            oD.zero_grad()
            (d_loss + hinge + 5 * r1).backward()
            oD.step()
            G.requires_grad_(True)
            D.requires_grad_(False)
            g_loss = F.softplus(-D(G(lib.from_numpy(x0), lib.from_numpy(z), lib.from_numpy(noise)))).mean()
            oG.zero_grad()
            g_loss.backward()
            out += [d_loss, hinge, r1, g_loss, fake] + [p.grad.clone() for p in G.parameters()]
            oG.step()
        D.eval()
        out.append(D(lib.from_numpy(real)))
        res.append(out + list(m.parameters()) + list(D.state_dict().values()))
    _all_close(*res, rtol=1e-4, atol=1e-5)


def _r1_disc(lib):
    nn, F = lib.nn, lib.nn.functional

    class FusedLeakyReLU(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.bias = nn.Parameter(lib.zeros(c))

        def forward(self, x):
            return F.leaky_relu(x + self.bias.view(1, -1, 1, 1), negative_slope=0.2) * math.sqrt(2)
    D = nn.Sequential(nn.Conv2d(3, 4, 3, 1, 1, bias=False), FusedLeakyReLU(4), nn.MaxPool2d(2),
                      nn.Conv2d(4, 4, 3, 2, 1), nn.ReLU(), nn.Conv2d(4, 4, 1), nn.Hardtanh(-2, 2), nn.Flatten(),
                      nn.Linear(16, 1))
    with torch.no_grad() if lib is torch else ember.no_grad():
        D[1].bias.fill_(0.1)
    return D


def test_lazy_r1_step_gives_zero_gradients_through_piecewise_activations():
    """A lazy R1 step backpropagates the penalty alone: biases feeding a (leaky) relu, hardtanh or max-pool reach
    the double-backward graph only through those activations, and get a zero gradient (not None), which Adam's
    moments still use."""
    me, mt = _both(_r1_disc)
    reals = [_arr((4, 3, 8, 8), i) for i in range(4)]
    res, missing = [], []
    for lib, D in ((ember, me), (torch, mt)):
        opt = lib.optim.Adam(D.parameters(), lr=1e-2, betas=(0.0, 0.99))
        out = []
        for step, real in enumerate(reals):
            r = lib.from_numpy(real).requires_grad_()
            pred = D(r)
            opt.zero_grad()
            if step % 2 == 0:
                loss = lib.nn.functional.softplus(-pred).mean()
            else:
                grad_real, = lib.autograd.grad(pred.sum(), r, create_graph=True)
                loss = 5 * grad_real.pow(2).reshape(4, -1).sum(1).mean()
            loss.backward()
            missing.append([name for name, p in D.named_parameters() if p.grad is None])
            out += [loss] + [p.grad.clone() for p in D.parameters() if p.grad is not None]
            opt.step()
        res.append(out + list(D.parameters()))
    assert missing == [[], ["8.bias"], [], ["8.bias"]] * 2  # only the last bias is out of R1's graph
    _all_close(*res, rtol=1e-4, atol=1e-6)


_PIECEWISE = {
    "relu": lambda lib, x: lib.relu(x),
    "relu_inplace": lambda lib, x: lib.nn.functional.relu(x * 1, inplace=True),
    "leaky_relu": lambda lib, x: lib.nn.functional.leaky_relu(x, 0.2),
    "leaky_relu_inplace": lambda lib, x: lib.nn.LeakyReLU(0.2, inplace=True)(x * 1),
    "rrelu_eval": lambda lib, x: lib.nn.functional.rrelu(x),
    "hardtanh": lambda lib, x: lib.nn.functional.hardtanh(x, -0.5, 0.5),
    "relu6": lambda lib, x: lib.nn.functional.relu6(x * 4),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.1, 20.0),
    "hardshrink": lambda lib, x: lib.nn.functional.hardshrink(x),
    "softshrink": lambda lib, x: lib.nn.functional.softshrink(x),
    "max_pool2d": lambda lib, x: lib.nn.functional.max_pool2d(x.view(1, 2, 2, 3), (2, 1)),
    "max_pool1d_indices": lambda lib, x: lib.nn.functional.max_pool1d(x.view(1, 1, 12), 3, return_indices=True)[0],
    "adaptive_max_pool2d": lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x.view(1, 3, 2, 2), 1),
}


@pytest.mark.parametrize("dtype", ["float64", "float16"])
@pytest.mark.parametrize("name", sorted(_PIECEWISE))
def test_create_graph_reaches_the_input_of_piecewise_activations(name, dtype):
    """``grad(..., create_graph=True)`` through a piecewise-linear activation or a max-pool is a graph that holds
    the activation's input: its gradient w.r.t. ``x`` is zeros (not "unused"), as torch's."""
    xv = np.array([-1.2, 0.3, -0.2, 0.7, 2.0, -3.0, 0.05, 1.5, -0.6, 0.9, -2.2, 0.4])
    res = []
    for lib in (ember, torch):
        x = lib.tensor(xv, dtype=getattr(lib, dtype), requires_grad=True)
        y = _PIECEWISE[name](lib, x)
        g, = lib.autograd.grad(y, x, lib.ones_like(y), create_graph=True)
        assert g.requires_grad
        gg, = lib.autograd.grad((g * lib.arange(12.0).to(g.dtype)).sum(), x)
        res.append((g, gg))
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])


def _modified_leaky_input(lib, x):
    h = x * 2
    y = lib.nn.functional.leaky_relu(h, 0.2)
    h.mul_(2)
    return y


def _modified_relu_output(lib, x):
    y = lib.relu(x * 2)
    y.add_(1)
    return y


def _modified_pool_input(lib, x):
    h = x.view(1, 1, 3, 4) * 2
    y = lib.nn.functional.max_pool2d(h, 2)
    h.add_(1)
    return y


def _freed_relu(lib, x):
    y = lib.relu(x * 2)
    y.sum().backward()
    return y


@pytest.mark.parametrize("build", [_modified_leaky_input, _modified_relu_output, _modified_pool_input, _freed_relu])
def test_create_graph_checks_what_piecewise_activations_saved(build):
    """The double-backward graph uses what the op saved (leaky_relu and max-pool their input, relu its output):
    an in-place write to it, or a graph already freed, raises torch's RuntimeError."""
    for lib in (torch, ember):
        x = lib.tensor(np.linspace(-1, 1, 12), requires_grad=True)
        y = build(lib, x)
        with pytest.raises(RuntimeError):
            lib.autograd.grad(y.sum(), x, create_graph=True)


# -- VAEs --------------------------------------------------------------------------------------------------------------
def _vaes(lib):
    nn, F = lib.nn, lib.nn.functional

    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc21, self.fc22 = nn.Linear(20, 16), nn.Linear(16, 4), nn.Linear(16, 4)
            self.fc3, self.fc4 = nn.Linear(4, 16), nn.Linear(16, 20)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def decode(self, z):
            return lib.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x, eps):
            mu, logvar = self.encode(x.view(-1, 20))
            z = mu + eps * lib.exp(0.5 * logvar)
            return self.decode(z), mu, logvar

    class ConvVAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = nn.Sequential(nn.Conv2d(1, 4, 4, 2, 1, bias=False), nn.BatchNorm2d(4), nn.LeakyReLU(),
                                     nn.Conv2d(4, 8, 4, 2, 1), nn.ReLU(), nn.Flatten())
            self.mu, self.logvar = nn.Linear(8 * 4 * 4, 3), nn.Linear(8 * 4 * 4, 3)
            self.dec_in = nn.Linear(3, 8 * 4 * 4)
            self.dec = nn.Sequential(nn.ConvTranspose2d(8, 4, 4, 2, 1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                                     nn.ConvTranspose2d(4, 1, 4, 2, 1))

        def forward(self, x, eps):
            h = self.enc(x)
            mu, logvar = self.mu(h), self.logvar(h)
            z = mu + eps * lib.exp(0.5 * logvar)
            return self.dec(self.dec_in(z).view(-1, 8, 4, 4)), mu, logvar
    return nn.ModuleDict({"mlp": VAE(), "conv": ConvVAE()})


def test_vae_and_beta_vae_training_steps():
    """The VAE example (reparameterization with a fixed eps, ``binary_cross_entropy(reduction="sum")`` + KL,
    beta=4) and a conv VAE with logits, BatchNorm and AMSGrad with weight decay."""
    me, mt = _both(_vaes)
    x, img = np.random.default_rng(0).random((5, 20)).astype(np.float32), \
        np.random.default_rng(1).random((5, 1, 16, 16)).astype(np.float32)
    eps, eps2 = [_arr((5, 4), 2 + i) for i in range(2)], [_arr((5, 3), 5 + i) for i in range(2)]
    res = []
    for lib, m in ((ember, me), (torch, mt)):
        F = lib.nn.functional
        vae, cvae = m["mlp"], m["conv"]
        o1 = lib.optim.Adam(vae.parameters(), lr=1e-3)
        o2 = lib.optim.Adam(cvae.parameters(), lr=1e-3, weight_decay=1e-4, amsgrad=True)
        out = []
        for e1, e2 in zip(eps, eps2):
            o1.zero_grad()
            recon, mu, logvar = vae(lib.from_numpy(x), lib.from_numpy(e1))
            bce = F.binary_cross_entropy(recon, lib.from_numpy(x).view(-1, 20), reduction="sum")
            kld = -0.5 * lib.sum(1 + logvar - mu.pow(2) - logvar.exp())
            (bce + 4.0 * kld).backward()
            o1.step()
            o2.zero_grad()
            rec, mu, logvar = cvae(lib.from_numpy(img), lib.from_numpy(e2))
            rl = F.binary_cross_entropy_with_logits(rec, lib.from_numpy(img), reduction="sum") / img.shape[0]
            kl = (-0.5 * (1 + logvar - mu ** 2 - logvar.exp()).sum(dim=1)).mean(dim=0)
            (rl + kl).backward()
            o2.step()
            out += [bce, kld, rl, kl, recon]
        cvae.eval()
        with lib.no_grad():
            out += [cvae(lib.from_numpy(img), lib.from_numpy(eps2[0]))[0], vae.decode(lib.from_numpy(eps[0]))]
        res.append(out + list(m.parameters()) + list(m.buffers()))
    _all_close(*res, rtol=1e-4, atol=1e-5)


def test_vae_distribution_terms():
    """KL and log-likelihood terms VAEs write with torch.distributions: Normal/Independent KL, a MixtureSameFamily
    prior, ContinuousBernoulli likelihood, an importance-weighted bound; values and gradients."""
    mu_np, lv_np, xs = _arr((5, 4), 0), _arr((5, 4), 1, 0.5), np.random.default_rng(2).random((5, 4))
    z_np = _arr((7, 5, 4), 3)
    res = []
    for lib in (ember, torch):
        D = lib.distributions
        mu, logvar = lib.tensor(mu_np, requires_grad=True), lib.tensor(lv_np, requires_grad=True)
        q = D.Independent(D.Normal(mu, lib.exp(0.5 * logvar)), 1)
        p = D.Independent(D.Normal(lib.zeros(5, 4), lib.ones(5, 4)), 1)
        kl = D.kl_divergence(q, p)
        mix = D.MixtureSameFamily(D.Categorical(logits=lib.tensor([0.1, -0.3, 0.5])),
                                  D.Independent(D.Normal(lib.tensor(_arr((3, 4), 4)), lib.ones(3, 4) * 0.7), 1))
        z = lib.from_numpy(z_np)
        log_w = mix.log_prob(z) - q.log_prob(z)
        iwae = (lib.logsumexp(log_w, dim=0) - math.log(7)).mean()
        cb = D.ContinuousBernoulli(logits=mu).log_prob(lib.tensor(xs, dtype=lib.float32)).sum(-1)
        loss = kl.sum() - iwae - cb.sum()
        res.append([kl, log_w, iwae, cb] + list(lib.autograd.grad(loss, [mu, logvar])))
    _all_close(*res, rtol=1e-5, atol=1e-5)


# -- normalizing flows -------------------------------------------------------------------------------------------------
def _realnvp(lib):
    nn, D = lib.nn, lib.distributions

    class Coupling(nn.Module):
        def __init__(self, dim, mask):
            super().__init__()
            self.register_buffer("mask", mask)
            self.s = nn.Sequential(nn.Linear(dim, 16), nn.LeakyReLU(), nn.Linear(16, dim), nn.Tanh())
            self.t = nn.Sequential(nn.Linear(dim, 16), nn.LeakyReLU(), nn.Linear(16, dim))
            self.scale = nn.Parameter(lib.ones(1, dim))

        def forward(self, x):
            xm = x * self.mask
            s = self.s(xm) * (1 - self.mask) * self.scale
            t = self.t(xm) * (1 - self.mask)
            return xm + (1 - self.mask) * (x * lib.exp(s) + t), s.sum(dim=1)

        def inverse(self, y):
            ym = y * self.mask
            s = self.s(ym) * (1 - self.mask) * self.scale
            t = self.t(ym) * (1 - self.mask)
            return ym + (1 - self.mask) * (y - t) * lib.exp(-s)

    class RealNVP(nn.Module):
        def __init__(self, dim=4, n=4):
            super().__init__()
            masks = [(lib.arange(dim) % 2 == (i % 2)).float() for i in range(n)]
            self.layers = nn.ModuleList([Coupling(dim, m) for m in masks])
            self.register_buffer("loc", lib.zeros(dim))
            self.register_buffer("cov", lib.eye(dim))

        def forward(self, x):
            log_det = lib.zeros(x.shape[0])
            for layer in self.layers:
                x, ld = layer(x)
                log_det = log_det + ld
            return x, log_det

        def log_prob(self, x):
            z, log_det = self(x)
            return D.MultivariateNormal(self.loc, self.cov).log_prob(z) + log_det

        def inverse(self, z):
            for layer in reversed(self.layers):
                z = layer.inverse(z)
            return z
    return RealNVP()


def test_realnvp_coupling_flow():
    """RealNVP with alternating masks held as buffers, tanh-bounded scales and a MultivariateNormal prior:
    log-likelihood, gradients, Adam(0.5, 0.999) steps and the inverse."""
    me, mt = _both(_realnvp)
    x = _arr((8, 4), 0)
    res = []
    for lib, f in ((ember, me), (torch, mt)):
        opt = lib.optim.Adam(f.parameters(), lr=1e-3, betas=(0.5, 0.999))
        out = []
        for _ in range(2):
            opt.zero_grad()
            lp = f.log_prob(lib.from_numpy(x))
            (-lp.mean()).backward()
            out += [lp] + [p.grad.clone() for p in f.parameters()]
            opt.step()
        z, _ = f(lib.from_numpy(x))
        back = f.inverse(z)
        np.testing.assert_allclose(back.detach().numpy(), x, atol=1e-5)
        res.append(out + [z] + list(f.parameters()))
    _all_close(*res, rtol=1e-4, atol=1e-5)


def _glow(lib, w0):
    nn, F = lib.nn, lib.nn.functional

    class ActNorm(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.loc = nn.Parameter(lib.zeros(1, c, 1, 1))
            self.scale = nn.Parameter(lib.ones(1, c, 1, 1))
            self.register_buffer("initialized", lib.tensor(0, dtype=lib.uint8))

        def initialize(self, x):
            with lib.no_grad():
                flatten = x.permute(1, 0, 2, 3).contiguous().view(x.shape[1], -1)
                mean = flatten.mean(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
                std = flatten.std(1).unsqueeze(1).unsqueeze(2).unsqueeze(3).permute(1, 0, 2, 3)
                self.loc.data.copy_(-mean)
                self.scale.data.copy_(1 / (std + 1e-6))

        def forward(self, x):
            if self.initialized.item() == 0:
                self.initialize(x)
                self.initialized.fill_(1)
            logdet = x.shape[2] * x.shape[3] * lib.sum(lib.log(lib.abs(self.scale)))
            return self.scale * (x + self.loc), logdet

    class InvConv2d(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lib.tensor(w0).unsqueeze(2).unsqueeze(3))

        def forward(self, x):
            logdet = x.shape[2] * x.shape[3] * lib.slogdet(self.weight.squeeze().double())[1].float()
            return F.conv2d(x, self.weight), logdet

        def reverse(self, out):
            return F.conv2d(out, self.weight.squeeze().inverse().unsqueeze(2).unsqueeze(3))

    class InvConv2dLU(nn.Module):
        def __init__(self):
            super().__init__()
            LU, pivots = lib.linalg.lu_factor(lib.tensor(w0))
            w_p, w_l, w_u = lib.lu_unpack(LU, pivots)
            w_s = lib.diag(w_u)
            w_u = lib.triu(w_u, 1)
            u_mask = lib.triu(lib.ones_like(w_u), 1)
            self.register_buffer("w_p", w_p)
            self.register_buffer("u_mask", u_mask)
            self.register_buffer("l_mask", u_mask.T)
            self.register_buffer("s_sign", lib.sign(w_s))
            self.register_buffer("l_eye", lib.eye(u_mask.shape[0]))
            self.w_l, self.w_s, self.w_u = nn.Parameter(w_l), nn.Parameter(lib.log(lib.abs(w_s))), nn.Parameter(w_u)

        def forward(self, x):
            weight = self.w_p @ (self.w_l * self.l_mask + self.l_eye) @ (
                (self.w_u * self.u_mask) + lib.diag(self.s_sign * lib.exp(self.w_s)))
            return F.conv2d(x, weight.unsqueeze(2).unsqueeze(3)), x.shape[2] * x.shape[3] * lib.sum(self.w_s)

    class Flow(nn.Module):
        def __init__(self):
            super().__init__()
            self.actnorm, self.invconv, self.invconv_lu = ActNorm(4), InvConv2d(), InvConv2dLU()
            self.net = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1))

        def forward(self, x):
            x, ld1 = self.actnorm(x)
            x, ld2 = self.invconv(x)
            x, ld3 = self.invconv_lu(x)
            a, b = x.chunk(2, 1)
            log_s, t = self.net(a).chunk(2, 1)
            s = F.sigmoid(log_s + 2)
            b = (b + t) * s
            ld4 = lib.sum(lib.log(s).view(x.shape[0], -1), 1)
            return lib.cat([a, b], 1), ld1 + ld2 + ld3 + ld4
    return Flow()


def test_glow_actnorm_invertible_conv_and_lu():
    """Glow: ActNorm's data-dependent init on the first batch, the invertible 1x1 conv's log-determinant by slogdet
    (and its inverse), the LU-parametrized variant built with lu_factor/lu_unpack, an affine coupling; bits per
    dim, gradients and SGD steps."""
    w0 = np.linalg.qr(_arr((4, 4), 7))[0].astype(np.float32)
    me, mt = _glow(ember, w0), _glow(torch, w0)
    _copy(me, mt)
    x = _arr((5, 4, 6, 6), 0, 2.0) + 1
    res = []
    for lib, f in ((ember, me), (torch, mt)):
        opt = lib.optim.SGD(f.parameters(), lr=0.1, momentum=0.9)
        out = []
        for _ in range(2):
            opt.zero_grad()
            z, logdet = f(lib.from_numpy(x))
            log_p = (-0.5 * z ** 2 - 0.5 * math.log(2 * math.pi)).view(5, -1).sum(1)
            loss = -(log_p + logdet).mean() / (4 * 36 * math.log(2))
            loss.backward()
            out += [z, logdet, loss] + [p.grad.clone() for p in f.parameters()]
            opt.step()
        y, _ = f.invconv(lib.from_numpy(x))
        np.testing.assert_allclose(f.invconv.reverse(y).detach().numpy(), x, atol=1e-4)
        res.append(out + list(f.state_dict().values()))
    assert me.actnorm.initialized.dtype == ember.uint8
    _all_close(*res, rtol=1e-4, atol=1e-5)


def _made(lib):
    nn, F = lib.nn, lib.nn.functional

    class MaskedLinear(nn.Linear):
        def __init__(self, i, o):
            super().__init__(i, o)
            self.register_buffer("mask", lib.ones(o, i))

        def set_mask(self, mask):
            self.mask.data.copy_(lib.from_numpy(mask.astype(np.uint8).T))

        def forward(self, x):
            return F.linear(x, self.mask * self.weight, self.bias)

    m_in, m_h = np.arange(4), np.array([0, 1, 2, 0, 1, 2, 1, 0])
    l1, l2 = MaskedLinear(4, 8), MaskedLinear(8, 8)
    l1.set_mask(m_in[:, None] <= m_h[None, :])
    l2.set_mask(m_h[:, None] < np.concatenate([m_in] * 2)[None, :])
    return nn.Sequential(l1, nn.ReLU(), l2)


def test_made_masked_autoregressive_flow_as_transformed_distribution():
    """A MAF layer from MADE masks (uint8 buffers promoted in ``mask * weight``) as a custom Transform inside a
    TransformedDistribution over an Independent Normal: log_prob, its gradients, and the autoregressive Jacobian
    (zero above the diagonal)."""
    me, mt = _both(_made)
    x_np = _arr((6, 4), 0)
    res = []
    for lib, net in ((ember, me), (torch, mt)):
        D = lib.distributions

        class MAF(D.transforms.Transform):
            domain = D.constraints.real_vector
            codomain = D.constraints.real_vector
            bijective = True

            def _call(self, x):
                raise NotImplementedError  # sampling would loop over dimensions

            def _inverse(self, y):
                mu, alpha = net(y).chunk(2, dim=1)
                return (y - mu) * lib.exp(-alpha)

            def log_abs_det_jacobian(self, x, y):
                return net(y).chunk(2, dim=1)[1].sum(-1)

        base = D.Independent(D.Normal(lib.zeros(4), lib.ones(4)), 1)
        flow = D.TransformedDistribution(base, [MAF(), D.transforms.AffineTransform(0.5, 2.0, event_dim=1)])
        x = lib.from_numpy(x_np)
        lp = flow.log_prob(x)
        (-lp.mean()).backward()
        jac = lib.autograd.functional.jacobian(lambda v: net(v)[:4], x[0])
        assert float(jac.triu().abs().sum()) == 0.0
        res.append([lp, jac] + [p.grad for p in net.parameters()])
    _all_close(*res, rtol=1e-5, atol=1e-6)
