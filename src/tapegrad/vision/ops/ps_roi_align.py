"""Position-sensitive RoI Align (Light-Head R-CNN, after R-FCN's position-sensitive pooling):
bin (i, j) of output channel c averages bilinear samples of input channel
``(c * oh + i) * ow + j``, so the input has ``C_out * oh * ow`` channels, each responsible for
one position within the box. Regions are shifted by half a pixel (the "aligned" convention) and
their samples are counted as torchvision's CPU kernel counts them (an empty grid gives NaN)."""

import numpy as np

from ... import nn
from ..._tensor import Tensor
from ...ops._registry import defop
from .roi_align import (
    _attach_gradients,
    _bin_sums,
    _checked_rois,
    _roi_align_samples,
    _spread_samples,
)


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
    # the samples of roi_align's "aligned" regions
    samples = _roi_align_samples(np.ascontiguousarray(rois), height, width, spatial_scale,
                                 pooled_height, pooled_width, sampling_ratio, True)
    cmap = _channel_map(channels_out, pooled_height, pooled_width)[..., None, None]
    for k, acc, count in _bin_sums(planes, samples, cmap,
                                   (channels_out, pooled_height, pooled_width)):
        with np.errstate(invalid="ignore", divide="ignore"):
            out[k] = acc / T(count)
    return out


@defop("torchvision._ps_roi_align_backward",
       node="GeneratedBackwardFor_torchvision__ps_roi_align_backward_defaultBackward")
def _ps_roi_align_backward_kernel(grad: np.ndarray, rois: np.ndarray, *, spatial_scale: float,
                                  pooled_height: int, pooled_width: int, sampling_ratio: int,
                                  batch_size: int, channels: int, height: int,
                                  width: int) -> np.ndarray:
    samples = _roi_align_samples(np.ascontiguousarray(rois), height, width, spatial_scale,
                                 pooled_height, pooled_width, sampling_ratio, True)
    channels_out = channels // (pooled_height * pooled_width)
    return _spread_samples(grad, samples, _channel_map(channels_out, pooled_height, pooled_width),
                           (batch_size, channels, height, width))


# the input's gradient: each sample passes grad * w_i / count to its four pixels of the bin's
# input channel
_attach_gradients(_ps_roi_align_kernel, _ps_roi_align_backward_kernel, "ps_roi_align")


def ps_roi_align(input: Tensor, boxes: Tensor | list[Tensor], output_size: int,
                 spatial_scale: float = 1.0, sampling_ratio: int = -1) -> Tensor:
    """Position-sensitive RoI Align: (K, C / (oh * ow), oh, ow); ``boxes``, ``spatial_scale``
    and ``sampling_ratio`` as in ``roi_align``."""
    rois, size = _checked_rois("ps_roi_align", input, boxes, output_size,
                               position_sensitive=True)
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
