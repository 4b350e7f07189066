"""``FakeData``: random images, the same for the same index on every run.

Item ``i`` is drawn with the global generator seeded to ``i + random_offset`` (the generator's
state is put back afterwards): a ``randn`` image of ``image_size`` turned into a PIL image as
``ToPILImage`` turns a float tensor (times 255, converted to bytes as torch converts), and a
``randint`` class: the same draws as torchvision's, so the same pixels come out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import tapegrad as torch

from .vision import VisionDataset, _transform_pair

__all__ = ["FakeData"]

_MODES = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}  # the PIL mode of a float image by channels


def _to_pil_image(image: torch.Tensor) -> Any:
    """A float ``(C, H, W)`` or ``(H, W)`` image as ``ToPILImage`` converts it: to an HWC
    array, times 255, cast to bytes by NumPy."""
    from ..transforms.functional import _hwc_array  # vision.transforms: loaded on first use
    from ..utils import _Image_fromarray  # vision.utils: loaded on first use

    pixels = image.permute((1, 2, 0)).numpy() if image.ndim == 3 else image.numpy()
    pixels = _hwc_array(pixels)
    pixels = (pixels * 255).astype(np.uint8)
    mode = _MODES[pixels.shape[2]]
    return _Image_fromarray(pixels[:, :, 0] if mode == "L" else pixels, mode=mode)


class FakeData(VisionDataset):
    """Random images and classes.

    Args:
        size: the number of items.
        image_size: ``(C, H, W)`` of each image.
        num_classes: targets are in ``[0, num_classes)``.
        transform: applied to the PIL image.
        target_transform: applied to the target (a 0-d int64 tensor).
        random_offset: added to the index to seed each item.
    """

    def __init__(self, size: int = 1000, image_size: tuple[int, int, int] = (3, 224, 224),
                 num_classes: int = 10, transform: Callable | None = None,
                 target_transform: Callable | None = None, random_offset: int = 0) -> None:
        super().__init__(transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = image_size
        self.random_offset = random_offset

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """``(image, class index)``; ``IndexError`` past the end."""
        if index >= len(self):
            raise IndexError(f"{type(self).__name__} index out of range")
        state = torch.get_rng_state()
        torch.manual_seed(index + self.random_offset)
        img = torch.randn(*self.image_size)
        target = torch.randint(0, self.num_classes, size=(1,), dtype=torch.long)[0]
        torch.set_rng_state(state)
        img = _to_pil_image(img)
        img, target = _transform_pair(self.transform, self.target_transform, img, target)
        return img, target.item()

    def __len__(self) -> int:
        return self.size
