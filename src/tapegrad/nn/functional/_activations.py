"""Activation functions: ``relu``, ``gelu``, ``silu``, ``elu``, ``hardtanh``, the shrinks,
``glu``, ``prelu``, ``rrelu``, softmax and its relatives, ``gumbel_softmax``; the fused ones are
entries of ``ops/activations.py``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._creation import empty_like, zeros_like
from ..._tensor import Tensor, _wrap_dim
from ...ops import activations as K
from ...ops import elementwise as ew
from ...ops import reduction as rd
from ...ops._registry import apply_
from ._common import _scalar_name
from ._dropout import _engine

# ---------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------

def _inplace(entry: Any, input: Tensor, **params: Any) -> Tensor:
    return apply_(entry, input, **params)


def _entry_or_inplace(entry: Any, input: Tensor, inplace: bool) -> Tensor:
    """``entry(input)``, or the same entry applied in place on ``input`` (for the activations
    whose in-place form is the same entry)."""
    return _inplace(entry, input) if inplace else entry(input)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0) (ReluBackward0)."""
    if inplace:
        return relu_(input)
    return ew.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place relu (ReluBackward0)."""
    return apply_(ew._relu, input)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): torch's hardtanh(0, 6) (HardtanhBackward0)."""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """Clamp to [min_val, max_val] (HardtanhBackward0)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return _inplace(K._hardtanh_, input, min_val=min_val, max_val=max_val)
    return K._hardtanh(input, min_val=min_val, max_val=max_val)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place hardtanh."""
    return hardtanh(input, min_val, max_val, True)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, negative_slope * x elsewhere (LeakyReluBackward0)."""
    if inplace:
        return _inplace(K._leaky_relu_, input, negative_slope=negative_slope)
    return K._leaky_relu(input, negative_slope=negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place leaky_relu (LeakyReluBackward1, from the result)."""
    return leaky_relu(input, negative_slope, True)


def gelu(input: Tensor, *, approximate: str = "none") -> Tensor:
    """x Phi(x), Phi the standard normal CDF (``approximate='tanh'``: the tanh formula).

    Example:
        >>> import tapegrad as torch
        >>> import tapegrad.nn.functional as F
        >>> F.gelu(torch.tensor([1.0]))
        tensor([0.8413])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return K._gelu(input, approximate=approximate, _cache={})


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x sigmoid(x)."""
    return _entry_or_inplace(K._silu, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x tanh(softplus(x))."""
    return _entry_or_inplace(K._mish, input, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + e^(beta x)) / beta, and x where beta x > threshold."""
    return K._softplus(input, beta=beta, threshold=threshold)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, alpha (e^x - 1) elsewhere (EluBackward0)."""
    if inplace:
        return _inplace(K._elu_, input, alpha=alpha, scale=1.0, input_scale=1.0)
    return K._elu(input, alpha=alpha, scale=1.0, input_scale=1.0)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place elu (EluBackward1, from the result)."""
    return elu(input, alpha, True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with SELU's constants (EluBackward0)."""
    p = {"alpha": _SELU_ALPHA, "scale": _SELU_SCALE, "input_scale": 1.0}
    if inplace:
        return _inplace(K._elu_, input, **p)
    return K._elu(input, **p)


def selu_(input: Tensor) -> Tensor:
    """In-place selu."""
    return selu(input, True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha (e^(x/alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    p = {"alpha": alpha, "scale": 1.0, "input_scale": 1.0 / alpha}
    if inplace:
        return _inplace(K._celu_, input, **p)
    return K._celu(input, **p)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    """In-place celu."""
    return celu(input, alpha, True)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """clamp(x / 6 + 1/2, 0, 1) (HardsigmoidBackward0)."""
    return _entry_or_inplace(K._hardsigmoid, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x) (HardswishBackward0)."""
    return _entry_or_inplace(K._hardswish, input, inplace)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + e^-x)."""
    return ew.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    """tanh(x)."""
    return ew.tanh(input)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed stably (LogSigmoidBackward0)."""
    return K._log_sigmoid(input)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value."""
    if inplace:
        return _inplace(K._threshold_, input, threshold=threshold, value=value)
    return K._threshold(input, threshold=threshold, value=value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place threshold (ThresholdBackward1)."""
    return _inplace(K._threshold_, input, threshold=threshold, value=value)


def _check_lambda(input: Tensor, lambd: float) -> None:
    if lambd < 0:
        big = "3.40282e+38" if input.dtype.name == "float32" else "1.79769e+308"
        raise RuntimeError(
            f"lambda must be in range [0, {big}] for input dtype {_scalar_name(input)}, but "
            f"found {lambd:g}"
        )


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    return K._hardshrink(input, lambd=lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    _check_lambda(input, lambd)
    return K._softshrink(input, lambd=lambd)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of ``input`` along ``dim``."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}"
        )
    return K._glu(input, dim=d)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), weight per channel (dim 1) or shared."""
    if input.ndim == 0 and weight.numel() != 1:
        raise RuntimeError("Not allow zero-dim input tensor.")
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError(
            "Mismatch of parameter numbers and input channel size. Found parameter numbers = "
            f"{weight.numel()} and channel size = {channels}."
        )
    shape = [1] * input.ndim
    if input.ndim >= 2:
        shape[1] = weight.numel()
    return K._prelu(input, weight.reshape(shape))


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_prepare(name: str, input: Tensor, dim: Any, dtype: Any, stacklevel: int) -> tuple:
    if dim is None:
        dim = _softmax_dim(name, input.ndim, stacklevel + 1)
    d = _wrap_dim(dim, input.ndim)
    if dtype is not None:
        input = input.to(dtype)
    if not input.is_floating_point():
        kernel = "log_softmax" if name == "log_softmax" else "softmax"
        where = "lastdim_kernel_impl" if d == max(input.ndim - 1, 0) else "kernel_impl"
        raise NotImplementedError(
            f"\"{kernel}_{where}\" not implemented for '{_scalar_name(input)}'"
        )
    return input, d


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """e^x / sum(e^x) along ``dim`` (SoftmaxBackward0)."""
    x, d = _softmax_prepare("softmax", input, dim, dtype, _stacklevel)
    return rd._softmax(x, dim=d)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
            dtype: Any = None) -> Tensor:
    """softmax(-x) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    d = _wrap_dim(dim, input.ndim)
    if dtype is not None:  # torch negates in the input's dtype, then casts
        return rd._softmax((-input).to(dtype), dim=d)
    if not input.is_floating_point():
        where = "lastdim_kernel_impl" if d == max(input.ndim - 1, 0) else "kernel_impl"
        raise NotImplementedError(
            f"\"softmax_{where}\" not implemented for '{_scalar_name(input)}'"
        )
    return rd._softmax(-input, dim=d)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype: Any = None) -> Tensor:
    """x - logsumexp(x) along ``dim``, computed stably (LogSoftmaxBackward0)."""
    x, d = _softmax_prepare("log_softmax", input, dim, dtype, _stacklevel)
    return rd._log_softmax(x, dim=d)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Leaky ReLU with a random slope in [lower, upper] per element (training) or their mean.

    The slopes are drawn from the default generator as torch draws them (one uniform double per
    element <= 0, in order).
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    x = input._data
    neg = x <= 0
    if training and upper - lower > 1e-6:
        # torch rounds the bounds to the op's compute type (float for float32) first
        lo, hi = (lower, upper) if x.dtype == np.float64 else (
            float(np.float32(lower)), float(np.float32(upper)))
        noise = np.ones(x.shape, dtype=x.dtype)
        # at::uniform_real_distribution<double>: u53 * (hi - lo) + lo, one draw per x <= 0
        u = _engine()._u53(int(neg.sum()))
        noise[neg] = (u * (hi - lo) + lo).astype(x.dtype)
    else:
        noise = np.where(neg, (lower + upper) / 2, 1.0).astype(x.dtype)
    if inplace:
        return _inplace(K._rrelu, input, noise=noise)
    return K._rrelu(input, noise=noise)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    """In-place rrelu."""
    return rrelu(input, lower, upper, training, True)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel noise) / tau); ``hard`` returns one-hot samples with the soft
    gradient (straight-through). The noise comes from the default generator as in torch."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
