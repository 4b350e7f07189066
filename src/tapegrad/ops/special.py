"""Special functions: the erf family, gamma functions, Bessel functions, xlogy, logit...

The values come from SciPy's ``scipy.special`` (imported on first use, so ``import tapegrad``
does not pay for it), computed in float64 and rounded to the input's dtype; integer and bool
inputs give the default float dtype, as in torch. Each differentiable function is a registry
entry with its derivative beside it, written with tapegrad ops (erf's uses exp, lgamma's is
digamma, digamma's is polygamma(1, x)...), so higher derivatives follow. ``tapegrad.special``
gathers the ``torch.special`` names; ``torch.erf``, ``torch.lgamma``... are the same ops.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype
from .._tensor import Tensor
from ._registry import apply_, defop
from .elementwise import _SCALARS, _float_result, _promote, exp, log, sigmoid, where

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _sp() -> Any:
    """scipy.special, imported on first use."""
    import scipy.special  # scipy: optional, loaded on first use (it takes a while to import)

    return scipy.special


def _eval(fn_name: str, *xs: Any, dtype: Any = None) -> np.ndarray:
    """``scipy.special.<fn_name>`` in float64, rounded to ``dtype`` (the first array's)."""
    fn = getattr(_sp(), fn_name)
    wide = [x.astype(np.float64) if isinstance(x, np.ndarray) else x for x in xs]
    with np.errstate(all="ignore"):
        out = np.asarray(fn(*wide))
    return out.astype(dtype if dtype is not None else _out_dtype(xs), copy=False)


def _out_dtype(xs: tuple) -> Any:
    """The first array's dtype; integers and bools give the default float dtype."""
    for x in xs:
        if isinstance(x, np.ndarray):
            return x.dtype if x.dtype.kind in "fc" else _dtype.get_default_dtype().np
    return _dtype.get_default_dtype().np


def _unary(name: str, node: str, scipy_name: str, save_output: bool = False) -> Any:
    def forward(x: np.ndarray) -> np.ndarray:
        return _eval(scipy_name, x)

    forward.__name__ = name
    return defop(name, node=node, save=(0,), save_output=save_output)(forward)


# ---------------------------------------------------------------------------------------------
# The erf family and the normal distribution
# ---------------------------------------------------------------------------------------------

from .erf import _erf_op as _erf  # noqa: E402 - GELU's erf is this entry (ErfBackward0)

_erfc = _unary("erfc", "ErfcBackward0", "erfc")
_erfinv = _unary("erfinv", "ErfinvBackward0", "erfinv", save_output=True)
_erfcx = _unary("erfcx", "SpecialErfcxBackward0", "erfcx", save_output=True)
_ndtr = _unary("ndtr", "MulBackward1", "ndtr")  # torch's ndtr is (1 + erf(x/sqrt 2)) * 0.5
_ndtri = _unary("ndtri", "SpecialNdtriBackward0", "ndtri", save_output=True)
_log_ndtr = _unary("log_ndtr", "SpecialLogNdtrBackward0", "log_ndtr", save_output=True)


@_erfc.backward
def erfc_backward(ctx: Any, grad: Tensor) -> tuple:  # d erfc x = -2/sqrt(pi) e^(-x^2)
    (x,) = ctx.saved
    return (grad * (-2 / _SQRT_PI) * exp(-x * x),)


@_erfinv.backward
def erfinv_backward(ctx: Any, grad: Tensor) -> tuple:  # d erfinv x = sqrt(pi)/2 e^(erfinv(x)^2)
    _, y = ctx.saved
    return (grad * (_SQRT_PI / 2) * exp(y * y),)


@_erfcx.backward
def erfcx_backward(ctx: Any, grad: Tensor) -> tuple:  # d erfcx x = 2x erfcx(x) - 2/sqrt(pi)
    x, y = ctx.saved
    return (grad * (2 * x * y - 2 / _SQRT_PI),)


@_ndtr.backward
def ndtr_backward(ctx: Any, grad: Tensor) -> tuple:  # d ndtr x = e^(-x^2/2) / sqrt(2 pi)
    (x,) = ctx.saved
    return (grad * exp(x * x * -0.5) / _SQRT_2PI,)


@_ndtri.backward
def ndtri_backward(ctx: Any, grad: Tensor) -> tuple:  # d ndtri p = sqrt(2 pi) e^(ndtri(p)^2 / 2)
    _, y = ctx.saved
    return (grad * _SQRT_2PI * exp(y * y * 0.5),)


@_log_ndtr.backward
def log_ndtr_backward(ctx: Any, grad: Tensor) -> tuple:
    # d log ndtr x = e^(-x^2/2 - log ndtr x) / sqrt(2 pi)
    x, y = ctx.saved  # (in torch's order of operations: float32 cancels in the exponent)
    return (grad / _SQRT_2PI * exp(-(y + x * x / 2)),)


# ---------------------------------------------------------------------------------------------
# Gamma functions
# ---------------------------------------------------------------------------------------------

_lgamma = _unary("lgamma", "LgammaBackward0", "gammaln")
_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
              -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2)


def _digamma_np(x: np.ndarray) -> np.ndarray:
    """torch's digamma (Cephes' psi) in x's dtype: reflection for x < 0, the recurrence
    psi(x) = psi(x + 1) - 1/x up to 10, then the asymptotic series."""
    dt = x.dtype.type
    x = np.array(x, copy=True, ndmin=1)  # (0-d inputs: indexed assignment needs an array)
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
    out = _digamma_np(x).reshape(x.shape)
    with np.errstate(invalid="ignore"):
        out = np.where(x == 0, -np.copysign(np.inf, x), out)  # digamma(+-0) = -+inf
        out = np.where((x < 0) & (x == np.floor(x)), np.nan, out)  # the poles
    return np.asarray(out, dtype=x.dtype)


def _trigamma(x: np.ndarray) -> np.ndarray:
    """polygamma(1, x) in the input's own precision, by torch's method (so float32 agrees with
    torch's to the last bits, where SciPy's correctly rounded value does not): reflection for
    x < 1/2, six steps of psi1(x) = 1/x^2 + psi1(x + 1), then the asymptotic series
    psi1(x) ~ 1/x + 1/(2x^2) + 1/(6x^3) - 1/(30x^5) + 1/(42x^7)."""
    x = _float_result(x)
    t = x.dtype.type
    with np.errstate(all="ignore"):
        small = x < t(0.5)
        s = np.sin(t(np.pi) * x)
        result = np.where(small, -(t(np.pi) * t(np.pi)) / (s * s), t(0)).astype(x.dtype)
        x = np.where(small, t(1) - x, x).astype(x.dtype)
        for _ in range(6):
            result += t(1) / (x * x)
            x = x + t(1)
        ixx = t(1) / (x * x)
        result += (t(1) + t(1) / (t(2) * x)
                   + ixx * (t(1 / 6) - ixx * (t(1 / 30) - ixx * t(1 / 42)))) / x
        return np.asarray(np.where(small, -result, result), dtype=x.dtype)


@defop("polygamma", node="PolygammaBackward0", save=(0,))
def _polygamma(x: np.ndarray, *, n: int) -> np.ndarray:
    if n == 0:
        return _digamma.forward(x)
    if n == 1:
        return _trigamma(x)
    return _eval("polygamma", n, x, dtype=_out_dtype((x,)))


@_lgamma.backward
def lgamma_backward(ctx: Any, grad: Tensor) -> tuple:  # d lgamma x = digamma x
    (x,) = ctx.saved
    return (grad * _digamma(x),)


@_digamma.backward
def digamma_backward(ctx: Any, grad: Tensor) -> tuple:  # d digamma x = polygamma(1, x)
    (x,) = ctx.saved
    return (grad * _polygamma(x, n=1),)


@_polygamma.backward
def polygamma_backward(ctx: Any, grad: Tensor) -> tuple:  # d polygamma(n, x) = polygamma(n + 1, x)
    (x,) = ctx.saved
    return (grad * _polygamma(x, n=ctx.params["n"] + 1),)


@defop("mvlgamma", node="MvlgammaBackward0", save=(0,))
def _mvlgamma(x: np.ndarray, *, p: int) -> np.ndarray:
    # sum_j lgamma(x - (p-1)/2 + j/2) + p(p-1)/4 log(pi), in x's dtype and torch's order (no
    # domain check: torch's gives inf or log|gamma| below (p-1)/2)
    x = _float_result(x)
    with np.errstate(all="ignore"):
        total = _eval("gammaln", x + x.dtype.type((1 - p) / 2))
        for j in range(1, p):
            total = total + _eval("gammaln", x + x.dtype.type((j + 1 - p) / 2))
        return np.asarray(total + x.dtype.type(p * (p - 1) * math.log(math.pi) / 4))


@_mvlgamma.backward
def mvlgamma_backward(ctx: Any, grad: Tensor) -> tuple:
    # d/dx sum_i lgamma(x - i/2) = sum_i digamma(x - i/2)
    (x,) = ctx.saved
    p = ctx.params["p"]
    total = _digamma(x)
    for i in range(1, p):
        total = total + _digamma(x - i / 2)
    return (grad * total,)


# ---------------------------------------------------------------------------------------------
# Modified Bessel functions of the first kind (i0 and i1, plain and exponentially scaled)
# ---------------------------------------------------------------------------------------------

_i0 = _unary("i0", "I0Backward0", "i0")
_i0e = _unary("i0e", "SpecialI0EBackward0", "i0e", save_output=True)
_i1 = _unary("i1", "SpecialI1Backward0", "i1", save_output=True)
_i1e = _unary("i1e", "SpecialI1EBackward0", "i1e", save_output=True)


@_i0.backward
def i0_backward(ctx: Any, grad: Tensor) -> tuple:  # d i0 x = i1 x
    (x,) = ctx.saved
    return (grad * _i1(x),)


@_i0e.backward
def i0e_backward(ctx: Any, grad: Tensor) -> tuple:  # d i0e x = i1e x - sign(x) i0e x
    x, y = ctx.saved
    return (grad * (_i1e(x) - x.sign() * y),)


@_i1.backward
def i1_backward(ctx: Any, grad: Tensor) -> tuple:  # d i1 x = i0 x - i1(x)/x  (1/2 at x = 0)
    x, y = ctx.saved
    safe = where(x == 0, 1.0, x)
    return (grad * where(x == 0, 0.5, _i0(x) - y / safe),)


@_i1e.backward
def i1e_backward(ctx: Any, grad: Tensor) -> tuple:
    # d i1e x = i0e x - i1e(x) (sign(x) + 1/x)  (1/2 at 0)
    x, y = ctx.saved
    safe = where(x == 0, 1.0, x)
    return (grad * where(x == 0, 0.5, _i0e(x) - y * (x.sign() + 1 / safe)),)


# ---------------------------------------------------------------------------------------------
# Functions torch gives no derivative (Bessel functions of the first and second kind...)
# ---------------------------------------------------------------------------------------------

def _no_grad(name: str, scipy_name: str) -> Any:
    def fn(input: Any) -> Tensor:
        x = input._data if isinstance(input, Tensor) else np.asarray(input)
        return Tensor._make(_eval(scipy_name, x))

    fn.__name__ = name
    return fn


def _spherical_j0(x: np.ndarray) -> np.ndarray:
    return _sp().spherical_jn(0, x)


bessel_j0 = _no_grad("bessel_j0", "j0")
bessel_j1 = _no_grad("bessel_j1", "j1")
bessel_y0 = _no_grad("bessel_y0", "y0")
bessel_y1 = _no_grad("bessel_y1", "y1")
modified_bessel_i0 = _no_grad("modified_bessel_i0", "i0")
modified_bessel_i1 = _no_grad("modified_bessel_i1", "i1")
modified_bessel_k0 = _no_grad("modified_bessel_k0", "k0")
modified_bessel_k1 = _no_grad("modified_bessel_k1", "k1")


def scaled_modified_bessel_k0(x: Any) -> Tensor:
    """e^x K0(x) (torch names its argument ``x``)."""
    return Tensor._make(_eval("k0e", x._data if isinstance(x, Tensor) else np.asarray(x)))


def scaled_modified_bessel_k1(x: Any) -> Tensor:
    """e^x K1(x)."""
    return Tensor._make(_eval("k1e", x._data if isinstance(x, Tensor) else np.asarray(x)))


def spherical_bessel_j0(x: Tensor) -> Tensor:
    a = x._data
    with np.errstate(all="ignore"):
        out = _sp().spherical_jn(0, a.astype(np.float64))
    return Tensor._make(np.asarray(out).astype(_out_dtype((a,)), copy=False))


# ---------------------------------------------------------------------------------------------
# sinc, entr, logit, xlogy, xlog1py, zeta
# ---------------------------------------------------------------------------------------------

_sinc = _unary("sinc", "SincBackward0", "sinc")  # (numpy's normalised sinc: sin(pi x)/(pi x))


@_sinc.backward
def sinc_backward(ctx: Any, grad: Tensor) -> tuple:
    # (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at x = 0
    (x,) = ctx.saved
    px = x * math.pi
    sq = x * x * math.pi
    d = (px * px.cos() - px.sin()) / sq  # torch's order; 0 where pi x^2 is 0 (its second
    return (where(sq == 0, 0.0, grad * (d.conj() if d.is_complex() else d)),)  # derivative NaN)


@defop("entr", node="SpecialEntrBackward0", save=(0,))
def _entr(x: np.ndarray) -> np.ndarray:
    return _eval("entr", x)


@_entr.backward
def entr_backward(ctx: Any, grad: Tensor) -> tuple:  # d(-x log x) = -(1 + log x)
    (x,) = ctx.saved
    return (grad * -(log(x) + 1),)


@defop("logit", node="LogitBackward0", save=(0,))
def _logit(x: np.ndarray, *, eps: Any = None) -> np.ndarray:
    x = _float_result(x)
    if eps is not None:
        x = np.clip(x, eps, 1 - eps)
    with np.errstate(all="ignore"):
        return np.asarray(np.log(x / (1 - x)), dtype=x.dtype)


@_logit.backward
def logit_backward(ctx: Any, grad: Tensor) -> tuple:
    # 1/(x(1-x)) on [eps, 1-eps]: 0 outside (NaN outside
    (x,) = ctx.saved                        # [0, 1] without eps)
    eps = ctx.params.get("eps")
    lo = 0.0 if eps is None else eps
    inside = (x >= lo) & (x <= 1.0 - lo)
    return (where(inside, grad / (x * (1 - x)), math.nan if eps is None else 0.0),)


def _binary_forward(scipy_name: str, a: Any, b: Any) -> np.ndarray:
    a, b = _promote(a, b)
    a = _float_result(a)
    b = _float_result(b)
    arrays = [v for v in (a, b) if isinstance(v, np.ndarray)]
    dtype = np.result_type(*arrays)
    return _eval(scipy_name, a, b, dtype=dtype)


def _x_log(name: str, node: str, shift: int) -> Any:
    """The registry entry ``name``: x log(y + shift), 0 where x = 0 (xlogy: shift 0, xlog1py:
    shift 1)."""

    @defop(name, node=node, save=(0, 1))
    def forward(a: Any, b: Any) -> np.ndarray:
        return _binary_forward(name, a, b)

    @forward.backward
    def xlogy_backward(ctx: Any, grad: Tensor) -> tuple:
        # (log(y + shift), 0 where x = 0 and y <= -shift; x / (y + shift))
        a, b = ctx.saved
        need_a, need_b = ctx.needs_input_grad
        ga = where((a == 0) & (b <= -shift), 0.0, forward(grad, b)) if need_a else None
        gb = grad * a / (b + shift if shift else b) if need_b else None
        return ga, gb

    return forward


_xlogy = _x_log("xlogy", "XlogyBackward0", 0)
_xlog1py = _x_log("xlog1py", "SpecialXlog1PyBackward0", 1)


@defop("zeta", node="SpecialZetaBackward0", save=(0, 1))
def _zeta(a: Any, b: Any) -> np.ndarray:
    out = np.asarray(_binary_forward("zeta", a, b))
    # torch's kernel (Cephes' Euler-Maclaurin sum, in double) gives NaN where q^-x underflows
    # to 0 and the expansion's coefficient x (x+1) ... (x+22) overflows: 0 times infinity.
    # Only for x beyond 1e12 (SciPy answers 0 there).
    with np.errstate(all="ignore"):
        x, q = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(a, b))
        huge = (x > 1e12) & (q > 0) & np.isfinite(x) & (np.power(q, -x) == 0)
        if huge.any():
            coef = np.ones_like(x)
            for j in range(23):
                coef *= x + j
            out = np.array(out)
            out[huge & np.isinf(coef)] = np.nan
    return out


@_zeta.backward
def zeta_backward(ctx: Any, grad: Tensor) -> tuple:
    # d/dq zeta(x, q) = -x zeta(x + 1, q); none for x
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    if need_a:
        raise RuntimeError("the derivative for 'self' is not implemented.")
    return None, (grad * -a * _zeta(a + 1, b) if need_b else None)


# ---------------------------------------------------------------------------------------------
# The public functions (torch.X and torch.special.X)
# ---------------------------------------------------------------------------------------------

def _check_tensor(x: Any, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _public(op: Any, name: str, documented: bool = True) -> Any:
    """``torch.<name>``: the one-tensor op ``op`` after torch's check of its argument's type
    (``documented``: with a one-line docstring)."""

    def fn(input: Tensor) -> Tensor:
        _check_tensor(input, name)
        return op(input)

    fn.__name__ = name
    if documented:
        fn.__doc__ = f"torch.{name}, elementwise."
    return fn


erf = _public(_erf, "erf")
erfc = _public(_erfc, "erfc")
erfinv = _public(_erfinv, "erfinv")
erfcx = _public(_erfcx, "erfcx")
ndtr = _public(_ndtr, "ndtr")
ndtri = _public(_ndtri, "ndtri")
log_ndtr = _public(_log_ndtr, "log_ndtr")
lgamma = _public(_lgamma, "lgamma")
gammaln = _public(_lgamma, "gammaln")
digamma = _public(_digamma, "digamma")
psi = _public(_digamma, "psi")
i0 = _public(_i0, "i0")
i0e = _public(_i0e, "i0e")
i1 = _public(_i1, "i1")
i1e = _public(_i1e, "i1e")
sinc = _public(_sinc, "sinc")
entr = _public(_entr, "entr")


def polygamma(n: int, input: Tensor) -> Tensor:
    """The n-th derivative of the digamma function."""
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _polygamma(input, n=int(n))


def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The multivariate log-gamma function of dimension ``p``."""
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return _mvlgamma(input, p=int(p))


multigammaln = mvlgamma


def logit(input: Tensor, eps: Any = None) -> Tensor:
    """log(x / (1 - x)), with x clamped to [eps, 1 - eps] when ``eps`` is given."""
    if eps is None:
        return _logit(input)
    return _logit(input, eps=float(eps))


def expit(input: Tensor) -> Tensor:
    return sigmoid(input)


def _binary_public(op: Any, name: str, parser_name: str | None = None) -> Any:
    """The public function ``name``; ``parser_name``: what torch's argument parser calls it in
    its errors (``special_zeta`` for ``torch.special.zeta``)."""
    said = parser_name or name

    def fn(input: Any, other: Any) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise TypeError(f"{said}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(other).__name__}), but expected "
                            "one of:")
        for v in (input, other):
            if not isinstance(v, (Tensor,) + _SCALARS):
                raise TypeError(f"{name}(): argument 'other' must be Tensor, not "
                                f"{type(v).__name__}")
        return op(input, other)

    fn.__name__ = name
    return fn


xlogy = _binary_public(_xlogy, "xlogy")
xlog1py = _binary_public(_xlog1py, "xlog1py", "special_xlog1py")
zeta = _binary_public(_zeta, "zeta", "special_zeta")


def _inplace(op: Any) -> Any:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return apply_(op, self, *args, **kwargs)

    return method


__all__ = [
    "erf", "erfc", "erfinv", "erfcx", "ndtr", "ndtri", "log_ndtr", "lgamma", "gammaln",
    "digamma", "psi", "polygamma", "mvlgamma", "multigammaln", "i0", "i0e", "i1", "i1e", "sinc",
    "entr", "logit", "expit", "xlogy", "xlog1py", "zeta", "bessel_j0", "bessel_j1", "bessel_y0",
    "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "spherical_bessel_j0",
]


# The regularized lower incomplete gamma function (Gamma.cdf uses it)

@defop("gammainc", node="IgammaBackward0", save=(0, 1))
def _gammainc(a: Any, x: Any) -> np.ndarray:
    return _binary_forward("gammainc", a, x)


def _gamma_density(a: Tensor, x: Tensor) -> Tensor:
    """x^(a-1) e^(-x) / Gamma(a): d/dx of P(a, x), and minus that of Q(a, x)."""
    return ((a - 1) * x.log() - x - _lgamma(a)).exp()


@_gammainc.backward
def gammainc_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx P(a, x) = x^(a-1) e^(-x) / Gamma(a)
    a, x = ctx.saved
    if ctx.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
    return (None, grad * _gamma_density(a, x))


def gammainc(input: Any, other: Any) -> Tensor:
    """The regularized lower incomplete gamma function P(a, x)."""
    return _gammainc(input, other)


# The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)

@defop("gammaincc", node="IgammacBackward0", save=(0, 1))
def _gammaincc(a: Any, x: Any) -> np.ndarray:
    return _binary_forward("gammaincc", a, x)


@_gammaincc.backward
def gammaincc_backward(ctx: Any, grad: Tensor) -> tuple:
    # d/dx Q(a, x) = -x^(a-1) e^(-x) / Gamma(a)
    a, x = ctx.saved
    if ctx.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'igammac: input' is not implemented.")
    return (None, -grad * _gamma_density(a, x))


def _tensors_public(op: Any, name: str) -> Any:
    """A binary function of two tensors (no numbers), with torch's messages."""
    def fn(input: Any, other: Any) -> Tensor:
        for pos, (arg, v) in enumerate((("input", input), ("other", other)), 1):
            if not isinstance(v, Tensor):
                raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, "
                                f"not {type(v).__name__}")
        return op(input, other)

    fn.__name__ = name
    return fn


igamma = _tensors_public(_gammainc, "igamma")
igammac = _tensors_public(_gammaincc, "igammac")
gammaincc = _tensors_public(_gammaincc, "special_gammaincc")
igamma_ = _inplace(_gammainc)
igammac_ = _inplace(_gammaincc)


def airy_ai(x: Any) -> Tensor:
    """The Airy function Ai(x), the solution of y'' = x y that decays for x -> +inf (no
    derivative in torch)."""
    x = x._data if isinstance(x, Tensor) else np.asarray(x)
    with np.errstate(all="ignore"):
        xd = x.astype(np.float64)
        ai = np.asarray(_sp().airy(xd)[0])
        lost = np.isnan(ai) & np.isfinite(xd)  # SciPy gives up beyond |x| ~ 1e8; torch's
        if lost.any():  # kernel (Cephes) takes 0 above, the asymptotic wave below:
            z = -xd[lost]  # Ai(-z) ~ z^(-1/4) sin(2/3 z^(3/2) + pi/4) / sqrt(pi)
            wave = np.sin(2.0 / 3.0 * z * np.sqrt(z) + math.pi / 4) / (_SQRT_PI * z ** 0.25)
            ai = np.array(ai)
            ai[lost] = np.where(z > 0, wave, 0.0)
    return Tensor._make(ai.astype(_out_dtype((x,))))


# torch's J0 and Y1 are Cephes' rational approximations evaluated with a plain Horner loop:
# the denominators lose Cephes' implicit leading coefficient 1 (so values differ from SciPy's
# by up to ~1e-7 for x > 5). tapegrad evaluates the same expressions, to give torch's numbers.

_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00,
          -1.95539544257735972385e+01, -9.32060152123768231369e+01,
          -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18)
_Y1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00)
_Y1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01)
_Y1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01)
_Y1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18)
_PIO4, _3PIO4 = 0.785398163397448309615660845819875721, 2.356194490192344928846982537459627163
_SQ2OPI, _2OPI = 0.797884560802865355879892119868763737, 0.636619772367581343075535053490057448


def _horner(coefficients: tuple, z: np.ndarray) -> np.ndarray:
    out = np.zeros_like(z)
    for c in coefficients:
        out = out * z + z.dtype.type(c)
    return out


def _j0_torch(x: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    x = np.abs(x)
    xx = x * x
    small = (xx - t(5.78318596294678452118)) * (xx - t(30.4712623436620863991)) * _horner(
        _J0_RP, xx) / _horner(_J0_RQ, xx)
    small = np.where(x < t(1e-5), t(1) - xx / t(4), small)
    z = t(25) / xx
    large = ((_horner(_J0_PP, z) / _horner(_J0_PQ, z) * np.cos(x - t(_PIO4))
              - t(5) / x * (_horner(_J0_QP, z) / _horner(_J0_QQ, z)) * np.sin(x - t(_PIO4)))
             * t(_SQ2OPI) / np.sqrt(x))
    return np.where(x <= t(5), small, large)


def _y1_torch(x: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    xx = x * x
    j1 = _sp().j1(x.astype(np.float64)).astype(x.dtype)
    small = x * (_horner(_Y1_YP, xx) / _horner(_Y1_YQ, xx)) + t(_2OPI) * (j1 * np.log(x)
                                                                          - t(1) / x)
    small = np.where(x == 0, -np.inf, np.where(x < 0, np.nan, small))
    z = t(5) / x * (t(5) / x)
    large = ((_horner(_Y1_PP, z) / _horner(_Y1_PQ, z) * np.sin(x - t(_3PIO4))
              + t(5) / x * (_horner(_Y1_QP, z) / _horner(_Y1_QQ, z)) * np.cos(x - t(_3PIO4)))
             * t(_SQ2OPI) / np.sqrt(x))
    return np.where(x <= t(5), small, large)


def _torch_kernel(name: str, kernel: Any) -> Any:
    def fn(input: Any) -> Tensor:
        x = input._data if isinstance(input, Tensor) else np.asarray(input)
        dt = _out_dtype((x,))
        with np.errstate(all="ignore"):
            result = np.asarray(kernel(x.astype(dt)), dtype=dt)
        return Tensor._make(result)

    fn.__name__ = name
    return fn


bessel_j0 = _torch_kernel("bessel_j0", _j0_torch)  # noqa: F811 - torch's evaluation, above
bessel_y1 = _torch_kernel("bessel_y1", _y1_torch)  # noqa: F811


def _log_ndtr_forward(x: np.ndarray) -> np.ndarray:
    """log Phi(x) as torch evaluates it, step by step in the input's dtype (its rounding
    reaches the gradient exp(-(y + x^2/2)), which amplifies it):
    log(erfcx(-t) / 2) - t^2 for x < -1, else log1p(-erfc(t) / 2), with t = x / sqrt(2)."""
    if x.dtype != np.float32:
        return _eval("log_ndtr", x)
    f = np.float32
    t = x * f(1 / math.sqrt(2))
    with np.errstate(all="ignore"):
        left = np.log(_sp().erfcx(-t.astype(np.float64)).astype(f) / f(2)) - t * t
        right = np.log1p(-_sp().erfc(t.astype(np.float64)).astype(f) / f(2))
    return np.asarray(np.where(x < -1, left, right), dtype=f)


_log_ndtr.forward = _log_ndtr_forward
