"""float16 and bfloat16 arithmetic as torch's CPU kernels do it: widen, compute in float32,
round once.

torch's CPU kernels never compute in a 2-byte float. Each one loads its low-precision
operands into float32 registers, does all of its work there (a whole softmax, a whole
layer_norm, a sum's accumulator, a matrix product's dot products), and rounds the result to
the low type once, on the way out. NumPy does otherwise: its float16 reductions and matrix
products accumulate in float16, ml_dtypes' bfloat16 products return float32, and an op that
tapegrad writes as several NumPy steps (softmax: max, subtract, exp, sum, divide) would round
after every step. Both are slow as well (no BLAS, no SIMD loops).

So the registry does torch's thing for every op listed in ``WIDENED`` below::

    apply(op, x_bf16, ...)                       # every floating input has one low dtype L
        arrays widened:   x.astype(float32)      # exact: float32 holds every L value
        out = op.forward(widened arrays)         # the float32 kernel, on the BLAS where it can
        out.astype(L)                            # rounded once (to nearest, ties to even)

An op is widened only when all its floating-point array inputs share one low dtype (a mix
such as ``bf16 + float32`` is promoted by the op itself, to float32, as torch does) and no
``dtype=`` argument asks for another result type. Outputs that are not float32 (indices,
booleans) come back untouched.

The cost when no low-precision tensor exists is one global read per op (``_registry._LOW``,
switched on the first time tapegrad hands out a float16 or bfloat16 NumPy dtype: see
``_dtype``). Ops that only move data (views, indexing, cat, copies) are not listed: widening
them would give the same bits at the price of two casts.

Where torch's own kernel is not reproducible bit for bit, the tests (tests/ops/
test_low_precision.py) say so: matrix products and convolutions sum in the BLAS's order
(MKL/oneDNN in torch, OpenBLAS here), and transcendental functions use SLEEF in torch and
NumPy's own SIMD code here; both agree in float32 to an ulp or so, which the final rounding
to 8 or 11 significant bits hides except for values next to a rounding boundary.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor

# The casts themselves are array kernels, shared with the backward engine (kernels/); they are
# named here too, where the widening that uses them is described.
from ..kernels.low_precision import _F32
from ..kernels.low_precision import cast as cast
from ..kernels.low_precision import narrow as narrow
from ..kernels.low_precision import widen as widen
from ..kernels.norms import vector_norm_array

# The ops computed in float32 for low-precision inputs, by family (registry names).
WIDENED: frozenset[str] = frozenset((
    # elementwise arithmetic and math
    "add", "add_scalar", "sub", "rsub", "rsub_tensor", "mul", "mul_scalar", "div", "div_scalar",
    "div_mode", "pow", "pow_scalar_base", "pow_tensor", "reciprocal", "rsqrt", "sqrt", "exp",
    "exp2", "expm1", "log", "log10", "log1p", "log2", "sin", "cos", "tan", "sinh", "cosh",
    "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "atan2", "sigmoid", "erf",
    "erfc", "erfinv", "lgamma", "digamma", "hypot", "logaddexp", "logaddexp2", "lerp",
    "lerp_tensor", "addcmul", "addcdiv", "xlogy", "sinc", "logit", "deg2rad", "rad2deg",
    # activations and their backward kernels
    "gelu", "silu", "mish", "elu", "celu", "softplus", "hardswish", "hardsigmoid",
    "leaky_relu", "log_sigmoid", "sigmoid_backward", "tanh_backward", "glu", "prelu",
    # reductions: the accumulator is float32
    "sum", "sum_dim", "mean", "mean_dim", "prod", "prod_dim", "nansum", "var", "std",
    "var_mean", "std_mean", "norm", "norm_dim", "logsumexp", "cumsum", "cumprod",
    "logcumsumexp", "trace",
    # softmax and normalization
    "softmax", "log_softmax", "safe_softmax", "layer_norm", "group_norm", "native_group_norm",
    "batch_norm",
    # matrix products: float32 operands on the BLAS, float32 accumulation
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "addr", "mv", "dot", "vdot",
    # convolution, attention, pooling that averages, losses
    "convolution", "sdpa", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d",
    "upsample_bicubic2d", "mse_loss", "huber_loss", "smooth_l1_loss", "bce_with_logits",
    "binary_cross_entropy", "nll_loss", "ce_log_softmax", "ce_nll",
    # a distance: the difference rounded to the low type, its norm in float32 (a kernel below)
    "dist",
))

# The matrix products, whose operands must share one dtype: a low-precision one with an integer
# one is not widened, so that the op's error names the dtypes it was given.
SAME_DTYPE: frozenset[str] = frozenset((
    "mm", "addmm", "bmm", "baddbmm", "addbmm", "addmv", "addr", "mv", "dot", "vdot"))


def low_dtype(arrays: Any) -> np.dtype | None:
    """The one low-precision dtype of the floating inputs, or None (nothing to widen)."""
    low = None
    for a in arrays:
        if type(a) is np.ndarray:
            d = a.dtype
            if d.char in "eE":  # float16, ml_dtypes' bfloat16
                if low is None:
                    low = d
                elif d != low:  # float16 with bfloat16: promoted to float32 by the op
                    return None
            elif d.kind in "fc":  # another floating type: the op's own promotion decides
                return None
    return low


# The normalizations with torch's mixed-type kernels: a low-precision input with float32 weight
# and bias (a bfloat16 activation through a float32 LayerNorm) computes in float32 and returns
# the input's type; the parameters' gradients stay float32.
MIXED: frozenset[str] = frozenset(("layer_norm", "group_norm", "batch_norm"))


def _mixed_low(arrays: Any) -> np.dtype | None:
    """The input's low dtype when every other floating array is float32, else None."""
    x = arrays[0] if arrays else None
    if type(x) is not np.ndarray or x.dtype.char not in "eE":
        return None
    for a in arrays[1:]:
        if type(a) is np.ndarray and a.dtype.kind in "fcV" and a.dtype != _F32:
            return None
    return x.dtype


def widened_forward(op: Any, arrays: Any, params: dict) -> Any:
    """``op``'s forward run as torch's CPU kernels run it for low-precision inputs."""
    low = low_dtype(arrays)
    if low is None and op.name in MIXED:
        low = _mixed_low(arrays)
    if low is None or params.get("dtype") is not None or (
            op.name in SAME_DTYPE and any(type(a) is np.ndarray and a.dtype != low
                                          for a in arrays)):
        return op.forward(*arrays, **params)  # (a matrix product's dtype error names both)
    wide = [widen(a) if type(a) is np.ndarray and a.dtype == low else a for a in arrays]
    kernel = KERNELS.get(op.name)
    out = op.forward(*wide, **params) if kernel is None else kernel(op, low, wide, params)
    if op.outputs == 1:
        return _round(out, low)
    return type(out)(_round(o, low) for o in out)


def widened_rule(node: Any, grads: list) -> tuple:
    """A backward rule run as torch's fused backward kernels run it: the gradient and the saved
    values widened to float32, the rule computed there; the engine rounds each input's
    gradient to its dtype once. (Only without ``create_graph``: a graph of the backward must
    be made of the tensors themselves.)"""
    if not rule_widens(node.op, grads):
        return node._apply(grads)
    saved, out = node._saved, node._out
    try:
        if saved:
            node._saved = tuple(_wide_tensor(t) for t in saved)
        if out is not None and out[0].dtype.char in "eE":
            node._out = (widen(out[0]),) + tuple(out[1:])
        if node.op.outputs == 1:
            return node._apply([_wide_tensor(grads[0])])
        return node._apply([_wide_tensor(g) for g in grads])
    finally:
        node._saved, node._out = saved, out


def rule_widens(op: Any, grads: list) -> bool:
    """Does ``widened_rule`` widen this rule's values? When its (first) gradient is float16 or
    bfloat16, unless the rule's own ops round as torch's kernel does (``STEPWISE_RULES``)."""
    first = grads[0] if op.outputs == 1 else next((g for g in grads if g is not None), None)
    if first is None or first._data.dtype.char not in "eE":
        return False
    return first._data.dtype.char not in STEPWISE_RULES.get(op.name, "")


def _wide_tensor(t: Any) -> Any:
    if not isinstance(t, Tensor) or t._data.dtype.char not in "eE":
        return t
    w = Tensor._make(widen(t._data), t._requires_grad)
    w._vc = t._vc  # the same version counter: the saved-value checks still apply
    w._grad_fn = t.grad_fn
    w._output_nr = t._output_nr
    return w


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A low-precision matrix product as torch's CPU kernel computes it: float32 operands on
    the BLAS, float32 accumulation, the result rounded once."""
    return _round(np.matmul(widen(a), widen(b)), a.dtype)


def _round(out: Any, low: np.dtype) -> Any:
    if isinstance(out, (np.ndarray, np.generic)) and out.dtype == _F32:
        if type(out) is np.ndarray:
            return narrow(out, low)
        return narrow(np.asarray(out), low)
    return out


# ---------------------------------------------------------------------------------------------
# Where torch's kernel is not "all in float32": the steps it rounds to the low type, kept here
# so that the results agree bit for bit. Each kernel gets the widened arrays and returns float32.
# ---------------------------------------------------------------------------------------------

KERNELS: dict[str, Any] = {}


def _kernel(*names: str) -> Any:
    def register(fn: Any) -> Any:
        for name in names:
            KERNELS[name] = fn
        return fn

    return register


def _low_scalar(value: Any, low: np.dtype) -> float:
    """A Python number as the kernel sees it: converted to the tensor's type (through float,
    as c10's Half and BFloat16 are made from a float)."""
    return float(np.float32(value).astype(low))


def _r(x: Any, low: np.dtype) -> np.ndarray:
    """Round a float32 intermediate to the low type and widen it back."""
    return widen(np.asarray(x, _F32).astype(low))


@_kernel("add", "sub")
def _alpha_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # a + alpha * b: alpha is converted to the tensor's type first
    alpha = params.get("alpha", 1)
    if alpha != 1 and not isinstance(alpha, bool):
        params = dict(params, alpha=_low_scalar(alpha, low))
    return op.forward(*arrays, **params)


@_kernel("pow")
def _pow_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # x ** e with a Python exponent: e is converted to the tensor's type first
    e = params["exponent"]
    if isinstance(e, float):
        params = dict(params, exponent=_low_scalar(e, low))
    return op.forward(*arrays, **params)


@_kernel("prod", "prod_dim")
def _prod_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # torch multiplies in the low type, one element after the other
    x = arrays[0]
    if x.ndim == 0 or x.size == 0:
        return op.forward(*arrays, **params)
    dim = params.get("dim")
    keepdim = params.get("keepdim", False)
    x = x.reshape(-1) if dim is None else np.moveaxis(x, dim, -1)
    acc = x[..., 0].astype(low)
    for j in range(1, x.shape[-1]):
        acc = (acc.astype(_F32) * x[..., j]).astype(low)
    out = acc.astype(_F32)
    if dim is not None and keepdim:
        out = np.expand_dims(out, dim)
    return out


@_kernel("logsumexp")
def _logsumexp_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # torch's logsumexp is made of ops, each rounding to the low type:
    # m = amax(x); log(sum(exp(x - m))) + m, with an infinite m taken as 0
    x = arrays[0]
    dim, keepdim = params["dim"], params["keepdim"]
    if x.size == 0 or x.ndim == 0:
        return op.forward(*arrays, **params)
    m = np.max(x, axis=dim, keepdims=True)
    m = np.where(np.isinf(m), 0, m).astype(_F32)
    e = _r(np.exp(_r(x - m, low)), low)
    s = _r(np.sum(e, axis=dim, keepdims=True), low)
    with np.errstate(divide="ignore"):
        out = _r(np.log(s), low) + m
    return out if keepdim else np.squeeze(out, axis=dim)


@_kernel("log_softmax")
def _log_softmax_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # along the last dimension torch keeps the sum of exponentials and its log in the low
    # type: x - max - round(log(round(sum(e^(x - max)))))
    x = arrays[0]
    dim = params["dim"]
    if x.ndim == 0 or x.size == 0 or dim % x.ndim != x.ndim - 1:
        return op.forward(*arrays, **params)
    return _log_softmax_last(x, low)


@_kernel("ce_log_softmax")
def _ce_log_softmax_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # cross_entropy's log_softmax over the classes (dim 1): the last dimension of a 2-D input.
    # The float32 forward runs in every case: it leaves the softmax its backward rule reads.
    out = op.forward(*arrays, **params)
    x = arrays[0]
    if x.ndim != 2 or x.size == 0:
        return out
    return _log_softmax_last(x, low)


def _log_softmax_last(x: np.ndarray, low: np.dtype) -> np.ndarray:
    """log_softmax over the last dimension, with the sum and the log rounded to ``low``."""
    m = np.max(x, axis=-1, keepdims=True)
    s = _r(np.sum(np.exp(x - m), axis=-1, keepdims=True), low)
    with np.errstate(divide="ignore"):
        return x - m - _r(np.log(s), low)


@_kernel("addbmm")
def _addbmm_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # torch adds one batch's product at a time into its low-type result (an addmm_ per
    # batch), rounding after each: out = round(beta input + alpha B1[0] B2[0]), then
    # out = round(out + alpha B1[b] B2[b]); the scalars stay float32
    input, b1, b2 = arrays
    if (b1.ndim != 3 or b2.ndim != 3 or b1.shape[0] < 2 or b2.shape[0] != b1.shape[0]
            or b1.shape[2] != b2.shape[1] or not _broadcasts(input, (b1.shape[1], b2.shape[2]))):
        return op.forward(*arrays, **params)  # (one batch, none, or torch's error)
    beta, alpha = params.get("beta", 1), params.get("alpha", 1)
    out = None if beta == 0 else input if beta == 1 else input * np.float32(beta)
    for b in range(b1.shape[0]):
        prod = np.matmul(b1[b], b2[b])
        if alpha != 1:
            prod *= np.float32(alpha)
        out = _r(prod if out is None else out + prod, low)
    return out


def _broadcasts(a: np.ndarray, shape: tuple) -> bool:
    try:
        return np.broadcast_shapes(a.shape, shape) == shape
    except ValueError:
        return False


@_kernel("convolution")
def _convolution_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # a transposed convolution as torch's CPU computes it in the low types (its slow path:
    # no oneDNN kernel for them without AVX512-BF16/AMX): the columns W^T x rounded to the low
    # type, then col2im adding each kernel offset's columns into the low-type output (kernel
    # offsets in order, rounding after each add), then the bias, rounded once more
    x, w, b = arrays
    groups = params["groups"]
    if (not params["transposed"] or x.ndim != w.ndim or x.ndim < 3 or x.shape[1] != w.shape[0]
            or x.shape[1] % groups):
        return op.forward(*arrays, **params)
    kernel, in_size, n = w.shape[2:], x.shape[2:], x.shape[0]
    c_out = w.shape[1] * groups
    stride, dilation, padding = params["stride"], params["dilation"], params["padding"]
    full = tuple((m - 1) * s + d * (k - 1) + 1 + p for m, s, d, k, p in
                 zip(in_size, stride, dilation, kernel, params["output_padding"], strict=True))
    rows = np.moveaxis(x, 1, 0).reshape(groups, x.shape[1] // groups, -1)  # (G, C/G, N*R)
    wm = w.reshape(groups, w.shape[0] // groups, -1)  # (G, C/G, O/G*K)
    cols = _r(np.matmul(wm.transpose(0, 2, 1), rows), low)
    win = cols.reshape((c_out,) + kernel + (n,) + in_size)
    out = np.zeros((c_out, n) + full, dtype=_F32)
    for offs in np.ndindex(*kernel):
        region = (slice(None), slice(None)) + tuple(
            slice(o * d, o * d + s * (m - 1) + 1, s)
            for o, d, s, m in zip(offs, dilation, stride, in_size, strict=True))
        out[region] = _r(out[region] + win[(slice(None),) + offs], low)
    out = out[(slice(None), slice(None)) + tuple(slice(p, f - p) for p, f in
                                                 zip(padding, full, strict=True))]
    out = np.moveaxis(out, 0, 1)
    if b is not None:
        out = _r(out + b.reshape((c_out,) + (1,) * len(kernel)), low)
    return np.ascontiguousarray(out)


@_kernel("dist")
def _dist_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # torch's dist is a subtraction in the low type (rounded), then the norm in float32
    diff = _r(np.subtract(arrays[0], arrays[1]), low)
    return vector_norm_array(diff, params["p"], tuple(range(diff.ndim)), False)


# Backward rules that torch computes step by step in the low type, for the low types listed
# (NumPy dtype chars: "e" float16, "E" bfloat16): widened_rule leaves them to their rule's op,
# whose kernel below rounds as torch's does.
STEPWISE_RULES: dict[str, str] = {"sigmoid": "e"}


@_kernel("sigmoid_backward")
def _sigmoid_backward_kernel(op: Any, low: np.dtype, arrays: list, params: dict) -> Any:
    # torch's float16 kernel computes g (1 - y) y in float16, rounding after each step;
    # its bfloat16 kernel works in float32 (one rounding at the end)
    if low.char != "e":
        return op.forward(*arrays, **params)
    g, y = arrays
    return _r(g * _r(1 - y, low), low) * y
