"""torch.nn.utils model surgery against torch: LoRA-style parametrizations merged with remove_parametrizations,
hook-based and parametrized weight/spectral norm trained with copied power-iteration vectors, pruning with custom
methods and identity-preserving removal, gradient clipping helpers, flat parameter vectors, conv/linear-BN fusion,
functional_call with tied weights and strict, and the top-level ``norm_except_dim``/``_weight_norm``."""
import copy
import warnings

import numpy as np
import pytest
import torch
import torch.nn.utils.parametrize  # noqa: F401  (lazily imported submodules in torch)
import torch.nn.utils.prune  # noqa: F401

import ember

LIBS = (ember, torch)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _rand(shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _fill(lib, m, seed=0):
    """Copies NumPy-drawn values into every floating parameter of ``m``."""
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(_rand(tuple(p.shape), seed + i, 0.5)))
    return m


X = _rand((3, 5), 5)


def _lora_model(lib):
    """minLoRA: a low-rank delta registered as a parametrization on every Linear/Embedding weight."""
    nn, P = lib.nn, lib.nn.utils.parametrize

    class LoRA(nn.Module):
        def __init__(self, fan_in, fan_out, fan_in_fan_out=False, rank=2, alpha=1):
            super().__init__()
            self.swap = (lambda x: (x[1], x[0])) if fan_in_fan_out else (lambda x: x)
            self.lora_A = nn.Parameter(lib.tensor(_rand(self.swap((rank, fan_in)), 11)))
            self.lora_B = nn.Parameter(lib.zeros(self.swap((fan_out, rank))))
            self.scaling = alpha / rank
            self.register_buffer("lora_dropout_mask", lib.ones(self.swap((1, fan_in))))

        def forward(self, X):
            return X + lib.matmul(*self.swap((self.lora_B, self.lora_A))).view(X.shape) * self.scaling

    def add_lora(layer):
        if type(layer) is nn.Linear:
            P.register_parametrization(layer, "weight", LoRA(layer.weight.shape[1], layer.weight.shape[0]))
        elif type(layer) is nn.Embedding:
            P.register_parametrization(layer, "weight", LoRA(*layer.weight.shape, fan_in_fan_out=True))

    model = _fill(lib, nn.Sequential(nn.Embedding(7, 5), nn.Linear(5, 4), nn.GELU(), nn.Linear(4, 3)))
    model.apply(add_lora)
    return model


def test_lora_parametrization_train_and_merge():
    """Only the LoRA factors train (AdamW); the LoRA state_dict subset, outputs and gradients match, and merging
    with ``leave_parametrized=True`` keeps the adapted weights as plain parameters."""
    idx = [[1, 2, 6], [0, 3, 3]]
    res = []
    for lib in LIBS:
        model = _lora_model(lib)
        lora = [p for n, p in model.named_parameters() if "lora_" in n]
        for n, p in model.named_parameters():
            p.requires_grad_("lora_" in n)
        opt = lib.optim.AdamW(lora, lr=0.05)
        for _ in range(3):
            opt.zero_grad()
            model(lib.tensor(idx)).pow(2).mean().backward()
            opt.step()
        out = [sorted(model.state_dict()), model(lib.tensor(idx))] + [p.grad for p in lora]
        for m in model.modules():
            if lib.nn.utils.parametrize.is_parametrized(m):
                lib.nn.utils.parametrize.remove_parametrizations(m, "weight", leave_parametrized=True)
        out += [model(lib.tensor(idx)), sorted(model.state_dict()), type(model[1]).__name__,
                type(model[1].weight).__name__]
        res.append(out)
    e, t = res
    assert e[0] == t[0] and "1.parametrizations.weight.0.lora_A" in e[0]
    for a, b in zip(e[1:-3], t[1:-3]):
        _close(a, b, rtol=1e-5, atol=1e-6)
    _close(e[-4], t[-4], rtol=1e-5, atol=1e-6)
    assert e[-3:] == t[-3:] == [sorted(["0.weight", "1.weight", "1.bias", "3.weight", "3.bias"]), "Linear",
                                "Parameter"]


@pytest.mark.parametrize("new_api", [False, True])
def test_spectral_norm_training_with_copied_vectors(new_api):
    """Spectral norm on a Linear trained with SGD: the u/v power-iteration vectors are copied, so weights,
    vectors, gradients and the eval-mode output match step by step; the state_dict keys match too."""
    res = []
    for lib in LIBS:
        m = _fill(lib, lib.nn.Linear(5, 4))
        if new_api:
            lib.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=2)
            u, v = m.parametrizations.weight[0]._u, m.parametrizations.weight[0]._v
            orig = m.parametrizations.weight.original
        else:
            lib.nn.utils.spectral_norm(m, n_power_iterations=2)
            u, v, orig = m.weight_u, m.weight_v, m.weight_orig
        with lib.no_grad():
            u.copy_(lib.tensor(np.linspace(-1, 1, 4, dtype=np.float32)))
            v.copy_(lib.tensor(np.linspace(-1, 2, 5, dtype=np.float32)))
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        out = []
        for _ in range(3):
            opt.zero_grad()
            m(lib.tensor(X)).pow(2).mean().backward()
            out.append(orig.grad.clone())
            opt.step()
        m.eval()
        out += [orig, u, v, m(lib.tensor(X)), lib.linalg.matrix_norm(m.weight, 2)]
        res.append((sorted(m.state_dict()), out))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1], res[1][1]):
        _close(a, b, rtol=1e-5, atol=1e-6)


def test_hook_weight_norm_on_recurrent_weight():
    """The hook-based ``weight_norm`` on an LSTM's recurrent weight: g/v gradients, state_dict keys, a deep copy
    refused (the computed weight is a graph node); ``remove_weight_norm`` restores a plain Parameter."""
    xs = _rand((4, 2, 3), 2)
    res = []
    for lib in LIBS:
        m = _fill(lib, lib.nn.LSTM(3, 4))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            lib.nn.utils.weight_norm(m, "weight_hh_l0")
        y, _ = m(lib.tensor(xs))
        y.pow(2).sum().backward()
        with pytest.raises(RuntimeError, match="graph leaves"):  # the computed weight is not a leaf
            copy.deepcopy(m)
        out = [y, m.weight_hh_l0_g.grad, m.weight_hh_l0_v.grad]
        keys = sorted(m.state_dict())
        lib.nn.utils.remove_weight_norm(m, "weight_hh_l0")
        out.append(m.weight_hh_l0)
        res.append((keys, sorted(m.state_dict()), type(m.weight_hh_l0).__name__, out))
    assert res[0][:3] == res[1][:3] and "weight_hh_l0_g" in res[0][0]
    for a, b in zip(res[0][3], res[1][3]):
        _close(a, b)


def test_orthogonal_rectangular_with_copied_base():
    """A wide orthogonal Linear: its random completion ``base`` is copied, so weights and the gradients of
    ``original`` match for all three maps after a few SGD steps, and the weight stays orthonormal."""
    res = []
    for lib in LIBS:
        out = []
        for kind in ("matrix_exp", "cayley", "householder"):
            m = _fill(lib, lib.nn.Linear(5, 4))
            lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=kind)
            q = np.linalg.qr(_rand((5, 5), 3))[0]
            with lib.no_grad():
                m.parametrizations.weight[0].base.copy_(lib.tensor(q.astype(np.float32)))
            opt = lib.optim.SGD(m.parameters(), lr=0.1)
            for _ in range(2):
                opt.zero_grad()
                m(lib.tensor(X)).pow(2).sum().backward()
                opt.step()
            w = m.weight
            out += [w, m.parametrizations.weight.original.grad, w @ w.mT]
        res.append(out)
    for a, b in zip(*res):
        _close(a, b, rtol=1e-4, atol=1e-5)
    _close(res[0][2], torch.eye(4), atol=1e-5)


def test_remove_keeps_parameter_identity():
    """``prune.remove`` and ``remove_parametrizations`` hand back the very Parameter an optimizer holds, so
    training goes on; the hook-based weight norm removal makes a new Parameter."""
    res = []
    for lib in LIBS:
        P, prune = lib.nn.utils.parametrize, lib.nn.utils.prune

        class Scale(lib.nn.Module):
            def forward(self, x):
                return 2 * x

            def right_inverse(self, x):
                return x / 2

        a, b = _fill(lib, lib.nn.Linear(5, 4)), _fill(lib, lib.nn.Linear(5, 4), 3)
        prune.l1_unstructured(a, "weight", 0.3)
        w_orig = a.weight_orig
        prune.remove(a, "weight")
        P.register_parametrization(b, "weight", Scale())
        b_orig = b.parametrizations.weight.original
        P.remove_parametrizations(b, "weight")
        res.append([a.weight is w_orig, b.weight is b_orig, a.weight.requires_grad, _np(a.weight), _np(b.weight),
                    _np(b_orig)])
    assert res[0][:3] == res[1][:3] == [True, True, True]
    for a, b in zip(res[0][3:], res[1][3:]):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_custom_pruning_method_and_importance_scores():
    """The tutorial's custom ``BasePruningMethod`` (every other entry) stacked with L1 pruning in a
    PruningContainer; structured and global pruning driven by ``importance_scores``."""
    res = []
    for lib in LIBS:
        prune = lib.nn.utils.prune

        class EveryOther(prune.BasePruningMethod):
            PRUNING_TYPE = "unstructured"

            def compute_mask(self, t, default_mask):
                mask = default_mask.clone()
                mask.view(-1)[::2] = 0
                return mask

        m = _fill(lib, lib.nn.Linear(5, 4))
        EveryOther.apply(m, "bias")
        prune.l1_unstructured(m, "bias", 0.25)
        hook = next(iter(m._forward_pre_hooks.values()))
        out = [_np(m.bias_mask).tolist(), _np(m.bias).tolist(), type(hook).__name__,
               [type(h).__name__ for h in hook._pruning_methods], [n for n, _ in m.named_buffers()]]
        scores = lib.tensor(np.arange(20, dtype=np.float32).reshape(4, 5))
        prune.ln_structured(m, "weight", 0.5, 2, dim=1, importance_scores=scores)
        out.append(_np(m.weight_mask).tolist())
        g = _fill(lib, lib.nn.Linear(5, 4), 7)
        prune.global_unstructured([(g, "weight"), (g, "bias")], prune.L1Unstructured, amount=6,
                                  importance_scores={(g, "weight"): -g.weight.detach(), (g, "bias"): g.bias.detach()})
        out += [_np(g.weight_mask).tolist(), _np(g.bias_mask).tolist()]
        with pytest.raises(TypeError):
            prune.global_unstructured([(g, "weight")], prune.RandomStructured, amount=0.5)
        with pytest.raises(IndexError):
            prune.ln_structured(_fill(lib, lib.nn.Linear(5, 4)), "weight", amount=0.5, n=2, dim=2)
        res.append(out)
    assert res[0] == res[1]


@pytest.mark.parametrize("total", ["tensor", "float"])
def test_get_total_norm_and_clip_grads_with_norm(total):
    """The two-step clipping API (norm of mixed float32/float16 gradients, then scaling); a float total norm is
    refused with a TypeError, as in torch."""
    res = []
    for lib in LIBS:
        n = _fill(lib, lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.Tanh(), lib.nn.Linear(4, 3)))
        n[2].half()
        n[2](n[1](n[0](lib.tensor(X))).half()).float().pow(2).sum().backward()
        grads = [p.grad for p in n.parameters()]
        tn = lib.nn.utils.get_total_norm(grads, norm_type=2.0, foreach=True)
        if total == "float":
            with pytest.raises(TypeError):
                lib.nn.utils.clip_grads_with_norm_(n.parameters(), 0.7, float(tn))
            continue
        lib.nn.utils.clip_grads_with_norm_(n.parameters(), 0.7, tn)
        res.append([tn, lib.nn.utils.get_total_norm(grads, "inf")] + grads)
    for a, b in zip(*res):
        _close(a, b, rtol=2e-3, atol=1e-4)


def test_vector_to_parameters_shares_the_vector():
    """``vector_to_parameters`` makes each parameter a view of the vector (later writes to it show through) and
    takes its dtype; a vector of the wrong rank or type, or a non-contiguous parameter, is refused."""
    res = []
    for lib in LIBS:
        m = _fill(lib, lib.nn.Linear(5, 4))
        v = lib.nn.utils.parameters_to_vector(m.parameters()) * 2
        lib.nn.utils.vector_to_parameters(v, m.parameters())
        before = _np(m.weight).copy()
        v[:5] = 7.0
        lib.nn.utils.vector_to_parameters(v.double(), m.parameters())
        res.append([before, _np(m.weight), str(m.bias.dtype)])
        with pytest.raises(RuntimeError, match="view size is not compatible"):
            lib.nn.utils.parameters_to_vector([m.weight.mT, m.bias])  # flattened with view(-1)
        with pytest.raises(RuntimeError, match="is invalid for input of size"):
            lib.nn.utils.vector_to_parameters(lib.ones(24).view(4, 6), m.parameters())
        with pytest.raises(TypeError):
            lib.nn.utils.vector_to_parameters([1.0, 2.0], m.parameters())
    assert res[0][2].endswith("float64") and res[1][2].endswith("float64")
    for i in (0, 1):
        np.testing.assert_allclose(res[0][i], res[1][i], rtol=1e-6)


@pytest.mark.parametrize("case", ["grouped", "affine_false", "double", "conv3d", "convT", "reflect"])
def test_fuse_conv_bn_eval_variants(case):
    """Folding eval BatchNorm into grouped, strided transposed, 3-d, float64 and reflect-padded convolutions (BN
    without affine parameters too) gives the outputs of conv followed by BN, as torch's fused layer does."""
    res = []
    for lib in LIBS:
        nn = lib.nn
        conv, bn, shape, tr = {
            "grouped": (nn.Conv2d(4, 6, 3, groups=2), nn.BatchNorm2d(6), (2, 4, 5, 5), False),
            "affine_false": (nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4, affine=False), (2, 3, 5, 5), False),
            "double": (nn.Conv2d(3, 4, 3).double(), nn.BatchNorm2d(4).double(), (2, 3, 5, 5), False),
            "conv3d": (nn.Conv3d(2, 3, 2), nn.BatchNorm3d(3), (1, 2, 4, 4, 4), False),
            "convT": (nn.ConvTranspose2d(4, 6, 3, stride=2), nn.BatchNorm2d(6), (2, 4, 5, 5), True),
            "reflect": (nn.Conv1d(3, 4, 3, padding=1, padding_mode="reflect"), nn.BatchNorm1d(4), (2, 3, 7), False),
        }[case]
        _fill(lib, conv)
        _fill(lib, bn, 20)
        with lib.no_grad():
            bn.running_mean.copy_(lib.tensor(_rand(bn.num_features, 30)))
            bn.running_var.copy_(lib.tensor(np.abs(_rand(bn.num_features, 31)) + 0.5))
        conv.eval()
        bn.eval()
        x = lib.tensor(_rand(shape, 1)).to(conv.weight.dtype)
        ref = bn(conv(x))
        fused = nn.utils.fuse_conv_bn_eval(conv, bn, transpose=tr)
        res.append([ref, fused(x), fused.weight, fused.bias])
        assert fused is not conv and type(fused.bias).__name__ == "Parameter"
    for a, b in zip(*res):
        _close(a, b, rtol=1e-5, atol=1e-5)
    _close(res[0][0], res[0][1], rtol=1e-4, atol=1e-4)


def test_fuse_linear_bn_and_errors():
    """``fuse_linear_bn_eval``/``fuse_linear_bn_weights`` values, BN of width 1 broadcast, and the errors for a
    training module, a width mismatch and BN without running statistics."""
    res = []
    for lib in LIBS:
        lin, bn = _fill(lib, lib.nn.Linear(5, 4)), _fill(lib, lib.nn.BatchNorm1d(4), 9)
        with lib.no_grad():
            bn.running_mean.copy_(lib.tensor(_rand(4, 30)))
            bn.running_var.copy_(lib.tensor(np.abs(_rand(4, 31)) + 0.5))
        lin.eval()
        bn.eval()
        fused = lib.nn.utils.fuse_linear_bn_eval(lin, bn)
        w, b = lib.nn.utils.fuse_linear_bn_weights(lin.weight, lin.bias, bn.running_mean, bn.running_var, bn.eps,
                                                   bn.weight, bn.bias)
        one = lib.nn.BatchNorm1d(1).eval()
        res.append([bn(lin(lib.tensor(X))), fused(lib.tensor(X)), w, b,
                    lib.nn.utils.fuse_linear_bn_eval(lin, one)(lib.tensor(X))])
        with pytest.raises(AssertionError):
            lib.nn.utils.fuse_linear_bn_eval(lin.train(), bn)
        with pytest.raises(AssertionError):
            lib.nn.utils.fuse_linear_bn_eval(lin.eval(), lib.nn.BatchNorm1d(3).eval())
        with pytest.raises(AssertionError):
            lib.nn.utils.fuse_conv_bn_eval(lib.nn.Conv2d(3, 4, 3).eval(),
                                           lib.nn.BatchNorm2d(4, track_running_stats=False).eval())
    for a, b in zip(*res):
        _close(a, b, rtol=1e-5, atol=1e-6)


def test_functional_call_tied_strict_and_parametrized():
    """``torch.func.functional_call``: a value for either name of tied weights feeds both, different values for
    them raise, ``strict`` lists missing keys, a parametrized module takes its ``original`` tensors (gradient
    through weight norm), and the module's own tensors are restored after an error."""
    idx = [0, 3, 5]
    W = _rand((6, 4), 0)
    res = []
    for lib in LIBS:
        class Tied(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = lib.nn.Embedding(6, 4)
                self.out = lib.nn.Linear(4, 6, bias=False)
                self.out.weight = self.emb.weight

            def forward(self, x):
                return self.out(self.emb(x))

        m = Tied()
        w = lib.tensor(W, requires_grad=True)
        y = lib.func.functional_call(m, {"out.weight": w}, (lib.tensor(idx),))
        (gw,) = lib.autograd.grad(y.pow(2).sum(), w)
        with pytest.raises(ValueError):
            lib.func.functional_call(m, {"emb.weight": w, "out.weight": w * 2}, (lib.tensor(idx),))
        seq = _fill(lib, lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.BatchNorm1d(4)))
        with pytest.raises(RuntimeError, match="Missing key"):
            lib.func.functional_call(seq, dict(seq.named_parameters()), (lib.tensor(X),), strict=True)
        p = _fill(lib, lib.nn.Linear(5, 4))
        lib.nn.utils.parametrizations.weight_norm(p)
        g = lib.tensor(_rand((4, 1), 4), requires_grad=True)
        yp = lib.func.functional_call(p, {"parametrizations.weight.original0": g}, lib.tensor(X))
        (gg,) = lib.autograd.grad(yp.pow(2).sum(), g)
        weight = seq[0].weight
        with pytest.raises(RuntimeError):
            lib.func.functional_call(seq, {"0.weight": lib.ones(4, 4)}, (lib.tensor(X),))
        assert seq[0].weight is weight
        res.append([y, gw, yp, gg])
    for a, b in zip(*res):
        _close(a, b)


def test_norm_except_dim_and_weight_norm_toplevel():
    """``torch.norm_except_dim(v, pow, dim)`` (dim -1: the norm of all of ``v``) and ``torch._weight_norm(v, g,
    dim)``, as old weight-norm code calls them: values and gradients; a float ``pow`` is a TypeError."""
    w = np.random.default_rng(0).standard_normal((4, 3, 2))
    go = np.random.default_rng(1).standard_normal((4, 3, 2))
    res = []
    for lib in LIBS:
        v = lib.tensor(w, requires_grad=True)
        g = lib.tensor(w[:1, :, :1] + 1, requires_grad=True)
        y = lib._weight_norm(v, g, 1)
        y.backward(lib.tensor(go))
        res.append([y, v.grad, g.grad, lib.norm_except_dim(v, 2, 0), lib.norm_except_dim(v, 1, -2),
                    lib.norm_except_dim(v, 3, 2), lib.norm_except_dim(v, 2, -1), lib.norm_except_dim(v),
                    lib._weight_norm(v, g.sum(), -1)])
        with pytest.raises(TypeError):
            lib.norm_except_dim(v, 2.0, 0)
        with pytest.raises(IndexError):
            lib._weight_norm(v, g, 5)
    for a, b in zip(*res):
        _close(a, b, rtol=1e-10, atol=1e-12)
