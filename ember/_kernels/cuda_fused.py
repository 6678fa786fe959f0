"""Fused CUDA loops (CuPy ``ElementwiseKernel``) for updates CuPy would run as a dozen kernels, each launched from
Python: one launch per parameter instead.

``kernel(name, xp)`` is the loop, or None where ``xp`` is not CuPy with a device (the caller then runs its array
reference, which the GPU tests compare each loop against, bit for bit). Each loop rounds every operation as the
reference's separate kernels do: no fused multiply-adds.
"""
_ADAM = (
    "T g, T wd, T decay, T w, T w1, int32 small, T beta2, T beta2c, T bc2, T eps, T neg_step",
    "T param, T exp_avg, T exp_avg_sq",
    """
    T grad = g;
    if (wd != 0) grad = param * wd + grad;
    param = param * decay;
    T d = grad - exp_avg;
    if (small) { d = d * w; exp_avg = exp_avg + d; } else { d = d * w1; exp_avg = grad - d; }
    exp_avg_sq = exp_avg_sq * beta2;
    T t = grad * beta2c;
    t = t * grad;
    exp_avg_sq = exp_avg_sq + t;
    T den = sqrt(exp_avg_sq);
    den = den / bc2;
    den = den + eps;
    T u = exp_avg / den;
    u = u * neg_step;
    param = param + u;
    """,
)
_SOURCES = {"adam": _ADAM}
_compiled = {}


def kernel(name, xp):
    """The CuPy loop ``name``, or None."""
    if getattr(xp, "ElementwiseKernel", None) is None:
        return None
    fn = _compiled.get(name)
    if fn is None:
        params, outs, body = _SOURCES[name]
        fn = _compiled[name] = xp.ElementwiseKernel(params, outs, body, f"ember_{name}", options=("--fmad=false",))
    return fn


def adam(fn, param, g, exp_avg, exp_avg_sq, lr, beta1, beta2, eps, wd, decoupled, step):
    """One Adam step of float32/float64 ``param`` in place, as ``Adam._update``'s array reference computes it."""
    t = param.dtype.type
    weight = 1 - beta1
    fn(g, t(0 if decoupled else wd), t(1 - lr * wd if decoupled else 1), t(weight), t(1 - weight),
       int(abs(weight) < 0.5), t(beta2), t(1 - beta2), t((1 - beta2 ** step) ** 0.5), t(eps),
       t(-(lr / (1 - beta1 ** step))), param, exp_avg, exp_avg_sq)
