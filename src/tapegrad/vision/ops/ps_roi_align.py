"""Position-sensitive RoI Align (Light-Head R-CNN, after R-FCN's position-sensitive pooling):
bin (i, j) of output channel c averages bilinear samples of input channel
``(c * oh + i) * ow + j``, so the input has ``C_out * oh * ow`` channels, each responsible for
one position within the box. Regions are shifted by half a pixel (the "aligned" convention) and
their samples are counted as torchvision's CPU kernel counts them (an empty grid gives NaN)."""

import numpy as np

from ... import nn
from ..._tensor import Tensor
from ...nn.modules.utils import _pair
from ...ops._registry import defop
from ._utils import check_roi_boxes_shape, convert_boxes_to_roi_format
from .roi_align import (
    _bilinear,
    _floating_or_raise,
    _grid_size,
    _kernel_type_error,
    _roi_frame,
)


def _ps_samples(rois: np.ndarray, height: int, width: int, spatial_scale: float,
                pooled_height: int, pooled_width: int, sampling_ratio: int):
    """For each roi: its batch index, grid size, and (PH, PW, gy, gx) sample positions,
    weights and validity."""
    T = rois.dtype.type
    for roi in rois:
        start_w, start_h, roi_w, roi_h = _roi_frame(roi, spatial_scale, 0.5, False)
        bin_h = roi_h / T(pooled_height)
        bin_w = roi_w / T(pooled_width)
        gy = _grid_size(roi_h, pooled_height, sampling_ratio)
        gx = _grid_size(roi_w, pooled_width, sampling_ratio)
        # hstart = p * bin + start; y = hstart + (i + 0.5) * bin / grid
        ys = _bin_starts(start_h, bin_h, pooled_height, max(gy, 0))
        xs = _bin_starts(start_w, bin_w, pooled_width, max(gx, 0))
        positions, weights, valid = _bilinear(ys[:, None, :, None], xs[None, :, None, :],
                                              height, width)
        yield int(roi[0]), gy, gx, positions, weights, valid


def _bin_starts(start: np.floating, bin_size: np.floating, pooled: int, grid: int) -> np.ndarray:
    T = start.dtype.type
    p = np.arange(pooled).astype(start.dtype)[:, None]
    i = (np.arange(grid) + 0.5).astype(start.dtype)[None, :]
    return (p * bin_size + start) + (i * bin_size) / T(grid)


def _channel_map(channels_out: int, pooled_height: int, pooled_width: int) -> np.ndarray:
    """(C_out, PH, PW): the input channel of each output bin."""
    return np.arange(channels_out * pooled_height * pooled_width).reshape(
        channels_out, pooled_height, pooled_width)


@defop("torchvision.ps_roi_align",
       node="GeneratedBackwardFor_torchvision_ps_roi_align_defaultBackward", save=(1,))
def _ps_roi_align_kernel(input: np.ndarray, rois: np.ndarray, *, spatial_scale: float,
                         pooled_height: int, pooled_width: int,
                         sampling_ratio: int) -> np.ndarray:
    # out[k, c, i, j] = mean of the samples of bin (i, j) in input channel (c*PH + i)*PW + j
    _, channels, height, width = input.shape
    channels_out = channels // (pooled_height * pooled_width)
    out = np.zeros((rois.shape[0], channels_out, pooled_height, pooled_width), dtype=input.dtype)
    if out.size == 0:
        return out
    T = input.dtype.type
    planes = np.ascontiguousarray(input).reshape(input.shape[0], channels, height * width)
    cmap = _channel_map(channels_out, pooled_height, pooled_width)[..., None, None]
    for k, (b, gy, gx, positions, weights, _) in enumerate(_ps_samples(
            np.ascontiguousarray(rois), height, width, spatial_scale, pooled_height,
            pooled_width, sampling_ratio)):
        plane = planes[b]
        sample: np.ndarray | None = None
        for pos, w in zip(positions, weights, strict=True):
            term = w * plane[cmap, pos[None]]  # (C_out, PH, PW, gy, gx)
            sample = term if sample is None else sample + term
        acc = np.zeros((channels_out, pooled_height, pooled_width), dtype=input.dtype)
        for iy in range(max(gy, 0)):
            for ix in range(max(gx, 0)):
                acc += sample[..., iy, ix]  # type: ignore[index]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[k] = acc / T(gy * gx)
    return out


@_ps_roi_align_kernel.backward
def ps_roi_align_kernel_backward(ctx, grad: Tensor) -> tuple:
    # each sample passes grad * w_i / count to its four pixels of the bin's input channel
    (rois,) = ctx.saved
    batch_size, channels, height, width = ctx.input_shapes[0]
    grad_input = _ps_roi_align_backward_kernel(grad, rois, **ctx.params, batch_size=batch_size,
                                               channels=channels, height=height, width=width)
    return grad_input, None


@defop("torchvision._ps_roi_align_backward",
       node="GeneratedBackwardFor_torchvision__ps_roi_align_backward_defaultBackward")
def _ps_roi_align_backward_kernel(grad: np.ndarray, rois: np.ndarray, *, spatial_scale: float,
                                  pooled_height: int, pooled_width: int, sampling_ratio: int,
                                  batch_size: int, channels: int, height: int,
                                  width: int) -> np.ndarray:
    grad_input = np.zeros(batch_size * channels * height * width, dtype=grad.dtype)
    shape = (batch_size, channels, height, width)
    if grad.size == 0:
        return grad_input.reshape(shape)
    T = grad.dtype.type
    channels_out = channels // (pooled_height * pooled_width)
    cmap = _channel_map(channels_out, pooled_height, pooled_width)[..., None, None, None]
    targets, values = [], []
    for k, (b, gy, gx, positions, weights, valid) in enumerate(_ps_samples(
            np.ascontiguousarray(rois), height, width, spatial_scale, pooled_height,
            pooled_width, sampling_ratio)):
        if gy <= 0 or gx <= 0:
            continue
        count = T(gy * gx)
        g = grad[k][:, :, :, None, None]
        vals = np.stack([(g * w) / count for w in weights], axis=-1)
        idx = (b * channels + cmap) * (height * width) + np.stack(positions, axis=-1)[None]
        keep = np.broadcast_to(valid[None, ..., None], vals.shape)
        targets.append(np.broadcast_to(idx, vals.shape)[keep])
        values.append(vals[keep])
    if targets:
        np.add.at(grad_input, np.concatenate(targets), np.concatenate(values))
    return grad_input.reshape(shape)


@_ps_roi_align_backward_kernel.backward
def ps_roi_align_backward_kernel_backward(ctx, grad: Tensor) -> tuple:
    raise RuntimeError("double backwards on ps_roi_align not supported")


def ps_roi_align(input: Tensor, boxes: Tensor | list[Tensor], output_size: int,
                 spatial_scale: float = 1.0, sampling_ratio: int = -1) -> Tensor:
    """Position-sensitive RoI Align: (K, C / (oh * ow), oh, ow); ``boxes``, ``spatial_scale``
    and ``sampling_ratio`` as in ``roi_align``."""
    check_roi_boxes_shape(boxes)
    rois = boxes
    size = _pair(output_size)
    if not isinstance(rois, Tensor):
        rois = convert_boxes_to_roi_format(rois)
    _kernel_type_error("ps_roi_align_forward_kernel", input, rois)
    if input.shape[1] % (size[0] * size[1]) != 0:
        raise RuntimeError("input channels must be a multiple of pooling height * pooling width")
    _floating_or_raise("ps_roi_align_forward_kernel", input)
    return _ps_roi_align_kernel(input, rois, spatial_scale=float(spatial_scale),
                                pooled_height=int(size[0]),
                                pooled_width=int(size[1]),
                                sampling_ratio=int(sampling_ratio))


class PSRoIAlign(nn.Module):
    """``ps_roi_align`` as a layer."""

    def __init__(self, output_size: int, spatial_scale: float, sampling_ratio: int):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio

    def forward(self, input: Tensor, rois: Tensor) -> Tensor:
        return ps_roi_align(input, rois, self.output_size, self.spatial_scale,
                            self.sampling_ratio)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale}, sampling_ratio={self.sampling_ratio})")
