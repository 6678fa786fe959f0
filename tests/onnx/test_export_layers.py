"""ember.onnx.export of single layers and activations: onnxruntime (and ember.onnx.load) against ember."""
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

from .helpers import check

BATCH = {"input_0": {0: "batch"}}


def randn(*shape):
    return ember.randn(*shape)


@pytest.fixture(autouse=True)
def _seed():
    ember.manual_seed(0)


# (id, module factory, example input, inputs at other batch sizes): every one exported with a dynamic batch axis
LAYERS = [
    ("linear", lambda: nn.Linear(4, 3), randn(2, 4), [randn(5, 4)]),
    ("linear_3d_nobias", lambda: nn.Linear(4, 3, bias=False), randn(2, 3, 4), [randn(5, 3, 4)]),
    ("conv1d", lambda: nn.Conv1d(3, 4, 3, padding=2), randn(2, 3, 8), [randn(5, 3, 8)]),
    ("conv2d", lambda: nn.Conv2d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2), randn(2, 4, 9, 9),
     [randn(5, 4, 9, 9)]),
    ("conv2d_same", lambda: nn.Conv2d(3, 4, (3, 5), padding="same", bias=False), randn(2, 3, 7, 8),
     [randn(1, 3, 7, 8)]),
    ("conv_transpose2d", lambda: nn.ConvTranspose2d(3, 4, 3, stride=2, padding=1, output_padding=1), randn(2, 3, 5, 5),
     [randn(5, 3, 5, 5)]),
    ("conv_transpose2d_groups", lambda: nn.ConvTranspose2d(4, 6, (2, 3), stride=(2, 1), groups=2, dilation=2),
     randn(2, 4, 4, 5), [randn(1, 4, 4, 5)]),
    ("max_pool2d", lambda: nn.MaxPool2d(3, 2, padding=1), randn(2, 3, 9, 9), [randn(5, 3, 9, 9)]),
    ("max_pool2d_ceil", lambda: nn.MaxPool2d(3, 2, ceil_mode=True), randn(2, 3, 8, 8), [randn(5, 3, 8, 8)]),
    ("avg_pool2d", lambda: nn.AvgPool2d(2), randn(2, 3, 8, 8), [randn(5, 3, 8, 8)]),
    ("avg_pool2d_pad", lambda: nn.AvgPool2d(3, 2, padding=1, count_include_pad=False), randn(2, 3, 9, 9),
     [randn(5, 3, 9, 9)]),
    ("adaptive_avg_pool2d_global", lambda: nn.AdaptiveAvgPool2d(1), randn(2, 3, 8, 6), [randn(5, 3, 8, 6)]),
    ("adaptive_avg_pool2d_divisor", lambda: nn.AdaptiveAvgPool2d((2, 3)), randn(2, 3, 8, 6), [randn(5, 3, 8, 6)]),
    ("adaptive_avg_pool2d_uneven", lambda: nn.AdaptiveAvgPool2d(3), randn(2, 3, 7, 5), [randn(5, 3, 7, 5)]),
    ("batch_norm1d", lambda: nn.BatchNorm1d(3), randn(4, 3), [randn(5, 3)]),
    ("batch_norm2d", lambda: nn.BatchNorm2d(3), randn(2, 3, 4, 4), [randn(5, 3, 4, 4)]),
    ("layer_norm", lambda: nn.LayerNorm([3, 4]), randn(2, 3, 4), [randn(5, 3, 4)]),
    ("group_norm", lambda: nn.GroupNorm(2, 4), randn(2, 4, 3, 3), [randn(5, 4, 3, 3)]),
    ("instance_norm", lambda: nn.InstanceNorm2d(3, affine=True), randn(2, 3, 4, 4), [randn(5, 3, 4, 4)]),
    ("rms_norm", lambda: nn.RMSNorm(4), randn(2, 3, 4), [randn(5, 3, 4)]),
    ("dropout_eval", lambda: nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5)), randn(2, 4), [randn(5, 4)]),
    ("upsample_nearest", lambda: nn.Upsample(scale_factor=2), randn(2, 3, 4, 4), [randn(5, 3, 4, 4)]),
    ("upsample_bilinear", lambda: nn.Upsample(size=(5, 7), mode="bilinear"), randn(2, 3, 4, 4), [randn(5, 3, 4, 4)]),
]


def _trained_stats(m):
    for mod in m.modules():
        if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
            mod.running_mean.normal_()
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.normal_()
    return m.eval()


@pytest.mark.parametrize("make,x,others", [c[1:] for c in LAYERS], ids=[c[0] for c in LAYERS])
def test_layer(make, x, others):
    check(_trained_stats(make()), x, BATCH, others)


# every activation module of ember.nn, on values spread over their interesting ranges
ACTIVATIONS = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
               "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
               "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax"]
_ARGS = {"Threshold": (0.1, 2.0), "Softmin": (1,), "Softmax": (-1,), "LogSoftmax": (1,)}


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation(name):
    m = getattr(nn, name)(*_ARGS.get(name, ())).eval()
    x = randn(2, 4, 3, 2) * 4
    check(m, x, BATCH, [randn(5, 4, 3, 2) * 4])


@pytest.mark.parametrize("m", [nn.GELU(approximate="tanh"), nn.ELU(0.5), nn.CELU(0.7), nn.LeakyReLU(0.2),
                               nn.Softplus(beta=2.0, threshold=3.0), nn.Hardtanh(-0.5, 2.0), nn.PReLU(4),
                               nn.Softshrink(1.0), nn.Hardshrink(0.2), nn.GLU(dim=1)],
                         ids=lambda m: repr(m))
def test_activation_options(m):
    check(m, randn(2, 4, 6) * 3, BATCH, [randn(3, 4, 6)])


def test_all_activations_listed():
    from ember.nn.modules import activation
    assert sorted(set(activation.__all__)) == sorted(ACTIVATIONS)


@pytest.mark.parametrize("opset", [18, 20, 23])
def test_newer_opsets(opset):
    """Gelu (20) and RMSNormalization (23) become single nodes; the results stay the same."""
    import onnx
    m = nn.Sequential(nn.Linear(4, 4), nn.GELU(), nn.RMSNorm(4), nn.Mish(), nn.LayerNorm(4))
    data = check(m, randn(2, 4), BATCH, [randn(3, 4)], opset_version=opset)
    ops = {n.op_type for n in onnx.load_from_string(data).graph.node}
    assert ("Gelu" in ops) == (opset >= 20)
    assert ("RMSNormalization" in ops) == (opset >= 23)
    assert ("Mish" in ops) == (opset >= 18)


def test_embedding_dynamic_batch_and_length():
    m = nn.Embedding(10, 4, padding_idx=0)
    check(m, ember.tensor([[1, 2, 0], [3, 4, 9]]), {"input_0": {0: "b", 1: "t"}}, [ember.tensor([[5, 6, 7, 8, 1]])])


def test_sdpa_options():
    class Attn(nn.Module):
        def forward(self, q, k, v, mask, bias):
            return (F.scaled_dot_product_attention(q, k, v),
                    F.scaled_dot_product_attention(q, k, v, is_causal=True),
                    F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                    F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3))
    q, k, v = randn(2, 2, 3, 4), randn(2, 2, 5, 4), randn(2, 2, 5, 4)
    mask = ember.rand(3, 5) > 0.3
    mask[:, 0] = True
    check(Attn(), (q, k, v, mask, randn(2, 1, 3, 5)))


def test_max_pool_indices():
    class Pool(nn.Module):
        def forward(self, x):
            return F.max_pool2d(x, 3, 2, padding=1, return_indices=True)
    check(Pool(), randn(2, 3, 7, 6), {"input_0": {0: "b", 2: "h"}}, [randn(3, 3, 9, 6)])
