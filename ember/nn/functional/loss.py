"""Loss functions of ``nn.functional``; ``reduction`` is 'none', 'mean' or 'sum' (and the deprecated
``size_average``/``reduce`` flags override it, with torch's warning)."""

__all__ = ["cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
           "l1_loss", "mse_loss", "smooth_l1_loss", "huber_loss", "poisson_nll_loss", "gaussian_nll_loss",
           "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss", "multi_margin_loss",
           "multilabel_margin_loss", "multilabel_soft_margin_loss", "soft_margin_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "ctc_loss", "linear_cross_entropy"]
import math
import warnings

from ... import _dtype
from ..._autocast import float32_inputs
from ..._creation import arange, tensor
from ..._device import array_module
from ..._ops.binary import _where
from ..._ops.linear_cross_entropy import LinearCrossEntropy
from ..._ops.nn_loss import CTC, BinaryCrossEntropy, ClassNLL
from ..._ops.reduce import _tname
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .activation import logsigmoid, relu, softplus
from .distance import pairwise_distance
from .linear import linear as _linear


def legacy_reduction(size_average, reduce, stacklevel=3):
    """The reduction the deprecated ``size_average``/``reduce`` flags ask for (with torch's warning)."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{ret}' instead.",
                  stacklevel=stacklevel)
    return ret


def _reduction(size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        return legacy_reduction(size_average, reduce, 4)
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
                      stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _no_grad_arg(op, name, t):
    if t is not None and t.requires_grad:
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to argument '{name}'. This input "
                           "cannot have requires_grad True.")


def _check_size(input, target, stacklevel=4):  # the loss's caller, past the autocast wrapper
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=stacklevel)


def _difference(input, target):
    """``input - target``, a bool operand taken as 0/1 in the other's dtype, as torch's regression losses do."""
    if target.dtype is _dtype.bool:
        target = target.to(input.dtype)
    elif input.dtype is _dtype.bool:
        input = input.to(target.dtype)
    return input - target


def _float_kernel(name, input, target):
    """torch's regression kernels have no integer or bool version: refuses two such operands."""
    dt = _dtype.result_type(input, target)
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_dtype.scalar_name(dt)}'")


def _written_into(loss, dtype):
    """``loss`` cast to ``dtype``, the dtype of the tensor a loss computed in place would write it into."""
    if loss.dtype is dtype:
        return loss
    if not _dtype.can_cast(loss.dtype, dtype):
        raise RuntimeError(f"result type {_dtype.scalar_name(loss.dtype)} can't be cast to the desired output type "
                           f"{_dtype.scalar_name(dtype)}")
    return loss.to(dtype)


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    """The reduction of an elementwise loss, optionally weighted (the mean then divides by the summed weights)."""
    if weight is None:
        return _reduce(loss, reduction)
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "mean" and mean_by_weight:
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


# -- class-index losses ----------------------------------------------------------------------------------------------
def _class_nll(input, target, weight, ignore_index, reduction, smoothing, logits):
    """cross_entropy / nll_loss with class-index targets, for inputs ``(C)``, ``(N, C)`` or ``(N, C, d1, ...)``."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0]}).")
    if target.dtype not in (_dtype.int64, _dtype.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_tname(target.dtype)}")
    if target.dtype is _dtype.uint8 and input.ndim > 2:  # spatial targets are Long only
        raise RuntimeError("expected scalar type Long but found Byte")
    c = input.shape[0 if input.ndim == 1 else 1]
    if weight is not None:
        if weight.ndim != 1 or weight.numel() != c:
            raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no classes but got "
                               f"weight tensor of shape: {list(weight.shape)}")
        _no_grad_arg("nll_loss_forward", "weight", weight)
    out_shape = tuple(target.shape)
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim == 1:
            if target.numel() != 1:
                raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                                   f"{target.numel()}")
            out_shape = ()
        x = input.reshape(-1, c)
    else:
        if input.ndim == 4 and target.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target.ndim}")
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            if input.ndim == 4:
                raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
            raise RuntimeError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, got "
                               f"{list(target.shape)}")
        x = input.movedim(1, -1).reshape(-1, c)
    if not x.dtype.is_floating_point:
        frame = "nll_loss_out_frame" if input.ndim <= 2 else "nll_loss2d_forward_out_frame"
        raise NotImplementedError(f"\"{frame}\" not implemented for '{_tname(x.dtype)}'")
    if weight is not None and weight.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar type {_tname(x.dtype)} but found {_tname(weight.dtype)}")
    t = target.reshape(-1)
    if t.dtype is not _dtype.int64:
        t = t.to(_dtype.int64)
    half = x.dtype.np if x.dtype is _dtype.bfloat16 or x.dtype is _dtype.float16 else None
    out = ClassNLL.apply(x, t, weight, ignore_index=ignore_index, reduction=reduction, smoothing=smoothing,
                         logits=logits, half=half)
    return out.reshape(out_shape) if reduction == "none" else out


@float32_inputs
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy of logits ``input`` and ``target``: class indices (``input`` ``(N, C, ...)``, ``target``
    ``(N, ...)``) or class probabilities (the same shape as ``input``). Stable at any logit magnitude.

    Args:
        weight: a rescaling weight per class.
        ignore_index: a target class index that counts for nothing (the mean divides by the counted weights).
        label_smoothing: mixes the target with the uniform distribution.

    Example::

        >>> F.cross_entropy(ember.tensor([[0., 0.]]), ember.tensor([1]))
        tensor(0.6931)
    """
    reduction = _reduction(size_average, reduce, reduction)
    if input.ndim and not input.dtype.is_floating_point:
        input.log_softmax(0 if input.ndim == 1 else 1)  # raises the kernel's "not implemented for 'Long'"
    if input.shape == target.shape:
        return _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing)
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.dtype is _dtype.bfloat16 or input.dtype is _dtype.float16:
        return _cross_entropy_half(input, target, weight, ignore_index, reduction, max(label_smoothing, 0.0))
    return _class_nll(input, target, weight, ignore_index, reduction, max(label_smoothing, 0.0), True)


def _cross_entropy_half(input, target, weight, ignore_index, reduction, smoothing):
    """Class-index cross entropy of float16/bfloat16 logits, unfused so that it rounds as torch does: the log-softmax
    and each term in the input's dtype."""
    class_dim = 0 if input.ndim == 1 else 1
    logp = input.log_softmax(class_dim)
    nll = _class_nll(logp, target, weight, ignore_index, reduction, 0.0, False)
    if not smoothing:
        return nll
    ignored = target == ignore_index
    if weight is not None:
        logp = logp * weight.reshape((-1,) + (1,) * (input.ndim - class_dim - 1))
    smooth = (-logp.sum(class_dim)).masked_fill(ignored, 0.0)
    if reduction == "mean":
        kept = ~ignored
        smooth = smooth.sum() / (kept.sum() if weight is None else weight.gather(0, target.masked_select(kept)).sum())
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - smoothing) * nll + smooth * (smoothing / input.shape[class_dim])


def _cross_entropy_probs(input, target, weight, ignore_index, reduction, label_smoothing):
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{_tname(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    class_dim = 0 if input.ndim == 1 else 1
    c = input.shape[class_dim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    logp = input.log_softmax(class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        target = target * (1 - label_smoothing) + label_smoothing / c
    prod = logp * target
    if weight is not None:
        prod = prod * weight.reshape((c,) + (1,) * (input.ndim - class_dim - 1))
    if reduction == "none":
        return -prod.sum(class_dim)
    if reduction == "sum":
        return -prod.sum()
    if input.numel() == 0:
        return -prod.sum() * math.nan
    return -prod.sum() / (input.numel() / c)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """Cross entropy of the logits ``linear(input, linear_weight, linear_bias)`` and ``target``.

    With ``options=None`` this is ``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`` (an
    ``ignore_index`` of ``None`` meaning -100). With :class:`~ember.nn.LinearCrossEntropyOptions` the batch is
    processed in chunks of rows and the ``(N, C)`` logits are never materialised; configurations the chunked path
    lacks (K-dimensional loss, label smoothing, probability targets) fall back to the reference with a warning.

    Args:
        linear_weight: ``(C, in_features)``, or ``(C, d_1, ..., d_K, in_features)`` for a K-dimensional loss.
        linear_bias: ``(C,)`` or ``(C, d_1, ..., d_K)``.
        weight: a rescaling weight per class.
        ignore_index: a class index that counts for nothing; only for class-index targets.
        options: selects the chunked path and its chunk size.

    Shape:
        - Input: ``(in_features)`` or ``(N, in_features)``.
        - Target: class indices ``()``, ``(N)`` or ``(N, d_1, ..., d_K)``, or class probabilities of the logits'
          shape ``(N, C, d_1, ..., d_K)``.

    Example::

        >>> F.linear_cross_entropy(ember.ones(1, 2), ember.zeros(3, 2), ember.tensor([1]))
        tensor(1.0986)
    """
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    num_batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions (in_features), got "
                           f"{in_features} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires "
                           f"batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index
    if options is not None:
        chunked = (not out_features and reduction in ("mean", "sum", "none") and label_smoothing == 0.0
                   and target.dtype is _dtype.int64)
        if not chunked:
            warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
                          "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features == (). "
                          f"Got reduction={reduction!r}, label_smoothing={label_smoothing}, target.dtype="
                          f"{target.dtype}, out_features={out_features}, tracing=False, linear_bias.shape="
                          f"{None if linear_bias is None else tuple(linear_bias.shape)}.", stacklevel=2)
        else:
            x, t = (input, target) if num_batches else (input.unsqueeze(0), target.unsqueeze(0))
            if t.ndim != 1 or t.shape[0] != x.shape[0]:
                raise ValueError(f"Expected input batch_size ({x.shape[0]}) to match target batch_size "
                                 f"({t.shape[0] if t.ndim else 0}).")
            options = options._adjust(x.shape[0], in_features, num_classes, x.dtype, x.device)
            halves = x.dtype in (_dtype.float16, _dtype.bfloat16)
            if options.acc_dtype is not x.dtype and not (halves and options.acc_dtype is _dtype.float32):
                raise RuntimeError(f"linear_cross_entropy supports float32 acc_dtype with float16/bfloat16 inputs, "
                                   f"but got {options.acc_dtype} acc_dtype and {x.dtype} inputs.")
            loss = LinearCrossEntropy.apply(x, linear_weight, t, linear_bias, weight, reduction=reduction,
                                            ignore_index=ignore_index, chunk=options.batch_chunk_size,
                                            allow_retain_graph=options.allow_retain_graph)
            return loss if num_batches else loss.squeeze(0)
    if out_features:
        linear_weight = linear_weight.reshape(math.prod(out_features, start=num_classes), in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = _linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction, ignore_index=ignore_index,
                         label_smoothing=label_smoothing)


@float32_inputs
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """The negative log likelihood of class-index ``target`` under log-probabilities ``input`` ``(N, C, ...)``:
    ``-weight[t] * input[t]``, averaged over the counted weights by default."""
    reduction = _reduction(size_average, reduce, reduction)
    return _class_nll(input, target, weight, ignore_index, reduction, 0.0, False)


# -- binary ----------------------------------------------------------------------------------------------------------
@float32_inputs
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """``-w * (t * log(x) + (1 - t) * log(1 - x))`` for probabilities ``x``, the logs clamped to >= -100."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {_dtype.scalar_name(target.dtype)} but expected "
                           f"{_dtype.scalar_name(input.dtype)}")
    if weight is not None:
        _no_grad_arg("binary_cross_entropy", "weight", weight)
        weight = weight.expand(target.shape).to(input.dtype)
    return _reduce(BinaryCrossEntropy.apply(input, target, weight), reduction)


@float32_inputs
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Binary cross entropy of logits, computed stably: ``(1 - t) * x - (1 + (pos_weight - 1) * t) *
    logsigmoid(x)``, times ``weight``."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    _no_grad_arg("binary_cross_entropy_with_logits", "weight", weight)
    _no_grad_arg("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    log_sig = logsigmoid(input)
    if pos_weight is not None:
        loss = (1 - target) * input - ((pos_weight - 1) * target + 1) * log_sig
    else:
        loss = (1 - target) * input - log_sig
    if weight is not None:
        loss = loss * weight
    if loss.shape != input.shape:  # weights broadcast to the input, never beyond it
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                           f"{list(loss.shape)}")
    return _reduce(_written_into(loss, _dtype.result_type(1, target)), reduction)  # in place into ``1 - target``


@float32_inputs
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL divergence ``target * (log(target) - input)`` for log-probabilities ``input``; ``log_target`` takes
    ``target`` as log-probabilities too. ``reduction='batchmean'`` divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=3)  # past the autocast wrapper
    if reduction != "batchmean":
        reduction = _reduction(None, None, reduction)
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or \
            not (target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = target.xlogy(target) - target * input
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


# -- regression ------------------------------------------------------------------------------------------------------
@float32_inputs
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum) absolute error ``|input - target|``, optionally weighted per element."""
    _check_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    return _weighted((input - target).abs(), weight, input, reduction)


@float32_inputs
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum) squared error ``(input - target) ** 2``, optionally weighted per element.

    Example::

        >>> F.mse_loss(ember.tensor([1., 2.]), ember.tensor([1., 4.]))
        tensor(2.)
    """
    _check_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    _float_kernel("mse", input, target)
    d = _difference(input, target)
    if d.dtype.is_complex:
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{_dtype.scalar_name(d.dtype)}'")
    return _weighted(d * d, weight, input, reduction)


@float32_inputs
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 * d ** 2 / beta`` where ``|d| < beta``, ``|d| - 0.5 * beta`` elsewhere (``d = input - target``)."""
    _check_size(input, target)
    reduction = _reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _float_kernel("smooth_l1", input, target)
    d = _difference(input, target)
    z = d.abs()
    if beta == 0.0:
        return _reduce(z, reduction)
    q = d.masked_fill(z >= beta, 0)  # an infinite d takes no NaN gradient from the unused square
    return _reduce(_where(z < beta, q * q * (0.5 / beta), z - 0.5 * beta), reduction)


@float32_inputs
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 * d ** 2`` where ``|d| < delta``, ``delta * (|d| - 0.5 * delta)`` elsewhere, optionally weighted."""
    _check_size(input, target)
    reduction = _reduction(None, None, reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _float_kernel("huber", input, target)
    d = _difference(input, target)
    z = d.abs()
    q = d.masked_fill(z >= delta, 0)  # an infinite d takes no NaN gradient from the unused square
    loss = _written_into(_where(z < delta, q * q * 0.5, (z - 0.5 * delta) * delta), input.dtype)
    return _weighted(loss, weight, input, reduction, mean_by_weight=False)


@float32_inputs
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's term for targets > 1."""
    reduction = _reduction(size_average, reduce, reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood ``0.5 * (log(var) + (input - target) ** 2 / var)`` (+ the constant with
    ``full``); ``var`` (clamped to >= ``eps``) is per element, per sample, or a number."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * input.new_ones(input.shape)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    with no_grad():  # the clamp changes the value only: the gradient flows as if unclamped, as torch's
        shift = var.clamp_min(eps) - var
    var = var + shift
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# -- margins and embeddings ------------------------------------------------------------------------------------------
@float32_inputs
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``1 - cos(x1, x2)`` where ``target == 1``, ``max(0, cos(x1, x2) - margin)`` where ``target == -1``."""
    reduction = _reduction(size_average, reduce, reduction)
    d = target.ndim
    if d not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if d == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if d == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod = (input1 * input2).sum(d)
    if d == 1 and target.shape[0] not in (1, prod.shape[0]):
        raise RuntimeError(f"The size of tensor a ({target.shape[0]}) must match the size of tensor b "
                           f"({prod.shape[0]}) at non-singleton dimension 0")
    eps = 9.999999960041972e-13  # 1e-12 rounded to float32, in every dtype
    mag1 = (input1 * input1).sum(d) + eps
    mag2 = (input2 * input2).sum(d) + eps
    cos = prod / (mag1 * mag2).sqrt()
    loss = _where(target == 1, 1 - cos, 0.0) + _where(target == -1, (cos - margin).clamp_min(0), 0.0)
    return _reduce(loss, reduction)


@float32_inputs
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@float32_inputs
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """``input`` where ``target == 1``, ``max(0, margin - input)`` where ``target == -1``."""
    reduction = _reduction(size_average, reduce, reduction)
    loss = _where(target != 1, (margin - input).clamp_min(0), 0.0) + _where(target != -1, input, 0.0)
    return _reduce(loss, reduction)


def _as_batch(input):
    """``(N, C)`` input and ``(N,)`` target of the multi-class margin losses, and whether the input was 1-D."""
    if input.ndim > 2 or input.ndim and input.shape[-1] == 0:
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    single = input.ndim <= 1
    return (input.reshape(1, -1) if single else input), single


@float32_inputs
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: ``sum_{j != y} max(0, margin - x[y] + x[j]) ** p / C`` (``weight[y]`` scales it)."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    x, single = _as_batch(input)
    n, c = x.shape
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. Input "
                           f"has shape {list(input.shape)}.")
    _no_grad_arg("multi_margin_loss", "weight", weight)
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    for arg, dt in ((target, _dtype.int64), (weight, x.dtype)):
        if arg is not None and arg.dtype is not dt:
            raise RuntimeError(f"expected scalar type {_tname(dt)} but found {_tname(arg.dtype)}")
    t = target.reshape(n, 1)
    if t.numel() and (bool((t < 0).any()) or bool((t >= c).any())):
        raise RuntimeError("target out of range")
    h = relu(margin - x.gather(1, t) + x)
    if p == 2:
        h = h * h
    if weight is not None:
        h = h * weight[t]
    h = h * (arange(c, device=x.device) != t)
    loss = h.sum(1) / c
    if single and target.ndim == 0:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


@float32_inputs
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: ``sum_{j in targets, k not} max(0, 1 - (x[j] - x[k])) / C``, where ``target``
    lists class indices, ended by the first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    x, single = _as_batch(input)
    if target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    if target.dtype is not _dtype.int64:
        raise RuntimeError(f"expected scalar type Long but found {_tname(target.dtype)}")
    n, c = x.shape
    t = target.reshape(n, c)
    listed = (t != -1).to(_dtype.int64).cumprod(1).bool()  # the prefix before the first -1
    if bool(((t < -1) | (t >= c)).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    tc = t.clamp_min(0)
    is_target = ((tc.unsqueeze(2) == arange(c, device=x.device)) & listed.unsqueeze(2)).any(1)
    z = relu(1 - x.gather(1, tc).unsqueeze(2) + x.unsqueeze(1))  # (N, listed j, class k)
    mask = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = (z * mask).sum((1, 2)) / c
    return _reduce(loss.reshape(()) if single else loss, reduction)


@float32_inputs
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Per-class logistic loss ``-(t * logsigmoid(x) + (1 - t) * logsigmoid(-x))``, averaged over classes."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


@float32_inputs
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))``, computed without overflow."""
    reduction = _reduction(size_average, reduce, reduction)
    _no_grad_arg("soft_margin_loss", "target", target)
    return _reduce(_written_into(softplus(-input * target), input.dtype), reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not (a == p == n):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a}D, positive {p}D, and negative {n}D inputs")


@float32_inputs
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the ``p``-norm pairwise distance; ``swap`` uses
    ``min(d(a, n), d(p, n))``."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """:func:`triplet_margin_loss` with any ``distance_function(x1, x2)`` (default: pairwise_distance)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(dist(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp_min(0), reduction)


# -- sequences -------------------------------------------------------------------------------------------------------
def _lengths(x, like, name):
    if isinstance(x, Tensor):
        if x.dtype.is_floating_point or x.dtype.is_complex:
            raise RuntimeError(f"{name} must be integral")
        return x.to(_dtype.int64)
    return tensor(list(x) if isinstance(x, (list, tuple)) else x, dtype=_dtype.int64, device=like.device)


@float32_inputs
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The Connectionist Temporal Classification loss: ``-log`` of the summed probability of every alignment of
    ``targets`` to ``log_probs`` ``(T, N, C)`` (log-softmaxed). ``targets`` are ``(N, S)`` padded, or the
    concatenation of the ``target_lengths``; 'mean' divides each loss by its target length first."""
    reduction = _reduction(None, None, reduction)
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim + 1}-dimensional tensor for "
                           "argument #1 'log_probs' (while checking arguments for ctc_loss_allocate_outputs)")
    if targets.ndim > 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor for argument #2 "
                           "'targets' (while checking arguments for ctc_loss_allocate_outputs)")
    unbatched = log_probs.ndim == 2
    input_lengths = _lengths(input_lengths, log_probs, "input_lengths")
    target_lengths = _lengths(target_lengths, log_probs, "target_lengths")
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        input_lengths, target_lengths = input_lengths.reshape(1), target_lengths.reshape(1)
    big_t, n, c = log_probs.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if lengths.numel() != n:
            raise RuntimeError(f"{name} must be of size batch_size")
        if n and int(lengths.min()) < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value {int(lengths.min())} "
                               "(while checking arguments for ctc_loss_allocate_outputs)")
    if n and int(input_lengths.max()) > big_t:
        raise RuntimeError(f"Expected input_lengths to have value at most {big_t}, but got value "
                           f"{int(input_lengths.max())} (while checking arguments for ctc_loss_allocate_outputs)")
    targets = targets.to(_dtype.int64)
    if targets.ndim == 1:  # the concatenated format
        targets = _pad_concatenated(targets, target_lengths)
    elif n and targets.shape[1] < int(target_lengths.max()):
        raise RuntimeError(f"Expected tensor to have size at least {int(target_lengths.max())} at dimension 1, but "
                           f"got size {targets.shape[1]} for argument #2 'targets' (while checking arguments for "
                           "ctc_loss_allocate_outputs)")
    nll = CTC.apply(log_probs, targets, input_lengths, target_lengths, blank=blank, zero_infinity=zero_infinity)
    if zero_infinity:
        nll = _where(nll == math.inf, 0.0, nll)
    if unbatched:
        nll = nll.reshape(())
    if reduction == "mean":
        return (nll / target_lengths.clamp_min(1).to(nll.dtype)).mean()
    return _reduce(nll, reduction)


def _pad_concatenated(targets, target_lengths):
    """``(N, max length)`` targets from their concatenation."""
    xp = array_module(targets.device)
    lengths = target_lengths._data
    n, width = lengths.shape[0], int(lengths.max()) if lengths.size else 0
    if int(lengths.sum()) != targets.shape[0]:
        raise RuntimeError(f"Expected tensor to have size {int(lengths.sum())} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets' (while checking arguments for "
                           "ctc_loss_allocate_outputs)")
    starts = xp.cumsum(lengths) - lengths
    cols = xp.arange(width)
    inside = cols[None, :] < lengths[:, None]
    src = xp.where(inside, starts[:, None] + cols[None, :], 0)
    out = xp.where(inside, targets._data[src] if targets.shape[0] else 0, 0).astype(xp.int64)
    return Tensor._make(out.reshape(n, width), _dtype.int64, targets.device)
