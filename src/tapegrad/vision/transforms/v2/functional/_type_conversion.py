"""v2 conversions between PIL images, ndarrays and tensors: ``to_image`` (a
``tv_tensors.Image``), ``pil_to_tensor`` and ``to_pil_image`` (the v1 functions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import PIL.Image

import tapegrad
from tapegrad import Tensor
from tapegrad.vision import tv_tensors

from ... import functional as _F


def to_image(inpt: Any) -> tv_tensors.Image:
    """A pure tensor, (H, W[, C]) ndarray or PIL image as a ``tv_tensors.Image`` (C, H, W)."""
    if isinstance(inpt, np.ndarray):
        output = tapegrad.from_numpy(np.atleast_3d(inpt)).permute((2, 0, 1)).contiguous()
    elif isinstance(inpt, PIL.Image.Image):
        output = pil_to_tensor(inpt)
    elif isinstance(inpt, Tensor):
        output = inpt
    else:
        raise TypeError("Input can either be a pure Tensor, a numpy array, or a PIL image, but "
                        f"got {type(inpt)} instead.")
    return tv_tensors.Image(output)


to_pil_image = _F.to_pil_image
pil_to_tensor = _F.pil_to_tensor
