"""Fused neural-network primitives: the registry entries behind ``tapegrad.nn.functional``.

Each entry is one node torch also records (``GeluBackward0``, ``NativeLayerNormBackward0``,
``ConvolutionBackward0``, ``NllLossBackward0``, ...): a NumPy forward written for speed and
numerical stability, and a backward rule next to it.

Two ways through one rule. A rule states its formula once, against a small namespace ``B`` of
operations (``B.exp``, ``B.sum``, ``B.matmul``, ...), and runs it on one of two backends::

    backward(ctx, grad)
      B = _backend()            create_graph off -> _Arrays: the formula on ndarrays, plain NumPy
                                create_graph on  -> _Tensors: the same formula on Tensors, so it
                                                   records its own graph (higher derivatives)

The array backend is the fast path every training step takes (no graph, no Tensor per step);
the Tensor backend is what makes ``gradgradcheck`` and ``create_graph=True`` work. Both run the
same lines of the formula, so the first-order tests check the one and the second-order tests the
other. Forwards may leave intermediate arrays for the array backend in ``params["_cache"]``
(the normalised input of layer_norm, the im2col matrix of a convolution, the attention
probabilities); the Tensor backend recomputes them from the saved inputs with Tensor ops.

Speed notes: no ``np.where`` or boolean indexing on large arrays in hot paths (both are slow
in NumPy); branch-free forms (``np.maximum(x, 0) + slope * np.minimum(x, 0)``) instead.
float32 stays float32: only Python floats meet arrays, never NumPy float64 scalars.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.forward_ad import linear_tangent
from ..autograd.grad_mode import _state
from . import elementwise as ew
from . import indexing as ix
from . import reduction as rd
from . import shape as sh
from ._registry import REGISTRY, defop

_as_strided = np.lib.stride_tricks.as_strided
_BEFORE = set(REGISTRY)

# ---------------------------------------------------------------------------------------------
# The two backends of a rule
# ---------------------------------------------------------------------------------------------


class _Arrays:
    """The formulas' operations on ndarrays: the first-order path."""

    tensors = False

    @staticmethod
    def val(t: Tensor) -> np.ndarray:
        return t._data

    @staticmethod
    def out(x: Any) -> Tensor:
        return Tensor._make(x)

    @staticmethod
    def const(a: np.ndarray) -> np.ndarray:
        return a

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    tanh = staticmethod(np.tanh)
    abs = staticmethod(np.abs)
    sqrt = staticmethod(np.sqrt)
    matmul = staticmethod(np.matmul)

    @staticmethod
    def sigmoid(x: np.ndarray) -> np.ndarray:
        return _sigmoid(x)

    @staticmethod
    def phi(x: np.ndarray) -> np.ndarray:
        return _phi(x)

    @staticmethod
    def softplus(x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.log1p(np.exp(x))

    @staticmethod
    def sum(x: np.ndarray, dims: tuple, keepdim: bool = True) -> np.ndarray:
        return _fast_sum(x, dims, keepdim)

    @staticmethod
    def mean(x: np.ndarray, dims: tuple, keepdim: bool = True) -> np.ndarray:
        n = 1
        for d in dims:
            n *= x.shape[d]
        return _fast_sum(x, dims, keepdim) * (1.0 / max(n, 1))

    @staticmethod
    def clamp(x: np.ndarray, lo: Any = None, hi: Any = None) -> np.ndarray:
        return np.clip(x, lo, hi)

    @staticmethod
    def mT(x: np.ndarray) -> np.ndarray:
        return np.swapaxes(x, -1, -2)

    @staticmethod
    def reshape(x: np.ndarray, shape: tuple) -> np.ndarray:
        return np.reshape(x, shape)

    @staticmethod
    def movedim(x: np.ndarray, src: int, dst: int) -> np.ndarray:
        return np.moveaxis(x, src, dst)

    @staticmethod
    def expand(x: np.ndarray, shape: tuple) -> np.ndarray:
        return np.broadcast_to(x, shape)

    @staticmethod
    def cat(xs: list, dim: int) -> np.ndarray:
        return np.concatenate(xs, axis=dim)

    @staticmethod
    def op(entry: Any, *args: Any, **params: Any) -> Any:
        return entry.forward(*args, **params)


class _Tensors:
    """The same operations on Tensors: the rule records a graph (create_graph=True)."""

    tensors = True

    @staticmethod
    def val(t: Tensor) -> Tensor:
        return t

    @staticmethod
    def out(x: Any) -> Any:
        return x

    @staticmethod
    def const(a: np.ndarray) -> Tensor:
        return Tensor._make(a)

    exp = staticmethod(ew.exp)
    log = staticmethod(ew.log)
    tanh = staticmethod(ew.tanh)
    abs = staticmethod(ew.abs)
    sqrt = staticmethod(ew.sqrt)
    sigmoid = staticmethod(ew.sigmoid)

    @staticmethod
    def matmul(a: Tensor, b: Tensor) -> Tensor:
        from .linalg import matmul

        return matmul(a, b)

    @staticmethod
    def phi(x: Tensor) -> Tensor:
        return (_erf(x * SQRT1_2) + 1.0) * 0.5

    @staticmethod
    def softplus(x: Tensor) -> Tensor:
        return _softplus(x, beta=1.0, threshold=20.0)

    @staticmethod
    def sum(x: Tensor, dims: tuple, keepdim: bool = True) -> Tensor:
        return rd.sum(x, dims, keepdim)

    @staticmethod
    def mean(x: Tensor, dims: tuple, keepdim: bool = True) -> Tensor:
        return rd.mean(x, dims, keepdim)

    @staticmethod
    def clamp(x: Tensor, lo: Any = None, hi: Any = None) -> Tensor:
        return ew.clamp(x, lo, hi)

    @staticmethod
    def mT(x: Tensor) -> Tensor:
        return sh.transpose(x, -1, -2)

    @staticmethod
    def reshape(x: Tensor, shape: tuple) -> Tensor:
        return sh.reshape(x, shape)

    @staticmethod
    def movedim(x: Tensor, src: int, dst: int) -> Tensor:
        return sh.movedim(x, src, dst)

    @staticmethod
    def expand(x: Tensor, shape: tuple) -> Tensor:
        return sh.expand(x, shape)

    @staticmethod
    def cat(xs: list, dim: int) -> Tensor:
        return sh.cat(xs, dim)

    @staticmethod
    def op(entry: Any, *args: Any, **params: Any) -> Any:
        return entry(*args, **params)


_ones = rd._ones
_fast_sum = rd._fast_sum


def _backend() -> Any:
    """The Tensor backend while the engine runs rules with grad mode on (create_graph)."""
    return _Tensors if _state.enabled else _Arrays


def _unpack(ctx: Any, grad: Any) -> tuple:
    """(B, saved values, grad) in the backend's representation."""
    B = _backend()
    if B is _Arrays:
        saved = [None if t is None else t._data for t in ctx.saved]
        return B, saved, (grad._data if grad is not None else None)
    return B, list(ctx.saved), grad


# Linked gradients. Many first-order rules do not depend on the forward's input at all (pooling,
# padding, a convolution's bias, a loss's gradient in a linear term) or depend on it only
# through a mask (relu6, hardtanh, leaky_relu, the shrinks): their gradient, computed from a
# cotangent that does not require grad, would not require grad either. torch's double-backward
# node (MaxPool2DWithIndicesBackwardBackward0, ...) takes the forward's input all the same, so
# its gradient requires grad and a second differentiation gives 0 for that input. ``_link``
# joins a gradient to those inputs with that zero derivative (create_graph only).
_LINKS: dict = {}


def _link(out: Tensor, inputs: Any, node: str) -> Tensor:
    """``out`` unchanged in value, with ``inputs`` (those that require grad) as extra graph
    inputs whose derivative is 0, under a node named ``node``."""
    inputs = [x for x in inputs if isinstance(x, Tensor) and x._requires_grad]
    if not inputs:
        return out
    entry = _LINKS.get((node, len(inputs)))
    if entry is None:  # made on first use: one entry per node name and input count
        entry = defop(f"link:{node}:{len(inputs)}", node=node)(lambda r, *xs: r)
        entry.backward(lambda ctx, g: (g,) + (None,) * (len(ctx.input_meta) - 1))
        _LINKS[(node, len(inputs))] = entry
    return entry(out, *inputs)


def _linked(entry: Any) -> None:
    """Link ``entry``'s gradients, under create_graph, to its saved inputs (``_link``)."""
    rule = entry.rule
    head, _, num = entry.node.rpartition("Backward")
    node = f"{head}BackwardBackward{num}"

    def linked(ctx: Any, grad: Any) -> tuple:
        grads = rule(ctx, grad)
        if not _state.enabled:
            return grads
        saved = [t for t in ctx.saved if t is not None]
        return tuple(None if gi is None else _link(gi, saved, node) for gi in grads)

    entry.rule = linked


def _take(cache: dict, key: str, make: Any) -> Any:
    """A forward intermediate, handed over once: the first backward takes it (so the graph
    does not hold it afterwards); a second backward (retain_graph) recomputes it."""
    value = cache.pop(key, None)
    return make() if value is None else value


def _quiet(fn: Any) -> Any:
    """Run ``fn`` with NumPy's floating-point warnings off (torch warns about none of them)."""

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fn(*args, **kwargs)

    wrapped.__name__ = fn.__name__
    wrapped.__doc__ = fn.__doc__
    return wrapped


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # 1/(1+e^-x): e^-x overflows to inf for very negative x and the result is 0, never NaN.
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


def _float(x: np.ndarray, name: str) -> None:
    """torch's error for an integer input to a floating-point-only kernel."""
    if x.dtype.kind not in "fc" and x.dtype.name != "bfloat16":
        from .._dtype import from_numpy_dtype
        from ._registry import scalar_type_name

        raise NotImplementedError(
            f"\"{name}\" not implemented for '{scalar_type_name(from_numpy_dtype(x.dtype))}'"
        )


# ---------------------------------------------------------------------------------------------
# Scalar arithmetic with torch's C++ node names (composites call at::mul(t, scalar) etc.)
# ---------------------------------------------------------------------------------------------

@defop("mul_scalar", node="MulBackward1")
def _mul_scalar(x: np.ndarray, *, other: Any) -> np.ndarray:
    return ew._binary(np.multiply, x, other)


@_mul_scalar.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d(c x)/dx = c
    return (grad * ctx.params["other"],)


@defop("add_scalar", node="AddBackward1")
def _add_scalar(x: np.ndarray, *, other: Any) -> np.ndarray:
    return ew._binary(np.add, x, other)


@_add_scalar.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d(x + c)/dx = 1
    return (grad,)


@defop("div_scalar", node="DivBackward1")
def _div_scalar(x: np.ndarray, *, other: Any) -> np.ndarray:
    return ew._div.forward(x, other)


@_div_scalar.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d(x / c)/dx = 1/c
    return (grad / ctx.params["other"],)


# at::norm(x, p, dim, keepdim) as composites call it (pairwise_distance): NormBackward1. The
# arithmetic is the vector norm's; only the node torch prints differs.
_norm_dim = defop("norm_dim", node="NormBackward1", save=(0,), save_output=True)(
    rd._norm.forward)
_norm_dim.backward(rd._norm.rule)


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
    r = coefs[-1] * u + coefs[-2]
    for c in coefs[-3::-1]:
        r *= u
        r += c
    return r


def erf_array(x: np.ndarray) -> np.ndarray:
    """erf of a float array, accurate to 2 ulp in float64 (float32 goes through float64)."""
    dt = x.dtype
    xd = x.astype(np.float64) if dt != np.float64 else x
    a = np.abs(xd)
    out = np.sign(xd)
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
        sign = np.bitwise_and(x.view(np.int32), np.int32(-(1 << 31)))
        np.bitwise_or(r.view(np.int32), sign, out=r.view(np.int32))
    else:
        np.copysign(r, x, out=r)
    r += 0.5
    return r, e


@defop("erf", node="ErfBackward0", save=(0,))
def _erf_op(x: np.ndarray) -> np.ndarray:
    return erf_array(ew._float_result(x))


@_erf_op.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx erf x = 2/sqrt(pi) e^(-x^2)
    (x,) = ctx.saved
    return (grad * ew.exp(-(x * x)) * TWO_OVER_SQRTPI,)


def _erf(x: Tensor) -> Tensor:
    return _erf_op(x)


# ---------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------

@defop("gelu", node="GeluBackward0", save=(0,))
def _gelu(x: np.ndarray, *, approximate: str, _cache: dict) -> np.ndarray:
    _float(x, "GeluKernelImpl")
    if approximate == "tanh":
        inner = (x + x * x * x * 0.044715) * (math.sqrt(2.0) * TWO_OVER_SQRTPI * 0.5)
        return x * 0.5 * (1.0 + np.tanh(inner))
    if x.dtype == np.float64:  # torch's float64 formula, term for term
        one_plus = 1.0 + erf_array(x * SQRT1_2)
        _cache["cdf"] = one_plus * 0.5
        return x * 0.5 * one_plus
    cdf, gauss = _phi_gauss(x)
    _cache["cdf"], _cache["gauss"] = cdf, gauss
    return x * cdf


def _gelu_grad(B: Any, x: Any, approximate: str, cdf: Any = None, gauss: Any = None) -> Any:
    if approximate == "tanh":
        k_beta = math.sqrt(2.0) * TWO_OVER_SQRTPI * 0.5
        x_sq = x * x
        t = B.tanh((x + x_sq * x * 0.044715) * k_beta)
        return (t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * k_beta * (x_sq * (3 * 0.044715) + 1.0)
    if cdf is None:
        cdf = B.phi(x)
    if not B.tensors:  # the same formula, in place (this runs on every training step)
        if gauss is None:
            gauss = x * x
            gauss *= -0.5
            np.exp(gauss, out=gauss)
        pdf = gauss
        pdf *= x
        pdf *= INV_SQRT_2PI
        pdf += cdf
        return pdf
    return cdf + x * B.exp(x * x * -0.5) * INV_SQRT_2PI


@_gelu.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx x Phi(x) = Phi(x) + x phi(x)
    B, (x,), g = _unpack(ctx, grad)
    cache = ctx.params["_cache"]
    cdf = gauss = None
    if not B.tensors:
        cdf, gauss = cache.pop("cdf", None), cache.pop("gauss", None)
    d = _gelu_grad(B, x, ctx.params["approximate"], cdf, gauss)
    if not B.tensors:
        d *= g
        return (B.out(d),)
    return (B.out(g * d),)


@defop("silu", node="SiluBackward0", save=(0,))
def _silu(x: np.ndarray) -> np.ndarray:
    _float(x, "silu_cpu")
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-x))


@_silu.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx x s(x) = s (1 + x (1 - s))
    B, (x,), g = _unpack(ctx, grad)
    s = B.sigmoid(x)
    return (B.out(g * s * (1.0 + x * (1.0 - s))),)


@defop("mish", node="MishBackward0", save=(0,))
def _mish(x: np.ndarray) -> np.ndarray:
    _float(x, "mish_cpu")
    return x * np.tanh(_Arrays.softplus(x))


@_mish.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # tanh(sp(x)) + x s(x) (1 - tanh^2(sp(x)))
    B, (x,), g = _unpack(ctx, grad)
    t = B.tanh(B.softplus(x))
    return (B.out(g * (t + x * B.sigmoid(x) * (1.0 - t * t))),)


@defop("softplus", node="SoftplusBackward0", save=(0,))
@_quiet
def _softplus(x: np.ndarray, *, beta: float, threshold: float) -> np.ndarray:
    _float(x, "softplus_cpu")
    z = x * beta
    return np.where(z > threshold, x, np.log1p(np.exp(z)) / beta)


@_softplus.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # s(beta x), and 1 above the threshold
    B, (x,), g = _unpack(ctx, grad)
    z = x * ctx.params["beta"]
    s = B.sigmoid(z)
    return (B.out(g * (s + (z > ctx.params["threshold"]) * (1.0 - s))),)


def _elu_forward(x: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    _float(x, "elu_cpu")
    # exactly one of the two terms is nonzero for every element
    return np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale) + np.maximum(x, 0) * scale


def _in_dtype(B: Any, like: Any, value: float) -> Any:
    """value as a 0-d constant of like's dtype (a bool mask times a Python float would be the
    default dtype, and round a float64 scale to float32)."""
    dt = like._data.dtype if isinstance(like, Tensor) else like.dtype
    return B.const(np.asarray(value, dtype=dt))


def _elu_grad(B: Any, x: Any, p: dict) -> Any:
    alpha, scale, iscale = p["alpha"], p["scale"], p["input_scale"]
    neg = B.exp(B.clamp(x, hi=0.0) * iscale) * (alpha * scale * iscale)
    return (x > 0) * _in_dtype(B, x, scale) + (x <= 0) * neg


def _elu_result_grad(B: Any, y: Any, p: dict) -> Any:
    # from the result (in-place forms): y > 0 -> scale; else input_scale (y + alpha scale)
    return ((y > 0) * _in_dtype(B, y, p["scale"])
            + (y <= 0) * ((y + p["alpha"] * p["scale"]) * p["input_scale"]))


def _elu_entries(name: str, node_out: str, node_in: str) -> tuple:
    out_of_place = defop(name, node=node_out, save=(0,))(
        lambda x, *, alpha, scale, input_scale: _elu_forward(x, alpha, scale, input_scale))
    in_place = defop(name + "_", node=node_in, save_output=True)(
        lambda x, *, alpha, scale, input_scale: _elu_forward(x, alpha, scale, input_scale))

    @out_of_place.backward
    def _(ctx: Any, grad: Tensor) -> tuple:  # x > 0: scale; else alpha scale is e^(is x)
        B, (x,), g = _unpack(ctx, grad)
        return (B.out(g * _elu_grad(B, x, ctx.params)),)

    @in_place.backward
    def _(ctx: Any, grad: Tensor) -> tuple:  # the same, written with the result
        B, (y,), g = _unpack(ctx, grad)
        return (B.out(g * _elu_result_grad(B, y, ctx.params)),)

    @out_of_place.jvp
    def _(tangents: list, inputs: tuple, out: Tensor, **p: Any) -> Tensor:  # t * elu'(x)
        (x,), (t,) = inputs, tangents
        neg = ew.exp(_Tensors.clamp(x, hi=0.0) * p["input_scale"]) * (
            p["alpha"] * p["scale"] * p["input_scale"])
        return t * ew.where(x > 0, p["scale"], neg)  # the number keeps x's dtype

    return out_of_place, in_place


_elu, _elu_ = _elu_entries("elu", "EluBackward0", "EluBackward1")
_celu, _celu_ = _elu_entries("celu", "CeluBackward0", "CeluBackward1")


@defop("leaky_relu", node="LeakyReluBackward0", save=(0,))
def _leaky_relu(x: np.ndarray, *, negative_slope: float) -> np.ndarray:
    _float(x, "leaky_relu_cpu")
    return np.maximum(x, 0) + np.minimum(x, 0) * negative_slope


@_leaky_relu.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # 1 for x > 0, negative_slope else
    B, (x,), g = _unpack(ctx, grad)
    return (B.out(g * ((x > 0) + (x <= 0) * ctx.params["negative_slope"])),)


@defop("leaky_relu_", node="LeakyReluBackward1", save_output=True)
def _leaky_relu_(x: np.ndarray, *, negative_slope: float) -> np.ndarray:
    return _leaky_relu.forward(x, negative_slope=negative_slope)


@_leaky_relu_.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # from the result: 1 where y > 0, negative_slope else
    slope = ctx.params["negative_slope"]
    if slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope"
        )
    B, (y,), g = _unpack(ctx, grad)
    return (B.out(g * ((y > 0) + (y <= 0) * slope)),)


def _hardtanh_forward(x: np.ndarray, *, min_val: float, max_val: float) -> np.ndarray:
    if x.dtype == np.bool_:
        raise NotImplementedError("\"hardtanh_cpu\" not implemented for 'Bool'")
    if x.dtype.kind in "iu":
        return np.clip(x, math.ceil(min_val), math.floor(max_val)).astype(x.dtype)
    return np.clip(x, min_val, max_val)


_hardtanh = defop("hardtanh", node="HardtanhBackward0", save=(0,))(_hardtanh_forward)
_hardtanh_ = defop("hardtanh_", node="HardtanhBackward0", save_output=True)(_hardtanh_forward)


@_hardtanh.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # 1 strictly inside (min_val, max_val)
    B, (x,), g = _unpack(ctx, grad)
    p = ctx.params
    return (B.out(g * ((x > p["min_val"]) & (x < p["max_val"]))),)


_hardtanh_.backward(_hardtanh.rule)


@defop("hardsigmoid", node="HardsigmoidBackward0", save=(0,))
def _hardsigmoid(x: np.ndarray) -> np.ndarray:
    _float(x, "hardsigmoid_cpu")
    return np.clip(x + 3.0, 0.0, 6.0) / 6.0


@_hardsigmoid.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # 1/6 on (-3, 3)
    B, (x,), g = _unpack(ctx, grad)
    # torch's kernel uses 1/6 rounded to float, for every dtype
    return (B.out(g * ((x > -3.0) & (x < 3.0)) * _ONE_SIXTH_F),)


_ONE_SIXTH_F = float(np.float32(1.0 / 6.0))


@defop("hardswish", node="HardswishBackward0", save=(0,))
def _hardswish(x: np.ndarray) -> np.ndarray:
    _float(x, "hardswish_cpu")
    return x * np.clip(x + 3.0, 0.0, 6.0) / 6.0


@_hardswish.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # 0 below -3, x/3 + 1/2 on [-3, 3], 1 above
    B, (x,), g = _unpack(ctx, grad)
    inside = (x >= -3.0) & (x <= 3.0)
    return (B.out(g * (inside * (x / 3.0 + 0.5) + (x > 3.0))),)


@defop("log_sigmoid", node="LogSigmoidBackward0", save=(0,))
@_quiet
def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    _float(x, "log_sigmoid_cpu")
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


@_log_sigmoid.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx log s(x) = s(-x)
    B, (x,), g = _unpack(ctx, grad)
    return (B.out(g * B.sigmoid(-x)),)


def _threshold_forward(x: np.ndarray, *, threshold: Any, value: Any) -> np.ndarray:
    return np.where(x > threshold, x, np.asarray(value).astype(x.dtype))


_threshold = defop("threshold", node="ThresholdBackward0", save=(0,))(_threshold_forward)
# in place, torch saves the input as it was (not the result): the rule is the same
_threshold_ = defop("threshold_", node="ThresholdBackward1", save=(0,))(_threshold_forward)


@_threshold.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # 1 where x > threshold
    B, (x,), g = _unpack(ctx, grad)
    return (B.out(g * (x > ctx.params["threshold"])),)


_threshold_.backward(_threshold.rule)


@defop("hardshrink", node="HardshrinkBackward0", save=(0,))
def _hardshrink(x: np.ndarray, *, lambd: float) -> np.ndarray:
    return x * (np.abs(x) > lambd)


@defop("softshrink", node="SoftshrinkBackward0", save=(0,))
def _softshrink(x: np.ndarray, *, lambd: float) -> np.ndarray:
    return np.maximum(x - lambd, 0) + np.minimum(x + lambd, 0)


def _shrink_rule(ctx: Any, grad: Tensor) -> tuple:  # 1 where |x| > lambda
    B, (x,), g = _unpack(ctx, grad)
    return (B.out(g * (B.abs(x) > ctx.params["lambd"])),)


_hardshrink.backward(_shrink_rule)
_softshrink.backward(_shrink_rule)


@defop("glu", node="GluBackward0", save=(0,))
def _glu(x: np.ndarray, *, dim: int) -> np.ndarray:
    a, b = np.split(x, 2, axis=dim)
    return a * _sigmoid(b)


@_glu.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d(a s(b)) = (s(b), a s(b)(1 - s(b)))
    B, (x,), g = _unpack(ctx, grad)
    dim = ctx.params["dim"]
    h = ctx.input_shapes[0][dim] // 2
    a: Any
    b: Any
    if B.tensors:
        a, b = sh.narrow(x, dim, 0, h), sh.narrow(x, dim, h, h)
    else:
        a, b = np.split(x, 2, axis=dim)
    s = B.sigmoid(b)
    return (B.out(B.cat([g * s, g * a * s * (1.0 - s)], dim)),)


@defop("prelu", node="PreluKernelBackward0", save=(0, 1))
def _prelu(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0) + np.minimum(x, 0) * w


@_prelu.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # (1 or w, x where x <= 0)
    B, (x, w), g = _unpack(ctx, grad)
    need_x, need_w = ctx.needs_input_grad
    neg = x <= 0
    gx = B.out(g * ((x > 0) + neg * w)) if need_x else None
    gw = B.out(g * x * neg) if need_w else None
    return gx, gw


# ---------------------------------------------------------------------------------------------
# Losses. reduction: 0 none, 1 mean, 2 sum (torch's enum)
# ---------------------------------------------------------------------------------------------

def _reduce(loss: np.ndarray, reduction: int) -> np.ndarray:
    if reduction == 1:
        return np.asarray(np.mean(loss), dtype=loss.dtype)
    if reduction == 2:
        return np.asarray(np.sum(loss), dtype=loss.dtype)
    return loss


def _norm(reduction: int, shape: tuple) -> float:
    """The factor a mean reduction puts on every element's gradient."""
    return 1.0 / max(int(np.prod(shape)), 1) if reduction == 1 else 1.0


def _pair_shape(ctx: Any) -> tuple:
    """The shape of a loss's input (and target): that of whichever needs a gradient."""
    return next(s for s in ctx.input_shapes if s is not None)


def _target_pair(ctx: Any, gx: Any, B: Any) -> tuple:
    """(d input, d target) for losses of ``input - target``: the target gets the negative."""
    need_x, need_t = ctx.needs_input_grad
    return (B.out(gx) if need_x else None), (B.out(-gx) if need_t else None)


@defop("mse_loss", node="MseLossBackward0", save=(0, 1))
def _mse_loss(x: np.ndarray, t: np.ndarray, *, reduction: int) -> np.ndarray:
    _float(x, "mse_cpu")
    d = x - t
    return _reduce(d * d, reduction)


@_mse_loss.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx (x - t)^2 = 2 (x - t)
    B, (x, t), g = _unpack(ctx, grad)
    red = ctx.params["reduction"]
    return _target_pair(ctx, (x - t) * (2.0 * _norm(red, _pair_shape(ctx))) * g, B)


@defop("smooth_l1_loss", node="SmoothL1LossBackward0", save=(0, 1))
def _smooth_l1_loss(x: np.ndarray, t: np.ndarray, *, reduction: int, beta: float) -> np.ndarray:
    z = np.abs(x - t)
    return _reduce(np.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)


@_smooth_l1_loss.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # (x - t)/beta inside |x - t| < beta, sign outside
    B, (x, t), g = _unpack(ctx, grad)
    p = ctx.params
    d = B.clamp((x - t) / p["beta"], -1.0, 1.0)
    return _target_pair(ctx, d * _norm(p["reduction"], _pair_shape(ctx)) * g, B)


@defop("huber_loss", node="HuberLossBackward0", save=(0, 1))
def _huber_loss(x: np.ndarray, t: np.ndarray, *, reduction: int, delta: float) -> np.ndarray:
    z = np.abs(x - t)
    return _reduce(np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


@_huber_loss.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # x - t inside |x - t| < delta, delta sign outside
    B, (x, t), g = _unpack(ctx, grad)
    p = ctx.params
    d = B.clamp(x - t, -p["delta"], p["delta"])
    return _target_pair(ctx, d * _norm(p["reduction"], _pair_shape(ctx)) * g, B)


@defop("soft_margin_loss", node="SoftMarginLossBackward0", save=(0,))
@_quiet
def _soft_margin_loss(x: np.ndarray, *, target: np.ndarray, reduction: int) -> np.ndarray:
    return _reduce(np.log1p(np.exp(-target * x)), reduction)


@_soft_margin_loss.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d/dx log(1 + e^(-yx)) = -y s(-yx)
    B, (x,), g = _unpack(ctx, grad)
    y = B.const(ctx.params["target"])
    norm = _norm(ctx.params["reduction"], _pair_shape(ctx))
    return (B.out(-y * B.sigmoid(-y * x) * norm * g),)


@defop("binary_cross_entropy", node="BinaryCrossEntropyBackward0", save=(0, 1))
@_quiet
def _bce(x: np.ndarray, t: np.ndarray, *, weight: Any, reduction: int) -> np.ndarray:
    if not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not ((t >= 0) & (t <= 1)).all():
        raise RuntimeError("all elements of target should be between 0 and 1")
    loss = (t - 1.0) * np.maximum(np.log1p(-x), -100.0) - t * np.maximum(np.log(x), -100.0)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_bce.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # (x - t)/((1 - x) x); target: log(1-x) - log(x)
    B, (x, t), g = _unpack(ctx, grad)
    p = ctx.params
    need_x, need_t = ctx.needs_input_grad
    scale = g * _norm(p["reduction"], _pair_shape(ctx))
    if p["weight"] is not None:
        scale = scale * B.const(p["weight"])
    with np.errstate(all="ignore"):
        # torch's EPSILON 1e-12, rounded to float for every dtype
        gx = B.out((x - t) / B.clamp((1.0 - x) * x, _EPS12_F) * scale) if need_x else None
        gt = None
        if need_t:
            gt = B.out((B.clamp(B.log(1.0 - x), -100.0) - B.clamp(B.log(x), -100.0)) * scale)
    return gx, gt


_EPS12_F = float(np.float32(1e-12))


def _log_sigmoid_np(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


@defop("bce_with_logits", node="BinaryCrossEntropyWithLogitsBackward0", save=(0, 1))
def _bce_logits(x: np.ndarray, t: np.ndarray, *, weight: Any, pos_weight: Any,
                reduction: int) -> np.ndarray:
    ls = _log_sigmoid_np(x)
    if pos_weight is not None:
        ls = ls * ((pos_weight - 1.0) * t + 1.0)
    loss = (1.0 - t) * x - ls
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@_bce_logits.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # x: s(x) - t (or (pw t + 1 - t) s(x) - pw t)
    B, (x, t), g = _unpack(ctx, grad)
    p = ctx.params
    need_x, need_t = ctx.needs_input_grad
    scale = g * _norm(p["reduction"], _pair_shape(ctx))
    if p["weight"] is not None:
        scale = scale * B.const(p["weight"])
    pw = B.const(p["pos_weight"]) if p["pos_weight"] is not None else None
    gx = gt = None
    if need_x:
        s = B.sigmoid(x)
        gx = B.out(((pw * t + 1.0 - t) * s - pw * t if pw is not None else s - t) * scale)
    if need_t:  # d/dt = log s(-x) - pw log s(x)  (= -x without pos_weight)
        if pw is None:
            gt = B.out(-x * scale)
        else:
            lsx = -B.softplus(-x)
            gt = B.out((lsx - x - pw * lsx) * scale)
    return gx, gt


def _pick(x: np.ndarray, index: np.ndarray, cdim: int) -> np.ndarray:
    """x[..., index, ...] along the class dim: one value per target."""
    if x.ndim == 2:
        return x[np.arange(x.shape[0]), index]
    if x.ndim == 1:
        return x[index]
    return np.squeeze(np.take_along_axis(x, np.expand_dims(index, cdim), axis=cdim), cdim)


def _place(out: np.ndarray, index: np.ndarray, values: np.ndarray, cdim: int) -> None:
    """out[..., index, ...] = values along the class dim (the adjoint of _pick)."""
    if out.ndim == 2:
        out[np.arange(out.shape[0]), index] = values
    elif out.ndim == 1:
        out[index] = values
    else:
        np.put_along_axis(out, np.expand_dims(index, cdim), np.expand_dims(values, cdim),
                          axis=cdim)


def _nll_forward(x: np.ndarray, *, target: np.ndarray, weight: Any, ignore_index: int,
                 reduction: int, _cache: dict) -> np.ndarray:
    """-w[t] x[t] along dim 1 (dim 0 for a 1-D input); mean divides by the total weight."""
    cdim = 0 if x.ndim == 1 else 1
    c = x.shape[cdim]
    valid = target != ignore_index
    all_valid = bool(valid.all())
    if target.size and (target.min() < 0 or target.max() >= c):
        bad = valid & ((target < 0) | (target >= c))
        if bad.any():
            raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    safe = target if all_valid else np.where(valid, target, 0)
    if weight is None:
        w = np.ones(target.shape, dtype=x.dtype) if all_valid else valid.astype(x.dtype)
    else:
        w = weight[safe] if all_valid else weight[safe] * valid
    losses = -(_pick(x, safe, cdim) * w)
    if not all_valid:
        losses = np.where(valid, losses, 0).astype(x.dtype)
    _cache.update(safe=safe, w=w, valid=None if all_valid else valid)
    if reduction == 0:
        return losses
    total = np.sum(losses, dtype=x.dtype)
    if reduction == 2:
        return np.asarray(total)
    tw = np.sum(w, dtype=x.dtype)
    _cache["total_weight"] = tw
    with np.errstate(all="ignore"):
        return np.asarray(total / tw, dtype=x.dtype)


def _nll_backward(ctx: Any, grad: Tensor) -> tuple:  # -w[t]/total at the target class, 0 else
    p = ctx.params
    cache = p["_cache"]
    shape = ctx.input_shapes[0]
    cdim = 0 if len(shape) == 1 else 1
    dtype = grad._data.dtype
    valid = cache["valid"]
    with np.errstate(all="ignore"):
        coef = -cache["w"]
        if p["reduction"] == 1:
            coef = coef / cache["total_weight"]
        if not _state.enabled:
            g = grad._data
            vals = coef * g if p["reduction"] == 0 else coef * g[()]
            if valid is not None:
                vals = np.where(valid, vals, 0)
            out = np.zeros(shape, dtype=dtype)
            _place(out, cache["safe"], vals.astype(dtype, copy=False), cdim)
            return (Tensor._make(out),)
        m = np.zeros(shape, dtype=dtype)
        _place(m, cache["safe"], (coef if valid is None else np.where(valid, coef, 0))
               .astype(dtype, copy=False), cdim)
    gt = grad.unsqueeze(cdim) if p["reduction"] == 0 and len(shape) > 1 else grad
    return (gt * Tensor._make(m),)


_nll_loss = defop("nll_loss", node="NllLossBackward0", save=(0,))(_nll_forward)
_nll_loss2d = defop("nll_loss2d", node="NllLoss2DBackward0", save=(0,))(_nll_forward)
_nll_loss.backward(_nll_backward)
_nll_loss2d.backward(_nll_backward)


# F.cross_entropy's common case: (N, C) float logits, int64 class indices all in [0, C), no
# weight, mean reduction, no smoothing. The same two nodes as the general path (NllLossBackward0
# over LogSoftmaxBackward0) with lean rules: the forward keeps the softmax for the backward, and
# the first-order backward is a handful of array operations.

@defop("ce_log_softmax", node="LogSoftmaxBackward0", save_output=True)
def _ce_log_softmax(x: np.ndarray, *, _cache: dict) -> np.ndarray:
    m = _fast_max(x, 1)
    if not np.isfinite(m).all():
        m = np.where(np.isfinite(m), m, 0)
    y = x - m
    e = np.exp(y)
    s = _fast_sum(e, (1,), True)
    with np.errstate(divide="ignore", invalid="ignore"):
        y -= np.log(s)
        e /= s
    _cache["softmax"] = e
    return y


@_ce_log_softmax.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d(x - lse)/dx: g - softmax * sum(g)
    (y,) = ctx.saved
    if _state.enabled:
        return (grad - y.exp() * grad.sum(1, keepdim=True),)
    g = grad._data
    p = _take(ctx.params["_cache"], "softmax", lambda: np.exp(y._data))
    p *= np.add.reduce(g, axis=1, keepdims=True)
    return (Tensor._make(np.subtract(g, p, out=p)),)


@defop("ce_nll", node="NllLossBackward0")
def _ce_nll(x: np.ndarray, *, target: np.ndarray) -> np.ndarray:
    total = np.add.reduce(x[np.arange(x.shape[0]), target])
    return np.asarray(-total / x.shape[0], dtype=x.dtype)


@_ce_nll.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # -1/N at the target class, 0 else
    n, c = ctx.input_shapes[0]
    dtype = grad._data.dtype
    rows, target = np.arange(n), ctx.params["target"]
    if not _state.enabled:
        out = np.zeros((n, c), dtype=dtype)
        out[rows, target] = -grad._data[()] / n
        return (Tensor._make(out),)
    m = np.zeros((n, c), dtype=dtype)
    m[rows, target] = -1.0 / n
    return (grad * Tensor._make(m),)


# ---------------------------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------------------------

def _moments(B: Any, x: Any, dims: tuple, eps: float) -> tuple:
    """(x - mean) * rstd and rstd over ``dims`` (biased variance), in the backend."""
    xc = x - B.mean(x, dims)
    if not B.tensors:  # the same lines, in place
        sq = xc * xc
        var = B.mean(sq, dims)
        var += eps
        rstd = np.sqrt(var, out=var)
        np.reciprocal(rstd, out=rstd)
        xc *= rstd
        return xc, rstd
    var = B.mean(xc * xc, dims)
    rstd = 1.0 / B.sqrt(var + eps)
    return xc * rstd, rstd


def _normalized_grad(B: Any, dxhat: Any, xhat: Any, rstd: Any, dims: tuple) -> Any:
    # d/dx of xhat = (x - mean) rstd, applied to dxhat:
    #   rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat))
    if not B.tensors:  # the same formula, in place
        t = dxhat * xhat
        m = B.mean(t, dims)
        np.multiply(xhat, m, out=t)
        out = dxhat - B.mean(dxhat, dims)
        out -= t
        out *= rstd
        return out
    return (dxhat - B.mean(dxhat, dims) - xhat * B.mean(dxhat * xhat, dims)) * rstd


@defop("layer_norm", node="NativeLayerNormBackward0", save=(0, 1))
def _layer_norm(x: np.ndarray, w: Any, b: Any, *, ndim: int, eps: float,
                _cache: dict) -> np.ndarray:
    dims = tuple(range(x.ndim - ndim, x.ndim))
    xhat, rstd = _moments(_Arrays, x, dims, eps)
    _cache["moments"] = (xhat, rstd)
    if w is not None:
        y = xhat * w
        if b is not None:
            y += b
        return y
    return xhat + b if b is not None else xhat.copy()


@_layer_norm.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # the normalised input's rule, then the affine part
    B, saved, g = _unpack(ctx, grad)
    x, w = saved[0], (saved[1] if len(saved) > 1 else None)
    p = ctx.params
    n = len(x.shape)  # x is saved even when only the weights want a gradient
    dims = tuple(range(n - p["ndim"], n))
    batch = tuple(range(n - p["ndim"]))
    if B.tensors:
        xhat, rstd = _moments(B, x, dims, p["eps"])
    else:
        xhat, rstd = _take(p["_cache"], "moments",
                           lambda: _moments(B, x, dims, p["eps"]))
        if (g.dtype == xhat.dtype and g.dtype.kind == "f" and g.dtype.itemsize >= 4
                and xhat.size):
            return _layer_norm_grads(g, xhat, rstd, w, p["ndim"], ctx.needs_input_grad)
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    if need_x:
        gx = B.out(_normalized_grad(B, g * w if w is not None else g, xhat, rstd, dims))
    if need_w:  # (no batch dims: nothing to sum; a sum over dims () would sum them all)
        gw = B.out(B.sum(g * xhat, batch, False) if batch else g * xhat)
    if need_b:
        gb = B.out(B.sum(g, batch, False) if batch else g)
    return gx, gw, gb


def _layer_norm_grads(g: np.ndarray, xhat: np.ndarray, rstd: np.ndarray, w: Any, ndim: int,
                      needs: tuple) -> tuple:
    """The rule above on the arrays, as rows of the normalised size d (one per position):
    the row means of g w and of g w xhat are matrix-vector products with w itself
    ((g @ w) / d and ((g xhat) @ w) / d), so g w xhat is never formed, and g xhat serves the
    weight's gradient too: six passes and four products where the formula takes seven and
    four, and fewer calls (the GPT benchmark's 16 x 32 x 64 LayerNorm, forward and backward:
    0.20 -> 0.17 ms)."""
    need_x, need_w, need_b = needs
    shape = xhat.shape[xhat.ndim - ndim:]  # the normalised shape
    d = math.prod(shape)
    rows = np.ascontiguousarray(g).reshape(-1, d)
    xh = xhat.reshape(-1, d)
    gxh = rows * xh if (need_w or need_x) else None
    gw = gb = gx = None
    if need_w and gxh is not None:
        gw = Tensor._make((_ones(rows.shape[0], g.dtype) @ gxh).reshape(shape))
    if need_b:
        gb = Tensor._make((_ones(rows.shape[0], g.dtype) @ rows).reshape(shape))
    if need_x and gxh is not None:
        wv = _ones(d, g.dtype) if w is None else w.reshape(d)
        mean_dxhat = rows @ wv  # sum over the row of g w
        mean_dxhat *= 1.0 / d
        mean_dxhat_xhat = gxh @ wv  # sum over the row of g w xhat
        mean_dxhat_xhat *= 1.0 / d
        out = rows * wv if w is not None else rows.copy()
        out -= mean_dxhat[:, None]
        np.multiply(xh, mean_dxhat_xhat[:, None], out=gxh)
        out -= gxh
        out *= rstd.reshape(-1, 1)
        gx = Tensor._make(out.reshape(xhat.shape))
    return gx, gw, gb


def _channel_shape(x_ndim: int, c: int) -> tuple:
    return (1, c) + (1,) * (x_ndim - 2)


@defop("batch_norm", node="NativeBatchNormBackward0", save=(0, 1))
def _batch_norm(x: np.ndarray, w: Any, b: Any, *, running_mean: Any, running_var: Any,
                training: bool, momentum: float, eps: float, _cache: dict) -> np.ndarray:
    dims = (0,) + tuple(range(2, x.ndim))
    cshape = _channel_shape(x.ndim, x.shape[1])
    if training:
        mean = np.mean(x, axis=dims, keepdims=True)
        xc = x - mean
        var = np.mean(xc * xc, axis=dims, keepdims=True)
        rstd = 1.0 / np.sqrt(var + eps)
        xhat = xc * rstd
        if running_mean is not None:
            n = x.size // x.shape[1]
            running_mean *= 1.0 - momentum
            running_mean += (mean.reshape(-1) * momentum).astype(running_mean.dtype)
            running_var *= 1.0 - momentum
            unbiased = var.reshape(-1) * (momentum * n / max(n - 1, 1))
            running_var += unbiased.astype(running_var.dtype)
    else:
        mean = running_mean.astype(x.dtype).reshape(cshape)
        rstd = (1.0 / np.sqrt(running_var + eps)).astype(x.dtype).reshape(cshape)
        xhat = (x - mean) * rstd
        _cache["mean"] = mean
    if training:
        _cache["moments"] = (xhat, rstd)
    else:
        _cache.update(xhat=xhat, rstd=rstd)
    y = xhat
    if w is not None:
        y = y * w.reshape(cshape)
    if b is not None:
        y = y + b.reshape(cshape)
    elif w is None and y is xhat:
        y = y.copy()
    return y


@_batch_norm.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # training: the normalised input's rule per channel
    B, saved, g = _unpack(ctx, grad)
    x, w = saved[0], (saved[1] if len(saved) > 1 else None)
    p = ctx.params
    shape = tuple(x.shape)  # x is saved even when only the weights want a gradient
    dims = (0,) + tuple(range(2, len(shape)))
    cshape = _channel_shape(len(shape), shape[1])
    if B.tensors and p["training"]:
        xhat, rstd = _moments(B, x, dims, p["eps"])
    elif B.tensors:
        rstd = B.const(p["_cache"]["rstd"])
        xhat = (x - B.const(p["_cache"]["mean"])) * rstd
    elif p["training"]:
        xhat, rstd = _take(p["_cache"], "moments", lambda: _moments(B, x, dims, p["eps"]))
    else:
        rstd = p["_cache"]["rstd"]
        xhat = _take(p["_cache"], "xhat", lambda: (x - p["_cache"]["mean"]) * rstd)
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    if need_x:
        dxhat = g * B.reshape(w, cshape) if w is not None else g
        if p["training"]:
            gx = B.out(_normalized_grad(B, dxhat, xhat, rstd, dims))
        else:
            gx = B.out(dxhat * rstd)
    if need_w:
        gw = B.out(B.sum(g * xhat, dims, False))
    if need_b:
        gb = B.out(B.sum(g, dims, False))
    return gx, gw, gb


def _grouped(shape: tuple, groups: int) -> tuple:
    """(N, G, C/G * spatial): group_norm's view of an input (explicit, so N = 0 works)."""
    return (shape[0], groups, shape[1] // groups * math.prod(shape[2:]))


@defop("group_norm", node="NativeGroupNormBackward0", save=(0, 1))
def _group_norm(x: np.ndarray, w: Any, b: Any, *, groups: int, eps: float,
                _cache: dict) -> np.ndarray:
    n, c = x.shape[:2]
    xhat, rstd = _moments(_Arrays, x.reshape(_grouped(x.shape, groups)), (2,), eps)
    _cache["moments"] = (xhat, rstd)
    y = xhat.reshape(x.shape)
    cshape = _channel_shape(x.ndim, c)
    if w is not None:
        y = y * w.reshape(cshape)
    if b is not None:
        y = y + b.reshape(cshape)
    return y


@_group_norm.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # the normalised input's rule over each group
    B, saved, g = _unpack(ctx, grad)
    x, w = saved[0], (saved[1] if len(saved) > 1 else None)
    p = ctx.params
    shape = tuple(x.shape)  # x is saved even when only the weights want a gradient
    n, c = shape[:2]
    grouped = _grouped(shape, p["groups"])
    cshape = _channel_shape(len(shape), c)
    if B.tensors:
        xhat, rstd = _moments(B, B.reshape(x, grouped), (2,), p["eps"])
    else:
        xhat, rstd = _take(p["_cache"], "moments",
                           lambda: _moments(B, B.reshape(x, grouped), (2,), p["eps"]))
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    dims = (0,) + tuple(range(2, len(shape)))
    if need_x:
        dxhat = g * B.reshape(w, cshape) if w is not None else g
        gx = _normalized_grad(B, B.reshape(dxhat, grouped), xhat, rstd, (2,))
        gx = B.out(B.reshape(gx, shape))
    if need_w:
        gw = B.out(B.sum(g * B.reshape(xhat, shape), dims, False))
    if need_b:
        gb = B.out(B.sum(g, dims, False))
    return gx, gw, gb


@defop("safe_softmax", node="SafeSoftmaxBackward0", save_output=True)
def _safe_softmax(x: np.ndarray, *, dim: int) -> np.ndarray:
    return _safe_softmax_np(x, dim)


def _fast_max(x: np.ndarray, dim: int) -> np.ndarray:
    """np.max(x, dim, keepdims=True); a short last dim (up to 64) is reduced as the first dim
    of a transposed copy. NumPy reduces a short trailing axis several times slower (512 rows:
    29 us for 10 columns, 3.5 us transposed); from 128 columns on the copy costs more than it
    saves (4096 x 256: 0.47 ms against 6.8 ms)."""
    nd = x.ndim
    if (dim == -1 or dim == nd - 1) and nd >= 2 and x.shape[-1] <= 64 and x.size:
        moved = x.T if nd == 2 else x.transpose((nd - 1,) + tuple(range(nd - 1)))
        return np.ascontiguousarray(moved).max(axis=0)[..., None]
    return np.max(x, axis=dim, keepdims=True)


def _safe_softmax_np(x: np.ndarray, dim: int) -> np.ndarray:
    """softmax along ``dim``; a row that is all -inf gives zeros instead of NaN."""
    m = _fast_max(x, dim)
    m[~np.isfinite(m)] = 0
    e = x - m
    with np.errstate(under="ignore"):
        np.exp(e, out=e)
    s = _fast_sum(e, (dim,), True)
    s += s == 0
    e /= s
    return e


@_safe_softmax.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # J = diag(y) - y y^T: y * (g - sum(g y))
    B, (y,), g = _unpack(ctx, grad)
    dim = ctx.params["dim"]
    return (B.out(y * (g - B.sum(g * y, (dim,)))),)


# ---------------------------------------------------------------------------------------------
# Embedding
# ---------------------------------------------------------------------------------------------

@defop("embedding", node="EmbeddingBackward0")
def _embedding(w: np.ndarray, *, indices: np.ndarray, padding_idx: Any,
               scale_grad_by_freq: bool) -> np.ndarray:
    return np.take(w, indices, axis=0)


def _row_sums(n_rows: int, index: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """out[i] = sum of rows[j] with index[j] == i (a one-hot product when that is small)."""
    if n_rows * index.size <= 1 << 22:
        onehot = (np.arange(n_rows)[:, None] == index[None, :]).astype(rows.dtype)
        return onehot @ rows
    out = np.zeros((n_rows,) + rows.shape[1:], dtype=rows.dtype)
    np.add.at(out, index, rows)
    return out


# forward mode, as torch: the looked-up rows of the tangent (padding row included: the output
# does depend on it, whatever the backward rule's convention)
_embedding.jvp(linear_tangent(_embedding))
for _scalar_op in (_mul_scalar, _div_scalar):  # linear in x
    _scalar_op.jvp(linear_tangent(_scalar_op))
_add_scalar.jvp(lambda tangents, inputs, out, **p: tangents[0])  # d(x + c) = dx


@_embedding.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # every looked-up row sends its gradient back (summed)
    p = ctx.params
    v, d = ctx.input_shapes[0]
    idx = p["indices"].reshape(-1)
    keep = None
    if p["padding_idx"] is not None:
        keep = (idx != p["padding_idx"])[:, None]
    scale = None
    if p["scale_grad_by_freq"]:
        counts = np.bincount(idx, minlength=v)
        scale = (1.0 / counts[idx])[:, None].astype(grad._data.dtype)
    B = _backend()
    if B is _Arrays:
        rows = grad._data.reshape(-1, d)
        if keep is not None:
            rows = rows * keep
        if scale is not None:
            rows = rows * scale
        return (Tensor._make(_row_sums(v, idx, rows)),)
    rows = grad.reshape(-1, d)
    if keep is not None:
        rows = rows * Tensor._make(keep)
    if scale is not None:
        rows = rows * Tensor._make(scale)
    zeros = Tensor._make(np.zeros((v, d), dtype=grad._data.dtype))
    return (ix.index_put(zeros, (idx,), rows, accumulate=True),)


# ---------------------------------------------------------------------------------------------
# Padding
# ---------------------------------------------------------------------------------------------

def _pad_pairs(pad: tuple, ndim: int) -> list:
    """torch's flat pad list (last dim first) as (before, after) per dim of an ndim array."""
    pairs = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        pairs[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return pairs


@defop("constant_pad_nd", node="ConstantPadNdBackward0")
def _constant_pad(x: np.ndarray, *, pad: tuple, value: Any) -> np.ndarray:
    pairs = _pad_pairs(pad, x.ndim)
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0))
                 for (lo, hi), n in zip(pairs, x.shape, strict=True))
    x = x[crop]
    grow = [(max(lo, 0), max(hi, 0)) for lo, hi in pairs]
    if not any(lo or hi for lo, hi in grow):
        return x.copy()
    if x.dtype == np.bool_:
        value = bool(value)
    elif x.dtype.kind in "iu":
        value = int(value)
    return np.pad(x, grow, mode="constant", constant_values=value)


@_constant_pad.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # the inverse crop: pad the gradient by -pad with 0
    neg = tuple(-p for p in ctx.params["pad"])
    B = _backend()
    return (B.out(B.op(_constant_pad, B.val(grad) if B.tensors else grad._data, pad=neg,
                       value=0)),)


def _take_dims(x: np.ndarray, index: tuple) -> np.ndarray:
    k = len(index)
    for i, idx in enumerate(index):
        x = np.take(x, idx, axis=x.ndim - k + i)
    return x


def _gather_pad_rule(ctx: Any, grad: Tensor) -> tuple:  # scatter-add back: one-hot products
    B, _, g = _unpack(ctx, grad)
    index = ctx.params["index"]
    shape = ctx.input_shapes[0]
    k = len(index)
    for i, idx in enumerate(index):
        axis = len(shape) - k + i
        onehot = (idx[:, None] == np.arange(shape[axis])[None, :]).astype(grad._data.dtype)
        g = B.movedim(B.matmul(B.movedim(g, axis, -1), B.const(onehot)), -1, axis)
    if not B.tensors:
        g = np.ascontiguousarray(g)
    return (B.out(g),)


def _gather_pad_entry(name: str, node: str) -> Any:
    entry = defop(name, node=node, save=(0,) if "pad" in name else ())(
        lambda x, *, index: _take_dims(x, index))
    entry.backward(_gather_pad_rule)
    if "pad" in name:  # torch's pad backward takes the input; upsampling's does not
        _linked(entry)
    return entry


_GATHER_PADS = {
    (mode, k): _gather_pad_entry(f"{mode}_pad{k}d", f"{mode.capitalize()}Pad{k}DBackward0")
    for mode in ("reflection", "replication") for k in (1, 2, 3)
}


# ---------------------------------------------------------------------------------------------
# Convolution: im2col through a strided view, one matrix product per direction
#
#   x (N, C, *S) --pad--> xp --as_strided--> windows (N, C, *K, *O)   (a view, no copy)
#   cols = windows as (C*K, N*L)       (the one copy; each row a run of whole output rows)
#   out  = W (O, C*K) @ cols           (one product) -> (O, N, *O) -> (N, O, *O)
#   backward:  dW = g (O, N*L) @ cols^T      dcols = W^T @ g  (one product each)
#              dx = col2im(dcols): one strided add per kernel offset, never per pixel
#              (per kernel row in the stride-1 2-D path: see _conv_backward_chunked)
# Groups split C*K and O into G blocks: the same products with a leading group dim.
# F.unfold / F.fold are the im2col / col2im entries, in torch's (N, C*K, L) layout.
# ---------------------------------------------------------------------------------------------

class _Scratch:
    """Reused work arrays for the convolution's big temporaries (the im2col matrix, its
    gradient, the padded flat input). A training loop asks for the same shapes every step;
    handing back the previous step's arrays saves the page faults a fresh multi-megabyte
    allocation costs. Only arrays nothing else references are ever put back."""

    def __init__(self, limit_bytes: int = 1 << 28) -> None:
        self.free: dict = {}
        self.limit = limit_bytes
        self.bytes = 0

    def get(self, shape: tuple, dtype: Any) -> np.ndarray:
        stack = self.free.get((shape, np.dtype(dtype)))
        if stack:
            a = stack.pop()
            self.bytes -= a.nbytes
            return a
        return np.empty(shape, dtype=dtype)

    def put(self, a: np.ndarray) -> None:
        if a.base is not None or not a.flags.c_contiguous or a.nbytes < 1 << 16:
            return
        stack = self.free.setdefault((a.shape, a.dtype), [])
        if len(stack) >= 2 or self.bytes + a.nbytes > self.limit:
            return
        stack.append(a)
        self.bytes += a.nbytes


_SCRATCH = _Scratch()


def _out_size(size: int, k: int, stride: int, lo: int, hi: int, dilation: int) -> int:
    return (size + lo + hi - dilation * (k - 1) - 1) // stride + 1


def _windows(xp: np.ndarray, kernel: tuple, stride: tuple, dilation: tuple,
             out: tuple) -> np.ndarray:
    """View (N, C, *kernel, *out) of xp (N, C, *S): entry [.., k, o] is xp[.., k*dil + o*s]."""
    sp = xp.strides[2:]
    shape = xp.shape[:2] + tuple(kernel) + tuple(out)
    strides = (xp.strides[:2] + tuple(s * d for s, d in zip(sp, dilation, strict=True))
               + tuple(s * st for s, st in zip(sp, stride, strict=True)))
    return _as_strided(xp, shape, strides, writeable=False)


def _pad_array(x: np.ndarray, pads: tuple, value: Any = 0) -> np.ndarray:
    if not any(lo or hi for lo, hi in pads):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + tuple(pads), mode="constant", constant_values=value)


def _col2im(windows: np.ndarray, padded: tuple, kernel: tuple, stride: tuple,
            dilation: tuple) -> np.ndarray:
    """Add windows (N, C, *kernel, *out) back where they came from: an array of ``padded``."""
    out = np.zeros(padded, dtype=windows.dtype)
    _col2im_into(out, windows, kernel, stride, dilation)
    return out


def _col2im_into(out: np.ndarray, windows: np.ndarray, kernel: tuple, stride: tuple,
                 dilation: tuple) -> None:
    osz = windows.shape[2 + len(kernel):]
    head = (slice(None), slice(None))
    # (the adds run over a (C, N, ...) view of both sides: the batch dim innermost of the two)
    out_t = out.swapaxes(0, 1)
    win_t = windows.swapaxes(0, 1)
    for offs in np.ndindex(*kernel):
        region = tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                       for o, d, s, n in zip(offs, dilation, stride, osz, strict=True))
        out_t[head + region] += win_t[head + offs]


def _crop(x: np.ndarray, pads: tuple) -> np.ndarray:
    if not any(lo or hi for lo, hi in pads):
        return x
    return x[(slice(None), slice(None)) + tuple(slice(lo, x.shape[2 + i] - hi)
                                                for i, (lo, hi) in enumerate(pads))]


class _Geometry:
    """Kernel, stride, padding (before, after) per dim, dilation, and the sizes they give."""

    __slots__ = ("kernel", "stride", "pads", "dilation", "in_size", "out_size", "padded")

    def __init__(self, in_size: tuple, kernel: tuple, stride: tuple, pads: tuple,
                 dilation: tuple, out_size: tuple | None = None) -> None:
        self.kernel, self.stride, self.pads, self.dilation = kernel, stride, pads, dilation
        self.in_size = tuple(in_size)
        self.padded = tuple(n + lo + hi for n, (lo, hi) in zip(in_size, pads, strict=True))
        if out_size is None:
            out_size = tuple(_out_size(n, k, s, lo, hi, d) for n, k, s, (lo, hi), d in
                             zip(in_size, kernel, stride, pads, dilation, strict=True))
        self.out_size = tuple(out_size)

    def cols(self, x: np.ndarray) -> np.ndarray:
        """im2col: (N, C*K, L), rows ordered (c, *kernel), columns (*out)."""
        win = _windows(_pad_array(x, self.pads), self.kernel, self.stride, self.dilation,
                       self.out_size)
        n, c = x.shape[:2]
        return np.ascontiguousarray(win).reshape(n, c * math.prod(self.kernel),
                                                 math.prod(self.out_size))

    def uncols(self, cols: np.ndarray, c: int) -> np.ndarray:
        """col2im of (N, C*K, L): the windows summed back into (N, C, *in_size)."""
        n = cols.shape[0]
        win = cols.reshape((n, c) + self.kernel + self.out_size)
        full = _col2im(win, (n, c) + self.padded, self.kernel, self.stride, self.dilation)
        return _crop(full, self.pads)

    # The convolution's own layout: im2col as one matrix (C*K, N*R), R entries per image.
    # Stride-1 2-D windows are read from the flattened plane: entry (c, k) of image n is one
    # contiguous run of the plane starting at k's offset, R = out_h * padded_w long (the columns
    # past out_w are junk that the forward drops and the backward feeds zero gradients), so the
    # copies and the col2im adds move long contiguous runs instead of short rows.

    @property
    def flat(self) -> bool:
        return len(self.kernel) == 2 and self.stride == (1, 1)

    @property
    def run(self) -> int:
        if self.flat:
            return self.out_size[0] * self.padded[1]
        return math.prod(self.out_size)

    def _flat_buffer(self, x: np.ndarray, value: Any = 0) -> np.ndarray:
        """The padded input as one flat buffer with a zero tail (the last runs read past the
        last plane by (kw - 1) * dilation_w)."""
        n, c = x.shape[:2]
        size = n * c * math.prod(self.padded)
        tail = (self.kernel[1] - 1) * self.dilation[1]
        buf = _SCRATCH.get((size + tail,), x.dtype)
        buf[size:] = 0
        dst = buf[:size].reshape((n, c) + self.padded)
        if any(lo or hi for lo, hi in self.pads):
            dst[...] = value
            dst[(slice(None), slice(None)) + tuple(
                slice(lo, lo + m) for (lo, _), m in zip(self.pads, self.in_size, strict=True))
            ] = x
        else:
            dst[...] = x
        return buf

    def _flat_view(self, buf: np.ndarray, n: int, c: int, offset: int = 0,
                   with_kernel: bool = True) -> np.ndarray:
        it = buf.itemsize
        plane = self.padded[0] * self.padded[1]
        shape: tuple
        strides: tuple
        if with_kernel:
            shape = (c, self.kernel[0], self.kernel[1], n, self.run)
            strides = (plane * it, self.dilation[0] * self.padded[1] * it,
                       self.dilation[1] * it, c * plane * it, it)
        else:
            shape = (c, n, self.run)
            strides = (plane * it, c * plane * it, it)
        return _as_strided(buf[offset:], shape, strides, writeable=not with_kernel)

    def cols_t(self, x: np.ndarray) -> np.ndarray:
        """im2col as one matrix (C*K, N*R)."""
        n, c = x.shape[:2]
        kk = math.prod(self.kernel)
        if self.flat:
            buf = self._flat_buffer(x)
            view = self._flat_view(buf, n, c)
            cols = _SCRATCH.get((c * kk, n * self.run), x.dtype)
            np.copyto(cols.reshape(view.shape), view)
            _SCRATCH.put(buf)
            return cols
        win = _windows(_pad_array(x, self.pads), self.kernel, self.stride, self.dilation,
                       self.out_size)
        d = len(self.kernel)
        order = (1,) + tuple(range(2, 2 + d)) + (0,) + tuple(range(2 + d, 2 + 2 * d))
        return np.ascontiguousarray(win.transpose(order)).reshape(c * kk, -1)

    def uncols_t(self, cols: np.ndarray, n: int, c: int) -> np.ndarray:
        """col2im of (C*K, N*R): the windows summed back into (N, C, *in_size), contiguous."""
        if self.flat:
            plane = self.padded[0] * self.padded[1]
            buf = np.zeros(n * c * plane + (self.kernel[1] - 1) * self.dilation[1],
                           dtype=cols.dtype)
            runs = cols.reshape((c,) + self.kernel + (n, self.run))
            for i in range(self.kernel[0]):
                for j in range(self.kernel[1]):
                    off = i * self.dilation[0] * self.padded[1] + j * self.dilation[1]
                    view = self._flat_view(buf, n, c, off, with_kernel=False)
                    view += runs[:, i, j]
            full = buf[:n * c * plane].reshape((n, c) + self.padded)
            return np.ascontiguousarray(_crop(full, self.pads))
        d = len(self.kernel)
        win = cols.reshape((c,) + self.kernel + (n,) + self.out_size)
        order = (d + 1, 0) + tuple(range(1, 1 + d)) + tuple(range(d + 2, 2 * d + 2))
        full = np.zeros((n, c) + self.padded, dtype=cols.dtype)
        _col2im_into(full, win.transpose(order), self.kernel, self.stride, self.dilation)
        return np.ascontiguousarray(_crop(full, self.pads))

    def rows_to_out(self, rows: np.ndarray, n: int, bias: Any = None) -> np.ndarray:
        """(O, N*R) products -> (N, O, *out_size), contiguous (junk columns dropped), plus
        the bias per channel if given (added in the same pass as the copy)."""
        o = rows.shape[0]
        if self.flat:
            r = rows.reshape(o, n, self.out_size[0], self.padded[1])[..., :self.out_size[1]]
        else:
            r = rows.reshape((o, n) + self.out_size)
        if bias is None:
            return np.ascontiguousarray(r.swapaxes(0, 1))
        out = np.empty((n, o) + self.out_size, dtype=rows.dtype)
        np.add(r.swapaxes(0, 1), bias.reshape(_channel_shape(out.ndim, o)), out=out)
        return out

    def out_to_rows(self, g: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """(N, O, *out_size) -> (O, N*R), zeros in the junk columns; written into ``rows``
        when given (flat geometry)."""
        n, o = g.shape[:2]
        if self.flat:
            if rows is None:
                rows = _SCRATCH.get((o, n * self.run), g.dtype)
            r4 = rows.reshape(o, n, self.out_size[0], self.padded[1])
            r4[..., self.out_size[1]:] = 0
            r4[..., :self.out_size[1]] = g.swapaxes(0, 1)
            return rows
        return np.ascontiguousarray(g.swapaxes(0, 1)).reshape(o, -1)


# The common case (2-D, stride 1, one group) runs a few images at a time. One chunk's im2col
# matrix (about _CHUNK_BYTES) stays in the CPU's cache from the copy that builds it to the
# product that reads it, instead of a whole batch's (11.5 MB in the benchmark's second layer)
# going out to memory and back; the backward rebuilds each chunk from the padded input rather
# than keeping the batch's matrix alive between the passes. Measured on the benchmark's
# 16->32 layer with a cold cache: 2.3 ms -> 1.6 ms forward.
# A chunk also stays under _CHUNK_COLUMNS columns: the weight gradient's product runs over
# them, and OpenBLAS takes several times longer on a long inner dimension with a small result
# (the first layer's (9 x 23296) @ (23296 x 16): 0.24 ms whole, 0.07 ms in 4096-column pieces).
# The sizes: 8 images a chunk in both of the benchmark's layers, against 4 and 5 at 1.5 MB and
# 4096 columns, measured 4.5 -> 4.4 ms for their forward and backward; 2 images (2.9 ms for the
# second layer's backward) and 16 (2.7) are slower than 8 (2.5).
#
# The input gradient goes through the kernel's column offsets on the gradient side. Column Q of
# a chunk's rows is output position q = h*pw + w, and dcols = W^T G0 puts entry (c, i, j) of it
# at input position q + i*dh*pw + j*dw, so col2im would cost one add per kernel offset. Summing
# over j first, D[(c, i), Q] = sum_j dcols[(c, i, j), Q - j*dw] = Wm @ [G0; G1; ...] with
# G_j = G0 shifted right by j*dw columns and Wm[(c, i), (j, o)] = W[o, c, i, j]: one product of
# the same cost, then one add per kernel row (3 instead of 9 for 3x3). A shift moves nothing
# across an output row's start but zeros: the last (kw-1)*dw columns of every output row are
# junk columns, zero in G0, and the chunk's first columns are filled with zeros.
# Measured on the benchmark's two layers, forward and backward: 5.3 -> 4.9 ms.
_CHUNK_BYTES = 3 << 20
_CHUNK_COLUMNS = 6144


def _chunked(geo: _Geometry, groups: int, transposed: bool) -> bool:
    return geo.flat and groups == 1 and not transposed


def _chunk_images(geo: _Geometry, n: int, c: int, itemsize: int) -> int:
    per_image = c * math.prod(geo.kernel) * geo.run * itemsize
    by_bytes = _CHUNK_BYTES // max(per_image, 1)
    return max(1, min(n, by_bytes, _CHUNK_COLUMNS // max(geo.run, 1)))


def _conv_forward_chunked(geo: _Geometry, x: np.ndarray, w2: np.ndarray, b: Any,
                          cache: dict) -> np.ndarray:
    """out = [W b] [cols; 1], chunk by chunk: cols (C*K, m*R) and a row of ones (the bias rides
    in the product instead of costing a pass of its own) -> (O, m*R) -> out[m images]."""
    n, c = x.shape[:2]
    o = w2.shape[0]
    oh, ow = geo.out_size
    pw, run = geo.padded[1], geo.run
    buf = geo._flat_buffer(x)
    cache["buf"] = buf
    m = _chunk_images(geo, n, c, x.itemsize)
    ck = c * math.prod(geo.kernel)
    extra = 0 if b is None else 1
    if b is not None:
        w2 = np.concatenate([w2, b.reshape(o, 1).astype(w2.dtype, copy=False)], axis=1)
    cols_buf = _SCRATCH.get(((ck + 1) * m * run,), x.dtype)
    rows_buf = _SCRATCH.get((o * m * run,), x.dtype)
    out = np.empty((n, o, oh, ow), dtype=np.result_type(x.dtype, w2.dtype))
    windows = geo._flat_view(buf, n, c)  # (C, kh, kw, N, R), sliced per chunk
    for s in range(0, n, m):
        k = min(m, n - s)
        view = windows[:, :, :, s:s + k]
        cols = cols_buf[:(ck + extra) * k * run].reshape(ck + extra, k * run)
        np.copyto(cols[:ck].reshape(view.shape), view)
        if extra:
            cols[ck] = 1
        rows = rows_buf[:o * k * run].reshape(o, k * run)
        np.matmul(w2, cols, out=rows)
        np.copyto(out[s:s + k], rows.reshape(o, k, oh, pw)[..., :ow].swapaxes(0, 1))
    _SCRATCH.put(cols_buf)
    _SCRATCH.put(rows_buf)
    return out


def _conv_backward_chunked(geo: _Geometry, g: np.ndarray, x: np.ndarray, w: np.ndarray,
                           need_x: bool, need_w: bool, need_b: bool, cache: dict) -> tuple:
    """Per chunk: g -> rows G0 (O, m*R); [dW db]^T += [cols; 1] G0^T (the bias gradient, the
    sum of g, comes out of the same product); the input gradient through G's shifted copies
    (see the comment above), added back one kernel row at a time."""
    n, c = x.shape[:2]
    o = w.shape[0]
    ph, pw = geo.padded
    run, plane = geo.run, ph * pw
    kh, kw = geo.kernel
    dh, dw = geo.dilation
    ck = c * kh * kw
    buf = _take(cache, "buf", lambda: geo._flat_buffer(x))
    m = _chunk_images(geo, n, c, x.itemsize)
    shifts = kw if need_x else 1  # G's blocks: G[j] is G0 shifted right by j * dw columns
    g_buf = _SCRATCH.get((shifts * o * m * run,), g.dtype)
    cols_buf = _SCRATCH.get(((ck + 1) * m * run,), g.dtype)  # [cols; 1], then D
    lo = 0 if need_w else ck  # the rows of [cols; 1] the weight/bias gradients need
    hi = ck + 1 if need_b else ck
    gwt = part = gbuf = wm = None
    if hi > lo:
        gwt = np.zeros((hi - lo, o), dtype=g.dtype)
        part = np.empty_like(gwt)
    if need_x:
        gbuf = np.zeros(n * c * plane + (kw - 1) * dw, dtype=g.dtype)
        wm = np.ascontiguousarray(w.transpose(1, 2, 3, 0)).reshape(c * kh, kw * o)
    windows = geo._flat_view(buf, n, c) if need_w else None  # (C, kh, kw, N, R)
    # one (C, N, R) view of the input gradient per kernel row, sliced per chunk
    targets = [geo._flat_view(gbuf, n, c, i * dh * pw, with_kernel=False)
               for i in range(kh)] if gbuf is not None else []
    for s in range(0, n, m):
        k = min(m, n - s)
        width = k * run
        gs = g_buf[:shifts * o * width].reshape(shifts, o, width)
        rows = geo.out_to_rows(g[s:s + k], gs[0])
        cols = cols_buf[:(ck + 1) * width].reshape(ck + 1, width)
        if gwt is not None and part is not None:
            if windows is not None:
                view = windows[:, :, :, s:s + k]
                np.copyto(cols[:ck].reshape(view.shape), view)
            if need_b:
                cols[ck] = 1
            np.matmul(cols[lo:hi], rows.T, out=part)
            np.add(gwt, part, out=gwt)
        if gbuf is not None and wm is not None:
            for j in range(1, shifts):
                d = j * dw
                gs[j, :, d:] = rows[:, :width - d]
                gs[j, :, :d] = 0
            dx = cols[:c * kh]
            np.matmul(wm, gs.reshape(shifts * o, width), out=dx)  # in the same buffer
            runs = dx.reshape(c, kh, k, run)
            for i, target in enumerate(targets):
                target[:, s:s + k] += runs[:, i]
    _SCRATCH.put(g_buf)
    _SCRATCH.put(cols_buf)
    _SCRATCH.put(buf)
    gw = gb = None
    if gwt is not None:
        if need_w:
            gw = np.ascontiguousarray(gwt[:ck].T).reshape(w.shape)
        if need_b:
            gb = np.ascontiguousarray(gwt[-1])
    gx = None
    if gbuf is not None:
        full = gbuf[:n * c * plane].reshape((n, c) + geo.padded)
        gx = np.ascontiguousarray(_crop(full, geo.pads))
    return gx, gw, gb


def _conv_geometry(p: dict, kernel: tuple, spatial: tuple) -> _Geometry:
    pads = tuple((q, q) for q in p["padding"])
    return _Geometry(spatial, kernel, p["stride"], pads, p["dilation"])


def _transposed_geometry(p: dict, kernel: tuple, spatial: tuple) -> _Geometry:
    """The geometry of the convolution whose input gradient a transposed one computes: its
    input is the transposed convolution's output, its output the transposed one's input."""
    full = tuple((n - 1) * s + d * (k - 1) + 1 + op for n, s, d, k, op in
                 zip(spatial, p["stride"], p["dilation"], kernel, p["output_padding"],
                     strict=True))
    pads = tuple((q, q) for q in p["padding"])
    inner = tuple(f - 2 * q for f, q in zip(full, p["padding"], strict=True))
    return _Geometry(inner, kernel, p["stride"], pads, p["dilation"], spatial)


def _mats(a: np.ndarray, groups: int) -> np.ndarray:
    """(G*P, M) -> (G, P, M) (no copy); unchanged for one group."""
    return a if groups == 1 else a.reshape(groups, -1, a.shape[-1])


def _unmats(a: np.ndarray, groups: int) -> np.ndarray:
    return a if groups == 1 else a.reshape(-1, a.shape[-1])


def _wmat2(w: np.ndarray, groups: int) -> np.ndarray:
    """The weight (A, B, *K) as (A, B*K), or (G, A/G, B*K) with groups."""
    return _mats(w.reshape(w.shape[0], -1), groups)


@defop("convolution", node="ConvolutionBackward0", save=(0, 1))
def _convolution(x: np.ndarray, w: np.ndarray, b: Any, *, stride: tuple, padding: tuple,
                 dilation: tuple, groups: int, transposed: bool, output_padding: tuple,
                 _cache: dict) -> np.ndarray:
    p = {"stride": stride, "padding": padding, "dilation": dilation,
         "output_padding": output_padding}
    n = x.shape[0]
    kernel = tuple(w.shape[2:])
    if not transposed:  # out = W cols
        geo = _conv_geometry(p, kernel, x.shape[2:])
        if _chunked(geo, groups, transposed):
            return _conv_forward_chunked(geo, x, w.reshape(w.shape[0], -1), b, _cache)
        cols = geo.cols_t(x)
        _cache["cols"] = cols
        rows = _unmats(np.matmul(_wmat2(w, groups), _mats(cols, groups)), groups)
        return geo.rows_to_out(rows, n, b)
    # transposed: out = col2im(W^T x), the input gradient of the matching convolution
    geo = _transposed_geometry(p, kernel, x.shape[2:])
    c_out = w.shape[1] * groups
    x2 = _mats(geo.out_to_rows(x), groups)
    cols = np.matmul(np.swapaxes(_wmat2(w, groups), -1, -2), x2)
    out = geo.uncols_t(_unmats(cols, groups), n, c_out)
    if b is not None:
        out += b.reshape(_channel_shape(out.ndim, c_out))
    return out


def _conv_backward_arrays(ctx: Any, g: np.ndarray, x: np.ndarray, w: np.ndarray) -> tuple:
    p = ctx.params
    groups = p["groups"]
    n = x.shape[0]
    kernel = tuple(w.shape[2:])
    need_x, need_w, need_b = ctx.needs_input_grad
    gx = gw = gb = None
    if not p["transposed"]:
        geo = _conv_geometry(p, kernel, x.shape[2:])
        if _chunked(geo, groups, False):
            return _conv_backward_chunked(geo, g, x, w, need_x, need_w, need_b, p["_cache"])
    if need_b:
        gb = _fast_sum(g, (0,) + tuple(range(2, g.ndim)), False)
    if not p["transposed"]:
        rows = geo.out_to_rows(g)
        g2 = _mats(rows, groups)  # (O, N*R)
        if need_w:
            cols = _take(p["_cache"], "cols", lambda: geo.cols_t(x))
            # dW^T = cols g^T, transposed back: the product with the long N*R dim inner to both
            # operands' rows runs about 1.7x faster in OpenBLAS than g cols^T (measured).
            gwt = np.matmul(_mats(cols, groups), np.swapaxes(g2, -1, -2))
            gw = np.ascontiguousarray(np.swapaxes(gwt, -1, -2)).reshape(w.shape)
            _SCRATCH.put(cols)
        else:
            _SCRATCH.put(p["_cache"].pop("cols", np.empty(0)))
        if need_x:
            wt = np.swapaxes(_wmat2(w, groups), -1, -2)
            dcols = _SCRATCH.get((wt.shape[-2] * groups, g2.shape[-1]), g.dtype)
            np.matmul(wt, g2, out=_mats(dcols, groups))
            gx = geo.uncols_t(dcols, n, x.shape[1])
            _SCRATCH.put(dcols)
        _SCRATCH.put(rows)
        return gx, gw, gb
    geo = _transposed_geometry(p, kernel, x.shape[2:])
    gcols = _mats(geo.cols_t(g), groups)  # (C_out*K, N*R)
    if need_w:
        x2 = _mats(geo.out_to_rows(x), groups)
        gw = np.matmul(x2, np.swapaxes(gcols, -1, -2)).reshape(w.shape)
    if need_x:
        gx = geo.rows_to_out(_unmats(np.matmul(_wmat2(w, groups), gcols), groups), n)
    return gx, gw, gb


@_convolution.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # dx = col2im(W^T g), dW = g im2col(x)^T, db = sum g
    x, w = ctx.saved
    if not _state.enabled:
        return tuple(None if r is None else Tensor._make(r) for r in
                     _conv_backward_arrays(ctx, grad._data, x._data, w._data))
    return _conv_backward_tensors(ctx, grad, x, w)


def _conv_backward_tensors(ctx: Any, g: Tensor, x: Tensor, w: Tensor) -> tuple:
    """The same gradients with Tensor ops (im2col / col2im entries), for create_graph."""
    p = ctx.params
    groups = p["groups"]
    need_x, need_w, need_b = ctx.needs_input_grad
    n = x.shape[0]
    kernel = tuple(w.shape[2:])
    gb = rd.sum(g, (0,) + tuple(range(2, g.ndim))) if need_b else None
    gx = gw = None

    def grouped(t: Tensor) -> Tensor:
        return t.reshape((t.shape[0], groups, -1) + tuple(t.shape[2:]))

    wm = w.reshape(groups, w.shape[0] // groups, -1)  # (G, A/G, B*K)
    if not p["transposed"]:
        geo = _conv_geometry(p, kernel, tuple(x.shape[2:]))
        g2 = grouped(g.reshape(n, g.shape[1], -1))  # (N, G, O/G, L)
        if need_w:
            cols = grouped(_im2col(x, geo=geo))
            gw = rd.sum(g2.matmul(cols.transpose(-1, -2)), (0,)).reshape(tuple(w.shape))
        if need_x:
            dcols = wm.transpose(-1, -2).matmul(g2).reshape(n, -1, g2.shape[-1])
            gx = _col2im_op(dcols, geo=geo, channels=x.shape[1])
        return gx, gw, gb
    geo = _transposed_geometry(p, kernel, tuple(x.shape[2:]))
    gcols = grouped(_im2col(g, geo=geo))  # (N, G, C_out/G*K, L_in)
    xg = grouped(x.reshape(n, x.shape[1], -1))  # (N, G, C_in/G, L_in)
    if need_w:
        gw = rd.sum(xg.matmul(gcols.transpose(-1, -2)), (0,)).reshape(tuple(w.shape))
    if need_x:
        gx = wm.matmul(gcols).reshape(tuple(x.shape))
    return gx, gw, gb


@defop("im2col", node="Im2ColBackward0")
def _im2col(x: np.ndarray, *, geo: _Geometry) -> np.ndarray:
    return geo.cols(x)


@_im2col.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # the adjoint of im2col is col2im
    geo = ctx.params["geo"]
    c = ctx.input_shapes[0][1]
    B = _backend()
    return (B.out(B.op(_col2im_op, B.val(grad) if B.tensors else grad._data, geo=geo,
                       channels=c)),)


@defop("col2im", node="Col2ImBackward0")
def _col2im_op(cols: np.ndarray, *, geo: _Geometry, channels: int) -> np.ndarray:
    return np.ascontiguousarray(geo.uncols(cols, channels))


@_col2im_op.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # the adjoint of col2im is im2col
    geo = ctx.params["geo"]
    B = _backend()
    return (B.out(B.op(_im2col, B.val(grad) if B.tensors else grad._data, geo=geo)),)


# ---------------------------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------------------------

def _flat_planes(x: np.ndarray, spatial: int) -> np.ndarray:
    """(..., *S) as (P, 1, *S): every plane a batch entry with one channel."""
    return x.reshape((-1, 1) + x.shape[x.ndim - spatial:])


def _plane_strides(size: tuple) -> tuple:
    """Flat-index strides of a C-ordered plane of ``size``."""
    return tuple(math.prod(size[i + 1:]) for i in range(len(size)))


def _max_pool_forward(x: np.ndarray, *, geo: _Geometry, _cache: dict) -> tuple:
    d = len(geo.kernel)
    lead = x.shape[:-d]
    planes = _flat_planes(x, d)
    fill = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    win = _windows(_pad_array(planes, geo.pads, fill), geo.kernel, geo.stride, geo.dilation,
                   geo.out_size)  # (P, 1, *K, *O)
    kk = math.prod(geo.kernel)
    # one contiguous slab per window entry, then elementwise maxima over the kk slabs (NumPy
    # reduces a tiny trailing axis slowly, so never reduce along the window axis itself)
    order = tuple(range(1, d + 1)) + (0,) + tuple(range(d + 1, 2 * d + 1))
    slabs = np.ascontiguousarray(win[:, 0].transpose(order)).reshape(kk, -1)
    best = slabs[0].copy()
    arg = np.zeros(best.shape, dtype=np.int64)
    for j in range(1, kk):
        s = slabs[j]
        hit = s > best  # strictly greater: the first maximum wins; NaN wins (torch)
        if x.dtype.kind == "f":
            hit |= np.isnan(s)
        np.maximum(best, s, out=best)
        arg += hit * (j - arg)
    strides = _plane_strides(geo.in_size)
    offsets = np.zeros(geo.kernel, dtype=np.int64)  # window entry -> flat offset in the plane
    base = np.zeros(geo.out_size, dtype=np.int64)  # window origin -> flat offset
    for i in range(d):
        shape = [1] * d
        shape[i] = -1
        offsets = offsets + (np.arange(geo.kernel[i]) * (geo.dilation[i] * strides[i])
                             ).reshape(shape)
        base = base + ((np.arange(geo.out_size[i]) * geo.stride[i] - geo.pads[i][0])
                       * strides[i]).reshape(shape)
    idx = np.take(offsets.reshape(-1), arg).reshape((-1,) + geo.out_size) + base
    _cache["indices"] = idx
    _cache["plane"] = math.prod(geo.in_size)
    out_shape = lead + geo.out_size
    return best.reshape(out_shape), idx.reshape(out_shape)


def _scatter_planes(g: np.ndarray, idx: np.ndarray, plane: int, overlap: bool) -> np.ndarray:
    """out[p, idx[p, j]] += g[p, j] over planes p of ``plane`` elements."""
    p = idx.shape[0]
    flat = (idx.reshape(p, idx.size // max(p, 1)) + (np.arange(p) * plane)[:, None]).reshape(-1)
    if overlap:
        out = np.bincount(flat, weights=g.reshape(-1), minlength=p * plane)
        return out.astype(g.dtype, copy=False)
    out = np.zeros(p * plane, dtype=g.dtype)
    out[flat] = g.reshape(-1)
    return out


def _index_pool_rule(ctx: Any, grads: list) -> tuple:  # the gradient goes to the argmax
    g = grads[0]
    if g is None:
        return (None,)
    shape = ctx.input_shapes[0]
    cache = ctx.params["_cache"]
    idx, plane = cache["indices"], cache["plane"]
    p = idx.shape[0]
    m = idx.size // max(p, 1)  # outputs per plane (explicit: p may be 0)
    if not _state.enabled:
        geo = ctx.params.get("geo")
        overlap = geo is None or any(s < (k - 1) * d + 1 for s, k, d in
                                     zip(geo.stride, geo.kernel, geo.dilation, strict=True))
        out = _scatter_planes(g._data.reshape(p, m), idx, plane, overlap)
        return (Tensor._make(out.reshape(shape)),)
    zeros = Tensor._make(np.zeros((p, plane), dtype=g._data.dtype))
    index = Tensor._make(idx.reshape(p, m))
    return (ix.scatter_add(zeros, 1, index, g.reshape(p, m)).reshape(shape),)


_max_pool = defop("max_pool2d", node="MaxPool2DWithIndicesBackward0", outputs=2, save=(0,))(
    _max_pool_forward)
_max_pool3d = defop("max_pool3d", node="MaxPool3DWithIndicesBackward0", outputs=2, save=(0,))(
    _max_pool_forward)
_max_pool.backward(_index_pool_rule)
_max_pool3d.backward(_index_pool_rule)


def _avg_divisor(geo: _Geometry, count_include_pad: bool, divisor_override: Any) -> Any:
    """The divisor of every output window (a number, or an array of the output's size)."""
    if divisor_override is not None:
        return float(divisor_override)
    div = np.ones((), dtype=np.float64)
    for n, k, s, (lo, _), o in zip(geo.in_size, geo.kernel, geo.stride, geo.pads,
                                   geo.out_size, strict=True):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, n + lo)  # torch: windows may reach into the padding
        if not count_include_pad:
            end = np.minimum(end, n)
            start = np.maximum(start, 0)
        div = np.multiply.outer(div, (end - start).astype(np.float64))
    return div


def _avg_pool_forward(x: np.ndarray, *, geo: _Geometry, divisor: Any) -> np.ndarray:
    d = len(geo.kernel)
    lead = x.shape[:-d]
    planes = _flat_planes(x, d)
    win = _windows(_pad_array(planes, geo.pads), geo.kernel, geo.stride, geo.dilation,
                   geo.out_size)
    total = np.sum(win, axis=tuple(range(2, 2 + d)))[:, 0]
    if x.dtype.kind in "iu":
        return np.trunc(total / divisor).astype(x.dtype).reshape(lead + geo.out_size)
    div = divisor if isinstance(divisor, float) else divisor.astype(x.dtype)
    return (total / div).astype(x.dtype, copy=False).reshape(lead + geo.out_size)


def _avg_pool_rule(ctx: Any, grad: Tensor) -> tuple:  # every input in a window gets g / div
    p = ctx.params
    geo, divisor = p["geo"], p["divisor"]
    d = len(geo.kernel)
    shape = ctx.input_shapes[0]
    dt = grad._data.dtype
    div = divisor if isinstance(divisor, float) else divisor.astype(dt)
    kk = math.prod(geo.kernel)
    nplanes = math.prod(shape[:-d])
    if not _state.enabled:
        g = (grad._data / div).astype(dt, copy=False).reshape(
            (nplanes, 1) + (1,) * d + geo.out_size)
        win = np.broadcast_to(g, (nplanes, 1) + geo.kernel + geo.out_size)
        full = _col2im(win, (nplanes, 1) + geo.padded, geo.kernel, geo.stride, geo.dilation)
        return (Tensor._make(np.ascontiguousarray(_crop(full, geo.pads)).reshape(shape)),)
    g = grad / (div if isinstance(div, float) else Tensor._make(div))
    cols = g.reshape(nplanes, 1, math.prod(geo.out_size)).expand(
        nplanes, kk, math.prod(geo.out_size))
    return (_col2im_op(cols, geo=geo, channels=1).reshape(shape),)


_avg_pool = defop("avg_pool2d", node="AvgPool2DBackward0", save=(0,))(_avg_pool_forward)
_avg_pool3d = defop("avg_pool3d", node="AvgPool3DBackward0", save=(0,))(_avg_pool_forward)
_avg_pool.backward(_avg_pool_rule)
_avg_pool3d.backward(_avg_pool_rule)


def _adaptive_matrix(n: int, o: int, dtype: Any) -> np.ndarray:
    """(o, n) averaging matrix of adaptive pooling: row i covers [floor(i n/o), ceil((i+1) n/o))."""
    i = np.arange(o)
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)
    cols = np.arange(n)
    inside = (cols[None, :] >= start[:, None]) & (cols[None, :] < end[:, None])
    return (inside / np.maximum(end - start, 1)[:, None]).astype(dtype)


def _separable_forward(x: np.ndarray, *, mats: tuple) -> np.ndarray:
    """Apply one (out, in) matrix along each of the last len(mats) dims."""
    k = len(mats)
    for i, m in enumerate(mats):
        ax = x.ndim - k + i
        x = np.moveaxis(np.moveaxis(x, ax, -1) @ m.T.astype(x.dtype, copy=False), -1, ax)
    return np.ascontiguousarray(x)


def _separable_rule(ctx: Any, grad: Tensor) -> tuple:  # a linear map: the transposed matrices
    B, _, g = _unpack(ctx, grad)
    mats = ctx.params["mats"]
    k = len(mats)
    nd = len(ctx.input_shapes[0])
    dt = grad._data.dtype
    for i, m in enumerate(mats):
        ax = nd - k + i
        g = B.movedim(B.matmul(B.movedim(g, ax, -1), B.const(m.astype(dt))), -1, ax)
    if not B.tensors:
        g = np.ascontiguousarray(g)
    return (B.out(g),)


def _separable_entry(name: str, node: str) -> Any:
    adaptive = name.startswith("adaptive")  # torch's backward takes the input; upsampling's not
    entry = defop(name, node=node, save=(0,) if adaptive else ())(_separable_forward)
    entry.backward(_separable_rule)
    if adaptive:
        _linked(entry)
    return entry


# linear maps along each spatial dim: adaptive average pooling and (bi/tri)linear and bicubic
# interpolation, all one matrix per dim; nearest interpolation is an index gather
SEPARABLE = {
    name: _separable_entry(name, node) for name, node in (
        ("adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0"),
        ("adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0"),
        ("upsample_linear1d", "UpsampleLinear1DBackward0"),
        ("upsample_bilinear2d", "UpsampleBilinear2DBackward0"),
        ("upsample_trilinear3d", "UpsampleTrilinear3DBackward0"),
        ("upsample_bicubic2d", "UpsampleBicubic2DBackward0"),
    )
}
GATHERS = {
    (mode, k): _gather_pad_entry(
        f"upsample_{mode}{k}d",
        f"Upsample{'NearestExact' if mode == 'nearest_exact' else 'Nearest'}{k}DBackward0")
    for mode in ("nearest", "nearest_exact") for k in (1, 2, 3)
}


def _adaptive_index(n: int, o: int) -> np.ndarray:
    """(o, kmax) input positions of each adaptive window, the last repeated to fill."""
    i = np.arange(o)
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)
    k = int((end - start).max()) if o else 0
    return np.minimum(start[:, None] + np.arange(k)[None, :], (end - 1)[:, None])


def _adaptive_max_forward(x: np.ndarray, *, output_size: tuple, _cache: dict) -> tuple:
    """Max over each adaptive window of the last len(output_size) dims: the windows gathered
    as (P, o1, k1, o2, k2, ...) (_adaptive_index repeats a short window's last position), the
    first maximum (a NaN counts as one) of each, and its flat index in the input plane."""
    d = len(output_size)
    lead, size = x.shape[:-d], x.shape[-d:]
    shape = lead + tuple(output_size)
    plane = math.prod(size)
    _cache["plane"] = plane
    if x.size == 0 or 0 in output_size:
        idx = np.zeros((math.prod(lead), math.prod(output_size)), dtype=np.int64)
        _cache["indices"] = idx
        return np.empty(shape, dtype=x.dtype), idx.reshape(shape)
    windows = [_adaptive_index(n, o) for n, o in zip(size, output_size, strict=True)]
    index = []
    for i, w in enumerate(windows):  # dim i's (o_i, k_i) positions on axes 2i, 2i + 1
        at = [1] * (2 * d)
        at[2 * i], at[2 * i + 1] = w.shape
        index.append(w.reshape(at))
    win = x.reshape((-1,) + size)[(slice(None),) + tuple(index)]
    p = win.shape[0]
    kernel = tuple(w.shape[1] for w in windows)
    order = (0,) + tuple(range(1, 2 * d, 2)) + tuple(range(2, 2 * d + 1, 2))
    flat = win.transpose(order).reshape((p,) + tuple(output_size) + (math.prod(kernel),))
    arg = np.argmax(flat, axis=-1)
    values = np.take_along_axis(flat, arg[..., None], axis=-1)[..., 0]
    idx = np.zeros(arg.shape, dtype=np.int64)
    for i, (w, off) in enumerate(zip(windows, np.unravel_index(arg, kernel), strict=True)):
        o = np.arange(output_size[i]).reshape([1] * (1 + i) + [-1] + [1] * (d - 1 - i))
        idx = idx * size[i] + w[o, off]  # the input coordinate along dim i
    _cache["indices"] = idx.reshape(p, -1)
    return values.reshape(shape), idx.reshape(shape)


_adaptive_max_pool = defop("adaptive_max_pool2d", node="AdaptiveMaxPool2DBackward0",
                           outputs=2, save=(0,))(_adaptive_max_forward)
_adaptive_max_pool3d = defop("adaptive_max_pool3d", node="AdaptiveMaxPool3DBackward0",
                             outputs=2, save=(0,))(_adaptive_max_forward)
def _adaptive_max_rule(ctx: Any, grads: list) -> tuple:  # to the argmax; torch refuses empties
    g = grads[0]
    d = len(ctx.params["output_size"])
    if g is not None:
        sizes = list(g.shape)
        for i in range(len(sizes) - d, len(sizes)):
            if sizes[i] == 0:
                raise RuntimeError(
                    f"adaptive_max_pool{d}d_backward(): Expected grad_output to have non-zero "
                    f"size for non-batch dimensions, but grad_output has sizes {sizes} with "
                    f"dimension {i} being empty")
    return _index_pool_rule(ctx, grads)


_adaptive_max_pool.backward(_adaptive_max_rule)
_adaptive_max_pool3d.backward(_adaptive_max_rule)


def _max_unpool_forward(x: np.ndarray, *, indices: np.ndarray, out_size: tuple) -> np.ndarray:
    d = len(out_size)
    lead = x.shape[:-d]
    plane = math.prod(out_size)
    idx = indices.reshape(math.prod(lead), -1)
    bad = (idx < 0) | (idx >= plane)
    if bad.any():
        sizes = "x".join(str(s) for s in out_size)
        raise RuntimeError(
            f"Found an invalid max index: {int(idx[bad][0])} (output volumes are of size "
            f"{sizes})"
        )
    out = np.zeros((idx.shape[0], plane), dtype=x.dtype)
    np.put_along_axis(out, idx, x.reshape(idx.shape), axis=1)
    return out.reshape(lead + tuple(out_size))


def _max_unpool_rule(ctx: Any, grad: Tensor) -> tuple:  # each input value came from one slot
    p = ctx.params
    shape = ctx.input_shapes[0]
    d = len(p["out_size"])
    idx = p["indices"].reshape(math.prod(shape[:-d]), math.prod(shape[-d:]))
    if not _state.enabled:
        g = grad._data.reshape(idx.shape[0], math.prod(grad.shape) // max(idx.shape[0], 1))
        return (Tensor._make(np.take_along_axis(g, idx, axis=1).reshape(shape)),)
    g = grad.reshape(idx.shape[0], math.prod(grad.shape) // max(idx.shape[0], 1))
    return (ix.gather(g, 1, Tensor._make(idx)).reshape(shape),)


_max_unpool2d = defop("max_unpool2d", node="MaxUnpool2DBackward0")(_max_unpool_forward)
_max_unpool3d = defop("max_unpool3d", node="MaxUnpool3DBackward0")(_max_unpool_forward)
_max_unpool2d.backward(_max_unpool_rule)
_max_unpool3d.backward(_max_unpool_rule)


def _shuffle_perm(n: int, shuffle: bool) -> tuple:
    head = tuple(range(n))
    if shuffle:  # (c, r, r, h, w) -> (c, h, r, w, r)
        return head + (n, n + 3, n + 1, n + 4, n + 2)
    return head + (n, n + 2, n + 4, n + 1, n + 3)  # (c, h, r, w, r) -> (c, r, r, h, w)


@defop("pixel_shuffle", node="PixelShuffleBackward0")
def _pixel_shuffle(x: np.ndarray, *, r: int) -> np.ndarray:
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = x.reshape(lead + (c // (r * r), r, r, h, w)).transpose(_shuffle_perm(len(lead), True))
    return np.ascontiguousarray(y).reshape(lead + (c // (r * r), h * r, w * r))


@defop("pixel_unshuffle", node="PixelUnshuffleBackward0")
def _pixel_unshuffle(x: np.ndarray, *, r: int) -> np.ndarray:
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    y = x.reshape(lead + (c, h // r, r, w // r, r)).transpose(_shuffle_perm(len(lead), False))
    return np.ascontiguousarray(y).reshape(lead + (c * r * r, h // r, w // r))


@_pixel_shuffle.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # a permutation: undo it
    B = _backend()
    g = grad if B.tensors else grad._data
    return (B.out(B.op(_pixel_unshuffle, g, r=ctx.params["r"])),)


@_pixel_unshuffle.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # a permutation: undo it
    B = _backend()
    g = grad if B.tensors else grad._data
    return (B.out(B.op(_pixel_shuffle, g, r=ctx.params["r"])),)


# ---------------------------------------------------------------------------------------------
# Scaled dot-product attention (torch's fused CPU kernel: one node for q, k, v)
#
#   S = q k^T scale + mask;  P = softmax(S) (rows that are all -inf give 0);  out = P v
#   backward: dv = P^T g;  dP = g v^T;  dS = P (dP - rowsum(g * out));  dq = dS k scale;
#             dk = dS^T q scale
# ---------------------------------------------------------------------------------------------

def _repeat_heads(x: Any, groups: int, B: Any) -> Any:
    if groups == 1:
        return x
    if B.tensors:
        return sh.repeat_interleave(x, groups, dim=-3)
    return np.repeat(x, groups, axis=-3)


def _sum_heads(x: Any, groups: int, B: Any) -> Any:
    if groups == 1:
        return x
    shape = tuple(x.shape)
    grouped = shape[:-3] + (shape[-3] // groups, groups) + shape[-2:]
    return B.sum(B.reshape(x, grouped), (len(shape) - 2,), False)


@defop("sdpa", node="ScaledDotProductFlashAttentionForCpuBackward0", save=(0, 1, 2))
def _sdpa(q: np.ndarray, k: np.ndarray, v: np.ndarray, *, scale: float, mask: Any,
          groups: int, _cache: dict) -> np.ndarray:
    k = _repeat_heads(k, groups, _Arrays)
    v = _repeat_heads(v, groups, _Arrays)
    s = np.matmul(q, np.swapaxes(k, -1, -2))
    s *= scale
    if mask is not None:
        s += mask
    prob = _safe_softmax_np(s, -1)
    out = np.matmul(prob, v)
    _cache["prob"] = prob
    _cache["out"] = out
    return out


@_sdpa.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # see the section comment
    B, (q, k, v), g = _unpack(ctx, grad)
    p = ctx.params
    groups, scale = p["groups"], p["scale"]
    kr = _repeat_heads(k, groups, B)
    vr = _repeat_heads(v, groups, B)
    if B.tensors:
        s = B.matmul(q, B.mT(kr)) * scale
        if p["mask"] is not None:
            s = s + B.const(p["mask"])
        prob = _safe_softmax(s, dim=s.ndim - 1)
        out = B.matmul(prob, vr)
    else:
        cache = p["_cache"]
        if "prob" not in cache:  # a second backward: recompute the forward's intermediates
            _sdpa.forward(q, k, v, scale=scale, mask=p["mask"], groups=groups, _cache=cache)
        prob, out = cache.pop("prob"), cache.pop("out")
        if groups == 1:
            return _sdpa_grads(g, q, k, v, prob, out, scale, ctx.needs_input_grad)
    need_q, need_k, need_v = ctx.needs_input_grad
    gq = gk = gv = None
    if need_v:
        gv = B.out(_sum_heads(B.matmul(B.mT(prob), g), groups, B))
    if need_q or need_k:
        dp = B.matmul(g, B.mT(vr))
        ds = prob * (dp - B.sum(g * out, (-1,)))
        if need_q:
            gq = B.out(B.matmul(ds, kr) * scale)
        if need_k:
            gk = B.out(_sum_heads(B.matmul(B.mT(ds), q) * scale, groups, B))
    return gq, gk, gv


def _sdpa_grads(g: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray, prob: np.ndarray,
                out: np.ndarray, scale: float, needs: tuple) -> tuple:
    """The rule above on the arrays, one key/value head per query head. Each gradient is
    written in its input's memory layout: q, k and v are usually (B, T, H, D) projections seen
    as (B, H, T, D), and a gradient laid out the same way goes back through that transpose and
    view without a copy (three copies of the whole activation per attention layer otherwise).
    The scale is applied once, to ds, instead of to both of its products."""
    need_q, need_k, need_v = needs
    gq = gk = gv = None
    if need_v:
        gv = np.matmul(np.swapaxes(prob, -1, -2), g, out=np.empty_like(v))
    if need_q or need_k:
        ds = np.matmul(g, np.swapaxes(v, -1, -2))  # dp
        ds -= _fast_sum(g * out, (-1,), True)
        ds *= prob
        ds *= scale
        if need_q:
            gq = np.matmul(ds, k, out=np.empty_like(q))
        if need_k:
            gk = np.matmul(np.swapaxes(ds, -1, -2), q, out=np.empty_like(k))
    return tuple(None if a is None else Tensor._make(a) for a in (gq, gk, gv))


# ---------------------------------------------------------------------------------------------
# CTC loss (torch's _ctc_loss: per-sample negative log likelihoods; the reduction is outside)
#
#   labels l' = blank, l1, blank, l2, ..., blank  (2S + 1 states per sample)
#   alpha_t(s) = lp_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2)*)
#   beta_t(s)  = lp_t(l'_s) + logsumexp(beta_{t+1}(s), beta_{t+1}(s+1), beta_{t+1}(s+2)*)
#     (* when l'_s is a label different from l'_{s-2}); nll = -log(alpha_{T-1}(2S) +
#     alpha_{T-1}(2S-1)). One Python step per time step, every sample and state at once.
#   backward (torch's formula, the gradient for log-softmax outputs), with
#   ab_t(c) = logsumexp over the states s with l'_s = c of alpha_t(s) + beta_t(s):
#     d/dlp_t(c) = exp(lp_t(c)) - exp(ab_t(c) + nll - lp_t(c))
#     for t < the sample's input length, 0 after it (and 0 for an infinite loss with
#     zero_infinity).
# ---------------------------------------------------------------------------------------------

def _log_add3(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """log(e^a + e^b + e^c), -inf where all three are."""
    m = np.maximum(np.maximum(a, b), c)
    shift = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.log(np.exp(a - shift) + np.exp(b - shift) + np.exp(c - shift))
    out += shift
    return out


def _ctc_shift(x: np.ndarray, k: int, allowed: Any = None) -> np.ndarray:
    """x moved k states up along the last axis (k < 0: down), -inf shifted in; -inf where
    ``allowed`` is False."""
    out = np.full_like(x, -np.inf)
    if k > 0:
        out[..., k:] = x[..., :-k]
    else:
        out[..., :k] = x[..., -k:]
    if allowed is not None:
        out[~allowed] = -np.inf
    return out


def _ctc_forward(lp: np.ndarray, *, labels: np.ndarray, input_lengths: np.ndarray,
                 target_lengths: np.ndarray, zero_infinity: bool, _cache: dict) -> np.ndarray:
    t_max, n, _ = lp.shape
    states = labels.shape[1]
    inf = np.inf
    last = 2 * target_lengths  # the final blank's state
    valid = np.arange(states)[None, :] <= last[:, None]
    skip = np.zeros((n, states), dtype=bool)  # s - 2 -> s allowed (into s; from s - 2)
    skip[:, 3::2] = labels[:, 3::2] != labels[:, 1:-2:2]
    lpl = np.take_along_axis(lp, np.broadcast_to(labels[None], (t_max, n, states)), axis=2)
    alpha = np.full((t_max, n, states), -inf, dtype=lp.dtype)
    if t_max:
        alpha[0, :, 0] = lpl[0, :, 0]
        alpha[0, :, 1:2] = np.where(target_lengths[:, None] > 0, lpl[0, :, 1:2], -inf)
    for t in range(1, t_max):
        a = alpha[t - 1]
        alpha[t] = _log_add3(a, _ctc_shift(a, 1), _ctc_shift(a, 2, skip)) + lpl[t]
        alpha[t][~valid] = -inf
    rows = np.arange(n)
    end = np.maximum(input_lengths - 1, 0)
    with np.errstate(invalid="ignore"):
        fin = alpha[end, rows, last]
        fin2 = np.where(target_lengths > 0, alpha[end, rows, np.maximum(last - 1, 0)], -inf)
        nll = -np.logaddexp(fin, fin2)
    nll = np.where(input_lengths > 0, nll, np.where(target_lengths > 0, inf, 0)).astype(lp.dtype)
    _cache.update(alpha=alpha, lpl=lpl, skip=skip, valid=valid, nll=nll)
    return nll


def _ctc_rule(ctx: Any, grad: Tensor) -> tuple:  # see the section comment
    p, c = ctx.params, ctx.params["_cache"]
    lp_t, nll_t = ctx.saved
    lp = lp_t._data
    labels, il, tl = p["labels"], p["input_lengths"], p["target_lengths"]
    alpha, lpl, skip, valid, nll = c["alpha"], c["lpl"], c["skip"], c["valid"], c["nll"]
    t_max, n, classes = lp.shape
    inf = np.inf
    rows = np.arange(n)
    last = 2 * tl
    beta = np.full_like(alpha, -inf)
    end = il - 1
    live = il > 0
    beta[end[live], rows[live], last[live]] = lpl[end[live], rows[live], last[live]]
    two = live & (tl > 0)
    beta[end[two], rows[two], last[two] - 1] = lpl[end[two], rows[two], last[two] - 1]
    skip_from = np.zeros_like(skip)  # s + 2 -> s (backwards) allowed when skip[s + 2]
    skip_from[:, :-2] = skip[:, 2:]
    for t in range(t_max - 2, -1, -1):
        b = beta[t + 1]
        new = _log_add3(b, _ctc_shift(b, -1), _ctc_shift(b, -2, skip_from)) + lpl[t]
        new[~valid] = -inf
        beta[t] = np.where((t < end)[:, None], new, beta[t])
    ab = alpha + beta
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        top = np.max(ab, axis=2, keepdims=True)
        shift = np.where(np.isfinite(top), top, 0).astype(lp.dtype)
        onehot = (labels[:, :, None] == np.arange(classes)[None, None, :]).astype(lp.dtype)
        sums = np.matmul(np.exp(ab - shift).transpose(1, 0, 2), onehot).transpose(1, 0, 2)
        lcab = np.log(sums) + shift
        g = np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)
    g[np.arange(t_max)[:, None] >= il[None, :]] = 0
    if p["zero_infinity"]:
        g[:, nll == inf] = 0
    g *= grad._data[None, :, None]
    g = g.astype(lp.dtype, copy=False)
    if _state.enabled:  # create_graph: a result whose own backward torch does not have
        return (_ctc_grad(lp_t, nll_t, value=g),)
    return (Tensor._make(g),)


_ctc_loss = defop("ctc_loss", node="CtcLossBackward0", save=(0,), save_output=True)(
    _ctc_forward)
_ctc_loss.backward(_ctc_rule)


@_ctc_loss.jvp
def _(tangents: list, inputs: tuple, out: Tensor, **p: Any) -> Tensor:
    # loss n depends on log_probs[:, n] only, so (J^T 1)[:, n] is row n of J: J v = sum (J^T 1) v
    from ..autograd import grad
    from ..autograd.grad_mode import enable_grad

    lp = inputs[0]
    with enable_grad():
        x = lp if lp._requires_grad else Tensor._make(lp._data, requires_grad=True)
        again = _ctc_loss(x, **p)
        (g,) = grad(again, x, Tensor._make(np.ones(again.shape, again._data.dtype)))
    return (g.detach() * tangents[0]).sum((0, 2))


@defop("ctc_loss_backward", node="NotImplemented")
def _ctc_grad(lp: np.ndarray, nll: np.ndarray, *, value: np.ndarray) -> np.ndarray:
    return value


_ctc_grad.node_cls._cpp_name = "torch::autograd::NotImplemented"


@_ctc_grad.backward
def _(ctx: Any, grad: Tensor) -> tuple:
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


# ---------------------------------------------------------------------------------------------
# Randomized leaky ReLU, margin losses, embedding bags
# ---------------------------------------------------------------------------------------------

@defop("rrelu_with_noise", node="RreluWithNoiseBackward0", save=(0,))
def _rrelu(x: np.ndarray, *, noise: np.ndarray) -> np.ndarray:
    return x * noise


@_rrelu.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # the slope each element was given (1 where x > 0)
    B, _, g = _unpack(ctx, grad)
    return (B.out(g * B.const(ctx.params["noise"])),)


def _multi_margin_terms(B: Any, x: Any, onehot: np.ndarray, margin: float) -> tuple:
    """z[n, i] = margin - x[n, y_n] + x[n, i] and the mask of the terms that count."""
    xy = B.sum(x * B.const(onehot), (-1,))
    z = (x - xy) + margin
    return z, (z > 0) & B.const(~onehot)


@defop("multi_margin_loss", node="MultiMarginLossBackward0", save=(0,))
def _multi_margin_loss(x: np.ndarray, *, onehot: np.ndarray, p: int, margin: float,
                       weight: Any, reduction: int) -> np.ndarray:
    z, on = _multi_margin_terms(_Arrays, x, onehot, margin)
    h = np.where(on, z, 0) if p == 1 else np.where(on, z * z, 0)
    if weight is not None:
        h = h * weight[np.argmax(onehot, axis=-1)][..., None]
    loss = np.sum(h, axis=-1) / x.shape[-1]
    return _reduce(loss.astype(x.dtype, copy=False), reduction)


@_multi_margin_loss.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # each counted term: +p z^(p-1) at i, - at the target
    B, (x,), g = _unpack(ctx, grad)
    prm = ctx.params
    onehot = prm["onehot"]
    z, on = _multi_margin_terms(B, x, onehot, prm["margin"])
    d = on * (1.0 if prm["p"] == 1 else z * 2.0)
    if prm["weight"] is not None:
        d = d * B.const(prm["weight"][np.argmax(onehot, axis=-1)][..., None])
    scale = g * (_norm(prm["reduction"], ctx.input_shapes[0][:-1]) / ctx.input_shapes[0][-1])
    if prm["reduction"] == 0 and len(ctx.input_shapes[0]) > 1:
        scale = B.reshape(scale, tuple(ctx.input_shapes[0][:-1]) + (1,))
    d = d * scale
    return (B.out(d - B.const(onehot.astype(grad._data.dtype)) * B.sum(d, (-1,))),)


@defop("multilabel_margin_loss", node="MultilabelMarginLossBackward0", save=(0,))
def _multilabel_margin_loss(x: np.ndarray, *, is_target: np.ndarray, reduction: int
                            ) -> np.ndarray:
    pairs = is_target[..., :, None] & ~is_target[..., None, :]  # (.., target j, other i)
    z = 1.0 - (x[..., :, None] - x[..., None, :])
    loss = np.sum(np.where(pairs, np.maximum(z, 0), 0), axis=(-1, -2)) / x.shape[-1]
    return _reduce(loss.astype(x.dtype, copy=False), reduction)


@_multilabel_margin_loss.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # each active pair: -1 at the target, +1 at the other
    B, (x,), g = _unpack(ctx, grad)
    prm = ctx.params
    it = prm["is_target"]
    pairs = it[..., :, None] & ~it[..., None, :]
    xj = B.reshape(x, tuple(x.shape) + (1,))
    xi = B.reshape(x, tuple(x.shape[:-1]) + (1, x.shape[-1]))
    active = (1.0 - (xj - xi) > 0) & B.const(pairs)
    shape = ctx.input_shapes[0]
    scale = g * (_norm(prm["reduction"], shape[:-1]) / shape[-1])
    if prm["reduction"] == 0 and len(shape) > 1:
        scale = B.reshape(scale, tuple(shape[:-1]) + (1,))
    d = B.sum(active * 1.0, (-2,), False) - B.sum(active * 1.0, (-1,), False)
    return (B.out(d * scale),)


@defop("embedding_bag", node="EmbeddingBagBackward0", save=(0, 1))
def _embedding_bag(w: np.ndarray, psw: Any, *, indices: np.ndarray, segment: np.ndarray,
                   keep: np.ndarray, n_bags: int, mode: int, scale_grad_by_freq: bool,
                   _cache: dict) -> np.ndarray:
    """Bags of rows: segment[j] is the bag of indices[j]; rows with keep False are left out
    (padding_idx). mode 0 sum, 1 mean, 2 max."""
    rows = w[indices]
    if psw is not None:
        rows = rows * psw[:, None]
    seg, rows = segment[keep], rows[keep]
    d = w.shape[1]
    if mode == 2:
        out = np.full((n_bags, d), -np.inf, dtype=w.dtype)
        np.maximum.at(out, seg, rows)
        pos = np.where(rows == out[seg], np.arange(len(seg))[:, None], len(seg))
        first = np.full((n_bags, d), len(seg), dtype=np.int64)
        np.minimum.at(first, seg, pos)
        empty = first == len(seg)
        out[empty] = 0
        kept_index = indices[keep]
        _cache["max_rows"] = np.where(empty, -1, kept_index[np.minimum(first, len(seg) - 1)])
        return out
    out = _row_sums(n_bags, seg, rows) if len(seg) else np.zeros((n_bags, d), dtype=w.dtype)
    if mode == 1:
        counts = np.bincount(seg, minlength=n_bags)
        out = out / np.maximum(counts, 1)[:, None].astype(w.dtype)
        _cache["counts"] = counts
    return out.astype(w.dtype, copy=False)


@_embedding_bag.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # each bag's gradient to the rows it was made of
    p = ctx.params
    v, d = ctx.input_shapes[0]
    need_w, need_psw = ctx.needs_input_grad
    idx, seg, keep = p["indices"][p["keep"]], p["segment"][p["keep"]], p["keep"]
    dt = grad._data.dtype
    B = _backend()
    g = B.val(grad) if B.tensors else grad._data
    gw = gpsw = None
    if p["mode"] == 2:
        rows = p["_cache"]["max_rows"]
        hit = rows >= 0
        cols = np.broadcast_to(np.arange(d), rows.shape)[hit]
        flat = rows[hit] * d + cols
        if B.tensors:
            zeros = Tensor._make(np.zeros(v * d, dtype=dt))
            gw = ix.index_put(zeros, (flat,), g[Tensor._make(hit)], accumulate=True)
            return gw.reshape(v, d), None
        counts = np.bincount(flat, weights=g[hit], minlength=v * d).astype(dt).reshape(v, d)
        return Tensor._make(counts), None
    scale = np.ones(len(seg), dtype=dt)
    if p["mode"] == 1:
        scale = scale / np.maximum(p["_cache"]["counts"], 1)[seg].astype(dt)
    if p.get("scale_grad_by_freq"):
        counts = np.bincount(idx, minlength=v)
        scale = scale / counts[idx].astype(dt)
    if B.tensors:
        per_row = g[Tensor._make(seg)]
    else:
        per_row = g[seg]
    w_saved, psw_saved = ctx.saved
    if need_psw:
        wrows = w_saved[Tensor._make(idx)] if B.tensors else w_saved._data[idx]
        full = np.zeros(len(keep), dtype=dt)
        if B.tensors:
            part = B.sum(per_row * wrows, (-1,), False) * B.const(scale)
            gpsw = ix.index_put(Tensor._make(full), (np.nonzero(keep)[0],), part)
        else:
            full[keep] = np.sum(per_row * wrows, axis=-1) * scale
            gpsw = Tensor._make(full)
    if need_w:
        if psw_saved is None:
            factor = B.const(scale[:, None])
        elif B.tensors:
            factor = psw_saved[Tensor._make(np.nonzero(keep)[0])].unsqueeze(1) * B.const(
                scale[:, None])
        else:
            factor = (psw_saved._data[keep] * scale)[:, None]
        if B.tensors:
            zeros = Tensor._make(np.zeros((v, d), dtype=dt))
            gw = ix.index_put(zeros, (idx,), per_row * factor, accumulate=True)
        else:
            gw = Tensor._make(_row_sums(v, idx, (per_row * factor).astype(dt, copy=False)))
    return gw, gpsw


# Rules whose gradient torch's double-backward node ties to the forward's inputs (see _link)
for _entry in (_leaky_relu, _leaky_relu_, _hardtanh, _hardtanh_, _threshold, _threshold_,
               _hardshrink, _softshrink, _prelu, _rrelu, _nll_loss, _nll_loss2d, _batch_norm,
               _group_norm, _layer_norm, _convolution, _max_pool, _max_pool3d, _avg_pool,
               _avg_pool3d, _adaptive_max_pool, _adaptive_max_pool3d):
    _linked(_entry)

# The registry entries this module adds (tests check that every one is exercised).
NAMES = tuple(name for name in REGISTRY if name not in _BEFORE)
