"""Malformed ONNX files raise a clear ValueError naming the file and the problem; unsupported ops are listed in one
error, when loading and when exporting."""
import io
import os

import numpy as np
import pytest

import ember
import ember.nn as nn

from .helpers import export_bytes, onnx

from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _model(nodes=None, inits=(), outputs=("y",), opset=17, inputs=("x",)):
    nodes = [helper.make_node("Relu", ["x"], ["y"])] if nodes is None else nodes
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in inputs],
                          [helper.make_empty_tensor_value_info(o) for o in outputs], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def _tensor(name="w", dims=(2, 3), raw=None, **fields):
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(dims))
    if raw is not None:
        t.raw_data = raw
    for k, v in fields.items():
        getattr(t, k).extend(v)
    return t


def _with_init(t):
    return _model([helper.make_node("Add", ["x", t.name], ["y"])], inits=[t]).SerializeToString()


VALID = _model().SerializeToString()
_no_graph = onnx.ModelProto(ir_version=8, opset_import=[helper.make_opsetid("", 17)]).SerializeToString()
_no_opset = _model()
del _no_opset.opset_import[:]
_no_ir = _model()
_no_ir.ir_version = 0

MALFORMED = [
    ("empty", b"", "is empty"),
    ("random_bytes", np.random.default_rng(0).bytes(300), "not a valid ONNX model"),
    ("random_bytes_2", np.random.default_rng(1).bytes(4096), "not a valid ONNX model"),
    ("truncated_half", VALID[:len(VALID) // 2], "not a valid ONNX model"),
    ("truncated_tail", VALID[:-3], "not a valid ONNX model"),
    ("zip_magic", b"PK\x03\x04" + bytes(60), "zip archive"),
    ("pickle_magic", b"\x80\x04\x95" + bytes(40), "pickle"),
    ("safetensors", (2).to_bytes(8, "little") + b"{}", "safetensors"),
    ("text", b"{\"ir_version\": 8}", "JSON/text"),
    ("elf", b"\x7fELF" + bytes(40), "executable"),
    ("no_ir_version", _no_ir.SerializeToString(), "ir_version 0"),
    ("no_graph", _no_graph, "no graph"),
    ("no_opset", _no_opset.SerializeToString(), "no version of the default ONNX operator set"),
    ("opset_too_new", _model(opset=999).SerializeToString(), "opset 999"),
    ("missing_input", _model([helper.make_node("Add", ["x", "nowhere"], ["y"])]).SerializeToString(),
     "reads 'nowhere'"),
    ("used_before_defined", _model([helper.make_node("Relu", ["t"], ["y"]), helper.make_node("Relu", ["x"], ["t"])],
                                   outputs=("y",)).SerializeToString(), "reads 't'"),
    ("output_not_produced", _model(outputs=("y", "ghost")).SerializeToString(), "'ghost' is not produced"),
    ("duplicate_output", _model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])])
     .SerializeToString(), "already defined"),
    ("no_outputs", _model(outputs=()).SerializeToString(), "no outputs"),
    ("raw_data_short", _with_init(_tensor(raw=bytes(20))), "20 bytes of raw_data, but dims \\[2, 3\\]"),
    ("raw_data_long", _with_init(_tensor(raw=bytes(4 * 6 + 4))), "28 bytes of raw_data"),
    ("huge_dims", _with_init(_tensor(dims=(1 << 30, 1 << 30, 1 << 20), raw=bytes(16))), "more than any file"),
    ("negative_dim", _with_init(_tensor(dims=(2, -3), raw=bytes(24))), "negative dimension"),
    ("float_data_count", _with_init(_tensor(float_data=[1.0, 2.0])), "holds 2 values"),
    ("no_data", _with_init(_tensor()), "holds 0 values"),
    ("string_initializer", _with_init(TensorProto(name="w", data_type=TensorProto.STRING, dims=[1],
                                                  string_data=[b"a"])), "not a numeric tensor type"),
    ("bad_data_type", _with_init(TensorProto(name="w", data_type=99, dims=[1], raw_data=bytes(4))),
     "data type 99"),
    ("constant_attribute", _model([helper.make_node("Constant", [], ["y"], value=_tensor(raw=bytes(3)))])
     .SerializeToString(), "attribute 'value' of node 0 \\(Constant\\)"),
    ("too_few_inputs", _model([helper.make_node("Mul", ["x"], ["y"])]).SerializeToString(), "has 1 inputs; Mul"),
    ("op_not_in_opset", _model([helper.make_node("Gelu", ["x"], ["y"])]).SerializeToString(),
     "Gelu does not exist in ONNX opset 17"),
    ("not_utf8_name", VALID.replace(b"Relu", b"R\xffeu"), "not UTF-8"),
]


@pytest.mark.parametrize("data,match", [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED])
def test_malformed_bytes(data, match):
    with pytest.raises(ValueError, match=match) as info:
        ember.onnx.load(data)
    assert "<bytes>" in str(info.value)


def test_random_corruption_never_escapes_as_another_error():
    """Bytes flipped, inserted or cut anywhere in a real model: loading succeeds or raises the documented errors."""
    ember.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(16, 3)).eval()
    data = export_bytes(m, ember.randn(1, 3, 4, 4), do_constant_folding=False)
    rng = np.random.default_rng(0)
    for _ in range(300):
        d = bytearray(data)
        i = int(rng.integers(len(d)))
        kind = i % 3
        if kind == 0:
            d[i] = int(rng.integers(256))
        elif kind == 1:
            d = d[:i]
        else:
            d[i:i] = rng.bytes(int(rng.integers(1, 6)))
        try:
            ember.onnx.load(bytes(d))
        except (ValueError, NotImplementedError):
            pass


def test_malformed_file_names_the_path(tmp_path):
    path = tmp_path / "broken.onnx"
    path.write_bytes(VALID[:len(VALID) // 2])
    with pytest.raises(ValueError, match="broken.onnx"):
        ember.onnx.load(path)
    with pytest.raises(FileNotFoundError):
        ember.onnx.load(tmp_path / "absent.onnx")


def _external(tmp_path, location, length=None):
    t = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    t.external_data.add(key="location", value=location)
    if length is not None:
        t.external_data.add(key="length", value=str(length))
    path = tmp_path / "m.onnx"
    path.write_bytes(_model([helper.make_node("Add", ["x", "w"], ["y"])], inits=[t]).SerializeToString())
    return path


@pytest.mark.parametrize("location,match", [("../outside.bin", "outside the model's directory"),
                                            ("/etc/passwd", "outside the model's directory"),
                                            ("missing.bin", "cannot be read")])
def test_external_data_errors(tmp_path, location, match):
    with pytest.raises(ValueError, match=match):
        ember.onnx.load(_external(tmp_path, location))


def test_external_data_too_short(tmp_path):
    (tmp_path / "w.bin").write_bytes(bytes(8))
    with pytest.raises(ValueError, match="does not hold the 16 bytes"):
        ember.onnx.load(_external(tmp_path, "w.bin"))


def test_external_data_needs_a_path(tmp_path):
    data = _external(tmp_path, "w.bin").read_bytes()
    with pytest.raises(ValueError, match="needs the model's file path"):
        ember.onnx.load(data)


def test_unsupported_ops_are_listed_together():
    nodes = [helper.make_node("Relu", ["x"], ["a"]),
             helper.make_node("Hardmax", ["a"], ["b"]),
             helper.make_node("LRN", ["b"], ["c"], size=3),
             helper.make_node("Hardmax", ["c"], ["d"], name="second"),
             helper.make_node("FusedGemm", ["d"], ["e"], domain="com.microsoft"),
             helper.make_node("Resize", ["e", "", "s"], ["y"], mode="cubic")]
    s = numpy_helper.from_array(np.ones(1, np.float32), "s")
    with pytest.raises(NotImplementedError) as info:
        ember.onnx.load(_model(nodes, inits=[s]))
    msg = str(info.value)
    for part in ("Hardmax: nodes 1, second", "LRN", "com.microsoft::FusedGemm", "Resize (mode='cubic')"):
        assert part in msg


def test_load_rejects_other_objects():
    with pytest.raises(TypeError, match="expected a path"):
        ember.onnx.load(3.5)
    with pytest.raises(TypeError, match="binary mode"):
        ember.onnx.load(io.StringIO("text"))


# -- export ---------------------------------------------------------------------------------------------------------
class _Unexportable(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))

    def forward(self, x):
        y = self.inner(x)
        return ember.linalg.det(y.view(1, 3, 3)) + ember.linalg.det(x.view(1, 3, 3)) + ember.sort(x, 1)[0].sum()


def test_export_lists_every_unsupported_op():
    with pytest.raises(ember.onnx.UnsupportedOperatorError) as info:
        export_bytes(_Unexportable(), ember.randn(3, 3))
    msg = str(info.value)
    assert isinstance(info.value, NotImplementedError) and isinstance(info.value, RuntimeError)
    assert "Det: no ONNX mapping: 2 calls" in msg and "Pick" in msg
    assert "random sampling" in msg and "'inner.1'" in msg


def test_export_rejects_indexed_writes():
    class Write(nn.Module):
        def forward(self, x):
            y = x.clone()
            y[0] = 1.0
            return y
    with pytest.raises(ember.onnx.UnsupportedOperatorError, match="__setitem__"):
        export_bytes(Write(), ember.randn(2, 3))


def test_export_warns_on_data_dependent_python_values():
    class Branch(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum().item() > 0 else x
    with pytest.warns(UserWarning, match="item"):
        export_bytes(Branch(), ember.ones(2))


def test_export_control_flow_on_a_dynamic_axis():
    class Branch(nn.Module):
        def forward(self, x):
            return x.relu() if x.shape[0] % 2 else x.exp()
    with pytest.raises(ember.onnx.OnnxExporterError, match="control flow depends on them"):
        export_bytes(Branch(), ember.randn(2, 3), dynamic_axes={"input_0": [0]})


def test_export_model_refusing_other_sizes():
    class Fixed(nn.Module):
        def forward(self, x):
            return x.view(2, 3) * 2
    with pytest.raises(ember.onnx.OnnxExporterError, match="does not run with dynamic axis"):
        export_bytes(Fixed(), ember.randn(2, 3), dynamic_axes={"input_0": {0: "b"}})


def test_export_argument_errors(tmp_path):
    m, x = nn.Linear(3, 2), ember.randn(1, 3)
    with pytest.raises(ValueError, match="opset_version 12"):
        export_bytes(m, x, opset_version=12)
    with pytest.raises(ValueError, match="names dim 5"):
        export_bytes(m, x, dynamic_axes={"input_0": [5]})
    with pytest.raises(ValueError, match="input_names"):
        export_bytes(m, x, input_names=["a", "b"])
    with pytest.raises(TypeError, match="unexpected keyword argument 'training'"):
        ember.onnx.export(m, x, io.BytesIO(), training=True)
    with pytest.raises(ember.onnx.OnnxExporterError, match="no tensor"):
        export_bytes(lambda t: None, x)
    assert not os.listdir(tmp_path)


def test_export_warns_when_an_input_is_read_outside_the_ops():
    # embedding_bag reads its indices as raw arrays: the graph cannot follow them, and says so
    with pytest.warns(UserWarning, match="'input_0' does not reach the outputs"):
        export_bytes(nn.EmbeddingBag(10, 3, mode="sum"), ember.tensor([[1, 2], [3, 4]]))
