"""``torchvision.transforms``: image transforms for PIL images and tensors.

The v1 API: ``Compose``, ``ToTensor``, ``Normalize``, ``Resize``, ``RandomCrop``,
``RandomHorizontalFlip``, ``ColorJitter``, ``AutoAugment``, ... (``transforms.py``,
``autoaugment.py``) on top of ``functional``; ``transforms.v2`` is the newer API that also moves
boxes, masks and keypoints (``tv_tensors``).
"""

from .autoaugment import *  # noqa: F403
from .autoaugment import __all__ as _autoaugment_all
from .transforms import *  # noqa: F403
from .transforms import __all__ as _transforms_all

__all__ = list(_transforms_all) + list(_autoaugment_all)
