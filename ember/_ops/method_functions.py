"""Tensor methods torch also exposes as top-level functions: the in-place ops (``torch.exp_(x)`` is ``x.exp_()``)
and ``torch.detach``. Each one calls the method, so it stays in step with it."""
from .._tensor import Tensor

_NAMES = ("abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
          "as_strided_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
          "cos_", "cosh_", "deg2rad_", "detach", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_",
          "floor_", "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_",
          "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_",
          "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_")


def _function(name):
    def fn(input, *args, **kwargs):
        return getattr(Tensor, name)(input, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``input.{name}(...)``: see :meth:`Tensor.{name}`."
    return fn


globals().update({name: _function(name) for name in _NAMES})
__all__ = list(_NAMES)
