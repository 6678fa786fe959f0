"""``ember.special``: special functions under torch.special's (and scipy.special's) names."""
from ._ops.binary import xlogy
from ._ops.reduce import logsumexp
from ._ops.softmax import log_softmax, softmax
from ._ops.special import (airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, chebyshev_polynomial_t,
                           chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w, digamma, entr, erf,
                           erfc, erfcx, erfinv, hermite_polynomial_h, hermite_polynomial_he, i0, i0e, i1, i1e,
                           laguerre_polynomial_l, legendre_polynomial_p, log_ndtr, logit, modified_bessel_i0,
                           modified_bessel_i1, modified_bessel_k0, modified_bessel_k1, ndtr, ndtri, polygamma,
                           scaled_modified_bessel_k0, scaled_modified_bessel_k1, shifted_chebyshev_polynomial_t,
                           shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
                           shifted_chebyshev_polynomial_w, spherical_bessel_j0, xlog1py, zeta)
from ._ops.special import digamma as psi, igamma as gammainc, igammac as gammaincc, lgamma as gammaln
from ._ops.special import mvlgamma as multigammaln, sigmoid as expit
from ._ops.unary import exp2, expm1, log1p, round, sinc

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
