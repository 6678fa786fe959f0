"""Matrix products: matmul and its BLAS-shaped variants, einsum, tensordot, kron, trace."""

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "baddbmm",
           "addbmm", "einsum", "tensordot", "kron", "trace", "chain_matmul"]
import string

import numpy as np

from .. import _autocast, _dtype
from .._dtype import scalar_name
from .._autocast import cpu_float32_inputs, input_precision, lower_precision_inputs
from .._device import CPU, array_module
from .._kernels import mkl as _mkl
from .._kernels.parallel import get_num_threads
from .._tensor import Tensor, inplace, register, write_out
from ..autograd.function import Function
from ..autograd.grad_mode import grad_enabled
from .reduce import sum as _sum
from .view import broadcast_pair, reshape

_CPP = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
        "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
        "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
        "uint16": "short unsigned int", "uint32": "unsigned int", "uint64": "long unsigned int"}


def _dims(shape):
    return "x".join(str(s) for s in shape)


def constant(arr, like):
    """A raw array as a Tensor outside the graph, on ``like``'s device."""
    return Tensor._make(arr, _dtype.from_numpy_dtype(arr.dtype), like.device)


def xp_of(t):
    return array_module(t.device)


def write_same(result, out, message=None):
    """``write_out`` for the products whose ``out`` must already have the result's dtype; ``message(result_dtype,
    out_dtype)`` words the error where it is not torch's usual one."""
    if out is not None and out.dtype is not result.dtype:
        raise RuntimeError(message(result.dtype, out.dtype) if message else
                           f"Expected out tensor to have dtype {_CPP[result.dtype.name]}, but got "
                           f"{_CPP[out.dtype.name]} instead")
    return write_out(result, out)


def write_same_all(result, out):
    """``write_same`` for each tensor of the named tuple ``result``; the same named tuple of ``out``'s tensors."""
    if out is None:
        return result
    for r, o in zip(result, out):
        write_same(r, o)
    return type(result)(*out)


def _dot_message(r, o):
    return f"result dtype {scalar_name(o)} does not match input dtype {scalar_name(r)}"


def _tensordot_message(r, o):
    return (f"tensordot: Expected the output tensor to have dtype {scalar_name(r)}, but got an output tensor with "
            f"dtype {scalar_name(o)}")


_DOT_MAX = 1 << 14  # output elements up to which ndarray.dot runs a 2-D product


def _gemm(xp, a, b):
    """A 2-D product above ``_DOT_MAX`` outputs: MKL's where installed, else the array module's."""
    y = _mkl.gemm(a, b, get_num_threads()) if xp is np else None
    return xp.matmul(a, b) if y is None else y


# -- matmul ------------------------------------------------------------------------------------------------------
class Matmul(Function):
    """``a @ b`` for operands of at least two dimensions, broadcasting batch dimensions."""
    half_in_float32 = True
    holomorphic = True

    def name(self):  # the product of two matrices is an mm node
        return "MmBackward0" if len(self._out_meta[0][0]) == 2 and self.b_ndim == 2 else "MatmulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        # each operand only for the other's gradient, as torch: ``h[:, t] = h[:, t - 1] @ A`` with a constant A
        # leaves h free to be written in place; nothing without a graph (no edges)
        edges = ctx._edges
        if edges:
            ctx.save_for_backward(a if edges[1] is not None else None, b if edges[0] is not None else None)
            ctx.b_ndim = b.ndim
        if b.ndim == 2:
            # ndarray.dot costs less to call than the matmul ufunc, which runs larger products faster
            if a.ndim == 2:
                return a.dot(b) if a.shape[0] * b.shape[1] <= _DOT_MAX else _gemm(ctx.xp, a, b)
            if a.flags.c_contiguous:  # one GEMM instead of one per batch element
                a2 = a.reshape(-1, a.shape[-1])
                y = a2.dot(b) if a2.shape[0] * b.shape[1] <= _DOT_MAX else _gemm(ctx.xp, a2, b)
                return y.reshape(a.shape[:-1] + b.shape[-1:])
        return ctx.xp.matmul(a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = Matmul.apply(grad, b.mT)  # the engine sums broadcast batch dimensions
        if ctx.needs_input_grad[1]:
            if a.ndim > 2 and ctx.b_ndim == 2:
                gb = Matmul.apply(reshape(a, (-1, a.shape[-1])).mT, reshape(grad, (-1, grad.shape[-1])))
            else:
                gb = Matmul.apply(a.mT, grad)
        return ga, gb


def _refuse_bool(t, kernel):
    if t.dtype is _dtype.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _same_dtype(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_CPP[a.dtype.name]} != "
                           f"{_CPP[b.dtype.name]}")


def _matmul_check(a, b):
    """torch's matmul errors, by the operand ranks."""
    sa, sb = a._data.shape, b._data.shape
    da, db = len(sa), len(sb)
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if a.dtype is _dtype.bool and b.dtype is _dtype.bool:  # mixed dtypes report the mismatch below
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if da == 1 and db == 1:
        if a.dtype is not b.dtype:
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {scalar_name(a.dtype)} "
                               f"and {scalar_name(b.dtype)}")
        if sa != sb:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src [{sb[0]}] to have the "
                               f"same number of elements, but got {sa[0]} and {sb[0]} elements respectively")
        return
    if db == 1:
        if a.dtype is not b.dtype:
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got {scalar_name(b.dtype)}, "
                               f"{scalar_name(a.dtype)}, and {scalar_name(b.dtype)}")
        if sa[-1] != sb[0]:
            rows = _prod(sa[:-1])
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{sa[-1]}), vec ({sb[0]})")
        return
    _same_dtype(a, b)
    k = sa[-1]
    if db == 2:
        if k != sb[0]:
            rows = _prod(sa[:-1])
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {_dims(sb)})")
        return
    batch = broadcast_pair(sa[:-2], sb[:-2])
    if k != sb[-2]:
        n = _prod(batch)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{n}, {k}] but got: "
                           f"[{n}, {sb[-2]}].")


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


@lower_precision_inputs
def matmul(input, other, *, out=None):
    """Matrix product with torch's rules: 1-D operands are promoted to matrices and the added dimension removed;
    batch dimensions broadcast.

    Example::

        >>> ember.matmul(ember.ones(2, 3), ember.ones(3)).shape
        ember.Size([2])
    """
    try:
        sa, sb = input._data.shape, other._data.shape
    except RuntimeError:  # a sparse COO operand has no dense array
        from .._sparse import _mm
        return write_out(_mm(input, other), out)
    if len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0] and input.dtype is other.dtype is not _dtype.bool:
        r = Matmul.apply(input, other)  # two matrices that multiply: the common case needs no other check
        return r if out is None else write_same(r, out)
    _matmul_check(input, other)
    da, db = len(sa), len(sb)
    if da >= 2 and db >= 2:
        r = Matmul.apply(input, other)
        return r if out is None else write_same(r, out)
    a = reshape(input, (1, input.shape[0])) if da == 1 else input
    b = reshape(other, (other.shape[0], 1)) if db == 1 else other
    r = Matmul.apply(a, b)
    shape = r.shape[:-2] + ((r.shape[-2],) if da > 1 else ()) + ((r.shape[-1],) if db > 1 else ())
    return write_same(reshape(r, shape), out)


_BOOL = _dtype.bool
_autocast_state = _autocast.ACTIVE.get


def _matmul_op(self, other):
    if not isinstance(other, Tensor):
        return NotImplemented
    sa, sb = self._data.shape, other._data.shape
    if len(sa) == 2 and len(sb) == 2 and sa[1] == sb[0] and self.dtype is other.dtype is not _BOOL and \
            _autocast_state() is None:
        if self.dtype in _BLAS_FLOATS and self.device is other.device is CPU and sa[0] * sb[1] <= _DOT_MAX and \
                not ((self._requires_grad or other._requires_grad) and grad_enabled()) and \
                getattr(Matmul.apply, "dispatches", None) is Matmul:
            # a small product with no graph to record (the dispatch, not the product, is then most of the cost)
            return Tensor._make(self._data.dot(other._data), self.dtype, CPU)
        return Matmul.apply(self, other)  # matmul's common case, one call less
    return matmul(self, other)


_BLAS_FLOATS = frozenset((_dtype.float32, _dtype.float64))


def _rmatmul(self, other):
    return matmul(other, self) if isinstance(other, Tensor) else NotImplemented


@lower_precision_inputs
def mm(input, mat2, *, out=None):
    """Product of two matrices."""
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    try:
        input._data, mat2._data
    except RuntimeError:  # a sparse COO operand has no dense array
        from .._sparse import mm as sparse_mm
        return write_out(sparse_mm(input, mat2), out)
    _same_dtype(input, mat2)
    _refuse_bool(input, "addmm_impl_cpu_")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims(input.shape)} and {_dims(mat2.shape)})")
    return write_same(Matmul.apply(input, mat2), out)


def _check_bmm(b1, b2, kernel):
    for name, t in (("batch1", b1), ("batch2", b2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if b1.dtype is not b2.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(b1.dtype)} but found {scalar_name(b2.dtype)}")
    _refuse_bool(b1, kernel)
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{b1.shape[0]}, "
                           f"{b1.shape[2]}] but got: [{b2.shape[0]}, {b2.shape[1]}].")


@lower_precision_inputs
def bmm(input, mat2, *, out=None):
    """Batched product of matrices: ``(b, n, m) @ (b, m, p)``."""
    _check_bmm(input, mat2, "bmm")
    return write_same(Matmul.apply(input, mat2), out)


@input_precision
def mv(input, vec, *, out=None):
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    _refuse_bool(input, "addmv_impl_cpu")
    return matmul(input, vec, out=out)


def _check_vectors(a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")


@input_precision
def dot(input, tensor, *, out=None):
    """Inner product of two 1-D tensors."""
    _check_vectors(input, tensor)
    _refuse_bool(input, "dot")
    return write_same(matmul(input, tensor), out, _dot_message)


@input_precision
def vdot(input, other, *, out=None):
    """Inner product of two 1-D tensors, conjugating the first."""
    _check_vectors(input, other)
    _refuse_bool(input, "dot")
    return write_same(matmul(input.conj(), other), out, _dot_message)


@lower_precision_inputs
def inner(input, other, *, out=None):
    """Sum of products over the last dimension of both inputs (a product when one is 0-d)."""
    if input.ndim == 0 or other.ndim == 0:
        return write_out(input * other, out)
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]), out=out)


def outer(input, vec2, *, out=None):
    """Outer product of two 1-D tensors."""
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    return write_out(reshape(input, (-1, 1)) * vec2, out)


ger = outer


# -- fused multiply-add products ---------------------------------------------------------------------------------
class AddMatmul(Function):
    """``beta * input + alpha * (a @ b)``, the product summed over dimension 0 when ``reduce_batch`` (addbmm)."""
    half_in_float32 = True
    holomorphic = True

    @staticmethod
    def forward(ctx, input, a, b, beta, alpha, reduce_batch):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(a if needs[2] else None, b if needs[1] else None)
        ctx.beta, ctx.alpha, ctx.reduce_batch = beta, alpha, reduce_batch
        xp = ctx.xp
        r = xp.matmul(a, b)
        if reduce_batch:
            r = r.sum(0, dtype=r.dtype)
        kind = r.dtype.kind  # r is a fresh array: scale and accumulate in place
        if alpha != 1:
            r *= alpha if kind in "fc" else int(alpha)
        if beta != 0:  # beta == 0 ignores input entirely, nan and inf included
            r += input if beta == 1 else input * (beta if kind in "fc" else int(beta))
        return r

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        beta, alpha = ctx.beta, ctx.alpha
        g = reshape(grad, (1,) + tuple(grad.shape)) if ctx.reduce_batch else grad
        ga = gb = None
        if ctx.needs_input_grad[1]:
            ga = Matmul.apply(g, b.mT)
            ga = ga * alpha if alpha != 1 else ga
        if ctx.needs_input_grad[2]:
            gb = Matmul.apply(a.mT, g)
            gb = gb * alpha if alpha != 1 else gb
        gi = (grad * beta if beta != 1 else grad) if ctx.needs_input_grad[0] else None
        return gi, ga, gb


def _check_expandable(input, shape):
    """torch's error when ``input`` does not broadcast to the product's ``shape``."""
    if input.ndim > len(shape):
        raise RuntimeError(f"expand: the number of sizes provided ({len(shape)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({input.ndim})")
    for i in range(1, input.ndim + 1):
        s, t = input.shape[-i], shape[-i]
        if s != 1 and s != t:
            raise RuntimeError(f"The expanded size of the tensor ({t}) must match the existing size ({s}) at "
                               f"non-singleton dimension {len(shape) - i}.  Target sizes: {list(shape)}.  Tensor "
                               f"sizes: {list(input.shape)}")


@lower_precision_inputs
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``; ``input`` broadcasts to the product's shape."""
    for name, t in (("mat1", mat1), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t.ndim}-D tensor")
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {scalar_name(input.dtype)} and "
                           f"{scalar_name(mat2.dtype)}")
    _same_dtype(mat1, mat2)
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims(mat1.shape)} and {_dims(mat2.shape)})")
    _refuse_bool(input, "addmm_impl_cpu_")
    _check_expandable(input, (mat1.shape[0], mat2.shape[1]))
    return write_same(AddMatmul.apply(input, mat1, mat2, beta=beta, alpha=alpha, reduce_batch=False), out)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat @ vec)``."""
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if not input.dtype is mat.dtype is vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {scalar_name(input.dtype)}, "
                           f"{scalar_name(mat.dtype)}, and {scalar_name(vec.dtype)}")
    n = mat.shape[0]
    if mat.shape[1] != vec.shape[0] or input.ndim > 1 or input.numel() not in (1, n):
        raise RuntimeError(f"size mismatch, got input ({input.numel()}), mat ({_dims(mat.shape)}), vec "
                           f"({vec.shape[0]})")
    _refuse_bool(input, "addmv_impl_cpu")
    col = reshape(input, (-1, 1)) if input.ndim else input
    r = AddMatmul.apply(col, mat, reshape(vec, (-1, 1)), beta=beta, alpha=alpha, reduce_batch=False)
    return write_same(reshape(r, (n,)), out)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * outer(vec1, vec2)``."""
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    dt = _dtype.result_type(input, vec1, vec2)
    if not (dt.is_floating_point or dt.is_complex):
        for name, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    input, vec1, vec2 = input.to(dt), vec1.to(dt), vec2.to(dt)
    _check_expandable(input, (vec1.shape[0], vec2.shape[0]))
    return write_out(AddMatmul.apply(input, reshape(vec1, (-1, 1)), reshape(vec2, (1, -1)), beta=beta, alpha=alpha,
                                     reduce_batch=False), out)


@lower_precision_inputs
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    _check_bmm(batch1, batch2, "baddbmm")
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(batch1.dtype)} but found {scalar_name(input.dtype)}")
    _check_expandable(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return write_same(AddMatmul.apply(input, batch1, batch2, beta=beta, alpha=alpha, reduce_batch=False), out)


@lower_precision_inputs
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_i batch1[i] @ batch2[i]``."""
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({_dims(batch1.shape[1:])} and "
                           f"{_dims(batch2.shape[1:])})")
    if not input.dtype is batch1.dtype is batch2.dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(batch1.dtype)} but found {scalar_name(input.dtype)}")
    _refuse_bool(input, "addmm_impl_cpu_")
    _check_expandable(input, (batch1.shape[1], batch2.shape[2]))
    r = AddMatmul.apply(input, batch1, batch2, beta=beta, alpha=alpha, reduce_batch=True)
    return write_same(r, out, lambda r, o: f"self and mat2 must have the same dtype, but got {scalar_name(o)} and "
                                           f"{scalar_name(r)}")


# -- einsum ------------------------------------------------------------------------------------------------------
class Einsum(Function):
    """``einsum`` over already-parsed labels (one letter per dimension, no ellipsis, output given)."""
    half_in_float32 = True

    @staticmethod
    def forward(ctx, *ops, labels, output):
        ctx.labels, ctx.output, ctx.shapes = labels, output, [op.shape for op in ops]
        # an operand only for the others' gradients, as torch
        needs = ctx.needs_input_grad
        n_need = sum(needs)
        ctx.save_for_backward(*[op if n_need > needs[i] else None for i, op in enumerate(ops)])
        xp = ctx.xp
        eq = ",".join(labels) + "->" + output
        r = xp.einsum(eq, *ops, optimize=len(ops) > 1)
        if len(ops) == 1 and xp.may_share_memory(r, ops[0]):  # a pure relabelling gives a view; return a copy
            r = r.copy()
        elif not r.flags.c_contiguous:  # a product comes out contiguous (``.view`` of attention scores)
            r = xp.ascontiguousarray(r)
        return r

    @staticmethod
    def backward(ctx, grad):
        ops = ctx.saved_tensors
        labels, output = ctx.labels, ctx.output
        used = set(output).union(*labels)
        fresh = (c for c in string.ascii_letters if c not in used)
        grads = []
        for i, lab in enumerate(labels):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            xp = xp_of(grad)
            args, subs = [grad], [output]
            for j, op in enumerate(ops):
                if j != i:
                    args.append(op.conj())  # the gradient of a product is the grad times the others' conjugates
                    subs.append(labels[j])
            target = ""
            for pos, c in enumerate(lab):
                if c in target:  # a repeated label reads a diagonal; its gradient is written back through an eye
                    f = next(fresh)
                    args.append(constant(xp.eye(ctx.shapes[i][pos], dtype=grad.dtype.np), grad))
                    subs.append(c + f)
                    target += f
                else:
                    target += c
            present = {}
            for arg, sub in zip(args, subs):
                for c, s in zip(sub, arg.shape):
                    present[c] = max(s, present.get(c, 0))
            for pos, c in enumerate(target):
                if present.get(c, 0) < ctx.shapes[i][pos]:  # summed away here only (or broadcast): fill along it
                    args.append(constant(xp.ones(ctx.shapes[i][pos], dtype=grad.dtype.np), grad))
                    subs.append(c)
            grads.append(einsum_labels(args, subs, target))
        return tuple(grads)


def einsum_labels(ops, labels, output):
    """``einsum`` over explicit letter labels (one per dimension) and output."""
    return Einsum.apply(*ops, labels=tuple(labels), output=output)


_SUBLIST_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # in ASCII order, as the implicit output sorts


def _sublist_equation(args):
    """Turns torch's sublist form ``einsum(op0, [0, 1], op1, [1, 2], [0, 2])`` into an equation and operands."""
    def term(sub):
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += "..."
            elif isinstance(s, int) and 0 <= s < 52:
                out += _SUBLIST_LETTERS[s]
            elif isinstance(s, int):
                raise ValueError("einsum(): subscript in subscript list is not within the valid range [0, 52)")
            else:
                raise TypeError(f"einsum(): subscripts must be integers or Ellipsis, but got {type(s).__name__}")
        return out
    n = len(args) // 2
    eq = ",".join(term(s) for s in args[1:2 * n:2])
    if len(args) % 2:
        eq += "->" + term(args[-1])
    return eq, list(args[0:2 * n:2])


def _parse(equation, shapes):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(shapes):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(shapes):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    for i, c in enumerate(eq):
        if not (c.isascii() and c.isalpha()) and c not in ".,->":
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, subscripts "
                               "must be in [a-zA-Z]")
    n_ell = 0
    for i, (t, shape) in enumerate(zip(terms, shapes)):
        bare = t.replace("...", "", 1)
        if "." in bare:
            raise RuntimeError(f"einsum(): found '.' for operand {i} that is not part of any ellipsis")
        if "..." in t:
            if len(bare) > len(shape):
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(bare)}) is more than "
                                   f"the number of dimensions ({len(shape)}) for operand {i}")
            n_ell = max(n_ell, len(shape) - len(bare))
        elif len(t) != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t)}) does not match the "
                               f"number of dimensions ({len(shape)}) for operand {i} and no ellipsis was given")
    ell = "".join([c for c in string.ascii_letters if c not in eq][:n_ell])
    labels, sizes = [], {}
    for i, (t, shape) in enumerate(zip(terms, shapes)):
        if "..." in t:
            k = len(shape) - len(t) + 3
            t = t.replace("...", ell[n_ell - k:] if k else "")
        seen = {}
        for c, s in zip(t, shape):
            if c in seen and seen[c] != s:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't match, "
                                   f"{s} != {seen[c]}")
            seen[c] = s
            prev = sizes.get(c)
            if prev is not None and prev != s and prev != 1 and s != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {s} for operand {i} which does not broadcast "
                                   f"with previously seen size {prev}")
            sizes[c] = s if prev in (None, 1) else prev
        labels.append(t)
    if arrow:
        if "." in rhs.replace("...", "", 1):
            raise RuntimeError("einsum(): found '.' for output but it is not part of any ellipsis")
        out = rhs.replace("...", ell)
        for c in rhs.replace("...", ""):
            if c not in sizes:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                                   "operand")
            if out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
    else:
        counts = {}
        for t in labels:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return labels, out


@lower_precision_inputs
def einsum(*args):
    """Sums products of operand elements over the indices an Einstein-summation equation names.

    ``einsum('ij,jk->ik', a, b)`` is ``a @ b``; ``...`` stands for broadcast dimensions; without ``->`` the output
    holds the indices that appear once, in alphabetical order. The sublist form ``einsum(a, [0, 1], b, [1, 2])``
    is accepted too.

    Example::

        >>> ember.einsum('ii->', ember.eye(3))
        tensor(3.)
    """
    if len(args) < 2:  # an equation without operands, or an operand without its subscripts
        raise ValueError("einsum(): must specify the equation string and at least one operand, or at least one "
                         "operand and its subscripts list")
    if isinstance(args[0], str):
        equation, ops = args[0], list(args[1:])
        if len(ops) == 1 and isinstance(ops[0], (list, tuple)):
            ops = list(ops[0])
    else:
        equation, ops = _sublist_equation(args)
    for i, op in enumerate(ops):
        if not isinstance(op, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got {type(op).__name__}")
    labels, out = _parse(equation, [tuple(op.shape) for op in ops])
    for op in ops[1:]:
        if op.dtype is not ops[0].dtype:
            raise RuntimeError(f"expected scalar type {scalar_name(ops[0].dtype)} but found {scalar_name(op.dtype)}")
    dt = ops[0].dtype
    if not (dt.is_floating_point or dt.is_complex or dt is _dtype.int64):
        # the labels found in one operand only are summed away first, and sums of integers and bools are int64
        summed = [any(c not in out and not any(c in other for j, other in enumerate(labels) if j != i) for c in lab)
                  for i, lab in enumerate(labels)]
        if all(summed):
            ops = [op.to(_dtype.int64) for op in ops]
        elif any(summed):
            raise RuntimeError(f"expected scalar type {scalar_name(dt)} but found Long")
        elif dt is _dtype.bool and any(c not in out for lab in labels for c in lab):
            raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    return Einsum.apply(*ops, labels=tuple(labels), output=out)


@lower_precision_inputs
def tensordot(a, b, dims=2, out=None):
    """Contracts ``a`` and ``b`` over ``dims``: the last ``dims`` of ``a`` with the first of ``b``, or the two
    lists of dimensions ``dims = (dims_a, dims_b)``."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > a.ndim or dims > b.ndim:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        for pos, (name, d) in enumerate(zip(("dims_self", "dims_other"), dims), 3):
            if not isinstance(d, (list, tuple)):
                raise TypeError(f"tensordot(): argument '{name}' (position {pos}) must be tuple of ints, not "
                                f"{type(d).__name__}")
        da, db = (list(d) for d in dims)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    else:
        raise RuntimeError("tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    la = string.ascii_letters[:a.ndim]
    lb = list(string.ascii_letters[a.ndim:a.ndim + b.ndim])
    for i, j in zip(da, db):
        wi, wj = a._wrap_dim(i), b._wrap_dim(j)
        if a.shape[wi] != b.shape[wj]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[wi]} in dim {i} "
                               f"and second has size {b.shape[wj]} in dim {j}")
        lb[wj] = la[wi]
    for t, ds in ((a, da), (b, db)):
        wrapped = [t._wrap_dim(d) for d in ds]
        for d in wrapped:
            if wrapped.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    lb = "".join(lb)
    keep = {la[a._wrap_dim(i)] for i in da}
    output = "".join(c for c in la if c not in keep) + "".join(c for c in lb if c not in la)
    _refuse_bool(a, "addmm_impl_cpu_" if output else "dot")
    return write_same(Einsum.apply(a, b, labels=(la, lb), output=output), out, _tensordot_message)


def kron(input, other, *, out=None):
    """Kronecker product: block ``(i, j)`` of the result is ``input[i, j] * other``."""
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = reshape(input, tuple(x for s in sa for x in (s, 1)))
    b = reshape(other, tuple(x for s in sb for x in (1, s)))
    return write_out(reshape(a * b, tuple(x * y for x, y in zip(sa, sb))), out)


@cpu_float32_inputs  # on CPU autocast's float32 list
def trace(input):
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype is _dtype.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return _sum(input.diagonal())


def _chain_order(shapes):
    """Optimal parenthesisation of a chain of matrix products (the classic dynamic programme)."""
    dims = [shapes[0][0]] + [s[1] for s in shapes]
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = float("inf")
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _multiply_chain(mats):
    split = _chain_order([tuple(m.shape) for m in mats])

    def go(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return Matmul.apply(go(i, k), go(k + 1, j))
    return go(0, len(mats) - 1)


@lower_precision_inputs
def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices, multiplied in the cheapest order. The first and last may be 1-D."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last.ndim}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    for i, t in enumerate(tensors[1:], 1):
        if t.dtype is not first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 is "
                               f"{_CPP[first.dtype.name]} and tensor {i} {_CPP[t.dtype.name]}")
    mats = list(tensors)
    if first.ndim == 1:
        mats[0] = reshape(first, (1, -1))
    if last.ndim == 1:
        mats[-1] = reshape(last, (-1, 1))
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes {list(tensors[i].shape)} and "
                               f"{list(tensors[i + 1].shape)} cannot be multiplied")
    r = _multiply_chain(mats)
    shape = ((r.shape[0],) if first.ndim == 2 else ()) + ((r.shape[1],) if last.ndim == 2 else ())
    return write_same(reshape(r, shape), out, lambda r, o: f"multi_dot(): expected out tensor to have dtype "
                                                           f"{_CPP[r.name]} but got {_CPP[o.name]}")


@lower_precision_inputs
def chain_matmul(*matrices, out=None):
    """The product of 2-D matrices, multiplied in the cheapest order (deprecated: use ``linalg.multi_dot``)."""
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return write_out(matrices[0] * 1, out)
    return multi_dot(matrices, out=out)


register(matmul, mm, bmm, mv, dot, vdot, inner, outer, addmm, addmv, addr, baddbmm, addbmm, kron, trace,
         ger=outer, __matmul__=_matmul_op, __rmatmul__=_rmatmul, addmm_=inplace(addmm), addmv_=inplace(addmv),
         addr_=inplace(addr), baddbmm_=inplace(baddbmm), addbmm_=inplace(addbmm))
