"""``ember.onnx.export``: trace a module, map each recorded op to ONNX nodes, write the model.

The graph is built in three steps: ``_trace.run`` records the ops of one forward (and, with ``dynamic_axes``, of
forwards at other sizes, compared in ``_dynamic``); the records that the outputs depend on are mapped one by one by
the functions of ``symbolic`` onto a ``Graph``; the model is assembled, checked and written.
"""
import math
import os
import warnings
from collections import defaultdict

import numpy as np

from .._tensor import Tensor
from . import _trace
from ._dynamic import Dynamic, DynamicError, Fitter, Sym, Varying, is_dynamic

DEFAULT_OPSET = 17
SUPPORTED_OPSETS = range(17, 24)  # 17: LayerNormalization; 23: RMSNormalization; onnxruntime 1.31 runs them all
INT64_MAX = np.iinfo(np.int64).max


class OnnxExporterError(RuntimeError):
    """The model cannot be exported as asked."""


class UnsupportedOperatorError(OnnxExporterError, NotImplementedError):
    """Ops of the model have no ONNX mapping (all of them are listed)."""


class Unsupported(Exception):
    """Raised by a mapping function: why this call of the op cannot be exported."""


class _Failed(Exception):
    """A value whose producer could not be exported (already reported)."""


class Op:
    """One recorded call as a mapping function sees it: inputs (Values, numbers or None; numbers that depend on
    dynamic axes as Syms), params (likewise), output Values and the Record."""

    __slots__ = ("rec", "inputs", "params", "outputs")

    def __init__(self, rec, inputs, params):
        self.rec, self.inputs, self.params, self.outputs = rec, inputs, params, rec.outputs


class Graph:
    """The ONNX graph under construction: nodes, initializers, and the ONNX name of every traced Value."""

    def __init__(self, trace, dynamic, opset, axes):
        import onnx.helper
        self.helper = onnx.helper
        self.trace, self.dyn, self.opset = trace, dynamic, opset
        self.axes = axes  # symbol -> (input name, dim)
        self.nodes, self.inits = [], {}
        self.names = {}  # Value.id -> ONNX name (None: its producer failed, or cannot give it: see missing)
        self.missing = {}  # Value.id -> which output of which op a mapping could not give
        self.static = {}  # Value.id -> array, for values folded at export
        self._taken, self._counts = set(), {}
        self._cache = {}
        self.rec = None

    # -- names ---------------------------------------------------------------------------------------------------
    def unique(self, base):
        name, i = base, self._counts.get(base, 1)
        while name in self._taken:
            name = f"{base}_{i}"
            i += 1
        self._counts[base] = i
        self._taken.add(name)
        return name

    def node(self, op, inputs, outputs=1, **attrs):
        """Appends node ``op``; returns its output name (or the list of them when ``outputs`` > 1)."""
        where = "/" + self.rec.where.replace(".", "/") if self.rec is not None and self.rec.where else ""
        name = self.unique(f"{where}/{op}")
        outs = [self.unique(f"{name}_output_{i}") for i in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self.helper.make_node(op, list(inputs), outs, name=name, **attrs))
        return outs[0] if outputs == 1 else outs

    # -- constants -----------------------------------------------------------------------------------------------
    def const(self, array, name="const"):
        """An initializer holding ``array`` (small ones shared by value)."""
        array = _host(array)
        key = None
        if array.size <= 64:
            key = ("const", array.dtype.str, array.shape, array.tobytes())
            if key in self._cache:
                return self._cache[key]
        name = self.unique(name)
        self.inits[name] = array
        if key is not None:
            self._cache[key] = name
        return name

    def scalar(self, v, dtype):
        """A 0-d tensor of ember ``dtype`` holding number ``v`` (a Sym is computed from the input shapes)."""
        if isinstance(v, Sym):
            return self.cast(self.node("Squeeze", [self.sym(v), self.const(np.array([0], np.int64))]),
                             None, dtype, src_np=np.int64)
        if isinstance(v, Varying):
            raise Unsupported("a number that changes with a dynamic axis")
        return self.const(np.array(v, dtype=dtype.np))

    def ints(self, values, infer=False):
        """A 1-D int64 tensor of ``values`` (ints and Syms). With ``infer`` (a Reshape target), a single symbolic
        entry becomes -1, which Reshape infers exactly."""
        values = list(values)
        if any(isinstance(v, Varying) for v in values):
            raise Unsupported("a shape that changes with a dynamic axis in a way that cannot be expressed")
        syms = [i for i, v in enumerate(values) if isinstance(v, Sym)]
        if infer and len(syms) == 1 and -1 not in values:
            values[syms[0]] = -1
            syms = []
        if not syms:
            return self.const(np.array(values, dtype=np.int64))
        pieces, run = [], []
        for v in values:
            if isinstance(v, Sym):
                if run:
                    pieces.append(self.const(np.array(run, np.int64)))
                    run = []
                pieces.append(self.sym(v))
            else:
                run.append(int(v))
        if run:
            pieces.append(self.const(np.array(run, np.int64)))
        return pieces[0] if len(pieces) == 1 else self.node("Concat", pieces, axis=0)

    def sym(self, s):
        """A 1-D int64 tensor ``[s]`` computed from the inputs' shapes."""
        key = ("sym",) + s.key()
        if key in self._cache:
            return self._cache[key]
        out = None
        for name in s.symbols:
            inp, dim = self.axes[name]
            d = self.node("Shape", [inp], start=dim, end=dim + 1)
            out = d if out is None else self.node("Mul", [out, d])
        k, c = s.k, s.c
        if k.numerator != 1:
            out = self.node("Mul", [out, self.const(np.array([k.numerator], np.int64))])
        if k.denominator != 1:
            out = self.node("Div", [out, self.const(np.array([k.denominator], np.int64))])
        if c:
            if c.denominator != 1:
                raise Unsupported(f"a size {s} that is not an integer function of the dynamic axes")
            out = self.node("Add", [out, self.const(np.array([int(c)], np.int64))])
        self._cache[key] = out
        return out

    # -- values --------------------------------------------------------------------------------------------------
    def value(self, x, dtype=None):
        """The ONNX name of input ``x`` (a Value or a number), cast to ember ``dtype`` if given."""
        if x is None:
            raise Unsupported("an optional input that ONNX needs")
        if not isinstance(x, _trace.Value):
            if dtype is None:
                raise Unsupported(f"a Python number ({x!r}) where a tensor is needed")
            return self.scalar(x, dtype)
        name = self.names.get(x.id, False)
        if name is None:
            if x.id in self.missing:
                raise Unsupported(f"it uses {self.missing[x.id]}, which has no ONNX equivalent")
            raise _Failed()
        if name is False:
            name = self._materialize(x)
        return self.cast(name, x.dtype, dtype) if dtype is not None else name

    def _materialize(self, x):
        if x.id in self.dyn.consts:
            spec = self.dyn.consts[x.id]
            if spec is None:
                raise Unsupported(f"a constant of shape {list(x.shape)} that changes with a dynamic axis")
            name = self._dynamic_const(x, spec)
        elif x.kind == "param":
            name = self.unique(x.name)
            self.inits[name] = x.tensor
        elif x.kind == "const":
            name = self.const(x.array, f"constant_{x.name}")
        else:
            name = self.const(self.static[x.id], f"onnx::{x.producer.cls.__name__}_{x.id}")
        self.names[x.id] = name
        return name

    def _dynamic_const(self, x, spec):
        if spec[0] == "full":
            shape = self.ints(spec[2])
            value = self.helper.make_tensor("value", _onnx_type(x.tensor.dtype.np), [1], [spec[1]])
            return self.node("ConstantOfShape", [shape], value=value)
        start, step, shape = spec[1:]
        n = self.node("Squeeze", [self.ints(shape[:1]), self.const(np.array([0], np.int64))])
        dt = x.tensor.dtype
        n = self.cast(n, None, dt, src_np=np.int64)
        lim = self.node("Add", [self.node("Mul", [n, self.scalar(step, dt)]), self.scalar(start, dt)])
        return self.node("Range", [self.scalar(start, dt), lim, self.scalar(step, dt)])

    def dtype(self, x):
        return x.dtype if isinstance(x, _trace.Value) else None

    def shape(self, x):
        """The shape of Value ``x``: ints, and Syms for sizes that depend on dynamic axes."""
        return self.dyn.shapes.get(x.id, x.shape)

    def static_shape(self, x, what="this op"):
        shape = self.shape(x)
        if any(isinstance(s, (Sym, Varying)) for s in shape):
            raise Unsupported(f"{what} needs a static shape, but {list(x.shape)} depends on a dynamic axis")
        return shape

    def cast(self, name, src, dst, src_np=None):
        """``name`` cast from ember dtype ``src`` (or NumPy ``src_np``) to ember dtype ``dst``."""
        if dst is None or src is dst or src is None and dst.np == src_np:
            return name
        return self.node("Cast", [name], to=_onnx_type(dst.np))

    def as_type(self, name, dtype):
        """``name`` cast to ember ``dtype``."""
        return self.node("Cast", [name], to=_onnx_type(dtype.np))

    def reduce(self, op, x, axes, keepdims):
        """Reduce* over ``axes`` (None: all); axes are an attribute before opset 18 (always, for ReduceSum,
        an input since 13)."""
        if axes is not None and not axes:
            return self.node("Identity", [x])
        if axes is None:
            return self.node(op, [x], keepdims=int(keepdims))
        if op == "ReduceSum" or self.opset >= 18:
            return self.node(op, [x, self.const(np.array(axes, np.int64))], keepdims=int(keepdims))
        return self.node(op, [x], axes=list(axes), keepdims=int(keepdims))


def _onnx_type(np_dtype):
    import onnx.helper
    if np_dtype.name == "bfloat16":
        import onnx
        return onnx.TensorProto.BFLOAT16
    return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(np_dtype))


# -- export ---------------------------------------------------------------------------------------------------------
def export(model, args, f, input_names=None, output_names=None, dynamic_axes=None, opset_version=None,
           do_constant_folding=True, verbose=False, **kwargs):
    """Exports ``model`` to an ONNX file by tracing one run of ``model(*args)``.

    Args:
        model (nn.Module or callable): the model, run as given (call ``model.eval()`` first for inference).
        args (Tensor or tuple): example inputs; a trailing dict holds keyword arguments. Tensors become graph
            inputs, other values are fixed.
        f (str, PathLike or file object): where to write the model.
        input_names, output_names (list of str, optional): graph input and output names (default ``input_0``...,
            ``output_0``...).
        dynamic_axes (dict, optional): per input/output name, ``{dim: 'name'}`` or ``[dims]`` of sizes that may
            change; the model is traced at other sizes too to find what depends on them.
        opset_version (int, optional): ONNX opset, 17 (default) to 23.
        do_constant_folding (bool): compute ops on parameters and constants only at export.
        verbose (bool): print the graph.

    Example::

        >>> import ember.onnx, io
        >>> buf = io.BytesIO()
        >>> ember.onnx.export(ember.nn.Linear(3, 2), ember.randn(1, 3), buf, dynamic_axes={'input_0': [0]})
    """
    import onnx
    if kwargs:
        raise TypeError(f"export() got an unexpected keyword argument '{next(iter(kwargs))}'")
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if opset not in SUPPORTED_OPSETS:
        raise ValueError(f"ember.onnx.export: opset_version {opset} is not supported (use "
                         f"{SUPPORTED_OPSETS[0]} to {SUPPORTED_OPSETS[-1]})")
    args, call_kwargs = _split_args(args)
    tensors = _trace.input_tensors(args, call_kwargs)
    defaults = [f"input_{i}" for i in range(len(_trace.flatten(list(args))))]
    for key, v in call_kwargs.items():
        n = len(_trace.flatten([v]))
        defaults += [key] if isinstance(v, Tensor) else [f"{key}_{j}" for j in range(n)]
    in_names = _names(input_names, defaults, "input")
    axes, base_sizes = _dynamic_inputs(dynamic_axes or {}, in_names, tensors)

    trace = _trace.run(model, args, call_kwargs, in_names)
    if not trace.outputs:
        raise OnnxExporterError("ember.onnx.export: the model returned no tensor")
    out_names = _names(output_names, [f"output_{i}" for i in range(len(trace.outputs))], "output")
    variants, variant_sizes = _variants(model, args, call_kwargs, in_names, axes, base_sizes)
    try:
        dyn = Dynamic(trace, variants, Fitter(base_sizes, variant_sizes))
    except DynamicError as e:
        raise OnnxExporterError(f"ember.onnx.export: {e}") from None
    sources = {s: (in_names[occ[0][0]], occ[0][1]) for s, occ in axes.items()}
    graph = Graph(trace, dyn, opset, sources)
    _build(graph, trace, do_constant_folding)
    proto = _assemble(graph, trace, in_names, out_names, axes, dynamic_axes or {}, opset)
    onnx.checker.check_model(proto)
    if verbose:
        print(onnx.printer.to_text(proto.graph))
    data = proto.SerializeToString()
    if hasattr(f, "write"):
        f.write(data)
    else:
        with open(os.fspath(f), "wb") as fh:
            fh.write(data)


def _split_args(args):
    if isinstance(args, Tensor):
        return (args,), {}
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    if args and isinstance(args[-1], dict):
        return args[:-1], dict(args[-1])
    return args, {}


def _names(given, defaults, prefix):
    if given is None:
        return defaults
    given = list(given)
    if len(given) > len(defaults) or len(set(given)) != len(given):
        raise ValueError(f"ember.onnx.export: {len(given)} {prefix}_names for {len(defaults)} {prefix}s (names must "
                         "be unique and at most one per tensor)")
    return given + defaults[len(given):]


def _dynamic_inputs(dynamic_axes, in_names, tensors):
    """``{symbol: [(input position, dim), ...]}`` and each symbol's size in the example inputs."""
    axes, sizes = defaultdict(list), {}
    for name, spec in dynamic_axes.items():
        dims = spec.items() if isinstance(spec, dict) else ((d, f"{name}_dynamic_axes_{i + 1}")
                                                              for i, d in enumerate(spec))
        if name not in in_names:
            continue  # an output: its dims are labelled from what the traces show
        pos = in_names.index(name)
        t = tensors[pos]
        for d, sym in dims:
            if not -t.ndim <= d < t.ndim:
                raise ValueError(f"ember.onnx.export: dynamic_axes[{name!r}] names dim {d} of a "
                                 f"{t.ndim}-d input")
            d %= t.ndim
            n = t.shape[d]
            if sizes.setdefault(sym, n) != n:
                raise ValueError(f"ember.onnx.export: dynamic axis {sym!r} has size {sizes[sym]} in one input "
                                 f"and {n} in {name!r}")
            axes[sym].append((pos, d))
    return dict(axes), sizes


def _variants(model, args, kwargs, in_names, axes, base_sizes):
    """Traces at other sizes: two per dynamic axis (larger, else smaller when the model refuses larger)."""
    traces, sizes = [], []
    for sym, occ in axes.items():
        b = base_sizes[sym]
        errors = []
        for tries in ((b + 1, b + 2), (b - 1, b - 2)):
            if min(tries) < 1:
                continue
            try:
                got = [_trace.run(model, *_trace.resized(args, kwargs, {o: n for o in occ}), in_names)
                       for n in tries]
            except Exception as e:  # the model may refuse other sizes (e.g. a position table's length)
                errors.append(f"{type(e).__name__}: {e}")
                continue
            traces.extend(got)
            sizes.extend({**base_sizes, sym: n} for n in tries)
            break
        else:
            raise OnnxExporterError(f"ember.onnx.export: the model does not run with dynamic axis {sym!r} at sizes "
                                    f"other than {b} ({'; '.join(errors) or 'no other size to try'})")
    return traces, sizes


def _live(trace):
    """Ids of the Values the outputs depend on."""
    live = {v.id for v in trace.outputs}
    for rec in reversed(trace.records):
        if any(o is not None and o.id in live for o in rec.outputs):
            live.update(x.id for x in rec.inputs if isinstance(x, _trace.Value))
    return live


def _build(g, trace, fold):
    from .symbolic import lookup
    for v in trace.inputs:
        g.names[v.id] = v.name
        g._taken.add(v.name)
    live = _live(trace)
    for v in trace.inputs:
        if v.id not in live:
            warnings.warn(f"ember.onnx.export: input {v.name!r} does not reach the outputs through ember's ops; if "
                          "the model reads it otherwise (.numpy(), raw arrays), the exported graph does not follow "
                          "it", UserWarning, stacklevel=3)
    problems = defaultdict(list)
    for what, where in trace.issues:
        problems[what].append(where)
    for rec in trace.records:
        if not any(o is not None and o.id in live for o in rec.outputs):
            continue
        inputs = tuple(g.dyn.scalars.get((rec.index, j), x) for j, x in enumerate(rec.inputs))
        op = Op(rec, inputs, g.dyn.params.get(rec.index, rec.params))
        if fold and _foldable(g, op):
            for o in rec.outputs:
                if o is not None:
                    g.static[o.id] = o.tensor._data
            continue
        g.rec = rec
        fn = lookup(rec.cls)
        outs = None
        try:
            if fn is None:
                raise Unsupported("no ONNX mapping" + (" (a random op: export after model.eval())"
                                                        if rec.cls.__module__.endswith("_random") else ""))
            if is_dynamic(op.params) and not getattr(fn, "dynamic", False):
                raise Unsupported("its parameters depend on a dynamic axis")
            outs = fn(g, op)
            outs = [outs] if isinstance(outs, str) else list(outs)
        except Unsupported as e:
            problems[f"{rec.cls.__name__}: {e}"].append(rec.where)
        except _Failed:
            pass
        for i, o in enumerate(rec.outputs):
            if o is not None:
                g.names[o.id] = outs[i] if outs is not None and i < len(outs) else None
                if outs is not None and g.names[o.id] is None:
                    g.missing[o.id] = f"output {i} of {rec.cls.__name__}"
    g.rec = None
    for v in trace.outputs:
        try:
            g.value(v)
        except Unsupported as e:
            problems[f"output: {e}"].append("")
        except _Failed:
            pass
    if problems or any(g.names.get(v.id) is None for v in trace.outputs):
        lines = []
        for what, wheres in problems.items():
            places = sorted({repr(w) if w else "the top-level forward" for w in wheres})
            lines.append(f"  {what}: {len(wheres)} call{'s' if len(wheres) > 1 else ''}, in {', '.join(places)}")
        raise UnsupportedOperatorError("ember.onnx.export: the model uses ops that cannot be exported to ONNX "
                                       f"opset {g.opset}:\n" + "\n".join(lines))


def _foldable(g, op):
    """Whether a call computes only from parameters and constants (and does not grow them): then its traced
    outputs are stored as initializers."""
    sizes = []
    for x in op.inputs:
        if isinstance(x, Sym):
            return False
        if isinstance(x, _trace.Value):
            if not (x.id in g.static or x.kind in ("param", "const") and x.id not in g.dyn.consts):
                return False
            sizes.append(math.prod(x.shape))
    if not sizes or is_dynamic(op.params) or op.rec.cls.__module__.endswith("_random"):
        return False
    return all(o is None or math.prod(o.shape) <= max(sizes) for o in op.outputs)


def _value_info(helper, name, t, dims):
    shape = [d if isinstance(d, (int, str)) else None for d in dims]
    return helper.make_tensor_value_info(name, _onnx_type(t.dtype.np), shape)


def _assemble(g, trace, in_names, out_names, axes, dynamic_axes, opset):
    from onnx import helper, numpy_helper
    sym_of = {(pos, d): s for s, occ in axes.items() for pos, d in occ}
    inputs = [_value_info(helper, v.name, v.tensor,
                          [sym_of.get((i, d), n) for d, n in enumerate(v.shape)]) for i, v in enumerate(trace.inputs)]
    outputs = []
    produced = {o for n in g.nodes for o in n.output}
    for v, name in zip(trace.outputs, out_names):
        src = g.names[v.id]
        if src in produced and src not in {o.name for o in outputs} and name not in g._taken:
            _rename(g.nodes, src, name)
            produced.add(name)
            g.names[v.id] = name
        else:
            g.nodes.append(helper.make_node("Identity", [src], [name], name=g.unique(f"/Identity_{name}")))
        g._taken.add(name)
        spec = dynamic_axes.get(name, {})
        spec = spec if isinstance(spec, dict) else {d: f"{name}_dynamic_axes_{i + 1}" for i, d in enumerate(spec)}
        dims = []
        for d, n in enumerate(g.shape(v)):
            label = spec.get(d, spec.get(d - len(v.shape)))
            dims.append(label if label is not None else n.symbols[0] if isinstance(n, Sym) and n.is_axis()
                        else None if isinstance(n, (Sym, Varying)) else n)
        outputs.append(_value_info(helper, name, v.tensor, dims))
    inits = [numpy_helper.from_array(_host(a), name) for name, a in g.inits.items()]
    graph = helper.make_graph(g.nodes, "main_graph", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="ember",
                              producer_version=_version())
    model.ir_version = min(row[1] for row in helper.VERSION_TABLE if row[2] >= opset)
    _prune(model.graph)
    return model


def _host(a):
    """A NumPy array of a tensor, parameter or array (CuPy arrays are copied to the host)."""
    if isinstance(a, Tensor):
        a = a._data
    return np.asarray(a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else a, order="C")


def _rename(nodes, old, new):
    for n in nodes:
        for seq in (n.output, n.input):
            for i, x in enumerate(seq):
                if x == old:
                    seq[i] = new


def _prune(graph):
    """Drops nodes whose outputs nothing reads, and unused initializers."""
    needed = {o.name for o in graph.output}
    keep = []
    for n in reversed(graph.node):
        if any(o in needed for o in n.output):
            keep.append(n)
            needed.update(n.input)
    del graph.node[:]
    graph.node.extend(reversed(keep))
    inits = [i for i in graph.initializer if i.name in needed]
    del graph.initializer[:]
    graph.initializer.extend(inits)


def _version():
    from .. import __version__
    return __version__
