"""Activation functions: the fused entries behind ``F.gelu``, ``silu``, ``mish``, ``softplus``,
``elu``/``celu``/``selu``, ``leaky_relu``, ``hardtanh``, ``hardsigmoid``, ``hardswish``,
``logsigmoid``, ``threshold``, the shrinks, ``glu``, ``prelu``, ``rrelu`` (with its noise) and
``_safe_softmax``. Each forward and its backward rule side by side, the rule in Tensor terms;
their first-order paths on the arrays are in ops/fast_paths.py.
"""


from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import elementwise as ew
from . import reduction as rd
from . import shape as sh
from ._registry import defop
from .erf import INV_SQRT_2PI, SQRT1_2, TWO_OVER_SQRTPI, _erf, _phi_gauss, erf_array
from .nn_common import _Arrays, _fast_sum, _float, _linked, _quiet, _sigmoid, _Tensors

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


GELU_TANH_BETA = math.sqrt(2.0) * TWO_OVER_SQRTPI * 0.5  # sqrt(2 / pi)


def gelu_tanh_slope(x: Any, x_sq: Any, t: Any) -> Any:
    """The tanh approximation's derivative from x, x^2 and t = tanh(beta (x + 0.044715 x^3)),
    in plain arithmetic (arrays or Tensors)."""
    return (t + 1.0) * 0.5 + x * 0.5 * (1.0 - t * t) * GELU_TANH_BETA * (
        x_sq * (3 * 0.044715) + 1.0)


@_gelu.backward
def gelu_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx x Phi(x) = Phi + x phi
    (x,) = ctx.saved
    if ctx.params["approximate"] == "tanh":
        x_sq = x * x
        d = gelu_tanh_slope(x, x_sq, ew.tanh((x + x_sq * x * 0.044715) * GELU_TANH_BETA))
    else:
        cdf = (_erf(x * SQRT1_2) + 1.0) * 0.5
        d = cdf + x * ew.exp(x * x * -0.5) * INV_SQRT_2PI
    return (grad * d,)


@defop("silu", node="SiluBackward0", save=(0,))
def _silu(x: np.ndarray) -> np.ndarray:
    _float(x, "silu_cpu")
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-x))


@_silu.backward
def silu_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx x s(x) = s (1 + x (1 - s))
    (x,) = ctx.saved
    s = ew.sigmoid(x)
    return (grad * s * (1.0 + x * (1.0 - s)),)


@defop("mish", node="MishBackward0", save=(0,))
def _mish(x: np.ndarray) -> np.ndarray:
    _float(x, "mish_cpu")
    return x * np.tanh(_Arrays.softplus(x))


@_mish.backward
def mish_backward(ctx: Any, grad: Tensor) -> tuple:  # tanh(sp(x)) + x s(x) (1 - tanh^2(sp(x)))
    (x,) = ctx.saved
    t = ew.tanh(_softplus(x, beta=1.0, threshold=20.0))
    return (grad * (t + x * ew.sigmoid(x) * (1.0 - t * t)),)


@defop("softplus", node="SoftplusBackward0", save=(0,))
@_quiet
def _softplus(x: np.ndarray, *, beta: float, threshold: float) -> np.ndarray:
    _float(x, "softplus_cpu")
    z = x * beta
    return np.where(z > threshold, x, np.log1p(np.exp(z)) / beta)


@_softplus.backward
def softplus_backward(ctx: Any, grad: Tensor) -> tuple:  # s(beta x), and 1 above the threshold
    (x,) = ctx.saved
    z = x * ctx.params["beta"]
    s = ew.sigmoid(z)
    return (grad * (s + (z > ctx.params["threshold"]) * (1.0 - s)),)


def _elu_forward(x: np.ndarray, alpha: float, scale: float, input_scale: float) -> np.ndarray:
    _float(x, "elu_cpu")
    # exactly one of the two terms is nonzero for every element
    return np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale) + np.maximum(x, 0) * scale


def _in_dtype(like: Tensor, value: float) -> Tensor:
    """value as a 0-d constant of like's dtype (a bool mask times a Python float would be the
    default dtype, and round a float64 scale to float32)."""
    return Tensor._make(np.asarray(value, dtype=like._data.dtype))


def _elu_entries(name: str, node_out: str, node_in: str) -> tuple:
    out_of_place = defop(name, node=node_out, save=(0,))(
        lambda x, *, alpha, scale, input_scale: _elu_forward(x, alpha, scale, input_scale))
    in_place = defop(name + "_", node=node_in, save_output=True)(
        lambda x, *, alpha, scale, input_scale: _elu_forward(x, alpha, scale, input_scale))

    @out_of_place.backward
    def elu_backward(ctx: Any, grad: Tensor) -> tuple:  # x > 0: scale; else alpha scale is e^(is x)
        (x,), p = ctx.saved, ctx.params
        # x <= 0 takes the exponential's slope, whose own slope is 0 at x = 0 (torch's double
        # backward: only x < 0 counts there), hence x, not clamped, but kept where x < 0
        neg = ew.exp(ew.where(x < 0, x, 0.0) * p["input_scale"]) * (
            p["alpha"] * p["scale"] * p["input_scale"])
        return (grad * ((x > 0) * _in_dtype(x, p["scale"]) + (x <= 0) * neg),)

    @in_place.backward
    def elu__backward(ctx: Any, grad: Tensor) -> tuple:  # the same, written with the result
        # y > 0: scale; else input_scale (y + alpha scale)
        (y,), p = ctx.saved, ctx.params
        return (grad * ((y > 0) * _in_dtype(y, p["scale"])
                        + (y <= 0) * ((y + p["alpha"] * p["scale"]) * p["input_scale"])),)

    @out_of_place.jvp
    def elu_jvp(tangents: list, inputs: tuple, out: Tensor, **p: Any) -> Tensor:  # t * elu'(x)
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
def leaky_relu_backward(ctx: Any, grad: Tensor) -> tuple:  # 1 for x > 0, negative_slope else
    (x,) = ctx.saved
    return (grad * ((x > 0) + (x <= 0) * ctx.params["negative_slope"]),)


@defop("leaky_relu_", node="LeakyReluBackward1", save_output=True)
def _leaky_relu_(x: np.ndarray, *, negative_slope: float) -> np.ndarray:
    return _leaky_relu.forward(x, negative_slope=negative_slope)


def leaky_relu_inplace_slope(ctx: Any) -> float:
    """The in-place form's slope, which its backward (from the result) cannot invert when
    negative: torch's error then."""
    slope = ctx.params["negative_slope"]
    if slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is "
            "not supported. This is caused by calling in-place forward function with a negative "
            "slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
            "backward calculation with negative slope"
        )
    return slope


@_leaky_relu_.backward
def leaky_relu__backward(ctx: Any, grad: Tensor) -> tuple:
    # from the result: 1 where y > 0, negative_slope else
    slope = leaky_relu_inplace_slope(ctx)
    (y,) = ctx.saved
    return (grad * ((y > 0) + (y <= 0) * slope),)


def _hardtanh_forward(x: np.ndarray, *, min_val: float, max_val: float) -> np.ndarray:
    if x.dtype == np.bool_:
        raise NotImplementedError("\"hardtanh_cpu\" not implemented for 'Bool'")
    if x.dtype.kind in "iu":
        return np.clip(x, math.ceil(min_val), math.floor(max_val)).astype(x.dtype)
    return np.clip(x, min_val, max_val)


_hardtanh = defop("hardtanh", node="HardtanhBackward0", save=(0,))(_hardtanh_forward)
_hardtanh_ = defop("hardtanh_", node="HardtanhBackward0", save_output=True)(_hardtanh_forward)


@_hardtanh.backward
def hardtanh_backward(ctx: Any, grad: Tensor) -> tuple:  # 1 strictly inside (min_val, max_val)
    (x,), p = ctx.saved, ctx.params
    return (grad * ((x > p["min_val"]) & (x < p["max_val"])),)


_hardtanh_.backward(_hardtanh.rule)


@defop("hardsigmoid", node="HardsigmoidBackward0", save=(0,))
def _hardsigmoid(x: np.ndarray) -> np.ndarray:
    _float(x, "hardsigmoid_cpu")
    return np.clip(x + 3.0, 0.0, 6.0) / 6.0


@_hardsigmoid.backward
def hardsigmoid_backward(ctx: Any, grad: Tensor) -> tuple:  # 1/6 on (-3, 3)
    (x,) = ctx.saved
    # torch's kernel uses 1/6 rounded to float, for every dtype
    return (grad * ((x > -3.0) & (x < 3.0)) * ONE_SIXTH_F,)


ONE_SIXTH_F = float(np.float32(1.0 / 6.0))


@defop("hardswish", node="HardswishBackward0", save=(0,))
def _hardswish(x: np.ndarray) -> np.ndarray:
    _float(x, "hardswish_cpu")
    return x * np.clip(x + 3.0, 0.0, 6.0) / 6.0


@_hardswish.backward
def hardswish_backward(ctx: Any, grad: Tensor) -> tuple:
    # 0 up to -3, x/3 + 1/2 on (-3, 3), 1 from 3
    (x,) = ctx.saved
    # at the kinks themselves the flat side's slope, as torch's kernel (0 at -3, 1 at 3)
    inside = (x > -3.0) & (x < 3.0)
    return (grad * (inside * (x / 3.0 + 0.5) + (x >= 3.0)),)


@defop("log_sigmoid", node="LogSigmoidBackward0", save=(0,))
@_quiet
def _log_sigmoid(x: np.ndarray) -> np.ndarray:
    _float(x, "log_sigmoid_cpu")
    return np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x)))


@_log_sigmoid.backward
def log_sigmoid_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx log s(x) = s(-x)
    (x,) = ctx.saved
    return (grad * ew.sigmoid(-x),)


def _threshold_forward(x: np.ndarray, *, threshold: Any, value: Any) -> np.ndarray:
    return np.where(x > threshold, x, np.asarray(value).astype(x.dtype))


_threshold = defop("threshold", node="ThresholdBackward0", save=(0,))(_threshold_forward)
# in place, torch saves the input as it was (not the result): the rule is the same
_threshold_ = defop("threshold_", node="ThresholdBackward1", save=(0,))(_threshold_forward)


@_threshold.backward
def threshold_backward(ctx: Any, grad: Tensor) -> tuple:  # 1 where x > threshold
    (x,) = ctx.saved
    return (grad * (x > ctx.params["threshold"]),)


_threshold_.backward(_threshold.rule)


@defop("hardshrink", node="HardshrinkBackward0", save=(0,))
def _hardshrink(x: np.ndarray, *, lambd: float) -> np.ndarray:
    return x * (np.abs(x) > lambd)


@defop("softshrink", node="SoftshrinkBackward0", save=(0,))
def _softshrink(x: np.ndarray, *, lambd: float) -> np.ndarray:
    return np.maximum(x - lambd, 0) + np.minimum(x + lambd, 0)


def shrink_backward(ctx: Any, grad: Tensor) -> tuple:  # 1 where |x| > lambda
    (x,) = ctx.saved
    return (grad * (ew.abs(x) > ctx.params["lambd"]),)


_hardshrink.backward(shrink_backward)
_softshrink.backward(shrink_backward)


@defop("glu", node="GluBackward0", save=(0,))
def _glu(x: np.ndarray, *, dim: int) -> np.ndarray:
    a, b = np.split(x, 2, axis=dim)
    return a * _sigmoid(b)


@_glu.backward
def glu_backward(ctx: Any, grad: Tensor) -> tuple:  # d(a s(b)) = (s(b), a s(b)(1 - s(b)))
    (x,) = ctx.saved
    dim = ctx.params["dim"]
    h = ctx.input_shapes[0][dim] // 2
    a, b = sh.narrow(x, dim, 0, h), sh.narrow(x, dim, h, h)
    s = ew.sigmoid(b)
    return (sh.cat([grad * s, grad * a * s * (1.0 - s)], dim),)


@defop("prelu", node="PreluKernelBackward0", save=(0, 1))
def _prelu(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0) + np.minimum(x, 0) * w


@_prelu.backward
def prelu_backward(ctx: Any, grad: Tensor) -> tuple:  # (1 or w, x where x <= 0)
    x, w = ctx.saved
    need_x, need_w = ctx.needs_input_grad
    # at x = 0 the slope is w, but torch's second derivatives count only x < 0 (w's value
    # there, detached; and x (x < 0), which is x (x <= 0))
    neg_w = (x < 0) * w + (x == 0) * w.detach()
    gx = grad * ((x > 0) + neg_w) if need_x else None
    gw = grad * x * (x < 0) if need_w else None
    return gx, gw


# ---------------------------------------------------------------------------------------------
# Softmax that gives 0, not NaN, for a row that is all -inf
# ---------------------------------------------------------------------------------------------

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
def safe_softmax_backward(ctx: Any, grad: Tensor) -> tuple:
    # J = diag(y) - y y^T: y * (g - sum(g y))
    (y,) = ctx.saved
    dim = ctx.params["dim"]
    return (y * (grad - rd.sum(grad * y, (dim,), True)),)


# ---------------------------------------------------------------------------------------------
# Randomized leaky ReLU
# ---------------------------------------------------------------------------------------------

@defop("rrelu_with_noise", node="RreluWithNoiseBackward0", save=(0,))
def _rrelu(x: np.ndarray, *, noise: np.ndarray) -> np.ndarray:
    return x * noise


@_rrelu.backward
def rrelu_backward(ctx: Any, grad: Tensor) -> tuple:
    # the slope each element was given (1 where x > 0)
    return (grad * Tensor._make(ctx.params["noise"]),)


# Rules whose gradient torch's double-backward node ties to the forward's inputs (see _link)
for _entry in (_leaky_relu, _leaky_relu_, _hardtanh, _hardtanh_, _threshold, _threshold_,
               _hardshrink, _softshrink, _prelu, _rrelu):
    _linked(_entry)
