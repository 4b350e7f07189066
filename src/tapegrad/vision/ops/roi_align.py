"""RoI Align (He et al. 2017, Mask R-CNN): each region of interest is divided into an
``output_size`` grid of bins, and each bin is the average of bilinearly interpolated samples of
the feature map on a regular grid inside it (``sampling_ratio`` samples per side, or
``ceil(bin size)`` when it is not positive).

The kernel follows torchvision's CPU kernel operation for operation, in the input's dtype, so
that the outputs and gradients are its bits: the sample positions, the four bilinear weights
of each sample, the samples summed in order and divided by their count; the backward spreads
``grad * weight / count`` onto the four pixels of each sample, in the kernel's order.
"""

import functools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from ... import nn
from ..._tensor import Tensor
from ...nn.modules.utils import _pair
from ...ops._registry import defop
from ._utils import check_roi_boxes_shape, convert_boxes_to_roi_format


def _kernel_type_error(name: str, input: Tensor, rois: Tensor) -> None:
    """The kernels' checks: input and rois of one dtype, a floating one."""
    if input.dtype != rois.dtype:
        legacy = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                  "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                  "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                  "bool": "BoolTensor"}
        a = legacy.get(str(input.dtype).split(".")[-1], "Tensor")
        b = legacy.get(str(rois.dtype).split(".")[-1], "Tensor")
        raise RuntimeError(
            "Expected tensor for argument #1 'input' to have the same type as tensor for argument "
            f"#2 'rois'; but type torch.{a} does not equal torch.{b} (while checking arguments "
            f"for {name})")


def _floating_or_raise(name: str, t: Tensor) -> None:
    kind = str(t.dtype).split(".")[-1]
    if kind not in ("float32", "float64", "float16"):
        names = {"bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                 "int8": "Char", "uint8": "Byte", "bool": "Bool"}
        raise NotImplementedError(f'"{name}" not implemented for \'{names.get(kind, kind)}\'')


def _checked_rois(op: str, input: Tensor, boxes: Tensor | list[Tensor],
                  output_size: int | tuple[int, int],
                  position_sensitive: bool = False) -> tuple[Tensor, tuple[int, int]]:
    """The (K, 5) rois of ``boxes`` and the output size, after the checks torchvision's
    ``{op}_forward_kernel`` makes (for the position-sensitive ops, also that the channels split
    into the output's bins), in its order."""
    check_roi_boxes_shape(boxes)
    rois = boxes
    size = _pair(output_size)
    if not isinstance(rois, Tensor):
        rois = convert_boxes_to_roi_format(rois)
    _kernel_type_error(f"{op}_forward_kernel", input, rois)
    if position_sensitive and input.shape[1] % (size[0] * size[1]) != 0:
        raise RuntimeError("input channels must be a multiple of pooling height * pooling width")
    _floating_or_raise(f"{op}_forward_kernel", input)
    return rois, size


def _input_grad(backward_kernel: Callable[..., Tensor], ctx: Any, grad: Tensor) -> tuple:
    """The backward of a RoI op: its backward kernel's gradient for the input, none for the
    rois."""
    (rois,) = ctx.saved
    batch_size, channels, height, width = ctx.input_shapes[0]
    grad_input = backward_kernel(grad, rois, **ctx.params, batch_size=batch_size,
                                 channels=channels, height=height, width=width)
    return grad_input, None


def _no_double_backward(name: str, ctx: Any, grad: Tensor) -> tuple:
    """The backward of a RoI op's backward kernel: torchvision has none."""
    raise RuntimeError(f"double backwards on {name} not supported")


def _attach_gradients(kernel: Any, backward_kernel: Any, name: str) -> None:
    """Attach the gradients of the RoI op ``name``: ``kernel``'s is ``backward_kernel``'s for
    the input (``_input_grad``), and ``backward_kernel`` has none."""
    kernel.backward(functools.partial(_input_grad, backward_kernel))
    backward_kernel.backward(functools.partial(_no_double_backward, name))


# ---------------------------------------------------------------------------------------------
# the sampling geometry shared by roi_align and ps_roi_align


def _grid_size(extent: np.floating, pooled: int, sampling_ratio: int) -> int:
    """Samples per bin along one side: ``sampling_ratio``, or ``ceil(extent / pooled)``."""
    if sampling_ratio > 0:
        return sampling_ratio
    return int(np.ceil(extent / extent.dtype.type(pooled)))


def _sample_positions(start: np.floating, bin_size: np.floating, pooled: int,
                      grid: int) -> np.ndarray:
    """(pooled, grid) coordinates: ``start + p * bin + (i + 0.5) * bin / grid``, each operation
    rounded in the dtype, in the kernel's order."""
    T = start.dtype.type
    p = np.arange(pooled).astype(start.dtype)[:, None]
    i = (np.arange(grid) + 0.5).astype(start.dtype)[None, :]
    return (start + p * bin_size) + (i * bin_size) / T(grid)


def _bilinear(y: np.ndarray, x: np.ndarray, height: int, width: int) -> tuple:
    """For sample coordinates y (P, 1, gy, 1) and x (1, Q, 1, gx): the flat positions of the
    four neighbouring pixels and their weights, each (P, Q, gy, gx), and whether each sample
    falls within one pixel of the map (others have zero weights at position 0)."""
    T = y.dtype.type
    y, x = np.broadcast_arrays(y, x)
    valid = (y >= -1.0) & (y <= height) & (x >= -1.0) & (x <= width)
    y = np.where(y <= 0, T(0), y)
    x = np.where(x <= 0, T(0), x)
    y_low = y.astype(np.int64)
    x_low = x.astype(np.int64)
    top = y_low >= height - 1
    right = x_low >= width - 1
    y_low = np.where(top, height - 1, y_low)
    x_low = np.where(right, width - 1, x_low)
    y_high = np.where(top, height - 1, y_low + 1)
    x_high = np.where(right, width - 1, x_low + 1)
    y = np.where(top, y_low.astype(y.dtype), y)
    x = np.where(right, x_low.astype(x.dtype), x)
    ly = y - y_low.astype(y.dtype)
    lx = x - x_low.astype(x.dtype)
    hy = T(1) - ly
    hx = T(1) - lx
    weights = [hy * hx, hy * lx, ly * hx, ly * lx]
    positions = [y_low * width + x_low, y_low * width + x_high,
                 y_high * width + x_low, y_high * width + x_high]
    zero = T(0)
    weights = [np.where(valid, w, zero) for w in weights]
    positions = [np.where(valid, q, 0) for q in positions]
    return positions, weights, valid


def _roi_frame(roi: np.ndarray, spatial_scale: float, offset: float,
               clamp_to_one: bool) -> tuple:
    """A roi's start (x, y) and size (w, h) on the feature map, in the dtype."""
    T = roi.dtype.type
    scale, off = T(spatial_scale), T(offset)
    start_w = roi[1] * scale - off
    start_h = roi[2] * scale - off
    end_w = roi[3] * scale - off
    end_h = roi[4] * scale - off
    roi_w = end_w - start_w
    roi_h = end_h - start_h
    if clamp_to_one:  # malformed regions become 1x1
        roi_w = max(roi_w, T(1))
        roi_h = max(roi_h, T(1))
    return start_w, start_h, roi_w, roi_h


# ---------------------------------------------------------------------------------------------
# the kernel


def _roi_align_samples(rois: np.ndarray, height: int, width: int, spatial_scale: float,
                       pooled_height: int, pooled_width: int, sampling_ratio: int,
                       aligned: bool):
    """For each roi: its batch index, the sampling grid's size, and the positions and weights
    of its (PH, PW, gy, gx) samples."""
    T = rois.dtype.type
    for roi in rois:
        start_w, start_h, roi_w, roi_h = _roi_frame(roi, spatial_scale, 0.5 if aligned else 0.0,
                                                    not aligned)
        bin_h = roi_h / T(pooled_height)
        bin_w = roi_w / T(pooled_width)
        gy = _grid_size(roi_h, pooled_height, sampling_ratio)
        gx = _grid_size(roi_w, pooled_width, sampling_ratio)
        ys = _sample_positions(start_h, bin_h, pooled_height, max(gy, 0))
        xs = _sample_positions(start_w, bin_w, pooled_width, max(gx, 0))
        positions, weights, valid = _bilinear(ys[:, None, :, None], xs[None, :, None, :], height,
                                          width)
        yield int(roi[0]), gy, gx, positions, weights, valid


def _bin_sums(planes: np.ndarray, samples: Iterable, chan: np.ndarray,
              shape: tuple[int, int, int]) -> Iterator[tuple[int, np.ndarray, int]]:
    """For each roi (``samples`` as ``_roi_align_samples`` yields them): its index, the
    ``shape`` (C, PH, PW) sums of its bins' samples, and the number of samples per bin. Channel
    ``c`` of bin (i, j) reads ``planes[b]`` (the batch's (C, H * W) images) at channel
    ``chan[c, i, j]``; a sample is ``((w1 v1 + w2 v2) + w3 v3) + w4 v4``, and the samples are
    added row by row, in the kernel's order."""
    for k, (b, gy, gx, positions, weights, _) in enumerate(samples):
        plane = planes[b]
        sample: np.ndarray | None = None
        for pos, w in zip(positions, weights, strict=True):
            term = w * plane[chan, pos[None]]  # (C, PH, PW, gy, gx)
            sample = term if sample is None else sample + term
        acc = np.zeros(shape, dtype=planes.dtype)
        for iy in range(max(gy, 0)):
            for ix in range(max(gx, 0)):
                acc += sample[..., iy, ix]  # type: ignore[index]
        yield k, acc, gy * gx


def _spread_samples(grad: np.ndarray, samples: Iterable, chan: np.ndarray,
                    shape: tuple[int, int, int, int]) -> np.ndarray:
    """The input gradient (``shape``) of the (K, C, PH, PW) ``grad`` of ``_bin_sums`` divided by
    the count: each valid sample passes ``grad * w_i / count`` to its four pixels, added in the
    kernel's order."""
    batch_size, channels, height, width = shape
    grad_input = np.zeros(batch_size * channels * height * width, dtype=grad.dtype)
    if grad.size == 0:
        return grad_input.reshape(shape)
    T = grad.dtype.type
    targets, values = [], []
    chan = chan[..., None, None, None]
    for k, (b, gy, gx, positions, weights, valid) in enumerate(samples):
        if gy <= 0 or gx <= 0:
            continue
        count = T(gy * gx)
        g = grad[k][:, :, :, None, None]  # (C, PH, PW, 1, 1)
        # (C, PH, PW, gy, gx, 4): the four contributions of each sample, in the kernel's order
        vals = np.stack([(g * w) / count for w in weights], axis=-1)
        idx = (b * channels + chan) * (height * width) + np.stack(positions, axis=-1)[None]
        keep = np.broadcast_to(valid[None, ..., None], vals.shape)
        targets.append(np.broadcast_to(idx, vals.shape)[keep])
        values.append(vals[keep])
    if targets:
        np.add.at(grad_input, np.concatenate(targets), np.concatenate(values))
    return grad_input.reshape(shape)


@defop("torchvision.roi_align",
       node="GeneratedBackwardFor_torchvision_roi_align_defaultBackward", save=(1,))
def _roi_align_kernel(input: np.ndarray, rois: np.ndarray, *, spatial_scale: float,
                      pooled_height: int, pooled_width: int, sampling_ratio: int,
                      aligned: bool) -> np.ndarray:
    # out[k, c, ph, pw] = sum over the bin's samples of (w1 v1 + w2 v2 + w3 v3 + w4 v4) / count
    _, channels, height, width = input.shape
    out = np.zeros((rois.shape[0], channels, pooled_height, pooled_width), dtype=input.dtype)
    if out.size == 0:
        return out
    planes = np.ascontiguousarray(input).reshape(input.shape[0], channels, height * width)
    rois = np.ascontiguousarray(rois)
    T = input.dtype.type
    samples = _roi_align_samples(rois, height, width, spatial_scale, pooled_height,
                                 pooled_width, sampling_ratio, aligned)
    chan = np.arange(channels)[:, None, None, None, None]
    for k, acc, count in _bin_sums(planes, samples, chan,
                                   (channels, pooled_height, pooled_width)):
        out[k] = acc / T(max(count, 1))
    return out


@defop("torchvision._roi_align_backward",
       node="GeneratedBackwardFor_torchvision__roi_align_backward_defaultBackward")
def _roi_align_backward_kernel(grad: np.ndarray, rois: np.ndarray, *, spatial_scale: float,
                               pooled_height: int, pooled_width: int, sampling_ratio: int,
                               aligned: bool, batch_size: int, channels: int, height: int,
                               width: int) -> np.ndarray:
    samples = _roi_align_samples(np.ascontiguousarray(rois), height, width, spatial_scale,
                                 pooled_height, pooled_width, sampling_ratio, aligned)
    return _spread_samples(grad, samples, np.arange(channels)[:, None, None],
                           (batch_size, channels, height, width))


# the input's gradient: each sample passes grad * w_i / count to its four pixels, added in the
# kernel's order
_attach_gradients(_roi_align_kernel, _roi_align_backward_kernel, "roi_align")


# ---------------------------------------------------------------------------------------------
# the public function and module


def roi_align(input: Tensor, boxes: Tensor | list[Tensor], output_size: int | tuple[int, int],
              spatial_scale: float = 1.0, sampling_ratio: int = -1,
              aligned: bool = False) -> Tensor:
    """RoI Align (Mask R-CNN): the (K, C, oh, ow) average of bilinear samples in each bin of
    each box.

    ``boxes``: a (K, 5) tensor (batch index, x1, y1, x2, y2) or a list of (L, 4) tensors, one
    per image; ``spatial_scale`` maps box coordinates onto the feature map (0.5 for a map half
    the image's size); ``aligned=True`` shifts the boxes by half a pixel (Detectron2's
    convention), ``False`` keeps the legacy one (and makes regions at least 1x1).
    """
    rois, size = _checked_rois("roi_align", input, boxes, output_size)
    return _roi_align_kernel(input, rois, spatial_scale=float(spatial_scale),
                             pooled_height=int(size[0]),
                             pooled_width=int(size[1]),
                             sampling_ratio=int(sampling_ratio), aligned=bool(aligned))


class RoIAlign(nn.Module):
    """``roi_align`` as a layer."""

    def __init__(self, output_size: int | tuple[int, int], spatial_scale: float,
                 sampling_ratio: int, aligned: bool = False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input: Tensor, rois: Tensor | list[Tensor]) -> Tensor:
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio,
                         self.aligned)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale}, sampling_ratio={self.sampling_ratio}, "
                f"aligned={self.aligned})")
