"""Numerical gradient checks: analytical (autograd) Jacobians against float64 central differences."""
import numpy as np

from .engine import grad as _grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(func, inputs):
    from .._tensor import Tensor
    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor) and o.dtype.is_floating_point)


def _numerical_jacobian(func, inputs, diff_idx, eps):
    """Column j of input i: (f(x + eps e_j) - f(x - eps e_j)) / 2 eps, for every output."""
    from ..autograd.grad_mode import no_grad
    jac = []
    with no_grad():
        for i in diff_idx:
            x = inputs[i]._data
            flat = x.reshape(-1) if x.flags.c_contiguous else None
            cols = []
            for j in range(x.size):
                idx = np.unravel_index(j, x.shape)
                orig = x[idx].copy()
                x[idx] = orig + eps
                plus = [o._data.astype(np.float64).ravel().copy() for o in _outputs(func, inputs)]
                x[idx] = orig - eps
                minus = [o._data.astype(np.float64).ravel().copy() for o in _outputs(func, inputs)]
                x[idx] = orig
                cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
            jac.append(cols)
    return jac  # jac[input][column][output] -> vector


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_backward_ad=True, fast_mode=False, masked=None):
    """Checks the gradients of ``func`` at ``inputs`` (float64 tensors with ``requires_grad``) against central
    finite differences, one vector-Jacobian product per output element. Returns True or raises."""
    from .._tensor import Tensor
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    for i in diff_idx:
        if inputs[i].dtype.name != "float64":
            import warnings
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. "
                          "The check is likely to fail.")
    outs = _outputs(func, inputs)
    numerical = _numerical_jacobian(func, inputs, diff_idx, eps)
    for k, out in enumerate(outs):
        if not out.requires_grad:
            if any(np.any(col[k] != 0) for cols in numerical for col in cols):
                return _fail(raise_exception, f"Output {k} does not require grad, but the numerical gradient is "
                                              "non-zero")
            continue
        n = out.numel()
        analytical = [np.zeros((inputs[i].numel(), n)) for i in diff_idx]
        for e in range(n):
            from .._creation import zeros_like
            g = zeros_like(out)
            g._data.reshape(-1)[e] = 1
            grads = _grad(out, [inputs[i] for i in diff_idx], g, retain_graph=True, allow_unused=True)
            for a, gi in zip(analytical, grads):
                if gi is not None:
                    a[:, e] = gi._data.astype(np.float64).ravel()
        for a, cols, i in zip(analytical, numerical, diff_idx):
            num = np.stack([c[k] for c in cols]) if cols else np.zeros((0, n))
            if not np.allclose(a, num, rtol=rtol, atol=atol, equal_nan=True):
                err = np.max(np.abs(a - num)) if a.size else 0.0
                return _fail(raise_exception,
                             f"Jacobian mismatch for output {k} with respect to input {i},\n"
                             f"numerical:{num}\nanalytical:{a}\n(max abs difference {err})")
    return True


def _fail(raise_exception, msg):
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Checks second-order gradients: ``gradcheck`` of the map (inputs, grad_outputs) -> vector-Jacobian product."""
    from .._tensor import Tensor
    from .._random import randn_like
    inputs = _as_tuple(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(randn_like(o).requires_grad_() for o in outs if o.requires_grad)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]

    def vjp(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _outputs(func, ins) if o.requires_grad]
        gs = _grad(outs, [ins[i] for i in diff_idx], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
