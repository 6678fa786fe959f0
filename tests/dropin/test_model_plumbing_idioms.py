"""Model plumbing idioms (module surgery, hooks, state dicts, checkpoints, optimizers and schedulers, data pipelines)
against torch."""
import collections
import io
import math
import typing
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data

import ember
import ember.utils.data

LIBS = (ember, torch)
X = np.random.default_rng(9).standard_normal((6, 3)).astype(np.float32)
Y = np.random.default_rng(10).standard_normal((6, 2)).astype(np.float32)


def _np(t):
    return t.detach().double().numpy()


def _close(e, t, rtol=1e-6, atol=1e-7):
    assert tuple(e.shape) == tuple(t.shape) and str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(_np(e), _np(t), rtol=rtol, atol=atol)


def _net(lib, bn=True):
    """Linear -> ReLU -> (BatchNorm1d) -> Linear with the same weights in ember and torch."""
    nn = lib.nn
    layers = [nn.Linear(3, 4), nn.ReLU()] + ([nn.BatchNorm1d(4)] if bn else []) + [nn.Linear(4, 2)]
    m = nn.Sequential(*layers)
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape)).astype(np.float32)))
    return m


def _both(fn):
    return fn(ember), fn(torch)


def _str(x):
    return str(x).replace("ember", "torch")


# -- module surgery -------------------------------------------------------------------------------------------------
def test_sequential_surgery_names_and_repr():
    """Slicing, insert/append/extend, ``del m[i]``/``del m[a:b]``, setattr replacement found by ``named_modules``,
    feature extractors from ``children()``: the same names, repr and output shapes."""
    def run(lib):
        nn = lib.nn
        m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 5))
        head = m[1:3]
        feats = nn.Sequential(*list(m.children())[:-2])
        m.insert(1, nn.Dropout())
        m.append(nn.Softmax(dim=1))
        m.extend([nn.Identity(), nn.Tanh()])
        del m[0]
        del m[2:4]
        for name, mod in list(m.named_modules()):
            if isinstance(mod, nn.ReLU):
                setattr(m, name, nn.GELU())
        m[-1] = nn.Identity()
        return (type(head).__name__, [n for n, _ in head.named_children()], repr(m), list(m.state_dict()),
                tuple(feats(lib.ones(2, 3, 6, 6)).shape), [n for n, _ in m.named_modules(prefix="net")])
    e, t = _both(run)
    assert _str(e) == _str(t)


def test_nested_replacement_and_identity_swap():
    """Replacing a nested ReLU through ``get_submodule(parent)`` and the classifier by ``nn.Identity``."""
    def run(lib):
        nn = lib.nn
        m = nn.Sequential(collections.OrderedDict(a=nn.Sequential(nn.Linear(3, 3), nn.ReLU()), fc=nn.Linear(3, 2)))
        for name, mod in list(m.named_modules()):
            if isinstance(mod, nn.ReLU):
                parent, _, child = name.rpartition(".")
                setattr(m.get_submodule(parent), child, nn.SiLU())
        with lib.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape)).astype(np.float32)))
        m.fc = nn.Identity()
        return repr(m), list(m.state_dict()), m(lib.tensor(X))
    e, t = _both(run)
    assert _str(e[:2]) == _str(t[:2])
    _close(e[2], t[2])


def test_apply_init_freeze_and_param_groups():
    """``apply(init_fn)`` with isinstance checks, freezing with ``requires_grad_(False)``, an optimizer over
    ``filter(lambda p: p.requires_grad, ...)``: the same trained parameters."""
    def run(lib):
        nn = lib.nn
        m = _net(lib)

        def init(mod):
            if isinstance(mod, nn.Linear):
                nn.init.constant_(mod.weight, 0.25)
                nn.init.zeros_(mod.bias)
        assert m.apply(init) is m
        assert m[0].requires_grad_(False) is m[0]
        opt = lib.optim.SGD(filter(lambda p: p.requires_grad, m.parameters()), lr=0.1, momentum=0.9)
        for _ in range(2):
            opt.zero_grad()
            ((m(lib.tensor(X)) - lib.tensor(Y)) ** 2).mean().backward()
            opt.step()
        return len(opt.param_groups[0]["params"]), [p.grad is None for p in m.parameters()], list(m.parameters())
    e, t = _both(run)
    assert e[:2] == t[:2]
    for a, b in zip(e[2], t[2]):
        _close(a, b, rtol=1e-5, atol=1e-6)


def test_dtype_casts_keep_integer_buffers():
    """``half()``/``double()``/``to(bfloat16)`` cast float parameters and buffers; ``num_batches_tracked`` stays
    int64."""
    def run(lib):
        m = _net(lib)
        out = []
        for cast in (lambda: m.half(), lambda: m.double(), lambda: m.to(lib.bfloat16), lambda: m.to(dtype=lib.float32)):
            cast()
            out.append([(n, _str(v.dtype)) for n, v in m.state_dict().items()])
        return out
    e, t = _both(run)
    assert e == t
    assert ("2.num_batches_tracked", "torch.int64") in e[0]


def test_containers_and_getattr_errors():
    """ModuleDict/ParameterList/ParameterDict state-dict keys and repr; missing attributes raise AttributeError
    with torch's message."""
    def run(lib):
        nn = lib.nn
        d = nn.ModuleDict({"b": nn.Linear(1, 1), "a": nn.ReLU()})
        d["c"] = nn.Tanh()
        d.pop("a")
        pl = nn.ParameterList([nn.Parameter(lib.ones(2)), nn.Parameter(lib.zeros(3))])
        pl.append(nn.Parameter(lib.ones(1)))
        m = nn.Module()
        m.d, m.pl = d, pl
        msgs = []
        for get in (lambda: m.foo, lambda: nn.Linear(1, 1).weightt):
            with pytest.raises(AttributeError) as info:
                get()
            msgs.append(str(info.value))
        return repr(m), list(m.state_dict()), msgs
    e, t = _both(run)
    assert _str(e) == _str(t)


# -- hooks ----------------------------------------------------------------------------------------------------------
def test_forward_hooks_with_kwargs_and_removal():
    """Pre-hooks and hooks, with and without kwargs, ``prepend``/``always_call``, removal through handles."""
    def run(lib):
        m = _net(lib, bn=False)
        log = []

        def pre(mod, args):
            log.append("pre")
            return (args[0] + 1,)

        def prekw(mod, args, kwargs):
            log.append(("prekw", sorted(kwargs)))
            return args, kwargs

        def post(mod, args, kwargs, out):
            log.append(("kw", len(args)))
            return out * 2
        handles = [m[0].register_forward_pre_hook(pre), m[2].register_forward_pre_hook(prekw, with_kwargs=True),
                   m[2].register_forward_hook(post, with_kwargs=True),
                   m.register_forward_hook(lambda *a: log.append("first"), prepend=True),
                   m.register_forward_hook(lambda *a: log.append("always"), always_call=True)]
        y = m(lib.tensor(X))
        for h in handles:
            h.remove()
        return log, y, m(lib.tensor(X))
    e, t = _both(run)
    assert e[0] == t[0]
    _close(e[1], t[1])
    _close(e[2], t[2])


def test_full_backward_hook_gives_zeros_for_tensor_inputs_without_grad():
    """grad_input of a module with a mask input: the mask's entry is a zero tensor of its dtype, a non-tensor
    argument's is None, when some input needs a gradient; all None when none does."""
    def run(lib):
        class Masked(lib.nn.Module):
            def forward(self, a, mask, n):
                return a.masked_fill(mask, 0) * n
        m = Masked()
        seen = []
        m.register_full_backward_hook(lambda mod, gi, go: seen.append(
            [None if g is None else (_str(g.dtype), _np(g).tolist()) for g in gi]))
        x = lib.tensor(X[:2], requires_grad=True)
        m(x, x > 0, 3).sum().backward()
        m(x, x < 0, lib.tensor(2.0, dtype=lib.float64)).sum().backward()
        lin = lib.nn.Linear(3, 1)
        lin.register_full_backward_hook(lambda mod, gi, go: seen.append(gi))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lin(lib.tensor(X)).sum().backward()
        return seen, x.grad
    e, t = _both(run)
    assert e[0] == t[0]
    _close(e[1], t[1])


def test_full_backward_hook_skipped_for_dict_outputs():
    """A module returning a dict: torch warns at call time and never runs its full backward hook, even though the
    gradient reaches the module's input."""
    def run(lib):
        class Heads(lib.nn.Module):
            def forward(self, x):
                return {"out": x * 2, "aux": x.sum()}
        m = Heads()
        seen = []
        m.register_full_backward_hook(lambda mod, gi, go: seen.append(len(gi)))
        x = lib.tensor(X[:2], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = m(x)
        out["out"].sum().backward()
        return seen, [str(w.message)[:60] for w in caught], x.grad
    e, t = _both(run)
    assert e[:2] == t[:2] and e[0] == [] and len(e[1]) == 1
    _close(e[2], t[2])


def test_full_backward_hooks_modify_gradients():
    """A backward pre-hook scaling grad_output and a hook clamping grad_input change the gradients as in torch."""
    def run(lib):
        m = _net(lib, bn=False)
        m[2].register_full_backward_pre_hook(lambda mod, go: (go[0] * 0.5,))
        m[1].register_full_backward_hook(lambda mod, gi, go: tuple(g.clamp(-0.1, 0.1) for g in gi))
        x = lib.tensor(X, requires_grad=True)
        m(x).sum().backward()
        return x.grad, m[0].weight.grad, m[2].weight.grad
    for a, b in zip(*_both(run)):
        _close(a, b, rtol=1e-5, atol=1e-6)


def test_state_dict_post_hook_runs_on_its_module_only():
    """A state-dict post hook registered on a child runs once, with the child's prefix."""
    def run(lib):
        m = _net(lib, bn=False)
        log = []

        def post(module, sd, prefix, local_metadata):
            log.append(prefix)
            sd[prefix + "extra"] = lib.tensor(1.0)
        m[2].register_state_dict_post_hook(post)
        m[0].register_state_dict_pre_hook(lambda mod, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))
        return log, list(m.state_dict(keep_vars=True))
    e, t = _both(run)
    assert e == t == ([("pre", "0.", True), "2."], ["0.weight", "0.bias", "2.weight", "2.bias", "2.extra"])


def test_load_state_dict_hooks_rename_old_keys():
    """A load pre-hook renaming a legacy key and a post-hook that sees the incompatible keys."""
    def run(lib):
        m = _net(lib, bn=False)
        log = []

        def pre(state_dict, prefix, local_metadata, strict, missing, unexpected, error_msgs):
            if prefix + "old_w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "old_w")
        m[0]._register_load_state_dict_pre_hook(pre)
        m.register_load_state_dict_post_hook(lambda mod, inc: log.append((inc.missing_keys, inc.unexpected_keys)))
        sd = m.state_dict()
        sd["0.old_w"] = sd.pop("0.weight") * 2
        return repr(m.load_state_dict(sd)), log, m[0].weight
    e, t = _both(run)
    assert e[:2] == t[:2]
    _close(e[2], t[2])


def test_optimizer_step_hooks_see_the_optimizer_in_args():
    """Step pre/post hooks get ``args`` starting with the optimizer, as torch's; a pre-hook may rewrite the call."""
    def run(lib):
        m = _net(lib, bn=False)
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        log = []

        def pre(o, args, kwargs):
            log.append((args[0] is o, len(args), dict(kwargs)))
            return (o,), {"closure": lambda: lib.tensor(3.0)}
        opt.register_step_pre_hook(pre)
        opt.register_step_post_hook(lambda o, args, kwargs: log.append(("post", args[0] is o, sorted(kwargs))))
        loss = opt.step(None)
        return log, float(loss)
    e, t = _both(run)
    assert e == t == ([(True, 2, {}), ("post", True, ["closure"])], 3.0)


# -- state dicts ----------------------------------------------------------------------------------------------------
def test_load_state_dict_reports():
    """``strict=False`` returns missing/unexpected keys; strict loading and shape mismatches raise torch's
    RuntimeError text; a ``module.`` prefix is stripped by ``nn.modules.utils``'s helper."""
    def run(lib):
        m = _net(lib)
        sd = m.state_dict()
        del sd["3.bias"]
        sd["extra.w"] = lib.ones(1)
        r = m.load_state_dict(sd, strict=False)
        msgs = []
        for bad in ({**m.state_dict(), "0.weight": lib.ones(5, 3)}, sd):
            with pytest.raises(RuntimeError) as info:
                m.load_state_dict(bad)
            msgs.append(str(info.value))
        wrapped = collections.OrderedDict(("module." + k, v) for k, v in m.state_dict().items())
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(wrapped, "module.")
        return r.missing_keys, r.unexpected_keys, repr(r), msgs, list(wrapped), repr(_net(lib).load_state_dict(wrapped))
    e, t = _both(run)
    assert _str(e) == _str(t)


def test_buffers_persistence_keep_vars_and_extra_state():
    """Non-persistent buffers stay out of the state dict; ``keep_vars`` keeps Parameters; extra state round-trips."""
    def run(lib):
        nn = lib.nn

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(2, 2)
                self.register_buffer("a", lib.ones(2))
                self.register_buffer("cache", lib.zeros(2), persistent=False)
                self.counter = 0

            def get_extra_state(self):
                return {"counter": self.counter}

            def set_extra_state(self, state):
                self.counter = state["counter"]
        m = M()
        m.counter = 5
        sd = m.state_dict(keep_vars=True)
        m2 = M()
        r = m2.load_state_dict(m.state_dict())
        return (list(sd), [type(v).__name__ for v in sd.values() if not isinstance(v, dict)],
                [n for n, _ in m.named_buffers()], repr(r), m2.counter)
    e, t = _both(run)
    assert e == t


# -- checkpoints ----------------------------------------------------------------------------------------------------
_OPTS = {
    "sgd": lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "adamw": lambda lib, p: lib.optim.AdamW(p, lr=0.01, amsgrad=True),
    "rmsprop": lambda lib, p: lib.optim.RMSprop(p, lr=0.01, momentum=0.5, centered=True),
}
_SCHEDS = {
    "onecycle": lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=0.1, total_steps=20),
    "sequential": lambda lib, o: lib.optim.lr_scheduler.SequentialLR(
        o, [lib.optim.lr_scheduler.LinearLR(o, 0.1, total_iters=2), lib.optim.lr_scheduler.ExponentialLR(o, 0.9)],
        milestones=[2]),
    "chained": lambda lib, o: lib.optim.lr_scheduler.ChainedScheduler(
        [lib.optim.lr_scheduler.ConstantLR(o, 0.5, total_iters=4), lib.optim.lr_scheduler.ExponentialLR(o, 0.9)]),
    "warm_restarts": lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2,
                                                                                         eta_min=1e-4),
}


def _train(lib, m, opt, sched, n):
    losses = []
    for _ in range(n):
        opt.zero_grad()
        loss = ((m(lib.tensor(X)) - lib.tensor(Y)) ** 2).mean()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("opt_name,sched_name", [("sgd", "onecycle"), ("adamw", "sequential"),
                                                 ("rmsprop", "chained"), ("adamw", "warm_restarts")])
def test_checkpoint_resume_gives_identical_steps(opt_name, sched_name):
    """Save {model, optimizer, scheduler, epoch}, load with ``weights_only=True`` into fresh objects: training goes
    on exactly as without the interruption, and as torch's."""
    def run(lib):
        m = _net(lib)
        opt = _OPTS[opt_name](lib, m.parameters())
        sched = _SCHEDS[sched_name](lib, opt)
        _train(lib, m, opt, sched, 3)
        buf = io.BytesIO()
        lib.save({"model": m.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                  "epoch": 3}, buf)
        ref = _train(lib, m, opt, sched, 3)
        buf.seek(0)
        ck = lib.load(buf, weights_only=True)
        m2 = _net(lib)
        m2.load_state_dict(ck["model"])
        opt2 = _OPTS[opt_name](lib, m2.parameters())
        sched2 = _SCHEDS[sched_name](lib, opt2)  # before loading: a scheduler's constructor sets the group's lr
        opt2.load_state_dict(ck["optimizer"])
        sched2.load_state_dict(ck["scheduler"])
        got = _train(lib, m2, opt2, sched2, 3)
        assert got == ref and ck["epoch"] == 3
        return ref, sched2.get_last_lr(), list(m2.parameters())
    e, t = _both(run)
    np.testing.assert_allclose(e[0], t[0], rtol=1e-5)
    np.testing.assert_allclose(e[1], t[1], rtol=1e-12)
    for a, b in zip(e[2], t[2]):
        _close(a, b, rtol=1e-4, atol=1e-5)


# -- schedulers -----------------------------------------------------------------------------------------------------
def test_scheduler_trajectories():
    """Learning rates per step of OneCycleLR (two groups, three phases), fractional-epoch warm restarts and
    ReduceLROnPlateau with cooldown and per-group ``min_lr``."""
    def run(lib):
        S = lib.optim.lr_scheduler
        out = []
        for make, metrics in [
            (lambda o: S.OneCycleLR(o, max_lr=[0.1, 0.05], total_steps=12, anneal_strategy="linear", three_phase=True),
             None),
            (lambda o: S.ReduceLROnPlateau(o, factor=0.5, patience=1, threshold=0.01, cooldown=1,
                                           min_lr=[0.01, 0.002]), [1, 1, 1, .5, .5, .5, .5, .1, .1, .1, .1, .1]),
            (lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=1e-3), "frac")]:
            m = _net(lib, bn=False)
            opt = lib.optim.SGD([{"params": m[0].parameters()}, {"params": m[2].parameters(), "lr": 0.01}], lr=0.1,
                                momentum=0.9)
            s = make(opt)
            lrs = []
            for i in range(12):
                opt.step()
                if metrics == "frac":
                    s.step(i // 4 + (i % 4) / 4)
                elif metrics:
                    s.step(metrics[i])
                else:
                    s.step()
                lrs.append([g["lr"] for g in opt.param_groups] + [g.get("momentum") for g in opt.param_groups])
            out.append(lrs)
        return out
    e, t = _both(run)
    np.testing.assert_allclose(np.array(e, float), np.array(t, float), rtol=1e-12, atol=1e-15)


# -- data -----------------------------------------------------------------------------------------------------------
Point = collections.namedtuple("Point", ["x", "y"])


def test_default_collate_structures():
    """Dicts, namedtuples, numpy arrays and scalars, strings, nested lists, as torch collates them."""
    def run(lib):
        dc = lib.utils.data.default_collate
        out = dc([{"img": np.full((2, 2), i, np.uint8), "label": i, "name": f"s{i}", "w": 0.5 * i,
                   "pt": Point(i, float(i))} for i in range(3)])
        res = {k: (_str(v.dtype), _np(v).tolist()) if hasattr(v, "dtype") else v for k, v in out.items() if k != "pt"}
        res["pt"] = (type(out["pt"]).__name__, [_np(v).tolist() for v in out["pt"]])
        res["np"] = [_str(dc([np.float16(1), np.float16(2)]).dtype), _np(dc([[1, 2], [3, 4]])[1]).tolist()]
        with pytest.raises(RuntimeError):
            dc([[1, 2], [3]])
        return res
    e, t = _both(run)
    assert e == t


def test_utils_data_private_collate_module():
    """``utils.data._utils.collate``: extending ``default_collate_fn_map`` and calling ``collate`` with it."""
    from ember.utils.data._utils.collate import collate, default_collate_fn_map, np_str_obj_array_pattern
    import torch.utils.data._utils.collate as tc
    assert ember.utils.data._utils.collate.default_collate is ember.utils.data.default_collate
    assert np_str_obj_array_pattern.pattern == tc.np_str_obj_array_pattern.pattern
    res = []
    for lib, fmap, coll in ((ember, default_collate_fn_map, collate), (torch, tc.default_collate_fn_map, tc.collate)):
        fmap = dict(fmap)
        fmap[lib.Tensor] = lambda batch, *, collate_fn_map=None: lib.stack(batch).sum(0)
        fmap[str] = lambda batch, *, collate_fn_map=None: "+".join(batch)
        out = coll([{"a": lib.ones(2), "s": "x"}, {"a": lib.ones(2) * 2, "s": "y"}], collate_fn_map=fmap)
        res.append((_np(out["a"]).tolist(), out["s"]))
    assert res[0] == res[1] == ([3.0, 3.0], "x+y")


def test_int_overflow_raises_value_error():
    """A Python int beyond int64 in a batch (or a tensor literal) raises ValueError, as torch's."""
    for lib in LIBS:
        with pytest.raises(ValueError, match="Overflow"):
            lib.utils.data.default_collate([2 ** 63, 1])
        with pytest.raises(ValueError, match="Overflow"):
            lib.tensor([[2 ** 63], [1]], dtype=lib.int32)
    _close(ember.tensor([2 ** 63, 1], dtype=ember.float32), torch.tensor([2 ** 63, 1], dtype=torch.float32))


def test_dataloader_batching_modes():
    """batch_size/drop_last/batch_size=None/sampler/batch_sampler/collate_fn and ``len(dataloader)``."""
    def run(lib):
        D = lib.utils.data

        class DS(D.Dataset):
            def __len__(self):
                return 10

            def __getitem__(self, i):
                return {"x": lib.full((2,), float(i)), "y": i}

        def batches(**kw):
            dl = D.DataLoader(DS(), **kw)
            return len(dl), [{k: _np(v).tolist() if hasattr(v, "dtype") else v for k, v in b.items()}
                             if isinstance(b, dict) else b for b in dl]
        return [batches(batch_size=3), batches(batch_size=3, drop_last=True), batches(batch_size=None)[0],
                batches(batch_size=4, sampler=[9, 1, 3, 5, 7]), batches(batch_sampler=[[0, 1], [5, 6, 7]]),
                batches(batch_size=4, collate_fn=lambda b: [s["y"] for s in b])]
    e, t = _both(run)
    assert e == t


def test_splits_samplers_and_dataset_combinators():
    """random_split by fractions (lengths, disjoint cover), WeightedRandomSampler/SubsetRandomSampler properties,
    ConcatDataset/Subset/StackDataset/TensorDataset indexing."""
    def run(lib):
        D = lib.utils.data
        ds = D.TensorDataset(lib.arange(10), lib.arange(10) * 2)
        parts = D.random_split(ds, [0.7, 0.2, 0.1], generator=lib.Generator().manual_seed(42))
        cover = sorted(i for p in parts for i in p.indices)
        w = list(D.WeightedRandomSampler([0.0, 1.0, 0.0, 2.0], 50, generator=lib.Generator().manual_seed(0)))
        s = list(D.SubsetRandomSampler([3, 5, 7, 9], generator=lib.Generator().manual_seed(0)))
        cat = D.ConcatDataset([D.TensorDataset(lib.arange(3)), D.TensorDataset(lib.arange(10, 15))])
        stack = D.StackDataset(img=D.TensorDataset(lib.arange(4)), lab=range(4))
        sub = D.Subset(D.Subset(ds, range(2, 8)), [0, 5])
        return ([len(p) for p in parts], cover == list(range(10)), len(w), sorted(set(w)), sorted(s),
                type(s[0]).__name__, len(cat), cat.cumulative_sizes, int(cat[-1][0]), int(cat[4][0]),
                _str(list(D.DataLoader(stack, batch_size=2))), [int(x[0]) for x in sub.__getitems__([1, 0])])
    e, t = _both(run)
    assert e == t


def test_dataset_classes_are_generic():
    """Typed datasets (``Dataset[T]``, ``IterableDataset[int]``, ``Subset[T]``, ``DataLoader[T]``) subclass and
    subscript as torch's; an IterableDataset without ``__iter__`` cannot be instantiated."""
    for lib in LIBS:
        D = lib.utils.data

        class Stream(D.IterableDataset[int]):
            def __iter__(self):
                return iter([1, 2])

        class Pairs(D.Dataset[typing.Tuple[lib.Tensor, int]]):
            def __len__(self):
                return 2

            def __getitem__(self, i):
                return lib.ones(1) * i, i
        for cls in (D.Subset, D.ConcatDataset, D.StackDataset, D.ChainDataset, D.DataLoader, D.DistributedSampler):
            assert cls[int] is not None
        loader: D.DataLoader[typing.Tuple[lib.Tensor, int]] = D.DataLoader(Pairs(), batch_size=2)
        assert [_np(b[1]).tolist() for b in loader] == [[0, 1]] and list(Stream()) == [1, 2]
        with pytest.raises(TypeError):
            D.IterableDataset()


class _ShardedE(ember.utils.data.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = ember.utils.data.get_worker_info()
        per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
        lo = self.start + info.id * per
        yield from ((i, info.id, ember.initial_seed() == info.seed) for i in range(lo, min(lo + per, self.end)))


class _ShardedT(torch.utils.data.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        per = int(math.ceil((self.end - self.start) / float(info.num_workers)))
        lo = self.start + info.id * per
        yield from ((i, info.id, torch.initial_seed() == info.seed) for i in range(lo, min(lo + per, self.end)))


def test_iterable_dataset_sharded_across_workers():
    """``get_worker_info()`` sharding of an IterableDataset over two workers: the same interleaved batches; in each
    worker ``initial_seed()`` is the worker's seed (in ``worker_init_fn`` too)."""
    res = []
    for lib, cls in ((ember, _ShardedE), (torch, _ShardedT)):
        dl = lib.utils.data.DataLoader(cls(3, 12), batch_size=2, num_workers=2, worker_init_fn=_check_seed)
        res.append([[_np(c).tolist() for c in b] for b in dl])
    assert res[0] == res[1]
    assert all(all(b[2]) for b in res[0])


def _check_seed(worker_id):
    for lib in LIBS:
        info = lib.utils.data.get_worker_info()
        if info is not None:
            assert lib.initial_seed() == info.seed and info.id == worker_id


def test_persistent_workers_epochs():
    """Two epochs through persistent workers give the same ordered batches as torch."""
    res = []
    for lib in LIBS:
        dl = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(lib.arange(10.0)), batch_size=3, num_workers=2,
                                       persistent_workers=True)
        res.append([[_np(b[0]).tolist() for b in dl] for _ in range(2)] + [len(dl)])
    assert res[0] == res[1]


# -- odds and ends --------------------------------------------------------------------------------------------------
def test_sync_batchnorm_convert():
    """``SyncBatchNorm.convert_sync_batchnorm`` swaps every BatchNorm, sharing its parameters and buffers."""
    def run(lib):
        nn = lib.nn
        m = nn.Sequential(nn.Conv2d(2, 3, 1), nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm2d(3, bias=False)))
        with lib.no_grad():
            m[1].running_mean.copy_(lib.tensor([0.5, -1.0, 2.0]))
        w = m[1].weight
        m.eval()
        m = nn.SyncBatchNorm.convert_sync_batchnorm(m)
        x = lib.tensor(np.random.default_rng(0).standard_normal((2, 2, 3, 3)).astype(np.float32))
        with lib.no_grad():
            for i, p in enumerate(m[0].parameters()):
                p.copy_(lib.tensor(np.random.default_rng(i + 1).standard_normal(tuple(p.shape)).astype(np.float32)))
        return repr(m), m[1].weight is w, m[1].training, list(m.state_dict()), m(x)
    e, t = _both(run)
    assert _str(e[:4]) == _str(t[:4])
    _close(e[4], t[4], rtol=1e-5, atol=1e-6)


def test_integer_parameter_error():
    """``nn.Parameter`` of an integer tensor: torch's RuntimeError and message."""
    msgs = []
    for lib in LIBS:
        with pytest.raises(RuntimeError) as info:
            lib.nn.Parameter(lib.ones(2, dtype=lib.int64))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
