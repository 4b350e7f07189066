"""``uniform_temporal_subsample``: evenly spaced frames of a video."""

from __future__ import annotations

import tapegrad
from tapegrad import Tensor
from tapegrad.vision import tv_tensors

from ._utils import _get_kernel, _register_kernel_internal


def uniform_temporal_subsample(inpt: Tensor, num_samples: int) -> Tensor:
    """``num_samples`` frames evenly spaced over the T dim of a (..., T, C, H, W) video."""
    kernel = _get_kernel(uniform_temporal_subsample, type(inpt))
    return kernel(inpt, num_samples=num_samples)  # type: ignore[no-any-return]


@_register_kernel_internal(uniform_temporal_subsample, Tensor)
@_register_kernel_internal(uniform_temporal_subsample, tv_tensors.Video)
def uniform_temporal_subsample_video(video: Tensor, num_samples: int) -> Tensor:
    t_max = video.shape[-4] - 1
    indices = tapegrad.linspace(0, t_max, num_samples, device=video.device).long()
    return tapegrad.index_select(video, -4, indices)
