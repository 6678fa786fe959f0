"""nn.utils.prune against torch: masks (exactly torch's for the deterministic methods on tie-free data), the
weight_orig/weight_mask reparametrization and its state_dict, iterative pruning, global pruning and remove."""
import copy
import doctest

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as tprune

import ember
from ember.nn.utils import prune as eprune

from .torch_ref import close, same_error

MODULES = {
    "linear": (lambda nn: nn.Linear(7, 5), (3, 7)),
    "conv2d": (lambda nn: nn.Conv2d(3, 6, 3), (2, 3, 6, 6)),
}


def _pair(kind):
    make, shape = MODULES[kind]
    torch.manual_seed(0)
    t = make(torch.nn)
    e = make(ember.nn)
    e.load_state_dict(t.state_dict())
    return e, t, np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def _same_state(e, t):
    assert list(e.state_dict()) == list(t.state_dict())
    assert sorted(n for n, _ in e.named_parameters()) == sorted(n for n, _ in t.named_parameters())
    assert sorted(n for n, _ in e.named_buffers()) == sorted(n for n, _ in t.named_buffers())
    for k, v in t.state_dict().items():
        close(e.state_dict()[k], v, what=k)


def _same_forward(e, t, x):
    """Outputs and parameter gradients (of ``weight_orig``: zero where pruned) agree."""
    yt, ye = t(torch.tensor(x)), e(ember.tensor(x))
    close(ye, yt, what="output")
    g = np.random.default_rng(1).standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(g))
    ye.backward(ember.tensor(g))
    for (name, p), (_, q) in zip(t.named_parameters(), e.named_parameters()):
        close(q.grad, p.grad, what=f"grad of {name}", tol=(1e-4, 1e-5))


DETERMINISTIC = {  # P is torch.nn.utils.prune or ember.nn.utils.prune
    "identity": lambda P, m: P.identity(m, "weight"),
    "l1_float": lambda P, m: P.l1_unstructured(m, "weight", amount=0.3),
    "l1_int": lambda P, m: P.l1_unstructured(m, "weight", amount=7),
    "l1_zero": lambda P, m: P.l1_unstructured(m, "weight", amount=0),
    "l1_all": lambda P, m: P.l1_unstructured(m, "weight", amount=1.0),
    "l1_bias": lambda P, m: P.l1_unstructured(m, "bias", amount=2),
    "ln_dim0_l2": lambda P, m: P.ln_structured(m, "weight", amount=0.4, n=2, dim=0),
    "ln_dim1_l1": lambda P, m: P.ln_structured(m, "weight", amount=2, n=1, dim=1),
    "ln_dim_neg_inf": lambda P, m: P.ln_structured(m, "weight", amount=0.5, n=float("inf"), dim=-1),
    "ln_fro": lambda P, m: P.ln_structured(m, "weight", amount=1, n="fro", dim=0),
}


@pytest.mark.parametrize("kind", MODULES)
@pytest.mark.parametrize("method", DETERMINISTIC)
def test_deterministic_masks(kind, method):
    e, t, x = _pair(kind)
    if method == "ln_fro" and kind == "conv2d":  # a Frobenius norm over 3 dims: torch raises too
        same_error(lambda: DETERMINISTIC[method](eprune, e), lambda: DETERMINISTIC[method](tprune, t))
        assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]  # left unpruned
        return
    me, mt = DETERMINISTIC[method](eprune, e), DETERMINISTIC[method](tprune, t)
    assert me is e and mt is t
    _same_state(e, t)
    name = "bias" if method.endswith("bias") else "weight"
    close(getattr(e, name), getattr(t, name))
    assert not isinstance(getattr(e, name), ember.nn.Parameter)
    _same_forward(e, t, x)


def test_importance_scores_and_custom_mask():
    e, t, x = _pair("conv2d")
    scores = np.random.default_rng(3).standard_normal(tuple(t.weight.shape)).astype(np.float32)
    eprune.l1_unstructured(e, "weight", amount=0.5, importance_scores=ember.tensor(scores))
    tprune.l1_unstructured(t, "weight", amount=0.5, importance_scores=torch.tensor(scores))
    eprune.ln_structured(e, "weight", amount=2, n=2, dim=0, importance_scores=ember.tensor(scores))
    tprune.ln_structured(t, "weight", amount=2, n=2, dim=0, importance_scores=torch.tensor(scores))
    mask = (np.arange(6) % 2).astype(np.float32)
    eprune.custom_from_mask(e, "bias", ember.tensor(mask))
    tprune.custom_from_mask(t, "bias", torch.tensor(mask))
    _same_state(e, t)
    _same_forward(e, t, x)


def test_iterative_pruning_container():
    e, t, x = _pair("conv2d")
    for P, m in ((eprune, e), (tprune, t)):
        P.l1_unstructured(m, "weight", amount=0.2)
        P.ln_structured(m, "weight", amount=2, n=1, dim=0)
        P.l1_unstructured(m, "weight", amount=10)
        P.ln_structured(m, "weight", amount=0.5, n=2, dim=1)
        P.custom_from_mask(m, "weight", (torch if P is tprune else ember).ones(6, 3, 3, 3))
    hooks = [h for h in e._forward_pre_hooks.values() if isinstance(h, eprune.BasePruningMethod)]
    assert len(hooks) == 1 and isinstance(hooks[0], eprune.PruningContainer) and len(hooks[0]) == 5
    assert [type(h).__name__ for h in hooks[0]] == ["L1Unstructured", "LnStructured", "L1Unstructured",
                                                    "LnStructured", "CustomFromMask"]
    _same_state(e, t)
    _same_forward(e, t, x)


def test_global_unstructured():
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU(), torch.nn.Linear(5, 4))
    em = ember.nn.Sequential(ember.nn.Linear(6, 5), ember.nn.ReLU(), ember.nn.Linear(5, 4))
    em.load_state_dict(tm.state_dict())
    tprune.l1_unstructured(tm[0], "weight", amount=3)  # an existing mask is combined with
    eprune.l1_unstructured(em[0], "weight", amount=3)
    scores = np.random.default_rng(4).standard_normal((4, 5)).astype(np.float32)
    for P, m, lib in ((eprune, em, ember), (tprune, tm, torch)):
        P.global_unstructured([(m[0], "weight"), (m[2], "weight"), (m[2], "bias")], pruning_method=P.L1Unstructured,
                              importance_scores={(m[2], "weight"): lib.tensor(scores)}, amount=0.4)
    _same_state(em, tm)
    _same_forward(em, tm, np.random.default_rng(5).standard_normal((3, 6)).astype(np.float32))
    same_error(lambda: eprune.global_unstructured([(em[0], "weight")], eprune.LnStructured, amount=1, n=2, dim=0),
               lambda: tprune.global_unstructured([(tm[0], "weight")], tprune.LnStructured, amount=1, n=2, dim=0))


@pytest.mark.parametrize("amount", [0.3, 5, 0])
def test_random_unstructured(amount):
    e, _, x = _pair("conv2d")
    w = e.weight.detach().numpy().copy()
    eprune.random_unstructured(e, "weight", amount=amount)
    mask = e.weight_mask.numpy()
    n = amount if isinstance(amount, int) else round(amount * mask.size)
    assert (mask == 0).sum() == n and set(np.unique(mask)) <= {0.0, 1.0}
    np.testing.assert_array_equal(e.weight.detach().numpy(), w * mask)
    eprune.random_unstructured(e, "weight", amount=5)  # prunes 5 more of the kept ones
    assert (e.weight_mask.numpy() == 0).sum() == n + 5
    assert (e.weight_mask.numpy() <= mask).all()


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_random_structured(dim):
    e, _, _ = _pair("conv2d")
    eprune.random_structured(e, "weight", amount=0.5, dim=dim)
    mask = e.weight_mask.numpy()
    per_slice = np.moveaxis(mask, dim, 0).reshape(mask.shape[dim], -1)
    assert set(per_slice.min(1)) <= {0.0, 1.0} and (per_slice.min(1) == per_slice.max(1)).all()  # whole slices
    assert (per_slice[:, 0] == 0).sum() == round(0.5 * mask.shape[dim])
    pruned = (per_slice[:, 0] == 0).sum()
    eprune.random_structured(e, "weight", amount=1, dim=dim)  # one more slice among the kept ones
    per_slice = np.moveaxis(e.weight_mask.numpy(), dim, 0).reshape(mask.shape[dim], -1)
    assert (per_slice[:, 0] == 0).sum() == pruned + 1


def test_remove_and_is_pruned():
    e, t, x = _pair("linear")
    assert not eprune.is_pruned(e)
    for P, m in ((eprune, e), (tprune, t)):
        P.l1_unstructured(m, "weight", amount=0.5)
        P.random_unstructured(m, "bias", amount=0)
    assert eprune.is_pruned(ember.nn.Sequential(e)) == tprune.is_pruned(torch.nn.Sequential(t)) is True
    for P, m in ((eprune, e), (tprune, t)):
        P.remove(m, "weight")
        P.remove(m, "bias")
    assert not eprune.is_pruned(e)
    assert isinstance(e.weight, ember.nn.Parameter) and e.weight.requires_grad
    _same_state(e, t)
    _same_forward(e, t, x)
    same_error(lambda: eprune.remove(e, "weight"), lambda: tprune.remove(t, "weight"))


def test_deepcopy_and_load_state_dict():
    e, t, x = _pair("linear")
    eprune.l1_unstructured(e, "weight", amount=0.5)
    tprune.l1_unstructured(t, "weight", amount=0.5)
    # the recomputed ``weight`` is not a graph leaf: deepcopy refuses, in torch too
    same_error(lambda: copy.deepcopy(e), lambda: copy.deepcopy(t), match_message=False)
    fresh = ember.nn.Linear(7, 5)
    eprune.identity(fresh, "weight")
    fresh.load_state_dict(t.state_dict())
    close(fresh(ember.tensor(x)), t(torch.tensor(x)))


def test_prune_method_on_tensor():
    w = np.random.default_rng(6).standard_normal((4, 5)).astype(np.float32)
    close(eprune.L1Unstructured(amount=0.5).prune(ember.tensor(w)),
          tprune.L1Unstructured(amount=0.5).prune(torch.tensor(w)))
    close(eprune.LnStructured(amount=2, n=2, dim=1).prune(ember.tensor(w)),
          tprune.LnStructured(amount=2, n=2, dim=1).prune(torch.tensor(w)))


def test_errors():
    e, t, _ = _pair("linear")
    for kwargs in ({"amount": -1}, {"amount": 1.5}, {"amount": "a"}, {"amount": 100}):
        same_error(lambda: eprune.l1_unstructured(e, "weight", **kwargs),
                   lambda: tprune.l1_unstructured(t, "weight", **kwargs))
    same_error(lambda: eprune.ln_structured(e, "bias", amount=1, n=2, dim=0),
               lambda: tprune.ln_structured(t, "bias", amount=1, n=2, dim=0))
    same_error(lambda: eprune.ln_structured(e, "weight", amount=1, n=2, dim=2),
               lambda: tprune.ln_structured(t, "weight", amount=1, n=2, dim=2))
    same_error(lambda: eprune.l1_unstructured(e, "weight", 1, importance_scores=ember.ones(2)),
               lambda: tprune.l1_unstructured(t, "weight", 1, importance_scores=torch.ones(2)))
    # a failed pruning leaves the module unpruned (``weight`` registered again, after ``bias``)
    assert list(e.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert not eprune.is_pruned(e)


def test_ties_go_to_the_lowest_index():
    """torch's topk breaks ties in an unspecified order; ember prunes the lowest flat indices first."""
    m = ember.nn.Linear(4, 1, bias=False)
    m.weight.data.copy_(ember.tensor([[1., 0., 1., 0.]]))
    assert eprune.l1_unstructured(m, "weight", amount=1).weight_mask.tolist() == [[1., 0., 1., 1.]]


def test_docstring_examples():
    globs = {"ember": ember, **{k: getattr(eprune, k) for k in dir(eprune)}}
    result = doctest.testmod(eprune, globs=globs, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
