"""Automatic augmentation policies (v1): ``AutoAugment`` (the learned ImageNet, CIFAR10 and SVHN
policies), ``RandAugment``, ``TrivialAugmentWide`` and ``AugMix``.

Each picks image operations (shear, translate, rotate, color, posterize, solarize, ...) and
their magnitudes at random, drawing from the generator in torchvision's order, and applies them
through ``functional``; the magnitudes of each operation are a table of bins (``linspace``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from enum import Enum
from types import ModuleType
from typing import Any

import tapegrad
from tapegrad import Tensor, nn

from . import functional as F
from .functional import InterpolationMode

__all__ = ["AutoAugmentPolicy", "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix"]


def _apply_op(img: Any, op_name: str, magnitude: float, interpolation: InterpolationMode,
              fill: list[float] | None, functional: ModuleType = F,
              unknown: str = "The provided operator {} is not recognized.") -> Any:
    """One augmentation op at ``magnitude`` (shears are slopes; translations pixels), done by
    ``functional``'s functions (v2 passes its own, which also take tv_tensors); an unknown
    ``op_name`` is a ValueError with the message ``unknown``."""
    if op_name == "ShearX":
        # the shear angle whose tangent is the magnitude, about the top-left corner
        return functional.affine(img, angle=0.0, translate=[0, 0], scale=1.0,
                                 shear=[math.degrees(math.atan(magnitude)), 0.0],
                                 interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name == "ShearY":
        return functional.affine(img, angle=0.0, translate=[0, 0], scale=1.0,
                                 shear=[0.0, math.degrees(math.atan(magnitude))],
                                 interpolation=interpolation, fill=fill, center=[0, 0])
    if op_name == "TranslateX":
        return functional.affine(img, angle=0.0, translate=[int(magnitude), 0], scale=1.0,
                                 interpolation=interpolation, shear=[0.0, 0.0], fill=fill)
    if op_name == "TranslateY":
        return functional.affine(img, angle=0.0, translate=[0, int(magnitude)], scale=1.0,
                                 interpolation=interpolation, shear=[0.0, 0.0], fill=fill)
    if op_name == "Rotate":
        return functional.rotate(img, magnitude, interpolation=interpolation, fill=fill)
    if op_name == "Brightness":
        return functional.adjust_brightness(img, 1.0 + magnitude)
    if op_name == "Color":
        return functional.adjust_saturation(img, 1.0 + magnitude)
    if op_name == "Contrast":
        return functional.adjust_contrast(img, 1.0 + magnitude)
    if op_name == "Sharpness":
        return functional.adjust_sharpness(img, 1.0 + magnitude)
    if op_name == "Posterize":
        return functional.posterize(img, int(magnitude))
    if op_name == "Solarize":
        return functional.solarize(img, magnitude)
    if op_name == "AutoContrast":
        return functional.autocontrast(img)
    if op_name == "Equalize":
        return functional.equalize(img)
    if op_name == "Invert":
        return functional.invert(img)
    if op_name == "Identity":
        return img
    raise ValueError(unknown.format(op_name))


def _set_augmix_settings(augmix: nn.Module, severity: int, mixture_width: int,
                         chain_depth: int, alpha: float, all_ops: bool) -> None:
    """Set AugMix's settings (v1's and v2's) on ``augmix``, ``severity`` checked to be within
    [1, 10]."""
    augmix._PARAMETER_MAX = 10
    if not (1 <= severity <= augmix._PARAMETER_MAX):
        raise ValueError(f"The severity must be between [1, {augmix._PARAMETER_MAX}]. Got "
                         f"{severity} instead.")
    augmix.severity = severity
    augmix.mixture_width = mixture_width
    augmix.chain_depth = chain_depth
    augmix.alpha = alpha
    augmix.all_ops = all_ops


def _chain_depth(chain_depth: int) -> int:
    """The number of ops of one AugMix chain: ``chain_depth``, or when it is not positive a
    draw from 1 to 3."""
    return (chain_depth if chain_depth > 0
            else int(tapegrad.randint(low=1, high=4, size=(1,)).item()))


def _mixing_weights(sample_dirichlet: Callable[[Tensor], Tensor], alpha: float,
                    mixture_width: int, batch: Tensor) -> tuple[Tensor, Tensor]:
    """AugMix's Dirichlet weights for each image of ``batch``: ``m``, the original image's
    weight and the chains' share, then each chain's weight (its part of that share)."""
    batch_size = batch.size(0)
    m = sample_dirichlet(
        tapegrad.tensor([alpha, alpha], device=batch.device).expand(batch_size, -1))
    combined_weights = sample_dirichlet(
        tapegrad.tensor([alpha] * mixture_width, device=batch.device).expand(
            batch_size, -1)) * m[:, 1].view([batch_size, -1])
    return m, combined_weights


class AutoAugmentPolicy(Enum):
    """The AutoAugment policies learned on ImageNet, CIFAR10 and SVHN."""

    IMAGENET = "imagenet"
    CIFAR10 = "cifar10"
    SVHN = "svhn"


# The sub-policies of "AutoAugment: Learning Augmentation Strategies from Data" (Cubuk et al.,
# 2019): pairs of (op, probability, magnitude bin), written here as op:probability:bin.
_POLICIES = {
    AutoAugmentPolicy.IMAGENET: """
        Posterize:0.4:8 Rotate:0.6:9 | Solarize:0.6:5 AutoContrast:0.6:- |
        Equalize:0.8:- Equalize:0.6:- | Posterize:0.6:7 Posterize:0.6:6 |
        Equalize:0.4:- Solarize:0.2:4 | Equalize:0.4:- Rotate:0.8:8 |
        Solarize:0.6:3 Equalize:0.6:- | Posterize:0.8:5 Equalize:1.0:- |
        Rotate:0.2:3 Solarize:0.6:8 | Equalize:0.6:- Posterize:0.4:6 |
        Rotate:0.8:8 Color:0.4:0 | Rotate:0.4:9 Equalize:0.6:- |
        Equalize:0.0:- Equalize:0.8:- | Invert:0.6:- Equalize:1.0:- |
        Color:0.6:4 Contrast:1.0:8 | Rotate:0.8:8 Color:1.0:2 |
        Color:0.8:8 Solarize:0.8:7 | Sharpness:0.4:7 Invert:0.6:- |
        ShearX:0.6:5 Equalize:1.0:- | Color:0.4:0 Equalize:0.6:- |
        Equalize:0.4:- Solarize:0.2:4 | Solarize:0.6:5 AutoContrast:0.6:- |
        Invert:0.6:- Equalize:1.0:- | Color:0.6:4 Contrast:1.0:8 |
        Equalize:0.8:- Equalize:0.6:-""",
    AutoAugmentPolicy.CIFAR10: """
        Invert:0.1:- Contrast:0.2:6 | Rotate:0.7:2 TranslateX:0.3:9 |
        Sharpness:0.8:1 Sharpness:0.9:3 | ShearY:0.5:8 TranslateY:0.7:9 |
        AutoContrast:0.5:- Equalize:0.9:- | ShearY:0.2:7 Posterize:0.3:7 |
        Color:0.4:3 Brightness:0.6:7 | Sharpness:0.3:9 Brightness:0.7:9 |
        Equalize:0.6:- Equalize:0.5:- | Contrast:0.6:7 Sharpness:0.6:5 |
        Color:0.7:7 TranslateX:0.5:8 | Equalize:0.3:- AutoContrast:0.4:- |
        TranslateY:0.4:3 Sharpness:0.2:6 | Brightness:0.9:6 Color:0.2:8 |
        Solarize:0.5:2 Invert:0.0:- | Equalize:0.2:- AutoContrast:0.6:- |
        Equalize:0.2:- Equalize:0.6:- | Color:0.9:9 Equalize:0.6:- |
        AutoContrast:0.8:- Solarize:0.2:8 | Brightness:0.1:3 Color:0.7:0 |
        Solarize:0.4:5 AutoContrast:0.9:- | TranslateY:0.9:9 TranslateY:0.7:9 |
        AutoContrast:0.9:- Solarize:0.8:3 | Equalize:0.8:- Invert:0.1:- |
        TranslateY:0.7:9 AutoContrast:0.9:-""",
    AutoAugmentPolicy.SVHN: """
        ShearX:0.9:4 Invert:0.2:- | ShearY:0.9:8 Invert:0.7:- |
        Equalize:0.6:- Solarize:0.6:6 | Invert:0.9:- Equalize:0.6:- |
        Equalize:0.6:- Rotate:0.9:3 | ShearX:0.9:4 AutoContrast:0.8:- |
        ShearY:0.9:8 Invert:0.4:- | ShearY:0.9:5 Solarize:0.2:6 |
        Invert:0.9:- AutoContrast:0.8:- | Equalize:0.6:- Rotate:0.9:3 |
        ShearX:0.9:4 Solarize:0.3:3 | ShearY:0.8:8 Invert:0.7:- |
        Equalize:0.9:- TranslateY:0.6:6 | Invert:0.9:- Equalize:0.6:- |
        Contrast:0.3:3 Rotate:0.8:4 | Invert:0.8:- TranslateY:0.0:2 |
        ShearY:0.7:6 Solarize:0.4:8 | Invert:0.6:- Rotate:0.8:4 |
        ShearY:0.3:7 TranslateX:0.9:3 | ShearX:0.1:6 Invert:0.6:- |
        Solarize:0.7:2 TranslateY:0.6:7 | ShearY:0.8:4 Invert:0.8:- |
        ShearX:0.7:9 TranslateY:0.8:3 | ShearY:0.8:5 AutoContrast:0.7:- |
        ShearX:0.7:2 Invert:0.1:-""",
}


def _parse_policies(text: str) -> list[tuple[tuple[str, float, int | None], ...]]:
    subs = []
    for sub in text.split("|"):
        ops = []
        for op in sub.split():
            name, p, magnitude = op.split(":")
            ops.append((name, float(p), None if magnitude == "-" else int(magnitude)))
        subs.append(tuple(ops))
    return subs


def _posterize_bins(num_bins: int, start: int, span: int) -> Tensor:
    """``start`` down to ``start - span`` bits over ``num_bins`` bins (int32)."""
    return start - (tapegrad.arange(num_bins) / ((num_bins - 1) / span)).round().int()


def _linear_bins(num_bins: int, hi: float) -> tuple[Tensor, bool]:
    return tapegrad.linspace(0.0, hi, num_bins), True


def _op_space(num_bins: int, shear: float, translate_x: float, translate_y: float,
              rotate: float, enhance: float, posterize_bits: int
              ) -> dict[str, tuple[Tensor, bool]]:
    """The ops AutoAugment, RandAugment and TrivialAugmentWide share, each with its
    ``num_bins`` magnitudes (up to the given largest ones; posterize's bits go from 8 down to
    ``posterize_bits``) and whether its sign is drawn."""
    return {
        "ShearX": _linear_bins(num_bins, shear),
        "ShearY": _linear_bins(num_bins, shear),
        "TranslateX": _linear_bins(num_bins, translate_x),
        "TranslateY": _linear_bins(num_bins, translate_y),
        "Rotate": _linear_bins(num_bins, rotate),
        "Brightness": _linear_bins(num_bins, enhance),
        "Color": _linear_bins(num_bins, enhance),
        "Contrast": _linear_bins(num_bins, enhance),
        "Sharpness": _linear_bins(num_bins, enhance),
        "Posterize": (_posterize_bins(num_bins, 8, posterize_bits), False),
        "Solarize": (tapegrad.linspace(255.0, 0.0, num_bins), False),
        "AutoContrast": (tapegrad.tensor(0.0), False),
        "Equalize": (tapegrad.tensor(0.0), False),
    }


def _imagenet_op_space(num_bins: int, image_size: tuple[int, int]
                       ) -> dict[str, tuple[Tensor, bool]]:
    """``_op_space`` with AutoAugment's and RandAugment's largest magnitudes (translations of
    150/331 of the image)."""
    return _op_space(num_bins, 0.3, 150.0 / 331.0 * image_size[1],
                     150.0 / 331.0 * image_size[0], 30.0, 0.9, 4)


def _fill_for(img: Any, fill: Any) -> Any:
    """The fill as a list of floats, one per channel, for tensors (PIL takes it as it is)."""
    if isinstance(img, Tensor):
        channels = F.get_dimensions(img)[0]
        if isinstance(fill, (int, float)):
            return [float(fill)] * channels
        if fill is not None:
            return [float(f) for f in fill]
    return fill


def _set_interpolation_fill(transform: nn.Module, interpolation: InterpolationMode,
                            fill: list[float] | None) -> None:
    """Keep the ``interpolation`` and ``fill`` an automatic augmentation's geometric ops use."""
    transform.interpolation = interpolation
    transform.fill = fill


class AutoAugment(nn.Module):
    """AutoAugment: a random sub-policy of two ops, each applied with its probability at its
    magnitude (a random sign where the op has one). Tensors must be uint8."""

    def __init__(self, policy: AutoAugmentPolicy = AutoAugmentPolicy.IMAGENET,
                 interpolation: InterpolationMode = InterpolationMode.NEAREST,
                 fill: list[float] | None = None) -> None:
        super().__init__()
        self.policy = policy
        _set_interpolation_fill(self, interpolation, fill)
        self.policies = self._get_policies(policy)

    def _get_policies(self, policy: AutoAugmentPolicy) -> list:
        if policy not in _POLICIES:
            raise ValueError(f"The provided policy {policy} is not recognized.")
        return _parse_policies(_POLICIES[policy])

    def _augmentation_space(self, num_bins: int, image_size: tuple[int, int]
                            ) -> dict[str, tuple[Tensor, bool]]:
        return {**_imagenet_op_space(num_bins, image_size), "Invert": (tapegrad.tensor(0.0), False)}

    @staticmethod
    def get_params(transform_num: int) -> tuple[int, Tensor, Tensor]:
        """The sub-policy index, the two ops' probabilities and their signs."""
        policy_id = int(tapegrad.randint(transform_num, (1,)).item())
        probs = tapegrad.rand((2,))
        signs = tapegrad.randint(2, (2,))
        return policy_id, probs, signs

    def forward(self, img: Any) -> Any:
        fill = _fill_for(img, self.fill)
        _, height, width = F.get_dimensions(img)
        transform_id, probs, signs = self.get_params(len(self.policies))
        op_meta = self._augmentation_space(10, (height, width))
        for i, (op_name, p, magnitude_id) in enumerate(self.policies[transform_id]):
            if probs[i] <= p:
                magnitudes, signed = op_meta[op_name]
                magnitude = (float(magnitudes[magnitude_id].item()) if magnitude_id is not None
                             else 0.0)
                if signed and signs[i] == 0:
                    magnitude *= -1.0
                img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation,
                                fill=fill)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(policy={self.policy}, fill={self.fill})"


class RandAugment(nn.Module):
    """RandAugment: ``num_ops`` ops picked uniformly, all at the same ``magnitude`` bin of
    ``num_magnitude_bins``, with a random sign."""

    def __init__(self, num_ops: int = 2, magnitude: int = 9, num_magnitude_bins: int = 31,
                 interpolation: InterpolationMode = InterpolationMode.NEAREST,
                 fill: list[float] | None = None) -> None:
        super().__init__()
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins
        _set_interpolation_fill(self, interpolation, fill)

    def _augmentation_space(self, num_bins: int, image_size: tuple[int, int]
                            ) -> dict[str, tuple[Tensor, bool]]:
        return {"Identity": (tapegrad.tensor(0.0), False),
                **_imagenet_op_space(num_bins, image_size)}

    def forward(self, img: Any) -> Any:
        fill = _fill_for(img, self.fill)
        _, height, width = F.get_dimensions(img)
        op_meta = self._augmentation_space(self.num_magnitude_bins, (height, width))
        for _ in range(self.num_ops):
            op_index = int(tapegrad.randint(len(op_meta), (1,)).item())
            op_name = list(op_meta.keys())[op_index]
            magnitudes, signed = op_meta[op_name]
            magnitude = float(magnitudes[self.magnitude].item()) if magnitudes.ndim > 0 else 0.0
            if signed and tapegrad.randint(2, (1,)):
                magnitude *= -1.0
            img = _apply_op(img, op_name, magnitude, interpolation=self.interpolation,
                            fill=fill)
        return img

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(num_ops={self.num_ops}, magnitude={self.magnitude}"
                f", num_magnitude_bins={self.num_magnitude_bins}"
                f", interpolation={self.interpolation}, fill={self.fill})")


class TrivialAugmentWide(nn.Module):
    """TrivialAugment (wide ranges): one op picked uniformly at a uniformly drawn magnitude
    bin, with a random sign."""

    def __init__(self, num_magnitude_bins: int = 31,
                 interpolation: InterpolationMode = InterpolationMode.NEAREST,
                 fill: list[float] | None = None) -> None:
        super().__init__()
        self.num_magnitude_bins = num_magnitude_bins
        _set_interpolation_fill(self, interpolation, fill)

    def _augmentation_space(self, num_bins: int) -> dict[str, tuple[Tensor, bool]]:
        return {"Identity": (tapegrad.tensor(0.0), False),
                **_op_space(num_bins, 0.99, 32.0, 32.0, 135.0, 0.99, 6)}

    def forward(self, img: Any) -> Any:
        fill = _fill_for(img, self.fill)
        op_meta = self._augmentation_space(self.num_magnitude_bins)
        op_index = int(tapegrad.randint(len(op_meta), (1,)).item())
        op_name = list(op_meta.keys())[op_index]
        magnitudes, signed = op_meta[op_name]
        magnitude = (float(magnitudes[tapegrad.randint(len(magnitudes), (1,),
                                                       dtype=tapegrad.long)].item())
                     if magnitudes.ndim > 0 else 0.0)
        if signed and tapegrad.randint(2, (1,)):
            magnitude *= -1.0
        return _apply_op(img, op_name, magnitude, interpolation=self.interpolation, fill=fill)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(num_magnitude_bins={self.num_magnitude_bins}"
                f", interpolation={self.interpolation}, fill={self.fill})")


class AugMix(nn.Module):
    """AugMix: ``mixture_width`` chains of 1 to 3 (or ``chain_depth``) random ops at up to
    ``severity``, mixed with Dirichlet(``alpha``) weights, then blended with the original by a
    Beta-like Dirichlet pair. PIL images go through a uint8 tensor."""

    def __init__(self, severity: int = 3, mixture_width: int = 3, chain_depth: int = -1,
                 alpha: float = 1.0, all_ops: bool = True,
                 interpolation: InterpolationMode = InterpolationMode.BILINEAR,
                 fill: list[float] | None = None) -> None:
        super().__init__()
        _set_augmix_settings(self, severity, mixture_width, chain_depth, alpha, all_ops)
        _set_interpolation_fill(self, interpolation, fill)

    def _augmentation_space(self, num_bins: int, image_size: tuple[int, int]
                            ) -> dict[str, tuple[Tensor, bool]]:
        s = {
            "ShearX": _linear_bins(num_bins, 0.3),
            "ShearY": _linear_bins(num_bins, 0.3),
            "TranslateX": _linear_bins(num_bins, image_size[1] / 3.0),
            "TranslateY": _linear_bins(num_bins, image_size[0] / 3.0),
            "Rotate": _linear_bins(num_bins, 30.0),
            "Posterize": (_posterize_bins(num_bins, 4, 4), False),
            "Solarize": (tapegrad.linspace(255.0, 0.0, num_bins), False),
            "AutoContrast": (tapegrad.tensor(0.0), False),
            "Equalize": (tapegrad.tensor(0.0), False),
        }
        if self.all_ops:
            s.update({
                "Brightness": _linear_bins(num_bins, 0.9),
                "Color": _linear_bins(num_bins, 0.9),
                "Contrast": _linear_bins(num_bins, 0.9),
                "Sharpness": _linear_bins(num_bins, 0.9),
            })
        return s

    def _pil_to_tensor(self, img: Any) -> Tensor:
        return F.pil_to_tensor(img)

    def _tensor_to_pil(self, img: Tensor) -> Any:
        return F.to_pil_image(img)

    def _sample_dirichlet(self, params: Tensor) -> Tensor:
        return tapegrad._sample_dirichlet(params)

    def forward(self, orig_img: Any) -> Any:
        fill = self.fill
        _, height, width = F.get_dimensions(orig_img)
        if isinstance(orig_img, Tensor):
            img = orig_img
            fill = _fill_for(img, fill)
        else:
            img = self._pil_to_tensor(orig_img)
        op_meta = self._augmentation_space(self._PARAMETER_MAX, (height, width))
        orig_dims = list(img.shape)
        batch = img.view([1] * max(4 - img.ndim, 0) + orig_dims)
        batch_dims = [batch.size(0)] + [1] * (batch.ndim - 1)
        m, combined_weights = _mixing_weights(self._sample_dirichlet, self.alpha,
                                              self.mixture_width, batch)
        mix = m[:, 0].view(batch_dims) * batch
        for i in range(self.mixture_width):
            aug = batch
            depth = _chain_depth(self.chain_depth)
            for _ in range(depth):
                op_index = int(tapegrad.randint(len(op_meta), (1,)).item())
                op_name = list(op_meta.keys())[op_index]
                magnitudes, signed = op_meta[op_name]
                magnitude = (float(magnitudes[tapegrad.randint(self.severity, (1,),
                                                               dtype=tapegrad.long)].item())
                             if magnitudes.ndim > 0 else 0.0)
                if signed and tapegrad.randint(2, (1,)):
                    magnitude *= -1.0
                aug = _apply_op(aug, op_name, magnitude, interpolation=self.interpolation,
                                fill=fill)
            mix.add_(combined_weights[:, i].view(batch_dims) * aug)
        mix = mix.view(orig_dims).to(dtype=img.dtype)
        if not isinstance(orig_img, Tensor):
            return self._tensor_to_pil(mix)
        return mix

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(severity={self.severity}"
                f", mixture_width={self.mixture_width}, chain_depth={self.chain_depth}"
                f", alpha={self.alpha}, all_ops={self.all_ops}"
                f", interpolation={self.interpolation}, fill={self.fill})")
