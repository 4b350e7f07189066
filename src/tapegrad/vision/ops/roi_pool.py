"""RoI Pooling (Girshick 2015, Fast R-CNN): each region of interest, its corners rounded to
whole pixels, is divided into an ``output_size`` grid of bins, and each bin is the maximum of
the feature map's pixels in it (0 for an empty bin). The gradient goes to the maximum's pixel.

As torchvision's CPU kernel: coordinates rounded half away from zero, bins of
``floor(p * size / n)`` to ``ceil((p + 1) * size / n)`` pixels computed in the input's dtype,
the first strict maximum above ``-FLT_MAX`` winning.
"""

import functools

import numpy as np

from ... import nn
from ..._tensor import Tensor
from ...ops._registry import defop
from .roi_align import _checked_rois, _no_double_backward

_FLT_MAX = float(np.finfo(np.float32).max)


def _round_away(v: np.floating) -> int:
    """C's ``round``: halves away from zero."""
    return int(np.trunc(float(v) + np.copysign(0.5, float(v))))


def _pool_bins(roi: np.ndarray, spatial_scale: float, pooled_height: int, pooled_width: int,
               height: int, width: int, plus_one: bool, last: int):
    """The [start, end) rows and columns of each bin of a roi, clipped to [0, size + last]."""
    T = roi.dtype.type
    scale = T(spatial_scale)
    start_w, start_h = _round_away(roi[1] * scale), _round_away(roi[2] * scale)
    end_w, end_h = _round_away(roi[3] * scale), _round_away(roi[4] * scale)
    extra = 1 if plus_one else 0
    roi_w = max(end_w - start_w + extra, 1)
    roi_h = max(end_h - start_h + extra, 1)
    bin_h = T(roi_h) / T(pooled_height)
    bin_w = T(roi_w) / T(pooled_width)

    def spans(bin_size: np.floating, pooled: int, start: int, size: int) -> list:
        out = []
        for p in range(pooled):
            lo = int(np.floor(T(p) * bin_size)) + start
            hi = int(np.ceil(T(p + 1) * bin_size)) + start
            out.append((min(max(lo, 0), size + last), min(max(hi, 0), size + last)))
        return out

    return (spans(bin_h, pooled_height, start_h, height),
            spans(bin_w, pooled_width, start_w, width))


def _nonempty_bins(rois: np.ndarray, spatial_scale: float, pooled_height: int,
                   pooled_width: int, height: int, width: int, plus_one: bool, last: int):
    """For each bin with pixels, roi by roi and row by row: the roi's index and batch index, the
    bin's (ph, pw), and its [h0, h1) rows and [w0, w1) columns (``_pool_bins``)."""
    for k, roi in enumerate(np.ascontiguousarray(rois)):
        b = int(roi[0])
        rows, cols = _pool_bins(roi, spatial_scale, pooled_height, pooled_width, height, width,
                                plus_one=plus_one, last=last)
        for ph, (h0, h1) in enumerate(rows):
            for pw, (w0, w1) in enumerate(cols):
                if h0 < h1 and w0 < w1:
                    yield k, b, ph, pw, h0, h1, w0, w1


@defop("torchvision.roi_pool", node="GeneratedBackwardFor_torchvision_roi_pool_defaultBackward",
       save=(1,))
def _roi_pool_kernel(input: np.ndarray, rois: np.ndarray, *, spatial_scale: float,
                     pooled_height: int, pooled_width: int, _cache: dict) -> np.ndarray:
    # out[k, c, ph, pw] = max over the bin's pixels (0 if it has none); argmax kept for backward
    _, channels, height, width = input.shape
    k_rois = rois.shape[0]
    out = np.zeros((k_rois, channels, pooled_height, pooled_width), dtype=input.dtype)
    argmax = np.full(out.shape, -1, dtype=np.int32)
    _cache["argmax"] = argmax
    if out.size == 0:
        argmax[...] = 0
        return out
    with np.errstate(over="ignore"):  # -FLT_MAX in float16 is -inf, as the kernel's Half
        floor = np.array(-_FLT_MAX).astype(input.dtype)[()]
    for k, b, ph, pw, h0, h1, w0, w1 in _nonempty_bins(
            rois, spatial_scale, pooled_height, pooled_width, height, width,
            plus_one=True, last=0):  # (an empty bin stays 0, no argmax)
        window = input[b, :, h0:h1, w0:w1].reshape(channels, -1)
        usable = window > floor  # NaN and -inf never win
        best = np.where(usable, window, -np.inf).argmax(axis=1)
        found = usable[np.arange(channels), best]
        hh, ww = np.divmod(best, w1 - w0)
        flat = (hh + h0) * width + (ww + w0)
        out[k, :, ph, pw] = np.where(found, window[np.arange(channels), best], floor)
        argmax[k, :, ph, pw] = np.where(found, flat, -1)
    return out


@_roi_pool_kernel.backward
def roi_pool_kernel_backward(ctx, grad: Tensor) -> tuple:
    # the gradient of each bin goes to its maximum's pixel
    (rois,) = ctx.saved
    batch_size, channels, height, width = ctx.input_shapes[0]
    argmax = Tensor._make(ctx.params["_cache"]["argmax"])
    p = ctx.params
    grad_input = _roi_pool_backward_kernel(
        grad, rois, argmax, spatial_scale=p["spatial_scale"], pooled_height=p["pooled_height"],
        pooled_width=p["pooled_width"], batch_size=batch_size, channels=channels,
        height=height, width=width)
    return grad_input, None


@defop("torchvision._roi_pool_backward",
       node="GeneratedBackwardFor_torchvision__roi_pool_backward_defaultBackward")
def _roi_pool_backward_kernel(grad: np.ndarray, rois: np.ndarray, argmax: np.ndarray, *,
                              spatial_scale: float, pooled_height: int, pooled_width: int,
                              batch_size: int, channels: int, height: int,
                              width: int) -> np.ndarray:
    grad_input = np.zeros(batch_size * channels * height * width, dtype=grad.dtype)
    shape = (batch_size, channels, height, width)
    if grad.size == 0:
        return grad_input.reshape(shape)
    batch = rois[:, 0].astype(np.int64)[:, None, None, None]
    chan = np.arange(channels)[None, :, None, None]
    target = (batch * channels + chan) * (height * width) + argmax
    hit = argmax != -1
    np.add.at(grad_input, target[hit], grad[hit])
    return grad_input.reshape(shape)


_roi_pool_backward_kernel.backward(functools.partial(_no_double_backward, "roi_pool"))


def roi_pool(input: Tensor, boxes: Tensor | list[Tensor], output_size: int | tuple[int, int],
             spatial_scale: float = 1.0) -> Tensor:
    """RoI Pool (Fast R-CNN): the (K, C, oh, ow) maxima over the bins of each box; ``boxes``
    and ``spatial_scale`` as in ``roi_align``."""
    rois, size = _checked_rois("roi_pool", input, boxes, output_size)
    return _roi_pool_kernel(input, rois, spatial_scale=float(spatial_scale),
                            pooled_height=int(size[0]), pooled_width=int(size[1]),
                            _cache={})


class RoIPool(nn.Module):
    """``roi_pool`` as a layer."""

    def __init__(self, output_size: int | tuple[int, int], spatial_scale: float):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input: Tensor, rois: Tensor | list[Tensor]) -> Tensor:
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale})")
