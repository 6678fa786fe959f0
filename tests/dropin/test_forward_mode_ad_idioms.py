"""Forward-mode AD idioms (dual tensors through many ops, in-place writes on duals, tangent layout, func/functional
forward transforms) against torch, in float64."""
import numpy as np
import pytest
import torch

import ember

_RNG = np.random.default_rng(0)
X, V, Y, W = (_RNG.standard_normal(s) for s in [(3, 4), (3, 4), (4,), (4,)])
C, CV, CW = _RNG.standard_normal((2, 3, 6, 6)), _RNG.standard_normal((2, 3, 6, 6)), _RNG.standard_normal((4, 3, 3, 3))


def _flat(tree):
    if isinstance(tree, (list, tuple)):
        return [y for x in tree for y in _flat(x)]
    return list(tree.values()) if isinstance(tree, dict) else [tree]


def _same(fn, rtol=1e-10, atol=1e-12):
    """Runs ``fn(lib)`` for ember and torch and compares the (nested) results: tensors by shape, dtype and value."""
    got, want = _flat(fn(ember)), _flat(fn(torch))
    assert len(got) == len(want)
    for e, t in zip(got, want):
        if isinstance(t, torch.Tensor):
            assert tuple(e.shape) == tuple(t.shape) and str(e.dtype)[6:] == str(t.dtype)[6:]
            np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
        else:
            assert e == t


def _duals(f, x=X, v=V):
    """``[primal, tangent]`` of each output of ``f(lib, dual)``, the dual made of ``(x, v)``."""
    def run(lib):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(v))
            return [list(fw.unpack_dual(o)) for o in f(lib, d)]
    return run


OPS = {
    "elementwise": lambda L, x: [x.exp(), x.tanh(), L.relu(x), x.clamp(-0.5, 0.5), L.erf(x), L.atan2(x, x + 3),
                                 L.where(x > 0, x, x * 2), L.lerp(x, x * x, 0.3), L.maximum(x, x.flip(0)), x.floor()],
    "reductions": lambda L, x: [x.prod(0), x.amax(1), x.norm(), x.std(0), x.logsumexp(1), x.cumprod(0),
                                x.median(), x.topk(2, 1).values, x.logcumsumexp(1), x.cummax(1).values],
    "linalg": lambda L, x: [x @ x.T, L.einsum("ij,kj->ik", x, x), L.linalg.det(x[:, :3]), L.linalg.svdvals(x),
                            L.linalg.solve(x[:, :3] + 3 * L.eye(3, dtype=x.dtype), x), L.linalg.pinv(x),
                            L.linalg.cholesky(x @ x.T + L.eye(3, dtype=x.dtype)), L.linalg.eigh(x[:, :3] @ x[:, :3].T)[0]],
    "views": lambda L, x: [x[1:, ::2], x.unsqueeze(0).expand(2, 3, 4), x[[0, 2]], x.unfold(1, 2, 1), x.diagonal(),
                           x.gather(1, L.tensor([[0, 1], [2, 3], [1, 1]])), x.masked_fill(x > 0, 0.0), x.movedim(0, 1)],
    "activations": lambda L, x: [x.softmax(1), x.log_softmax(0), L.nn.functional.normalize(x, dim=1),
                                 L.nn.functional.glu(x, 1), L.nn.functional.gelu(x), L.nn.functional.mish(x),
                                 x.sigmoid().logit(), L.logit(x.sigmoid(), eps=0.2)],
    "norms": lambda L, x: [L.nn.functional.layer_norm(x, (4,)), L.nn.functional.batch_norm(x, None, None, training=True),
                           L.nn.functional.group_norm(x.reshape(3, 4, 1), 2), L.nn.functional.rms_norm(x, (4,))],
    "losses": lambda L, x: [L.nn.functional.cross_entropy(x, L.tensor([0, 3, 1]), label_smoothing=0.1),
                            L.nn.functional.smooth_l1_loss(x, x.detach() * 0.5),
                            L.nn.functional.kl_div(x.log_softmax(1), x.detach().softmax(1), reduction="batchmean"),
                            L.nn.functional.binary_cross_entropy_with_logits(x, (x.detach() > 0).double()),
                            L.nn.functional.cosine_similarity(x, x.flip(0))],
}


@pytest.mark.parametrize("family", sorted(OPS))
def test_dual_tangents_through_ops(family):
    """Primal and tangent of each op's output (logit and logcumsumexp: their tangents used to be NaN)."""
    _same(_duals(OPS[family]))


def test_dual_through_conv_pool_interpolate():
    F = lambda L: L.nn.functional  # noqa: E731
    _same(_duals(lambda L, d: [F(L).conv2d(d, L.tensor(CW), padding=1, stride=2), F(L).max_pool2d(d, 2),
                               F(L).avg_pool2d(d, 3, 1, 1), F(L).conv_transpose2d(d, L.tensor(CW).transpose(0, 1)),
                               F(L).interpolate(d, scale_factor=2, mode="bilinear")], C, CV))


def test_inplace_ops_on_a_dual_and_its_views():
    """In-place writes on the dual itself (it aliases the primal) and on views of a dual-derived tensor."""
    def run(lib):
        fw, x = lib.autograd.forward_ad, lib.tensor(X)
        with fw.dual_level():
            d = fw.make_dual(x, lib.tensor(V))
            d.mul_(2)
            d.add_(1).sin_()
            y = d * 1
            y[0].mul_(3)
            y[:, 1] = 0.0
            buf = lib.zeros(5, 4, dtype=lib.float64)
            buf[1:4] = d.exp()
            return [x, *fw.unpack_dual(d), *fw.unpack_dual(y), *fw.unpack_dual(buf)]
    _same(run)


def test_unpack_dual_returns_the_tangent_or_a_copy_in_the_primal_layout():
    """The forward-AD tutorial: a tangent of the primal's strides is kept as is, another one is copied."""
    def run(lib):
        fw, p, t = lib.autograd.forward_ad, lib.tensor(X[:, :3].T.copy()), lib.tensor(V[:3, :3])
        with fw.dual_level():
            same = fw.unpack_dual(fw.make_dual(p, t)).tangent
            tt = t.T
            copied = fw.unpack_dual(fw.make_dual(p, tt)).tangent
            strided = fw.unpack_dual(fw.make_dual(p[:, ::2], t[:, :2])).tangent
            res = [same is t, copied is tt, copied, copied.stride(), strided, strided.stride(), strided.is_contiguous()]
            return res + [fw.unpack_dual(fw.make_dual(p, t[:1].expand(3, 3))).tangent.stride()]
    _same(run)


def _model(lib, seed=5):
    g = np.random.default_rng(seed)
    m = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1)).double()
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(g.standard_normal(tuple(p.shape))))
    return m


def test_tutorial_module_parameters_replaced_by_duals():
    def run(lib):
        model, fw = _model(lib)[0], lib.autograd.forward_ad
        params = dict(model.named_parameters())
        with fw.dual_level():
            for name, p in params.items():
                delattr(model, name)
                setattr(model, name, fw.make_dual(p, p.detach() * 0.5 + 1))
            return list(fw.unpack_dual(model(lib.tensor(X))))
    _same(run)


def test_forward_gradient_training_loop():
    """"Gradients without backpropagation": the directional derivative of the loss times the direction."""
    def run(lib):
        model, fw, g = _model(lib), lib.autograd.forward_ad, np.random.default_rng(6)
        x, y, losses = lib.tensor(X), lib.tensor(X[:, :1] * 2), []
        for _ in range(3):
            params = {k: p.detach() for k, p in model.named_parameters()}
            vs = {k: lib.tensor(g.standard_normal(tuple(p.shape))) for k, p in params.items()}
            with fw.dual_level():
                dual = {k: fw.make_dual(p, vs[k]) for k, p in params.items()}
                loss = lib.nn.functional.mse_loss(lib.func.functional_call(model, dual, (x,)), y)
                value, jvp = fw.unpack_dual(loss)
            with lib.no_grad():
                for k, p in model.named_parameters():
                    p.sub_(0.01 * jvp * vs[k])
            losses.append(value)
        return losses + list(model.parameters())
    _same(run)


def test_func_forward_transforms():
    def h(lib):
        return lambda x: (x.tanh() @ lib.tensor(X).T @ lib.tensor(X) @ x.T).trace() + x.logcumsumexp(1).sum()

    def run(lib):
        x, out_lin = lib.tensor(X), lib.func.linearize(lambda a: a.sigmoid().logit().cumsum(0) * 2, lib.tensor(X))
        return [lib.func.jacfwd(lib.func.jacrev(h(lib)))(x), lib.func.hessian(h(lib))(x),
                lib.func.jvp(lib.func.grad(h(lib)), (x,), (lib.tensor(V),)), out_lin[0], out_lin[1](lib.tensor(V)),
                lib.func.jacfwd(lambda a, b: a.logit() * b, argnums=(0, 1))(lib.tensor(Y).sigmoid(), lib.tensor(W))]
    _same(run, rtol=1e-9)


def test_autograd_functional_forward_mode_and_create_graph():
    def run(lib):
        x = lib.tensor(Y).requires_grad_()
        f = lambda a: (a.exp() * a.sum()).sum()  # noqa: E731
        jac = lib.autograd.functional.jacobian(lambda a, b: a.logcumsumexp(0) * b, (lib.tensor(Y), lib.tensor(W)),
                                               strategy="forward-mode", vectorize=True)
        o, hv = lib.autograd.functional.hvp(f, x, lib.tensor(W), create_graph=True)
        hess = lib.autograd.functional.hessian(f, x, create_graph=True)
        fwd = lib.autograd.functional.hessian(f, x.detach(), vectorize=True, outer_jacobian_strategy="forward-mode")
        return [jac, o, hv, lib.autograd.grad(hv.sum(), x)[0], hess, lib.autograd.grad(hess.sum(), x)[0], fwd]
    _same(run)


@pytest.mark.parametrize("call,err", [
    (lambda L, fw: fw.make_dual(L.arange(3), L.ones(3)), ValueError),
    (lambda L, fw: fw.make_dual(L.tensor(X), L.ones(4, dtype=L.float64)), RuntimeError),
    (lambda L, fw: fw.enter_dual_level(), RuntimeError),
    (lambda L, fw: L.autograd.functional.jacobian(L.exp, L.tensor(Y), strategy="forward-mode", vectorize=False),
     NotImplementedError),
    (lambda L, fw: L.autograd.functional.jacobian(L.exp, L.tensor(Y), strategy="forward-mode", vectorize=True,
                                                  create_graph=True), NotImplementedError),
    (lambda L, fw: L.func.jvp(L.exp, (L.tensor(X),), (L.tensor(Y),)), RuntimeError),
    (lambda L, fw: L.func.jvp(L.exp, L.tensor(X), L.tensor(V)), RuntimeError),
])
def test_errors(call, err):
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level(), pytest.raises(err):
            call(lib, fw)
    with pytest.raises(RuntimeError):  # no open level
        ember.autograd.forward_ad.make_dual(ember.tensor(X), ember.tensor(V))
