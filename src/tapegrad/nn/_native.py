"""torch's native entry points of the nn kernels: ``torch.native_layer_norm``,
``torch.native_batch_norm``, ``torch.native_group_norm`` and ``torch.grid_sampler`` (with its
``_2d``/``_3d`` forms). They take the kernels' own argument lists (integer modes, explicit
N, C, HxW) and return what the kernels return (the statistics next to the output); the
arithmetic is the same registry entries ``tapegrad.nn.functional`` uses.

    native_layer_norm(x, shape, w, b, eps) -> (y, mean, rstd)      y: NativeLayerNormBackward0
    native_batch_norm(x, w, b, rm, rv, training, momentum, eps) -> (y, save_mean, save_invstd)
    native_group_norm(x, w, b, N, C, HxW, group, eps) -> (y, mean, rstd)   all three differentiable
    batch_norm_update_stats(x, rm, rv, momentum) -> (mean, var)   running stats updated in place

The statistics of layer and batch norm carry no gradient (as torch's); group norm's mean and
rstd do: its entry differentiates the composite below (``_group_norm_composite``) at the saved
inputs, so every output's gradient, and create_graph, come from tapegrad ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._dtype import LEGACY_NAMES
from .._tensor import Tensor
from ..autograd import grad as autograd_grad
from ..autograd.grad_mode import _state, enable_grad, no_grad
from ..ops import normalization as K
from ..ops._registry import defop
from . import functional as F
from .functional import _check_batch_norm_args

__all__ = ["batch_norm_update_stats", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
           "native_batch_norm", "native_group_norm", "native_layer_norm"]


def _stats(x: np.ndarray, dims: tuple, eps: float) -> tuple:
    """(mean, 1/sqrt(biased var + eps)) over ``dims``, kept as size-1 dims."""
    mean = np.mean(x, axis=dims, keepdims=True)
    xc = x - mean
    var = np.mean(xc * xc, axis=dims, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return mean, (1.0 / np.sqrt(var + eps)).astype(x.dtype, copy=False)


def native_layer_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple:
    """(layer_norm(input), mean, rstd); mean and rstd keep the normalised dims as 1s."""
    shape = tuple(int(s) for s in normalized_shape)
    F._check_normalized(input, shape, "*, ", weight, bias)
    out = K._layer_norm(input, weight, bias, ndim=len(shape), eps=eps, _cache={})
    x = input._data
    dims = tuple(range(x.ndim - len(shape), x.ndim))
    if x.size == 0:
        stat = np.zeros(x.shape[:x.ndim - len(shape)] + (1,) * len(shape), dtype=x.dtype)
        return out, Tensor._make(stat), Tensor._make(stat.copy())
    mean, rstd = _stats(x, dims, eps)
    return out, Tensor._make(mean.astype(x.dtype, copy=False)), Tensor._make(rstd)


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple:
    """(batch_norm(input), save_mean, save_invstd): the batch's per-channel mean and
    1/sqrt(var + eps) in training (the running statistics updated in place), empty in eval."""
    x = input._data
    _check_batch_norm_args(input, weight, bias, running_mean, running_var, training)
    c = x.shape[1] if x.ndim > 1 else 1
    if training:
        dims = (0,) + tuple(range(2, x.ndim))
        mean, invstd = _stats(x, dims, eps)
        save = (Tensor._make(mean.reshape(c)), Tensor._make(invstd.reshape(c)))
    else:
        save = (Tensor._make(np.zeros(0, x.dtype)), Tensor._make(np.zeros(0, x.dtype)))
    rm = running_mean._data if running_mean is not None else None
    rv = running_var._data if running_var is not None else None
    out = K._batch_norm(input, weight, bias, running_mean=rm, running_var=rv,
                        training=training, momentum=momentum, eps=eps, _cache={})
    return (out,) + save


def _group_norm_composite(x: Tensor, w: Tensor | None, b: Tensor | None, n: int, c: int,
                          group: int, eps: float) -> tuple:
    """group_norm and its statistics in tapegrad ops: y, mean (N, G), rstd (N, G)."""
    per = (c // group) * (x.numel() // max(n * c, 1))
    xg = x.reshape(n, group, per)
    mean = xg.mean(-1, keepdim=True)
    xc = xg - mean
    rstd = ((xc * xc).mean(-1, keepdim=True) + eps).rsqrt()
    y = (xc * rstd).reshape(tuple(x.shape))
    cshape = (1, c) + (1,) * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(cshape)
    if b is not None:
        y = y + b.reshape(cshape)
    return y, mean.reshape(n, group), rstd.reshape(n, group)


@defop("native_group_norm", node="NativeGroupNormBackward0", outputs=3, save=(0, 1, 2))
def _native_group_norm(x: np.ndarray, w: Any, b: Any, *, n: int, c: int, group: int,
                       eps: float) -> tuple:
    with no_grad():
        outs = _group_norm_composite(
            Tensor._make(x), None if w is None else Tensor._make(w),
            None if b is None else Tensor._make(b), n, c, group, eps)
    return tuple(o._data for o in outs)


@_native_group_norm.backward
def native_group_norm_backward(ctx: Any, grads: list) -> tuple:
    # the composite's gradient at the saved inputs
    inputs = ctx.saved
    p = ctx.params
    wanted = [t for t, need in zip(inputs, ctx.needs_input_grad, strict=True) if need]
    with enable_grad():
        x, w, b = inputs
        outs = _group_norm_composite(x, w, b, p["n"], p["c"], p["group"], p["eps"])
    grads = list(grads) + [None] * (len(outs) - len(grads))  # trailing unused outputs
    pairs = [(o, g) for o, g in zip(outs, grads, strict=True) if g is not None]
    got = iter(autograd_grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                             create_graph=_state.enabled, allow_unused=True))
    res = []
    for t, need in zip(inputs, ctx.needs_input_grad, strict=True):
        g = next(got) if need else None
        if need and g is None:
            g = Tensor._make(np.zeros(t.shape, dtype=t._data.dtype))
        res.append(g)
    return tuple(res)


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int,
                      C: int, HxW: int, group: int, eps: float) -> tuple:
    """(group_norm(input), mean (N, group), rstd (N, group)); all three carry gradients."""
    if input.numel() != N * C * HxW:
        raise RuntimeError(f"Expected input to have {N * C * HxW} elements, but got "
                           f"{input.numel()}")
    if C % group:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input "
            f"of shape {list(input.shape)} and num_groups={group}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != C):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {list(t.shape)} and input of shape "
                f"{list(input.shape)}")
    return _native_group_norm(input, weight, bias, n=N, c=C, group=group, eps=eps)


_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """grid_sample with the kernel's integer modes (0 bilinear, 1 nearest, 2 bicubic; padding
    0 zeros, 1 border, 2 reflection)."""
    # ops.spatial: loaded on first use (its ops join the registry when it loads)
    from ..ops.spatial import grid_sample

    return grid_sample(input, grid, _MODES[interpolation_mode], _PADDINGS[padding_mode],
                       bool(align_corners))


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """grid_sampler of a 4-D input (GridSampler2DBackward0)."""
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """grid_sampler of a 5-D input (GridSampler3DBackward0)."""
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)



@defop("batch_norm_update_stats", node="NotImplemented", outputs=2)
def _update_stats(x: np.ndarray, *, dims: tuple, dtype: Any) -> tuple:
    mean = np.mean(x, axis=dims, dtype=dtype)
    xc = x - np.expand_dims(mean, dims).astype(x.dtype, copy=False)
    var = np.mean(xc * xc, axis=dims, dtype=dtype)
    return mean.astype(dtype, copy=False), var.astype(dtype, copy=False)


_update_stats.node_cls._cpp_name = "torch::autograd::NotImplemented"


@_update_stats.backward
def update_stats_backward(ctx: Any, grads: list) -> tuple:
    raise RuntimeError("derivative for aten::batch_norm_update_stats is not implemented")


def batch_norm_update_stats(input: Tensor, running_mean: Tensor | None,
                            running_var: Tensor | None, momentum: float) -> tuple:
    """(mean, biased var) of each channel (dim 1) over the batch and spatial dims, with the
    running statistics moved toward them in place: ``running = (1 - momentum) * running +
    momentum * stat``, the variance's unbiased (``n / (n - 1)``) as in batch_norm."""
    x = input._data
    nd = max(x.ndim, 1)
    if x.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}]"
                         f", but got 1)")
    if x.dtype.kind != "f" and x.dtype.name != "bfloat16":
        kind = LEGACY_NAMES.get(input.dtype.name, input.dtype.name).replace("Tensor", "")
        raise NotImplementedError(f'"batch_norm_update_stats_cpu" not implemented for '
                                  f"'{kind}'")
    if x.size == 0:
        raise RuntimeError("input tensor must have at least one element, but got input_sizes "
                           f"= {list(x.shape)}")
    dtype = x.dtype
    for t in (running_mean, running_var):
        if t is None or t._data.dtype == x.dtype:
            continue
        if x.dtype.itemsize < 4 and t._data.dtype == np.float32:  # bfloat16/half: float stats
            dtype = t._data.dtype
        elif x.dtype.itemsize > t._data.dtype.itemsize:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        else:
            kind = LEGACY_NAMES.get(input.dtype.name, "Float").replace("Tensor", "")
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{kind}")
    dims = (0,) + tuple(range(2, x.ndim))
    mean, var = _update_stats(input, dims=dims, dtype=dtype)
    n = x.size // x.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        if running_mean is not None:
            rm = running_mean._data
            rm[...] = (1 - momentum) * rm + momentum * mean._data
            running_mean._version_counter.value += 1
        if running_var is not None:
            rv = running_var._data
            unbiased = var._data * (n / (n - 1)) if n > 1 else var._data * np.nan
            rv[...] = (1 - momentum) * rv + momentum * unbiased
            running_var._version_counter.value += 1
    return mean, var
