"""Position-sensitive RoI Pooling (R-FCN, Dai et al. 2016): bin (i, j) of output channel c is the
average of input channel ``(c * oh + i) * ow + j`` over the bin's pixels.

As torchvision's CPU kernel, quirks included: the box corners are rounded half away from zero,
the forward clips the bins to ``[0, size - 1]`` but the backward to ``[0, size]``, so a bin
touching the bottom or right edge passes its gradient to one more row or column than it read.
"""

import numpy as np

from ... import nn
from ..._tensor import Tensor
from ...ops._registry import defop
from .roi_align import _attach_gradients, _checked_rois
from .roi_pool import _nonempty_bins


@defop("torchvision.ps_roi_pool",
       node="GeneratedBackwardFor_torchvision_ps_roi_pool_defaultBackward", save=(1,))
def _ps_roi_pool_kernel(input: np.ndarray, rois: np.ndarray, *, spatial_scale: float,
                        pooled_height: int, pooled_width: int) -> np.ndarray:
    # out[k, c, i, j] = sum of channel (c*PH + i)*PW + j over the bin / the bin's area
    _, channels, height, width = input.shape
    bins = pooled_height * pooled_width
    channels_out = channels // bins
    out = np.zeros((rois.shape[0], channels_out, pooled_height, pooled_width), dtype=input.dtype)
    if out.size == 0:
        return out
    T = input.dtype.type
    for k, b, ph, pw, h0, h1, w0, w1 in _nonempty_bins(
            rois, spatial_scale, pooled_height, pooled_width, height, width,
            plus_one=False, last=-1):
        chans = np.arange(channels_out) * bins + ph * pooled_width + pw
        total = np.zeros(channels_out, dtype=input.dtype)
        for h in range(h0, h1):  # summed pixel by pixel, row by row
            for w in range(w0, w1):
                total += input[b, chans, h, w]
        out[k, :, ph, pw] = total / T((h1 - h0) * (w1 - w0))
    return out


@defop("torchvision._ps_roi_pool_backward",
       node="GeneratedBackwardFor_torchvision__ps_roi_pool_backward_defaultBackward")
def _ps_roi_pool_backward_kernel(grad: np.ndarray, rois: np.ndarray, *, spatial_scale: float,
                                 pooled_height: int, pooled_width: int, batch_size: int,
                                 channels: int, height: int, width: int) -> np.ndarray:
    # A bin reaching row H or column W writes where the kernel's flat offset
    # (channel * H + h) * W + w points: into the next row or channel, as the kernel does.
    grad_input = np.zeros(batch_size * channels * height * width, dtype=grad.dtype)
    shape = (batch_size, channels, height, width)
    if grad.size == 0:
        return grad_input.reshape(shape)
    T = grad.dtype.type
    bins = pooled_height * pooled_width
    channels_out = channels // bins
    targets, values = [], []
    for k, b, ph, pw, h0, h1, w0, w1 in _nonempty_bins(
            rois, spatial_scale, pooled_height, pooled_width, height, width,
            plus_one=False, last=0):
        chans = np.arange(channels_out) * bins + ph * pooled_width + pw
        diff = grad[k, :, ph, pw] / T((h1 - h0) * (w1 - w0))
        hh, ww = np.meshgrid(np.arange(h0, h1), np.arange(w0, w1), indexing="ij")
        flat = (hh * width + ww).reshape(-1)
        base = (b * channels + chans) * (height * width)
        targets.append((base[:, None] + flat[None, :]).reshape(-1))
        values.append(np.repeat(diff, flat.size))
    if targets:
        idx = np.concatenate(targets)
        vals = np.concatenate(values)
        inside = idx < grad_input.size  # the kernel's writes past the buffer's end are lost
        np.add.at(grad_input, idx[inside], vals[inside])
    return grad_input.reshape(shape)


# the input's gradient: each bin's gradient / area goes to every pixel of the bin (clipped to [0,
# size])
_attach_gradients(_ps_roi_pool_kernel, _ps_roi_pool_backward_kernel, "ps_roi_pool")


def ps_roi_pool(input: Tensor, boxes: Tensor | list[Tensor], output_size: int,
                spatial_scale: float = 1.0) -> Tensor:
    """Position-sensitive RoI Pool: (K, C / (oh * ow), oh, ow); ``boxes`` and
    ``spatial_scale`` as in ``roi_pool``."""
    rois, size = _checked_rois("ps_roi_pool", input, boxes, output_size,
                               position_sensitive=True)
    return _ps_roi_pool_kernel(input, rois, spatial_scale=float(spatial_scale),
                               pooled_height=int(size[0]),
                               pooled_width=int(size[1]))


class PSRoIPool(nn.Module):
    """``ps_roi_pool`` as a layer."""

    def __init__(self, output_size: int, spatial_scale: float):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input: Tensor, rois: Tensor) -> Tensor:
        return ps_roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale})")
