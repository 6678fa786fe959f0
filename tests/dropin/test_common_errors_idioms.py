"""The mistakes users make while writing and debugging models: ember must raise torch's exception class (and warning
category), with a message that states the same key facts (the op, the shapes, the dtypes)."""
import warnings

import numpy as np
import pytest
import torch

import ember


def F(lib):
    return lib.nn.functional


def _raised(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - the point is to compare what each library raises
            return e
    return None


def _backward_twice(lib):
    x = lib.randn(3, requires_grad=True)
    y = x.exp().sum()
    y.backward()
    y.backward()


def _saved_modified(lib):
    x = lib.randn(3, requires_grad=True)
    y = x.sigmoid()
    y.add_(1)
    y.sum().backward()


def _load_state_dict(lib):
    m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))
    sd = {k: v for k, v in m.state_dict().items() if k != "2.bias"}
    sd["extra.weight"] = lib.zeros(1)
    sd["0.weight"] = lib.zeros(4, 2)
    m.load_state_dict(sd)


def _legacy_function(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    Double()(lib.randn(3))


def _bad_custom_grad(lib):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x * y

        @staticmethod
        def backward(ctx, g):
            return g

    x = lib.randn(3, requires_grad=True)
    Twice.apply(x, x).sum().backward()


# (id, fn(lib) that raises, facts both messages must state)
CASES = [
    # shapes in products and layers
    ("matmul", lambda l: l.randn(2, 3) @ l.randn(4, 5), ["2x3", "4x5"]),
    ("mm", lambda l: l.mm(l.randn(2, 3), l.randn(4, 5)), ["2x3", "4x5"]),
    ("mm_1d", lambda l: l.mm(l.randn(3), l.randn(3, 5)), ["matrix"]),
    ("bmm", lambda l: l.bmm(l.randn(2, 2, 3), l.randn(2, 4, 5)), ["batch2", "[2, 3]", "[2, 4]"]),
    ("bmm_2d", lambda l: l.bmm(l.randn(2, 3), l.randn(3, 5)), ["3D"]),
    ("matmul_batch", lambda l: l.matmul(l.randn(2, 2, 3), l.randn(3, 3, 5)), ["(2)", "(3)", "dimension 0"]),
    ("matmul_0d", lambda l: l.matmul(l.tensor(1.), l.randn(3)), ["matmul", "0D"]),
    ("dot", lambda l: l.dot(l.randn(3), l.randn(4)), ["[3]", "[4]"]),
    ("mv", lambda l: l.mv(l.randn(3, 4), l.randn(3)), ["3x4"]),
    ("linear", lambda l: l.nn.Linear(4, 5)(l.randn(2, 3)), ["2x3", "4x5"]),
    ("F_linear", lambda l: F(l).linear(l.randn(2, 3), l.randn(5, 4)), ["2x3", "4x5"]),
    ("conv1d_channels", lambda l: l.nn.Conv1d(3, 8, 3)(l.randn(1, 4, 8)), ["[8, 3, 3]", "[1, 4, 8]", "3 channels"]),
    ("conv2d_channels", lambda l: l.nn.Conv2d(3, 8, 3)(l.randn(1, 4, 8, 8)), ["[1, 4, 8, 8]", "4 channels"]),
    ("conv3d_channels", lambda l: l.nn.Conv3d(3, 8, 3)(l.randn(1, 4, 8, 8, 8)), ["[1, 4, 8, 8, 8]", "3 channels"]),
    ("conv_groups", lambda l: F(l).conv2d(l.randn(1, 4, 8, 8), l.randn(6, 2, 3, 3), groups=3), ["groups=3"]),
    ("convT_channels", lambda l: l.nn.ConvTranspose2d(3, 8, 3)(l.randn(1, 4, 8, 8)), ["transposed", "[3, 8, 3, 3]"]),
    ("conv1d_small", lambda l: l.nn.Conv1d(3, 8, 5)(l.randn(1, 3, 3)), ["(3)", "(5)", "Kernel size"]),
    ("conv2d_small", lambda l: l.nn.Conv2d(3, 8, 5)(l.randn(1, 3, 3, 3)), ["(3 x 3)", "(5 x 5)"]),
    ("conv3d_small", lambda l: l.nn.Conv3d(3, 8, 5)(l.randn(1, 3, 3, 3, 3)), ["(3 x 3 x 3)", "(5 x 5 x 5)"]),
    ("conv2d_rank", lambda l: l.nn.Conv2d(3, 8, 3)(l.randn(8, 8)), ["conv2d", "[8, 8]"]),
    ("conv1d_rank", lambda l: l.nn.Conv1d(3, 8, 3)(l.randn(1, 1, 3, 8)), ["conv1d", "[1, 1, 3, 8]"]),
    ("conv_in_groups", lambda l: l.nn.Conv2d(4, 8, 3, groups=3), ["in_channels", "groups"]),
    ("conv_same_stride", lambda l: l.nn.Conv2d(4, 6, 3, padding="same", stride=2), ["same", "strided"]),
    ("cat", lambda l: l.cat([l.randn(2, 3), l.randn(2, 4)]), ["dimension 0", "size 3", "size 4", "number 1"]),
    ("cat_rank", lambda l: l.cat([l.randn(2, 3), l.randn(2, 3, 1)]), ["got 2 and 3"]),
    ("cat_dim", lambda l: l.cat([l.randn(2, 3), l.randn(2, 3)], dim=2), ["[-2, 1]", "got 2"]),
    ("cat_tensor", lambda l: l.cat(l.randn(2, 3)), ["cat()", "Tensor"]),
    ("cat_0d", lambda l: l.cat([l.tensor(1.), l.tensor(2.)]), ["zero-dimensional"]),
    ("cat_empty", lambda l: l.cat([]), ["non-empty"]),
    ("stack", lambda l: l.stack([l.randn(2, 3), l.randn(3, 2)]), ["[2, 3] at entry 0", "[3, 2] at entry 1"]),
    ("view_numel", lambda l: l.randn(2, 3).view(4, 2), ["[4, 2]", "size 6"]),
    ("view_noncontiguous", lambda l: l.randn(2, 3).t().view(6), ["stride", ".reshape(...)"]),
    ("view_two_inferred", lambda l: l.randn(2, 3).view(-1, -1), ["only one dimension"]),
    ("reshape_numel", lambda l: l.randn(2, 3).reshape(-1, 4), ["[-1, 4]", "size 6"]),
    ("view_float_size", lambda l: l.randn(4, 3).view(4 / 2, -1), ["float"]),
    ("reshape_float_size", lambda l: l.randn(4, 3).reshape((4 / 2, -1)), ["float", "pos 0"]),
    ("expand", lambda l: l.randn(2, 3).expand(4, 3), ["(4)", "(2)", "[4, 3]", "[2, 3]"]),
    ("expand_fewer", lambda l: l.randn(2, 3).expand(3), ["expand", "(1)", "(2)"]),
    ("broadcast_add", lambda l: l.randn(2, 3) + l.randn(4), ["(3)", "(4)", "dimension 1"]),
    ("broadcast_inplace", lambda l: l.randn(3).add_(l.randn(2, 3)), ["[3]", "[2, 3]"]),
    ("broadcast_shapes", lambda l: l.broadcast_shapes((2, 3), (4,)), ["length 4", "[2, 3]"]),
    ("where_cond", lambda l: l.where(l.randn(3), l.randn(3), l.randn(3)), ["boolean", "Float"]),
    # losses
    ("ce_batch", lambda l: F(l).cross_entropy(l.randn(4, 3), l.tensor([0, 1, 2])), ["(4)", "(3)"]),
    ("ce_multi_target", lambda l: F(l).cross_entropy(l.randn(4, 3), l.tensor([[0], [1], [2], [0]])),
     ["multi-target"]),
    ("ce_class_oob", lambda l: F(l).cross_entropy(l.randn(4, 3), l.tensor([0, 1, 3, 0])), ["Target 3"]),
    ("ce_class_negative", lambda l: F(l).cross_entropy(l.randn(4, 3), l.tensor([0, -1, 2, 0])), ["Target -1"]),
    ("ce_int32_target", lambda l: F(l).cross_entropy(l.randn(4, 3), l.tensor([0, 1, 2, 0], dtype=l.int32)),
     ["Long", "Int"]),
    ("ce_float_target", lambda l: F(l).cross_entropy(l.randn(4, 3), l.tensor([0., 1., 2., 0.])), ["Float"]),
    ("ce_long_logits", lambda l: F(l).cross_entropy(l.ones(4, 3, dtype=l.long), l.tensor([0, 1, 2, 0])),
     ["log_softmax", "Long"]),
    ("ce_long_logits_spatial", lambda l: F(l).cross_entropy(l.ones(4, 3, 5, dtype=l.long), l.zeros(4, 5).long()),
     ["log_softmax", "Long"]),
    ("ce_int_probs", lambda l: F(l).cross_entropy(l.ones(4, 3, dtype=l.int32), l.rand(4, 3)), ["Int"]),
    ("ce_weight", lambda l: F(l).cross_entropy(l.randn(4, 3), l.tensor([0, 1, 2, 0]), weight=l.ones(4)),
     ["3 classes", "[4]"]),
    ("ce_spatial", lambda l: l.nn.CrossEntropyLoss()(l.randn(4, 3, 5), l.randint(0, 3, (4, 6))),
     ["[4, 5]", "[4, 6]"]),
    ("ce_reduction", lambda l: F(l).cross_entropy(l.randn(4, 3), l.tensor([0, 1, 2, 0]), reduction="avg"),
     ["avg"]),
    ("nll_int32", lambda l: F(l).nll_loss(l.randn(4, 3), l.tensor([0, 1, 2, 0], dtype=l.int32)), ["Int"]),
    ("nll_oob", lambda l: F(l).nll_loss(l.randn(4, 3).log_softmax(1), l.tensor([0, 1, 5, 0])), ["Target 5"]),
    ("nll_long_input", lambda l: F(l).nll_loss(l.ones(4, 3, dtype=l.long), l.tensor([0, 1, 2, 0])),
     ["nll_loss", "Long"]),
    ("nll_long_input_2d", lambda l: F(l).nll_loss(l.ones(2, 3, 4, 4, dtype=l.long), l.zeros(2, 4, 4).long()),
     ["nll_loss2d", "Long"]),
    ("nll_1d", lambda l: F(l).nll_loss(l.randn(3), l.tensor([1, 2])), ["size 1", "2"]),
    ("mse_no_broadcast", lambda l: F(l).mse_loss(l.randn(4, 2), l.randn(3)), ["(2)", "(3)"]),
    ("bce_target_range", lambda l: F(l).binary_cross_entropy(l.rand(4), l.tensor([0., 1., 2., 0.5])),
     ["target", "between 0 and 1"]),
    ("bce_input_range", lambda l: F(l).binary_cross_entropy(l.tensor([0., 1., 2., 0.5]), l.rand(4)),
     ["input", "between 0 and 1"]),
    ("bce_shape", lambda l: F(l).binary_cross_entropy(l.rand(4, 1), l.rand(4)), ["Size([4])", "Size([4, 1])"]),
    ("bce_long_target", lambda l: F(l).binary_cross_entropy(l.rand(4), l.ones(4, dtype=l.long)), ["Long", "Float"]),
    ("bce_logits_shape", lambda l: l.nn.BCEWithLogitsLoss()(l.randn(4, 1), l.rand(4)), ["Size([4])", "Size([4, 1])"]),
    ("bce_logits_long", lambda l: F(l).binary_cross_entropy_with_logits(l.randn(4), l.ones(4, dtype=l.long)),
     ["Float", "Long"]),
    # dtypes
    ("linear_long_input", lambda l: l.nn.Linear(4, 5)(l.ones(2, 4, dtype=l.long)), ["dtype"]),
    ("matmul_long_float", lambda l: l.ones(2, 3, dtype=l.long) @ l.randn(3, 4), ["long int", "float"]),
    ("mm_double_float", lambda l: l.mm(l.ones(2, 3, dtype=l.float64), l.randn(3, 4)), ["double", "float"]),
    ("bmm_double_float", lambda l: l.bmm(l.ones(2, 2, 3).double(), l.randn(2, 3, 4)), ["Double", "Float"]),
    ("dot_dtype", lambda l: l.dot(l.randn(3), l.ones(3, dtype=l.float64)), ["Float", "Double"]),
    ("index_float", lambda l: l.randn(5)[l.tensor([0., 1.])], ["long, int, byte or bool"]),
    ("index_select_float", lambda l: l.index_select(l.randn(5), 0, l.tensor([0., 1.])), ["index_select", "int64"]),
    ("gather_float", lambda l: l.gather(l.randn(5, 3), 1, l.tensor([[0., 1.]])), ["gather", "int64"]),
    ("scatter_float", lambda l: l.zeros(5, 3).scatter_(1, l.tensor([[0., 1.]]), 1.0), ["scatter", "int64"]),
    ("embedding_float", lambda l: l.nn.Embedding(10, 3)(l.tensor([1., 2.])), ["indices", "Long, Int", "Float"]),
    ("inplace_cast", lambda l: l.ones(3, dtype=l.long).add_(l.randn(3)), ["Float", "Long"]),
    ("inplace_div", lambda l: l.ones(3, dtype=l.long).div_(2), ["Float", "Long"]),
    ("inplace_bool", lambda l: l.ones(3, dtype=l.bool).add_(l.ones(3, dtype=l.long)), ["Long", "Bool"]),
    ("out_cast", lambda l: l.add(l.randn(3), 1, out=l.empty(3, dtype=l.long)), ["Float", "Long"]),
    ("bool_sub", lambda l: l.ones(3, dtype=l.bool) - l.ones(3, dtype=l.bool), ["bool", "logical_xor"]),
    ("bool_neg", lambda l: -l.ones(3, dtype=l.bool), ["bool", "logical_not"]),
    ("mean_long", lambda l: l.ones(3, dtype=l.long).mean(), ["mean", "Long"]),
    ("int_negative_pow", lambda l: l.tensor([2]) ** -1, ["negative integer powers"]),
    # autograd
    ("leaf_inplace", lambda l: l.randn(3, requires_grad=True).add_(1), ["leaf Variable", "in-place"]),
    ("leaf_view_inplace", lambda l: l.randn(3, requires_grad=True)[:2].mul_(2), ["view of a leaf"]),
    ("param_inplace", lambda l: l.nn.Linear(2, 2).weight.mul_(2), ["leaf Variable"]),
    ("backward_twice", _backward_twice, ["second time", "retain_graph=True"]),
    ("backward_nonscalar", lambda l: (l.randn(3, requires_grad=True) * 2).backward(), ["scalar outputs"]),
    ("backward_no_grad_fn", lambda l: l.randn(3).sum().backward(), ["does not require grad"]),
    ("backward_argmax", lambda l: l.randn(3, requires_grad=True).argmax().backward(), ["grad_fn"]),
    ("backward_grad_shape", lambda l: (l.randn(3, requires_grad=True) * 2).backward(l.ones(4)),
     ["Size([4])", "Size([3])"]),
    ("grad_unused", lambda l: (lambda x, y: l.autograd.grad((x * 2).sum(), [x, y]))(
        l.randn(3, requires_grad=True), l.randn(3, requires_grad=True)), ["index 1", "allow_unused=True"]),
    ("grad_input_no_grad", lambda l: l.autograd.grad((l.randn(3, requires_grad=True) * 2).sum(), [l.randn(3)]),
     ["does not require grad"]),
    ("numpy_requires_grad", lambda l: (l.randn(3, requires_grad=True) * 2).numpy(), ["detach().numpy()"]),
    ("saved_modified", _saved_modified, ["inplace operation", "Sigmoid", "version 1", "version 0"]),
    ("requires_grad_int", lambda l: l.ones(3, dtype=l.long).requires_grad_(), ["floating point"]),
    ("requires_grad_int_ctor", lambda l: l.tensor([1, 2], requires_grad=True), ["floating point"]),
    ("requires_grad_nonleaf", lambda l: (l.randn(3, requires_grad=True) * 2).requires_grad_(False),
     ["leaf variables", "detach()"]),
    ("retain_grad_no_grad", lambda l: l.randn(3).retain_grad(), ["requires_grad=False"]),
    ("hook_no_grad", lambda l: l.randn(3).register_hook(lambda g: g), ["doesn't require gradient"]),
    ("set_data_list", lambda l: setattr(l.randn(3), "data", [1, 2]), ["data", "list"]),
    ("legacy_function_call", _legacy_function, ["Legacy autograd function", "static forward"]),
    ("custom_function_ngrads", _bad_custom_grad, ["incorrect number of gradients", "expected 2, got 1"]),
    # indexing
    ("index_oob", lambda l: l.randn(3)[5], ["index 5", "dimension 0", "size 3"]),
    ("index_oob_2d", lambda l: l.randn(3, 4)[1, 4], ["index 4", "dimension 1", "size 4"]),
    ("index_too_many", lambda l: l.randn(3, 4)[1, 2, 3], ["too many indices", "dimension 2"]),
    ("index_0d", lambda l: l.tensor(1.)[0], ["0-dim", "item()"]),
    ("index_tensor_oob", lambda l: l.randn(3)[l.tensor([0, 5])], ["index 5", "size 3"]),
    ("mask_shape", lambda l: l.randn(3, 4)[l.ones(3, 3, dtype=l.bool)], ["[3, 3]", "[3, 4]", "index 1"]),
    ("masked_fill_float_mask", lambda l: l.randn(3, 4).masked_fill(l.ones(3, 4), 0.), ["boolean", "float"]),
    ("index_select_2d", lambda l: l.index_select(l.randn(5, 3), 0, l.tensor([[0, 1]])), ["vector"]),
    ("index_select_oob", lambda l: l.index_select(l.randn(5, 3), 0, l.tensor([0, 7])), ["out of range"]),
    ("gather_oob", lambda l: l.gather(l.randn(5, 3), 1, l.tensor([[0], [5]])), ["index 5", "size 3"]),
    ("embedding_oob", lambda l: l.nn.Embedding(10, 3)(l.tensor([1, 10])), ["out of range"]),
    ("setitem_shape", lambda l: l.zeros(3, 4).__setitem__(0, l.ones(3)), ["(4)", "(3)"]),
    # Python protocol
    ("bool_multi", lambda l: bool(l.randn(3)), ["more than one value", "ambiguous"]),
    ("if_multi", lambda l: 1 if l.randn(3) > 0 else 0, ["ambiguous"]),
    ("item_multi", lambda l: l.randn(3).item(), ["3 elements", "Scalar"]),
    ("float_multi", lambda l: float(l.randn(3)), ["one element"]),
    ("index_py_list", lambda l: [1, 2, 3][l.tensor([1, 2])], ["integer tensors", "single element"]),
    ("len_0d", lambda l: len(l.tensor(1.)), ["len()", "0-d"]),
    ("iter_0d", lambda l: list(l.tensor(1.)), ["iteration", "0-d"]),
    ("contains_str", lambda l: "a" in l.tensor([1., 2.]), ["__contains__", "str"]),
    ("tensor_ragged", lambda l: l.tensor([[1, 2], [3]]), ["length 2", "dim 1", "got 1"]),
    ("tensor_of_tensors", lambda l: l.tensor([l.randn(2), l.randn(2)]), ["one element"]),
    # modules
    ("batchnorm2d_rank", lambda l: l.nn.BatchNorm2d(3)(l.randn(3, 8, 8)), ["4D", "3D"]),
    ("batchnorm1d_rank", lambda l: l.nn.BatchNorm1d(3)(l.randn(2, 3, 4, 4)), ["2D or 3D", "4D"]),
    ("batchnorm_channels", lambda l: l.nn.BatchNorm2d(3)(l.randn(2, 4, 8, 8)), ["4 elements", "3"]),
    ("batchnorm_batch1", lambda l: l.nn.BatchNorm1d(3)(l.randn(1, 3)), ["more than 1 value", "Size([1, 3])"]),
    ("layernorm_shape", lambda l: l.nn.LayerNorm(4)(l.randn(2, 3)), ["[4]", "[*, 4]", "[2, 3]"]),
    ("groupnorm_groups", lambda l: l.nn.GroupNorm(3, 4), ["(4)", "(3)"]),
    ("maxpool_small", lambda l: l.nn.MaxPool2d(3)(l.randn(1, 1, 2, 2)), ["(1x2x2)", "(1x0x0)"]),
    ("lstm_input_size", lambda l: l.nn.LSTM(4, 5)(l.randn(3, 2, 3)), ["input_size", "Expected 4, got 3"]),
    ("lstm_hidden", lambda l: l.nn.LSTM(4, 5)(l.randn(3, 2, 4), (l.randn(1, 3, 5), l.randn(1, 3, 5))),
     ["(1, 2, 5)", "[1, 3, 5]"]),
    ("rnn_dtype", lambda l: l.nn.RNN(4, 5)(l.randn(3, 2, 4).double()), ["float64", "float32"]),
    ("mha_heads", lambda l: l.nn.MultiheadAttention(6, 4), ["divisible by num_heads"]),
    ("load_state_dict", _load_state_dict,
     ["Sequential", 'Missing key(s) in state_dict: "2.bias"', 'Unexpected key(s) in state_dict: "extra.weight"',
      "size mismatch for 0.weight", "Size([4, 2])", "Size([3, 2])"]),
    ("load_state_dict_prefix", lambda l: l.nn.Linear(2, 3).load_state_dict(
        {"module.weight": l.zeros(3, 2), "module.bias": l.zeros(3)}), ['"weight", "bias"', '"module.weight"']),
    ("load_state_dict_nonstrict_size", lambda l: l.nn.Linear(2, 3).load_state_dict(
        {"weight": l.zeros(4, 2), "bias": l.zeros(3)}, strict=False), ["size mismatch for weight"]),
    ("load_state_dict_list", lambda l: l.nn.Linear(2, 3).load_state_dict([1, 2]), ["dict-like"]),
    ("module_no_forward", lambda l: type("M", (l.nn.Module,), {})()(l.randn(2)), ["[M]", '"forward"']),
    ("module_before_init", lambda l: type("M", (l.nn.Module,), {"__init__": lambda self: setattr(
        self, "lin", l.nn.Linear(2, 2))})(), ["before Module.__init__()"]),
    ("tensor_as_parameter", lambda l: setattr(l.nn.Linear(2, 2), "weight", l.zeros(2, 2)),
     ["'weight'", "nn.Parameter or None"]),
    ("module_list_int", lambda l: l.nn.ModuleList([1]), ["int is not a Module subclass"]),
    ("sequential_list", lambda l: l.nn.Sequential([l.nn.ReLU()]), ["list is not a Module subclass"]),
    # optimizers
    ("optim_tensor", lambda l: l.optim.SGD(l.randn(3, requires_grad=True), lr=0.1), ["iterable", "FloatTensor"]),
    ("optim_empty", lambda l: l.optim.Adam([], lr=0.1), ["empty parameter list"]),
    ("optim_no_params", lambda l: l.optim.Adam(l.nn.ReLU().parameters()), ["empty parameter list"]),
    ("optim_dup_groups", lambda l: (lambda p: l.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1))(
        l.nn.Parameter(l.randn(3))), ["more than one parameter group"]),
    ("optim_non_leaf", lambda l: l.optim.SGD([l.randn(3, requires_grad=True) * 2], lr=0.1), ["non-leaf"]),
    ("optim_lr", lambda l: l.optim.SGD([l.nn.Parameter(l.randn(3))], lr=-0.1), ["learning rate", "-0.1"]),
    ("optim_betas", lambda l: l.optim.Adam([l.nn.Parameter(l.randn(3))], betas=(1.0, 0.9)), ["index 0", "1.0"]),
    ("optim_nesterov", lambda l: l.optim.SGD([l.nn.Parameter(l.randn(3))], lr=0.1, nesterov=True), ["Nesterov"]),
    ("scheduler_module", lambda l: l.optim.lr_scheduler.StepLR(l.nn.Linear(2, 2), 1), ["Linear", "Optimizer"]),
    # nn.functional arguments
    ("pad_too_many", lambda l: F(l).pad(l.randn(1, 2, 3), (1,) * 8), ["padding length 8", "dimension 3"]),
    ("pad_odd", lambda l: F(l).pad(l.randn(1, 2, 3), (1, 1, 1)), ["divisible by 2"]),
    ("pad_reflect_big", lambda l: F(l).pad(l.randn(1, 2, 3), (3, 3), mode="reflect"), ["(3, 3)", "[1, 2, 3]"]),
    ("pad_mode", lambda l: F(l).pad(l.randn(1, 2, 3), (1, 1), mode="foo"), ["foo"]),
    ("interpolate_both", lambda l: F(l).interpolate(l.randn(1, 1, 4, 4), size=8, scale_factor=2),
     ["only one of size or scale_factor"]),
    ("interpolate_none", lambda l: F(l).interpolate(l.randn(1, 1, 4, 4)), ["size or scale_factor"]),
    ("interpolate_bilinear_3d", lambda l: F(l).interpolate(l.randn(1, 1, 4), scale_factor=2, mode="bilinear"),
     ["3D", "bilinear", "4D"]),
    ("interpolate_align", lambda l: F(l).interpolate(l.randn(1, 1, 4), scale_factor=2, align_corners=True),
     ["align_corners"]),
    ("dropout_p", lambda l: F(l).dropout(l.randn(3), p=1.5), ["between 0 and 1", "1.5"]),
    ("one_hot_float", lambda l: F(l).one_hot(l.tensor([1., 2.])), ["LongTensor"]),
    ("one_hot_small", lambda l: F(l).one_hot(l.tensor([1, 3]), 3), ["num_classes"]),
    ("dim_out_of_range", lambda l: l.randn(2, 3).softmax(2), ["[-2, 1]", "got 2"]),
    ("permute_length", lambda l: l.randn(2, 3).permute(0), ["input.dim() = 2", "len(dims) = 1"]),
    ("split_sizes", lambda l: l.randn(6).split([2, 3]), ["sum exactly to 6", "[2, 3]"]),
    ("unflatten_sizes", lambda l: l.nn.Unflatten(1, (2, 2))(l.randn(2, 3)), ["[2, 2]", "(3)"]),
    ("topk_k", lambda l: l.randn(3).topk(5), ["k out of range"]),
    ("randint_range", lambda l: l.randint(5, 2, (3,)), ["from=5", "to=2"]),
    ("exp_list", lambda l: l.exp([1.0]), ["exp()", "must be Tensor, not list"]),
    ("sqrt_float", lambda l: l.sqrt(4.0), ["sqrt()", "must be Tensor, not float"]),
    ("abs_int", lambda l: l.abs(-1), ["abs()", "must be Tensor, not int"]),
    ("log_ndarray", lambda l: l.log(np.ones(2)), ["log()", "must be Tensor, not numpy.ndarray"]),
]


@pytest.mark.parametrize("fn, facts", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_error_matches_torch(fn, facts):
    """Same exception class as torch, and a message stating the facts torch's states."""
    t, e = _raised(torch, fn), _raised(ember, fn)
    assert t is not None and e is not None, (t, e)
    assert type(e) is type(t) or type(t).__name__ == type(e).__name__, (type(e), type(t), e)
    te, ee = str(t), str(e).replace("ember.", "torch.")
    for fact in facts:
        assert fact in te, (fact, te)
        assert fact in ee, (fact, ee)


WARNS = [
    ("mse_size", lambda l: F(l).mse_loss(l.randn(4, 1), l.randn(4)), UserWarning, "target size"),
    ("l1_size", lambda l: l.nn.L1Loss()(l.randn(4, 1), l.randn(4)), UserWarning, "broadcasting"),
    ("smooth_l1_size", lambda l: F(l).smooth_l1_loss(l.randn(4, 1), l.randn(4)), UserWarning, "target size"),
    ("softmax_no_dim", lambda l: F(l).softmax(l.randn(2, 3)), UserWarning, "Implicit dimension choice for softmax"),
    ("log_softmax_no_dim", lambda l: F(l).log_softmax(l.randn(2, 3)), UserWarning, "log_softmax"),
    ("softmax_module_no_dim", lambda l: l.nn.Softmax()(l.randn(2, 3)), UserWarning, "dim=X"),
    ("kl_div_mean", lambda l: F(l).kl_div(l.randn(4, 3).log_softmax(1), l.rand(4, 3).softmax(1)), UserWarning,
     "batchmean"),
    ("optim_duplicate", lambda l: (lambda p: l.optim.SGD([p, p], lr=0.1))(l.nn.Parameter(l.randn(3))),
     UserWarning, "duplicate parameters"),
    ("scheduler_order", lambda l: l.optim.lr_scheduler.StepLR(l.optim.SGD([l.nn.Parameter(l.randn(3))], lr=0.1),
                                                             1).step(), UserWarning, "optimizer.step()"),
]


@pytest.mark.parametrize("fn, category, fact", [c[1:] for c in WARNS], ids=[c[0] for c in WARNS])
def test_warning_matches_torch(fn, category, fact):
    res = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            fn(lib)
        res.append([(x.category, str(x.message)) for x in w if fact in str(x.message)])
    assert res[0] and res[1], res
    assert {c for c, _ in res[1]} == {c for c, _ in res[0]} == {category}


def test_float_of_a_tensor_requiring_grad_warns_once():
    """``float(loss)`` warns once per process, as torch does (with gradients enabled); ``item()`` and ``int()`` do
    not."""
    from ember import _settings
    message = ("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
               "Consider using tensor.detach() first.")
    _settings._warned_once.discard(message)
    x = ember.tensor(1.5, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        x.item(), int(x)
        with ember.no_grad():
            float(x)
        assert float(x) == 1.5 and float(x * 2) == 3.0
    assert [str(m.message) for m in w] == [message] and w[0].filename == __file__


def test_legacy_function_instantiation_warns():
    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        f = Double()
    with pytest.raises(RuntimeError, match="Double.apply"):
        f(ember.ones(2))
    assert Double.apply(ember.ones(2)).tolist() == [2.0, 2.0]


@pytest.mark.parametrize("sizes", [lambda l: (l.tensor(2), -1), lambda l: (l.tensor(6),),
                                   lambda l: (np.int64(2), np.int32(3)), lambda l: ((np.int64(3), l.tensor(2)),)])
def test_view_reshape_integer_like_sizes(sizes):
    """Sizes read off tensors (``x.view(n, -1)`` with a 0-d ``n``) or NumPy integers are sizes, not dtypes."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    for method in ("view", "reshape"):
        e, t = getattr(ember.tensor(x), method)(*sizes(ember)), getattr(torch.tensor(x), method)(*sizes(torch))
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_float_sizes_raise_typeerror():
    """``n / 2`` is a float in Python 3: torch rejects it as a size where users meant ``n // 2``."""
    x = ember.randn(4, 3)
    for call in (lambda: x.view(x.shape[0] / 2, -1), lambda: x.reshape(2.0, 6), lambda: x.expand(2.0, 4, 3),
                 lambda: x.repeat(2.0, 1), lambda: x.permute(1.0, 0), lambda: ember.reshape(x, (2, 6.0))):
        with pytest.raises(TypeError, match="float"):
            call()
    assert x.repeat((2, 1)).shape == x.repeat([2, 1]).shape == x.repeat(ember.Size([2, 1])).shape == (8, 3)
    assert x.repeat(np.int64(2), 1).shape == (8, 3)


def test_load_state_dict_non_strict_reports_keys():
    res = []
    for lib in (torch, ember):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))
        sd = {k: v for k, v in m.state_dict().items() if k != "2.bias"}
        sd["extra.weight"] = lib.zeros(1)
        r = m.load_state_dict(sd, strict=False)
        res.append((list(r.missing_keys), list(r.unexpected_keys), type(r).__name__))
    assert res[0] == res[1] == (["2.bias"], ["extra.weight"], "_IncompatibleKeys")


def test_cross_entropy_uint8_target_value():
    """Byte class indices are accepted (Long or Byte), with the same loss and gradient."""
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    res = []
    for lib in (torch, ember):
        xt = lib.tensor(x, requires_grad=True)
        loss = F(lib).cross_entropy(xt, lib.tensor([0, 1, 2, 0], dtype=lib.uint8))
        loss.backward()
        res.append((loss.item(), xt.grad.numpy()))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-6)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-6, atol=1e-7)


def test_empty_long_logits_reach_nll_error():
    """An empty batch of integer logits skips log_softmax and fails in the nll kernel, as torch's."""
    for lib in (torch, ember):
        with pytest.raises(NotImplementedError, match="nll_loss_out_frame.*Long"):
            F(lib).cross_entropy(lib.ones(0, 3, dtype=lib.long), lib.zeros(0, dtype=lib.long))
