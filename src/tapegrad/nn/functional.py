"""``tapegrad.nn.functional``: torch's functional neural-network API, on the op registry.

Every function has torch's signature, defaults, result dtype, ``grad_fn`` node and error
messages. Hot or numerically delicate pieces are single registry entries in
``ops/nn_ops.py`` (``gelu``, ``layer_norm``, ``convolution``, ``nll_loss``, attention, ...);
the rest is built from ordinary tensor ops the way torch builds it, so the graph prints the same
nodes::

    F.linear(x, w, b)         2-D x: one AddmmBackward0 (x @ w.T + b in one product)
    F.cross_entropy(z, t)     NllLossBackward0 -> LogSoftmaxBackward0 -> z
    F.conv2d(x, w, b)         one ConvolutionBackward0 (im2col + one matrix product)
    F.dropout(x, p)           MulBackward0(x, noise), the noise drawn as torch draws it

This module imports nothing from ``tapegrad.nn`` itself, so ``nn/__init__`` can import it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from .._dtype import promote_types
from .._rng import place as _rng_place
from .._tensor import Tensor, _wrap_dim
from ..autograd.grad_mode import _state, no_grad
from ..ops import elementwise as ew
from ..ops import linalg as la
from ..ops import nn_ops as K
from ..ops import reduction as rd
from ..ops import shape as sh
from ..ops._registry import apply_, scalar_type_name

__all__ = [
    "channel_shuffle", "native_channel_shuffle", "affine_grid", "grid_sample",
    "fractional_max_pool2d", "fractional_max_pool3d", "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d_with_indices", "pdist", "linear_cross_entropy",
    "multi_head_attention_forward",
    "linear", "bilinear", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "gelu",
    "silu", "mish", "softplus", "elu", "elu_", "selu", "selu_", "celu", "celu_", "hardtanh",
    "hardtanh_", "hardsigmoid", "hardswish", "sigmoid", "tanh", "logsigmoid", "softsign",
    "tanhshrink", "threshold", "threshold_", "hardshrink", "softshrink", "glu", "prelu",
    "softmax", "softmin", "log_softmax", "dropout", "dropout1d", "dropout2d", "dropout3d",
    "alpha_dropout", "feature_alpha_dropout", "mse_loss", "l1_loss", "smooth_l1_loss",
    "huber_loss", "soft_margin_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_similarity", "pairwise_distance",
    "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "triplet_margin_loss", "layer_norm", "rms_norm", "batch_norm", "group_norm",
    "instance_norm", "normalize", "embedding", "one_hot", "pad", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool1d", "max_pool2d",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "avg_pool1d", "avg_pool2d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices", "unfold", "fold",
    "scaled_dot_product_attention", "max_pool3d", "max_pool3d_with_indices", "avg_pool3d",
    "adaptive_avg_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "local_response_norm", "pixel_shuffle", "pixel_unshuffle",
    "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "rrelu", "rrelu_",
    "poisson_nll_loss", "gaussian_nll_loss", "multilabel_soft_margin_loss",
    "triplet_margin_with_distance_loss", "multi_margin_loss", "multilabel_margin_loss",
    "embedding_bag", "gumbel_softmax",
]


def _scalar_name(t: Tensor) -> str:
    return scalar_type_name(t.dtype)


def _lower_name(t: Tensor) -> str:
    """torch's lower-case C type name of a dtype, as some messages print it."""
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "bool": "bool"}.get(t.dtype.name, t.dtype.name)


# ---------------------------------------------------------------------------------------------
# Linear
# ---------------------------------------------------------------------------------------------

def _check_bias(bias: Tensor, rows: int, out: int, mat2: Tensor) -> None:
    if bias.dtype != mat2.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_scalar_name(bias)} and "
            f"{_scalar_name(mat2)}"
        )
    target = (rows, out)
    shape = tuple(bias.shape)
    padded = (1,) * (2 - len(shape)) + shape
    for i in (1, 0):
        if padded[i] != 1 and padded[i] != target[i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[i]}) must match the existing size "
                f"({padded[i]}) at non-singleton dimension {i}.  Target sizes: "
                f"[{rows}, {out}].  Tensor sizes: [{', '.join(str(s) for s in shape)}]"
            )


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``.

    A 2-D input with a bias is one ``addmm`` (AddmmBackward0); other contiguous inputs with a
    bias are flattened to 2-D around the same ``addmm`` (ViewBackward0 on both sides), as torch
    does; without a bias it is ``matmul(input, weight.t())``.

    Example:
        >>> import tapegrad as torch
        >>> import tapegrad.nn.functional as F
        >>> F.linear(torch.ones(2, 3), torch.ones(4, 3), torch.zeros(4)).shape
        torch.Size([2, 4])
    """
    if bias is not None and weight.ndim == 2 and input.ndim >= 1:
        wt = weight.t()
        if input.ndim == 2:
            if input.shape[1] == wt.shape[0]:
                _check_bias(bias, input.shape[0], wt.shape[1], wt)
            return la.addmm(bias, input, wt)
        if input._data.flags.c_contiguous and bias.ndim == 1:
            flat = sh.view(input, -1, input.shape[-1])
            if flat.shape[1] == wt.shape[0]:
                _check_bias(bias, flat.shape[0], wt.shape[1], wt)
            out = la.addmm(bias, flat, wt)
            return sh.view(out, tuple(input.shape[:-1]) + (weight.shape[0],))
    out = la.matmul(input, weight.t())
    if bias is not None:
        out = out + bias
    return out


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y_k = x1^T W_k x2 + b_k`` over the last dims (leading dims are batch dims)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} "
            f"and {list(input2.shape[:-1])}"
        )
    lead = tuple(input1.shape[:-1])
    o, i1, i2 = weight.shape
    x1 = input1.reshape(-1, i1)
    x2 = input2.reshape(-1, i2)
    # (B, i1) @ (i1, o*i2) -> (B, o, i2), then contract with x2
    tmp = x1.matmul(weight.permute(1, 0, 2).reshape(i1, o * i2)).reshape(-1, o, i2)
    out = (tmp * x2.unsqueeze(1)).sum(-1, dtype=tmp.dtype).reshape(lead + (o,))
    if bias is not None:
        out = out + bias
    return out


# ---------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------

def _inplace(entry: Any, input: Tensor, **params: Any) -> Tensor:
    return apply_(entry, input, **params)


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


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
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
    if inplace:
        return _inplace(K._silu, input)
    return K._silu(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x tanh(softplus(x))."""
    if inplace:
        return _inplace(K._mish, input)
    return K._mish(input)


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
    if inplace:
        return _inplace(K._hardsigmoid, input)
    return K._hardsigmoid(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x) (HardswishBackward0)."""
    if inplace:
        return _inplace(K._hardswish, input)
    return K._hardswish(input)


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


# ---------------------------------------------------------------------------------------------
# Dropout: torch's CPU noise, bernoulli(1 - p) in the input's dtype divided by (1 - p)
# ---------------------------------------------------------------------------------------------

def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _engine() -> Any:
    from .._random import default_generator

    return default_generator.engine


def _noise_tensor(noise: np.ndarray, input: Tensor) -> Tensor:
    if input.dtype._rank < 2:  # torch: noise.div_(1 - p) fails on an integer noise tensor
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {_scalar_name(input)}"
        )
    return Tensor._make(noise)


def _dropout_impl(input: Tensor, p: float, train: bool, inplace: bool, feature: bool,
                  alpha: bool) -> Tensor:
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        zero = Tensor._make(np.zeros((), dtype=input._data.dtype))
        return input.mul_(zero) if inplace else input * zero
    shape = tuple(input.shape)
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = shape[:2] + (1,) * (input.ndim - 2)
    eng = _engine()
    np_dtype = input._data.dtype
    if not alpha:
        values = eng.dropout_noise(shape, np_dtype if input.dtype._rank >= 2 else np.float32, p)
        data = input._data
        if not feature and not data.flags.c_contiguous and data.ndim > 1:
            # torch's noise is empty_like(input): laid out like the input, so the draws fill
            # it in the input's memory order
            values = _rng_place(values.reshape(-1), shape,
                                [st // data.itemsize for st in data.strides])
        noise = _noise_tensor(values, input)
        return input.mul_(noise) if inplace else input * noise
    if input.dtype._rank < 2:
        raise RuntimeError(
            f"result type Float can't be cast to the desired output type {_scalar_name(input)}"
        )
    keep = eng.bernoulli(1.0 - p, shape, np_dtype)
    a_const = 1.7580993408473766
    a = 1.0 / math.sqrt((a_const * a_const * p + 1) * (1 - p))
    b = Tensor._make((keep - 1.0) * (a_const * a) + a_const * a * p)
    noise = Tensor._make(keep * a)
    if inplace:
        return input.mul_(noise).add_(b)
    return input * noise + b


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
            ) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p) (when training).

    The noise is drawn from the default generator exactly as torch draws it on the CPU, so a
    seeded program drops the same elements.
    """
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, False)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input."""
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
            "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _feature_unbatched(input, p, training, inplace, 3)


def _feature_unbatched(input: Tensor, p: float, training: bool, inplace: bool,
                       batched_dim: int) -> Tensor:
    if input.ndim == batched_dim:
        return _dropout_impl(input, p, training, inplace, True, False)
    x = input.unsqueeze(0)
    out = _dropout_impl(x, p, training, inplace, True, False)
    return out.squeeze(0)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, H, W) input."""
    _check_p(p)
    d = input.ndim
    if d not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {d}-D input to dropout2d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout2d exists to provide "
            "channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2,
        )
    if d == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2,
        )
    return _dropout_impl(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
              ) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input."""
    _check_p(p)
    d = input.ndim
    if d not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {d}-D input to dropout3d, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            "warning, please use dropout instead. Note that dropout3d exists to provide "
            "channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, and "
            "an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2,
        )
    if d == 4:
        return _feature_unbatched(input, p, training, inplace, 5)
    return _dropout_impl(input, p, training, inplace, True, False)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
                  ) -> Tensor:
    """Dropout that keeps SELU's self-normalising mean and variance."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)


# ---------------------------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------------------------

_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _legacy_reduction(size_average: Any, reduce: Any) -> str:
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else ("sum" if reduce else "none")
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{ret}' "
        "instead.",
        stacklevel=3,
    )
    return ret


def _reduction(reduction: str, size_average: Any = None, reduce: Any = None) -> int:
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' instead.",
            stacklevel=3,
        )
        return 1
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _apply_reduction(loss: Tensor, reduction: int) -> Tensor:
    if reduction == 1:
        return loss.mean()
    if reduction == 2:
        return loss.sum()
    return loss


def _size_warning(input: Tensor, target: Tensor) -> None:
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=3,
        )


def _broadcast_pair(a: Tensor, b: Tensor) -> tuple:
    """torch.broadcast_tensors for two tensors (ExpandBackward0 where a shape grows)."""
    if a.shape == b.shape:
        return a, b
    try:
        shape = tuple(np.broadcast_shapes(tuple(a.shape), tuple(b.shape)))
    except ValueError:
        raise ew._broadcast_error(a._data, b._data) from None
    return (a if tuple(a.shape) == shape else a.expand(shape),
            b if tuple(b.shape) == shape else b.expand(shape))


def _promoted_pair(a: Tensor, b: Tensor) -> tuple:
    """Both operands in torch's promoted dtype (float32 input, int64 target: float32)."""
    if a.dtype == b.dtype:
        return a, b
    common = promote_types(a.dtype, b.dtype)
    return (a if a.dtype == common else a.to(common), b if b.dtype == common else b.to(common))


def _weighted(loss: Tensor, weight: Tensor, input: Tensor, reduction: str,
              mean_by_weight: bool) -> Tensor:
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    out = loss * weight
    if reduction == "none":
        return out
    if reduction == "sum":
        return rd.sum(out)
    if reduction == "mean":
        return rd.sum(out) / rd.sum(weight) if mean_by_weight else out.mean()
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


def mse_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean squared error (MseLossBackward0)."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    x, t = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((x - t) ** 2, weight, input, reduction, True)
    return K._mse_loss(*_promoted_pair(x, t), reduction=_reduction(reduction))


def l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """Mean absolute error: ``(input - target).abs()`` then the reduction."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    x, t = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((x - t).abs(), weight, input, reduction, True)
    return _apply_reduction((x - t).abs(), _reduction(reduction))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (SmoothL1LossBackward0)."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    x, t = _broadcast_pair(input, target)
    red = _reduction(reduction)
    if beta == 0.0:
        return _apply_reduction((x - t).abs(), red)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return K._smooth_l1_loss(*_promoted_pair(x, t), reduction=red, beta=beta)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere (HuberLossBackward0)."""
    _size_warning(input, target)
    x, t = _broadcast_pair(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return K._huber_loss(x, t, reduction=_reduction(reduction), delta=delta)
    loss = K._huber_loss(x, t, reduction=0, delta=delta)
    return _weighted(loss, weight, input, reduction, False)


def soft_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                     reduce: Any = None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-y x))."""
    red = _reduction(reduction, size_average, reduce)
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    except ValueError:
        raise ew._broadcast_error(input._data, target._data) from None
    t = target._data.astype(input._data.dtype)
    return K._soft_margin_loss(input, target=np.broadcast_to(t, input.shape), reduction=red)


def _check_target_dtype(target: Tensor) -> None:
    if target.dtype.name not in ("int64", "uint8"):
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_scalar_name(target)}"
        )


def _nll_weight(weight: Tensor | None, input: Tensor, n_classes: int, prefix: str = "") -> Any:
    if weight is None:
        return None
    if weight.ndim != 1 or weight.numel() != n_classes:
        raise RuntimeError(
            f"{prefix}weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: [{', '.join(str(s) for s in weight.shape)}]"
        )
    if weight.dtype != input.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_name(input)} but found {_scalar_name(weight)}"
        )
    return weight._data


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
             size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
             reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] (weighted), for log-probabilities along dim 1 (NllLossBackward0;
    NllLoss2DBackward0 for inputs with spatial dims)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    return _nll_nd(input, target, weight, _reduction(reduction), ignore_index)


def _nll_nd(input: Tensor, target: Tensor, weight: Tensor | None, red: int,
            ignore_index: int) -> Tensor:
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    if input.ndim != 1 and target.ndim >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
            f"({target.shape[0]})."
        )
    if input.ndim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
            raise ValueError(
                "For 1D input, 1D target must have size 1, but got target size: "
                f"{target.shape[0]}"
            )
        _check_target_dtype(target)
        w = _nll_weight(weight, input, input.shape[-1])
        tgt = target._data.astype(np.int64)
        if input.ndim == 1:
            tgt = tgt.reshape(())
        return K._nll_loss(input, target=tgt, weight=w, ignore_index=ignore_index,
                           reduction=red, _cache={})
    n, c = input.shape[:2]
    out_size = (n,) + tuple(input.shape[2:])
    if input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError(
                "only batches of spatial targets supported (3D tensors) but got targets of "
                f"dimension: {target.ndim}"
            )
        if tuple(target.shape) != (n,) + tuple(input.shape[2:]):
            raise RuntimeError(
                f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}"
            )
        x, tgt = input, target._data
    else:
        if tuple(target.shape[1:]) != tuple(input.shape[2:]):
            raise RuntimeError(
                f"Expected target size {list(out_size)}, got {list(target.shape)}"
            )
        x = input.contiguous().view(n, c, 1, -1) if input.numel() else input.view(n, c, 0, 0)
        tgt = target._data.reshape(n, 1, -1) if target.numel() else target._data.reshape(n, 0, 0)
    _check_target_dtype(target)
    w = _nll_weight(weight, input, c)
    out = K._nll_loss2d(x, target=tgt.astype(np.int64), weight=w, ignore_index=ignore_index,
                        reduction=red, _cache={})
    if red == 0 and input.ndim != 4:
        out = out.view(out_size)
    return out


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                  size_average: Any = None, ignore_index: int = -100, reduce: Any = None,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """log_softmax over dim 1, then nll_loss (NllLossBackward0 over LogSoftmaxBackward0).

    ``target`` holds class indices (int64, shape (N, d1, ...)) or, with the input's shape,
    class probabilities. Stable for any logits: log_softmax subtracts the row maximum.

    Example:
        >>> import tapegrad as torch
        >>> import tapegrad.nn.functional as F
        >>> F.cross_entropy(torch.tensor([[1e4, 0.0]]), torch.tensor([1]))
        tensor(10000.)
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    red = _reduction(reduction)
    class_dim = 0 if input.ndim == 1 else 1
    if (red == 1 and weight is None and not label_smoothing and input.ndim == 2
            and target.ndim == 1):
        fast = _cross_entropy_fast(input, target, ignore_index)
        if fast is not None:
            return fast
    if input.shape == target.shape:
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                f"{_scalar_name(target)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, red, label_smoothing, class_dim)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(
                f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}"
            )
        return _cross_entropy_smoothed(input, target, weight, red, ignore_index,
                                       label_smoothing, class_dim)
    logp = log_softmax(input, class_dim, dtype=input.dtype)
    return _nll_nd(logp, target, weight, red, ignore_index)


def _cross_entropy_fast(input: Tensor, target: Tensor, ignore_index: int) -> Tensor | None:
    """The common case as two lean entries (the same nodes), or None where it does not apply:
    (N, C) float logits, N int64 class indices in [0, C), none of them ignored."""
    x, t = input._data, target._data
    n, c = x.shape
    if (x.dtype.kind != "f" or t.dtype != np.int64 or n == 0 or c == 0 or t.shape[0] != n
            or 0 <= ignore_index < c or t.view(np.uint64).max() >= c):  # (negatives wrap)
        return None
    return K._ce_nll(K._ce_log_softmax(input, _cache={}), target=t.copy())


def _class_weight(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(shape)


def _cross_entropy_probs(input: Tensor, target: Tensor, weight: Tensor | None, red: int,
                         label_smoothing: float, class_dim: int) -> Tensor:
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")
    n_classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim, dtype=input.dtype)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        _nll_weight(weight, input, n_classes, "cross_entropy: ")
        prod = prod * _class_weight(weight, input.ndim, class_dim)
    if red == 0:
        return -prod.sum(class_dim)
    total = -rd.sum(prod)
    if red == 2:
        return total
    return K._div_scalar(total, other=input.numel() / n_classes if input.numel() else math.nan)


def _cross_entropy_smoothed(input: Tensor, target: Tensor, weight: Tensor | None, red: int,
                            ignore_index: int, label_smoothing: float, class_dim: int) -> Tensor:
    n_classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim, dtype=input.dtype)
    nll = _nll_nd(logp, target, weight, red, ignore_index)
    ignore = target._data == ignore_index
    if weight is not None:
        smooth = -(logp * _class_weight(weight, input.ndim, class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill_(Tensor._make(ignore), 0.0)
    if red == 1:
        if weight is not None:
            kept = target._data[~ignore].reshape(-1)
            denom = Tensor._make(np.sum(weight._data[kept], dtype=weight._data.dtype))
        else:
            denom = Tensor._make(np.asarray(np.sum(~ignore), dtype=np.int64))
        smooth = rd.sum(smooth) / denom
    elif red == 2:
        smooth = rd.sum(smooth)
    return (K._mul_scalar(nll, other=1 - label_smoothing)
            + K._mul_scalar(smooth, other=label_smoothing / n_classes))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100 (BinaryCrossEntropyBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}) is deprecated. Please ensure they have the same size."
        )
    if target.dtype != input.dtype:
        raise RuntimeError(
            f"Found dtype {_scalar_name(target)} but expected {_scalar_name(input)}"
        )
    w = None
    if weight is not None:
        if weight._requires_grad and _state.enabled:
            raise RuntimeError(
                "The function 'binary_cross_entropy' is not differentiable with respect to "
                "argument 'weight'. This input cannot have requires_grad True."
            )
        shape = tuple(np.broadcast_shapes(tuple(target.shape), tuple(weight.shape)))
        w = np.broadcast_to(weight._data, shape)
    return K._bce(input, target, weight=w, reduction=red)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None, size_average: Any = None,
                                     reduce: Any = None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """BCE on logits, in the stable log-sigmoid form (BinaryCrossEntropyWithLogitsBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(
            f"Target size ({target.shape}) must be the same as input size ({input.shape})"
        )
    arrays: dict[str, Any] = {}
    for name, t in (("weight", weight), ("pos_weight", pos_weight)):
        if t is None:
            arrays[name] = None
            continue
        if t._requires_grad and _state.enabled:
            raise RuntimeError(
                "The function 'binary_cross_entropy_with_logits' is not differentiable with "
                f"respect to argument '{name}'. This input cannot have requires_grad True."
            )
        try:
            np.broadcast_shapes(tuple(t.shape), tuple(input.shape))
        except ValueError:
            raise ew._broadcast_error(t._data, input._data) from None
        arrays[name] = t._data
    return K._bce_logits(input, target, weight=arrays["weight"],
                         pos_weight=arrays["pos_weight"], reduction=red)


def kl_div(input: Tensor, target: Tensor, size_average: Any = None, reduce: Any = None,
           reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL(target || exp(input)) pointwise: target (log target - input); 'batchmean' divides
    the sum by the batch size."""
    if size_average is not None or reduce is not None:
        red = _REDUCTIONS[_legacy_reduction(size_average, reduce)]
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns with the KL "
                "div math definition.'mean' will be changed to behave the same as 'batchmean' "
                "in the next major release.",
                stacklevel=2,
            )
        red = 2 if reduction == "batchmean" else _reduction(reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _xlogy_self(target) - target * input
    out = _apply_reduction(loss, red)
    if reduction == "batchmean" and input.ndim != 0:
        out = out / input.shape[0]
    return out


def _xlogy_self(t: Tensor) -> Tensor:
    """t log t, 0 where t == 0 (torch's xlogy(t, t))."""
    if not t._requires_grad and t._fw_grad is None:
        with np.errstate(all="ignore"):
            d = t._data
            return Tensor._make(np.where(d == 0, 0, d * np.log(np.where(d == 0, 1, d)))
                                .astype(d.dtype))
    pos = t != 0
    safe = ew.where(pos, t, 1.0)
    return ew.where(pos, t * safe.log(), 0.0)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1/|x1| * x2/|x2|) along ``dim``, each norm clamped at eps."""
    a, b = _broadcast_pair(x1, x2)
    d = _wrap_dim(dim, a.ndim)
    na = rd.norm(a, 2, d, True).clone()
    nb = rd.norm(b, 2, d, True).clone()
    with no_grad():  # torch clamps the norms without recording it
        na.clamp_(min=eps)
        nb.clamp_(min=eps)
    return ((a / na) * (b / nb)).sum(d)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim (NormBackward1)."""
    d = x1 - x2 + eps
    return K._norm_dim(d, ord=float(p), dim=(max(d.ndim - 1, 0),), keepdim=keepdim)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average: Any = None, reduce: Any = None,
                          reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) for target 1, max(0, cos - margin) for target -1."""
    red = _reduction(reduction, size_average, reduce)
    td = target.ndim
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if td == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(
            "1D target tensor expects 2D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    if td == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(
            "0D target tensor expects 1D input tensors, but found inputs with sizes "
            f"{list(input1.shape)} and {list(input2.shape)}."
        )
    eps = 1e-12
    prod = (input1 * input2).sum(td)
    mag1 = (input1 * input1).sum(td) + eps
    mag2 = (input2 * input2).sum(td) + eps
    cos = prod / (mag1 * mag2).sqrt()
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    out = ew.where(target == 1, pos, 0.0) + ew.where(target == -1, neg, 0.0)
    return _apply_reduction(out, red)


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, -target (x1 - x2) + margin)."""
    red = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} "
        )
    return _apply_reduction((-target * (input1 - input2) + margin).clamp_min(0), red)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         size_average: Any = None, reduce: Any = None,
                         reduction: str = "mean") -> Tensor:
    """x for target 1, max(0, margin - x) for target -1."""
    red = _reduction(reduction, size_average, reduce)
    margin_clamp = (margin - input).clamp_min(0)
    out_margin = ew.where(target != 1, margin_clamp, 0.0)
    out_self = ew.where(target != -1, input, 0.0)
    return _apply_reduction(out_margin + out_self, red)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2, eps: float = 1e-6,
                        swap: bool = False, size_average: Any = None, reduce: Any = None,
                        reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with pairwise distances."""
    red = _reduction(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ew.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _apply_reduction((margin + d_pos - d_neg).clamp_min(0), red)


# ---------------------------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------------------------

def _shape_list(normalized_shape: Any, fname: str) -> tuple:
    if isinstance(normalized_shape, int) or not isinstance(normalized_shape, Sequence):
        raise TypeError(
            f"{fname}(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
            f"{type(normalized_shape).__name__}"
        )
    return tuple(int(s) for s in normalized_shape)


def _check_normalized(input: Tensor, shape: tuple, star: str, weight: Any = None,
                      bias: Any = None) -> None:
    """torch's layer_norm_cpu_out checks: the shape, then weight and bias, then the input."""
    k = len(shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {list(t.shape)} and normalized_shape = {list(shape)}"
            )
    if k == 0 or tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        inner = ", ".join(str(s) for s in shape)
        raise RuntimeError(
            f"Given normalized_shape=[{inner}], expected input with shape [{star}{inner}], but "
            f"got input of size{list(input.shape)}"
        )


def layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) * weight + bias over the last dims
    (NativeLayerNormBackward0, one node)."""
    shape = _shape_list(normalized_shape, "layer_norm")
    _check_normalized(input, shape, "*, ", weight, bias)
    return K._layer_norm(input, weight, bias, ndim=len(shape), eps=eps, _cache={})


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the last dims (torch composes it too)."""
    shape = _shape_list(normalized_shape, "rms_norm")
    _check_normalized(input, shape, "*", weight)
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    ms = rd.mean(input ** 2, dims, True)
    out = input * K._add_scalar(ms, other=eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out


def _verify_batch_size(size: tuple) -> None:
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
        from .._tensor import Size

        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {Size(size)}"
        )


def _check_batch_norm_args(input: Tensor, weight: Any, bias: Any, running_mean: Any,
                           running_var: Any, training: bool) -> None:
    """torch's errors for batch norm's per-channel tensors (also torch.native_batch_norm's)."""
    c = input.shape[1] if input.ndim > 1 else 1
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{which} must be defined in evaluation mode")


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) with the batch's statistics (training; the running
    statistics are updated in place with the unbiased variance) or the running ones (eval)."""
    if training:
        _verify_batch_size(tuple(input.shape))
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps:g}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps:g}")
    if input.numel() == 0:  # torch: a copy (so the graph goes on), scaled by the first weight
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    _check_batch_norm_args(input, weight, bias, running_mean, running_var, training)
    rm = running_mean._data if running_mean is not None else None
    rv = running_var._data if running_var is not None else None
    out = K._batch_norm(input, weight, bias, running_mean=rm, running_var=rv,
                        training=training, momentum=momentum, eps=eps, _cache={})
    return out  # (torch updates the running statistics without bumping their version)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise groups of channels (NativeGroupNormBackward0)."""
    if input.ndim < 2:
        raise RuntimeError(
            f"Expected at least 2 dimensions for input tensor but received {input.ndim}"
        )
    c = input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={num_groups}"
        )
    _verify_batch_size((input.shape[0] * c // num_groups, num_groups) + tuple(input.shape[2:]))
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {list(t.shape)} and input of shape "
                f"{list(input.shape)}"
            )
    return K._group_norm(input, weight, bias, groups=num_groups, eps=eps, _cache={})


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """batch_norm of the input seen as one batch of N*C channels."""
    if use_input_stats:
        _verify_batch_size(tuple(input.shape))
    n, c = input.shape[:2]
    x = input.contiguous().view((1, n * c) + tuple(input.shape[2:]))
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    out = K._batch_norm(x, w, b, running_mean=rm._data if rm is not None else None,
                        running_var=rv._data if rv is not None else None,
                        training=use_input_stats, momentum=momentum, eps=eps, _cache={})
    if use_input_stats:
        for src, rep in ((running_mean, rm), (running_var, rv)):
            if src is not None and rep is not None:
                src._data[...] = rep._data.reshape(n, c).mean(0)
    return out.view(tuple(input.shape))


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """input / max(||input||_p, eps) along ``dim``."""
    denom = rd.norm(input, p, dim, True).clamp_min(eps).expand_as(input)
    if out is not None:
        return out.copy_(input / denom)
    return input / denom


# ---------------------------------------------------------------------------------------------
# Embedding, one_hot, pad
# ---------------------------------------------------------------------------------------------

def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input`` (EmbeddingBackward0); the row at
    ``padding_idx`` gets no gradient."""
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = input._data
    if idx.dtype not in (np.int64, np.int32):
        from .._dtype import LEGACY_NAMES

        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{LEGACY_NAMES.get(input.dtype.name, 'Tensor')} "
            "instead (while checking arguments for embedding)"
        )
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm(weight, idx, max_norm, norm_type)
    return K._embedding(weight, indices=idx.astype(np.int64, copy=False),
                        padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)


def _embedding_renorm(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float
                      ) -> None:
    """Rescale, in place and without grad, the looked-up rows whose norm exceeds max_norm."""
    rows = np.unique(idx)
    w = weight._data
    norms = np.sum(np.abs(w[rows]) ** norm_type, axis=1) ** (1.0 / norm_type)
    big = norms > max_norm
    if big.any():
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
        w[rows[big]] *= scale[:, None]
        weight._version_counter.value += 1


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim (``num_classes=-1``: max + 1)."""
    x = tensor._data
    if x.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if x.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(x.max()) + 1
    if x.size and x.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes < 0 or (x.size and x.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = (x[..., None] == np.arange(num_classes)).astype(np.int64)
    return Tensor._make(out)


_PAD_SUPPORT = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
)


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims (``pad`` lists the last dim first: (left, right,
    top, bottom, ...)); negative pads crop. Modes: constant, reflect, replicate, circular."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > input.ndim * 2:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.ndim}"
        )
    if mode == "constant":
        return _constant_pad(input, pad, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    k = len(pad) // 2
    if k not in (1, 2, 3) or input.ndim not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            + _PAD_SUPPORT
        )
    if mode == "circular":
        return _circular_pad(input, pad)
    return _gather_pad(input, pad, mode, k)


def _constant_pad(input: Tensor, pad: tuple, value: Any) -> Tensor:
    pairs = K._pad_pairs(pad, input.ndim)
    for d, (lo, hi) in enumerate(pairs):
        n = input.shape[d]
        if n + lo + hi < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    return K._constant_pad(input, pad=pad, value=value)


def _gather_pad(input: Tensor, pad: tuple, mode: str, k: int) -> Tensor:
    index = []
    spatial = input.shape[input.ndim - k:]
    batch_dims = input.ndim - k
    for i in range(k):
        n = spatial[i]
        lo, hi = pad[2 * (k - 1 - i)], pad[2 * (k - 1 - i) + 1]
        if mode == "reflect":
            if lo >= n or hi >= n:
                dim = input.ndim - 1 - (k - 1 - i)
                raise RuntimeError(
                    f"Argument #4: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({lo}, {hi}) at dimension {dim} of input "
                    f"{list(input.shape)}"
                )
            pos = np.arange(-lo, n + hi)
            pos = np.abs(pos)
            pos = np.where(pos >= n, 2 * (n - 1) - pos, pos)
        else:
            if 0 in tuple(input.shape)[1 if input.ndim == k + 2 else 0:]:
                raise RuntimeError(
                    f"Expected {'2D or 3D' if k == 1 else '3D or 4D' if k == 2 else '4D or 5D'}"
                    " (batch mode) tensor with possibly 0 batch size and other non-zero "
                    f"dimensions for input, but got: {list(input.shape)}"
                )
            pos = np.clip(np.arange(-lo, n + hi), 0, n - 1)
        index.append(pos.astype(np.int64))
    del batch_dims
    entry = K._GATHER_PADS[("reflection" if mode == "reflect" else "replication", k)]
    return entry(input, index=tuple(index))


def _circular_pad(input: Tensor, pad: tuple) -> Tensor:
    """torch's circular padding: copy the input into place, then copy the wrapped borders from
    the output itself (the result's history is a chain of CopySlices, as in torch)."""
    k = len(pad) // 2
    nd = input.ndim
    in_shape = tuple(input.shape)
    out_shape = list(in_shape)
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = in_shape[d]
        out_shape[d] = size + lo + hi
        if lo > size or hi > size:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[d] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
    out = Tensor._make(np.zeros(out_shape, dtype=input._data.dtype))
    out_slice, in_slice = out, input
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        out_slice = out_slice.narrow(d, max(lo, 0), out_shape[d] - max(lo, 0) - max(hi, 0))
        in_slice = in_slice.narrow(d, max(-lo, 0), in_shape[d] - max(-lo, 0) - max(-hi, 0))
    out_slice.copy_(in_slice)
    for i in range(k):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            src = out.narrow(d, out_shape[d] - lo - max(hi, 0), lo)
            out.narrow(d, 0, lo).copy_(src)
        if hi > 0:
            src = out.narrow(d, max(lo, 0), hi)
            out.narrow(d, out_shape[d] - hi, hi).copy_(src)
    return out


# ---------------------------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------------------------

_WARNED = {"same_even": False}


def _tuple(v: Any, n: int) -> tuple:
    if isinstance(v, (list, tuple)):
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _expand_param(v: Any, n: int, name: str) -> tuple:
    t = _tuple(v, n)
    if len(t) == 1 and n > 1:
        t = t * n
    if len(t) != n:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {n} values to match the "
            f"convolution dimensions, but got {name}={list(t)}"
        )
    return t


def _conv(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any, padding: Any,
          dilation: Any, groups: int, nd: int, name: str) -> Tensor:
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    if input.ndim == nd + 1:
        out = _conv(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups, nd,
                    name)
        return out.squeeze(0)
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight.ndim != nd + 2:
        raise RuntimeError(
            f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight"
            f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
            f"{list(input.shape)} instead")
    stride = _expand_param(stride, nd, "stride")
    dilation = _expand_param(dilation, nd, "dilation")
    kernel = tuple(weight.shape[2:])
    pre_pad = None
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, kernel, strict=True)]
            padding = tuple(t // 2 for t in total)
            if any(t % 2 for t in total):
                if not _WARNED["same_even"]:  # TORCH_WARN_ONCE: once per process
                    _WARNED["same_even"] = True
                    warnings.warn(
                        "Using padding='same' with even kernel lengths and odd dilation may "
                        "require a zero-padded copy of the input be created",
                        stacklevel=3,
                    )
                pre = []
                for t in reversed(total):
                    pre += [0, t % 2]
                pre_pad = tuple(pre)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        padding = _expand_param(padding, nd, "padding")
    _check_conv(input, weight, bias, stride, padding, dilation, groups, False)
    if pre_pad is not None:
        input = pad(input, pre_pad)
    _check_sizes(input, kernel, padding, dilation)
    return K._convolution(input, weight, bias, stride=stride, padding=padding,
                          dilation=dilation, groups=groups, transposed=False,
                          output_padding=(0,) * nd, _cache={})


def _check_conv(input: Tensor, weight: Tensor, bias: Tensor | None, stride: tuple,
                padding: tuple, dilation: tuple, groups: int, transposed: bool) -> None:
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    wshape = list(weight.shape)
    if not transposed:
        if weight.shape[0] < groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, "
                f"but got weight of size {wshape} instead")
        if weight.shape[0] % groups:
            raise RuntimeError(
                f"Given groups={groups}, expected weight to be divisible by {groups} at "
                f"dimension 0, but got weight of size [{wshape}] instead"  # (torch's [[...]])
            )
        if input.shape[1] != weight.shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {wshape}, expected input"
                f"{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                f"{input.shape[1]} channels instead"
            )
        out_ch = weight.shape[0]
    else:
        if input.shape[1] != weight.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {wshape}, expected input"
                f"{list(input.shape)} to have {weight.shape[0]} channels, but got "
                f"{input.shape[1]} channels instead"
            )
        out_ch = weight.shape[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != out_ch):
        raise RuntimeError(
            f"Given weight of size {wshape}, expected bias to be 1-dimensional with {out_ch} "
            f"elements, but got bias of size {list(bias.shape)} instead"
        )
    if input.dtype != weight.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_name(input)} but found {_scalar_name(weight)}"
        )
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(
            f"Input type ({_lower_name(input)}) and bias type ({_lower_name(bias)}) should be "
            "the same"
        )


def _check_sizes(input: Tensor, kernel: tuple, padding: tuple, dilation: tuple) -> None:
    padded = [n + 2 * p for n, p in zip(input.shape[2:], padding, strict=True)]
    eff = [d * (k - 1) + 1 for d, k in zip(dilation, kernel, strict=True)]
    if any(e > n for e, n in zip(eff, padded, strict=True)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(str(n) for n in padded)}). "
            f"Kernel size: ({' x '.join(str(e) for e in eff)}). Kernel size can't be greater "
            "than actual input size"
        )


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """1-D cross-correlation over (N, C, L) (ConvolutionBackward0)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """2-D cross-correlation over (N, C, H, W) as im2col + one matrix product
    (ConvolutionBackward0). ``padding`` may be an int, a tuple, 'same' or 'valid'.

    Example:
        >>> import tapegrad as torch
        >>> import tapegrad.nn.functional as F
        >>> F.conv2d(torch.ones(1, 1, 4, 4), torch.ones(2, 1, 3, 3)).shape
        torch.Size([1, 2, 2, 2])
    """
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride: Any = 1,
           padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    """3-D cross-correlation over (N, C, D, H, W) (ConvolutionBackward0)."""
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transpose(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Any,
                    padding: Any, output_padding: Any, groups: int, dilation: Any, nd: int,
                    name: str) -> Tensor:
    if isinstance(padding, str):
        raise TypeError(f"{name}(): argument 'padding' must be tuple of ints, not str")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
            f"input of size: {list(input.shape)}"
        )
    if input.ndim == nd + 1:
        return _conv_transpose(input.unsqueeze(0), weight, bias, stride, padding,
                               output_padding, groups, dilation, nd, name).squeeze(0)
    stride = _expand_param(stride, nd, "stride")
    padding = _expand_param(padding, nd, "padding")
    dilation = _expand_param(dilation, nd, "dilation")
    output_padding = _expand_param(output_padding, nd, "output_padding")
    _check_conv(input, weight, bias, stride, padding, dilation, groups, True)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation, strict=True)):
        names = ("height", "width") if nd == 2 else (("width",) if nd == 1 else
                                                     ("depth", "height", "width"))
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding, strict=True)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, stride, strict=True)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation, strict=True)]
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(parts)
        )
    return K._convolution(input, weight, bias, stride=stride, padding=padding,
                          dilation=dilation, groups=groups, transposed=True,
                          output_padding=output_padding, _cache={})


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The adjoint of conv1d in its input (ConvolutionBackward0)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 1, "conv_transpose1d")


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The adjoint of conv2d in its input (ConvolutionBackward0)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 2, "conv_transpose2d")


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    """The adjoint of conv3d in its input (ConvolutionBackward0)."""
    return _conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                           dilation, 3, "conv_transpose3d")


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
           stride: Any = 1) -> Tensor:
    """im2col: the sliding blocks of a (N, C, H, W) input as (N, C*kh*kw, L)."""
    if input.ndim not in (3, 4):
        _wrap_dim(2, input.ndim)
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {list(input.shape)}"
        )
    if input.ndim == 3:
        return unfold(input.unsqueeze(0), kernel_size, dilation, padding, stride).squeeze(0)
    k, d, p, s = (_tuple(v, 2) for v in (kernel_size, dilation, padding, stride))
    geo = K._Geometry(tuple(input.shape[2:]), k, s, tuple((q, q) for q in p), d)
    return K._im2col(input, geo=geo)


def fold(input: Tensor, output_size: Any, kernel_size: Any, dilation: Any = 1,
         padding: Any = 0, stride: Any = 1) -> Tensor:
    """col2im: sum (N, C*kh*kw, L) blocks back into (N, C, *output_size)."""
    if input.ndim == 2:
        return fold(input.unsqueeze(0), output_size, kernel_size, dilation, padding,
                    stride).squeeze(0)
    o, k, d, p, s = (_tuple(v, 2) for v in (output_size, kernel_size, dilation, padding,
                                             stride))
    geo = K._Geometry(o, k, s, tuple((q, q) for q in p), d)
    blocks = int(np.prod(geo.out_size))
    if input.shape[2] != blocks:
        raise RuntimeError(
            f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), "
            f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), "
            "expected size of input's dimension 2 to match the calculated number of sliding "
            f"blocks {geo.out_size[0]} * {geo.out_size[1]} = {blocks}, but got "
            f"input.size(2)={input.shape[2]}."
        )
    c = input.shape[1] // (k[0] * k[1])
    return K._col2im_op(input, geo=geo, channels=c)


# ---------------------------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------------------------

def _pool_out(n: int, k: int, pad_: int, s: int, d: int, ceil: bool) -> int:
    """torch's pooling_output_shape."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if pad_ < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad_}")
    if pad_ > ((k - 1) * d + 1) // 2:
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={pad_}, "
            f"kernel_size={k} and dilation={d}"
        )
    num = n + 2 * pad_ - d * (k - 1) - 1 + (s - 1 if ceil else 0)
    out = num // s + 1
    if ceil and (out - 1) * s >= n + pad_:
        out -= 1
    return out


_COUNT = {1: "one", 2: "two", 3: "three"}


def _pool_args(name: str, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
               nd: int = 2) -> tuple:
    n = _COUNT[nd]
    k = _tuple(kernel_size, nd)
    if len(k) not in (1, nd):
        raise RuntimeError(f"{name}: kernel_size must either be a single int, or a tuple of {n} "
                           "ints")
    if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0):
        s = k
    else:
        s = _tuple(stride, nd)
        if len(s) not in (1, nd):
            raise RuntimeError(f"{name}: stride must either be omitted, a single int, or a "
                               f"tuple of {n} ints")
    p = _tuple(padding, nd)
    if len(p) not in (1, nd):
        raise RuntimeError(f"{name}: padding must either be a single int, or a tuple of {n} "
                           "ints")
    d = _tuple(dilation, nd)
    if len(d) not in (1, nd):
        raise RuntimeError(f"{name}: dilation must be either a single int, or a tuple of {n} "
                           "ints")

    def full(t: tuple) -> tuple:
        return t * nd if len(t) == 1 else t

    return full(k), full(s), full(p), full(d)


def _pool_geometry(input: Tensor, k: tuple, s: tuple, p: tuple, d: tuple, ceil: bool
                   ) -> K._Geometry:
    nd = len(k)
    size = tuple(input.shape[-nd:])
    names = ("kH", "kW") if nd == 2 else ("kT", "kH", "kW")
    if any(v <= 0 for v in k):
        if any(v == 0 for v in s):
            raise RuntimeError("stride should not be zero")
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + " ".join(f"{a}: {v}" for a, v in zip(names, k, strict=True)))
    if any(v <= 0 for v in d):
        dn = ("dilationH", "dilationW") if nd == 2 else ("dilationT", "dilationH", "dilationW")
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"{a}: {v}" for a, v in zip(dn, d, strict=True)))
    out = tuple(_pool_out(n, kk, pp, ss, dd, ceil)
                for n, kk, pp, ss, dd in zip(size, k, p, s, d, strict=True))
    if any(o < 1 for o in out):
        planes = input.shape[-nd - 1] if input.ndim > nd else 1
        raise RuntimeError(
            f"Given input size: ({'x'.join(str(v) for v in (planes,) + size)}). Calculated "
            f"output size: ({'x'.join(str(v) for v in (planes,) + out)}). Output size is too "
            "small"
        )
    pads = []
    for n, kk, ss, pp, dd, o in zip(size, k, s, p, d, out, strict=True):
        need = (o - 1) * ss + dd * (kk - 1) + 1
        pads.append((pp, max(need - n - pp, pp)))
    return K._Geometry(size, k, s, tuple(pads), d, out)


def _check_pool_input(input: Tensor, nd: int = 2) -> None:
    if input.ndim not in (nd + 1, nd + 2) or input.numel() == 0:
        which = "3D or 4D" if nd == 2 else "4D or 5D"
        raise RuntimeError(f"non-empty {which} (batch mode) tensor expected for input")


def _check_pool_pads(k: tuple, p: tuple, d: tuple) -> None:
    """torch's pooling_output_shape checks the padding before anything about the input."""
    for kk, pp, dd in zip(k, p, d, strict=True):
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={pp}, "
                f"kernel_size={kk} and dilation={dd}")


def _check_max_pool_input(input: Tensor, nd: int) -> None:
    shape = list(input.shape)
    if nd == 2:
        if input.ndim not in (3, 4):
            _check_pool_input(input)
        if 0 in shape[-3:]:
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{shape}")
        return
    if input.ndim not in (4, 5):
        _check_pool_input(input, 3)
    first = input.ndim - 4
    for i in range(first, input.ndim):
        if shape[i] == 0:
            raise RuntimeError(
                "max_pool3d_with_indices_out_cpu_template(): Expected input's non-batch "
                f"dimensions to have positive length, but input has a shape of {shape} and "
                f"non-batch dimension {i} has length zero!")


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple:
    """max_pool2d, always returning (values, indices)."""
    k, s, p, d = _pool_args("max_pool2d", kernel_size, stride, padding, dilation)
    _check_pool_pads(k, p, d)
    _check_max_pool_input(input, 2)
    geo = _pool_geometry(input, k, s, p, d, ceil_mode)
    return K._max_pool(input, geo=geo, _cache={})


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple:
    """max_pool3d, always returning (values, indices)."""
    k, s, p, d = _pool_args("max_pool3d", kernel_size, stride, padding, dilation, 3)
    _check_pool_pads(k, p, d)
    _check_max_pool_input(input, 3)
    geo = _pool_geometry(input, k, s, p, d, ceil_mode)
    return K._max_pool3d(input, geo=geo, _cache={})


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The maximum of each 3-D window (MaxPool3DWithIndicesBackward0)."""
    out, idx = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """The maximum of each window (MaxPool2DWithIndicesBackward0); ``return_indices`` also
    gives each maximum's flat position in its (H, W) plane."""
    out, idx = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def _check_1d(input: Tensor, name: str) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument "
            f"#1 'self' (while checking arguments for {name})"
        )


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple:
    """max_pool1d, always returning (values, indices)."""
    k1 = _tuple(kernel_size, 1)
    _check_pool_pads(k1, _tuple(padding, 1) * len(k1), _tuple(dilation, 1) * len(k1))
    if input.ndim not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(input.shape)}"
        )
    def one(v):
        return ((1,) + _tuple(v, 1))
    s = None if stride is None or stride == [] or stride == () else one(stride)
    out, idx = max_pool2d_with_indices(input.unsqueeze(-2), one(kernel_size), s,
                                       (0,) + _tuple(padding, 1), one(dilation), ceil_mode)
    return out.squeeze(-2), Tensor._make(idx._data.squeeze(-2))


def _check_max_pool1d(input: Tensor, kernel_size: Any, stride: Any, padding: Any,
                      dilation: Any, ceil_mode: bool) -> None:
    shape = list(input.shape)
    if input.ndim not in (2, 3) or shape[-1] == 0 or shape[-2] == 0:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{shape}")
    k = _tuple(kernel_size, 1)[0]
    st = k if stride is None or stride == [] or stride == () else _tuple(stride, 1)[0]
    p, d = _tuple(padding, 1)[0], _tuple(dilation, 1)[0]
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if st <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {st}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError("max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out = _pool_out(shape[-1], k, p, st, d, ceil_mode)
    if out < 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out}")


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               dilation: Any = 1, ceil_mode: bool = False, return_indices: bool = False) -> Any:
    """max_pool2d over a (N, C, 1, L) view of the input."""
    if not return_indices:  # torch's max_pool1d checks its arguments in its own words
        _check_max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode)
    out, idx = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (out, idx) if return_indices else out


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each window (AvgPool2DBackward0)."""
    return _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, 2)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean of each 3-D window (AvgPool3DBackward0)."""
    return _avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override, 3)


def _avg_pool_nd(input: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
                 count_include_pad: bool, divisor_override: Any, nd: int) -> Tensor:
    k, s, p, _ = _pool_args(f"avg_pool{nd}d", kernel_size, stride, padding, 1, nd)
    _check_pool_pads(k, p, (1,) * nd)
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 2:  # torch's avg_pool2d reads the input's dim -3 first
            _wrap_dim(-nd - 1, input.ndim)
        _check_pool_input(input, nd)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geo = _pool_geometry(input, k, s, p, (1,) * nd, ceil_mode)
    div = K._avg_divisor(geo, count_include_pad, divisor_override)
    entry = K._avg_pool if nd == 2 else K._avg_pool3d
    return entry(input, geo=geo, divisor=div)


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None, padding: Any = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """avg_pool2d over a (N, C, 1, L) view of the input."""
    _check_1d(input, "avg_pool1d")
    def one(v):
        return ((1,) + _tuple(v, 1))
    s = None if stride is None or stride == [] or stride == () else one(stride)
    out = avg_pool2d(input.unsqueeze(-2), one(kernel_size), s, (0,) + _tuple(padding, 1),
                     ceil_mode, count_include_pad)
    return out.squeeze(-2)


def _check_output_dims(input: Tensor, output_size: Any) -> None:
    """torch's Python wrapper first fills Nones from the input's trailing sizes."""
    if isinstance(output_size, (list, tuple)) and input.ndim <= len(output_size):
        raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")


def _one_int(output_size: Any, name: str) -> int:
    if isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                           f"{len(output_size)})")
    return _tuple(output_size, 1)[0]


def _adaptive_size(input: Tensor, output_size: Any, name: str, nd: int = 2) -> tuple:
    if isinstance(output_size, (list, tuple)):
        o = tuple(output_size)
    else:
        o = (output_size,) * nd
    if len(o) != nd:
        raise RuntimeError(f"{name}: output_size must be {nd}")
    o = tuple(input.shape[-nd + i] if v is None else int(v) for i, v in enumerate(o))
    if any(v < 0 for v in o):
        raise RuntimeError(
            f"{name}: elements of output_size must be greater than or equal to 0 but received "
            f"{{{', '.join(str(v) for v in o)}}}"
        )
    return o


def _adaptive_avg(input: Tensor, output_size: Any, nd: int) -> Tensor:
    name = f"adaptive_avg_pool{nd}d"
    _check_output_dims(input, output_size)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {list(input.shape)}"
        )
    o = _adaptive_size(input, output_size, name, nd)
    if all(v == 1 for v in o):
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    size = tuple(input.shape[-nd:])
    dt = input._data.dtype
    mats = tuple(K._adaptive_matrix(n, v, dt) for n, v in zip(size, o, strict=True))
    return K.SEPARABLE[name](input, mats=mats)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a given output size (AdaptiveAvgPool2DBackward0; (1, 1) is a mean)."""
    return _adaptive_avg(input, output_size, 2)


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:
    """Average pooling to a given 3-D output size (AdaptiveAvgPool3DBackward0)."""
    return _adaptive_avg(input, output_size, 3)


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:
    """adaptive_avg_pool2d over a (N, C, 1, L) view of the input."""
    _check_1d(input, "adaptive_avg_pool1d")
    o = _one_int(output_size, "adaptive_avg_pool1d")
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool2d, always returning (values, indices)."""
    _check_output_dims(input, output_size)
    if input.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}"
        )
    o = tuple(output_size) if isinstance(output_size, (list, tuple)) else (output_size,) * 2
    if len(o) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    o = tuple(input.shape[-2 + i] if v is None else int(v) for i, v in enumerate(o))
    if any(v < 0 for v in o):
        shape = list(input.shape[:-2]) + list(o)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(o)}: {shape}")
    return K._adaptive_max_pool(input, output_size=o, _cache={})


def adaptive_max_pool2d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a given output size (AdaptiveMaxPool2DBackward0)."""
    out, idx = adaptive_max_pool2d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool3d, always returning (values, indices into each D*H*W volume)."""
    name = "adaptive_max_pool3d()"
    _check_output_dims(input, output_size)
    if input.ndim not in (4, 5):
        raise RuntimeError(f"{name}: Expected 4D or 5D tensor, but got: {list(input.shape)}")
    for i in range(input.ndim - 3, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(
                f"{name}: Expected input to have non-zero size for non-batch dimensions, but "
                f"input has sizes {list(input.shape)} with dimension {i} being empty")
    o = tuple(output_size) if isinstance(output_size, (list, tuple)) else (output_size,) * 3
    if len(o) != 3:
        raise RuntimeError(f"{name}: internal error: output_size.size() must be 3")
    o = tuple(input.shape[-3 + i] if v is None else int(v) for i, v in enumerate(o))
    if any(v < 0 for v in o):
        shape = list(input.shape[:-3]) + list(o)
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(o)}: {shape}")
    return K._adaptive_max_pool3d(input, output_size=o, _cache={})


def adaptive_max_pool3d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """Max pooling to a given 3-D output size (AdaptiveMaxPool3DBackward0)."""
    out, idx = adaptive_max_pool3d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool1d, always returning (values, indices)."""
    _check_1d(input, "adaptive_max_pool1d")
    o = _one_int(output_size, "adaptive_max_pool1d")
    out, idx = adaptive_max_pool2d_with_indices(input.unsqueeze(-2), (1, o))
    return out.squeeze(-2), Tensor._make(idx._data.squeeze(-2))


def adaptive_max_pool1d(input: Tensor, output_size: Any, return_indices: bool = False) -> Any:
    """adaptive_max_pool2d over a (N, C, 1, L) view of the input."""
    out, idx = adaptive_max_pool1d_with_indices(input, output_size)
    return (out, idx) if return_indices else out


# ---------------------------------------------------------------------------------------------
# Unpooling, interpolation, pixel shuffle, LP pooling, local response norm
# ---------------------------------------------------------------------------------------------

def _unpool_output_size(input: Tensor, kernel: tuple, stride: tuple, padding: tuple,
                        output_size: Any) -> tuple:
    nd = len(kernel)
    default = [(input.shape[-nd + d] - 1) * stride[d] + kernel[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        ret = default
    else:
        given = output_size
        output_size = list(output_size)
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(
                f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it "
                f"has a length of '{len(output_size)}'"
            )
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(
                    f'invalid output_size "{given}" (dim {d} must be between {lo} and {hi})'
                )
        ret = output_size
    for d in range(nd):
        if ret[d] < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but "
                f"got output_size[{d}]={ret[d]}"
            )
    return tuple(int(v) for v in ret)


def _max_unpool(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any, padding: Any,
                output_size: Any, nd: int) -> Tensor:
    k = _tuple(kernel_size, nd)
    k = k * nd if len(k) == 1 else k
    st = k if stride is None else _tuple(stride, nd)
    st = st * nd if len(st) == 1 else st
    pd = _tuple(padding, nd)
    pd = pd * nd if len(pd) == 1 else pd
    size = _unpool_output_size(input, k, st, pd, output_size)
    if tuple(indices.shape) != tuple(input.shape):
        extra = [1] if nd == 1 else []  # torch runs 1-d as 2-d with a trailing 1
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(input.shape) + extra}) but got indices tensor with shape: "
            f"{list(indices.shape) + extra}")
    if nd == 1:
        out = K._max_unpool2d(input.unsqueeze(-1), indices=indices._data[..., None],
                              out_size=size + (1,))
        return out.squeeze(-1)
    entry = K._max_unpool2d if nd == 2 else K._max_unpool3d
    return entry(input, indices=indices._data, out_size=size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of max_pool1d."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of max_pool2d: each value back at its index, zeros elsewhere."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any, stride: Any = None,
                 padding: Any = 0, output_size: Any = None) -> Tensor:
    """The partial inverse of max_pool3d."""
    return _max_unpool(input, indices, kernel_size, stride, padding, output_size, 3)


def _lp_pool(input: Tensor, norm_type: float, kernel_size: Any, stride: Any, ceil_mode: bool,
             nd: int) -> Tensor:
    k = _tuple(kernel_size, nd)
    k = k * nd if len(k) == 1 else k
    pool_max = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[nd]
    if norm_type == float("inf"):
        return pool_max(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -pool_max(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    pool_avg = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}[nd]
    out = pool_avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (ew.sign(out) * relu(out.abs())).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: int, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x^p over each window)^(1/p), 1-D."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x^p over each window)^(1/p)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,
              ceil_mode: bool = False) -> Tensor:
    """(sum of x^p over each window)^(1/p), 3-D."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(
            f"Expected 3D or higher dimensionality                          input (got {dim} "
            "dimensions)"
        )
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = div.unsqueeze(1)
        div = pad(div, (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1)
        div = div.view(sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r) (PixelShuffleBackward0)."""
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            "pixel_shuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square "
            f"of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    return K._pixel_shuffle(input, r=r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W) (PixelUnshuffleBackward0)."""
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(
            "pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
            f"{input.ndim} dimension(s)"
        )
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    for name, d in (("height", -2), ("width", -1)):
        if input.shape[d] % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                f"input.size({d})={input.shape[d]} is not divisible by {r}"
            )
    return K._pixel_unshuffle(input, r=r)


def _scale_value(n_in: int, n_out: int, scale: Any, dtype: Any) -> Any:
    """torch's compute_scales_value: 1/scale_factor when given, else in/out, in ``dtype``."""
    if scale is not None and scale > 0:
        return dtype(1.0 / scale)
    return dtype(n_in) / dtype(n_out)


def _nearest_index(n_in: int, n_out: int, scale: Any, exact: bool) -> np.ndarray:
    dst = np.arange(n_out)
    if not exact and n_out == n_in:
        return dst
    if not exact and n_out == 2 * n_in:
        return dst >> 1
    sc = _scale_value(n_in, n_out, scale, np.float32)
    pos = (dst.astype(np.float32) + np.float32(0.5)) * sc if exact else dst.astype(
        np.float32) * sc
    return np.minimum(np.floor(pos).astype(np.int64), n_in - 1)


def _source_coords(n_in: int, n_out: int, align_corners: bool, scale: Any, cubic: bool,
                   dtype: Any) -> np.ndarray:
    """torch's area_pixel_compute_scale + area_pixel_compute_source_index, in ``dtype``."""
    dst = np.arange(n_out).astype(dtype)
    if align_corners:
        sc = dtype(n_in - 1) / dtype(n_out - 1) if n_out > 1 else dtype(0)
        return sc * dst
    sc = _scale_value(n_in, n_out, scale, dtype)
    src = sc * (dst + dtype(0.5)) - dtype(0.5)
    return src if cubic else np.maximum(src, dtype(0))


def _linear_matrix(n_in: int, n_out: int, align_corners: bool, scale: Any, dtype: Any
                   ) -> np.ndarray:
    src = _source_coords(n_in, n_out, align_corners, scale, False, dtype)
    i0 = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    lam1 = np.clip(src - i0.astype(dtype), 0, 1).astype(dtype)
    lam0 = (dtype(1) - lam1).astype(dtype)
    i1 = i0 + (i0 < n_in - 1)
    m = np.zeros((n_out, n_in), dtype=dtype)
    rows = np.arange(n_out)
    np.add.at(m, (rows, i0), lam0)
    np.add.at(m, (rows, i1), lam1)
    return m


def _cubic_matrix(n_in: int, n_out: int, align_corners: bool, scale: Any, dtype: Any
                  ) -> np.ndarray:
    src = _source_coords(n_in, n_out, align_corners, scale, True, dtype)
    i0 = np.floor(src).astype(np.int64)
    t = (src - i0.astype(dtype)).astype(dtype)
    a = dtype(-0.75)

    def conv1(x: np.ndarray) -> np.ndarray:
        return ((a + dtype(2)) * x - (a + dtype(3))) * x * x + dtype(1)

    def conv2(x: np.ndarray) -> np.ndarray:
        return ((a * x - dtype(5) * a) * x + dtype(8) * a) * x - dtype(4) * a

    weights = (conv2(t + dtype(1)), conv1(t), conv1(dtype(1) - t), conv2(dtype(2) - t))
    m = np.zeros((n_out, n_in), dtype=dtype)
    rows = np.arange(n_out)
    for j, w in enumerate(weights):
        np.add.at(m, (rows, np.clip(i0 - 1 + j, 0, n_in - 1)), w.astype(dtype))
    return m


_LINEAR_MODES = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resample the spatial dims (nearest, nearest-exact, (bi/tri)linear, bicubic, area).

    Every mode but nearest is one matrix per spatial dim (a separable linear map), so the
    backward is the transposed matrices; nearest gathers indices.
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: linear | "
                "bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format."
                )
            out_size = [int(v) for v in size]
        else:
            out_size = [int(size)] * dim
    elif scale_factor is not None:
        out_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, "
                    "C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format."
                )
            scales = [float(v) for v in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out_size is None:
        recompute_scale_factor = True
    if out_size is None:  # scale_factor was given, so scales is set
        given = cast(list, scales)
        out_size = [math.floor(input.shape[i + 2] * given[i]) for i in range(dim)]
    if recompute_scale_factor:
        scales = None
    if antialias:
        raise NotImplementedError("tapegrad: interpolate(antialias=True) is not supported")
    if dim not in (1, 2, 3):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})"
        )
    in_size = tuple(input.shape[2:])
    sc = scales if scales is not None else [None] * dim
    if mode in ("nearest", "nearest-exact"):
        exact = mode == "nearest-exact"
        index = tuple(_nearest_index(n, o, s_, exact)
                      for n, o, s_ in zip(in_size, out_size, sc, strict=True))
        entry = K.GATHERS[("nearest_exact" if exact else "nearest", dim)]
        return entry(input, index=index)
    if mode == "area":
        return {1: adaptive_avg_pool1d, 2: adaptive_avg_pool2d, 3: adaptive_avg_pool3d}[dim](
            input, out_size if dim > 1 else out_size[0])
    need = _LINEAR_MODES.get(mode)
    if need is None:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
            "the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
            f"nearest-exact (got {mode})"
        )
    if need != dim:
        raise NotImplementedError(
            f"Got {input.ndim}D input, but {mode} mode needs {need + 2}D input"
        )
    dt = input._data.dtype.type
    build = _cubic_matrix if mode == "bicubic" else _linear_matrix
    mats = tuple(build(n, o, bool(align_corners), s_, dt)
                 for n, o, s_ in zip(in_size, out_size, sc, strict=True))
    name = {"linear": "upsample_linear1d", "bilinear": "upsample_bilinear2d",
            "trilinear": "upsample_trilinear3d", "bicubic": "upsample_bicubic2d"}[mode]
    return K.SEPARABLE[name](input, mats=mats)


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated: interpolate."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: interpolate(mode="nearest")."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None, scale_factor: Any = None) -> Tensor:
    """Deprecated: interpolate(mode="bilinear", align_corners=True)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------------------------------------
# More losses and activations: rrelu, margin losses, NLL variants, embedding bags
# ---------------------------------------------------------------------------------------------

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


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average: Any = None, eps: float = 1e-8, reduce: Any = None,
                     reduction: str = "mean") -> Tensor:
    """exp(x) - t x (log_input) or x - t log(x + eps), plus Stirling's term when ``full``."""
    red = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, red)


def gaussian_nll_loss(input: Tensor, target: Tensor, var: Any, full: bool = False,
                      eps: float = 1e-6, reduction: str = "mean") -> Tensor:
    """0.5 (log var + (x - t)^2 / var), var clamped at eps (without gradient through it)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        from .._creation import ones_like

        var = var * ones_like(input)
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif input.ndim == var.ndim and sum(
            y for x, y in zip(input.shape, var.shape, strict=True) if x != y
        ) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = (var.log() + (input - target) ** 2 / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, _REDUCTIONS[reduction])


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average: Any = None, reduce: Any = None,
                                reduction: str = "mean") -> Tensor:
    """-mean over classes of t log s(x) + (1 - t) log s(-x)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _apply_reduction(loss, _REDUCTIONS[reduction])


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Any = None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """max(0, d(a, p) - d(a, n) + margin) with any distance."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of "
            f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = ew.minimum(d_neg, dist(positive, negative))
    loss = (d_pos - d_neg + margin).clamp_min(0)
    return _apply_reduction(loss, _REDUCTIONS[reduction])


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average: Any = None,
                      reduce: Any = None, reduction: str = "mean") -> Tensor:
    """sum over i != y of max(0, margin - x[y] + x[i])^p (weighted by w[y]) / C."""
    red = _reduction(reduction, size_average, reduce)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    c = input.shape[-1] if input.ndim else 1
    t = target._data.astype(np.int64)
    if t.size and (t.min() < 0 or t.max() >= c):
        raise RuntimeError("target out of range")
    onehot = t[..., None] == np.arange(c)
    return K._multi_margin_loss(input, onehot=onehot, p=p, margin=float(margin),
                                weight=None if weight is None else weight._data, reduction=red)


def multilabel_margin_loss(input: Tensor, target: Tensor, size_average: Any = None,
                           reduce: Any = None, reduction: str = "mean") -> Tensor:
    """For each target class j (the labels before the first -1) and non-target i:
    max(0, 1 - (x[j] - x[i])), summed and divided by C."""
    red = _reduction(reduction, size_average, reduce)
    t = target._data.astype(np.int64)
    c = input.shape[-1]
    stop = np.cumsum(t < 0, axis=-1) > 0
    is_target = np.zeros(input.shape, dtype=bool)
    rows = np.nonzero(~stop)
    is_target[rows[:-1] + (t[rows],)] = True
    del c
    return K._multilabel_margin_loss(input, is_target=is_target, reduction=red)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embedding rows (EmbeddingBagBackward0)."""
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.ndim != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}"
        )
    idx = input._data.astype(np.int64)
    psw = per_sample_weights
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        starts = np.arange(0, idx.size, idx.shape[1]) if idx.shape[1] else np.zeros(
            idx.shape[0], dtype=np.int64)
        include_last_offset = False
        idx = idx.reshape(-1)
        if psw is not None:
            psw = psw.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets._data.astype(np.int64)
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm(weight, idx, max_norm, norm_type)
    if psw is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    n_bags = len(starts) - 1 if include_last_offset else len(starts)
    ends = np.append(starts[1:], idx.size) if not include_last_offset else starts[1:]
    starts = starts[:n_bags]
    counts = np.maximum(ends[:n_bags] - starts, 0)
    segment = np.repeat(np.arange(n_bags), counts)
    if len(segment) < idx.size:  # indices after the last bag's end belong to no bag
        idx = idx[:len(segment)]
        if psw is not None:
            psw = psw[:len(segment)]
    if padding_idx is not None and padding_idx < 0:
        padding_idx = weight.shape[0] + padding_idx
    keep = idx != padding_idx if padding_idx is not None else np.ones(idx.size, dtype=bool)
    return K._embedding_bag(weight, psw, indices=idx, segment=segment, keep=keep,
                            n_bags=n_bags, mode=modes[mode],
                            scale_grad_by_freq=scale_grad_by_freq, _cache={})


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + Gumbel noise) / tau); ``hard`` returns one-hot samples with the soft
    gradient (straight-through). The noise comes from the default generator as in torch."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    from .._creation import empty_like, zeros_like

    gumbels = -empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


# ---------------------------------------------------------------------------------------------
# Attention
# ---------------------------------------------------------------------------------------------

def _attn_mask_array(attn_mask: Tensor, q: Tensor) -> np.ndarray:
    m = attn_mask._data
    if m.dtype == np.bool_:
        add = np.zeros(m.shape, dtype=q._data.dtype)
        add[~m] = -np.inf
        return add
    return m.astype(q._data.dtype, copy=False)


def _causal_mask(lq: int, lk: int) -> np.ndarray:
    return np.tril(np.ones((lq, lk), dtype=bool))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over the last two dims.

    4-D inputs without dropout take torch's fused CPU path: one node
    (ScaledDotProductFlashAttentionForCpuBackward0). Other cases are composed like torch's math
    path (q and k scaled by sqrt(scale), matmul, SafeSoftmaxBackward0, dropout, matmul), with
    the dropout noise drawn as torch draws it. Rows with no allowed key give zeros.
    """
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim:"
            f" {query.ndim} key.dim: {key.ndim} and value.dim: {value.ndim} instead."
        )
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_lower_name(query)} key.dtype: {_lower_name(key)} and value.dtype: "
            f"{_lower_name(value)} instead."
        )
    if attn_mask is not None and attn_mask.dtype.name != "bool" and (
        attn_mask.dtype != query.dtype
    ):
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_lower_name(attn_mask)} and  query.dtype: {_lower_name(query)} "
            "instead."
        )
    if dropout_p < 0.0 or dropout_p > 1.0:
        raise RuntimeError(
            f"dropout probability has to be between 0 and 1, but got {dropout_p}"
        )
    lq, lk = query.shape[-2], key.shape[-2]
    d = query.shape[-1]
    sc = 1.0 / math.sqrt(d) if scale is None else float(scale)
    groups = 1
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
        if hq % hk or hq % hv:
            raise RuntimeError(
                "Number of heads in key and value must divide the number of heads in "
            )
        groups = hq // hk
    mask = None
    if attn_mask is not None:
        mask = _attn_mask_array(attn_mask, query)
    if is_causal:
        causal = np.where(_causal_mask(lq, lk), 0.0, -np.inf).astype(query._data.dtype)
        mask = causal if mask is None else mask + causal
    if mask is not None:
        try:
            np.broadcast_shapes(mask.shape, tuple(query.shape[:-1]) + (lk,))
        except ValueError:
            raise ew._broadcast_error(np.empty(tuple(query.shape[:-1]) + (lk,)), mask) from None
    fused = (query.ndim == 4 and key.ndim == 4 and value.ndim == 4 and dropout_p == 0.0
             and value.shape[-1] == d and key.shape[-1] == d and lq > 0 and lk > 0
             and (attn_mask is None or not attn_mask._requires_grad))
    if fused:
        if groups == 1 and (key.shape[-3] != query.shape[-3]
                            or value.shape[-3] != query.shape[-3]):
            raise ew._broadcast_error(query._data[..., :1, :1], key._data[..., :1, :1])
        return K._sdpa(query, key, value, scale=sc, mask=mask, groups=groups, _cache={})
    return _sdpa_math(query, key, value, attn_mask, mask, dropout_p, sc, groups)


def _sdpa_math(q: Tensor, k: Tensor, v: Tensor, attn_mask: Tensor | None, mask: Any,
               dropout_p: float, scale: float, groups: int) -> Tensor:
    root = math.sqrt(abs(scale))  # torch scales q and k by sqrt(scale) each (q's sign flips)
    if groups > 1:
        k = sh.repeat_interleave(k, groups, dim=-3)
        v = sh.repeat_interleave(v, groups, dim=-3)
    qs = K._mul_scalar(q, other=root if scale >= 0 else -root)
    ks = K._mul_scalar(k, other=root)
    attn = la.matmul(qs, ks.transpose(-2, -1))
    if mask is not None:
        if attn_mask is not None and attn_mask._requires_grad and attn_mask.is_floating_point():
            attn = attn + attn_mask
        else:
            attn = attn + Tensor._make(mask)
    attn = K._safe_softmax(attn, dim=attn.ndim - 1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return la.matmul(attn, v)


def _lengths(x: Any) -> np.ndarray:
    data = x._data if isinstance(x, Tensor) else np.asarray(x)
    return np.asarray(data, dtype=np.int64).reshape(-1)


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any,
             blank: int = 0, reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification: -log of the summed probability of every
    alignment of each target, ``log_probs`` (T, N, C) (or (T, C)) from log_softmax. Targets
    are padded (N, S) or concatenated (sum of target_lengths,). ``mean`` divides each loss by
    its target length, then averages (CtcLossBackward0 under DivBackward0 and MeanBackward0)."""
    red = _reduction(reduction)
    if log_probs._data.dtype.kind != "f":
        name = scalar_type_name(log_probs.dtype)
        raise NotImplementedError(f'"ctc_loss_cpu" not implemented for \'{name}\'')
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    t_max, n, classes = lp.shape
    il, tl = _lengths(input_lengths), _lengths(target_lengths)
    tg = np.asarray(targets._data if isinstance(targets, Tensor) else targets).astype(np.int64)
    if not batched:
        tg = tg.reshape(1, -1)
    check = " (while checking arguments for ctc_loss_allocate_outputs)"
    if il.size != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.size != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if n and int(il.max()) > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                           f"value {int(il.max())}{check}")
    s_max = int(tl.max()) if n else 0
    padded = np.full((n, s_max), blank, dtype=np.int64)
    if tg.ndim == 2:
        if tg.shape[1] < s_max:
            raise RuntimeError(f"Expected tensor to have size at least {s_max} at dimension 1, "
                               f"but got size {tg.shape[1]} for argument #2 'targets'{check}")
        for i in range(n):
            padded[i, :tl[i]] = tg[i, :tl[i]]
    else:
        starts = np.concatenate([[0], np.cumsum(tl)[:-1]]).astype(np.int64)
        if int(tl.sum()) > tg.size:
            raise RuntimeError(f"Expected tensor to have size at least {int(tl.sum())} at "
                               f"dimension 0, but got size {tg.size} for argument #2 "
                               f"'targets'{check}")
        for i in range(n):
            padded[i, :tl[i]] = tg[starts[i]:starts[i] + tl[i]]
    labels = np.full((n, 2 * s_max + 1), blank, dtype=np.int64)
    labels[:, 1::2] = padded
    loss = K._ctc_loss(lp, labels=labels, input_lengths=il, target_lengths=tl,
                       zero_infinity=zero_infinity, _cache={})
    if zero_infinity:
        loss = ew.where(loss == math.inf, Tensor._make(np.zeros((), loss._data.dtype)), loss)
    if red == 1:
        div = Tensor._make(np.maximum(tl, 1).astype(loss._data.dtype))
        return (loss / div).mean()
    if red == 2:
        return loss.sum()
    return loss if batched else loss.squeeze(0)




def multi_head_attention_forward(*args: Any, **kwargs: Any) -> Any:
    """``F.multi_head_attention_forward``: the computation behind ``nn.MultiheadAttention``
    (defined beside the module in ``nn/modules/activation.py``), with torch's signature."""
    from .modules.activation import multi_head_attention_forward as mha

    return mha(*args, **kwargs)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``groups`` groups (ChannelShuffleBackward0)."""
    from ..ops.spatial import channel_shuffle as shuffle

    return shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps theta, for ``grid_sample``."""
    from ..ops.spatial import affine_grid as grid

    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", stacklevel=2)
        align_corners = False
    return grid(theta, size, align_corners)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample input at the normalized positions of grid (see ``ops/spatial.py``)."""
    from ..ops.spatial import grid_sample as sample

    return sample(input, grid, mode, padding_mode, align_corners)


def _fractional_max_pool(input: Tensor, kernel_size: Any, output_size: Any, output_ratio: Any,
                         return_indices: bool, _random_samples: Any, d: int) -> Any:
    from .._random import rand
    from ..ops import spatial

    name = f"fractional_max_pool{d}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    k = _tuple(kernel_size, d)
    if output_size is None:
        if d == 2 and len(output_ratio) > 2:
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        ratio = (tuple(output_ratio) if isinstance(output_ratio, (tuple, list))
                 else (output_ratio,) * d)
        out_size = tuple(int(input.size(-d + i) * ratio[i]) for i in range(d))
    else:
        out_size = _tuple(output_size, d)
    batched = input.ndim == d + 2
    x = input if batched else input.unsqueeze(0)
    if _random_samples is None:
        n_batch = x.size(0)
        _random_samples = rand(n_batch, x.size(1), d, dtype=input.dtype)
    for i in range(d):
        if out_size[i] + k[i] - 1 > x.size(2 + i):
            raise RuntimeError(f"{name}(): pool height {k[i]} too large relative to input "
                               f"height {x.size(2 + i)}" if d == 2 and i == 0 else
                               f"{name}_out(): pool size {k[i]} too large relative to "
                               f"input size {x.size(2 + i)}")
    op = spatial._FRACTIONAL_2D if d == 2 else spatial._FRACTIONAL_3D
    out, idx = op(x, samples=_random_samples._data, pool=k, out_size=out_size, _cache={})
    idx = idx.detach() if hasattr(idx, "detach") else idx
    if not batched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return (out, idx) if return_indices else out


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Max pooling over pseudo-randomly placed windows (Graham, 2014), drawn from the
    default generator as torch draws them."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, 2)


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Any = None) -> Any:
    """Fractional max pooling over (D, H, W)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples, 3)


def fractional_max_pool2d_with_indices(*args: Any, **kwargs: Any) -> Any:
    kwargs["return_indices"] = True
    return fractional_max_pool2d(*args, **kwargs)


def fractional_max_pool3d_with_indices(*args: Any, **kwargs: Any) -> Any:
    kwargs["return_indices"] = True
    return fractional_max_pool3d(*args, **kwargs)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between every pair of rows i < j (PdistBackward0; ops/distance.py)."""
    from ..ops.distance import pdist as _pdist

    return _pdist(input, p)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options: Any = None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): torch's reference
    path. ``linear_weight`` (C, *d, in) gives K-dimensional logits (N, C, *d). ``options``
    (torch's chunking strategy) is accepted; the computation is the reference one."""
    if input.ndim < 1 or input.ndim > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.ndim}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), got "
            f"{in_features} and {linear_weight.shape[-1]}, respectively")
    c, out = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (c, *out):
        raise RuntimeError(f"expected linear_bias shape {(c, *out)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*batch, c, *out)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if (options is not None and reduction in ("mean", "sum", "none") and not out
            and label_smoothing == 0.0 and target.dtype.name == "int64"):
        # torch's chunked path: the same loss under the node of its custom op (unbatched
        # input goes through as a batch of one)
        unbatched = input.ndim == 1
        x, t = (input.unsqueeze(0), target.unsqueeze(0)) if unbatched else (input, target)
        loss = linear_cross_entropy(x, linear_weight, t, linear_bias=linear_bias,
                                    weight=weight, reduction=reduction,
                                    ignore_index=ignore_index)
        loss = (_CHUNKED_NONE if reduction == "none" else _CHUNKED)(loss)
        return loss.squeeze(0) if unbatched else loss
    rows = c * math.prod(out)
    w2 = linear_weight.reshape(rows, in_features) if out else linear_weight
    b2 = None if linear_bias is None else (linear_bias.reshape(rows) if out else linear_bias)
    logits = linear(input, w2, b2)
    if out:
        logits = logits.reshape(logits_shape)
    return cross_entropy(logits, target, weight, ignore_index=(
        -100 if ignore_index is None else ignore_index), reduction=reduction,
        label_smoothing=label_smoothing)


def _chunked_entry(name: str, node: str) -> Any:
    from ..ops._registry import defop

    entry = defop(name, node=node)(lambda x: x.copy())
    entry.backward(lambda ctx, grad: (grad,))  # identity: the loss's own graph is below
    return entry


_CHUNKED = _chunked_entry(
    "linear_cross_entropy_chunked",
    "GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_defaultBackward")
_CHUNKED_NONE = _chunked_entry(
    "linear_cross_entropy_chunked_none",
    "GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_"
    "defaultBackward")
