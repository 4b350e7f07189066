"""Convolution: ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``, ``unfold`` and ``fold``, with
torch's argument checks; the arithmetic is ``ops/conv.py``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..._tensor import Tensor, _wrap_dim
from ...ops import conv as K
from ._common import _lower_name, _scalar_name
from ._padding import pad

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
    if any(d < 0 for d in dilation):  # (torch checks negatives first, then shows zeros)
        raise RuntimeError("dilation should be greater than zero")
    if any(d == 0 for d in dilation):
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


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-d convolution over time-major input (time, batch, channels); weight (k, in, out)."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


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
