"""L-BFGS, with an optional strong-Wolfe line search."""
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from .optimizer import Optimizer, _real, _to_scalar, _xp

__all__ = ["LBFGS"]

# Scalars (dot products, step lengths) are NumPy scalars of the parameters' dtype: host values, as torch's 0-d
# tensors become wherever they decide control flow, computed in the same precision.


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    # the minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the bounds
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, dot, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    d_norm = float(abs(d).max())
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom into the bracket until a point satisfies the strong Wolfe conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # too close to a bracket end without progress: move away from it
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """L-BFGS, as ``torch.optim.LBFGS``. ``step`` needs a closure that re-evaluates the model and returns the loss.

    Args:
        params (iterable): parameters to optimize (a single group).
        lr (float): learning rate. Default: 1
        max_iter (int): maximal number of iterations per step. Default: 20
        max_eval (int): maximal number of function evaluations per step. Default: max_iter * 1.25
        tolerance_grad (float): termination tolerance on first order optimality. Default: 1e-7
        tolerance_change (float): termination tolerance on function value/parameter changes. Default: 1e-9
        history_size (int): update history size. Default: 100
        line_search_fn (str): None or 'strong_wolfe'. Default: None

    Example::

        >>> w = ember.nn.Parameter(ember.tensor([3.0]))
        >>> opt = ember.optim.LBFGS([w], line_search_fn='strong_wolfe')
        >>> def closure():
        ...     opt.zero_grad()
        ...     loss = (w * w).sum()
        ...     loss.backward()
        ...     return loss
        >>> _ = opt.step(closure)
        >>> abs(w.item()) < 1e-4
        True
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _to_scalar(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _gather_flat_grad(self):
        xp = _xp(self._params[0])
        views = [xp.zeros(_real(p._data).size, _real(p._data).dtype) if p.grad is None
                 else _real(p.grad.to_dense()._data).reshape(-1) for p in self._params]
        return xp.concatenate(views, 0)

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            arr = _real(p._data)
            n = arr.size
            arr += (update[offset:offset + n] * step_size).reshape(arr.shape)
            p._vc[0] += 1
            offset += n

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            p._vc[0] += 1

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure):
        """Performs one optimization step (up to ``max_iter`` L-BFGS iterations)."""
        group = self.param_groups[0]
        lr = _to_scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        p0 = self._params[0]
        xp = _xp(p0)
        scalar = _real(p0._data).dtype.type

        def dot(a, b):
            return scalar(float(xp.dot(a, b)))

        def evaluate():
            with enable_grad():
                return closure()

        state = self.state[p0]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if float(abs(flat_grad).max()) <= tolerance_grad:
            return orig_loss

        # the history of the previous steps
        d, t = _unpack(state.get("d")), _unpack(state.get("t"))
        old_dirs, old_stps = _unpack(state.get("old_dirs")), _unpack(state.get("old_stps"))
        ro, H_diag = _unpack(state.get("ro")), _unpack(state.get("H_diag"))
        prev_flat_grad, prev_loss = _unpack(state.get("prev_flat_grad")), state.get("prev_loss")
        al = _unpack(state.get("al"))

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # the descent direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = dot(y, s)
                if ys > 1e-10:  # update the memory
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / dot(y, y)
                # the two-loop recursion for the approximate inverse Hessian times the gradient
                num_old = len(old_dirs)
                if al is None:
                    al = state["al"] = [None] * history_size
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = dot(old_stps[i], q) * ro[i]
                    q += old_dirs[i] * -al[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = dot(old_dirs[i], r) * ro[i]
                    r += old_stps[i] * (al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / scalar(float(abs(flat_grad).sum()))) * lr
            else:
                t = lr
            gtd = dot(flat_grad, d)
            if gtd > -tolerance_change:  # no descent direction
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p._data.copy() for p in self._params]

                def obj_func(x, t, d):
                    return self._directional_evaluate(evaluate, x, t, d)
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, dot, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = float(abs(flat_grad).max()) <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(evaluate())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = float(abs(flat_grad).max()) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if float(abs(d * t).max()) <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        dev, dt = p0.device, p0.dtype
        state["d"] = _pack(d, dev, dt)
        state["t"] = _pack(t, dev, dt)
        state["old_dirs"] = _pack(old_dirs, dev, dt)
        state["old_stps"] = _pack(old_stps, dev, dt)
        state["ro"] = _pack(ro, dev, dt)
        state["H_diag"] = _pack(H_diag, dev, dt)
        state["prev_flat_grad"] = _pack(prev_flat_grad, dev, dt)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = _pack(al, dev, dt)
        return orig_loss


def _pack(v, device, dtype):
    """Arrays and NumPy scalars as ember Tensors (torch keeps tensors in this state), lists element-wise."""
    if isinstance(v, list):
        return [_pack(x, device, dtype) for x in v]
    if isinstance(v, np.generic):
        v = _xp_of(device).asarray(v)
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return Tensor._make(v, _dtype.from_numpy_dtype(v.dtype), device)
    return v


def _unpack(v):
    if isinstance(v, list):
        return [_unpack(x) for x in v]
    if isinstance(v, Tensor):
        a = v._data
        return np.asarray(a.get() if hasattr(a, "get") else a)[()] if a.ndim == 0 else a
    return v


def _xp_of(device):
    from .._device import array_module
    return array_module(device)
