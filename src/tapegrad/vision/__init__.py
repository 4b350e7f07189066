"""torchvision on tapegrad: image transforms, datasets, models, detection ops, image files.

``import torchvision`` under ``tapegrad run`` (or after ``tapegrad.install_torch_alias()``)
imports this package; without the alias, ``import tapegrad.vision as torchvision``. It follows
torchvision 0.28, the release paired with torch 2.13: the same names, signatures, defaults,
outputs, exceptions and printed reprs, written on tapegrad's tensors and NumPy (real torchvision
needs torch's compiled operators).

    transforms   ToTensor, Normalize, Resize, RandomCrop, ... (v1) and transforms.v2
    datasets     MNIST, FashionMNIST, CIFAR10, ImageFolder, ... with torchvision's downloads
    models       resnet18, vgg16, mobilenet_v2, vit_b_16, ...: torchvision's module trees and
                 initialization, so its checkpoints load with strict=True
    ops          nms, box_iou, roi_align, sigmoid_focal_loss, StochasticDepth, ...
    io           read_image, decode_image, write_png, write_jpeg (through Pillow)
    utils        make_grid, save_image, draw_bounding_boxes, draw_segmentation_masks

Each submodule is imported when first used, so ``import torchvision`` costs next to nothing, and
Pillow (the ``vision`` extra) is imported only by the code that reads or writes PIL images.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..torch_version import TAPEGRAD_VERSION

# torchvision's release, with tapegrad's build label as torch.__version__ has it
__version__ = f"0.28.0+tapegrad{TAPEGRAD_VERSION}"

_SUBMODULES = ("datasets", "io", "models", "ops", "transforms", "tv_tensors", "utils")

_image_backend = "PIL"
_video_backend = "pyav"


def set_image_backend(backend: str) -> None:
    """Choose the package that loads images: ``'PIL'`` or ``'accimage'``."""
    global _image_backend
    if backend not in ["PIL", "accimage"]:
        raise ValueError(f"Invalid backend '{backend}'. Options are 'PIL' and 'accimage'")
    _image_backend = backend


def get_image_backend() -> str:
    """The name of the package that loads images (``'PIL'`` unless set otherwise)."""
    return _image_backend


def set_video_backend(backend: str) -> None:
    """Kept for old code: ``'pyav'`` is the only video backend torchvision 0.28 knows."""


def get_video_backend() -> str:
    """The video backend's name: ``'pyav'``."""
    return _video_backend


def disable_beta_transforms_warning() -> None:
    """Kept for old code: the v2 transforms are stable and warn no more."""


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'torchvision' has no attribute '{name}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))
