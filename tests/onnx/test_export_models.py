"""ember.onnx.export of whole models and tensor ops, with dynamic axes; the file format and export options."""
import io

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

from .helpers import check, export_bytes, onnx, ort_run, reference, assert_close


@pytest.fixture(autouse=True)
def _seed():
    ember.manual_seed(0)


BT = {"input_0": {0: "batch", 1: "time"}}


class GPTBlock(nn.Module):
    """A pre-norm GPT block with learned positions, built from Linear, LayerNorm and sdpa."""

    def __init__(self, d=8, heads=2, block=16):
        super().__init__()
        self.heads = heads
        self.wpe = nn.Embedding(block, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        x = x + self.wpe(ember.arange(T))
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer(norm_first):
    m = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True, norm_first=norm_first).eval()
    check(m, ember.randn(2, 3, 8), BT, [ember.randn(5, 7, 8), ember.randn(1, 1, 8)])


def test_transformer_encoder_with_padding_mask():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu")
    m = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()

    class Encode(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = m

        def forward(self, x, pad):
            return self.enc(x, src_key_padding_mask=pad)
    pad = ember.tensor([[False, False, True], [False, False, False]])
    other = ember.tensor([[False] * 4, [False, True, True, True], [False] * 4, [False, False, False, True],
                          [False] * 4])
    check(Encode(), (ember.randn(3, 2, 8), pad), {"input_0": {0: "s", 1: "b"}, "input_1": {0: "b", 1: "s"}},
          [(ember.randn(4, 5, 8), other)])


def test_gpt_block():
    check(GPTBlock(), ember.randn(2, 5, 8), BT, [ember.randn(3, 9, 8), ember.randn(1, 16, 8)])


def test_multihead_attention():
    class MHA(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2, kdim=6, vdim=4)

        def forward(self, q, k, v, pad):
            a, w = self.attn(q, k, v, key_padding_mask=pad)
            causal = ember.ones(q.shape[0], k.shape[0]).triu(1).bool()
            b, _ = self.attn(q, k, v, attn_mask=causal, need_weights=False)
            return a, w, b
    pad = ember.tensor([[False, False, True], [False, False, False]])
    check(MHA().eval(), (ember.randn(3, 2, 8), ember.randn(3, 2, 6), ember.randn(3, 2, 4), pad))


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
@pytest.mark.parametrize("layers,batch_first,bidirectional", [(1, False, False), (2, True, True), (2, False, True),
                                                               (1, True, False)])
def test_recurrent(cls, layers, batch_first, bidirectional):
    m = cls(4, 5, num_layers=layers, batch_first=batch_first, bidirectional=bidirectional)
    axes = {0: "batch", 1: "time"} if batch_first else {0: "time", 1: "batch"}
    shape = (lambda b, t: (b, t, 4)) if batch_first else (lambda b, t: (t, b, 4))
    check(m, ember.randn(*shape(2, 3)), {"input_0": axes}, [ember.randn(*shape(5, 7)), ember.randn(*shape(1, 1))])


def test_lstm_initial_state_is_an_input():
    m = nn.LSTM(4, 5, num_layers=2, batch_first=True)
    h, c = ember.randn(2, 3, 5), ember.randn(2, 3, 5)
    data = check(m, (ember.randn(3, 6, 4), (h, c)))
    assert len(onnx.load_from_string(data).graph.input) == 3


def test_lstm_exports_lstm_nodes():
    data = export_bytes(nn.LSTM(4, 5, num_layers=2, bidirectional=True), ember.randn(3, 2, 4))
    ops = [n.op_type for n in onnx.load_from_string(data).graph.node]
    assert ops.count("LSTM") == 4 and "MatMul" not in ops  # the input projections fold into the LSTM nodes


class Residual(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.c2, self.b2 = nn.Conv2d(8, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 5)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(y + self.b2(self.c2(y)), inplace=True)
        return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))


def test_residual_cnn_dynamic_batch_and_image_size():
    check(Residual().eval(), ember.randn(2, 3, 8, 8), {"input_0": {0: "b", 2: "h", 3: "w"}},
          [ember.randn(5, 3, 11, 6)])


class TensorOps(nn.Module):
    def forward(self, x, i):
        B = x.shape[0]
        y = x.view(B, -1).reshape(B, 2, -1).permute(0, 2, 1).transpose(1, 2).flatten(1)
        y = ember.stack([y, y * 2], 0)
        y = ember.cat([y[:, 1:, ::2][..., None].squeeze(-1).unsqueeze(0), y[None, :, 1:, :6]], 3)
        return (y.sum(-1), y.mean((1, 2), keepdim=True), y.max(-1).values, y.amax(-1), x.argmax(1), x.std(1),
                ember.bmm(x.view(B, 1, -1), x.view(B, -1, 1)), x @ x.transpose(1, 2), 2 - x / 3 ** x.abs(),
                (x + 1) * ember.ones(4, 1) - 0.5, x // 0.3, x % 0.7, x.clamp(-0.5, 0.5), ember.where(x > 0, x, 0.0),
                x.masked_fill(x < 0, 1.0), (x > 0).float(), x.norm(dim=2), x.cumsum(1), x.flip(1), x.repeat(1, 2, 1),
                x[:, 0], x[:, -1, 1:], x[..., i], x[:, i], x[:, [0, 1], [1, 2]], x.index_select(1, i), x.chunk(3, 2)[1],
                x.gather(2, ember.zeros(B, 4, 1, dtype=ember.int64)), x.expand(2, B, 4, 3).sum(0),
                x.unbind(1)[2], ember.softmax(x, -1), ember.log_softmax(x, 1), x.exp().log1p().sqrt().rsqrt())


def test_tensor_ops_dynamic_batch():
    i = ember.tensor([0, 2, 1])
    check(TensorOps(), (ember.randn(2, 4, 3), i), {"input_0": {0: "batch"}}, [(ember.randn(5, 4, 3), i)])


def test_dynamic_dims_are_named_in_the_file():
    data = export_bytes(GPTBlock(), ember.randn(2, 5, 8), dynamic_axes={"x": {0: "batch", 1: "time"},
                                                                         "y": {0: "batch"}},
                        input_names=["x"], output_names=["y"])
    g = onnx.load_from_string(data).graph
    dims = lambda v: [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]  # noqa: E731
    assert dims(g.input[0]) == ["batch", "time", 8]
    assert dims(g.output[0]) == ["batch", "time", 8]


def test_file_format_and_names(tmp_path):
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.BatchNorm1d(4), nn.Linear(4, 2)).eval()
    path = tmp_path / "m.onnx"
    ember.onnx.export(m, ember.randn(2, 3), str(path), input_names=["x"], output_names=["logits"],
                      do_constant_folding=False)
    model = onnx.load(str(path))
    onnx.checker.check_model(model)
    assert model.ir_version == 8 and [(o.domain, o.version) for o in model.opset_import] == [("", 17)]
    assert {i.name for i in model.graph.initializer} >= set(m.state_dict()) - {"2.num_batches_tracked"}
    assert [i.name for i in model.graph.input] == ["x"] and [o.name for o in model.graph.output] == ["logits"]
    loaded = ember.onnx.load(path)
    assert set(loaded.state_dict()) >= set(m.state_dict()) - {"2.num_batches_tracked"}
    x = ember.randn(2, 3)
    assert_close([loaded(x)], reference(m, (x,)))


def test_constant_folding_drops_parameter_only_ops():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)).eval()
    x = ember.randn(1, 3, 6, 6)
    folded, plain = (onnx.load_from_string(export_bytes(m, x, do_constant_folding=f)) for f in (True, False))
    assert len(folded.graph.node) < len(plain.graph.node)
    for model in (folded, plain):
        assert_close(ort_run(model.SerializeToString(), (x,)), reference(m, (x,)))


def test_keyword_and_nested_inputs():
    class M(nn.Module):
        def forward(self, x, pair, *, scale):
            return x * pair[0] + pair[1] * scale
    args = (ember.randn(2, 3), (ember.randn(2, 3), ember.randn(3)), {"scale": ember.randn(1)})
    data = export_bytes(M(), args)
    assert [i.name for i in onnx.load_from_string(data).graph.input] == ["input_0", "input_1", "input_2", "scale"]
    with ember.no_grad():
        ref = M()(args[0], args[1], scale=args[2]["scale"]).numpy()
    np.testing.assert_allclose(ort_run(data, (args[0],) + args[1] + (args[2]["scale"],))[0], ref, rtol=1e-6)


def test_output_structure_and_identity_outputs():
    class M(nn.Module):
        def forward(self, x):
            y = x.relu()
            return {"same": x, "twice": (y, y)}
    x = ember.randn(2, 3)
    out = ort_run(export_bytes(M(), x), (x,))
    assert len(out) == 3
    np.testing.assert_array_equal(out[0], x.numpy())
    np.testing.assert_array_equal(out[1], out[2])


def test_writes_to_file_object_and_verbose(capsys):
    buf = io.BytesIO()
    ember.onnx.export(nn.Linear(2, 2), (ember.randn(1, 2),), buf, verbose=True)
    assert buf.getvalue() and "Gemm" in capsys.readouterr().out


def test_export_leaves_dispatch_untouched():
    from ember._ops import binary
    from ember.autograd.function import Function
    before = (binary.Mul.apply, Function.apply, ember.mul(ember.ones(1), 2).grad_fn)
    export_bytes(nn.Linear(2, 2), ember.randn(1, 2))
    assert binary.Mul.apply is before[0] and Function.apply is before[1]
    x = ember.ones(2, requires_grad=True)
    (x * 2).sum().backward()  # recording is off again, gradients work
    assert x.grad.tolist() == [2.0, 2.0]


def test_docstring_examples():
    import doctest
    from ember.onnx import exporter, loader
    for module in (exporter, loader):
        result = doctest.testmod(module, globs={"ember": ember}, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.attempted and not result.failed


def test_import_ember_does_not_import_onnx():
    import subprocess
    import sys
    code = "import sys, ember, ember.onnx; print('onnx' in sys.modules, 'onnxruntime' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


class Shapes(nn.Module):
    """Sizes taken from the input's shape: reshape targets, expand, zeros, arange, Python numbers."""

    def forward(self, x):
        B, T, C = x.shape
        flat = x.reshape(B * T, C) * ember.ones(B * T, 1)  # a product of two dynamic sizes; a full constant
        ids = ember.arange(T).expand(B, T)
        scaled = x.view(B, -1) / T + (T - 1)  # Python numbers that depend on a dynamic size
        tail = x[:, T - 2:, :]
        return flat.view(B, T, C) + ids.unsqueeze(-1), scaled, tail, x.new_zeros(B, 2).fill_(3.0)


def test_sizes_from_dynamic_axes():
    check(Shapes(), ember.randn(2, 3, 4), BT, [ember.randn(5, 7, 4), ember.randn(1, 2, 4)])


def test_size_dependent_values_that_cannot_be_expressed():
    class Table(nn.Module):
        def forward(self, x):
            return x + ember.linspace(0, 1, x.shape[0]).unsqueeze(1)  # values (not just the shape) depend on B
    with pytest.raises(ember.onnx.UnsupportedOperatorError, match="constant of shape \\[2\\] that changes"):
        export_bytes(Table(), ember.randn(2, 3), dynamic_axes={"input_0": [0]})
    check(Table(), ember.randn(2, 3))  # fine with a fixed batch size
