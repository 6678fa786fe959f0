"""nn.Module API surface as libraries use it (naming and traversal, registration errors, ``__setattr__`` rules, repr,
state dicts and their hooks, forward/backward hooks, dtype casts) against torch."""
import copy
import warnings

import numpy as np
import pytest
import torch

import ember


def _outcome(fn, lib):
    """The value of ``fn(lib)``, or the exception's type and message, with the library name normalized."""
    try:
        return repr(fn(lib)).replace("ember", "torch")
    except Exception as e:
        return (type(e).__name__, str(e).replace("ember", "torch"))


def _same(fn):
    e, t = _outcome(fn, ember), _outcome(fn, torch)
    assert e == t


def _lin(lib, i=2, o=2):
    m = lib.nn.Linear(i, o)
    with lib.no_grad():
        m.weight.copy_(lib.arange(o * i, dtype=lib.float32).reshape(o, i) / 3)
        m.bias.fill_(0.5)
    return m


def _g(t):
    return None if t is None else np.round(t.detach().numpy().astype(np.float64), 5).tolist()


def test_named_traversal_with_shared_and_tied():
    """Prefixes, recursion and ``remove_duplicate`` for shared submodules and tied weights; non-persistent buffers
    stay out of the state dict."""
    def f(lib):
        nn = lib.nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(5, 4)
                self.head = nn.Linear(4, 5, bias=False)
                self.head.weight = self.emb.weight
                self.blocks = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
                self.blocks.add_module("again", self.blocks[0])
                self.register_buffer("pos", lib.arange(3), persistent=False)
                self.register_buffer("scale", lib.ones(1))
                self.register_parameter("unused", None)
        m = M()
        return ([n for n, _ in m.named_modules()], [n for n, _ in m.named_modules(remove_duplicate=False)],
                [n for n, _ in m.named_modules(prefix="model")], [n for n, _ in m.named_children()],
                [n for n, _ in m.named_parameters()], [n for n, _ in m.named_parameters(remove_duplicate=False)],
                [n for n, _ in m.named_parameters(prefix="x", recurse=False)], [n for n, _ in m.named_buffers()],
                list(m.state_dict()), len(list(m.parameters())), [type(x).__name__ for x in m.modules()])
    _same(f)


@pytest.mark.parametrize("case", range(17))
def test_registration_errors(case):
    def f(lib):
        nn = lib.nn
        m = nn.Linear(2, 2)
        calls = [lambda: m.add_module("a.b", nn.ReLU()), lambda: m.add_module("", nn.ReLU()),
                 lambda: m.add_module(1, nn.ReLU()), lambda: m.add_module("x", 3),
                 lambda: m.add_module("weight", nn.ReLU()), lambda: m.register_module("a.b", nn.ReLU()),
                 lambda: m.register_buffer("a.b", lib.zeros(1)), lambda: m.register_buffer("", lib.zeros(1)),
                 lambda: m.register_buffer(1, lib.zeros(1)), lambda: m.register_buffer("x", 3),
                 lambda: m.register_buffer("weight", lib.zeros(1)), lambda: m.register_parameter("a.b", None),
                 lambda: m.register_parameter("", None), lambda: m.register_parameter(1, None),
                 lambda: m.register_parameter("x", lib.zeros(1)), lambda: m.register_parameter("x", 3),
                 lambda: m.register_parameter("p", nn.Parameter(lib.ones(1)) * 2)]
        return calls[case]()
    _same(f)


@pytest.mark.parametrize("target", ["get_submodule:2", "get_submodule:0.x", "get_submodule:foo",
                                    "get_parameter:0.x", "get_parameter:1.running_mean", "get_buffer:0.weight",
                                    "get_buffer:1.x", "get_parameter:x.weight", "get_parameter:foo",
                                    "get_buffer:foo", "set_submodule:0.x", "set_submodule:",
                                    "set_submodule:foo", "set_submodule:0.weight", "strict:5", "value:0"])
def test_submodule_access_errors(target):
    def f(lib):
        nn = lib.nn
        m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
        m.foo = 3
        meth, name = target.split(":")
        if meth == "strict":
            return m.set_submodule(name, nn.ReLU(), strict=True)
        if meth == "value":
            return m.set_submodule(name, 3)
        return getattr(m, meth)(name, nn.ReLU()) if meth == "set_submodule" else getattr(m, meth)(name)
    _same(f)


def test_submodule_access():
    def f(lib):
        nn = lib.nn
        m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU()), nn.BatchNorm1d(2))
        got = (m.get_submodule("") is m, tuple(m.get_parameter("0.weight").shape),
               tuple(m.get_buffer("2.running_mean").shape))
        m.set_submodule("1.0", nn.Tanh())
        m.set_submodule("3", nn.GELU())
        return got, repr(m)
    _same(f)


@pytest.mark.parametrize("case", range(8))
def test_setattr_delattr_rules(case):
    def f(lib):
        nn = lib.nn
        m, bn = nn.Linear(2, 2), nn.BatchNorm1d(2)
        if case == 0:
            m.weight = lib.zeros(2, 2)
        elif case == 1:
            nn.Sequential(nn.ReLU())[0] = 3
        elif case == 2:
            bn.running_mean = 3
        elif case == 3:
            m.bias = None
            return m.bias, [n for n, _ in m.named_parameters()], list(m.state_dict())
        elif case == 4:
            bn.running_mean = nn.Parameter(lib.zeros(2))
            bn.running_var = lib.ones(2)
            return [n for n, _ in bn.named_parameters()], [n for n, _ in bn.named_buffers()], list(bn.state_dict())
        elif case == 5:
            del m.weight
            del bn.running_mean
            return [n for n, _ in m.named_parameters()], hasattr(m, "weight"), [n for n, _ in bn.named_buffers()]
        elif case == 6:
            m.nonexistent
        else:
            s = nn.Sequential(nn.Linear(1, 1))
            s.extra = nn.ReLU()
            s.extra = None
            s.w = 3
            s.w = nn.Parameter(lib.ones(1))
            return [n for n, _ in s.named_children()], s.extra, [n for n, _ in s.named_parameters()], "w" in s.__dict__
    _same(f)


def test_register_before_init_and_missing_forward():
    def f(lib):
        nn = lib.nn

        class P(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(lib.zeros(1))

        class B(nn.Module):
            def __init__(self):
                self.register_buffer("b", lib.zeros(1))
        out = []
        for call in (P, B, lambda: nn.Module()(lib.ones(1)), lambda: nn.Module(foo=1)):
            try:
                call()
            except Exception as e:
                out.append((type(e).__name__, str(e)))
        return out
    _same(f)


def test_dir_lists_registered_names():
    def f(lib):
        m = lib.nn.Linear(2, 2)
        m.register_buffer("bb", lib.zeros(1))
        m.sub = lib.nn.ReLU()
        d = dir(m)
        return [x for x in ("weight", "bias", "bb", "sub", "forward", "in_features") if x in d], d == sorted(d)
    _same(f)


def test_repr_nesting_and_repeated_layers():
    """Repeated identical children collapse to ``(0-3): 4 x Linear(...)``; multi-line ``extra_repr`` indents."""
    def f(lib):
        nn = lib.nn

        class Blk(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(2, 2)
                self.act = nn.GELU(approximate="tanh")

            def extra_repr(self):
                return "hello\nworld"

        class E(nn.Module):
            def extra_repr(self):
                return "k=1"

        def blk():
            return nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3), nn.ReLU())
        m = nn.Sequential(*[nn.Linear(4, 4) for _ in range(4)], nn.ReLU(), nn.ReLU(), nn.Linear(4, 2),
                          nn.ModuleList([nn.Conv2d(3, 8, 3, padding=1) for _ in range(3)]),
                          nn.ModuleDict({"a": nn.LayerNorm(4), "b": nn.Dropout(0.1)}))
        return (repr(m), repr(nn.ModuleList([Blk(), Blk(), nn.Sequential()])), repr(E()), repr(nn.Module()),
                repr(nn.Sequential(blk(), blk(), blk(), nn.Conv2d(3, 1, 1))),
                repr(nn.ParameterList([nn.Parameter(lib.zeros(2, 3))])))
    _same(f)


def test_state_dict_prefix_keep_vars_and_metadata():
    def f(lib):
        nn = lib.nn

        class M(nn.Module):
            _version = 3

            def __init__(self):
                super().__init__()
                self.l = nn.Linear(2, 2)
                self.bn = nn.BatchNorm1d(2)
        m = M()
        sd = m.state_dict(prefix="model.")
        kv = m.state_dict(keep_vars=True)
        return (list(sd), {k: dict(v) for k, v in sd._metadata.items()}, kv["l.weight"] is m.l.weight,
                type(kv["l.weight"]).__name__, type(sd["model.l.weight"]).__name__, sd["model.l.weight"].requires_grad,
                str(sd["model.bn.num_batches_tracked"].dtype))
    _same(f)


def test_load_state_dict_non_strict_and_errors():
    def f(lib):
        nn = lib.nn
        m = nn.Sequential(nn.Sequential(nn.Linear(2, 2)), nn.BatchNorm1d(2))
        sd = m.state_dict()
        del sd["0.0.bias"]
        sd["extra.w"] = lib.zeros(1)
        r = m.load_state_dict(sd, strict=False)
        bad = m.state_dict()
        bad["0.0.weight"] = lib.zeros(3, 2)
        del bad["1.running_var"]
        bad["x"] = lib.zeros(1)
        try:
            m.load_state_dict(bad)
            err = None
        except RuntimeError as e:
            err = str(e)
        return (r.missing_keys, r.unexpected_keys, repr(r), type(r).__name__, repr(m.load_state_dict(m.state_dict())),
                err)
    _same(f)


def test_load_state_dict_assign_and_cast():
    def f(lib):
        nn = lib.nn
        m = nn.Linear(2, 2)
        m.bias.requires_grad_(False)
        m.load_state_dict({"weight": lib.ones(2, 2, dtype=lib.float64), "bias": lib.zeros(2)}, assign=True)
        c = nn.Linear(2, 2)
        c.load_state_dict({"weight": lib.ones(2, 2, dtype=lib.float64), "bias": lib.ones(2, dtype=lib.float16)})
        with lib.device("meta"):
            meta = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
        meta.load_state_dict(nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)).state_dict(), assign=True)
        return (type(m.weight).__name__, str(m.weight.dtype), m.weight.requires_grad, m.bias.requires_grad,
                str(c.weight.dtype), c.weight.tolist(), meta[0].weight.device.type, meta[1].running_mean.device.type)
    _same(f)


def test_state_dict_overrides_extra_state_and_hooks():
    def f(lib):
        nn = lib.nn
        log = []

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(lib.ones(2))
                self.k = 5
                self.cfg = {"a": 1}

            def _save_to_state_dict(self, destination, prefix, keep_vars):
                super()._save_to_state_dict(destination, prefix, keep_vars)
                destination[prefix + "k"] = lib.tensor(self.k)

            def _load_from_state_dict(self, sd, prefix, lm, strict, missing, unexpected, errors):
                log.append(("load", prefix, dict(lm)))
                self.k = int(sd.pop(prefix + "k"))
                super()._load_from_state_dict(sd, prefix, lm, strict, missing, unexpected, errors)

            def get_extra_state(self):
                return self.cfg

            def set_extra_state(self, state):
                self.cfg = state

        p = nn.Sequential(M())
        p[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))
        p.register_state_dict_post_hook(lambda mod, sd, prefix, lm: log.append(("post", prefix, list(sd))))
        p[0].register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, lm, strict, missing, unexpected, errors: log.append(("lpre", prefix, strict)))

        def lpost(mod, incompatible):
            log.append(("lpost", list(incompatible.missing_keys), list(incompatible.unexpected_keys)))
            incompatible.unexpected_keys.clear()
        p.register_load_state_dict_post_hook(lpost)
        sd = p.state_dict()
        sd["0.k"] = lib.tensor(9)
        sd["0._extra_state"] = {"b": 2}
        sd["junk"] = lib.zeros(1)
        r = p.load_state_dict(sd)
        return log, repr(r), p[0].k, p[0].cfg
    _same(f)


def test_forward_hooks_kwargs_prepend_always_call():
    def f(lib):
        nn = lib.nn
        log = []

        class M(nn.Module):
            def forward(self, x, scale=1.0, *, bias=0.0):
                return x * scale + bias

        m = M()
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.register_forward_pre_hook(lambda mod, args: log.append("first pre"), prepend=True)
        m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {**kwargs, "bias": 5.0}), with_kwargs=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: out * 2 if kwargs["bias"] == 5.0 else out,
                                with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append("first post"), prepend=True)
        y = m(lib.ones(1), scale=3.0)
        single = nn.Identity()
        single.register_forward_pre_hook(lambda mod, args: args[0] + 1)

        class Bad(nn.Module):
            def forward(self, x):
                raise ValueError("boom")
        b = Bad()
        b.register_forward_hook(lambda mod, a, o: log.append(("always", o)), always_call=True)
        b.register_forward_hook(lambda mod, a, o: log.append("normal"))
        try:
            b(lib.zeros(1))
        except ValueError as e:
            log.append(str(e))
        bad = M()
        bad.register_forward_pre_hook(lambda mod, a, k: 3, with_kwargs=True)
        try:
            bad(lib.ones(1))
        except RuntimeError as e:
            log.append(str(e))
        return log, y.tolist(), single(lib.zeros(1)).tolist()
    _same(f)


def test_global_module_hooks():
    def f(lib):
        from importlib import import_module
        mm = import_module(lib.__name__ + ".nn.modules.module")
        log = []
        h1 = mm.register_module_forward_hook(lambda mod, a, o: log.append(type(mod).__name__))
        h2 = mm.register_module_forward_pre_hook(lambda mod, a: log.append("pre" + type(mod).__name__))
        h3 = mm.register_module_full_backward_hook(lambda mod, gi, go: log.append("bw" + type(mod).__name__))
        try:
            net = lib.nn.Sequential(lib.nn.Linear(1, 1), lib.nn.Tanh())
            net(lib.ones(1, 1, requires_grad=True)).sum().backward()
        finally:
            h1.remove(), h2.remove(), h3.remove()
        lib.nn.ReLU()(lib.zeros(1))
        return log, mm._EXTRA_STATE_KEY_SUFFIX, len(mm._global_forward_hooks)
    _same(f)


def test_full_backward_hooks():
    """Pre-hooks rescale grad_output; grad_input covers positional tensor inputs (None where not requiring grad);
    a module used twice fires twice."""
    def f(lib):
        log = []
        m = _lin(lib)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(([_g(g) for g in gi], [_g(g) for g in go])))
        x = lib.ones(1, 2, requires_grad=True)
        m(m(x)).pow(2).sum().backward()
        m(lib.ones(1, 2)).sum().backward()

        class Two(lib.nn.Module):
            def forward(self, a, b, n):
                return a * b * n, a + 1
        t = Two()
        t.register_full_backward_hook(lambda mod, gi, go: log.append(([_g(g) for g in gi], [_g(g) for g in go])))
        a = lib.tensor([1., 2.], requires_grad=True)
        o1, _ = t(a, lib.tensor([3., 4.]), 2)
        (o1.sum() * 2).backward()
        return log, _g(x.grad), _g(m.weight.grad), _g(a.grad)
    _same(f)


@pytest.mark.parametrize("cast", ["half", "bfloat16", "double", "float", "to16", "to_device_dtype", "to_tensor",
                                  "to_complex", "type"])
def test_dtype_casts_touch_floating_only(cast):
    def f(lib):
        nn = lib.nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.l = nn.Linear(2, 2)
                self.register_buffer("idx", lib.arange(3))
                self.register_buffer("mask", lib.ones(2, dtype=lib.bool))
        m = M()
        w = m.l.weight
        m.l(lib.ones(1, 2)).sum().backward()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = {"to16": lambda: m.to(lib.float16), "to_device_dtype": lambda: m.to("cpu", lib.float64),
                 "to_tensor": lambda: m.to(lib.zeros(1, dtype=lib.float64)),
                 "to_complex": lambda: m.to(dtype=lib.complex64),
                 "type": lambda: m.type(lib.float64)}.get(cast, lambda: getattr(m, cast)())()
        return (r is m, m.l.weight is w, str(m.l.weight.dtype), str(m.l.weight.grad.dtype), str(m.idx.dtype),
                str(m.mask.dtype), type(m.l.weight).__name__, m.l.weight.requires_grad)
    _same(f)


@pytest.mark.parametrize("args,kwargs", [
    (("cpu",), {"dtype": "float32"}), (("cpu", "cpu"), {}), (("float32",), {"device": "cpu"}),
    (("tensor",), {"dtype": "float64"}), (("float32", "float64"), {}), (("tensor", "cpu"), {}), ((), {"foo": 1}),
    ((), {"non_blocking": 1}), (("cpu", "float64", True, False, True), {}), (("cpu",), {"device": "cpu"}),
    (("int64",), {}), (("cpu", None, False), {"copy": True}),
    ((None, None), {}), (("cpu", "float64", True), {}), (("float64", False), {}), (("tensor", True), {}),
    (("cpu",), {"dtype": "float64"}), ((), {"device": "cpu", "dtype": "float64", "non_blocking": True})])
def test_module_to_argument_forms(args, kwargs):
    """Valid ``Module.to`` forms cast; invalid combinations raise torch's TypeError."""
    def f(lib):
        def conv(a):
            if a == "tensor":
                return lib.zeros(1, dtype=lib.float64)
            return getattr(lib, a) if isinstance(a, str) and a != "cpu" else a
        m = lib.nn.Linear(1, 1)
        m.to(*[conv(a) for a in args], **{k: conv(v) if k == "dtype" else v for k, v in kwargs.items()})
        return str(m.weight.dtype)
    e, t = _outcome(f, ember), _outcome(f, torch)
    if isinstance(t, tuple) and t[0] == "TypeError":
        assert e[0] == "TypeError" and e[1].split(", but")[0] == t[1].split(", but")[0]
    else:
        assert e == t


def test_to_empty_requires_grad_zero_grad_train_apply():
    def f(lib):
        nn = lib.nn
        with lib.device("meta"):
            meta = nn.Linear(3, 2)
        meta.to_empty(device="cpu")
        m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(), nn.Sequential(nn.BatchNorm1d(2)))
        m(lib.ones(3, 2)).sum().backward()
        m.zero_grad(set_to_none=False)
        zeros = [p.grad.tolist() for p in m.parameters()]
        m.zero_grad()
        none = [p.grad for p in m.parameters()]
        m.requires_grad_(False)
        m[0].requires_grad_()
        rg = [p.requires_grad for p in m.parameters()]
        ev = m.eval() is m
        flags = [x.training for x in m.modules()]
        m.train()
        m[2].train(False)
        flags2 = [x.training for x in m.modules()]
        order = []
        m.apply(lambda x: order.append(type(x).__name__))
        gen = m.parameters()
        return (meta.weight.device.type, type(meta.weight).__name__, meta.weight.requires_grad, zeros, none, rg, ev,
                flags, flags2, order, len(list(gen)), len(list(gen)))
    _same(f)


def test_deepcopy_keeps_hooks_and_ties():
    def f(lib):
        nn = lib.nn
        log = []
        m = nn.Sequential(nn.Embedding(3, 2), nn.Linear(2, 3, bias=False))
        m[1].weight = m[0].weight
        m[1].register_forward_hook(lambda mod, a, o: log.append(tuple(o.shape)))
        m2 = copy.deepcopy(m)
        m2[1](lib.zeros(1, 2))
        return log, m2[1].weight is m2[0].weight, m2[0].weight is m[0].weight, len(list(m2.parameters()))
    _same(f)


def test_fuse_conv_bn_eval_matches():
    res = []
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 2, 3, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    for lib in (ember, torch):
        conv, bn = lib.nn.Conv2d(2, 3, 3), lib.nn.BatchNorm2d(3)
        with lib.no_grad():
            conv.weight.copy_(lib.tensor(w))
            conv.bias.copy_(lib.tensor(b))
            bn.running_mean.copy_(lib.tensor([0.1, 0.2, 0.3]))
            bn.running_var.copy_(lib.tensor([1.5, 0.5, 2.]))
            bn.weight.copy_(lib.tensor([1.1, 0.9, 1.2]))
            bn.bias.copy_(lib.tensor([0.1, -0.1, 0.]))
        fused = lib.nn.utils.fusion.fuse_conv_bn_eval(conv.eval(), bn.eval())
        res.append((fused(lib.tensor(x)).detach().numpy(), fused.weight.requires_grad))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-5, atol=1e-5)
    assert res[0][1] == res[1][1]


def test_compile_returns_none_and_module_still_runs():
    def f(lib):
        m = lib.nn.Linear(2, 2)
        return m.compile(), tuple(m(lib.ones(1, 2)).shape)
    validate = torch.distributions.Distribution._validate_args
    try:
        _same(f)
    finally:  # running a compiled module switches torch's distribution validation off for the whole process
        torch.distributions.Distribution.set_default_validate_args(validate)
