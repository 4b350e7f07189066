"""tapegrad.special: the names of ``torch.special``.

The functions live in ``ops/special.py`` (values from SciPy's ``scipy.special``, derivatives
beside them); this module only gathers them under torch's names, with the aliases torch.special
gives the elementwise ops tapegrad already has.
"""

from __future__ import annotations

from typing import Any

from .ops.elementwise import expm1, log1p, sigmoid
from .ops.elementwise import round as _round
from .ops.reduction import log_softmax as _log_softmax
from .ops.reduction import logsumexp
from .ops.reduction import softmax as _softmax
from .ops.special import (
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    digamma,
    entr,
    erf,
    erfc,
    erfcx,
    erfinv,
    expit,
    gammainc,
    gammaln,
    i0,
    i0e,
    i1,
    i1e,
    log_ndtr,
    logit,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    multigammaln,
    ndtr,
    ndtri,
    polygamma,
    psi,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    sinc,
    spherical_bessel_j0,
    xlog1py,
    xlogy,
    zeta,
)


def softmax(input: Any, dim: int, dtype: Any = None) -> Any:
    """``torch.special.softmax``: softmax over ``dim`` (cast to ``dtype`` first)."""
    return _softmax(input, dim, dtype=dtype)


def round(input: Any, *, decimals: int = 0) -> Any:  # noqa: A001 - torch.special.round
    """``torch.special.round``: ``torch.round`` with ``decimals`` (0 by default)."""
    return _round(input, decimals=decimals)


def log_softmax(input: Any, dim: int, *, dtype: Any = None) -> Any:
    """``torch.special.log_softmax``: log of the softmax over ``dim``."""
    return _log_softmax(input, dim, dtype=dtype)


__all__ = [
    "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf", "erfc",
    "erfcx", "erfinv", "expit", "expm1", "gammainc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p",
    "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
    "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sigmoid", "sinc",
    "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]

# -- the orthogonal polynomials (ops/polynomials.py) --------------------------------------------

from .ops.polynomials import (  # noqa: E402
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    hermite_polynomial_h,
    hermite_polynomial_he,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
)

__all__ += [
    "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
    "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
    "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w",
]

from .ops.special import gammaincc  # noqa: E402

__all__ += ["gammaincc"]

from .ops.elementwise_math import exp2  # noqa: E402
from .ops.special import airy_ai  # noqa: E402

__all__ += ["airy_ai", "exp2"]

# -- out=: torch.special.erf(x, out=t) & co. (one seam for every function: _out.py) -----------

from . import _out  # noqa: E402

_out.install(globals(), """
    airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t chebyshev_polynomial_u
    chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc erfcx erfinv exp2 expit
    expm1 gammainc gammaincc gammaln hermite_polynomial_h hermite_polynomial_he i0 i0e i1 i1e
    laguerre_polynomial_l legendre_polynomial_p log1p log_ndtr logit logsumexp
    modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 multigammaln
    ndtr ndtri polygamma psi round scaled_modified_bessel_k0 scaled_modified_bessel_k1
    shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v
    shifted_chebyshev_polynomial_w sinc spherical_bessel_j0 xlog1py xlogy zeta""",
              prefix="special_")
