"""torch's rejection samplers: gamma, Dirichlet, Poisson and binomial draws, bit for bit.

``torch.distributions`` draws Gamma, Beta and Dirichlet samples through ``torch._standard_gamma``
and ``torch._sample_dirichlet``, Poisson ones through ``torch.poisson`` and binomial ones through
``torch.binomial``. On the CPU each is a scalar loop over the output in memory order, holding the
generator: every element runs an accept/reject loop that takes uniform doubles
(``random64()``'s low 53 bits) and standard normal doubles (Box-Muller with the generator's
cached second value) until it accepts. This module replays those loops with the same draws and
the same floating-point operations (``math`` calls the C library torch calls), so that the
samples, and the generator's state afterwards, equal torch's.

The algorithms, as torch's kernels run them:

* gamma(alpha): Marsaglia and Tsang (2000); alpha < 1 is boosted to alpha + 1 and the result
  scaled by ``(1 - u) ** (1 / alpha)``; the sample is clamped below at the dtype's smallest
  normal number. For float32 the first steps (``alpha < 1``, ``1 / alpha``, ``alpha + 1``,
  ``alpha - 1/3``) run in float32, the loop in double.
* Dirichlet(alpha): a double gamma draw per element, each row divided by its sum, the ratio
  clamped into [smallest normal, largest number below 1] of the dtype.
* Poisson(lambda): lambda >= 10 by Hoermann's transformed rejection (PTRS), otherwise by
  multiplying uniforms until the product falls below exp(-lambda).
* binomial(n, p): Hoermann's BTRS when n * min(p, 1 - p) >= 10, otherwise by summing geometric
  waiting times (inversion); p > 1/2 samples the failures.

The reparameterized gradients of gamma and Dirichlet samples (implicit differentiation of the
CDF, ``-(dF/dalpha) / f``) use torch's series, saddle-point and rational approximations.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._rng import Engine
from ._tensor import Tensor
from .autograd.grad_mode import _state
from .ops._registry import OpDef, OpNode, apply

_F32 = np.float32
_THIRD_F = float(np.float32(1.0) / np.float32(3.0))  # the float constant 1.0f / 3.0f
_C0331_F = float(np.float32(0.0331))  # 0.0331f, widened to double


def _uniform(eng: Engine) -> float:
    """``at::uniform_real_distribution<double>(0, 1)``: 53 bits of one ``random64()``."""
    return float(eng._u53(1)[0])


def _normal(eng: Engine) -> float:
    """``at::normal_distribution<double>(0, 1)``: uses and refills the generator's cache."""
    return float(eng._std_normals(1)[0])


def _gamma_one(eng: Engine, alpha: Any, single: bool) -> float:
    """One standard gamma draw; ``single``: alpha is a float32 value (float arithmetic first)."""
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        inv = float(_F32(1.0) / _F32(alpha)) if single else 1.0 / alpha
        scale *= math.pow(1.0 - _uniform(eng), inv)
        alpha = float(_F32(alpha) + _F32(1.0)) if single else alpha + 1.0
    d = float(_F32(alpha) - _F32(_THIRD_F)) if single else alpha - _THIRD_F
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            x = _normal(eng)
            y = 1.0 + c * x
            if y > 0:
                break
        v = y * y * y
        u = 1.0 - _uniform(eng)
        xx = x * x
        if u < 1.0 - _C0331_F * xx * xx:
            return scale * d * v
        if math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def standard_gamma(eng: Engine, alpha: np.ndarray) -> np.ndarray:
    """``torch._standard_gamma(alpha)``: one gamma(alpha_i, 1) draw per element."""
    dt = alpha.dtype
    single = dt == np.float32
    tiny = float(np.finfo(dt).tiny)
    flat = np.ascontiguousarray(alpha).reshape(-1)
    out = np.empty(flat.shape, dtype=dt)
    for i, a in enumerate(flat.tolist()):
        s = _gamma_one(eng, a, single)
        out[i] = s
        if out[i] < tiny:  # std::max(numeric_limits<scalar_t>::min(), sample), after the cast
            out[i] = tiny
    return out.reshape(alpha.shape)


def sample_dirichlet(eng: Engine, alpha: np.ndarray) -> np.ndarray:
    """``torch._sample_dirichlet(alpha)``: gamma draws in double, normalised over the last
    dimension, clamped into the dtype's (0, 1)."""
    dt = alpha.dtype
    flat = np.ascontiguousarray(alpha).reshape(-1)
    tiny64 = float(np.finfo(np.float64).tiny)
    gam = np.array([max(tiny64, _gamma_one(eng, a, False)) for a in flat.tolist()],
                   dtype=np.float64).reshape(alpha.shape)
    total = gam.sum(-1, keepdims=True)
    ratio = (gam / total).astype(dt)
    below_one = np.nextafter(np.array(1.0, dtype=dt), np.array(0.0, dtype=dt))
    return np.minimum(below_one, np.maximum(np.finfo(dt).tiny, ratio))


def _poisson_one(eng: Engine, lam: float) -> int:
    if lam >= 10:  # transformed rejection (Hoermann 1993)
        slam = math.sqrt(lam)
        loglam = math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha = 1.1239 + 1.1328 / (b - 3.4)
        vr = 0.9277 - 3.6224 / (b - 2)
        while True:
            u = _uniform(eng) - 0.5
            v = _uniform(eng)
            us = 0.5 - abs(u)
            k = math.floor((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                    <= -lam + k * loglam - math.lgamma(k + 1)):
                return k
    if lam == 0:
        return 0
    enlam = math.exp(-lam)
    x, prod = 0, 1.0
    while True:
        prod *= _uniform(eng)
        if prod > enlam:
            x += 1
        else:
            return x


def poisson(eng: Engine, rates: np.ndarray) -> np.ndarray:
    """``torch.poisson(rates)``: one Poisson(rate_i) count per element, in rates' dtype."""
    flat = np.ascontiguousarray(rates).reshape(-1)
    vals = []
    for lam in flat.astype(np.float64).tolist():
        if not lam >= 0:
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        vals.append(_poisson_one(eng, lam))
    return np.array(vals, dtype=rates.dtype).reshape(rates.shape)


_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_tail(k: float) -> float:
    """log(k!) minus its Stirling approximation: a table up to 9, then the series."""
    if k <= 9:
        return _STIRLING_TAIL[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


class _Scalar:
    """Arithmetic in the kernel's scalar type: float32 rounding where torch computes in float."""

    def __init__(self, single: bool) -> None:
        self.t = _F32 if single else float

    def __call__(self, x: Any) -> Any:
        return self.t(x)


def _inversion(eng: Engine, n: Any, p: Any, s: _Scalar) -> Any:
    logprob = float(np.log1p(s(-p))) if s.t is _F32 else math.log1p(-p)
    geom_sum = 0.0
    num = s(0)
    while True:
        geom = math.ceil(math.log(_uniform(eng)) / logprob)
        geom_sum += geom
        if geom_sum > n:
            return num
        num = s(num + s(1))


def _btrs(eng: Engine, n: Any, p: Any, s: _Scalar) -> Any:
    one = s(1)
    sd = s(n * p * (one - p))
    stddev = float(np.sqrt(sd)) if s.t is _F32 else math.sqrt(sd)
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * float(p)
    c = float(s(n * p)) + 0.5
    v_r = 0.92 - 4.2 / b
    r = float(s(p / s(one - p)))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(float(s(s(n + one) * p)))
    nf = float(n)
    while True:
        u = _uniform(eng) - 0.5
        v = _uniform(eng)
        us = 0.5 - abs(u)
        k = s(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = math.log(v * alpha / (a / (us * us) + b))
        kf = float(k)
        nk1 = float(s(s(n - k) + one))
        upper = ((m + 0.5) * math.log((m + 1) / (r * (nf - m + 1)))
                 + (nf + 1) * math.log((nf - m + 1) / nk1)
                 + (kf + 0.5) * math.log(r * nk1 / float(s(k + one)))
                 + _stirling_tail(m) + _stirling_tail(nf - m)
                 - _stirling_tail(kf) - _stirling_tail(float(s(n - k))))
        if v <= upper:
            return k


def _binomial_one(eng: Engine, n: Any, p: Any, s: _Scalar) -> Any:
    if n <= 0.0 or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return n
    if p <= 0.5:
        if float(s(n * p)) >= 10.0:
            return _btrs(eng, n, p, s)
        return _inversion(eng, n, p, s)
    if p > 0.5:
        q = s(1.0 - float(p)) if s.t is float else s(s(1) - p)
        if float(s(n * q)) >= 10.0:
            return s(n - _btrs(eng, n, q, s))
        return s(n - _inversion(eng, n, q, s))
    return math.nan


def binomial(eng: Engine, count: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``torch.binomial(count, prob)``: one binomial draw per element of the broadcast shape."""
    count, prob = np.broadcast_arrays(count, prob)
    dt = count.dtype
    s = _Scalar(dt == np.float32)
    vals = [_binomial_one(eng, s(n), s(p), s)
            for n, p in zip(count.reshape(-1).tolist(), prob.reshape(-1).tolist(), strict=True)]
    return np.array(vals, dtype=dt).reshape(count.shape)


# ---------------------------------------------------------------------------------------------
# Reparameterized gradients
# ---------------------------------------------------------------------------------------------

_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
              -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2)


def _digamma(x: float) -> float:
    """Cephes' digamma, as torch's gradient kernels evaluate it."""
    if x == 0:
        return math.inf
    extra = 0.0
    if x < 0:
        if x == math.floor(x):
            return math.inf
        extra = -math.pi / math.tan(math.pi * x)
        x = 1 - x
    result = 0.0
    while x < 10:
        result -= 1 / x
        x += 1
    if x == 10:
        return result + _PSI_10 + extra
    y = 0.0
    if x < 1.0e17:
        z = 1.0 / (x * x)
        poly = 0.0
        for coef in _DIGAMMA_A:
            poly = poly * z + coef
        y = z * poly
    return result + math.log(x) - (0.5 / x) - y + extra


_GAMMA_UV = ((0.16009398, -0.094634809, 0.025146376, -0.0030648343,
              1, 0.32668115, 0.10406089, 0.0014179084),
             (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
              0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
             (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
              0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07))


def _gamma_grad_one(alpha: float, x: float) -> float:
    """d x / d alpha for x ~ Gamma(alpha, 1), holding the CDF fixed."""
    if x < 0.8:  # Taylor series of the CDF for small x
        numer, denom = 1.0, alpha
        s1, s2 = numer / denom, numer / (denom * denom)
        for i in range(1, 6):
            numer *= -x / i
            denom += 1
            s1 += numer / denom
            s2 += numer / (denom * denom)
        pow_xa = math.pow(x, alpha)
        pdf = math.pow(x, alpha - 1) * math.exp(-x)
        cdf = pow_xa * s1
        cdf_alpha = (math.log(x) - _digamma(alpha)) * cdf - pow_xa * s2
        res = -cdf_alpha / pdf
        return 0.0 if math.isnan(res) else res
    if alpha > 8.0:  # Rice saddle-point expansion for large alpha
        if 0.9 * alpha <= x <= 1.1 * alpha:
            n1 = 1 + 24 * alpha * (1 + 12 * alpha)
            n2 = (1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha
                  + alpha * (107 + 3600 * x))
            return n1 * n2 / (1244160 * (alpha * alpha) * (alpha * alpha))
        denom = math.sqrt(8 * alpha)
        term2 = denom / (alpha - x)
        term3 = math.pow(x - alpha - alpha * math.log(x / alpha), -1.5)
        term23 = term2 - term3 if x < alpha else term2 + term3
        term1 = (math.log(x / alpha) * term23
                 - math.sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x)))
        stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
        return -stirling * (x * term1) / denom
    u, v = math.log(x / alpha), math.log(alpha)  # bivariate rational approximation
    cv = [_GAMMA_UV[0][i] + u * (_GAMMA_UV[1][i] + u * _GAMMA_UV[2][i]) for i in range(8)]
    p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]))
    q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]))
    return math.exp(p / q)


def standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``torch._standard_gamma_grad(alpha, x)``, elementwise."""
    alpha, x = np.broadcast_arrays(alpha, x)
    vals = [_gamma_grad_one(a, s) for a, s in zip(alpha.reshape(-1).tolist(),
                                                  x.reshape(-1).tolist(), strict=True)]
    return np.array(vals, dtype=x.dtype).reshape(x.shape)


def _beta_grad_alpha_small(x: float, alpha: float, beta: float) -> float:
    factor = _digamma(alpha) - _digamma(alpha + beta) - math.log(x)
    numer = 1.0
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer *= (i - beta) * x / i
        denom = alpha + i
        series += numer / denom * (factor + 1 / denom)
    res = x * math.pow(1 - x, -beta) * series
    return 0.0 if math.isnan(res) else res


def _beta_grad_beta_small(x: float, alpha: float, beta: float) -> float:
    factor = _digamma(alpha + beta) - _digamma(beta)
    numer, betas, dbetas, series = 1.0, 1.0, 0.0, factor / alpha
    for i in range(1, 9):
        numer *= -x / i
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series += numer / (alpha + i) * (dbetas + factor * betas)
    res = -math.pow(1 - x, 1 - beta) * series
    return 0.0 if math.isnan(res) else res


def _beta_grad_alpha_mid(x: float, alpha: float, beta: float) -> float:
    total = alpha + beta
    mean = alpha / total
    std = math.sqrt(alpha * beta / (total + 1)) / total
    if mean - 0.1 * std <= x <= mean + 0.1 * std:  # avoid the singularity at the mean
        bb = beta * beta
        poly = 47 * x * bb * bb + alpha * (
            (43 + 20 * (16 + 27 * beta) * x) * bb * beta + alpha * (
                3 * (59 + 180 * beta - 90 * x) * bb + alpha * (
                    (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                        8 * (1 - x) * (135 * beta - 11)))))
        pre_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
        pre_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total)
        return pre_num / (1 - x) * poly / pre_den
    prefactor = -x / math.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha))
                * (1 + 1 / (12 * beta) + 1 / (288 * beta * beta))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    t1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta)
    axbx = alpha * (x - 1) + beta * x
    t1_den = math.sqrt(2 * alpha / beta) * math.pow(total, 1.5) * axbx * axbx
    term1 = t1_num / t1_den
    term2 = 0.5 * math.log(alpha / (total * x))
    term3 = math.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    t4_base = beta * math.log(beta / (total * (1 - x))) + alpha * math.log(alpha / (total * x))
    term4 = math.pow(t4_base, -1.5)
    return stirling * prefactor * (term1 + term2 * (term3 + (term4 if x < mean else -term4)))


_DIRICHLET_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


def _dirichlet_grad_one(x: float, alpha: float, total: float) -> float:
    """d x / d alpha for x ~ Beta(alpha, total - alpha), divided by (1 - x)."""
    beta = total - alpha
    boundary = total * x * (1 - x)
    if x <= 0.5 and boundary < 2.5:
        return _beta_grad_alpha_small(x, alpha, beta)
    if x >= 0.5 and boundary < 0.75:
        return -_beta_grad_beta_small(1 - x, beta, alpha)
    if alpha > 6 and beta > 6:
        return _beta_grad_alpha_mid(x, alpha, beta)
    u = math.log(x)
    a = math.log(alpha) - u
    b = math.log(total) - a
    pow_u, pow_a = (1.0, u, u * u), (1.0, a, a * a)
    p = q = 0.0
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _DIRICHLET_C[0][i][j], _DIRICHLET_C[1][i][j]
            p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
            q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
    approx = x * (_digamma(total) - _digamma(alpha)) / beta
    return p / q * approx


def dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``torch._dirichlet_grad(x, alpha, total)``, elementwise."""
    x, alpha, total = np.broadcast_arrays(x, alpha, total)
    vals = [_dirichlet_grad_one(*t) for t in zip(x.reshape(-1).tolist(),
                                                alpha.reshape(-1).tolist(),
                                                total.reshape(-1).tolist(), strict=True)]
    return np.array(vals, dtype=x.dtype).reshape(x.shape)


# ---------------------------------------------------------------------------------------------
# The autograd side: torch's nodes for the two reparameterized draws
# ---------------------------------------------------------------------------------------------


def _take(*inputs: Any, values: list) -> np.ndarray:
    return values.pop()  # drawn before the node exists; handed over in a list


_STANDARD_GAMMA = OpDef("_standard_gamma", "StandardGammaBackward0", _take, (0,), True, False, 1)
_DIRICHLET = OpDef("_sample_dirichlet", "_DirichletBackward", _take, (0,), True, False, 1)


@_STANDARD_GAMMA.backward
def STANDARD_GAMMA_backward(ctx: OpNode, grad: Any) -> tuple:
    # dx/dalpha = -(dF/dalpha) / f at the drawn x
    alpha, x = ctx.saved
    return (grad * Tensor._make(standard_gamma_grad(alpha._data, x._data)),)


@_DIRICHLET.backward
def DIRICHLET_backward(ctx: OpNode, grad: Any) -> tuple:
    # dx/dalpha through the Beta marginals: g_i * (grad_i - sum_j x_j grad_j)
    alpha, x = ctx.saved
    aa = alpha._data
    total = np.broadcast_to(aa.sum(-1, keepdims=True), aa.shape)
    g = Tensor._make(dirichlet_grad(x._data, aa, total))
    return (g * (grad - (x * grad).sum(-1, keepdim=True)),)


def draw_result(values: np.ndarray, op: OpDef, inp: Tensor) -> Tensor:
    """The drawn values as a Tensor; ``op``'s node when grad mode is on and inp requires grad."""
    if _state.enabled and inp._requires_grad:
        return apply(op, inp, values=[values])
    return Tensor._make(values)
