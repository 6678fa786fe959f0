"""Reinforcement-learning and graph-neural-network idioms (CleanRL, Spinning Up, A3C, PyG-free GNNs) against torch."""
import numpy as np
import pytest
import torch

import ember


def _close(e, t, rtol=1e-5, atol=1e-6):
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def _pair(seed=0):
    rng = np.random.default_rng(seed)
    t = torch.nn.Linear(4, 3)
    e = ember.nn.Linear(4, 3)
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return e, t, rng.standard_normal((5, 4)).astype(np.float32)


def test_grad_alias_shares_local_gradients():
    """A3C's ensure_shared_grads: ``shared_param._grad = param.grad`` sets ``.grad`` for the optimizer."""
    shared_e, shared_t, x = _pair()
    local_e, local_t, _ = _pair()
    local_e.load_state_dict(shared_e.state_dict())
    local_t.load_state_dict(shared_t.state_dict())
    opt_e, opt_t = ember.optim.SGD(shared_e.parameters(), lr=0.5), torch.optim.SGD(shared_t.parameters(), lr=0.5)
    local_e(ember.tensor(x)).pow(2).mean().backward()
    local_t(torch.tensor(x)).pow(2).mean().backward()
    for (le, se), (lt, st) in zip(zip(local_e.parameters(), shared_e.parameters()),
                                  zip(local_t.parameters(), shared_t.parameters())):
        se._grad = le.grad
        st._grad = lt.grad
        assert se.grad is le.grad and se._grad is le.grad
    opt_e.step()
    opt_t.step()
    for pe, pt in zip(shared_e.parameters(), shared_t.parameters()):
        _close(pe, pt)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "NAdam", "RAdam", "Adamax", "Adagrad", "ASGD", "RMSprop",
                                  "Adadelta", "Rprop", "Adafactor"])
def test_singleton_step_state(name):
    """SharedAdam/SharedRMSprop set ``state['step'] = zeros(1)`` (shareable); torch steps with it."""
    e, t, x = _pair(1)
    opt_e, opt_t = getattr(ember.optim, name)(e.parameters(), lr=0.1), getattr(torch.optim, name)(t.parameters(), lr=0.1)
    for it in range(3):
        for model, opt, lib in ((e, opt_e, ember), (t, opt_t, torch)):
            opt.zero_grad()
            model(lib.tensor(x)).pow(2).mean().backward()
            if it == 1:
                for p in model.parameters():
                    opt.state[p]["step"] = lib.zeros(1)
            opt.step()
    for pe, pt in zip(e.parameters(), t.parameters()):
        _close(pe, pt, rtol=1e-4, atol=1e-5)
        _close(opt_e.state[pe]["step"], opt_t.state[pt]["step"])


def _graph(rng, n=9, e=30):
    src, dst = rng.integers(0, n, e), rng.integers(0, n, e)
    keep = src != dst
    return np.stack([src[keep], dst[keep]]).astype(np.int64), rng.standard_normal((n, 4)).astype(np.float32)


def _gat_scatter_softmax(lib, ei, x, att):
    """GCN normalisation by bincount + index_add_ messages, then GAT attention by a scatter softmax."""
    n = x.shape[0]
    src, dst = ei
    deg = lib.bincount(dst, minlength=n).float().clamp(min=1)
    h = lib.zeros_like(x).index_add_(0, dst, x.index_select(0, src) * deg[dst].pow(-0.5).unsqueeze(-1))
    e = lib.nn.functional.leaky_relu((h[src] * att).sum(-1) + (h[dst] * att).sum(-1), 0.2)
    emax = lib.zeros(n).scatter_reduce(0, dst, e, reduce="amax", include_self=False)
    w = (e - emax[dst]).exp()
    alpha = w / lib.zeros(n).scatter_add(0, dst, w)[dst]
    out = lib.zeros(n, x.shape[1]).index_add_(0, dst, h[src] * alpha.unsqueeze(-1))
    mean = lib.zeros(n, x.shape[1]).scatter_reduce(0, dst.view(-1, 1).expand(-1, x.shape[1]), h[src], "mean",
                                                    include_self=False)
    return out + mean


def test_gnn_message_passing_gradients():
    rng = np.random.default_rng(2)
    ei, x = _graph(rng)
    att = rng.standard_normal(4).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    outs = []
    for lib in (ember, torch):
        xs, a = lib.tensor(x, requires_grad=True), lib.tensor(att, requires_grad=True)
        out = _gat_scatter_softmax(lib, lib.tensor(ei), xs, a)
        (out * lib.tensor(g)).sum().backward()
        outs.append((out, xs.grad, a.grad))
    for e, t in zip(*outs):
        _close(e, t, rtol=1e-4, atol=1e-5)


def _ppo_loss(lib, logits, logstd, mean_in, actions, old_logp, adv, values, returns, old_values):
    D = lib.distributions
    cat = D.Categorical(logits=logits)
    normal = D.Normal(mean_in, logstd.expand_as(mean_in).exp())
    logp = cat.log_prob(actions) + normal.log_prob(mean_in.detach() * 0.5).sum(-1)
    ratio = (logp - old_logp).exp()
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg = lib.max(-adv * ratio, -adv * lib.clamp(ratio, 0.8, 1.2)).mean()
    v_clipped = old_values + lib.clamp(values - old_values, -0.2, 0.2)
    v = 0.5 * lib.max((values - returns) ** 2, (v_clipped - returns) ** 2).mean()
    return pg + 0.5 * v - 0.01 * (cat.entropy() + normal.entropy().sum(-1)).mean()


def test_ppo_clipped_loss_gradients():
    rng = np.random.default_rng(3)
    arrays = dict(logits=rng.standard_normal((8, 3)), logstd=np.zeros((1, 2)), mean_in=rng.standard_normal((8, 2)),
                  actions=rng.integers(0, 3, 8), old_logp=-np.abs(rng.standard_normal(8)) - 2,
                  adv=rng.standard_normal(8), values=rng.standard_normal(8), returns=rng.standard_normal(8),
                  old_values=rng.standard_normal(8))
    grads = []
    for lib in (ember, torch):
        ts = {k: lib.tensor(v if v.dtype.kind == "i" else v.astype(np.float32),
                            requires_grad=k in ("logits", "logstd", "mean_in", "values")) for k, v in arrays.items()}
        loss = _ppo_loss(lib, **ts)
        loss.backward()
        grads.append([loss] + [ts[k].grad for k in ("logits", "logstd", "mean_in", "values")])
    for e, t in zip(*grads):
        _close(e, t, rtol=1e-4, atol=1e-6)
