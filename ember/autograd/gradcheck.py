"""Numerical gradient checks: autograd's Jacobians against central finite differences (best in float64)."""
import warnings

import numpy as np

from . import function as _fn
from .engine import grad as _grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _host(t):
    """A float64 NumPy copy (a copy: outputs may be views of the input being perturbed); a complex tensor is read
    as its real view, real and imaginary parts interleaved."""
    a = t._data
    a = a if isinstance(a, np.ndarray) else a.get()
    if t.dtype.is_complex:
        return np.stack([a.real, a.imag], -1).astype(np.float64)
    return np.array(a, dtype=np.float64)


def _real_numel(t):
    """The number of real entries of ``t``: complex entries count twice (real and imaginary parts)."""
    return t.numel() * (2 if t.dtype.is_complex else 1)


def _from_real(t, v):
    """A flat real vector over ``t``'s real view, as an array of ``t``'s shape and dtype."""
    if t.dtype.is_complex:
        v = v[0::2] + 1j * v[1::2]
    return v.reshape(t.shape).astype(t.dtype.np)


def _outputs(func, inputs):
    return tuple(o for o in _as_tuple(func(*inputs))
                 if isinstance(o, _fn.Tensor) and (o.dtype.is_floating_point or o.dtype.is_complex))


def _tensor(a):
    from .._creation import tensor
    return tensor(a, dtype=_fn._dtype.float64)


def _random_like(t, rng):
    """Standard normal entries of ``t``'s shape, float64 (complex128 for a complex ``t``), on its device."""
    v = rng.standard_normal(_real_numel(t))
    return _fn.Tensor._make(_from_real(t, v).astype(np.complex128 if t.dtype.is_complex else np.float64),
                            _fn._dtype.complex128 if t.dtype.is_complex else _fn._dtype.float64, _fn.CPU).to(t.device)


def _perturbed_outputs(func, inputs, x, idx, delta):
    """Outputs of ``func`` with ``x[idx]`` moved by ``delta`` (written into the array: no version bump)."""
    data = x._data
    orig = data[idx].copy()
    data[idx] = orig + delta
    try:
        return [_host(o).ravel() for o in _outputs(func, inputs)]
    finally:
        data[idx] = orig


def _numerical_jacobians(func, inputs, diff_idx, n_outs, eps):
    """jac[i][k]: (numel of input i, numel of output k), central differences one element at a time."""
    jac = []
    for i in diff_idx:
        x = inputs[i]
        cols = [np.zeros((_real_numel(x), n)) for n in n_outs]
        steps = (eps, eps * 1j) if x.dtype.is_complex else (eps,)
        for j, (idx, step) in enumerate((idx, step) for idx in np.ndindex(*x.shape) for step in steps):
            plus = _perturbed_outputs(func, inputs, x, idx, step)
            minus = _perturbed_outputs(func, inputs, x, idx, -step)
            for k, (p, m) in enumerate(zip(plus, minus)):
                cols[k][j] = (p - m) / (2 * eps)
        jac.append(cols)
    return jac


def _vjp(out, inputs, diff_idx, v, check_grad_dtypes):
    from .._creation import zeros_like
    g = _fn.Tensor._make(_from_real(out, v), out.dtype, _fn.CPU).to(out.device)
    grads = _grad(out, [inputs[i] for i in diff_idx], g, retain_graph=True, allow_unused=True)
    result = []
    for i, gi in zip(diff_idx, grads):
        if gi is None:
            gi = zeros_like(inputs[i])
        elif check_grad_dtypes and gi.dtype is not inputs[i].dtype:
            raise GradcheckError("Gradient has dtype mismatch")
        result.append(_host(gi).ravel())
    return result


def _analytical_jacobians(outs, inputs, diff_idx, check_grad_dtypes, nondet_tol):
    """jac[i][k] like the numerical one, one vector-Jacobian product per output element, run twice to check that
    backward is reentrant."""
    jac = [[np.zeros((_real_numel(inputs[i]), _real_numel(o))) for o in outs] for i in diff_idx]
    for k, out in enumerate(outs):
        if not out.requires_grad:
            continue
        for e in range(_real_numel(out)):
            v = np.zeros(_real_numel(out))
            v[e] = 1
            first = _vjp(out, inputs, diff_idx, v, check_grad_dtypes)
            second = _vjp(out, inputs, diff_idx, v, check_grad_dtypes)
            for n, (a, b) in enumerate(zip(first, second)):
                if np.max(np.abs(a - b), initial=0.0) > nondet_tol:
                    raise GradcheckError(
                        "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                        "times gives different values, although analytical gradient matches numerical gradient.The "
                        f"tolerance for nondeterminism was {nondet_tol}.")
                jac[n][k][:, e] = a
    return jac


def _mismatch(k, i, numerical, analytical):
    return (f"Jacobian mismatch for output {k} with respect to input {i},\nnumerical:{_tensor(numerical)}\n"
            f"analytical:{_tensor(analytical)}\n")


def _slow_check(func, inputs, outs, diff_idx, eps, atol, rtol, check_grad_dtypes, nondet_tol):
    numerical = _numerical_jacobians(func, inputs, diff_idx, [_real_numel(o) for o in outs], eps)
    for k, out in enumerate(outs):
        if not out.requires_grad and any(np.any(jac[k] != 0) for jac in numerical):
            raise GradcheckError("Numerical gradient for function expected to be zero")
    analytical = _analytical_jacobians(outs, inputs, diff_idx, check_grad_dtypes, nondet_tol)
    for n, i in enumerate(diff_idx):
        for k in range(len(outs)):
            a, num = analytical[n][k], numerical[n][k]
            if not np.allclose(a, num, rtol=rtol, atol=atol, equal_nan=True):
                raise GradcheckError(_mismatch(k, i, num, a))


def _fast_check(func, inputs, outs, diff_idx, eps, atol, rtol, check_grad_dtypes, nondet_tol):
    """Compares v^T J u for random unit vectors u (per input) and v (per output) instead of whole Jacobians: one
    vector-Jacobian product per output and one directional difference per input."""
    rng = np.random.default_rng(0)
    us = [rng.random(_real_numel(inputs[i])) for i in diff_idx]
    us = [u / (np.linalg.norm(u) or 1.0) for u in us]
    vs = [rng.random(_real_numel(o)) for o in outs]
    vs = [v / (np.linalg.norm(v) or 1.0) for v in vs]
    analytical = np.zeros((len(diff_idx), len(outs)))
    for k, out in enumerate(outs):
        if out.requires_grad:
            first = _vjp(out, inputs, diff_idx, vs[k], check_grad_dtypes)
            second = _vjp(out, inputs, diff_idx, vs[k], check_grad_dtypes)
            for n, (a, b) in enumerate(zip(first, second)):
                if np.max(np.abs(a - b), initial=0.0) > nondet_tol:
                    raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and "
                                         "grad_output multiple times gives different values, although analytical "
                                         f"gradient matches numerical gradient.The tolerance for nondeterminism was "
                                         f"{nondet_tol}.")
                analytical[n, k] = a @ us[n]
    numerical = np.zeros_like(analytical)
    for n, i in enumerate(diff_idx):
        x = inputs[i]
        step = _from_real(x, eps * us[n])
        data = x._data
        orig = data.copy()
        try:
            data[...] = orig + (step if isinstance(data, np.ndarray) else _fn.array_module(x.device).asarray(step))
            plus = [_host(o).ravel() for o in _outputs(func, inputs)]
            data[...] = orig - (step if isinstance(data, np.ndarray) else _fn.array_module(x.device).asarray(step))
            minus = [_host(o).ravel() for o in _outputs(func, inputs)]
        finally:
            data[...] = orig
        for k, (p, m) in enumerate(zip(plus, minus)):
            numerical[n, k] = ((p - m) / (2 * eps)) @ vs[k]
    for n, i in enumerate(diff_idx):
        for k, out in enumerate(outs):
            a, num = analytical[n, k], numerical[n, k]
            if not out.requires_grad:
                if num != 0:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
                continue
            tol = atol * us[n].sum() * vs[k].sum() + rtol * abs(num)
            if not abs(a - num) <= tol:
                raise GradcheckError(
                    f"Jacobian mismatch for output {k} with respect to input {i},\nnumerical:{num}\nanalytical:{a}\n\n"
                    "The above quantities relating the numerical and analytical jacobians are computed \nin fast mode. "
                    "Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
                    + _slow_report(func, inputs, outs, diff_idx, eps, n, k))


def _slow_report(func, inputs, outs, diff_idx, eps, n, k):
    numerical = _numerical_jacobians(func, inputs, [diff_idx[n]], [_real_numel(o) for o in outs], eps)[0][k]
    analytical = _analytical_jacobians(outs, inputs, [diff_idx[n]], False, float("inf"))[0][k]
    return (f"Numerical:\n {_tensor(numerical)}\nAnalytical:\n{_tensor(analytical)}\n\nThe max per-element difference "
            f"(slow mode) is: {np.max(np.abs(numerical - analytical), initial=0.0)}.\n")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Checks the gradients autograd computes for ``func`` at ``inputs`` against central finite differences.

    Inputs that require grad should be float64. The slow mode compares whole Jacobians (one vector-Jacobian product
    per output element); ``fast_mode=True`` compares ``v^T J u`` for random unit vectors, which scales to larger
    inputs. Returns True, or raises ``GradcheckError`` (returns False with ``raise_exception=False``).

    Example::

        >>> x = ember.tensor([1., 2.], dtype=ember.float64, requires_grad=True)
        >>> ember.autograd.gradcheck(lambda x: (x * x).exp(), (x,))
        True
    """
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, _fn.Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    for i in diff_idx:
        if inputs[i].dtype not in (_fn._dtype.float64, _fn._dtype.complex128):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                          "This check will likely fail if all the inputs are not of double precision floating point "
                          "or complex. ", stacklevel=2)
    if not check_backward_ad:
        return True
    outs = _outputs(func, inputs)
    check = _fast_check if fast_mode else _slow_check
    try:
        check(func, inputs, outs, diff_idx, eps, atol, rtol, check_grad_dtypes, nondet_tol)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """Checks second derivatives: ``gradcheck`` of the map ``(inputs, grad_outputs) -> vector-Jacobian product``,
    with random float64 ``grad_outputs`` unless given."""
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_random_like(o, rng).requires_grad_() for o in _outputs(func, inputs) if o.requires_grad)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, _fn.Tensor) and x.requires_grad]

    def vjp(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = [o for o in _outputs(func, ins) if o.requires_grad]
        gs = _grad(outs, [ins[i] for i in diff_idx], gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)
