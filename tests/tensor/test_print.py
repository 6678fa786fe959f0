"""repr of tensors, character for character against torch (``torch.`` read as ``ember.``, grad_fn names without
torch's numeric suffix)."""
import re

import pytest
import torch

import ember

nan, inf = float("nan"), float("inf")

DATA = [
    "[1, 2, 3]", "[1., 2., 3.]", "[0.1, 2.5, 3.]", "[1e-5, 1.]", "[1e10, 1.]", "[123456789., 1.]", "[1e8, 2e8]",
    "[1e9, 1.]", "[nan, 1., inf, -inf]", "[nan, 1.5]", "[nan]", "[inf, -inf]", "[0., 0.]", "[-0., 1.]", "[True, False]",
    "3.5", "3", "True", "nan", "1e-8", "1e20", "-0.5", "[]", "[[]]", "[[1.5, -2.25], [3., 4.]]",
    "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]", "[-1, 100, 1000000]", "[1+2j, 3-4j]", "[1.5+0j, -2.25j]", "1+1j",
    "[0.001, 1000.]", "[0.001, 1000.1]", "[0.0001, 1.]", "[0.00009, 1.]", "[123.456, 0.001]", "list(range(2000))",
    "[[float(i * j) for i in range(50)] for j in range(30)]", "[[i * 0.37 for i in range(10)] for j in range(200)]",
    "list(range(30))", "[i * 1.5 for i in range(40)]",
    "[[[i + j + k for i in range(10)] for j in range(12)] for k in range(11)]",
    "[123456.789, 2.]", "[-1.5, 2.5, -3.5]", "[[1e-10, 1e10], [nan, -inf]]", "[1/3 + 1j/7, -2e-5j]",
]
DTYPES = [None, "float64", "float16", "bfloat16", "int32", "int64", "uint8", "int8", "bool", "complex128", "complex64"]


def norm(s):
    return re.sub(r"grad_fn=<(\w+?)\d*>", r"grad_fn=<\1>", s.replace("torch.", "ember."))


def same_repr(e, t):
    assert norm(repr(e)) == norm(repr(t))


def _buildable(src, dtype):
    try:
        torch.tensor(eval(src), dtype=getattr(torch, dtype) if dtype else None)
        return True
    except (RuntimeError, TypeError, ValueError):  # e.g. complex data into an integer dtype
        return False


@pytest.mark.parametrize("src,dtype", [(s, d) for s in DATA for d in DTYPES if _buildable(s, d)])
def test_repr_matches_torch(src, dtype):
    data = eval(src)
    t = torch.tensor(data, dtype=getattr(torch, dtype) if dtype else None)
    e = ember.tensor(data, dtype=getattr(ember, dtype) if dtype else None)
    same_repr(e, t)
    assert str(e) == norm(str(t))


def test_repr_autograd_and_shapes():
    x, tx = ember.tensor([1., 2.], requires_grad=True), torch.tensor([1., 2.], requires_grad=True)
    same_repr(x, tx)
    same_repr(x * 2, tx * 2)
    assert repr(ember.ones(2, dtype=ember.float64, requires_grad=True)) == \
        norm(repr(torch.ones(2, dtype=torch.float64, requires_grad=True)))
    for shape in [(2, 0), (0,), (3, 0, 2)]:
        for d in ("float32", "int64", "float64", "bool"):
            same_repr(ember.zeros(shape, dtype=getattr(ember, d)), torch.zeros(shape, dtype=getattr(torch, d)))
    big = torch.arange(3000.).reshape(3, 1000)
    same_repr(ember.arange(3000.).reshape(3, 1000), big)
    same_repr(ember.arange(3000.).reshape(3, 1000) * 1.5 + 0.25, big * 1.5 + 0.25)


def test_default_dtype_changes_suffixes():
    ember.set_default_dtype(ember.float64)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for src in ("[1., 2.]", "[1+1j]", "[]"):
            same_repr(ember.tensor(eval(src)), torch.tensor(eval(src)))
        same_repr(ember.tensor([1., 2.], dtype=ember.float32), torch.tensor([1., 2.], dtype=torch.float32))
    finally:
        torch.set_default_dtype(old)


OPTIONS = [dict(precision=2), dict(precision=8), dict(sci_mode=True), dict(sci_mode=False), dict(linewidth=40),
           dict(threshold=5), dict(threshold=5, edgeitems=1), dict(profile="short"), dict(profile="full"),
           dict(edgeitems=0, threshold=3)]


@pytest.mark.parametrize("opts", OPTIONS, ids=str)
def test_printoptions(opts):
    try:
        ember.set_printoptions(**opts)
        torch.set_printoptions(**opts)
        for src in ("[[i * 0.37 - 3 for i in range(12)] for j in range(9)]", "[1e-6, 1., 1e6]", "list(range(25))",
                    "[[1., 2.], [3., 4.]]", "3.14159265", "[1.5e-7]"):
            data = eval(src)
            same_repr(ember.tensor(data), torch.tensor(data))
        x = ember.tensor([[1.123456789, 2.0]] * 3, requires_grad=True)
        tx = torch.tensor([[1.123456789, 2.0]] * 3, requires_grad=True)
        same_repr(x, tx)
    finally:
        ember.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def test_suffix_wraps_past_linewidth():
    data = [[123456.5, 2.25, 3.5, 4.25, 5.5, 6.75]] * 2
    e = ember.tensor(data, dtype=ember.float64, requires_grad=True)
    t = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    same_repr(e, t)
    same_repr(e * 2, t * 2)


def test_subclass_prefix_and_format():
    class MyTensor(ember.Tensor):
        pass

    assert repr(ember.ones(2)._as_subclass(MyTensor)) == "MyTensor([1., 1.])"  # torch prints the subclass's name
    assert f"{ember.tensor(2.5):.3f}" == f"{torch.tensor(2.5):.3f}"
