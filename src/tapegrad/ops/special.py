"""Special functions: the log-gamma family and the error function family.

Their values come from SciPy's ``scipy.special`` (Cephes), imported on first use so that
``import tapegrad`` does not pay for it. Each is one registry entry with its derivative:
lgamma' = digamma, digamma' = polygamma(1, .), erf' = 2/sqrt(pi) e^{-x^2}, erfinv' =
sqrt(pi)/2 e^{erfinv(x)^2}. ``torch.distributions`` uses them for log-densities, entropies and
KL divergences.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from ._registry import defop
from .elementwise import _float_result, _promote
from .nn_ops import _erf_op


def _sc() -> Any:
    import scipy.special as sc  # lazily: SciPy takes a while to import

    return sc


def _unary(fn: Any, x: np.ndarray) -> np.ndarray:
    x = _float_result(x)
    with np.errstate(all="ignore"):
        return np.asarray(fn(x), dtype=x.dtype)


@defop("lgamma", node="LgammaBackward0", save=(0,))
def _lgamma(x: np.ndarray) -> np.ndarray:
    return _unary(_sc().gammaln, x)


@_lgamma.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx log|Gamma(x)| = digamma(x)
    (x,) = ctx.saved
    return (grad * _digamma(x),)


_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
              -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2)


def _digamma_np(x: np.ndarray) -> np.ndarray:
    """torch's digamma (Cephes' psi) in x's dtype: reflection for x < 0, the recurrence
    psi(x) = psi(x + 1) - 1/x up to 10, then the asymptotic series."""
    dt = x.dtype.type
    x = x.copy()
    with np.errstate(all="ignore"):
        neg = x < 0
        reflect = np.zeros_like(x)
        if neg.any():
            frac = np.modf(x[neg].astype(np.float64))[0]
            reflect[neg] = (math.pi / np.tan(math.pi * frac)).astype(x.dtype)
            x[neg] = dt(1) - x[neg]
        result = np.zeros_like(x)
        small = x < 10
        while small.any():
            result[small] -= dt(1) / x[small]
            x[small] += dt(1)
            small = x < 10
        z = dt(1) / (x * x)
        poly = np.zeros_like(x)
        for coef in _DIGAMMA_A:
            poly = poly * z + dt(coef)
        y = np.where(x < dt(1.0e17), z * poly, dt(0))
        out = result + np.log(x) - (dt(0.5) / x) - y
        out = np.where(x == 10, result + dt(_PSI_10), out)
        return out - reflect


@defop("digamma", node="DigammaBackward0", save=(0,))
def _digamma(x: np.ndarray) -> np.ndarray:
    x = _float_result(x)
    out = _digamma_np(x)
    out[x == 0] = -np.copysign(np.inf, x[x == 0])  # digamma(+-0) = -+inf
    out[(x < 0) & (x == np.floor(x))] = np.nan  # the poles
    return out


@_digamma.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx digamma(x) = polygamma(1, x)
    (x,) = ctx.saved
    return (grad * _polygamma(x, n=1),)


def _trigamma(x: np.ndarray) -> np.ndarray:
    """torch's trigamma: reflection below 1/2, six recurrence steps, then the asymptotic
    series 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7), in x's dtype."""
    dt = x.dtype.type
    with np.errstate(all="ignore"):
        sign = np.where(x < 0.5, dt(-1), dt(1))
        s = np.sin(dt(math.pi) * x)
        result = np.where(x < 0.5, -(dt(math.pi * math.pi)) / (s * s), dt(0))
        x = np.where(x < 0.5, dt(1) - x, x)
        for _ in range(6):
            result = result + dt(1) / (x * x)
            x = x + dt(1)
        ixx = dt(1) / (x * x)
        tail = dt(1) + dt(1) / (dt(2) * x) + ixx * (
            dt(1.0 / 6) - ixx * (dt(1.0 / 30) - ixx * dt(1.0 / 42)))
        result = result + tail / x
        return np.asarray(sign * result, dtype=x.dtype)


@defop("polygamma", node="PolygammaBackward0", save=(0,))
def _polygamma(x: np.ndarray, *, n: int) -> np.ndarray:
    if n == 0:
        return _digamma.forward(x)
    if n == 1:
        return _trigamma(_float_result(x))
    return _unary(lambda v: _sc().polygamma(n, v), x)


@_polygamma.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx polygamma(n, x) = polygamma(n + 1, x)
    (x,) = ctx.saved
    return (grad * _polygamma(x, n=ctx.params["n"] + 1),)


@defop("erfc", node="ErfcBackward0", save=(0,))
def _erfc(x: np.ndarray) -> np.ndarray:
    return _unary(_sc().erfc, x)


@_erfc.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx erfc(x) = -2/sqrt(pi) e^{-x^2}
    (x,) = ctx.saved
    return (grad * (-2.0 / math.sqrt(math.pi)) * (-(x * x)).exp(),)


@defop("erfinv", node="ErfinvBackward0", save_output=True)
def _erfinv(x: np.ndarray) -> np.ndarray:
    return _unary(_sc().erfinv, x)


@_erfinv.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx erfinv(x) = sqrt(pi)/2 e^{erfinv(x)^2}
    (y,) = ctx.saved
    return (grad * (math.sqrt(math.pi) / 2.0) * (y * y).exp(),)


@defop("xlogy", node="XlogyBackward0", save=(0, 1))
def _xlogy(x: Any, y: Any) -> np.ndarray:
    x, y = _promote(x, y)
    x, y = _float_result(np.asarray(x)), _float_result(np.asarray(y))
    with np.errstate(all="ignore"):
        out = np.asarray(x * np.log(y))
    return np.where((x == 0) & ~np.isnan(y), np.zeros_like(out), out)


@_xlogy.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx = log y (0 where y == 0), d/dy = x / y
    x, y = ctx.saved
    gx = gy = None
    if ctx.needs_input_grad[0]:
        gx = grad * _xlogy((y != 0).to(grad.dtype), y)
    if ctx.needs_input_grad[1]:
        gy = grad * x / y
    return (gx, gy)


@defop("gammainc", node="SpecialGammaincBackward0", save=(0, 1))
def _gammainc(a: Any, x: Any) -> np.ndarray:
    a, x = _promote(a, x)
    return _unary(lambda v: _sc().gammainc(a, v), np.asarray(x))


@_gammainc.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx P(a, x) = x^(a-1) e^(-x) / Gamma(a)
    a, x = ctx.saved
    if ctx.needs_input_grad[0]:
        raise RuntimeError("derivative for aten::special_gammainc is not implemented")
    return (None, grad * ((a - 1) * x.log() - x - _lgamma(a)).exp())


def gammainc(input: Any, other: Any) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x)."""
    return _gammainc(input, other)


def xlogy(input: Any, other: Any) -> Tensor:
    """x * log(y), and 0 where x == 0 (unless y is NaN)."""
    return _xlogy(input, other)


def lgamma(input: Tensor) -> Tensor:
    """log|Gamma(x)|, elementwise."""
    return _lgamma(input)


def digamma(input: Tensor) -> Tensor:
    """The logarithmic derivative of Gamma, elementwise."""
    return _digamma(input)


def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of digamma, elementwise."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if n == 0:
        return _digamma(input)
    return _polygamma(input, n=n)


def erf(input: Tensor) -> Tensor:
    """The error function, elementwise (the entry GELU uses, in ``nn_ops``)."""
    return _erf_op(input)


def erfc(input: Tensor) -> Tensor:
    """1 - erf(x), elementwise."""
    return _erfc(input)


def erfinv(input: Tensor) -> Tensor:
    """The inverse error function, elementwise."""
    return _erfinv(input)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


METHODS = {"lgamma": lgamma, "digamma": digamma, "polygamma": _polygamma_method, "erf": erf,
           "erfc": erfc, "erfinv": erfinv, "xlogy": xlogy}
