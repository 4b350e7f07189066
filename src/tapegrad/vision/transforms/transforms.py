"""``torchvision.transforms`` (v1): callable transform objects built on ``functional``.

Deterministic transforms hold their arguments; random ones draw their parameters from tapegrad's
generator at each call exactly as torchvision draws them from torch's (``torch.rand(1)`` for a
coin flip, ``torch.randint`` for a crop position, ``torch.empty(1).uniform_`` for an angle or a
scale, ``torch.randperm(4)`` for ColorJitter's order), so after ``manual_seed`` the same crops,
flips and jitters come out. ``RandomOrder`` and ``RandomChoice`` use Python's ``random`` module,
as torchvision's do. Most transforms are ``nn.Module``s and print as torchvision's.
"""

from __future__ import annotations

import math
import numbers
import random
import warnings
from collections.abc import Sequence
from typing import Any

import tapegrad
from tapegrad import Tensor, nn

from . import functional as F
from .functional import InterpolationMode, _interpolation_modes_from_int

__all__ = ["Compose", "ToTensor", "PILToTensor", "ConvertImageDtype", "ToPILImage", "Normalize",
           "Resize", "CenterCrop", "Pad", "Lambda", "RandomApply", "RandomChoice",
           "RandomOrder", "RandomCrop", "RandomHorizontalFlip", "RandomVerticalFlip",
           "RandomResizedCrop", "FiveCrop", "TenCrop", "LinearTransformation", "ColorJitter",
           "RandomRotation", "RandomAffine", "Grayscale", "RandomGrayscale",
           "RandomPerspective", "RandomErasing", "GaussianBlur", "InterpolationMode",
           "RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
           "RandomAutocontrast", "RandomEqualize", "ElasticTransform"]


class Compose:
    """Apply ``transforms`` one after the other."""

    def __init__(self, transforms: Sequence[Any]) -> None:
        self.transforms = transforms

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({lines}\n)"


class ToTensor:
    """A PIL image or (H, W, C) ndarray as a (C, H, W) float tensor in [0, 1] (uint8 input is
    divided by 255; other dtypes keep their values)."""

    def __init__(self) -> None:
        pass

    def __call__(self, pic: Any) -> Tensor:
        return F.to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class PILToTensor:
    """A PIL image as a (C, H, W) tensor of its own dtype, values unchanged."""

    def __init__(self) -> None:
        pass

    def __call__(self, pic: Any) -> Tensor:
        return F.pil_to_tensor(pic)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class ConvertImageDtype(nn.Module):
    """Convert a tensor image to ``dtype``, rescaling its values."""

    def __init__(self, dtype: Any) -> None:
        super().__init__()
        self.dtype = dtype

    def forward(self, image: Tensor) -> Tensor:
        return F.convert_image_dtype(image, self.dtype)


class ToPILImage:
    """A tensor or ndarray as a PIL image (see ``functional.to_pil_image`` for the modes)."""

    def __init__(self, mode: str | None = None) -> None:
        self.mode = mode

    def __call__(self, pic: Any) -> Any:
        return F.to_pil_image(pic, self.mode)

    def __repr__(self) -> str:
        mode = f"mode={self.mode}" if self.mode is not None else ""
        return f"{self.__class__.__name__}({mode})"


class Normalize(nn.Module):
    """(x - mean) / std per channel of a float tensor image."""

    def __init__(self, mean: Sequence[float], std: Sequence[float],
                 inplace: bool = False) -> None:
        super().__init__()
        self.mean = mean
        self.std = std
        self.inplace = inplace

    def forward(self, tensor: Tensor) -> Tensor:
        return F.normalize(tensor, self.mean, self.std, self.inplace)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(mean={self.mean}, std={self.std})"


class Resize(nn.Module):
    """Resize to ``size`` (h, w), or the shorter side to ``size`` (an int)."""

    def __init__(self, size: Any, interpolation: Any = InterpolationMode.BILINEAR,
                 max_size: int | None = None, antialias: bool | None = True) -> None:
        super().__init__()
        if not isinstance(size, (int, Sequence)):
            raise TypeError(f"Size should be int or sequence. Got {type(size)}")
        if isinstance(size, Sequence) and len(size) not in (1, 2):
            raise ValueError("If size is a sequence, it should have 1 or 2 values")
        self.size = size
        self.max_size = max_size
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        self.antialias = antialias

    def forward(self, img: Any) -> Any:
        return F.resize(img, self.size, self.interpolation, self.max_size, self.antialias)

    def __repr__(self) -> str:
        detail = (f"(size={self.size}, interpolation={self.interpolation.value}, "
                  f"max_size={self.max_size}, antialias={self.antialias})")
        return f"{self.__class__.__name__}{detail}"


class CenterCrop(nn.Module):
    """The centered crop of ``size`` (an int for a square)."""

    def __init__(self, size: Any) -> None:
        super().__init__()
        self.size = _setup_crop_size(size)

    def forward(self, img: Any) -> Any:
        return F.center_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size})"


class Pad(nn.Module):
    """Pad the borders (see ``functional.pad``)."""

    def __init__(self, padding: Any, fill: Any = 0, padding_mode: str = "constant") -> None:
        super().__init__()
        if not isinstance(padding, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate padding arg")
        if not isinstance(fill, (numbers.Number, tuple, list)):
            raise TypeError("Got inappropriate fill arg")
        if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
            raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
        if isinstance(padding, Sequence) and len(padding) not in [1, 2, 4]:
            raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                             f"{len(padding)} element tuple")
        self.padding = padding
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img: Any) -> Any:
        return F.pad(img, self.padding, self.fill, self.padding_mode)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(padding={self.padding}, fill={self.fill}, "
                f"padding_mode={self.padding_mode})")


class Lambda:
    """Apply a user function as a transform."""

    def __init__(self, lambd: Any) -> None:
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img: Any) -> Any:
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class RandomTransforms:
    """The base of the transforms that apply a random selection of ``transforms``."""

    def __init__(self, transforms: Sequence[Any]) -> None:
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence")
        self.transforms = transforms

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError()

    def __repr__(self) -> str:
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({lines}\n)"


class RandomApply(nn.Module):
    """Apply all ``transforms`` with probability ``p`` (one draw, ``torch.rand(1)``)."""

    def __init__(self, transforms: Any, p: float = 0.5) -> None:
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, img: Any) -> Any:
        if self.p < tapegrad.rand(1):
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}(\n    p={self.p}{lines}\n)"


class RandomOrder(RandomTransforms):
    """Apply ``transforms`` in an order shuffled by Python's ``random``."""

    def __call__(self, img: Any) -> Any:
        order = list(range(len(self.transforms)))
        random.shuffle(order)
        for i in order:
            img = self.transforms[i](img)
        return img


class RandomChoice(RandomTransforms):
    """Apply one of ``transforms``, picked by Python's ``random.choices`` with weights ``p``."""

    def __init__(self, transforms: Sequence[Any], p: Sequence[float] | None = None) -> None:
        super().__init__(transforms)
        if p is not None and not isinstance(p, Sequence):
            raise TypeError("Argument p should be a sequence")
        self.p = p

    def __call__(self, *args: Any) -> Any:
        t = random.choices(self.transforms, weights=self.p)[0]
        return t(*args)

    def __repr__(self) -> str:
        return f"{super().__repr__()}(p={self.p})"


class RandomCrop(nn.Module):
    """A crop of ``size`` at a random position, after optional padding."""

    @staticmethod
    def get_params(img: Any, output_size: tuple[int, int]) -> tuple[int, int, int, int]:
        """(top, left, height, width) of a random crop of ``output_size``."""
        _, h, w = F.get_dimensions(img)
        th, tw = output_size
        if h < th or w < tw:
            raise ValueError(
                f"Required crop size {(th, tw)} is larger than input image size {(h, w)}")
        if w == tw and h == th:
            return 0, 0, h, w
        i = tapegrad.randint(0, h - th + 1, size=(1,)).item()
        j = tapegrad.randint(0, w - tw + 1, size=(1,)).item()
        return i, j, th, tw

    def __init__(self, size: Any, padding: Any = None, pad_if_needed: bool = False,
                 fill: Any = 0, padding_mode: str = "constant") -> None:
        super().__init__()
        self.size = tuple(_setup_crop_size(size))
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def forward(self, img: Any) -> Any:
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        _, height, width = F.get_dimensions(img)
        if self.pad_if_needed and width < self.size[1]:
            img = F.pad(img, [self.size[1] - width, 0], self.fill, self.padding_mode)
        if self.pad_if_needed and height < self.size[0]:
            img = F.pad(img, [0, self.size[0] - height], self.fill, self.padding_mode)
        i, j, h, w = self.get_params(img, self.size)  # type: ignore[arg-type]
        return F.crop(img, i, j, h, w)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip(nn.Module):
    """Mirror left to right with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        if tapegrad.rand(1) < self.p:
            return F.hflip(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomVerticalFlip(nn.Module):
    """Mirror top to bottom with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        if tapegrad.rand(1) < self.p:
            return F.vflip(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomPerspective(nn.Module):
    """With probability ``p``, move each corner inwards by up to ``distortion_scale`` of half
    the size and warp the image accordingly."""

    def __init__(self, distortion_scale: float = 0.5, p: float = 0.5,
                 interpolation: Any = InterpolationMode.BILINEAR, fill: Any = 0) -> None:
        super().__init__()
        self.p = p
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        self.distortion_scale = distortion_scale
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    def forward(self, img: Any) -> Any:
        fill = self.fill
        channels, height, width = F.get_dimensions(img)
        if isinstance(img, Tensor):
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else [
                float(f) for f in fill]
        if tapegrad.rand(1) < self.p:
            startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, startpoints, endpoints, self.interpolation, fill)
        return img

    @staticmethod
    def get_params(width: int, height: int, distortion_scale: float
                   ) -> tuple[list[list[int]], list[list[int]]]:
        """The image corners and where they go: each moved inwards by a random amount."""
        half_height = height // 2
        half_width = width // 2
        dw = int(distortion_scale * half_width)
        dh = int(distortion_scale * half_height)

        def draw(low: int, high: int) -> int:
            return int(tapegrad.randint(low, high, size=(1,)).item())

        topleft = [draw(0, dw + 1), draw(0, dh + 1)]
        topright = [draw(width - dw - 1, width), draw(0, dh + 1)]
        botright = [draw(width - dw - 1, width), draw(height - dh - 1, height)]
        botleft = [draw(0, dw + 1), draw(height - dh - 1, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        endpoints = [topleft, topright, botright, botleft]
        return startpoints, endpoints

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


def _resized_crop_box(height: int, width: int, scale: Sequence[float], ratio: Sequence[float],
                      log_ratio: Tensor) -> tuple[int, int, int, int]:
    """RandomResizedCrop's (v1's and v2's) draw, (top, left, height, width): up to 10 draws of
    an area fraction in ``scale`` and a log-uniform aspect ratio until the crop fits, else the
    central crop of the closest allowed ratio."""
    area = height * width
    for _ in range(10):
        target_area = area * tapegrad.empty(1).uniform_(scale[0], scale[1]).item()
        aspect_ratio = tapegrad.exp(
            tapegrad.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
        w = int(round(math.sqrt(target_area * aspect_ratio)))
        h = int(round(math.sqrt(target_area / aspect_ratio)))
        if 0 < w <= width and 0 < h <= height:
            i = tapegrad.randint(0, height - h + 1, size=(1,)).item()
            j = tapegrad.randint(0, width - w + 1, size=(1,)).item()
            return i, j, h, w
    in_ratio = float(width) / float(height)
    if in_ratio < min(ratio):
        w = width
        h = int(round(w / min(ratio)))
    elif in_ratio > max(ratio):
        h = height
        w = int(round(h * max(ratio)))
    else:  # the whole image
        w = width
        h = height
    i = (height - h) // 2
    j = (width - w) // 2
    return i, j, h, w


class RandomResizedCrop(nn.Module):
    """A random crop of random area (``scale`` of the image) and aspect ratio (``ratio``, drawn
    log-uniformly), resized to ``size``: the Inception training crop."""

    def __init__(self, size: Any, scale: tuple[float, float] = (0.08, 1.0),
                 ratio: tuple[float, float] = (3.0 / 4.0, 4.0 / 3.0),
                 interpolation: Any = InterpolationMode.BILINEAR,
                 antialias: bool | None = True) -> None:
        super().__init__()
        self.size = _setup_crop_size(size)
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=2)
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        self.antialias = antialias
        self.scale = scale
        self.ratio = ratio

    @staticmethod
    def get_params(img: Any, scale: Sequence[float], ratio: Sequence[float]
                   ) -> tuple[int, int, int, int]:
        """(top, left, height, width): up to 10 draws of area and ratio until the crop fits,
        else the central crop of the largest allowed ratio."""
        _, height, width = F.get_dimensions(img)
        return _resized_crop_box(height, width, scale, ratio,
                                 tapegrad.log(tapegrad.tensor(ratio)))

    def forward(self, img: Any) -> Any:
        i, j, h, w = self.get_params(img, self.scale, self.ratio)
        return F.resized_crop(img, i, j, h, w, self.size, self.interpolation,
                              antialias=self.antialias)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(size={self.size}"
                f", scale={tuple(round(s, 4) for s in self.scale)}"
                f", ratio={tuple(round(r, 4) for r in self.ratio)}"
                f", interpolation={self.interpolation.value}"
                f", antialias={self.antialias})")


class FiveCrop(nn.Module):
    """The four corner crops and the center crop (a tuple of five images)."""

    def __init__(self, size: Any) -> None:
        super().__init__()
        self.size = _setup_crop_size(size)

    def forward(self, img: Any) -> tuple:
        return F.five_crop(img, self.size)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size})"


class TenCrop(nn.Module):
    """``FiveCrop`` of the image and of its mirror image (a tuple of ten)."""

    def __init__(self, size: Any, vertical_flip: bool = False) -> None:
        super().__init__()
        self.size = _setup_crop_size(size)
        self.vertical_flip = vertical_flip

    def forward(self, img: Any) -> tuple:
        return F.ten_crop(img, self.size, self.vertical_flip)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(size={self.size}, vertical_flip={self.vertical_flip})"


def _set_whitening(transform: nn.Module, transformation_matrix: Tensor,
                   mean_vector: Tensor) -> None:
    """Check and set LinearTransformation's (v1's and v2's) matrix and mean on ``transform``: a
    square matrix, a mean vector as long as a side of it, both on one device with one dtype."""
    if transformation_matrix.size(0) != transformation_matrix.size(1):
        raise ValueError("transformation_matrix should be square. Got "
                         f"{tuple(transformation_matrix.size())} rectangular matrix.")
    if mean_vector.size(0) != transformation_matrix.size(0):
        raise ValueError(
            f"mean_vector should have the same length {mean_vector.size(0)} as any one of "
            "the dimensions of the transformation_matrix "
            f"[{tuple(transformation_matrix.size())}]")
    if transformation_matrix.device != mean_vector.device:
        raise ValueError("Input tensors should be on the same device. Got "
                         f"{transformation_matrix.device} and {mean_vector.device}")
    if transformation_matrix.dtype != mean_vector.dtype:
        raise ValueError("Input tensors should have the same dtype. Got "
                         f"{transformation_matrix.dtype} and {mean_vector.dtype}")
    transform.transformation_matrix = transformation_matrix
    transform.mean_vector = mean_vector


def _whitened_size(tensor: Tensor, transformation_matrix: Tensor, mean_vector: Tensor) -> int:
    """The number of values of each image LinearTransformation (v1's and v2's) flattens,
    checked to be the matrix's number of rows, and the input checked to be on the mean
    vector's device."""
    shape = tensor.shape
    n = shape[-3] * shape[-2] * shape[-1]
    if n != transformation_matrix.shape[0]:
        raise ValueError("Input tensor and transformation matrix have incompatible shape."
                         f"[{shape[-3]} x {shape[-2]} x {shape[-1]}] != "
                         f"{transformation_matrix.shape[0]}")
    if tensor.device.type != mean_vector.device.type:
        raise ValueError("Input tensor should be on the same device as transformation "
                         f"matrix and mean vector. Got {tensor.device} vs "
                         f"{mean_vector.device}")
    return n


class LinearTransformation(nn.Module):
    """Flatten the image, subtract ``mean_vector`` and multiply by ``transformation_matrix``
    (a whitening transform, for instance ZCA)."""

    def __init__(self, transformation_matrix: Tensor, mean_vector: Tensor) -> None:
        super().__init__()
        _set_whitening(self, transformation_matrix, mean_vector)

    def forward(self, tensor: Tensor) -> Tensor:
        shape = tensor.shape
        n = _whitened_size(tensor, self.transformation_matrix, self.mean_vector)
        flat_tensor = tensor.view(-1, n) - self.mean_vector
        transformation_matrix = self.transformation_matrix.to(flat_tensor.dtype)
        return tapegrad.mm(flat_tensor, transformation_matrix).view(shape)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(transformation_matrix="
                f"{self.transformation_matrix.tolist()}"
                f", mean_vector={self.mean_vector.tolist()})")


def _set_jitter_ranges(jitter: Any, brightness: Any, contrast: Any, saturation: Any,
                       hue: Any) -> None:
    """Set ColorJitter's (v1's and v2's) four ranges on ``jitter``, each read by its own
    ``_check_input`` (factors around 1, the hue around 0 within [-0.5, 0.5])."""
    jitter.brightness = jitter._check_input(brightness, "brightness")
    jitter.contrast = jitter._check_input(contrast, "contrast")
    jitter.saturation = jitter._check_input(saturation, "saturation")
    jitter.hue = jitter._check_input(hue, "hue", center=0, bound=(-0.5, 0.5),
                                     clip_first_on_zero=False)


class ColorJitter(nn.Module):
    """Random brightness, contrast, saturation and hue changes, applied in a random order.

    Each argument is a max deviation (a factor drawn from [max(0, 1 - v), 1 + v], hue from
    [-v, v]) or a (min, max) range; 0 leaves that property alone.
    """

    def __init__(self, brightness: Any = 0, contrast: Any = 0, saturation: Any = 0,
                 hue: Any = 0) -> None:
        super().__init__()
        _set_jitter_ranges(self, brightness, contrast, saturation, hue)

    def _check_input(self, value: Any, name: str, center: float = 1,
                     bound: tuple[float, float] = (0, float("inf")),
                     clip_first_on_zero: bool = True) -> tuple[float, float] | None:
        if isinstance(value, numbers.Number):
            if value < 0:  # type: ignore[operator]
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - float(value), center + float(value)]  # type: ignore[arg-type]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, (tuple, list)) and len(value) == 2:
            value = [float(value[0]), float(value[1])]
        else:
            raise TypeError(f"{name} should be a single number or a list/tuple with length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name} values should be between {bound}, but got {value}.")
        # a range of just the center means no change: nothing to draw
        if value[0] == value[1] == center:
            return None
        return tuple(value)  # type: ignore[return-value]

    @staticmethod
    def get_params(brightness: Sequence[float] | None, contrast: Sequence[float] | None,
                   saturation: Sequence[float] | None, hue: Sequence[float] | None
                   ) -> tuple[Tensor, float | None, float | None, float | None, float | None]:
        """The order (``torch.randperm(4)``) and the four factors (None where disabled)."""
        fn_idx = tapegrad.randperm(4)

        def draw(r: Sequence[float] | None) -> float | None:
            return None if r is None else float(tapegrad.empty(1).uniform_(r[0], r[1]))

        b = draw(brightness)
        c = draw(contrast)
        s = draw(saturation)
        h = draw(hue)
        return fn_idx, b, c, s, h

    def forward(self, img: Any) -> Any:
        fn_idx, brightness_factor, contrast_factor, saturation_factor, hue_factor = (
            self.get_params(self.brightness, self.contrast, self.saturation, self.hue))
        for fn_id in fn_idx:
            if fn_id == 0 and brightness_factor is not None:
                img = F.adjust_brightness(img, brightness_factor)
            elif fn_id == 1 and contrast_factor is not None:
                img = F.adjust_contrast(img, contrast_factor)
            elif fn_id == 2 and saturation_factor is not None:
                img = F.adjust_saturation(img, saturation_factor)
            elif fn_id == 3 and hue_factor is not None:
                img = F.adjust_hue(img, hue_factor)
        return img

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(brightness={self.brightness}, "
                f"contrast={self.contrast}, saturation={self.saturation}, hue={self.hue})")


class RandomRotation(nn.Module):
    """Rotate by an angle drawn uniformly from ``degrees`` (±d or a (min, max) range)."""

    def __init__(self, degrees: Any, interpolation: Any = InterpolationMode.NEAREST,
                 expand: bool = False, center: Any = None, fill: Any = 0) -> None:
        super().__init__()
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center
        self.interpolation = interpolation
        self.expand = expand
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    @staticmethod
    def get_params(degrees: list[float]) -> float:
        """An angle uniform in [degrees[0], degrees[1])."""
        return float(tapegrad.empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())

    def forward(self, img: Any) -> Any:
        fill = self.fill
        channels, _, _ = F.get_dimensions(img)
        if isinstance(img, Tensor):
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else [
                float(f) for f in fill]
        angle = self.get_params(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, fill)

    def __repr__(self) -> str:
        s = (f"{self.__class__.__name__}(degrees={self.degrees}"
             f", interpolation={self.interpolation.value}, expand={self.expand}")
        if self.center is not None:
            s += f", center={self.center}"
        if self.fill is not None:
            s += f", fill={self.fill}"
        return s + ")"


def _set_affine_ranges(affine: nn.Module, degrees: Any, translate: Any, scale: Any,
                       shear: Any) -> None:
    """Check and set RandomAffine's (v1's and v2's) ranges on ``affine``: ``degrees`` (a number
    d is [-d, d]), ``translate`` and ``scale`` (where given, pairs of fractions in [0, 1] and of
    positive factors) and ``shear`` (2 or 4 numbers, or one)."""
    affine.degrees = _setup_angle(degrees, name="degrees", req_sizes=(2,))
    if translate is not None:
        _check_sequence_input(translate, "translate", req_sizes=(2,))
        for t in translate:
            if not (0.0 <= t <= 1.0):
                raise ValueError("translation values should be between 0 and 1")
    affine.translate = translate
    if scale is not None:
        _check_sequence_input(scale, "scale", req_sizes=(2,))
        for s in scale:
            if s <= 0:
                raise ValueError("scale values should be positive")
    affine.scale = scale
    affine.shear = (_setup_angle(shear, name="shear", req_sizes=(2, 4)) if shear is not None
                    else shear)


class RandomAffine(nn.Module):
    """A random affine map: rotation from ``degrees``, translation up to ``translate`` of the
    size, scale from ``scale``, shear from ``shear`` (x, or x and y ranges)."""

    def __init__(self, degrees: Any, translate: Any = None, scale: Any = None,
                 shear: Any = None, interpolation: Any = InterpolationMode.NEAREST,
                 fill: Any = 0, center: Any = None) -> None:
        super().__init__()
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        _set_affine_ranges(self, degrees, translate, scale, shear)
        self.interpolation = interpolation
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill
        if center is not None:
            _check_sequence_input(center, "center", req_sizes=(2,))
        self.center = center

    @staticmethod
    def get_params(degrees: list[float], translate: list[float] | None,
                   scale_ranges: list[float] | None, shears: list[float] | None,
                   img_size: list[int]) -> tuple[float, tuple[int, int], float,
                                                 tuple[float, float]]:
        """(angle, (tx, ty), scale, (shear_x, shear_y)); ``img_size`` is [width, height]."""
        angle = float(tapegrad.empty(1).uniform_(float(degrees[0]), float(degrees[1])).item())
        if translate is not None:
            max_dx = float(translate[0] * img_size[0])
            max_dy = float(translate[1] * img_size[1])
            tx = int(round(tapegrad.empty(1).uniform_(-max_dx, max_dx).item()))
            ty = int(round(tapegrad.empty(1).uniform_(-max_dy, max_dy).item()))
            translations = (tx, ty)
        else:
            translations = (0, 0)
        if scale_ranges is not None:
            scale = float(tapegrad.empty(1).uniform_(scale_ranges[0], scale_ranges[1]).item())
        else:
            scale = 1.0
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = float(tapegrad.empty(1).uniform_(shears[0], shears[1]).item())
            if len(shears) == 4:
                shear_y = float(tapegrad.empty(1).uniform_(shears[2], shears[3]).item())
        return angle, translations, scale, (shear_x, shear_y)

    def forward(self, img: Any) -> Any:
        fill = self.fill
        channels, height, width = F.get_dimensions(img)
        if isinstance(img, Tensor):
            fill = [float(fill)] * channels if isinstance(fill, (int, float)) else [
                float(f) for f in fill]
        img_size = [width, height]  # get_params takes [width, height]
        ret = self.get_params(self.degrees, self.translate, self.scale, self.shear, img_size)
        return F.affine(img, *ret, interpolation=self.interpolation, fill=fill,  # type: ignore[arg-type]
                        center=self.center)

    def __repr__(self) -> str:
        s = f"{self.__class__.__name__}(degrees={self.degrees}"
        s += f", translate={self.translate}" if self.translate is not None else ""
        s += f", scale={self.scale}" if self.scale is not None else ""
        s += f", shear={self.shear}" if self.shear is not None else ""
        s += (f", interpolation={self.interpolation.value}"
              if self.interpolation != InterpolationMode.NEAREST else "")
        s += f", fill={self.fill}" if self.fill != 0 else ""
        s += f", center={self.center}" if self.center is not None else ""
        return s + ")"


class Grayscale(nn.Module):
    """Convert to grayscale with ``num_output_channels`` (1 or 3) channels."""

    def __init__(self, num_output_channels: int = 1) -> None:
        super().__init__()
        self.num_output_channels = num_output_channels

    def forward(self, img: Any) -> Any:
        return F.rgb_to_grayscale(img, num_output_channels=self.num_output_channels)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(num_output_channels={self.num_output_channels})"


class RandomGrayscale(nn.Module):
    """Convert to grayscale (keeping the channel count) with probability ``p``."""

    def __init__(self, p: float = 0.1) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        num_output_channels, _, _ = F.get_dimensions(img)
        if tapegrad.rand(1) < self.p:
            return F.rgb_to_grayscale(img, num_output_channels=num_output_channels)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


def _erasing_box(img_c: int, img_h: int, img_w: int, scale: Sequence[float],
                 log_ratio: Tensor, value: list[float] | None) -> tuple | None:
    """RandomErasing's (v1's and v2's) draw: up to 10 tries of an area fraction in ``scale`` and
    a log-uniform aspect ratio until the box fits, then its top-left corner; (i, j, h, w, the
    erasing values: ``value`` per channel, or normal noise for None), or None if none fit."""
    area = img_h * img_w
    for _ in range(10):
        erase_area = area * tapegrad.empty(1).uniform_(scale[0], scale[1]).item()
        aspect_ratio = tapegrad.exp(
            tapegrad.empty(1).uniform_(log_ratio[0], log_ratio[1])).item()
        h = int(round(math.sqrt(erase_area * aspect_ratio)))
        w = int(round(math.sqrt(erase_area / aspect_ratio)))
        if not (h < img_h and w < img_w):
            continue
        if value is None:
            v = tapegrad.empty([img_c, h, w], dtype=tapegrad.float32).normal_()
        else:
            v = tapegrad.tensor(value)[:, None, None]
        i = tapegrad.randint(0, img_h - h + 1, size=(1,)).item()
        j = tapegrad.randint(0, img_w - w + 1, size=(1,)).item()
        return i, j, h, w, v
    return None


def _check_erasing(value: Any, scale: Sequence[float], ratio: Sequence[float]) -> None:
    """RandomErasing's (v1's and v2's) checks of ``value``, ``scale`` and ``ratio``; the
    warning names the line that made the transform."""
    if not isinstance(value, (numbers.Number, str, tuple, list)):
        raise TypeError("Argument value should be either a number or str or a sequence")
    if isinstance(value, str) and value != "random":
        raise ValueError("If value is str, it should be 'random'")
    if not isinstance(scale, Sequence):
        raise TypeError("Scale should be a sequence")
    if not isinstance(ratio, Sequence):
        raise TypeError("Ratio should be a sequence")
    if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
        warnings.warn("Scale and ratio should be of kind (min, max)", stacklevel=3)
    if scale[0] < 0 or scale[1] > 1:
        raise ValueError("Scale should be between 0 and 1")


class RandomErasing(nn.Module):
    """With probability ``p``, erase a random box of ``scale`` of the area and aspect ratio in
    ``ratio`` (log-uniform) with ``value`` (a number, one per channel, or ``'random'`` normal
    noise). Tensors only."""

    def __init__(self, p: float = 0.5, scale: Sequence[float] = (0.02, 0.33),
                 ratio: Sequence[float] = (0.3, 3.3), value: Any = 0,
                 inplace: bool = False) -> None:
        super().__init__()
        _check_erasing(value, scale, ratio)
        if p < 0 or p > 1:
            raise ValueError("Random erasing probability should be between 0 and 1")
        self.p = p
        self.scale = scale
        self.ratio = ratio
        self.value = value
        self.inplace = inplace

    @staticmethod
    def get_params(img: Tensor, scale: Sequence[float], ratio: Sequence[float],
                   value: list[float] | None = None) -> tuple[int, int, int, int, Tensor]:
        """(i, j, h, w, v): up to 10 draws of a box that fits, else the whole image and v =
        the image itself (no change)."""
        img_c, img_h, img_w = img.shape[-3], img.shape[-2], img.shape[-1]
        box = _erasing_box(img_c, img_h, img_w, scale, tapegrad.log(tapegrad.tensor(ratio)),
                           value)
        return box if box is not None else (0, 0, img_h, img_w, img)

    def forward(self, img: Tensor) -> Tensor:
        if tapegrad.rand(1) < self.p:
            if isinstance(self.value, (int, float)):
                value: Any = [float(self.value)]
            elif isinstance(self.value, str):
                value = None
            elif isinstance(self.value, (list, tuple)):
                value = [float(v) for v in self.value]
            else:
                value = self.value
            if value is not None and len(value) not in (1, img.shape[-3]):
                raise ValueError(
                    "If value is a sequence, it should have either a single value or "
                    f"{img.shape[-3]} (number of input channels)")
            x, y, h, w, v = self.get_params(img, scale=self.scale, ratio=self.ratio,
                                            value=value)
            return F.erase(img, x, y, h, w, v, self.inplace)
        return img

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(p={self.p}, scale={self.scale}, "
                f"ratio={self.ratio}, value={self.value}, inplace={self.inplace})")


def _blur_kernel_size(kernel_size: Any) -> Sequence[int]:
    """GaussianBlur's (v1's and v2's) kernel size: two odd positive integers (one number stands
    for both)."""
    size = _setup_size(kernel_size, "Kernel size should be a tuple/list of two integers")
    for ks in size:
        if ks <= 0 or ks % 2 == 0:
            raise ValueError("Kernel size value should be an odd and positive number.")
    return size


class GaussianBlur(nn.Module):
    """Gaussian blur with ``kernel_size`` and a sigma drawn uniformly from ``sigma``."""

    def __init__(self, kernel_size: Any, sigma: Any = (0.1, 2.0)) -> None:
        super().__init__()
        self.kernel_size = _blur_kernel_size(kernel_size)
        if isinstance(sigma, numbers.Number):
            if sigma <= 0:  # type: ignore[operator]
                raise ValueError("If sigma is a single number, it must be positive.")
            sigma = (sigma, sigma)
        elif isinstance(sigma, Sequence) and len(sigma) == 2:
            if not 0.0 < sigma[0] <= sigma[1]:
                raise ValueError("sigma values should be positive and of the form (min, max).")
        else:
            raise ValueError("sigma should be a single number or a list/tuple with length 2.")
        self.sigma = sigma

    @staticmethod
    def get_params(sigma_min: float, sigma_max: float) -> float:
        """A sigma uniform in [sigma_min, sigma_max)."""
        return tapegrad.empty(1).uniform_(sigma_min, sigma_max).item()  # type: ignore[no-any-return]

    def forward(self, img: Any) -> Any:
        sigma = self.get_params(self.sigma[0], self.sigma[1])
        return F.gaussian_blur(img, self.kernel_size, [sigma, sigma])

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(kernel_size={self.kernel_size}, sigma={self.sigma})"


def _setup_size(size: Any, error_msg: str) -> Any:
    if isinstance(size, numbers.Number):
        return int(size), int(size)  # type: ignore[call-overload]
    if isinstance(size, Sequence) and len(size) == 1:
        return size[0], size[0]
    if len(size) != 2:
        raise ValueError(error_msg)
    return size


def _setup_crop_size(size: Any) -> Any:
    """The (h, w) of a crop given as an int or a sequence of one or two ints (the crop
    transforms' ``size``, v1's and v2's)."""
    return _setup_size(size, error_msg="Please provide only two dimensions (h, w) for size.")


def _check_sequence_input(x: Any, name: str, req_sizes: Sequence[int]) -> None:
    msg = req_sizes[0] if len(req_sizes) < 2 else " or ".join([str(s) for s in req_sizes])
    if not isinstance(x, Sequence):
        raise TypeError(f"{name} should be a sequence of length {msg}.")
    if len(x) not in req_sizes:
        raise ValueError(f"{name} should be a sequence of length {msg}.")


def _setup_angle(x: Any, name: str, req_sizes: Sequence[int] = (2,)) -> list[float]:
    if isinstance(x, numbers.Number):
        if x < 0:  # type: ignore[operator]
            raise ValueError(f"If {name} is a single number, it must be positive.")
        x = [-x, x]  # type: ignore[operator]
    else:
        _check_sequence_input(x, name, req_sizes)
    return [float(d) for d in x]


class RandomInvert(nn.Module):
    """Invert the colors with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        if tapegrad.rand(1).item() < self.p:
            return F.invert(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomPosterize(nn.Module):
    """Keep ``bits`` bits per channel with probability ``p``."""

    def __init__(self, bits: int, p: float = 0.5) -> None:
        super().__init__()
        self.bits = bits
        self.p = p

    def forward(self, img: Any) -> Any:
        if tapegrad.rand(1).item() < self.p:
            return F.posterize(img, self.bits)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(bits={self.bits},p={self.p})"


class RandomSolarize(nn.Module):
    """Invert the values above ``threshold`` with probability ``p``."""

    def __init__(self, threshold: float, p: float = 0.5) -> None:
        super().__init__()
        self.threshold = threshold
        self.p = p

    def forward(self, img: Any) -> Any:
        if tapegrad.rand(1).item() < self.p:
            return F.solarize(img, self.threshold)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(threshold={self.threshold},p={self.p})"


class RandomAdjustSharpness(nn.Module):
    """Adjust the sharpness by ``sharpness_factor`` with probability ``p``."""

    def __init__(self, sharpness_factor: float, p: float = 0.5) -> None:
        super().__init__()
        self.sharpness_factor = sharpness_factor
        self.p = p

    def forward(self, img: Any) -> Any:
        if tapegrad.rand(1).item() < self.p:
            return F.adjust_sharpness(img, self.sharpness_factor)
        return img

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(sharpness_factor={self.sharpness_factor},"
                f"p={self.p})")


class RandomAutocontrast(nn.Module):
    """Autocontrast with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        if tapegrad.rand(1).item() < self.p:
            return F.autocontrast(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class RandomEqualize(nn.Module):
    """Equalize the histogram with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        super().__init__()
        self.p = p

    def forward(self, img: Any) -> Any:
        if tapegrad.rand(1).item() < self.p:
            return F.equalize(img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(p={self.p})"


class ElasticTransform(nn.Module):
    """Displace the pixels by smoothed random noise: uniform in [-1, 1] per pixel and axis,
    Gaussian-blurred with ``sigma``, scaled by ``alpha`` pixels."""

    def __init__(self, alpha: Any = 50.0, sigma: Any = 5.0,
                 interpolation: Any = InterpolationMode.BILINEAR, fill: Any = 0) -> None:
        super().__init__()
        self.alpha = _float_pair(alpha, "alpha")
        self.sigma = _float_pair(sigma, "sigma")
        if isinstance(interpolation, int):
            interpolation = _interpolation_modes_from_int(interpolation)
        self.interpolation = interpolation
        if isinstance(fill, (int, float)):
            fill = [float(fill)]
        elif isinstance(fill, (list, tuple)):
            fill = [float(f) for f in fill]
        else:
            raise TypeError(
                f"fill should be int or float or a list or tuple of them. Got {type(fill)}")
        self.fill = fill

    @staticmethod
    def get_params(alpha: list[float], sigma: list[float], size: list[int]) -> Tensor:
        """The displacement (1, H, W, 2) in normalized units."""
        dx = tapegrad.rand([1, 1] + size) * 2 - 1
        if sigma[0] > 0.0:
            kx = int(8 * sigma[0] + 1)
            kx += 1 - kx % 2  # an odd kernel size
            dx = F.gaussian_blur(dx, [kx, kx], sigma)
        dx = dx * alpha[0] / size[1]
        dy = tapegrad.rand([1, 1] + size) * 2 - 1
        if sigma[1] > 0.0:
            ky = int(8 * sigma[1] + 1)
            ky += 1 - ky % 2
            dy = F.gaussian_blur(dy, [ky, ky], sigma)
        dy = dy * alpha[1] / size[0]
        return tapegrad.concat([dx, dy], 1).permute([0, 2, 3, 1])  # 1 x H x W x 2

    def forward(self, tensor: Any) -> Any:
        _, height, width = F.get_dimensions(tensor)
        displacement = self.get_params(self.alpha, self.sigma, [height, width])
        return F.elastic_transform(tensor, displacement, self.interpolation, self.fill)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(alpha={self.alpha}, sigma={self.sigma}"
                f", interpolation={self.interpolation}, fill={self.fill})")


def _float_pair(value: Any, name: str) -> list[float]:
    """ElasticTransform's alpha and sigma: a float, or a sequence of two floats."""
    if not isinstance(value, (float, Sequence)):
        raise TypeError(f"{name} should be float or a sequence of floats. Got {type(value)}")
    if isinstance(value, Sequence) and len(value) != 2:
        raise ValueError(f"If {name} is a sequence its length should be 2. Got {len(value)}")
    if isinstance(value, Sequence):
        for element in value:
            if not isinstance(element, float):
                raise TypeError(f"{name} should be a sequence of floats. Got {type(element)}")
    if isinstance(value, float):
        return [float(value), float(value)]
    return value  # type: ignore[return-value]
