"""nn.utils.fusion against torch: fused weights equal torch's, and the fused module's output equals conv/linear
followed by BatchNorm in eval mode."""
import doctest

import numpy as np
import pytest
import torch

import ember
from ember.nn.utils import fusion

from .torch_ref import close, same_error

CONVS = {  # (conv builder, bn builder, input shape, transpose)
    "conv1d": (lambda nn, b: nn.Conv1d(3, 4, 3, bias=b), lambda nn, a: nn.BatchNorm1d(4, affine=a), (2, 3, 9), False),
    "conv2d": (lambda nn, b: nn.Conv2d(3, 4, 3, bias=b), lambda nn, a: nn.BatchNorm2d(4, affine=a), (2, 3, 7, 7),
               False),
    "conv2d_groups": (lambda nn, b: nn.Conv2d(4, 6, 3, groups=2, bias=b), lambda nn, a: nn.BatchNorm2d(6, affine=a),
                      (2, 4, 6, 6), False),
    "conv3d": (lambda nn, b: nn.Conv3d(2, 3, 2, bias=b), lambda nn, a: nn.BatchNorm3d(3, affine=a), (1, 2, 4, 4, 4),
               False),
    "conv_transpose2d": (lambda nn, b: nn.ConvTranspose2d(3, 5, 3, bias=b), lambda nn, a: nn.BatchNorm2d(5, affine=a),
                         (2, 3, 5, 5), True),
}


def _trained_bn(bn_t, channels_shape):
    """Gives torch's BatchNorm non-trivial running statistics and affine parameters."""
    with torch.no_grad():
        bn_t.train()
        for _ in range(3):
            bn_t(torch.randn(*channels_shape) * 3 + 1)
        if bn_t.affine:
            bn_t.weight.uniform_(0.5, 2)
            bn_t.bias.uniform_(-1, 1)
    return bn_t.eval()


@pytest.mark.parametrize("kind", CONVS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_fuse_conv_bn_eval(kind, bias, affine):
    make_conv, make_bn, shape, transpose = CONVS[kind]
    torch.manual_seed(0)
    ct, bt = make_conv(torch.nn, bias).eval(), make_bn(torch.nn, affine)
    yshape = ct(torch.zeros(*shape)).shape
    _trained_bn(bt, yshape)
    ce, be = make_conv(ember.nn, bias).eval(), make_bn(ember.nn, affine).eval()
    ce.load_state_dict(ct.state_dict())
    be.load_state_dict(bt.state_dict())
    ft = torch.nn.utils.fuse_conv_bn_eval(ct, bt, transpose)
    fe = ember.nn.utils.fuse_conv_bn_eval(ce, be, transpose)
    assert type(fe) is type(ce) and fe is not ce
    assert isinstance(fe.weight, ember.nn.Parameter) and isinstance(fe.bias, ember.nn.Parameter)
    assert list(fe.state_dict()) == list(ft.state_dict())
    for k, v in ft.state_dict().items():
        close(fe.state_dict()[k], v, what=k, tol=(1e-5, 1e-6))
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    close(fe(ember.tensor(x)), be(ce(ember.tensor(x))), what="fused vs conv+bn", tol=(1e-4, 1e-5))
    close(fe(ember.tensor(x)), ft(torch.tensor(x)), what="fused vs torch's", tol=(1e-4, 1e-5))
    assert (ce.bias is None) == (not bias)  # the original is untouched


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("bn_features", [5, 1])
def test_fuse_linear_bn_eval(bias, bn_features):
    torch.manual_seed(0)
    lt, bt = torch.nn.Linear(4, 5, bias=bias).eval(), torch.nn.BatchNorm1d(bn_features)
    _trained_bn(bt, (8, bn_features))
    le, be = ember.nn.Linear(4, 5, bias=bias).eval(), ember.nn.BatchNorm1d(bn_features).eval()
    le.load_state_dict(lt.state_dict())
    be.load_state_dict(bt.state_dict())
    ft, fe = torch.nn.utils.fuse_linear_bn_eval(lt, bt), ember.nn.utils.fuse_linear_bn_eval(le, be)
    for k, v in ft.state_dict().items():
        close(fe.state_dict()[k], v, what=k, tol=(1e-5, 1e-6))
    x = np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32)
    close(fe(ember.tensor(x)), ft(torch.tensor(x)), tol=(1e-4, 1e-5))
    if bn_features == 5:
        close(fe(ember.tensor(x)), be(le(ember.tensor(x))), tol=(1e-4, 1e-5))


def test_fuse_weights_dtypes_and_requires_grad():
    rng = np.random.default_rng(1)
    w, b = rng.standard_normal((4, 3, 2, 2)), rng.standard_normal(4)
    rm, rv = rng.standard_normal(4), rng.uniform(0.5, 2, 4)
    for lib, U in ((torch, torch.nn.utils), (ember, ember.nn.utils)):
        args = (lib.tensor(w, dtype=lib.float64), lib.tensor(b, dtype=lib.float32, requires_grad=True),
                lib.tensor(rm, dtype=lib.float64), lib.tensor(rv, dtype=lib.float64), 1e-3, None, None)
        fw, fb = U.fuse_conv_bn_weights(*args)
        assert (str(fw.dtype)[-7:], str(fb.dtype)[-7:], fw.requires_grad, fb.requires_grad) == \
            ("float64", "float32", False, True)
        assert fw.grad_fn is None and fb.grad_fn is None
    close(ember.nn.utils.fuse_conv_bn_weights(*(ember.tensor(a) for a in (w, b, rm, rv)), 1e-5, None, None)[0],
          torch.nn.utils.fuse_conv_bn_weights(*(torch.tensor(a) for a in (w, b, rm, rv)), 1e-5, None, None)[0],
          "float64")
    lw, bw, bb = rng.standard_normal((4, 3)), rng.standard_normal(4), rng.standard_normal(4)
    fe = ember.nn.utils.fuse_linear_bn_weights(*(ember.tensor(a) for a in (lw, b, rm, rv)), 1e-5,
                                               *(ember.tensor(a) for a in (bw, bb)))
    ft = torch.nn.utils.fuse_linear_bn_weights(*(torch.tensor(a) for a in (lw, b, rm, rv)), 1e-5,
                                               *(torch.tensor(a) for a in (bw, bb)))
    for a, c in zip(fe, ft):
        close(a, c, "float64")


def test_errors():
    ct, bt = torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3)
    ce, be = ember.nn.Conv2d(2, 3, 1), ember.nn.BatchNorm2d(3)
    same_error(lambda: ember.nn.utils.fuse_conv_bn_eval(ce, be), lambda: torch.nn.utils.fuse_conv_bn_eval(ct, bt))
    ct.eval()
    ce.eval()
    bt, be = torch.nn.BatchNorm2d(3, track_running_stats=False).eval(), \
        ember.nn.BatchNorm2d(3, track_running_stats=False).eval()
    same_error(lambda: ember.nn.utils.fuse_conv_bn_eval(ce, be), lambda: torch.nn.utils.fuse_conv_bn_eval(ct, bt))
    lt, le = torch.nn.Linear(2, 3).eval(), ember.nn.Linear(2, 3).eval()
    bt, be = torch.nn.BatchNorm1d(4).eval(), ember.nn.BatchNorm1d(4).eval()
    same_error(lambda: ember.nn.utils.fuse_linear_bn_eval(le, be), lambda: torch.nn.utils.fuse_linear_bn_eval(lt, bt))


def test_docstring_examples():
    result = doctest.testmod(fusion, globs={"ember": ember, **{k: getattr(fusion, k) for k in dir(fusion)}},
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0 and result.attempted > 0
