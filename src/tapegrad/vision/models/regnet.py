"""RegNet (Radosavovic et al. 2020, "Designing Network Design Spaces"): ResNet-like networks
whose stage widths and depths come from a quantized linear rule (``w_0``, ``w_a``, ``w_m``);
RegNetY adds squeeze-and-excitation to RegNetX's bottleneck blocks."""

import math
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any

from ... import arange, diff, log, nn, tensor
from ... import divide as _divide
from ... import pow as _pow
from ... import round as _round
from ..._tensor import Tensor
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ..transforms._presets import ImageClassification
from ._api import WeightsEnum
from ._meta import (
    _IMAGENET_META,
    _MODIFIED_RECIPE_DOCS,
    _NEW_RECIPE,
    _NEW_RECIPE_FIXRES,
    _SIMPLE_RECIPE_DOCS,
)
from ._utils import (
    _builder,
    _classifier,
    _imagenet1k_weights,
    _make_divisible,
    _swag_e2e_weights,
    _swag_linear_weights,
)

__all__ = [
    "RegNet", "RegNet_Y_400MF_Weights", "RegNet_Y_800MF_Weights", "RegNet_Y_1_6GF_Weights",
    "RegNet_Y_3_2GF_Weights", "RegNet_Y_8GF_Weights", "RegNet_Y_16GF_Weights",
    "RegNet_Y_32GF_Weights", "RegNet_Y_128GF_Weights", "RegNet_X_400MF_Weights",
    "RegNet_X_800MF_Weights", "RegNet_X_1_6GF_Weights", "RegNet_X_3_2GF_Weights",
    "RegNet_X_8GF_Weights", "RegNet_X_16GF_Weights", "RegNet_X_32GF_Weights",
    "regnet_y_400mf", "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf", "regnet_y_8gf",
    "regnet_y_16gf", "regnet_y_32gf", "regnet_y_128gf", "regnet_x_400mf", "regnet_x_800mf",
    "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf", "regnet_x_16gf", "regnet_x_32gf",
]


class SimpleStemIN(Conv2dNormActivation):
    """The stem: a strided 3x3 convolution, normalization, activation."""

    def __init__(self, width_in: int, width_out: int, norm_layer: Callable[..., nn.Module],
                 activation_layer: Callable[..., nn.Module]) -> None:
        super().__init__(width_in, width_out, kernel_size=3, stride=2, norm_layer=norm_layer,
                         activation_layer=activation_layer)


class BottleneckTransform(nn.Sequential):
    """``a``: 1x1 to the bottleneck width, ``b``: grouped 3x3 (strided), ``se`` (RegNetY),
    ``c``: 1x1 to ``width_out`` without activation."""

    def __init__(self, width_in: int, width_out: int, stride: int,
                 norm_layer: Callable[..., nn.Module],
                 activation_layer: Callable[..., nn.Module], group_width: int,
                 bottleneck_multiplier: float, se_ratio: float | None) -> None:
        layers: OrderedDict[str, nn.Module] = OrderedDict()
        w_b = int(round(width_out * bottleneck_multiplier))
        g = w_b // group_width
        layers["a"] = Conv2dNormActivation(width_in, w_b, kernel_size=1, stride=1,
                                           norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        layers["b"] = Conv2dNormActivation(w_b, w_b, kernel_size=3, stride=stride, groups=g,
                                           norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        if se_ratio:
            # squeeze-and-excitation, its width a fraction of the block's input width
            width_se_out = int(round(se_ratio * width_in))
            layers["se"] = SqueezeExcitation(input_channels=w_b, squeeze_channels=width_se_out,
                                             activation=activation_layer)
        layers["c"] = Conv2dNormActivation(w_b, width_out, kernel_size=1, stride=1,
                                           norm_layer=norm_layer, activation_layer=None)
        super().__init__(layers)


class ResBottleneckBlock(nn.Module):
    """``activation(proj(x) + f(x))``, ``proj`` a 1x1 convolution where the shape changes."""

    def __init__(self, width_in: int, width_out: int, stride: int,
                 norm_layer: Callable[..., nn.Module],
                 activation_layer: Callable[..., nn.Module], group_width: int = 1,
                 bottleneck_multiplier: float = 1.0, se_ratio: float | None = None) -> None:
        super().__init__()
        self.proj = None
        should_proj = (width_in != width_out) or (stride != 1)
        if should_proj:
            self.proj = Conv2dNormActivation(width_in, width_out, kernel_size=1, stride=stride,
                                             norm_layer=norm_layer, activation_layer=None)
        self.f = BottleneckTransform(width_in, width_out, stride, norm_layer, activation_layer,
                                     group_width, bottleneck_multiplier, se_ratio)
        self.activation = activation_layer(inplace=True)

    def forward(self, x: Tensor) -> Tensor:
        if self.proj is not None:
            x = self.proj(x) + self.f(x)
        else:
            x = x + self.f(x)
        return self.activation(x)


class AnyStage(nn.Sequential):
    """``depth`` blocks named ``block{stage}-{i}``; the first changes width and resolution."""

    def __init__(self, width_in: int, width_out: int, stride: int, depth: int,
                 block_constructor: Callable[..., nn.Module],
                 norm_layer: Callable[..., nn.Module],
                 activation_layer: Callable[..., nn.Module], group_width: int,
                 bottleneck_multiplier: float, se_ratio: float | None = None,
                 stage_index: int = 0) -> None:
        super().__init__()
        for i in range(depth):
            block = block_constructor(width_in if i == 0 else width_out, width_out,
                                      stride if i == 0 else 1, norm_layer, activation_layer,
                                      group_width, bottleneck_multiplier, se_ratio)
            self.add_module(f"block{stage_index}-{i}", block)


class BlockParams:
    """The per-stage settings of a RegNet: depths, widths, group widths, bottleneck ratios,
    strides, and the squeeze-and-excitation ratio."""

    def __init__(self, depths: list[int], widths: list[int], group_widths: list[int],
                 bottleneck_multipliers: list[float], strides: list[int],
                 se_ratio: float | None = None) -> None:
        self.depths = depths
        self.widths = widths
        self.group_widths = group_widths
        self.bottleneck_multipliers = bottleneck_multipliers
        self.strides = strides
        self.se_ratio = se_ratio

    @classmethod
    def from_init_params(cls, depth: int, w_0: int, w_a: float, w_m: float, group_width: int,
                         bottleneck_multiplier: float = 1.0, se_ratio: float | None = None,
                         **kwargs: Any) -> "BlockParams":
        """The stages of the design-space rule: block j has the continuous width
        ``w_0 + w_a * j``, quantized to ``w_0 * w_m ** round(log_{w_m}(width / w_0))`` rounded
        to a multiple of 8; consecutive blocks of equal width form a stage."""
        QUANT = 8
        STRIDE = 2
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
            raise ValueError("Invalid RegNet settings")
        # in float32 tensors, as torchvision computes it (the rounding decides the widths)
        widths_cont = arange(depth) * w_a + w_0
        block_capacity = _round(log(widths_cont / w_0) / math.log(w_m))
        block_widths = (_round(_divide(w_0 * _pow(w_m, block_capacity), QUANT)) * QUANT).int()
        block_widths = block_widths.tolist()
        num_stages = len(set(block_widths))

        # a stage starts where the width changes
        split_helper = zip(block_widths + [0], [0] + block_widths, block_widths + [0],
                           [0] + block_widths, strict=True)
        splits = [w != wp or r != rp for w, wp, r, rp in split_helper]
        stage_widths = [w for w, t in zip(block_widths, splits[:-1], strict=True) if t]
        stage_depths = diff(tensor([d for d, t in enumerate(splits) if t])).int().tolist()

        strides = [STRIDE] * num_stages
        bottleneck_multipliers = [bottleneck_multiplier] * num_stages
        group_widths = [group_width] * num_stages
        stage_widths, group_widths = cls._adjust_widths_groups_compatibilty(
            stage_widths, bottleneck_multipliers, group_widths)
        return cls(depths=stage_depths, widths=stage_widths, group_widths=group_widths,
                   bottleneck_multipliers=bottleneck_multipliers, strides=strides,
                   se_ratio=se_ratio)

    def _get_expanded_params(self) -> Any:
        return zip(self.widths, self.strides, self.depths, self.group_widths,
                   self.bottleneck_multipliers, strict=True)

    @staticmethod
    def _adjust_widths_groups_compatibilty(stage_widths: list[int], bottleneck_ratios: list[float],
                                           group_widths: list[int]) -> tuple[list[int], list[int]]:
        """Make each stage's bottleneck width a multiple of its group width (the groups of the
        3x3 convolution must divide it), shrinking a group width larger than the bottleneck."""
        widths = [int(w * b) for w, b in zip(stage_widths, bottleneck_ratios, strict=True)]
        group_widths_min = [min(g, w_bot) for g, w_bot in zip(group_widths, widths, strict=True)]
        ws_bot = [_make_divisible(w_bot, g)
                  for w_bot, g in zip(widths, group_widths_min, strict=True)]
        stage_widths = [int(w_bot / b) for w_bot, b in zip(ws_bot, bottleneck_ratios, strict=True)]
        return stage_widths, group_widths_min


class RegNet(nn.Module):
    """The network: a stem, ``trunk_output`` (one ``AnyStage`` per stage), global average
    pooling and a linear classifier."""

    def __init__(self, block_params: BlockParams, num_classes: int = 1000,
                 stem_width: int = 32, stem_type: Callable[..., nn.Module] | None = None,
                 block_type: Callable[..., nn.Module] | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None,
                 activation: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        if stem_type is None:
            stem_type = SimpleStemIN
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if block_type is None:
            block_type = ResBottleneckBlock
        if activation is None:
            activation = nn.ReLU

        self.stem = stem_type(3, stem_width, norm_layer, activation)
        current_width = stem_width
        blocks = []
        for i, (width_out, stride, depth, group_width, bottleneck_multiplier) in enumerate(
                block_params._get_expanded_params()):
            blocks.append((f"block{i + 1}", AnyStage(
                current_width, width_out, stride, depth, block_type, norm_layer, activation,
                group_width, bottleneck_multiplier, block_params.se_ratio,
                stage_index=i + 1)))
            current_width = width_out
        self.trunk_output = nn.Sequential(OrderedDict(blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_features=current_width, out_features=num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x: Tensor) -> Tensor:
        x = self.avgpool(self.trunk_output(self.stem(x)))
        return self.fc(x.flatten(start_dim=1))


def _regnet(block_params: BlockParams, weights: WeightsEnum | None, progress: bool,
            **kwargs: Any) -> RegNet:
    norm_layer = kwargs.pop("norm_layer", partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
    return _classifier(RegNet, weights, progress, block_params, norm_layer=norm_layer, **kwargs)


_SMALL_MODELS_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#small-models"  # noqa: E501
_MEDIUM_MODELS_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#medium-models"  # noqa: E501
_LARGE_MODELS_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#large-models"  # noqa: E501


class RegNet_Y_400MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_y_400mf-c65dace8.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=4344144, recipe=_SMALL_MODELS_RECIPE, acc=(74.046, 91.716), _ops=0.402,
        _file_size=16.806, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_y_400mf-e6988f5f.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=4344144, recipe=_NEW_RECIPE, acc=(75.804, 92.742), _ops=0.402,
        _file_size=16.806, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_800MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_y_800mf-1b27b58c.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=6432512, recipe=_SMALL_MODELS_RECIPE, acc=(76.42, 93.136), _ops=0.834,
        _file_size=24.774, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_y_800mf-58fc7688.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=6432512, recipe=_NEW_RECIPE, acc=(78.828, 94.502), _ops=0.834,
        _file_size=24.774, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_1_6GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_y_1_6gf-b11a554e.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=11202430, recipe=_SMALL_MODELS_RECIPE, acc=(77.95, 93.966), _ops=1.612,
        _file_size=43.152, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_y_1_6gf-0d7bc02a.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=11202430, recipe=_NEW_RECIPE, acc=(80.876, 95.444), _ops=1.612,
        _file_size=43.152, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_3_2GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_y_3_2gf-b5a9779c.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=19436338, recipe=_MEDIUM_MODELS_RECIPE, acc=(78.948, 94.576), _ops=3.176,
        _file_size=74.567, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_y_3_2gf-9180c971.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=19436338, recipe=_NEW_RECIPE, acc=(81.982, 95.972), _ops=3.176,
        _file_size=74.567, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_8GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_y_8gf-d0d0e4a8.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=39381472, recipe=_MEDIUM_MODELS_RECIPE, acc=(80.032, 95.048), _ops=8.473,
        _file_size=150.701, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_y_8gf-dc2b1b54.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=39381472, recipe=_NEW_RECIPE, acc=(82.828, 96.33), _ops=8.473,
        _file_size=150.701, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_16GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_y_16gf-9e6ed7dd.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=83590140, recipe=_LARGE_MODELS_RECIPE, acc=(80.424, 95.24), _ops=15.912,
        _file_size=319.49, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_y_16gf-3e4a00f9.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=83590140, recipe=_NEW_RECIPE, acc=(82.886, 96.328), _ops=15.912,
        _file_size=319.49, _docs=_MODIFIED_RECIPE_DOCS)
    IMAGENET1K_SWAG_E2E_V1 = _swag_e2e_weights(
        "regnet_y_16gf_swag-43afe44d.pth", 384, _IMAGENET_META, num_params=83590140,
        acc=(86.012, 98.054), _ops=46.735, _file_size=319.49)
    IMAGENET1K_SWAG_LINEAR_V1 = _swag_linear_weights(
        "regnet_y_16gf_lc_swag-f3ec0043.pth", _IMAGENET_META, num_params=83590140,
        acc=(83.976, 97.244), _ops=15.912, _file_size=319.49)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_32GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_y_32gf-4dee3f7a.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=145046770, recipe=_LARGE_MODELS_RECIPE, acc=(80.878, 95.34), _ops=32.28,
        _file_size=554.076, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_y_32gf-8db6d4b5.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=145046770, recipe=_NEW_RECIPE, acc=(83.368, 96.498), _ops=32.28,
        _file_size=554.076, _docs=_MODIFIED_RECIPE_DOCS)
    IMAGENET1K_SWAG_E2E_V1 = _swag_e2e_weights(
        "regnet_y_32gf_swag-04fdfa75.pth", 384, _IMAGENET_META, num_params=145046770,
        acc=(86.838, 98.362), _ops=94.826, _file_size=554.076)
    IMAGENET1K_SWAG_LINEAR_V1 = _swag_linear_weights(
        "regnet_y_32gf_lc_swag-e1583746.pth", _IMAGENET_META, num_params=145046770,
        acc=(84.622, 97.48), _ops=32.28, _file_size=554.076)
    DEFAULT = IMAGENET1K_V2


class RegNet_Y_128GF_Weights(WeightsEnum):
    IMAGENET1K_SWAG_E2E_V1 = _swag_e2e_weights(
        "regnet_y_128gf_swag-c8ce3e52.pth", 384, _IMAGENET_META, num_params=644812894,
        acc=(88.228, 98.682), _ops=374.57, _file_size=2461.564)
    IMAGENET1K_SWAG_LINEAR_V1 = _swag_linear_weights(
        "regnet_y_128gf_lc_swag-cbe8ce12.pth", _IMAGENET_META, num_params=644812894,
        acc=(86.068, 97.844), _ops=127.518, _file_size=2461.564)
    DEFAULT = IMAGENET1K_SWAG_E2E_V1


class RegNet_X_400MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_x_400mf-adf1edd5.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=5495976, recipe=_SMALL_MODELS_RECIPE, acc=(72.834, 90.95), _ops=0.414,
        _file_size=21.258, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_x_400mf-62229a5f.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=5495976, recipe=_NEW_RECIPE_FIXRES, acc=(74.864, 92.322),
        _ops=0.414, _file_size=21.257, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_800MF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_x_800mf-ad17e45c.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=7259656, recipe=_SMALL_MODELS_RECIPE, acc=(75.212, 92.348), _ops=0.8,
        _file_size=27.945, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_x_800mf-94a99ebd.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=7259656, recipe=_NEW_RECIPE_FIXRES, acc=(77.522, 93.826),
        _ops=0.8, _file_size=27.945, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_1_6GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_x_1_6gf-e3633e7f.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=9190136, recipe=_SMALL_MODELS_RECIPE, acc=(77.04, 93.44), _ops=1.603,
        _file_size=35.339, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_x_1_6gf-a12f2b72.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=9190136, recipe=_NEW_RECIPE_FIXRES, acc=(79.668, 94.922),
        _ops=1.603, _file_size=35.339, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_3_2GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_x_3_2gf-f342aeae.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=15296552, recipe=_MEDIUM_MODELS_RECIPE, acc=(78.364, 93.992), _ops=3.177,
        _file_size=58.756, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_x_3_2gf-7071aa85.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=15296552, recipe=_NEW_RECIPE, acc=(81.196, 95.43), _ops=3.177,
        _file_size=58.756, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_8GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_x_8gf-03ceed89.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=39572648, recipe=_MEDIUM_MODELS_RECIPE, acc=(79.344, 94.686), _ops=7.995,
        _file_size=151.456, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_x_8gf-2b70d774.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=39572648, recipe=_NEW_RECIPE, acc=(81.682, 95.678), _ops=7.995,
        _file_size=151.456, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_16GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_x_16gf-2007eb11.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=54278536, recipe=_MEDIUM_MODELS_RECIPE, acc=(80.058, 94.944), _ops=15.941,
        _file_size=207.627, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_x_16gf-ba3796d7.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=54278536, recipe=_NEW_RECIPE, acc=(82.716, 96.196), _ops=15.941,
        _file_size=207.627, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class RegNet_X_32GF_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "regnet_x_32gf-9d47f8d0.pth", partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=107811560, recipe=_LARGE_MODELS_RECIPE, acc=(80.622, 95.248), _ops=31.736,
        _file_size=412.039, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "regnet_x_32gf-6eb8fdc6.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=107811560, recipe=_NEW_RECIPE, acc=(83.014, 96.288), _ops=31.736,
        _file_size=412.039, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


def _build(design: dict[str, Any], weights: WeightsEnum | None, progress: bool, /,
           **kwargs: Any) -> RegNet:
    """The RegNet of ``design`` (``BlockParams.from_init_params``' depth and widths)."""
    params = BlockParams.from_init_params(**design, **kwargs)
    return _regnet(params, weights, progress, **kwargs)
regnet_y_400mf = _builder("regnet_y_400mf", RegNet_Y_400MF_Weights, RegNet,
                          _build, dict(depth=16, w_0=48, w_a=27.89, w_m=2.09,
                                       group_width=8, se_ratio=0.25),
                          doc='RegNetY-400MF ("Designing Network Design Spaces"); ``kwargs`` go '
                              "to ``RegNet``.")
regnet_y_800mf = _builder("regnet_y_800mf", RegNet_Y_800MF_Weights, RegNet,
                          _build, dict(depth=14, w_0=56, w_a=38.84, w_m=2.4,
                                       group_width=16, se_ratio=0.25),
                          doc="RegNetY-800MF.")
regnet_y_1_6gf = _builder("regnet_y_1_6gf", RegNet_Y_1_6GF_Weights, RegNet,
                          _build, dict(depth=27, w_0=48, w_a=20.71, w_m=2.65,
                                       group_width=24, se_ratio=0.25),
                          doc="RegNetY-1.6GF.")
regnet_y_3_2gf = _builder("regnet_y_3_2gf", RegNet_Y_3_2GF_Weights, RegNet,
                          _build, dict(depth=21, w_0=80, w_a=42.63, w_m=2.66,
                                       group_width=24, se_ratio=0.25),
                          doc="RegNetY-3.2GF.")
regnet_y_8gf = _builder("regnet_y_8gf", RegNet_Y_8GF_Weights, RegNet,
                        _build, dict(depth=17, w_0=192, w_a=76.82, w_m=2.19,
                                     group_width=56, se_ratio=0.25),
                        doc="RegNetY-8GF.")
regnet_y_16gf = _builder("regnet_y_16gf", RegNet_Y_16GF_Weights, RegNet,
                         _build, dict(depth=18, w_0=200, w_a=106.23, w_m=2.48,
                                      group_width=112, se_ratio=0.25),
                         doc="RegNetY-16GF.")
regnet_y_32gf = _builder("regnet_y_32gf", RegNet_Y_32GF_Weights, RegNet,
                         _build, dict(depth=20, w_0=232, w_a=115.89, w_m=2.53,
                                      group_width=232, se_ratio=0.25),
                         doc="RegNetY-32GF.")
regnet_y_128gf = _builder("regnet_y_128gf", RegNet_Y_128GF_Weights, RegNet,
                          _build, dict(depth=27, w_0=456, w_a=160.83, w_m=2.52,
                                       group_width=264, se_ratio=0.25),
                          doc="RegNetY-128GF (its weights come from SWAG only, so "
                              "``pretrained=True`` has none).", legacy=None)
regnet_x_400mf = _builder("regnet_x_400mf", RegNet_X_400MF_Weights, RegNet,
                          _build, dict(depth=22, w_0=24, w_a=24.48, w_m=2.54, group_width=16),
                          doc="RegNetX-400MF.")
regnet_x_800mf = _builder("regnet_x_800mf", RegNet_X_800MF_Weights, RegNet,
                          _build, dict(depth=16, w_0=56, w_a=35.73, w_m=2.28, group_width=16),
                          doc="RegNetX-800MF.")
regnet_x_1_6gf = _builder("regnet_x_1_6gf", RegNet_X_1_6GF_Weights, RegNet,
                          _build, dict(depth=18, w_0=80, w_a=34.01, w_m=2.25, group_width=24),
                          doc="RegNetX-1.6GF.")
regnet_x_3_2gf = _builder("regnet_x_3_2gf", RegNet_X_3_2GF_Weights, RegNet,
                          _build, dict(depth=25, w_0=88, w_a=26.31, w_m=2.25, group_width=48),
                          doc="RegNetX-3.2GF.")
regnet_x_8gf = _builder("regnet_x_8gf", RegNet_X_8GF_Weights, RegNet,
                        _build, dict(depth=23, w_0=80, w_a=49.56, w_m=2.88, group_width=120),
                        doc="RegNetX-8GF.")
regnet_x_16gf = _builder("regnet_x_16gf", RegNet_X_16GF_Weights, RegNet,
                         _build, dict(depth=22, w_0=216, w_a=55.59, w_m=2.1, group_width=128),
                         doc="RegNetX-16GF.")
regnet_x_32gf = _builder("regnet_x_32gf", RegNet_X_32GF_Weights, RegNet,
                         _build, dict(depth=23, w_0=320, w_a=69.86, w_m=2.0, group_width=168),
                         doc="RegNetX-32GF.")
