"""The v2 color transforms: grayscale, ColorJitter, photometric distortion, channel
permutation, and the random invert/posterize/solarize/sharpness/autocontrast/equalize."""

from __future__ import annotations

import collections.abc
from typing import Any

import tapegrad

from ... import transforms as _transforms
from ..transforms import _set_jitter_ranges
from . import functional as F
from ._transform import Transform, _RandomApplyTransform
from ._utils import query_chw


class Grayscale(Transform):
    """Convert to grayscale with ``num_output_channels`` (1 or 3) channels."""

    _v1_transform_cls = _transforms.Grayscale

    def __init__(self, num_output_channels: int = 1) -> None:
        super().__init__()
        self.num_output_channels = num_output_channels

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.rgb_to_grayscale, inpt,
                                 num_output_channels=self.num_output_channels)


class RandomGrayscale(_RandomApplyTransform):
    """Convert to grayscale (keeping the channel count) with probability ``p``."""

    _v1_transform_cls = _transforms.RandomGrayscale

    def __init__(self, p: float = 0.1) -> None:
        super().__init__(p=p)

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        num_input_channels, *_ = query_chw(flat_inputs)
        return dict(num_input_channels=num_input_channels)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.rgb_to_grayscale, inpt,
                                 num_output_channels=params["num_input_channels"])


class RGB(Transform):
    """Convert grayscale images to RGB (3 equal channels); RGB images pass."""

    def __init__(self) -> None:
        super().__init__()

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.grayscale_to_rgb, inpt)


class ColorJitter(Transform):
    """Random brightness, contrast, saturation and hue changes in a random order; each a max
    deviation or a (min, max) range, None to leave that property alone."""

    _v1_transform_cls = _transforms.ColorJitter

    def _extract_params_for_v1_transform(self) -> dict[str, Any]:
        return {attr: value or 0
                for attr, value in super()._extract_params_for_v1_transform().items()}

    def __init__(self, brightness: Any = None, contrast: Any = None, saturation: Any = None,
                 hue: Any = None) -> None:
        super().__init__()
        _set_jitter_ranges(self, brightness, contrast, saturation, hue)

    def _check_input(self, value: Any, name: str, center: float = 1.0,
                     bound: tuple[float, float] = (0, float("inf")),
                     clip_first_on_zero: bool = True) -> tuple[float, float] | None:
        if value is None:
            return None
        if isinstance(value, (int, float)):
            if value < 0:
                raise ValueError(f"If {name} is a single number, it must be non negative.")
            value = [center - value, center + value]
            if clip_first_on_zero:
                value[0] = max(value[0], 0.0)
        elif isinstance(value, collections.abc.Sequence) and len(value) == 2:
            value = [float(v) for v in value]
        else:
            raise TypeError(f"{name}={value} should be a single number or a sequence with "
                            "length 2.")
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(
                f"{name} values should be between {bound} and increasing, but got {value}.")
        return None if value[0] == value[1] == center else (float(value[0]), float(value[1]))

    @staticmethod
    def _generate_value(left: float, right: float) -> float:
        return float(tapegrad.empty(1).uniform_(left, right).item())

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        fn_idx = tapegrad.randperm(4)
        b = None if self.brightness is None else self._generate_value(*self.brightness)
        c = None if self.contrast is None else self._generate_value(*self.contrast)
        s = None if self.saturation is None else self._generate_value(*self.saturation)
        h = None if self.hue is None else self._generate_value(*self.hue)
        return dict(fn_idx=fn_idx, brightness_factor=b, contrast_factor=c, saturation_factor=s,
                    hue_factor=h)

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        output = inpt
        brightness_factor = params["brightness_factor"]
        contrast_factor = params["contrast_factor"]
        saturation_factor = params["saturation_factor"]
        hue_factor = params["hue_factor"]
        for fn_id in params["fn_idx"]:
            if fn_id == 0 and brightness_factor is not None:
                output = self._call_kernel(F.adjust_brightness, output,
                                           brightness_factor=brightness_factor)
            elif fn_id == 1 and contrast_factor is not None:
                output = self._call_kernel(F.adjust_contrast, output,
                                           contrast_factor=contrast_factor)
            elif fn_id == 2 and saturation_factor is not None:
                output = self._call_kernel(F.adjust_saturation, output,
                                           saturation_factor=saturation_factor)
            elif fn_id == 3 and hue_factor is not None:
                output = self._call_kernel(F.adjust_hue, output, hue_factor=hue_factor)
        return output


class RandomChannelPermutation(Transform):
    """Shuffle the channels (``torch.randperm``)."""

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        num_channels, *_ = query_chw(flat_inputs)
        return dict(permutation=tapegrad.randperm(num_channels))

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.permute_channels, inpt, params["permutation"])


class RandomPhotometricDistort(Transform):
    """SSD's photometric distortions: each of brightness, contrast, saturation, hue (and a
    channel permutation) with probability ``p``, contrast before or after the rest."""

    def __init__(self, brightness: tuple[float, float] = (0.875, 1.125),
                 contrast: tuple[float, float] = (0.5, 1.5),
                 saturation: tuple[float, float] = (0.5, 1.5),
                 hue: tuple[float, float] = (-0.05, 0.05), p: float = 0.5) -> None:
        super().__init__()
        self.brightness = brightness
        self.contrast = contrast
        self.hue = hue
        self.saturation = saturation
        self.p = p

    def make_params(self, flat_inputs: list[Any]) -> dict[str, Any]:
        num_channels, *_ = query_chw(flat_inputs)
        params: dict[str, Any] = {}
        for key, value_range in [("brightness_factor", self.brightness),
                                 ("contrast_factor", self.contrast),
                                 ("saturation_factor", self.saturation),
                                 ("hue_factor", self.hue)]:
            params[key] = (ColorJitter._generate_value(value_range[0], value_range[1])
                           if tapegrad.rand(1) < self.p else None)
        params["contrast_before"] = bool(tapegrad.rand(()) < 0.5)
        params["channel_permutation"] = (tapegrad.randperm(num_channels)
                                         if tapegrad.rand(1) < self.p else None)
        return params

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        if params["brightness_factor"] is not None:
            inpt = self._call_kernel(F.adjust_brightness, inpt,
                                     brightness_factor=params["brightness_factor"])
        if params["contrast_factor"] is not None and params["contrast_before"]:
            inpt = self._call_kernel(F.adjust_contrast, inpt,
                                     contrast_factor=params["contrast_factor"])
        if params["saturation_factor"] is not None:
            inpt = self._call_kernel(F.adjust_saturation, inpt,
                                     saturation_factor=params["saturation_factor"])
        if params["hue_factor"] is not None:
            inpt = self._call_kernel(F.adjust_hue, inpt, hue_factor=params["hue_factor"])
        if params["contrast_factor"] is not None and not params["contrast_before"]:
            inpt = self._call_kernel(F.adjust_contrast, inpt,
                                     contrast_factor=params["contrast_factor"])
        if params["channel_permutation"] is not None:
            inpt = self._call_kernel(F.permute_channels, inpt,
                                     permutation=params["channel_permutation"])
        return inpt


class RandomEqualize(_RandomApplyTransform):
    """Equalize the histogram with probability ``p``."""

    _v1_transform_cls = _transforms.RandomEqualize

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.equalize, inpt)


class RandomInvert(_RandomApplyTransform):
    """Invert the colors with probability ``p``."""

    _v1_transform_cls = _transforms.RandomInvert

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.invert, inpt)


class RandomPosterize(_RandomApplyTransform):
    """Keep ``bits`` bits per channel with probability ``p``."""

    _v1_transform_cls = _transforms.RandomPosterize

    def __init__(self, bits: int, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.bits = bits

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.posterize, inpt, bits=self.bits)


class RandomSolarize(_RandomApplyTransform):
    """Invert the values above ``threshold`` with probability ``p``."""

    _v1_transform_cls = _transforms.RandomSolarize

    def _extract_params_for_v1_transform(self) -> dict[str, Any]:
        params = super()._extract_params_for_v1_transform()
        params["threshold"] = float(params["threshold"])
        return params

    def __init__(self, threshold: float, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.threshold = threshold

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.solarize, inpt, threshold=self.threshold)


class RandomAutocontrast(_RandomApplyTransform):
    """Autocontrast with probability ``p``."""

    _v1_transform_cls = _transforms.RandomAutocontrast

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.autocontrast, inpt)


class RandomAdjustSharpness(_RandomApplyTransform):
    """Adjust the sharpness by ``sharpness_factor`` with probability ``p``."""

    _v1_transform_cls = _transforms.RandomAdjustSharpness

    def __init__(self, sharpness_factor: float, p: float = 0.5) -> None:
        super().__init__(p=p)
        self.sharpness_factor = sharpness_factor

    def transform(self, inpt: Any, params: dict[str, Any]) -> Any:
        return self._call_kernel(F.adjust_sharpness, inpt,
                                 sharpness_factor=self.sharpness_factor)


