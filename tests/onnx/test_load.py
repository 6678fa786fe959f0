"""ember.onnx.load: hand-built ONNX graphs against onnxruntime, and exported ember models loaded back."""
import numpy as np
import pytest

import ember
import ember.nn as nn

from .helpers import assert_close, export_bytes, onnx, reference, session

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

RNG = np.random.default_rng(0)
IR = {11: 6, 13: 7, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10}


def f32(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape).astype(np.float32)


def i64(*values):
    return np.array(values, dtype=np.int64)


def model(nodes, inputs, n_outputs=None, opset=17, inits=None):
    """A model of ``nodes`` whose graph inputs are ``inputs`` ({name: array}) and outputs the last node's."""
    outs = nodes[-1].output if n_outputs is None else nodes[-1].output[:n_outputs]
    g = helper.make_graph(
        nodes, "test", [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
                        for k, v in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outs if o],
        [numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = IR[opset]
    return m


def compare(m, inputs, rtol=1e-5, atol=1e-6):
    """Runs model ``m`` in onnxruntime and through ember.onnx.load; returns the loaded module."""
    data = m.SerializeToString()
    want = session(data).run(None, inputs)
    loaded = ember.onnx.load(data)
    got = loaded(*(ember.tensor(v) for v in inputs.values()))
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = g.detach().numpy()
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return loaded


def node(op, inputs, outputs=("out",), **attrs):
    return helper.make_node(op, list(inputs), list(outputs), **attrs)


# (id, node, inputs, extra: opset / initializers)
X, Y = f32(2, 3, 4), f32(3, 4)
POS = f32(2, 3, 4, low=0.1)
CASES = [
    ("add_broadcast", node("Add", "xy"), {"x": X, "y": f32(4)}, {}),
    ("sub", node("Sub", "xy"), {"x": X, "y": Y}, {}),
    ("mul", node("Mul", "xy"), {"x": X, "y": f32(3, 1)}, {}),
    ("div", node("Div", "xy"), {"x": X, "y": f32(4, low=0.5)}, {}),
    ("div_int", node("Div", "xy"), {"x": i64(-7, 7, 5), "y": i64(2, -2, 3)}, {}),
    ("pow", node("Pow", "xy"), {"x": POS, "y": f32(4)}, {}),
    ("mod", node("Mod", "xy"), {"x": i64(-7, 7, 5), "y": i64(3, -3, 2)}, {}),
    ("fmod", node("Mod", "xy", fmod=1), {"x": X, "y": f32(4, low=0.5)}, {}),
    ("max3", node("Max", "xyz"), {"x": X, "y": Y, "z": f32(4)}, {}),
    ("min", node("Min", "xy"), {"x": X, "y": Y}, {}),
    ("sum", node("Sum", "xy"), {"x": X, "y": Y}, {}),
    ("mean", node("Mean", "xy"), {"x": X, "y": Y}, {}),
] + [(op.lower(), node(op, "x"), {"x": POS if op in ("Log", "Sqrt", "Acosh") else X}, {})
     for op in ["Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos",
                "Tan", "Atan", "Sinh", "Cosh", "Asinh", "Tanh", "Sigmoid", "Erf", "Relu", "Elu", "Selu", "Celu",
                "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Identity", "IsNaN"]] + [
    ("acosh", node("Acosh", "x"), {"x": f32(3, low=1.1, high=3)}, {}),
    ("asin", node("Asin", "x"), {"x": f32(3, low=-0.9, high=0.9)}, {}),
    ("leaky_relu", node("LeakyRelu", "x", alpha=0.3), {"x": X}, {}),
    ("mish", node("Mish", "x"), {"x": X}, {"opset": 18}),
    ("gelu", node("Gelu", "x"), {"x": X}, {"opset": 20}),
    ("gelu_tanh", node("Gelu", "x", approximate="tanh"), {"x": X}, {"opset": 20}),
    ("shrink", node("Shrink", "x", lambd=0.7, bias=0.2), {"x": X}, {}),
    ("prelu", node("PRelu", "xs"), {"x": X, "s": f32(3, 1)}, {}),
    ("thresholded_relu", node("ThresholdedRelu", "x", alpha=0.5), {"x": X}, {}),
    ("softmax", node("Softmax", "x", axis=1), {"x": X}, {}),
    ("softmax_opset11", node("Softmax", "x", axis=1), {"x": X}, {"opset": 11}),
    ("log_softmax", node("LogSoftmax", "x"), {"x": X}, {}),
    ("matmul", node("MatMul", "xy"), {"x": X, "y": f32(4, 5)}, {}),
    ("gemm", node("Gemm", "abc", transA=1, transB=1, alpha=0.5, beta=2.0), {"a": f32(4, 3), "b": f32(5, 4),
                                                                            "c": f32(5)}, {}),
    ("einsum", node("Einsum", "xy", equation="bij,jk->bik"), {"x": X, "y": f32(4, 2)}, {}),
    ("reshape", node("Reshape", "xs"), {"x": X}, {"inits": {"s": i64(0, -1)}}),
    ("flatten", node("Flatten", "x", axis=2), {"x": X}, {}),
    ("transpose", node("Transpose", "x", perm=[2, 0, 1]), {"x": X}, {}),
    ("squeeze", node("Squeeze", "xa"), {"x": f32(2, 1, 3, 1)}, {"inits": {"a": i64(-1)}}),
    ("unsqueeze", node("Unsqueeze", "xa"), {"x": X}, {"inits": {"a": i64(0, -1)}}),
    ("unsqueeze_opset11", node("Unsqueeze", "x", axes=[1]), {"x": X}, {"opset": 11}),
    ("concat", node("Concat", "xy", axis=-2), {"x": X, "y": f32(2, 2, 4)}, {}),
    ("split", node("Split", "xs", ("a", "b", "c"), axis=2), {"x": X}, {"inits": {"s": i64(1, 2, 1)}}),
    ("split_num_outputs", node("Split", "x", ("a", "b"), axis=1, num_outputs=2), {"x": X}, {"opset": 18}),
    ("slice", node("Slice", "xseat"), {"x": X},
     {"inits": {"s": i64(-1, 0), "e": i64(-100, 3), "a": i64(2, 1), "t": i64(-2, 2)}}),
    ("gather", node("Gather", "xi", axis=1), {"x": X}, {"inits": {"i": i64(-1, 0, 2, 0).reshape(2, 2)}}),
    ("gather_elements", node("GatherElements", "xi", axis=2), {"x": X},
     {"inits": {"i": RNG.integers(-4, 4, (2, 3, 2))}}),
    ("gather_nd", node("GatherND", "xi"), {"x": X}, {"inits": {"i": i64(0, 1, 1, -1).reshape(2, 2)}}),
    ("scatter_elements", node("ScatterElements", "xiu", axis=1, reduction="add"), {"x": X, "u": f32(2, 2, 4)},
     {"inits": {"i": RNG.integers(0, 3, (2, 2, 4))}}),
    ("scatter_nd", node("ScatterND", "xiu"), {"x": X, "u": f32(2, 4)}, {"inits": {"i": i64(0, 1, 1, 2).reshape(2, 2)}}),
    ("shape", node("Shape", "x", start=1), {"x": X}, {}),
    ("size", node("Size", "x"), {"x": X}, {}),
    ("constant_of_shape", node("ConstantOfShape", "s", value=helper.make_tensor("v", TensorProto.INT32, [1], [7])),
     {"s": i64(2, 3)}, {}),
    ("expand", node("Expand", "xs"), {"x": f32(3, 1)}, {"inits": {"s": i64(2, 1, 4)}}),
    ("where", node("Where", "cxy"), {"c": X > 0, "x": X, "y": Y}, {}),
    ("equal", node("Equal", "xy"), {"x": i64(1, 2, 3), "y": i64(1, 0, 3)}, {}),
    ("less", node("Less", "xy"), {"x": X, "y": Y}, {}),
    ("greater_or_equal", node("GreaterOrEqual", "xy"), {"x": X, "y": Y}, {}),
    ("and", node("And", "xy"), {"x": X > 0, "y": Y > 0}, {}),
    ("not", node("Not", "x"), {"x": X > 0}, {}),
    ("cast", node("Cast", "x", to=TensorProto.INT32), {"x": X * 3}, {}),
    ("cast_like", node("CastLike", "xy"), {"x": X, "y": np.zeros(1, np.float64)}, {}),
    ("reduce_mean", node("ReduceMean", "x", axes=[0, 2], keepdims=0), {"x": X}, {}),
    ("reduce_mean_input", node("ReduceMean", "xa"), {"x": X}, {"opset": 18, "inits": {"a": i64(-1)}}),
    ("reduce_sum", node("ReduceSum", "xa", keepdims=0), {"x": X}, {"inits": {"a": i64(1)}}),
    ("reduce_sum_all", node("ReduceSum", "x"), {"x": X}, {}),
    ("reduce_max", node("ReduceMax", "x", axes=[1]), {"x": X}, {}),
    ("reduce_min", node("ReduceMin", "x", axes=[2], keepdims=0), {"x": X}, {}),
    ("reduce_prod", node("ReduceProd", "x", axes=[2]), {"x": X}, {}),
    ("reduce_l2", node("ReduceL2", "x", axes=[2]), {"x": X}, {}),
    ("reduce_log_sum_exp", node("ReduceLogSumExp", "x", axes=[1]), {"x": X}, {}),
    ("argmax_last", node("ArgMax", "x", axis=1, select_last_index=1), {"x": np.round(X)}, {}),
    ("argmin", node("ArgMin", "x", axis=-1, keepdims=0), {"x": X}, {}),
    ("clip", node("Clip", "xab"), {"x": X}, {"inits": {"a": np.float32(-0.5), "b": np.float32(1.0)}}),
    ("pad_constant", node("Pad", "xpv"), {"x": X},
     {"inits": {"p": i64(0, 1, 2, 0, 0, 1), "v": np.float32(3.0)}}),
    ("pad_reflect", node("Pad", "xp", mode="reflect"), {"x": X}, {"inits": {"p": i64(0, 0, 1, 0, 0, 2)}}),
    ("pad_edge", node("Pad", "xp", mode="edge"), {"x": X}, {"inits": {"p": i64(0, 2, 1, 0, 1, 2)}}),
    ("range", node("Range", "abc"), {}, {"inits": {"a": np.float32(1), "b": np.float32(6), "c": np.float32(1.5)}}),
    ("tile", node("Tile", "xr"), {"x": X}, {"inits": {"r": i64(1, 2, 3)}}),
    ("trilu", node("Trilu", "xk", upper=0), {"x": X}, {"inits": {"k": np.int64(1)}}),
    ("cumsum", node("CumSum", "xa", exclusive=1, reverse=1), {"x": X}, {"inits": {"a": np.int64(1)}}),
    ("topk", node("TopK", "xk", ("v", "i"), axis=1), {"x": X}, {"inits": {"k": i64(2)}}),
    ("is_inf", node("IsInf", "x", detect_negative=0), {"x": np.array([1, np.inf, -np.inf], np.float32)}, {}),
]


@pytest.mark.parametrize("n,inputs,extra", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_op(n, inputs, extra):
    m = model([n], inputs, opset=extra.get("opset", 17), inits=extra.get("inits"))
    compare(m, inputs)


def _w(*shape):
    return f32(*shape, low=-0.5, high=0.5)


NN_CASES = [
    ("conv_pads", node("Conv", "xw", pads=[0, 1, 2, 1], strides=[2, 1]), {"x": f32(1, 2, 6, 7)},
     {"w": _w(3, 2, 3, 3)}),
    ("conv_same_upper_bias", node("Conv", "xwb", auto_pad="SAME_UPPER", strides=[2, 2], group=2),
     {"x": f32(1, 4, 7, 6)}, {"w": _w(4, 2, 2, 3), "b": _w(4)}),
    ("conv1d_dilated", node("Conv", "xw", dilations=[2]), {"x": f32(2, 2, 9)}, {"w": _w(3, 2, 3)}),
    ("conv_transpose", node("ConvTranspose", "xwb", strides=[2, 2], pads=[1, 0, 0, 1], output_padding=[1, 1]),
     {"x": f32(1, 2, 4, 5)}, {"w": _w(2, 3, 3, 3), "b": _w(3)}),
    ("conv_transpose_output_shape", node("ConvTranspose", "xw", strides=[2], output_shape=[10], group=2),
     {"x": f32(1, 4, 4)}, {"w": _w(4, 1, 3)}),
    ("max_pool", node("MaxPool", "x", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 0, 1, 1], ceil_mode=1),
     {"x": f32(1, 2, 8, 7)}, {}),
    ("max_pool_dilated", node("MaxPool", "x", kernel_shape=[2], dilations=[2]), {"x": f32(2, 2, 9)}, {}),
    ("max_pool_indices", node("MaxPool", "x", ("y", "i"), kernel_shape=[3, 2], strides=[2, 1], pads=[1, 0, 1, 0]),
     {"x": f32(2, 3, 5, 4)}, {}),
    ("avg_pool_exclude_pad", node("AveragePool", "x", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 0, 1]),
     {"x": f32(1, 2, 7, 7)}, {}),
    ("avg_pool_include_pad", node("AveragePool", "x", kernel_shape=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1),
     {"x": f32(1, 2, 5, 5)}, {}),
    ("global_average_pool", node("GlobalAveragePool", "x"), {"x": f32(2, 3, 4, 5)}, {}),
    ("global_max_pool", node("GlobalMaxPool", "x"), {"x": f32(2, 3, 4, 5)}, {}),
    ("batch_norm", node("BatchNormalization", "xsbmv", epsilon=1e-3), {"x": f32(2, 3, 4, 4)},
     {"s": _w(3), "b": _w(3), "m": _w(3), "v": f32(3, low=0.5)}),
    ("instance_norm", node("InstanceNormalization", "xsb"), {"x": f32(2, 3, 4, 4)}, {"s": _w(3), "b": _w(3)}),
    ("layer_norm", node("LayerNormalization", "xsb", axis=-2), {"x": f32(2, 3, 4)}, {"s": _w(3, 4), "b": _w(3, 4)}),
    ("group_norm", node("GroupNormalization", "xsb", num_groups=2), {"x": f32(2, 4, 3, 3)},
     {"s": _w(4), "b": _w(4), "opset": 21}),
]


@pytest.mark.parametrize("n,inputs,inits", [c[1:] for c in NN_CASES], ids=[c[0] for c in NN_CASES])
def test_nn_op(n, inputs, inits):
    inits = dict(inits)
    opset = inits.pop("opset", 17)
    compare(model([n], inputs, opset=opset, inits=inits), inputs, atol=1e-5)


RESIZES = [
    dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
    dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"),
    dict(mode="nearest"),
    dict(mode="linear"),
    dict(mode="linear", coordinate_transformation_mode="align_corners"),
    dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
    dict(mode="linear", coordinate_transformation_mode="asymmetric"),
]


@pytest.mark.parametrize("attrs", RESIZES, ids=lambda a: "-".join(a.values()))
@pytest.mark.parametrize("by", ["scales", "sizes"])
def test_resize(attrs, by):
    x = {"x": f32(1, 2, 4, 5)}
    inits = {"r": np.zeros(0, np.float32)}
    if by == "scales":
        inits["s"] = np.array([1, 1, 2.0, 0.6], np.float32)
        n = node("Resize", ["x", "r", "s"], **attrs)
    else:
        inits["z"] = i64(1, 2, 7, 3)
        n = node("Resize", ["x", "r", "", "z"], **attrs)
    compare(model([n], x, inits=inits), x)


@pytest.mark.parametrize("kind,attrs", [
    ("LSTM", {}), ("LSTM", {"direction": "bidirectional"}), ("LSTM", {"direction": "reverse"}),
    ("GRU", {"linear_before_reset": 1}), ("GRU", {}), ("GRU", {"direction": "bidirectional"}),
    ("RNN", {}), ("RNN", {"activations": ["Relu"]}),
], ids=str)
def test_recurrent(kind, attrs):
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[kind]
    d = 2 if attrs.get("direction") == "bidirectional" else 1
    H, I, T, B = 3, 2, 4, 2
    inits = {"W": _w(d, gates * H, I), "R": _w(d, gates * H, H), "B": _w(d, 2 * gates * H)}
    x = {"x": f32(T, B, I), "h": f32(d, B, H)}
    outs = ["y", "yh"]
    ins = ["x", "W", "R", "B", "", "h"]
    if kind == "LSTM":
        x["c"] = f32(d, B, H)
        ins.append("c")
        outs.append("yc")
    compare(model([node(kind, ins, outs, hidden_size=H, **attrs)], x, inits=inits), x, atol=1e-5)
    # batch-major layout (which onnxruntime does not run): the same results, transposed
    batch_major = ember.onnx.load(model([node(kind, ins, outs, hidden_size=H, layout=1, **attrs)],
                                        {k: np.swapaxes(v, 0, 1) for k, v in x.items()}, inits=inits))
    want = ember.onnx.load(model([node(kind, ins, outs, hidden_size=H, **attrs)], x, inits=inits))(
        *(ember.tensor(v) for v in x.values()))
    got = batch_major(*(ember.tensor(np.swapaxes(v, 0, 1).copy()) for v in x.values()))
    np.testing.assert_allclose(got[0].detach().numpy(), want[0].detach().numpy().transpose(2, 0, 1, 3), rtol=1e-6)
    for g, w in zip(got[1:], want[1:]):
        np.testing.assert_allclose(g.detach().numpy(), np.swapaxes(w.detach().numpy(), 0, 1), rtol=1e-6)


def test_small_cnn_graph_and_gradients():
    """Conv, BatchNormalization, Relu, MaxPool, Resize, Concat, GlobalAveragePool, Flatten, Gemm, Softmax."""
    nodes = [
        node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        node("BatchNormalization", ["c1", "s", "sh", "m", "v"], ["n1"]),
        node("Relu", ["n1"], ["r1"]),
        node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        node("Resize", ["p1", "", "scales"], ["u1"], mode="linear"),
        node("Concat", ["u1", "r1"], ["cat"], axis=1),
        node("Conv", ["cat", "w2"], ["c2"], strides=[2, 2]),
        node("GlobalAveragePool", ["c2"], ["gap"]),
        node("Flatten", ["gap"], ["flat"]),
        node("Gemm", ["flat", "fc", "fcb"], ["logits"], transB=1),
        node("Softmax", ["logits"], ["y"]),
    ]
    inits = {"w1": _w(4, 3, 3, 3), "b1": _w(4), "s": _w(4), "sh": _w(4), "m": _w(4), "v": f32(4, low=0.5),
             "scales": np.array([1, 1, 2, 2], np.float32), "w2": _w(5, 8, 3, 3), "fc": _w(6, 5), "fcb": _w(6)}
    x = {"x": f32(2, 3, 8, 8)}
    loaded = compare(model(nodes, x, inits=inits), x)
    assert sorted(n for n, _ in loaded.named_parameters()) == sorted(inits)
    # gradients against the same network written in torch
    import torch
    import torch.nn.functional as TF
    t = {k: torch.tensor(v, requires_grad=k not in ("m", "v", "scales")) for k, v in inits.items()}
    tx = torch.tensor(x["x"], requires_grad=True)
    r1 = TF.relu(TF.batch_norm(TF.conv2d(tx, t["w1"], t["b1"], padding=1), t["m"], t["v"], t["s"], t["sh"]))
    u1 = TF.interpolate(TF.max_pool2d(r1, 2), scale_factor=2, mode="bilinear", align_corners=False)
    c2 = TF.conv2d(torch.cat([u1, r1], 1), t["w2"], stride=2)
    ty = torch.softmax(TF.linear(c2.mean((2, 3)), t["fc"], t["fcb"]), 1)
    inp = ember.tensor(x["x"], requires_grad=True)
    g = f32(2, 6)
    loaded(inp).backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    assert_close(inp.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-6)
    params = dict(loaded.named_parameters())
    for k in ("w1", "b1", "s", "sh", "w2", "fc", "fcb"):
        assert_close(params[k].grad.numpy(), t[k].grad.numpy(), rtol=1e-4, atol=1e-6)


def test_exported_model_loads_with_its_state_dict_and_gradients():
    ember.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 5), nn.LogSoftmax(1))
    x = ember.randn(2, 3, 6, 6)
    loaded = ember.onnx.load(export_bytes(m, x, do_constant_folding=False))
    assert set(loaded.state_dict()) == set(m.state_dict())
    g = ember.randn(2, 5)
    m(x).backward(g)
    loaded(x).backward(g)
    params = dict(loaded.named_parameters())
    for name, p in m.named_parameters():
        np.testing.assert_allclose(params[name].grad.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)
    loaded.load_state_dict({k: v * 2 for k, v in m.state_dict().items()})  # the same keys load back
    assert_close([loaded(x)], reference(m.requires_grad_(False).apply(_double), (x,)))


def _double(mod):
    for p in mod.parameters(recurse=False):
        p.data = p.data * 2


def test_loaded_module_inputs():
    x = {"x": X, "y": Y}
    loaded = ember.onnx.load(model([node("Sub", "xy", ("z",))], x))
    assert loaded.input_names == ["x", "y"] and loaded.output_names == ["z"]
    a, b = ember.tensor(X), ember.tensor(Y)
    np.testing.assert_array_equal(loaded(y=b, x=a).numpy(), X - Y)
    with pytest.raises(TypeError, match="missing inputs: y"):
        loaded(a)
    with pytest.raises(TypeError, match="takes 2 inputs"):
        loaded(a, b, b)
    with pytest.raises(TypeError, match="unexpected keyword"):
        loaded(a, b, w=b)
    assert "inputs=['x', 'y']" in repr(loaded)


def test_load_from_path_file_and_proto(tmp_path):
    m = model([node("Relu", "x")], {"x": X})
    path = tmp_path / "relu.onnx"
    path.write_bytes(m.SerializeToString())
    for src in (path, str(path), m, m.SerializeToString()):
        np.testing.assert_array_equal(ember.onnx.load(src)(ember.tensor(X)).numpy(), np.maximum(X, 0))
    with open(path, "rb") as fh:
        np.testing.assert_array_equal(ember.onnx.load(fh)(ember.tensor(X)).numpy(), np.maximum(X, 0))


def test_external_data(tmp_path):
    w = f32(3, 4)
    m = model([node("MatMul", "xw")], {"x": f32(2, 3)}, inits={"w": w})
    path = tmp_path / "ext.onnx"
    onnx.save_model(m, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin",
                    size_threshold=0)
    loaded = ember.onnx.load(path)
    x = f32(2, 3)
    np.testing.assert_allclose(loaded(ember.tensor(x)).detach().numpy(), x @ w, rtol=1e-6)


def _torch_models():
    torch = pytest.importorskip("torch")
    tnn = torch.nn

    class Encoder(tnn.Module):
        def __init__(self):
            super().__init__()
            self.layer = tnn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, batch_first=True, norm_first=True)

        def forward(self, x):
            return self.layer(x, is_causal=False)
    return torch, {
        "cnn": (tnn.Sequential(tnn.Conv2d(3, 8, 3, padding=1), tnn.BatchNorm2d(8), tnn.ReLU(), tnn.MaxPool2d(2),
                               tnn.Conv2d(8, 8, 3, stride=2), tnn.AdaptiveAvgPool2d(1), tnn.Flatten(),
                               tnn.Linear(8, 4)), (2, 3, 16, 16)),
        "transformer": (Encoder(), (2, 5, 16)),
        "lstm": (tnn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True), (2, 5, 4)),
        "gru": (tnn.GRU(4, 6), (5, 2, 4)),
        "upsample": (tnn.Sequential(tnn.Upsample(scale_factor=2, mode="bilinear"), tnn.Upsample(scale_factor=2),
                                    tnn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1), tnn.GELU(),
                                    tnn.LayerNorm(56)), (1, 3, 7, 7)),
        "activations": (tnn.Sequential(tnn.Hardswish(), tnn.SiLU(), tnn.Mish(), tnn.ELU(), tnn.Softplus(),
                                       tnn.GroupNorm(2, 4), tnn.PReLU(), tnn.Flatten(1), tnn.Softmax(-1)),
                        (2, 4, 3)),
    }


@pytest.mark.parametrize("name", ["cnn", "transformer", "lstm", "gru", "upsample", "activations"])
def test_files_from_torch_onnx_export(name):
    """ONNX files written by another exporter (torch.onnx) load and match onnxruntime and torch itself."""
    import io
    import warnings
    torch, models = _torch_models()
    torch.manual_seed(0)
    m, shape = models[name]
    m.eval()
    x = torch.randn(*shape)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (x,), buf, opset_version=17, dynamo=False)
    with torch.no_grad():
        want = [t.numpy() for t in _torch_flat(m(x))]
    data = buf.getvalue()
    got = ember.onnx.load(data)(ember.tensor(x.numpy()))
    got = list(got) if isinstance(got, tuple) else [got]
    assert_close(got, want, atol=1e-5)
    sess = session(data)
    assert_close(got, sess.run(None, {sess.get_inputs()[0].name: x.numpy()}), atol=1e-5)


def _torch_flat(out):
    return [t for o in out for t in _torch_flat(o)] if isinstance(out, tuple) else [out]
