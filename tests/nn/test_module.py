"""nn.Module, Parameter, Buffer and the containers against torch: registration, traversal, state dicts, conversion,
hooks, repr and pickling."""
import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest
import torch

import ember


def make_classes(lib):
    nn = lib.nn

    class Lin(nn.Module):  # a minimal Linear-like module (forward is elementwise so any op set suffices)
        def __init__(self, i, o, bias=True):
            super().__init__()
            self.in_features, self.out_features = i, o
            self.weight = nn.Parameter(lib.ones(o, i))
            if bias:
                self.bias = nn.Parameter(lib.zeros(o))
            else:
                self.register_parameter("bias", None)
            self.register_buffer("count", lib.zeros(1, dtype=lib.int64))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)

        def forward(self, x):
            return x * self.weight

        def extra_repr(self):
            return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Lin(2, 3)
            self.seq = nn.Sequential(Lin(3, 3), nn.Identity(), Lin(3, 1, bias=False))
            self.ml = nn.ModuleList([Lin(1, 1) for _ in range(3)] + [nn.Flatten()])
            self.md = nn.ModuleDict({"z": nn.Identity(), "b": Lin(2, 2)})
            self.pl = nn.ParameterList([lib.zeros(2), lib.zeros(3, 4)])
            self.pd = nn.ParameterDict({"w": lib.zeros(2), "a": nn.Parameter(lib.zeros(1))})
            self.tied = self.a
            self.u = nn.Unflatten(1, (2, 5))

    return Lin, Net


E_LIN, E_NET = make_classes(ember)
T_LIN, T_NET = make_classes(torch)


def names(it):
    return [n for n, _ in it]


def same_error(fn_e, fn_t):
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(type(te.value)) as ee:
        fn_e()
    assert str(ee.value).replace("ember.", "torch.") == str(te.value), (str(ee.value), str(te.value))


# -- Parameter and Buffer ------------------------------------------------------------------------------------------
def test_parameter_basics():
    data = ember.tensor([1.0, 2.0])
    p = ember.nn.Parameter(data)
    assert isinstance(p, ember.Tensor) and isinstance(p, ember.nn.Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    data._data[0] = 5.0  # shares memory with data
    assert p.tolist() == [5.0, 2.0]
    assert not ember.nn.Parameter(data, requires_grad=False).requires_grad
    assert ember.nn.Parameter().shape == (0,)
    with ember.no_grad():
        assert ember.nn.Parameter(ember.zeros(1)).requires_grad
    assert type(p * 2) is ember.Tensor and type(p.detach()) is ember.Tensor


def test_parameter_copy_and_pickle():
    p = ember.nn.Parameter(ember.tensor([1.0, 2.0]), requires_grad=False)
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is ember.nn.Parameter and q.tolist() == [1.0, 2.0] and not q.requires_grad
        assert q.data_ptr() != p.data_ptr()


def test_buffer():
    b = ember.nn.Buffer(ember.zeros(2), persistent=False)
    assert type(b) is ember.Tensor and isinstance(b, ember.nn.Buffer) and not b.persistent
    assert not isinstance(ember.zeros(2), ember.nn.Buffer)
    for lib in (ember, torch):
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.zeros(2))
        m.b = lib.nn.Buffer(lib.zeros(2), persistent=False)
        m.c = lib.zeros(1)  # a plain tensor is a plain attribute
        assert names(m.named_buffers()) == ["a", "b"] and list(m.state_dict()) == ["a"]
        m.a = lib.ones(3)  # re-assigning a registered buffer name keeps it a buffer
        assert m._buffers["a"].shape == (3,)


# -- registration and attribute protocol -----------------------------------------------------------------------------
def test_registration_errors_match_torch():
    for lib in (ember, torch):
        class Early(lib.nn.Module):
            def __init__(self):
                self.m = lib.nn.Identity()
        with pytest.raises(AttributeError, match="cannot assign module before Module.__init__\\(\\) call"):
            Early()

        class EarlyP(lib.nn.Module):
            def __init__(self):
                self.p = lib.nn.Parameter(lib.zeros(1))
        with pytest.raises(AttributeError, match="cannot assign parameters before Module.__init__\\(\\) call"):
            EarlyP()

    e, t = E_LIN(2, 2), T_LIN(2, 2)
    cases = [
        lambda m, lib: setattr(m, "weight", lib.zeros(2, 2)),
        lambda m, lib: setattr(m, "a", lib.nn.Identity()) or setattr(m, "a", 3),
        lambda m, lib: m.register_parameter("x.y", None),
        lambda m, lib: m.register_parameter("", None),
        lambda m, lib: m.register_parameter("in_features", None),
        lambda m, lib: m.register_parameter("q", lib.zeros(1)),
        lambda m, lib: m.register_buffer("b.c", None),
        lambda m, lib: m.register_buffer("weight", lib.zeros(1)),
        lambda m, lib: m.register_buffer("q", 3),
        lambda m, lib: m.add_module("q", 3),
        lambda m, lib: m.add_module("x.y", lib.nn.Identity()),
        lambda m, lib: m.add_module(1, lib.nn.Identity()),
        lambda m, lib: m.get_submodule("nope"),
        lambda m, lib: m.get_parameter("count"),
        lambda m, lib: m.get_buffer("weight"),
        lambda m, lib: m.nope,
        lambda m, lib: m.to(lib.int32),
        lambda m, lib: m.train("yes"),
    ]
    for case in cases:
        same_error(lambda: case(e, ember), lambda: case(t, torch))


def test_setattr_moves_between_kinds_and_delattr():
    for lib in (ember, torch):
        m = lib.nn.Module()
        m.x = lib.nn.Parameter(lib.zeros(1))
        m.register_buffer("y", lib.zeros(1), persistent=False)
        m.y = lib.nn.Parameter(lib.zeros(1))  # a Parameter replaces the buffer
        assert list(m._parameters) == ["x", "y"] and not m._buffers and not m._non_persistent_buffers_set
        m.x = None
        assert m._parameters["x"] is None and names(m.named_parameters()) == ["y"]
        m.z = lib.nn.Identity()
        m.z = None
        assert m._modules["z"] is None
        del m.y, m.z
        m.w = 1
        del m.w
        assert list(m._parameters) == ["x"] and not m._modules and not hasattr(m, "w")


def test_get_submodule_parameter_buffer():
    e = E_NET()
    assert e.get_submodule("seq.2") is e.seq[2] and e.get_submodule("") is e
    assert e.get_parameter("seq.0.weight") is e.seq[0].weight
    assert e.get_buffer("a.count") is e.a.count
    e.set_submodule("seq.1", ember.nn.Flatten())
    assert isinstance(e.seq[1], ember.nn.Flatten)
    with pytest.raises(AttributeError, match="has no attribute `nope`"):
        e.set_submodule("seq.nope", ember.nn.Flatten(), strict=True)


def test_forward_missing():
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        ember.nn.Module()(1)


# -- traversal ----------------------------------------------------------------------------------------------------
def test_traversal_matches_torch():
    e, t = E_NET(), T_NET()
    for rd in (True, False):
        assert names(e.named_parameters(remove_duplicate=rd)) == names(t.named_parameters(remove_duplicate=rd))
        assert names(e.named_buffers(remove_duplicate=rd)) == names(t.named_buffers(remove_duplicate=rd))
        assert names(e.named_modules(remove_duplicate=rd)) == names(t.named_modules(remove_duplicate=rd))
    assert names(e.named_parameters(prefix="net", recurse=False)) == names(t.named_parameters(prefix="net",
                                                                                              recurse=False))
    assert names(e.a.named_parameters(prefix="p")) == ["p.weight", "p.bias"]
    assert names(e.named_children()) == names(t.named_children())
    assert len(list(e.parameters())) == len(list(t.parameters()))
    assert len(list(e.modules())) == len(list(t.modules()))
    seen = []
    e.apply(lambda m: seen.append(type(m).__name__))
    assert seen[-1] == "Net" and seen[0] == "Lin"


def test_train_eval_requires_grad_zero_grad():
    e = E_NET()
    assert e.eval() is e and not any(m.training for m in e.modules())
    e.train()
    assert all(m.training for m in e.modules())
    e.requires_grad_(False)
    assert not any(p.requires_grad for p in e.parameters())
    e.requires_grad_()
    for p in e.parameters():
        p.grad = ember.ones_like(p)
    grads = [p.grad for p in e.parameters()]
    e.zero_grad(set_to_none=False)
    assert all(p.grad is g for p, g in zip(e.parameters(), grads))
    assert all(not p.grad.numpy().any() for p in e.parameters())
    e.zero_grad()
    assert all(p.grad is None for p in e.parameters())


# -- conversion ---------------------------------------------------------------------------------------------------
def test_to_casts_floating_only_and_keeps_identity():
    e = E_LIN(2, 3)
    w = e.weight
    w.grad = ember.ones(3, 2)
    assert e.double() is e
    assert e.weight is w and w.dtype is ember.float64 and w.grad.dtype is ember.float64
    assert e.count.dtype is ember.int64 and e.scratch.dtype is ember.float64
    e.to(ember.float16)
    assert w.dtype is ember.float16 and e.count.dtype is ember.int64
    e.to("cpu", ember.bfloat16, non_blocking=True)
    assert w.dtype is ember.bfloat16
    e.to(dtype=ember.float32)
    e.to(ember.zeros(1, dtype=ember.float64))
    assert w.dtype is ember.float64 and w.requires_grad
    e.float()
    e.half()
    assert w.dtype is ember.float16
    e.bfloat16().cpu()
    assert w.dtype is ember.bfloat16 and w.device.type == "cpu"
    e.type(ember.float32)
    assert e.count.dtype is ember.float32  # type() casts everything, as torch's does
    assert e.share_memory() is e


def test_to_cuda(device):
    if device != "cuda":
        pytest.skip("needs CUDA")
    e = E_LIN(2, 3)
    w = e.weight
    e.cuda()
    assert w.device.type == "cuda" and e.count.device.type == "cuda"
    e.cpu()
    assert w.device.type == "cpu"


# -- state dict ---------------------------------------------------------------------------------------------------
def test_state_dict_keys_and_values():
    e, t = E_NET(), T_NET()
    esd, tsd = e.state_dict(), t.state_dict()
    assert list(esd) == list(tsd)
    assert isinstance(esd, OrderedDict) and list(esd._metadata) == list(tsd._metadata)
    assert esd._metadata[""] == {"version": 1}
    assert not esd["a.weight"].requires_grad and esd["a.weight"].data_ptr() == e.a.weight.data_ptr()
    assert e.state_dict(keep_vars=True)["a.weight"] is e.a.weight
    assert list(e.state_dict(prefix="m.")) == list(t.state_dict(prefix="m."))
    dest = {}
    assert e.state_dict(destination=dest) is dest and list(dest) == list(tsd)


def test_load_state_dict_from_torch_and_roundtrip():
    t = T_NET()
    with torch.no_grad():
        for i, p in enumerate(t.parameters()):
            p.copy_(torch.arange(p.numel(), dtype=torch.float32).reshape(p.shape) + i)
    e = E_NET()
    w = e.a.weight
    res = e.load_state_dict(t.state_dict())
    assert repr(res) == "<All keys matched successfully>" and res.missing_keys == [] and res.unexpected_keys == []
    assert e.a.weight is w and w.requires_grad
    for (n, p), (_, q) in zip(e.named_parameters(), t.named_parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    e2 = E_NET()
    e2.load_state_dict(e.state_dict())
    np.testing.assert_array_equal(e2.seq[0].weight.detach().numpy(), e.seq[0].weight.detach().numpy())
    # dtype follows the module; 1-element tensors load into 0-d parameters
    m = ember.nn.Module()
    m.s = ember.nn.Parameter(ember.tensor(0.0, dtype=ember.float64))
    m.load_state_dict({"s": np.array([3.0], dtype=np.float32)})
    assert m.s.dtype is ember.float64 and m.s.item() == 3.0
    # torch bfloat16 tensors (no NumPy view) and keep_vars state dicts load too
    tm = torch.nn.Module()
    tm.w = torch.nn.Parameter(torch.tensor([1.5, -2.25]).bfloat16())
    em = ember.nn.Module()
    em.w = ember.nn.Parameter(ember.zeros(2, dtype=ember.bfloat16))
    em.load_state_dict(tm.state_dict(keep_vars=True))
    assert em.w.tolist() == [1.5, -2.25] and em.w.dtype is ember.bfloat16


def test_load_state_dict_errors_match_torch():
    e, t = E_NET(), T_NET()
    sd_t = t.state_dict()
    del sd_t["a.bias"], sd_t["seq.2.weight"]
    sd_t["a.extra"] = torch.zeros(1)
    sd_t["nope.weight"] = torch.zeros(1)
    sd_t["seq.0.weight"] = torch.zeros(4, 4)
    sd_t["md.b.count"] = "text"
    sd_e = {k: (ember.tensor(v.numpy()) if isinstance(v, torch.Tensor) else v) for k, v in sd_t.items()}
    same_error(lambda: e.load_state_dict(sd_e), lambda: t.load_state_dict(sd_t))
    del sd_t["seq.0.weight"], sd_e["seq.0.weight"], sd_t["md.b.count"], sd_e["md.b.count"]
    rt = t.load_state_dict(sd_t, strict=False)
    re = e.load_state_dict(sd_e, strict=False)
    assert re == rt and repr(re) == repr(rt)  # strict=False: the lists only report unexpected keys... as torch
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        e.load_state_dict([1])


def test_load_state_dict_assign():
    e = E_LIN(2, 3)
    e.weight.requires_grad_(False)
    new = ember.full((3, 2), 7.0, dtype=ember.float64)
    e.load_state_dict({"weight": new, "bias": ember.zeros(3), "count": ember.zeros(1, dtype=ember.int64)},
                      assign=True)
    assert isinstance(e.weight, ember.nn.Parameter) and e.weight.dtype is ember.float64
    assert not e.weight.requires_grad and e.weight.data_ptr() == new.data_ptr()


def test_state_dict_hooks_and_extra_state():
    class WithExtra(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 1

        def get_extra_state(self):
            return {"value": self.value}

        def set_extra_state(self, state):
            self.value = state["value"]

    m = ember.nn.Sequential(WithExtra())
    sd = m.state_dict()
    assert list(sd) == ["0._extra_state"]
    sd["0._extra_state"] = {"value": 5}
    m.load_state_dict(sd)
    assert m[0].value == 5
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0._extra_state"'):
        m.load_state_dict({})

    lin = E_LIN(1, 1)
    calls = []
    lin.register_state_dict_pre_hook(lambda mod, prefix, keep: calls.append(("pre", prefix)))
    lin.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append(("post", list(sd))))
    lin.register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: calls.append(("lpre", prefix)))
    lin.register_load_state_dict_post_hook(lambda mod, keys: keys.unexpected_keys.clear())
    sd = lin.state_dict()
    sd["junk"] = ember.zeros(1)
    lin.load_state_dict(sd)  # the post hook clears the unexpected key, so strict loading passes
    assert calls == [("pre", ""), ("post", ["weight", "bias", "count"]), ("lpre", "")]


# -- call and hooks -----------------------------------------------------------------------------------------------
def test_forward_hooks_match_torch():
    for lib in (ember, torch):
        m = make_classes(lib)[0](2, 2)
        log = []
        h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1") or (args[0] * 2,))
        m.register_forward_pre_hook(lambda mod, args, kw: log.append("pre0") or (args, {}), with_kwargs=True,
                                    prepend=True)
        m.register_forward_hook(lambda mod, args, out: log.append("post") or out + 1)
        m.register_forward_hook(lambda mod, args, kw, out: log.append(("kw", sorted(kw))), with_kwargs=True)
        out = m(lib.ones(2, 2))
        assert log == ["pre0", "pre1", "post", ("kw", [])]
        assert out.tolist() == [[3.0, 3.0], [3.0, 3.0]]
        h1.remove()
        assert m(lib.ones(2, 2)).tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_forward_hook_always_call():
    for lib in (ember, torch):
        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        m = Boom()
        seen = []
        m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
        m.register_forward_hook(lambda mod, args, out: seen.append("never"))
        with pytest.raises(ValueError, match="boom"):
            m(lib.ones(1))
        assert seen == [None]


def test_global_forward_hooks():
    from ember.nn.modules import _hooks, module
    log = []
    h = module.register_module_forward_pre_hook(lambda mod, args: log.append(type(mod).__name__))
    try:
        ember.nn.Sequential(ember.nn.Identity())(ember.ones(1))
    finally:
        h.remove()
    ember.nn.Identity()(ember.ones(1))
    assert log == ["Sequential", "Identity"] and not _hooks._global_hooks[0]


def test_full_backward_hooks_match_torch():
    results = {}
    for lib in (ember, torch):
        m = make_classes(lib)[0](3, 2)
        m.weight.requires_grad_(False)
        m.weight.mul_(3.0) if lib is torch else m.weight._data.__imul__(3.0)
        m.weight.requires_grad_(True)
        log = []

        def pre(mod, gout):
            log.append(("pre", [g.tolist() for g in gout]))
            return (gout[0] * 2,)

        def post(mod, gin, gout):
            log.append(("post", [None if g is None else g.tolist() for g in gin], [g.tolist() for g in gout]))
            return (gin[0] + 1,)
        m.register_full_backward_pre_hook(pre)
        m.register_full_backward_hook(post)
        x = lib.ones(2, 3, requires_grad=True)
        m(x).sum().backward()
        results[lib.__name__] = (log, x.grad.tolist(), m.weight.grad.tolist())
    assert results["ember"] == results["torch"]
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        m = E_LIN(1, 1)
        m.register_full_backward_hook(lambda *a: None)
        m.register_backward_hook(lambda *a: None)


def test_full_backward_hook_inputs_without_grad():
    for lib in (ember, torch):
        m = make_classes(lib)[0](2, 2)
        got = []
        m.register_full_backward_hook(lambda mod, gin, gout: got.append((gin, len(gout))))
        with pytest.warns(UserWarning, match="Full backward hook is firing when gradients are computed with respect "
                                             "to module outputs since no inputs require gradients"):
            m(lib.ones(2, 2)).sum().backward()
        assert got == [((None,), 1)]


# -- containers ---------------------------------------------------------------------------------------------------
def test_sequential_ops_match_torch():
    def run(lib):
        nn = lib.nn
        Lin = make_classes(lib)[0]
        s = nn.Sequential(Lin(1, 1), nn.Identity(), Lin(2, 2), nn.Flatten())
        out = [len(s), type(s[-1]).__name__, type(s[1:3]).__name__, len(s[::2]), names(s[1:].named_children())]
        s.append(nn.Identity()).insert(1, Lin(3, 3)).extend([nn.Identity()])
        out.append(repr(s))
        del s[0]
        del s[1:3]
        out.append(names(s.named_children()))
        out.append(type(s.pop(-1)).__name__)
        s[0] = nn.Flatten()
        out.append(repr(s + nn.Sequential(nn.Identity())))
        out.append(repr(s * 2))
        s += nn.Sequential(nn.Identity())
        out.append(repr(s))
        od = nn.Sequential(OrderedDict([("first", nn.Identity()), ("second", nn.Flatten())]))
        out.append(repr(od))
        out.append(repr(od[1:]))
        return out
    assert [str(x).replace("ember.", "torch.") for x in run(ember)] == [str(x) for x in run(torch)]
    s = ember.nn.Sequential(ember.nn.Identity())
    same_error(lambda: s[3], lambda: torch.nn.Sequential(torch.nn.Identity())[3])
    same_error(lambda: s + 1, lambda: torch.nn.Sequential() + 1)
    x = ember.ones(2, 3, 4)
    assert ember.nn.Sequential(E_LIN(4, 3), ember.nn.Identity())(x).tolist() == x.tolist()


def test_module_list_and_dict_match_torch():
    def run(lib):
        nn = lib.nn
        Lin = make_classes(lib)[0]
        ml = nn.ModuleList([Lin(1, 1), Lin(1, 1), nn.Identity()])
        out = [repr(ml), repr(nn.ModuleList()), len(ml), type(ml[-1]).__name__, repr(ml[:2])]
        ml.append(Lin(2, 2)).extend([nn.Identity()])
        ml.insert(0, nn.Flatten())
        ml += [nn.Identity()]
        out.append(repr(ml))
        del ml[1]
        ml[0] = nn.Identity()
        out.append(repr(ml + nn.ModuleList([nn.Flatten()])))
        out.append(type(ml.pop(2)).__name__)
        del ml[::2]
        out.append(names(ml.named_children()))
        md = nn.ModuleDict([("b", nn.Identity()), ("a", Lin(1, 1))])
        md.update({"c": nn.Flatten()})
        md["d"] = nn.Identity()
        out += [list(md), list(md.keys()), "a" in md, len(md), type(md.pop("b")).__name__, repr(md)]
        del md["a"]
        out.append(names(md.named_children()))
        md.clear()
        out.append(len(md))
        return out
    assert [str(x).replace("ember.", "torch.") for x in run(ember)] == [str(x) for x in run(torch)]
    same_error(lambda: ember.nn.ModuleList().extend(1), lambda: torch.nn.ModuleList().extend(1))
    same_error(lambda: ember.nn.ModuleDict([(1,)]), lambda: torch.nn.ModuleDict([(1,)]))


def test_parameter_list_and_dict():
    def run(lib):
        nn = lib.nn
        pl = nn.ParameterList([lib.zeros(2), nn.Parameter(lib.zeros(3), requires_grad=False)])
        pl.append(lib.ones(1)).extend([lib.zeros(2, 2)])
        pl[0] = lib.ones(4)
        out = [len(pl), [type(p).__name__ for p in pl], [p.requires_grad for p in pl], len(pl[1:]),
               names(pl.named_parameters()), repr(pl).replace("torch.", "ember.")]
        pd = nn.ParameterDict({"b": lib.zeros(1), "a": lib.zeros(2)})
        pd.update([("c", lib.zeros(3))])
        pd["d"] = nn.Parameter(lib.zeros(1))
        out += [list(pd), list(pd.keys()), "a" in pd, len(pd), names(pd.named_parameters())]
        out += [type(pd.get("zz", 1)).__name__, pd.setdefault("e", lib.zeros(5)).shape[0], pd.popitem()[0]]
        out.append(repr(pd))
        out.append(list(pd | nn.ParameterDict({"z": lib.zeros(1)})))
        del pd["a"]
        out.append(list(pd.copy()))
        pd.clear()
        out.append(len(pd))
        return out
    assert [str(x) for x in run(ember)] == [str(x) for x in run(torch)]
    with pytest.raises(RuntimeError, match="ParameterList should not be called."):
        ember.nn.ParameterList()()


def test_flatten_unflatten_identity_repr():
    for cls_args in [("Flatten", ()), ("Flatten", (0, 2)), ("Unflatten", (1, (2, 5))), ("Identity", (3,))]:
        name, args = cls_args
        assert repr(getattr(ember.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    same_error(lambda: ember.nn.Unflatten(1, 3), lambda: torch.nn.Unflatten(1, 3))
    same_error(lambda: ember.nn.Unflatten(1, (2, 2.0)), lambda: torch.nn.Unflatten(1, (2, 2.0)))
    x = ember.ones(2)
    assert ember.nn.Identity(1, k=2)(x) is x


def test_flatten_forward():
    if not hasattr(ember.Tensor, "flatten") or not hasattr(ember.Tensor, "unflatten"):
        pytest.skip("flatten/unflatten ops not available yet")
    x = ember.zeros(2, 3, 4)
    assert ember.nn.Flatten()(x).shape == (2, 12)
    assert ember.nn.Flatten(0, 1)(x).shape == (6, 4)
    assert ember.nn.Unflatten(1, (3, 1))(x).shape == (2, 3, 1, 4)


# -- repr, dir, pickling ------------------------------------------------------------------------------------------
def test_repr_matches_torch():
    assert repr(E_NET()).replace("ember.", "torch.") == repr(T_NET())

    class Multi(ember.nn.Module):
        def extra_repr(self):
            return "line1\nline2"
    m = ember.nn.Sequential(Multi())
    assert repr(m) == "Sequential(\n  (0): Multi(\n    line1\n    line2\n  )\n)"


def test_dir_lists_members():
    e = E_LIN(1, 1)
    d = dir(e)
    assert {"weight", "bias", "count", "forward", "in_features"} <= set(d)
    assert d == sorted(d)
    assert not any(k.isdigit() for k in dir(ember.nn.Sequential(ember.nn.Identity())))


class PickledLin(E_LIN):  # module level, so pickle can find it
    pass


def test_pickle_and_deepcopy_module():
    lin = PickledLin(2, 3)
    lin.weight._data[...] = 2.0
    e = ember.nn.Sequential(OrderedDict(a=lin, tied=lin, rest=ember.nn.ModuleList([ember.nn.Flatten()])))
    e.eval()
    for m in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert type(m.a.weight) is ember.nn.Parameter and m.a.weight.tolist() == e.a.weight.tolist()
        assert m.a.weight.data_ptr() != e.a.weight.data_ptr()
        assert list(m.state_dict()) == list(e.state_dict()) and not m.training
        assert m.tied is m.a  # shared submodules stay shared
        assert "scratch" in m.a._non_persistent_buffers_set


def test_call_fast_path_has_no_hook_machinery(monkeypatch):
    from ember.nn.modules import _hooks
    monkeypatch.setattr(_hooks, "call_with_hooks", None)  # any hook handling would now fail
    m = ember.nn.Sequential(ember.nn.Identity(), ember.nn.Identity())
    x = ember.ones(1)
    assert m(x) is x


def _load_pre_hook(module, state_dict, prefix, *args):
    module.hook_calls = getattr(module, "hook_calls", 0) + 1


def test_load_state_dict_pre_hook_survives_pickling():
    m = PickledLin(1, 1)
    m.register_load_state_dict_pre_hook(_load_pre_hook)
    m2 = pickle.loads(pickle.dumps(m))
    m2.load_state_dict(m.state_dict())
    assert m2.hook_calls == 1 and not hasattr(m, "hook_calls")
