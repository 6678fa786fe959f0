"""Idioms of meta-learning and higher-order code (DARTS' flattened gradients, learn2learn's ``autograd.grad`` over
``module.parameters()``, influence-function Hessian-vector products) run with ember and with torch: values,
gradients and layouts agree."""
import numpy as np
import pytest
import torch

import ember

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3, 5, 5))


def _nets(build):
    torch.manual_seed(0)
    t = build(torch).double()
    e = build(ember).double()
    e.load_state_dict({k: ember.from_numpy(v.numpy().copy()) for k, v in t.state_dict().items()})
    return e, t


MODULES = {
    "conv2d": (lambda m: m.nn.Conv2d(3, 4, 3), lambda m: m.tensor(X)),
    "mha": (lambda m: m.nn.MultiheadAttention(5, 1, batch_first=True), lambda m: (m.tensor(X[:, 0]),) * 3),
    "lstm": (lambda m: m.nn.LSTM(5, 2, batch_first=True), lambda m: m.tensor(X[:, 0])),
    "bilinear": (lambda m: m.nn.Bilinear(5, 5, 2), lambda m: (m.tensor(X[:, 0, 0]), m.tensor(X[:, 1, 0]))),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_autograd_grad_of_parameters_flattens_with_view(name):
    """DARTS and influence functions write ``torch.cat([g.view(-1) for g in autograd.grad(loss, params)])``:
    torch's gradients are laid out as the parameters, so ``view`` must not raise."""
    build, inputs = MODULES[name]
    out = []
    for m, net in zip((ember, torch), _nets(build)):
        args = inputs(m)
        y = net(*args) if isinstance(args, tuple) else net(args)
        y = y[0] if isinstance(y, tuple) else y
        params = list(net.parameters())
        for create_graph in (False, True):
            grads = m.autograd.grad(y.pow(2).sum(), params, retain_graph=True, create_graph=create_graph)
            assert [g.stride() for g in grads] == [p.stride() for p in params]
        out.append(m.cat([g.view(-1) for g in grads]))
    np.testing.assert_allclose(out[0].detach().numpy(), out[1].detach().numpy(), rtol=1e-10, atol=1e-12)


def test_autograd_grad_accepts_parameter_generator():
    """learn2learn's MAML: ``autograd.grad(loss, learner.parameters(), create_graph=True)``, then fast weights put
    back into ``module._parameters``; the outer gradient flows through the inner step."""
    out = []
    for m, net in zip((ember, torch), _nets(lambda m: m.nn.Sequential(m.nn.Linear(5, 4), m.nn.Tanh(),
                                                                      m.nn.Linear(4, 2)))):
        x = m.tensor(X[:, 0, 0])
        loss = net(x).pow(2).mean()
        grads = m.autograd.grad(loss, net.parameters(), create_graph=True)
        params = list(net.parameters())
        fast = m.nn.Sequential(m.nn.Linear(5, 4), m.nn.Tanh(), m.nn.Linear(4, 2)).double()
        for (mod, name), p, g in zip([(fast[0], "weight"), (fast[0], "bias"), (fast[2], "weight"),
                                      (fast[2], "bias")], params, grads):
            mod._parameters[name] = p - 0.5 * g
        fast(x + 1).pow(2).mean().backward(inputs=iter(params))
        out.append([p.grad for p in params])
    for e, t in zip(*out):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10)
