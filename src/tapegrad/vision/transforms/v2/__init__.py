"""``torchvision.transforms.v2``: transforms that take whole samples (an image with its boxes,
masks, keypoints and labels, in any nesting of tuples, lists and dicts) and transform every
part consistently, driven by the ``tv_tensors`` classes. Plain tensors and PIL images work as
in v1; the functionals are in ``v2.functional``."""

# ruff: noqa: F401  (the package re-exports its modules' names)

from ..autoaugment import AutoAugmentPolicy  # noqa: I001
from ..functional import InterpolationMode

from . import functional
from ._transform import Transform

from ._augment import CutMix, JPEG, MixUp, RandomErasing
from ._auto_augment import AugMix, AutoAugment, RandAugment, TrivialAugmentWide
from ._color import (
    ColorJitter,
    Grayscale,
    RandomAdjustSharpness,
    RandomAutocontrast,
    RandomChannelPermutation,
    RandomEqualize,
    RandomGrayscale,
    RandomInvert,
    RandomPhotometricDistort,
    RandomPosterize,
    RandomSolarize,
    RGB,
)
from ._container import Compose, RandomApply, RandomChoice, RandomOrder
from ._geometry import (
    CenterCrop,
    ElasticTransform,
    FiveCrop,
    Pad,
    RandomAffine,
    RandomCrop,
    RandomHorizontalFlip,
    RandomIoUCrop,
    RandomPerspective,
    RandomResize,
    RandomResizedCrop,
    RandomRotation,
    RandomShortestSize,
    RandomVerticalFlip,
    RandomZoomOut,
    Resize,
    ScaleJitter,
    TenCrop,
)
from ._meta import ClampBoundingBoxes, ClampKeyPoints, ConvertBoundingBoxFormat, SetClampingMode
from ._misc import (
    ConvertImageDtype,
    GaussianBlur,
    GaussianNoise,
    Identity,
    Lambda,
    LinearTransformation,
    Normalize,
    SanitizeBoundingBoxes,
    SanitizeKeyPoints,
    ToDtype,
)
from ._temporal import UniformTemporalSubsample
from ._type_conversion import PILToTensor, ToImage, ToPILImage, ToPureTensor
from ._utils import (
    check_type,
    get_bounding_boxes,
    get_keypoints,
    has_all,
    has_any,
    query_chw,
    query_size,
)

from ._deprecated import ToTensor
