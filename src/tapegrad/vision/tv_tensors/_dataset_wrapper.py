"""``wrap_dataset_for_transforms_v2`` (``torchvision.datasets.wrap_dataset_for_transforms_v2``):
a dataset whose samples come out as the v2 transforms want them (masks as ``Mask``, boxes as
``BoundingBoxes`` in XYXY, videos as ``Video``), with its transforms applied after the wrapping.

The wrapped dataset is an instance of a class made on the fly, ``Wrapped<Name>``, that derives
from the dataset's own class (``isinstance`` checks keep working) and reads every other
attribute from the dataset. A wrapper is chosen by the dataset's class (or a base class):
classification datasets pass through unchanged; segmentation masks, videos and the detection
targets (COCO, VOC, Kitti, WIDERFace, CelebA boxes, Oxford pets and Cityscapes masks) are
wrapped as torchvision wraps them, for those datasets this package has.

The datasets come from their own modules (``datasets/mnist.py``, ...), not from the package
``datasets``, whose ``__init__`` hands this function on (importing this module when
``datasets.wrap_dataset_for_transforms_v2`` is first asked for).
"""

from __future__ import annotations

import collections.abc
import contextlib
from collections import defaultdict
from collections.abc import Callable
from copy import copy
from typing import Any

import tapegrad

from ..datasets.cifar import CIFAR10, CIFAR100
from ..datasets.fakedata import FakeData
from ..datasets.folder import DatasetFolder, ImageFolder
from ..datasets.mnist import EMNIST, KMNIST, MNIST, QMNIST, FashionMNIST
from ..datasets.svhn import SVHN
from ..datasets.vision import VisionDataset
from ..transforms.v2 import functional as F
from ._bounding_boxes import BoundingBoxes, BoundingBoxFormat
from ._mask import Mask
from ._video import Video

__all__ = ["wrap_dataset_for_transforms_v2"]

# the classes of torchvision.datasets that this package has (datasets/__init__.py's), by name: a
# wrapper is chosen by the name of a class in the dataset's MRO, for these classes only (a user's
# class of the same name gets none)
_DATASETS: dict[str, type] = {cls.__name__: cls for cls in (
    CIFAR10, CIFAR100, DatasetFolder, EMNIST, FakeData, FashionMNIST, ImageFolder, KMNIST, MNIST,
    QMNIST, SVHN, VisionDataset)}

# the datasets whose wrappers take ``target_keys``
_TARGET_KEY_DATASETS = ("CocoDetection", "VOCDetection", "Kitti", "WIDERFace")


def wrap_dataset_for_transforms_v2(dataset: Any, target_keys: Any = None) -> Any:
    """Wrap a ``torchvision.datasets`` dataset for the v2 transforms.

    Args:
        dataset: the dataset instance to wrap.
        target_keys: the keys of a dict target to return (COCO, VOC, Kitti and WIDERFace only):
            None (each dataset's default), ``"all"``, or a collection of key names.
    """
    if not (target_keys is None or target_keys == "all" or (
            isinstance(target_keys, collections.abc.Collection)
            and all(isinstance(key, str) for key in target_keys))):
        raise ValueError("`target_keys` can be None, 'all', or a collection of strings denoting "
                         f"the keys to be returned, but got {target_keys}")
    wrapped_cls = type(f"Wrapped{type(dataset).__name__}",
                       (VisionDatasetTVTensorWrapper, type(dataset)), {})
    return wrapped_cls(dataset, target_keys)


# dataset class name -> factory(dataset, target_keys) -> wrapper(idx, sample) -> sample
WRAPPER_FACTORIES: dict[str, Callable[..., Any]] = {}


def _register(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def decorator(factory: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            WRAPPER_FACTORIES[name] = factory
        return factory

    return decorator


def _factory_for(cls: type) -> Callable[..., Any] | None:
    name = cls.__name__
    if name in WRAPPER_FACTORIES and _DATASETS.get(name) is cls:
        return WRAPPER_FACTORIES[name]
    return None


class VisionDatasetTVTensorWrapper:
    """The wrapper's base: the samples of ``dataset``, wrapped, then its transforms."""

    def __init__(self, dataset: Any, target_keys: Any) -> None:
        dataset_cls = type(dataset)
        wrapper_factory: Callable[..., Any] | None = None
        if not isinstance(dataset, VisionDataset):
            raise TypeError(
                "This wrapper is meant for subclasses of `torchvision.datasets.VisionDataset`, "
                f"but got a '{dataset_cls.__name__}' instead.\n"
                "For an example of how to perform the wrapping for custom datasets, see\n\n"
                "https://pytorch.org/vision/main/auto_examples/plot_tv_tensors.html"
                "#do-i-have-to-wrap-the-output-of-the-datasets-myself")
        for cls in dataset_cls.mro():
            wrapper_factory = _factory_for(cls)
            if wrapper_factory is not None:
                if target_keys is not None and cls.__name__ not in _TARGET_KEY_DATASETS:
                    raise ValueError(
                        "`target_keys` is currently only supported for `CocoDetection`, "
                        f"`VOCDetection`, `Kitti`, and `WIDERFace`, but got {cls.__name__}.")
                break
            if cls is VisionDataset:
                msg = (f"No wrapper exists for dataset class {dataset_cls.__name__}. Please wrap "
                       "the output yourself.")
                if dataset_cls in _DATASETS.values():
                    msg = (f"{msg} If an automated wrapper for this dataset would be useful for "
                           "you, please open an issue at https://github.com/pytorch/vision/"
                           "issues.")
                raise TypeError(msg)
        self._dataset = dataset
        self._target_keys = target_keys
        assert wrapper_factory is not None  # (VisionDataset ends every dataset's MRO)
        self._wrapper = wrapper_factory(dataset, target_keys)
        # the dataset's own transforms run after the wrapping: take them off the dataset
        self.transform, dataset.transform = dataset.transform, None
        self.target_transform, dataset.target_transform = dataset.target_transform, None
        self.transforms, dataset.transforms = dataset.transforms, None

    def __getattr__(self, item: str) -> Any:
        with contextlib.suppress(AttributeError):
            return object.__getattribute__(self, item)
        return getattr(self._dataset, item)

    def __getitem__(self, idx: int) -> Any:
        sample = self._wrapper(idx, self._dataset[idx])
        if self.transforms is not None:
            sample = self.transforms(*sample)
        return sample

    def __len__(self) -> int:
        return len(self._dataset)

    def __reduce__(self) -> Any:
        # pickled (a DataLoader's workers) as the call that wraps a copy of the dataset with
        # its transforms given back
        dataset = copy(self._dataset)
        dataset.transform = self.transform
        dataset.transforms = self.transforms
        dataset.target_transform = self.target_transform
        return wrap_dataset_for_transforms_v2, (dataset, self._target_keys)


def raise_not_supported(description: str) -> None:
    raise RuntimeError(f"{description} is currently not supported by this wrapper. If this "
                       "would be helpful for you, please open an issue at https://github.com/"
                       "pytorch/vision/issues.")


def identity(item: Any) -> Any:
    return item


def identity_wrapper_factory(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    def wrapper(idx: int, sample: Any) -> Any:
        return sample

    return wrapper


def pil_image_to_mask(pil_image: Any) -> Mask:
    return Mask(pil_image)


def parse_target_keys(target_keys: Any, *, available: set[str], default: Any) -> Any:
    if target_keys is None:
        target_keys = default
    if target_keys == "all":
        target_keys = available
    else:
        target_keys = set(target_keys)
        extra = target_keys - available
        if extra:
            raise ValueError(f"Target keys {sorted(extra)} are not available")
    return target_keys


def list_of_dicts_to_dict_of_lists(list_of_dicts: Any) -> dict[str, list]:
    dict_of_lists: dict[str, list] = defaultdict(list)
    for dct in list_of_dicts:
        for key, value in dct.items():
            dict_of_lists[key].append(value)
    return dict(dict_of_lists)


def wrap_target_by_type(target: Any, *, target_types: Any, type_wrappers: dict) -> Any:
    if not isinstance(target, (tuple, list)):
        target = [target]
    wrapped = tuple(type_wrappers.get(target_type, identity)(item)
                    for target_type, item in zip(target_types, target, strict=False))
    return wrapped[0] if len(wrapped) == 1 else wrapped


@_register("Caltech256", "CIFAR10", "CIFAR100", "ImageNet", "MNIST", "FashionMNIST", "GTSRB",
           "DatasetFolder", "ImageFolder", "Imagenette")
def classification_wrapper_factory(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    return identity_wrapper_factory(dataset, target_keys)


@_register("VOCSegmentation")
def segmentation_wrapper_factory(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    def wrapper(idx: int, sample: Any) -> Any:
        image, mask = sample
        return image, pil_image_to_mask(mask)

    return wrapper


@_register("HMDB51", "Kinetics", "UCF101")
def video_classification_wrapper_factory(dataset: Any, target_keys: Any
                                         ) -> Callable[[int, Any], Any]:
    if dataset.video_clips.output_format == "THWC":
        raise RuntimeError(
            f"{type(dataset).__name__} with `output_format='THWC'` is not supported by this "
            "wrapper, since it is not compatible with the transformations. Please use "
            "`output_format='TCHW'` instead.")

    def wrapper(idx: int, sample: Any) -> Any:
        video, audio, label = sample
        return Video(video), audio, label

    return wrapper


@_register("Caltech101")
def caltech101_wrapper_factory(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    if "annotation" in dataset.target_type:
        raise_not_supported("Caltech101 dataset with `target_type=['annotation', ...]`")
    return classification_wrapper_factory(dataset, target_keys)


_register("CocoCaptions")(identity_wrapper_factory)


@_register("CocoDetection")
def coco_dectection_wrapper_factory(dataset: Any, target_keys: Any
                                    ) -> Callable[[int, Any], Any]:
    target_keys = parse_target_keys(
        target_keys, available={"segmentation", "area", "iscrowd", "image_id", "bbox",
                                "category_id", "boxes", "masks", "labels"},
        default={"image_id", "boxes", "labels"})

    def segmentation_to_mask(segmentation: Any, *, canvas_size: tuple) -> Any:
        from pycocotools import mask  # pycocotools: optional, loaded on first use

        if isinstance(segmentation, dict):
            if not isinstance(segmentation["counts"], str):
                segmentation = mask.frPyObjects(segmentation, *canvas_size)
        elif isinstance(segmentation, list):
            segmentation = mask.merge(mask.frPyObjects(segmentation, *canvas_size))
        else:
            raise ValueError("COCO segmentation expected to be a dict or a list, got "
                             f"{type(segmentation)}")
        return tapegrad.from_numpy(mask.decode(segmentation))

    def wrapper(idx: int, sample: Any) -> Any:
        image_id = dataset.ids[idx]
        image, target = sample
        if not target:
            return image, dict(image_id=image_id)
        height, width = F.get_size(image)
        canvas_size = (height, width)
        batched_target = list_of_dicts_to_dict_of_lists(target)
        target = {}
        if "image_id" in target_keys:
            target["image_id"] = image_id
        if "boxes" in target_keys:
            target["boxes"] = F.convert_bounding_box_format(
                BoundingBoxes(batched_target["bbox"], format=BoundingBoxFormat.XYWH,
                              canvas_size=canvas_size),
                new_format=BoundingBoxFormat.XYXY)
        if "masks" in target_keys:
            target["masks"] = Mask(tapegrad.stack([
                segmentation_to_mask(segmentation, canvas_size=canvas_size)
                for segmentation in batched_target["segmentation"]]))
        if "labels" in target_keys:
            target["labels"] = tapegrad.tensor(batched_target["category_id"])
        for target_key in target_keys - {"image_id", "boxes", "masks", "labels"}:
            target[target_key] = batched_target[target_key]
        return image, target

    return wrapper


VOC_DETECTION_CATEGORIES = [
    "__background__", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat",
    "chair", "cow", "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep",
    "sofa", "train", "tvmonitor",
]
VOC_DETECTION_CATEGORY_TO_IDX = dict(zip(VOC_DETECTION_CATEGORIES,
                                         range(len(VOC_DETECTION_CATEGORIES)), strict=True))


@_register("VOCDetection")
def voc_detection_wrapper_factory(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    target_keys = parse_target_keys(target_keys, available={"annotation", "boxes", "labels"},
                                    default={"boxes", "labels"})

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        batched_instances = list_of_dicts_to_dict_of_lists(target["annotation"]["object"])
        if "annotation" not in target_keys:
            target = {}
        if "boxes" in target_keys:
            target["boxes"] = BoundingBoxes(
                [[int(bndbox[part]) for part in ("xmin", "ymin", "xmax", "ymax")]
                 for bndbox in batched_instances["bndbox"]],
                format=BoundingBoxFormat.XYXY, canvas_size=(image.height, image.width))
        if "labels" in target_keys:
            target["labels"] = tapegrad.tensor(
                [VOC_DETECTION_CATEGORY_TO_IDX[category]
                 for category in batched_instances["name"]])
        return image, target

    return wrapper


@_register("SBDataset")
def sbd_wrapper(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    if dataset.mode == "boundaries":
        raise_not_supported("SBDataset with mode='boundaries'")
    return segmentation_wrapper_factory(dataset, target_keys)


@_register("CelebA")
def celeba_wrapper_factory(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    if any(target_type in dataset.target_type for target_type in ["attr", "landmarks"]):
        raise_not_supported("`CelebA` dataset with `target_type=['attr', 'landmarks', ...]`")

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        target = wrap_target_by_type(
            target, target_types=dataset.target_type,
            type_wrappers={"bbox": lambda item: F.convert_bounding_box_format(
                BoundingBoxes(item, format=BoundingBoxFormat.XYWH,
                              canvas_size=(image.height, image.width)),
                new_format=BoundingBoxFormat.XYXY)})
        return image, target

    return wrapper


KITTI_CATEGORIES = ["Car", "Van", "Truck", "Pedestrian", "Person_sitting", "Cyclist", "Tram",
                    "Misc", "DontCare"]
KITTI_CATEGORY_TO_IDX = dict(zip(KITTI_CATEGORIES, range(len(KITTI_CATEGORIES)), strict=True))


@_register("Kitti")
def kitti_wrapper_factory(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    target_keys = parse_target_keys(
        target_keys, available={"type", "truncated", "occluded", "alpha", "bbox", "dimensions",
                                "location", "rotation_y", "boxes", "labels"},
        default={"boxes", "labels"})

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        if target is None:
            return image, target
        batched_target = list_of_dicts_to_dict_of_lists(target)
        target = {}
        if "boxes" in target_keys:
            target["boxes"] = BoundingBoxes(batched_target["bbox"],
                                            format=BoundingBoxFormat.XYXY,
                                            canvas_size=(image.height, image.width))
        if "labels" in target_keys:
            target["labels"] = tapegrad.tensor(
                [KITTI_CATEGORY_TO_IDX[category] for category in batched_target["type"]])
        for target_key in target_keys - {"boxes", "labels"}:
            target[target_key] = batched_target[target_key]
        return image, target

    return wrapper


@_register("OxfordIIITPet")
def oxford_iiit_pet_wrapper_factor(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        if target is not None:
            target = wrap_target_by_type(target, target_types=dataset._target_types,
                                         type_wrappers={"segmentation": pil_image_to_mask})
        return image, target

    return wrapper


@_register("Cityscapes")
def cityscapes_wrapper_factory(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    if any(target_type in dataset.target_type for target_type in ["polygon", "color"]):
        raise_not_supported("`Cityscapes` dataset with `target_type=['polygon', 'color', ...]`")

    def instance_segmentation_wrapper(mask: Any) -> dict:
        data = pil_image_to_mask(mask)
        masks, labels = [], []
        for id in data.unique():
            masks.append(data == id)
            label = id
            if label >= 1_000:
                label //= 1_000
            labels.append(label)
        return dict(masks=Mask(tapegrad.stack(masks)), labels=tapegrad.stack(labels))

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        target = wrap_target_by_type(
            target, target_types=dataset.target_type,
            type_wrappers={"instance": instance_segmentation_wrapper,
                           "semantic": pil_image_to_mask})
        return image, target

    return wrapper


@_register("WIDERFace")
def widerface_wrapper(dataset: Any, target_keys: Any) -> Callable[[int, Any], Any]:
    target_keys = parse_target_keys(
        target_keys, available={"bbox", "blur", "expression", "illumination", "occlusion",
                                "pose", "invalid"},
        default="all")

    def wrapper(idx: int, sample: Any) -> Any:
        image, target = sample
        if target is None:
            return image, target
        target = {key: target[key] for key in target_keys}
        if "bbox" in target_keys:
            target["bbox"] = F.convert_bounding_box_format(
                BoundingBoxes(target["bbox"], format=BoundingBoxFormat.XYWH,
                              canvas_size=(image.height, image.width)),
                new_format=BoundingBoxFormat.XYXY)
        return image, target

    return wrapper
