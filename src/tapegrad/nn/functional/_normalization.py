"""Normalization: ``layer_norm``, ``rms_norm``, ``batch_norm``, ``group_norm``,
``instance_norm``, ``local_response_norm`` and ``normalize``; the fused ones are entries of
``ops/normalization.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import _out
from ..._tensor import Size, Tensor
from ...ops import nn_common as C
from ...ops import normalization as K
from ...ops import reduction as rd
from ._padding import pad
from ._pooling import avg_pool2d, avg_pool3d

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
    out = input * C._add_scalar(ms, other=eps).rsqrt()
    if weight is not None:
        out = out * weight
    return out


def _verify_batch_size(size: tuple) -> None:
    prod = size[0]
    for s in size[2:]:
        prod *= s
    if prod == 1:
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
    """input / max(||input||_p, eps) along ``dim`` (``out`` is a positional parameter, as in
    torch: written through ``_out.write``)."""
    if out is not None:
        _out.check("normalize", out, (input,))
    denom = rd.norm(input, p, dim, True).clamp_min(eps).expand_as(input)
    return input / denom if out is None else _out.write("div", out, input / denom, (input,))


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
