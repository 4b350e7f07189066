"""erf on arrays (float64 to 2 ulp), the standard normal CDF that GELU needs (float32: a
branch-free polynomial with the Gaussian kept for the backward), and the ``erf`` entry
(``ErfBackward0``) that ``torch.erf`` and GELU's second derivative use.
"""


from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import elementwise as ew
from ._registry import defop

# ---------------------------------------------------------------------------------------------
# erf, and the normal CDF that GELU needs
#
# erf on float64: |x| < 1: x * P(x^2); 1 <= |x| < 6: 1 - e^(-x^2) Q(1/|x|); beyond: +-1.
# P and Q are Chebyshev interpolants (degrees 11 and 24) of erf(sqrt t)/sqrt t on t in [0, 1]
# and of e^(x^2) erfc(x) on 1/x in [1/6, 1], computed with mpmath at 40 digits and written as
# polynomials in the mapped variable u in [-1, 1]; max error 2 ulp.
# ---------------------------------------------------------------------------------------------

_ERF_P = (
    0.9654687386698673, -0.1405360890227171, 0.019852496688984218, -0.0022854855611440855,
    0.00021751715603563488, -1.75371694412802e-05, 1.2233827638093572e-06,
    -7.51156925108609e-08, 4.115751500265885e-09, -2.035231956483527e-10,
    9.21125018742823e-12, -3.80659122412214e-13,
)
_ERFC_Q = (
    0.28972211632346423, 0.16536269001261483, -0.03083105050843015, 0.002821131897847166,
    0.0010344322263503756, -0.0007383867417931075, 0.0002656054665609539,
    -5.5286513919186685e-05, -4.046598181654778e-06, 1.0882793978525848e-05,
    -6.498242897250975e-06, 2.5824290421218492e-06, -6.627874174222961e-07,
    3.300377934277534e-09, 1.2488260283637233e-07, -9.8213204952492e-08,
    4.9809459874663576e-08, -1.4585572765297825e-08, 2.3173165145718272e-09,
    -2.7983497703309653e-09, 4.507664335137245e-10, 2.8280247900482254e-09,
    -1.5967918453108473e-09, -2.314112561278596e-10, 2.3536979572445135e-10,
)
# erfc(z) ~= t exp(-z^2 + R(t)), t = 1/(1 + z/2), for all z >= 0 (relative error < 1e-7):
# R is our own degree-10 Chebyshev fit of log(erfc(z)/t) + z^2 on t in [0, 1]. Branch free,
# for the float32 normal CDF.
SQRT1_2 = math.sqrt(0.5)
TWO_OVER_SQRTPI = 2.0 / math.sqrt(math.pi)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _horner(coefs: tuple, u: np.ndarray) -> np.ndarray:
    r = u * coefs[-1]
    r += coefs[-2]  # (in place: one new array per polynomial)
    for c in coefs[-3::-1]:
        r *= u
        r += c
    return r


def erf_array(x: np.ndarray) -> np.ndarray:
    """erf of a float array, accurate to 2 ulp in float64 (float32 goes through float64)."""
    dt = x.dtype
    xd = x.astype(np.float64) if dt != np.float64 else x
    a = np.abs(xd)
    out = np.asarray(np.sign(xd))  # (an array also for a 0-d x: NumPy gives a scalar)
    small = a < 1.0
    if small.any():
        xs = xd[small]
        out[small] = xs * _horner(_ERF_P, xs * xs * 2.0 - 1.0)
    mid = ~small & (a < 6.0)
    if mid.any():
        am = a[mid]
        q = _horner(_ERFC_Q, (1.0 / am - 0.5833333333333334) / 0.4166666666666667)
        out[mid] = np.copysign(1.0 - np.exp(-am * am) * q, xd[mid])
    return out if dt == np.float64 else out.astype(dt)


def _phi(x: np.ndarray) -> np.ndarray:
    """The standard normal CDF, 0.5 (1 + erf(x / sqrt 2)), as torch's GELU computes it."""
    if x.dtype == np.float64:
        return (1.0 + erf_array(x * SQRT1_2)) * 0.5
    return _phi_gauss(x)[0]


# float32: erf(z) = 1 - t e^(-z^2) (a1 + a2 t + ... + a5 t^4), t = 1/(1 + p z) (Abramowitz and
# Stegun 7.1.26, absolute error < 1.5e-7, the accuracy of float32 GELU's own erf), with the
# halving and the 1/sqrt 2 of Phi folded into the constants
_AS_P = 0.3275911 * SQRT1_2
_AS_A = tuple(0.5 * a for a in (0.254829592, -0.284496736, 1.421413741, -1.453152027,
                                1.061405429))


def _phi_gauss(x: np.ndarray) -> tuple:
    """(Phi(x), e^(-x^2/2)) for a float32 array: branch-free, five buffers' worth of passes,
    the Gaussian kept for GELU's backward."""
    if x.ndim == 0:  # (the passes below write into their buffers: NumPy has none for 0-d)
        r0, e0 = _phi_gauss(x.reshape(1))
        return r0.reshape(()), e0.reshape(())
    t = np.abs(x)
    t += 1.0 / _AS_P
    np.divide(1.0 / _AS_P, t, out=t)  # 1/(1 + p|x|), one pass fewer; (NumPy's float32
    # reciprocal is half as fast as a division)
    r = _horner(_AS_A, t)
    r *= t
    e = x * x
    e *= -0.5
    with np.errstate(under="ignore", over="ignore"):
        np.exp(e, out=e)
    r *= e  # Phi(-|x|)
    np.subtract(0.5, r, out=r)  # >= 0, then given x's sign
    if r.dtype == np.float32 and r.ndim:
        # copysign on the bits: NumPy's float32 copysign is some 7x slower than two int passes
        # (x's sign bits into t's buffer, free by now)
        sign = np.bitwise_and(x.view(np.int32), np.int32(-(1 << 31)), out=t.view(np.int32))
        np.bitwise_or(r.view(np.int32), sign, out=r.view(np.int32))
    else:
        np.copysign(r, x, out=r)
    r += 0.5
    return r, e


@defop("erf", node="ErfBackward0", save=(0,))
def _erf_op(x: np.ndarray) -> np.ndarray:
    return erf_array(ew._float_result(x))


@_erf_op.backward
def erf_op_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx erf x = 2/sqrt(pi) e^(-x^2)
    (x,) = ctx.saved
    return (grad * ew.exp(-(x * x)) * TWO_OVER_SQRTPI,)


def _erf(x: Tensor) -> Tensor:
    return _erf_op(x)
