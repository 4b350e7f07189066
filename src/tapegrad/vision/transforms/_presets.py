"""The preprocessing of the pretrained weights (``Weights.transforms()`` in ``models``):
what each model family expects as input, as modules that print and ``describe()`` themselves
as torchvision's.

    ImageClassification   resize, center crop, rescale to [0, 1], normalize
    ObjectDetection       rescale to [0, 1]
    SemanticSegmentation  resize, rescale, normalize
    VideoClassification   per frame: resize, center crop, rescale, normalize; then (C, T, H, W)
    OpticalFlow           both frames rescaled to [-1, 1]
"""

from __future__ import annotations

from typing import Any

import tapegrad
from tapegrad import Tensor, nn

from . import functional as F
from .functional import InterpolationMode

__all__ = ["ObjectDetection", "ImageClassification", "VideoClassification",
           "SemanticSegmentation", "OpticalFlow"]

_ACCEPTS = ("Accepts ``PIL.Image``, batched ``(B, C, H, W)`` and single ``(C, H, W)`` image "
            "``torch.Tensor`` objects. ")


def _as_float(img: Any) -> Tensor:
    """``img`` (a PIL image becomes a tensor) as floats rescaled to [0, 1]."""
    if not isinstance(img, Tensor):
        img = F.pil_to_tensor(img)
    return F.convert_image_dtype(img, tapegrad.float)


def _fields_repr(module: nn.Module, **fields: Any) -> str:
    """``Name(`` then a ``name=value`` line per field, then ``)``: how the presets print."""
    lines = "".join(f"\n    {name}={value}" for name, value in fields.items())
    return f"{module.__class__.__name__}({lines}\n)"


class ObjectDetection(nn.Module):
    """The detection models' input: the image as floats in [0, 1]."""

    def forward(self, img: Any) -> Tensor:
        return _as_float(img)

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def describe(self) -> str:
        return _ACCEPTS + "The images are rescaled to ``[0.0, 1.0]``."


class ImageClassification(nn.Module):
    """The classification models' input: resize the shorter side to ``resize_size``, center
    crop ``crop_size``, rescale to [0, 1] and normalize with ``mean`` and ``std``."""

    def __init__(self, *, crop_size: int, resize_size: int = 256,
                 mean: tuple[float, ...] = (0.485, 0.456, 0.406),
                 std: tuple[float, ...] = (0.229, 0.224, 0.225),
                 interpolation: InterpolationMode = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:
        super().__init__()
        self.crop_size = [crop_size]
        self.resize_size = [resize_size]
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img: Any) -> Tensor:
        img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                       antialias=self.antialias)
        img = F.center_crop(img, self.crop_size)
        return F.normalize(_as_float(img), mean=self.mean, std=self.std)

    def __repr__(self) -> str:
        return _fields_repr(self, crop_size=self.crop_size, resize_size=self.resize_size,
                            mean=self.mean, std=self.std, interpolation=self.interpolation)

    def describe(self) -> str:
        return (_ACCEPTS + f"The images are resized to ``resize_size={self.resize_size}`` using "
                f"``interpolation={self.interpolation}``, followed by a central crop of "
                f"``crop_size={self.crop_size}``. Finally the values are first rescaled to "
                f"``[0.0, 1.0]`` and then normalized using ``mean={self.mean}`` and "
                f"``std={self.std}``.")


class VideoClassification(nn.Module):
    """The video models' input: every frame resized (no antialias), center cropped, rescaled
    and normalized, then (..., T, C, H, W) permuted to (..., C, T, H, W)."""

    def __init__(self, *, crop_size: tuple[int, int], resize_size: tuple[int, ...],
                 mean: tuple[float, ...] = (0.43216, 0.394666, 0.37645),
                 std: tuple[float, ...] = (0.22803, 0.22145, 0.216989),
                 interpolation: InterpolationMode = InterpolationMode.BILINEAR) -> None:
        super().__init__()
        self.crop_size = list(crop_size)
        self.resize_size = list(resize_size)
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation

    def forward(self, vid: Tensor) -> Tensor:
        need_squeeze = False
        if vid.ndim < 5:
            vid = vid.unsqueeze(dim=0)
            need_squeeze = True
        N, T, C, H, W = vid.shape
        vid = vid.view(-1, C, H, W)
        # antialias=False: the video models were trained without it
        vid = F.resize(vid, self.resize_size, interpolation=self.interpolation, antialias=False)
        vid = F.center_crop(vid, self.crop_size)
        vid = F.convert_image_dtype(vid, tapegrad.float)
        vid = F.normalize(vid, mean=self.mean, std=self.std)
        H, W = self.crop_size
        vid = vid.view(N, T, C, H, W)
        vid = vid.permute(0, 2, 1, 3, 4)  # (N, T, C, H, W) -> (N, C, T, H, W)
        if need_squeeze:
            vid = vid.squeeze(dim=0)
        return vid

    def __repr__(self) -> str:
        return _fields_repr(self, crop_size=self.crop_size, resize_size=self.resize_size,
                            mean=self.mean, std=self.std, interpolation=self.interpolation)

    def describe(self) -> str:
        return ("Accepts batched ``(B, T, C, H, W)`` and single ``(T, C, H, W)`` video frame "
                "``torch.Tensor`` objects. "
                f"The frames are resized to ``resize_size={self.resize_size}`` using "
                f"``interpolation={self.interpolation}``, followed by a central crop of "
                f"``crop_size={self.crop_size}``. Finally the values are first rescaled to "
                f"``[0.0, 1.0]`` and then normalized using ``mean={self.mean}`` and "
                f"``std={self.std}``. Finally the output dimensions are permuted to "
                "``(..., C, T, H, W)`` tensors.")


class SemanticSegmentation(nn.Module):
    """The segmentation models' input: resize the shorter side to ``resize_size`` (unless
    None), rescale to [0, 1] and normalize."""

    def __init__(self, *, resize_size: int | None,
                 mean: tuple[float, ...] = (0.485, 0.456, 0.406),
                 std: tuple[float, ...] = (0.229, 0.224, 0.225),
                 interpolation: InterpolationMode = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:
        super().__init__()
        self.resize_size = [resize_size] if resize_size is not None else None
        self.mean = list(mean)
        self.std = list(std)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img: Any) -> Tensor:
        if isinstance(self.resize_size, list):
            img = F.resize(img, self.resize_size, interpolation=self.interpolation,
                           antialias=self.antialias)
        return F.normalize(_as_float(img), mean=self.mean, std=self.std)

    def __repr__(self) -> str:
        return _fields_repr(self, resize_size=self.resize_size, mean=self.mean, std=self.std,
                            interpolation=self.interpolation)

    def describe(self) -> str:
        return (_ACCEPTS + f"The images are resized to ``resize_size={self.resize_size}`` using "
                f"``interpolation={self.interpolation}``. Finally the values are first rescaled "
                f"to ``[0.0, 1.0]`` and then normalized using ``mean={self.mean}`` and "
                f"``std={self.std}``.")


class OpticalFlow(nn.Module):
    """The optical flow models' input: both frames rescaled to [-1, 1], contiguous."""

    def forward(self, img1: Any, img2: Any) -> tuple[Tensor, Tensor]:
        if not isinstance(img1, Tensor):
            img1 = F.pil_to_tensor(img1)
        if not isinstance(img2, Tensor):
            img2 = F.pil_to_tensor(img2)
        img1 = F.convert_image_dtype(img1, tapegrad.float)
        img2 = F.convert_image_dtype(img2, tapegrad.float)
        # [0, 1] to [-1, 1]
        img1 = F.normalize(img1, mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])
        img2 = F.normalize(img2, mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])
        return img1.contiguous(), img2.contiguous()

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def describe(self) -> str:
        return _ACCEPTS + "The images are rescaled to ``[-1.0, 1.0]``."
