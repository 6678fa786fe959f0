"""``ember.onnx.load``: an ONNX model as an ``nn.Module`` whose forward runs the graph with ember ops.

The file is read defensively: anything that is not a well-formed ONNX model (undecodable bytes, another format,
tensors whose data disagree with their declared shape and type, names used before they are defined) raises a
``ValueError`` naming the file and the problem before anything is allocated; node types without an ember
implementation are listed together in one ``NotImplementedError``.
"""
import math
import os
import re

import numpy as np

from .. import _dtype
from .._creation import tensor as _tensor
from ..nn.modules.module import Module
from ..nn.parameter import Parameter

_MAX_ELEMENTS = 1 << 40  # more elements than any real model holds: a larger declared shape is corrupt


def load(f):
    """Loads an ONNX model as a module running its graph with ember ops (differentiable, initializers as
    parameters and buffers).

    Args:
        f: a path, a file object, the file's bytes, or an ``onnx.ModelProto``.

    Returns:
        nn.Module: ``forward(*inputs)`` takes the graph inputs in order (or by name as keywords) and returns the
        output, or a tuple of the outputs.

    Example::

        >>> import ember.onnx, io
        >>> buf = io.BytesIO()
        >>> ember.onnx.export(ember.nn.Linear(3, 2), ember.randn(1, 3), buf)
        >>> ember.onnx.load(buf.getvalue())(ember.ones(1, 3)).shape
        ember.Size([1, 2])
    """
    import onnx
    if isinstance(f, onnx.ModelProto):
        name, proto, base = "<ModelProto>", f, None
    else:
        name, data, base = _read(f)
        proto = _parse(data, name)
    _check_model(proto, name, base)
    return OnnxModule(proto, name, base)


def _read(f):
    if isinstance(f, (bytes, bytearray, memoryview)):
        return "<bytes>", bytes(f), None
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        with open(path, "rb") as fh:
            return repr(path), fh.read(), os.path.dirname(os.path.abspath(path))
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("ember.onnx.load: the file object must be opened in binary mode")
        path = getattr(f, "name", None)
        base = os.path.dirname(os.path.abspath(path)) if isinstance(path, str) else None
        return (repr(path) if isinstance(path, str) else "<file>"), bytes(data), base
    raise TypeError(f"ember.onnx.load: expected a path, a file object, bytes or an onnx.ModelProto, got "
                    f"{type(f).__name__}")


_SIGNATURES = [(b"PK", "a zip archive (a PyTorch or ember checkpoint?)"), (b"\x80", "a Python pickle"),
               (b"\x89HDF", "an HDF5 file"), (b"\x7fELF", "an executable"), (b"{", "a JSON/text file"),
               (b"<", "an XML/HTML file")]


def _parse(data, name):
    import onnx
    if not data:
        raise ValueError(f"ember.onnx.load: {name} is empty, not an ONNX model")
    for magic, what in _SIGNATURES:
        if data.startswith(magic):
            raise ValueError(f"ember.onnx.load: {name} is {what}, not an ONNX model")
    if len(data) > 8 and data[8:9] == b"{" and int.from_bytes(data[:8], "little") < min(len(data), 1 << 32):
        raise ValueError(f"ember.onnx.load: {name} is a safetensors file, not an ONNX model")
    proto = onnx.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError, or a RuntimeWarning-turned-error from its C extension
        raise ValueError(f"ember.onnx.load: {name} is not a valid ONNX model: it cannot be decoded as an ONNX "
                         f"protobuf ({type(e).__name__}: {e}); the file may be truncated or of another format") \
            from None
    return proto


# -- validation -----------------------------------------------------------------------------------------------------
def _bad(name, what):
    return ValueError(f"ember.onnx.load: {name} is not a valid ONNX model: {what}")


def _check_model(proto, name, base):
    import onnx
    if proto.ir_version <= 0 or proto.ir_version > onnx.IR_VERSION:
        raise _bad(name, f"ir_version {proto.ir_version} (expected 1 to {onnx.IR_VERSION}); the file may be "
                         "truncated or of another format")
    if not proto.HasField("graph"):
        raise _bad(name, "it has no graph")
    opset = opset_of(proto)
    if opset is None:
        raise _bad(name, "it imports no version of the default ONNX operator set")
    if not 1 <= opset <= onnx.defs.onnx_opset_version():
        raise _bad(name, f"it imports ONNX opset {opset}, beyond the known 1 to {onnx.defs.onnx_opset_version()}")
    graph = proto.graph
    if not graph.output:
        raise _bad(name, "its graph has no outputs")
    defined = {"": None}
    for t in graph.initializer:
        _check_text(name, t.name, "an initializer name")
        check_tensor(t, name, base, f"initializer {t.name!r}")
        defined[t.name] = "initializer"
    if graph.sparse_initializer:
        raise NotImplementedError(f"ember.onnx.load: {name} holds sparse initializers, which are not supported")
    for i in graph.input:
        _check_text(name, i.name, "a graph input name")
        if not i.name:
            raise _bad(name, "a graph input has no name")
        defined.setdefault(i.name, "input")
    unsupported = {}
    from .runtime import OPS, check_node
    for k, node in enumerate(graph.node):
        for text in (node.op_type, node.domain, node.name, *node.input, *node.output):
            _check_text(name, text, f"a name in node {k}")
        where = f"node {k} ({node.op_type}{' ' + repr(node.name) if node.name else ''})"
        for inp in node.input:
            if inp not in defined:
                raise _bad(name, f"{where} reads {inp!r}, which is neither a graph input, an initializer nor an "
                                 "output of an earlier node")
        for a in node.attribute:
            _check_attribute(a, name, base, where)
        domain = node.domain if node.domain not in ("", "ai.onnx") else ""
        if not domain and node.op_type in OPS:
            _check_arity(node, opset, name, where)
        key = node.op_type if not domain else f"{domain}::{node.op_type}"
        reason = None if domain or node.op_type not in OPS else check_node(node, opset)
        if domain or node.op_type not in OPS or reason:
            unsupported.setdefault(key + (f" ({reason})" if reason else ""), []).append(node.name or str(k))
        for out in node.output:
            if out and out in defined:
                raise _bad(name, f"{where} writes {out!r}, which is already defined (names must be unique)")
            defined[out] = where
    for o in graph.output:
        _check_text(name, o.name, "a graph output name")
        if o.name not in defined:
            raise _bad(name, f"graph output {o.name!r} is not produced by any node, input or initializer")
    if unsupported:
        lines = [f"  {k}: nodes {', '.join(v[:5])}{' ...' if len(v) > 5 else ''}" for k, v in unsupported.items()]
        raise NotImplementedError(f"ember.onnx.load: {name} uses ONNX ops that ember does not implement:\n"
                                  + "\n".join(lines))


def _check_text(name, text, what):
    if not isinstance(text, str):  # protobuf hands back bytes for a string field that is not UTF-8
        raise _bad(name, f"{what} is not UTF-8 text ({bytes(text)[:40]!r})")


def _check_attribute(a, name, base, where):
    import onnx
    from onnx import helper
    _check_text(name, a.name, f"an attribute name of {where}")
    if a.type == onnx.AttributeProto.TENSOR:
        check_tensor(a.t, name, base, f"attribute {a.name!r} of {where}")
        return
    try:
        value = helper.get_attribute_value(a)
    except Exception as e:  # an unknown attribute type
        raise _bad(name, f"attribute {a.name!r} of {where} cannot be read ({e})") from None
    if a.type == onnx.AttributeProto.TENSORS:
        for t in value:
            check_tensor(t, name, base, f"attribute {a.name!r} of {where}")


def _check_arity(node, opset, name, where):
    """The node's input and output counts against its ONNX schema at this opset."""
    import onnx
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, "")
    except onnx.defs.SchemaError:
        raise _bad(name, f"{where}: {node.op_type} does not exist in ONNX opset {opset}") from None
    n_in, n_out = len(node.input), len(node.output)
    if not schema.min_input <= n_in <= schema.max_input:
        raise _bad(name, f"{where} has {n_in} inputs; {node.op_type} takes {schema.min_input} to "
                         f"{schema.max_input}")
    if not schema.min_output <= n_out <= schema.max_output:
        raise _bad(name, f"{where} has {n_out} outputs; {node.op_type} gives {schema.min_output} to "
                         f"{schema.max_output}")


def opset_of(proto):
    for o in proto.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


_FIELDS = ("float_data", "int32_data", "int64_data", "double_data", "uint64_data", "string_data")


def _np_dtype(data_type, name, where):
    import onnx
    from onnx import helper
    if data_type in (onnx.TensorProto.UNDEFINED, onnx.TensorProto.STRING) or \
            data_type not in onnx.TensorProto.DataType.values():
        raise _bad(name, f"{where} has data type {data_type}, which is not a numeric tensor type")
    try:
        dt = np.dtype(helper.tensor_dtype_to_np_dtype(data_type))
    except (KeyError, TypeError, ValueError):
        raise NotImplementedError(f"ember.onnx.load: {where} of {name} has the unsupported type "
                                  f"{onnx.TensorProto.DataType.Name(data_type)}") from None
    return dt


def check_tensor(t, name, base, where):
    """Checks that TensorProto ``t`` holds exactly what its dims and type declare (before reading it)."""
    import onnx
    dt = _np_dtype(t.data_type, name, where)
    if any(d < 0 for d in t.dims):
        raise _bad(name, f"{where} has a negative dimension in {list(t.dims)}")
    n = math.prod(t.dims)
    if n > _MAX_ELEMENTS:
        raise _bad(name, f"{where} declares {n} elements (dims {list(t.dims)}), more than any file can hold")
    if t.segment.begin or t.segment.end:
        raise NotImplementedError(f"ember.onnx.load: {where} of {name} is a segmented tensor")
    if t.data_location == onnx.TensorProto.EXTERNAL:
        _check_external(t, name, base, where, n * dt.itemsize)
        return
    if t.HasField("raw_data"):
        if len(t.raw_data) != n * dt.itemsize:
            raise _bad(name, f"{where} has {len(t.raw_data)} bytes of raw_data, but dims {list(t.dims)} of "
                             f"{dt.name} take {n * dt.itemsize}")
        return
    counts = {f: len(getattr(t, f)) for f in _FIELDS if len(getattr(t, f))}
    have = sum(counts.values())
    per = 2 if dt.kind == "c" else 1
    if have != n * per:
        raise _bad(name, f"{where} holds {have} values ({', '.join(counts) or 'no data field'}), but dims "
                         f"{list(t.dims)} declare {n}")


def _check_external(t, name, base, where, nbytes):
    info = {e.key: e.value for e in t.external_data}
    loc = info.get("location")
    if not loc or base is None:
        raise _bad(name, f"{where} refers to external data, which needs the model's file path to find")
    path = os.path.normpath(os.path.join(base, loc))
    if os.path.isabs(loc) or not path.startswith(os.path.normpath(base) + os.sep):
        raise _bad(name, f"{where}'s external data location {loc!r} lies outside the model's directory")
    try:
        offset, length = int(info.get("offset", 0)), int(info.get("length", nbytes))
        size = os.path.getsize(path)
    except (ValueError, OSError) as e:
        raise _bad(name, f"{where}'s external data cannot be read ({e})") from None
    if length != nbytes or offset < 0 or offset + length > size:
        raise _bad(name, f"{where}'s external data ({length} bytes at offset {offset} of {loc!r}, {size} bytes) "
                         f"does not hold the {nbytes} bytes its dims declare")


def to_array(t, base):
    """The contents of a checked TensorProto as a NumPy array."""
    from onnx import numpy_helper
    return np.array(numpy_helper.to_array(t, base or ""), copy=True)


def to_tensor(t, base):
    a = to_array(t, base)
    return _tensor(a, dtype=_dtype.from_numpy_dtype(a.dtype))


# -- the module -----------------------------------------------------------------------------------------------------
class OnnxModule(Module):
    """An ONNX graph run with ember ops; initializers are its parameters (floating point) and non-persistent
    buffers (others), under their ONNX names (a dotted name is a path of submodules, so an exported model's
    ``state_dict`` keys come back)."""

    def __init__(self, proto, name="<onnx>", base=None):
        super().__init__()
        from .runtime import node_function, parse_attributes
        graph = proto.graph
        self.opset = opset_of(proto)
        self.source = name
        self._state = {}  # ONNX name -> (module, attribute)
        for t in graph.initializer:
            value = to_tensor(t, base)
            self._state[t.name] = self._place(t.name, value)
        self.input_names = [i.name for i in graph.input if i.name not in self._state]
        self.output_names = [o.name for o in graph.output]
        last = {}  # name -> the last node reading it: intermediates are dropped after it (memory)
        for k, node in enumerate(graph.node):
            for i in node.input:
                last[i] = k
        keep = set(self.output_names) | set(self._state) | set(self.input_names)
        self._nodes = []
        for k, node in enumerate(graph.node):
            attrs = parse_attributes(node, base)
            desc = f"node {k} ({node.op_type}{' ' + repr(node.name) if node.name else ''})"
            done = [i for i in dict.fromkeys(node.input) if i and last[i] == k and i not in keep]
            self._nodes.append((node_function(node.op_type), list(node.input), list(node.output), attrs, desc,
                                done))

    def _place(self, onnx_name, value):
        """Registers ``value`` as a parameter or buffer at the module path its dotted name gives."""
        parts = [_attr(p) for p in onnx_name.split(".")]
        mod = self
        for p in parts[:-1]:
            sub = mod._modules.get(p)
            if sub is None:
                if hasattr(mod, p):
                    parts = [_attr(onnx_name)]
                    mod = self
                    break
                sub = Module()
                mod.add_module(p, sub)
            mod = sub
        leaf = parts[-1]
        while hasattr(mod, leaf):
            leaf += "_"
        if value.dtype.is_floating_point:
            mod.register_parameter(leaf, Parameter(value))
        else:  # shapes, indices, masks: constants of the graph rather than state to save
            mod.register_buffer(leaf, value, persistent=False)
        return mod, leaf

    def forward(self, *args, **kwargs):
        if len(args) > len(self.input_names):
            raise TypeError(f"forward() takes {len(self.input_names)} inputs ({', '.join(self.input_names)}) but "
                            f"{len(args)} were given")
        env = {"": None}
        for onnx_name, (mod, attr) in self._state.items():
            env[onnx_name] = getattr(mod, attr)
        env.update(zip(self.input_names, args))
        for key, v in kwargs.items():
            if key not in self.input_names and key not in self._state:
                raise TypeError(f"forward() got an unexpected keyword argument '{key}'")
            env[key] = v
        missing = [n for n in self.input_names if n not in env]
        if missing:
            raise TypeError(f"forward() missing inputs: {', '.join(missing)}")
        first = next((v for v in env.values() if v is not None), None)
        ctx = Context(self.opset, first.device if first is not None else None)
        for fn, ins, outs, attrs, desc, done in self._nodes:
            try:
                result = fn(ctx, [env[i] for i in ins], attrs, len(outs))
            except Exception as e:
                e.add_note(f"(while running {desc} of the ONNX model {self.source})")
                raise
            if not isinstance(result, (tuple, list)):
                result = (result,)
            for o, r in zip(outs, result):
                if o:
                    env[o] = r
            for i in done:
                del env[i]
        out = tuple(env[o] for o in self.output_names)
        return out[0] if len(out) == 1 else out

    def extra_repr(self):
        return f"{self.source}, opset={self.opset}, inputs={self.input_names}, outputs={self.output_names}"


class Context:
    """What an op implementation may need besides its inputs and attributes."""

    __slots__ = ("opset", "device")

    def __init__(self, opset, device):
        self.opset, self.device = opset, device  # device: where the inputs and parameters are


def _attr(part):
    """An ONNX name part as a module attribute name."""
    s = re.sub(r"\W", "_", part) or "_"
    return "_" + s if s[0].isdigit() and not s.isdigit() else s
