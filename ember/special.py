"""``ember.special``: special functions under torch.special's (and scipy.special's) names."""
from ._ops.binary import xlogy
from ._ops.reduce import logsumexp
from ._ops.softmax import log_softmax, softmax
from ._ops.special import (bessel_j0, bessel_j1, digamma, entr, erf, erfc, erfcx, erfinv, i0, i0e, i1, i1e, log_ndtr,
                           logit, ndtr, ndtri, polygamma, xlog1py, zeta)
from ._ops.special import digamma as psi, lgamma as gammaln, mvlgamma as multigammaln, sigmoid as expit
from ._ops.unary import exp2, expm1, log1p, round, sinc

__all__ = ["bessel_j0", "bessel_j1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1",
           "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy", "zeta"]
