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
    "adaptive_avg_pool3d", "mse_loss", "huber_loss", "smooth_l1_loss", "bce_with_logits",
    "binary_cross_entropy", "nll_loss", "ce_log_softmax", "ce_nll",
))

_F32 = np.dtype(np.float32)


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


def widened_forward(op: Any, arrays: Any, params: dict) -> Any:
    """``op``'s forward run as torch's CPU kernels run it for low-precision inputs."""
    low = low_dtype(arrays)
    if low is None or params.get("dtype") is not None:
        return op.forward(*arrays, **params)
    wide = [a.astype(_F32) if type(a) is np.ndarray and a.dtype == low else a for a in arrays]
    out = op.forward(*wide, **params)
    if op.outputs == 1:
        return _round(out, low)
    return type(out)(_round(o, low) for o in out)


def _round(out: Any, low: np.dtype) -> Any:
    if isinstance(out, (np.ndarray, np.generic)) and out.dtype == _F32:
        return np.asarray(out).astype(low)  # float16 overflow becomes inf, silently (torch)
    return out
