"""EfficientNet (Tan and Le 2019) and EfficientNetV2 (Tan and Le 2021).

V1 scales one base network (B0: MobileNetV3-like MBConv blocks with squeeze-and-excitation and
SiLU) in width and depth together (B1-B7). V2 starts with Fused-MBConv blocks (the expansion
and depthwise convolutions merged into one 3x3 convolution). Residual branches use stochastic
depth, its probability growing linearly with the block's index."""

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from ... import flatten, nn
from ..._tensor import Tensor
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ..ops.stochastic_depth import StochasticDepth
from ..transforms._presets import ImageClassification, InterpolationMode
from ._api import WeightsEnum
from ._meta import _IMAGENET_CATEGORIES, _MODIFIED_RECIPE_DOCS, _PORTED_DOCS
from ._utils import (
    _builder,
    _check_stage_settings,
    _classifier,
    _imagenet1k_weights,
    _init_weights,
    _make_divisible,
)

__all__ = [
    "EfficientNet", "EfficientNet_B0_Weights", "EfficientNet_B1_Weights",
    "EfficientNet_B2_Weights", "EfficientNet_B3_Weights", "EfficientNet_B4_Weights",
    "EfficientNet_B5_Weights", "EfficientNet_B6_Weights", "EfficientNet_B7_Weights",
    "EfficientNet_V2_S_Weights", "EfficientNet_V2_M_Weights", "EfficientNet_V2_L_Weights",
    "efficientnet_b0", "efficientnet_b1", "efficientnet_b2", "efficientnet_b3",
    "efficientnet_b4", "efficientnet_b5", "efficientnet_b6", "efficientnet_b7",
    "efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l",
]


@dataclass
class _MBConvConfig:
    """One stage: its blocks' expansion, kernel, first stride, channels in and out, count, and
    block class."""

    expand_ratio: float
    kernel: int
    stride: int
    input_channels: int
    out_channels: int
    num_layers: int
    block: Callable[..., nn.Module]

    @staticmethod
    def adjust_channels(channels: int, width_mult: float, min_value: int | None = None) -> int:
        return _make_divisible(channels * width_mult, 8, min_value)


class MBConvConfig(_MBConvConfig):
    """A stage of MBConv blocks, its channels scaled by ``width_mult`` and its block count by
    ``depth_mult`` (rounded up)."""

    def __init__(self, expand_ratio: float, kernel: int, stride: int, input_channels: int,
                 out_channels: int, num_layers: int, width_mult: float = 1.0,
                 depth_mult: float = 1.0, block: Callable[..., nn.Module] | None = None) -> None:
        input_channels = self.adjust_channels(input_channels, width_mult)
        out_channels = self.adjust_channels(out_channels, width_mult)
        num_layers = self.adjust_depth(num_layers, depth_mult)
        if block is None:
            block = MBConv
        super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                         block)

    @staticmethod
    def adjust_depth(num_layers: int, depth_mult: float) -> int:
        return int(math.ceil(num_layers * depth_mult))


class FusedMBConvConfig(_MBConvConfig):
    """A stage of Fused-MBConv blocks (EfficientNetV2)."""

    def __init__(self, expand_ratio: float, kernel: int, stride: int, input_channels: int,
                 out_channels: int, num_layers: int,
                 block: Callable[..., nn.Module] | None = None) -> None:
        if block is None:
            block = FusedMBConv
        super().__init__(expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                         block)


class MBConv(nn.Module):
    """1x1 expansion (SiLU; skipped at ratio 1), depthwise ``kernel`` (SiLU), squeeze-and-excite,
    1x1 projection; residual with stochastic depth at stride 1 and equal channels."""

    def __init__(self, cnf: MBConvConfig, stochastic_depth_prob: float,
                 norm_layer: Callable[..., nn.Module],
                 se_layer: Callable[..., nn.Module] = SqueezeExcitation) -> None:
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        layers: list[nn.Module] = []
        activation_layer = nn.SiLU
        expanded_channels = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded_channels,
                                               kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=activation_layer))
        layers.append(Conv2dNormActivation(expanded_channels, expanded_channels,
                                           kernel_size=cnf.kernel, stride=cnf.stride,
                                           groups=expanded_channels, norm_layer=norm_layer,
                                           activation_layer=activation_layer))
        squeeze_channels = max(1, cnf.input_channels // 4)
        layers.append(se_layer(expanded_channels, squeeze_channels,
                               activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded_channels, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input: Tensor) -> Tensor:
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result += input
        return result


class FusedMBConv(nn.Module):
    """A ``kernel`` x ``kernel`` convolution expanding the channels (SiLU), then a 1x1
    projection; or, at ratio 1, one convolution straight to the output channels."""

    def __init__(self, cnf: FusedMBConvConfig, stochastic_depth_prob: float,
                 norm_layer: Callable[..., nn.Module]) -> None:
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        layers: list[nn.Module] = []
        activation_layer = nn.SiLU
        expanded_channels = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        if expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded_channels,
                                               kernel_size=cnf.kernel, stride=cnf.stride,
                                               norm_layer=norm_layer,
                                               activation_layer=activation_layer))
            layers.append(Conv2dNormActivation(expanded_channels, cnf.out_channels,
                                               kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=None))
        else:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.out_channels,
                                               kernel_size=cnf.kernel, stride=cnf.stride,
                                               norm_layer=norm_layer,
                                               activation_layer=activation_layer))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input: Tensor) -> Tensor:
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result += input
        return result


class EfficientNet(nn.Module):
    """The network: a SiLU stem, one Sequential per stage, a 1x1 convolution to
    ``last_channel`` (default four times the last stage's channels), pooling, dropout and a
    linear classifier. Block i of n drops its branch with probability
    ``stochastic_depth_prob * i / n``."""

    def __init__(self, inverted_residual_setting: Sequence[MBConvConfig | FusedMBConvConfig],
                 dropout: float, stochastic_depth_prob: float = 0.2, num_classes: int = 1000,
                 norm_layer: Callable[..., nn.Module] | None = None,
                 last_channel: int | None = None) -> None:
        super().__init__()
        _check_stage_settings(inverted_residual_setting, _MBConvConfig,
                              "inverted_residual_setting", "MBConvConfig")
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d

        layers: list[nn.Module] = []
        firstconv_output_channels = inverted_residual_setting[0].input_channels
        layers.append(Conv2dNormActivation(3, firstconv_output_channels, kernel_size=3, stride=2,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        total_stage_blocks = sum(cnf.num_layers for cnf in inverted_residual_setting)
        stage_block_id = 0
        for cnf in inverted_residual_setting:
            stage: list[nn.Module] = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:  # the stage's later blocks keep its width and resolution
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                sd_prob = stochastic_depth_prob * float(stage_block_id) / total_stage_blocks
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
        lastconv_input_channels = inverted_residual_setting[-1].out_channels
        lastconv_output_channels = (last_channel if last_channel is not None
                                    else 4 * lastconv_input_channels)
        layers.append(Conv2dNormActivation(lastconv_input_channels, lastconv_output_channels,
                                           kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(lastconv_output_channels, num_classes))

        _init_weights(self, linear_std=None)

    def _forward_impl(self, x: Tensor) -> Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


def _efficientnet(inverted_residual_setting: Sequence[MBConvConfig | FusedMBConvConfig],
                  dropout: float, last_channel: int | None, weights: WeightsEnum | None,
                  progress: bool, **kwargs: Any) -> EfficientNet:
    return _classifier(EfficientNet, weights, progress, inverted_residual_setting, dropout,
                       last_channel=last_channel, **kwargs)


def _efficientnet_conf(arch: str, **kwargs: Any) -> tuple[
        Sequence[MBConvConfig | FusedMBConvConfig], int | None]:
    """The stages of ``arch`` (B-series: scaled by ``width_mult`` and ``depth_mult``) and its
    last convolution's width (None: four times the last stage's)."""
    inverted_residual_setting: Sequence[MBConvConfig | FusedMBConvConfig]
    if arch.startswith("efficientnet_b"):
        bneck_conf = partial(MBConvConfig, width_mult=kwargs.pop("width_mult"),
                             depth_mult=kwargs.pop("depth_mult"))
        inverted_residual_setting = [
            # expansion, kernel, stride, in, out, layers
            bneck_conf(1, 3, 1, 32, 16, 1),
            bneck_conf(6, 3, 2, 16, 24, 2),
            bneck_conf(6, 5, 2, 24, 40, 2),
            bneck_conf(6, 3, 2, 40, 80, 3),
            bneck_conf(6, 5, 1, 80, 112, 3),
            bneck_conf(6, 5, 2, 112, 192, 4),
            bneck_conf(6, 3, 1, 192, 320, 1),
        ]
        last_channel = None
    elif arch.startswith("efficientnet_v2_s"):
        inverted_residual_setting = [
            FusedMBConvConfig(1, 3, 1, 24, 24, 2),
            FusedMBConvConfig(4, 3, 2, 24, 48, 4),
            FusedMBConvConfig(4, 3, 2, 48, 64, 4),
            MBConvConfig(4, 3, 2, 64, 128, 6),
            MBConvConfig(6, 3, 1, 128, 160, 9),
            MBConvConfig(6, 3, 2, 160, 256, 15),
        ]
        last_channel = 1280
    elif arch.startswith("efficientnet_v2_m"):
        inverted_residual_setting = [
            FusedMBConvConfig(1, 3, 1, 24, 24, 3),
            FusedMBConvConfig(4, 3, 2, 24, 48, 5),
            FusedMBConvConfig(4, 3, 2, 48, 80, 5),
            MBConvConfig(4, 3, 2, 80, 160, 7),
            MBConvConfig(6, 3, 1, 160, 176, 14),
            MBConvConfig(6, 3, 2, 176, 304, 18),
            MBConvConfig(6, 3, 1, 304, 512, 5),
        ]
        last_channel = 1280
    elif arch.startswith("efficientnet_v2_l"):
        inverted_residual_setting = [
            FusedMBConvConfig(1, 3, 1, 32, 32, 4),
            FusedMBConvConfig(4, 3, 2, 32, 64, 7),
            FusedMBConvConfig(4, 3, 2, 64, 96, 7),
            MBConvConfig(4, 3, 2, 96, 192, 10),
            MBConvConfig(6, 3, 1, 192, 224, 19),
            MBConvConfig(6, 3, 2, 224, 384, 25),
            MBConvConfig(6, 3, 1, 384, 640, 7),
        ]
        last_channel = 1280
    else:
        raise ValueError(f"Unsupported model type {arch}")
    return inverted_residual_setting, last_channel


_COMMON_META: dict[str, Any] = {
    "categories": _IMAGENET_CATEGORIES,
}

_V1_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#efficientnet-v1"
_V2_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#efficientnet-v2"


class EfficientNet_B0_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_b0_rwightman-7f5810bc.pth",
        partial(ImageClassification, crop_size=224, resize_size=256,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, min_size=(1, 1), recipe=_V1_RECIPE, num_params=5288548, acc=(77.692, 93.532),
        _ops=0.386, _file_size=20.451, _docs=_PORTED_DOCS)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B1_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_b1_rwightman-bac287d4.pth",
        partial(ImageClassification, crop_size=240, resize_size=256,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, min_size=(1, 1), recipe=_V1_RECIPE, num_params=7794184, acc=(78.642, 94.186),
        _ops=0.687, _file_size=30.134, _docs=_PORTED_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "efficientnet_b1-c27df63c.pth",
        partial(ImageClassification, crop_size=240, resize_size=255,
                interpolation=InterpolationMode.BILINEAR),
        _COMMON_META, min_size=(1, 1),
        recipe="https://github.com/pytorch/vision/issues/3995#new-recipe-with-lr-wd-crop-tuning",
        num_params=7794184, acc=(79.838, 94.934), _ops=0.687, _file_size=30.136,
        _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


class EfficientNet_B2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_b2_rwightman-c35c1473.pth",
        partial(ImageClassification, crop_size=288, resize_size=288,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, min_size=(1, 1), recipe=_V1_RECIPE, num_params=9109994, acc=(80.608, 95.31),
        _ops=1.088, _file_size=35.174, _docs=_PORTED_DOCS)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B3_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_b3_rwightman-b3899882.pth",
        partial(ImageClassification, crop_size=300, resize_size=320,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, min_size=(1, 1), recipe=_V1_RECIPE, num_params=12233232, acc=(82.008, 96.054),
        _ops=1.827, _file_size=47.184, _docs=_PORTED_DOCS)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B4_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_b4_rwightman-23ab8bcd.pth",
        partial(ImageClassification, crop_size=380, resize_size=384,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, min_size=(1, 1), recipe=_V1_RECIPE, num_params=19341616, acc=(83.384, 96.594),
        _ops=4.394, _file_size=74.489, _docs=_PORTED_DOCS)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B5_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_b5_lukemelas-1a07897c.pth",
        partial(ImageClassification, crop_size=456, resize_size=456,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, min_size=(1, 1), recipe=_V1_RECIPE, num_params=30389784, acc=(83.444, 96.628),
        _ops=10.266, _file_size=116.864, _docs=_PORTED_DOCS)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B6_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_b6_lukemelas-24a108a5.pth",
        partial(ImageClassification, crop_size=528, resize_size=528,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, min_size=(1, 1), recipe=_V1_RECIPE, num_params=43040704, acc=(84.008, 96.916),
        _ops=19.068, _file_size=165.362, _docs=_PORTED_DOCS)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_B7_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_b7_lukemelas-c5b4e57e.pth",
        partial(ImageClassification, crop_size=600, resize_size=600,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, min_size=(1, 1), recipe=_V1_RECIPE, num_params=66347960, acc=(84.122, 96.908),
        _ops=37.746, _file_size=254.675, _docs=_PORTED_DOCS)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_S_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_v2_s-dd5fe13b.pth",
        partial(ImageClassification, crop_size=384, resize_size=384,
                interpolation=InterpolationMode.BILINEAR),
        _COMMON_META, min_size=(33, 33), recipe=_V2_RECIPE, num_params=21458488,
        acc=(84.228, 96.878), _ops=8.366, _file_size=82.704, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_M_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_v2_m-dc08266a.pth",
        partial(ImageClassification, crop_size=480, resize_size=480,
                interpolation=InterpolationMode.BILINEAR),
        _COMMON_META, min_size=(33, 33), recipe=_V2_RECIPE, num_params=54139356,
        acc=(85.112, 97.156), _ops=24.582, _file_size=208.01, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V1


class EfficientNet_V2_L_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "efficientnet_v2_l-59c71312.pth",
        partial(ImageClassification, crop_size=480, resize_size=480,
                interpolation=InterpolationMode.BICUBIC, mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5)),
        _COMMON_META, min_size=(33, 33), recipe=_V2_RECIPE, num_params=118515272,
        acc=(85.808, 97.788), _ops=56.08, _file_size=454.573, _docs=_PORTED_DOCS)
    DEFAULT = IMAGENET1K_V1


def _b_series(arch: str, width_mult: float, depth_mult: float, default_dropout: float,
              ported_norm: bool, weights: WeightsEnum | None, progress: bool, /,
              **kwargs: Any) -> EfficientNet:
    """A B-series EfficientNet; ``ported_norm``: batch norm with eps 0.001 and momentum 0.01, as
    the weights ported for B5 to B7."""
    setting, last_channel = _efficientnet_conf(arch, width_mult=width_mult, depth_mult=depth_mult)
    extra = {"norm_layer": partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)} if ported_norm else {}
    return _efficientnet(setting, kwargs.pop("dropout", default_dropout), last_channel, weights,
                         progress, **extra, **kwargs)


def _v2_series(arch: str, default_dropout: float, weights: WeightsEnum | None, progress: bool, /,
               **kwargs: Any) -> EfficientNet:
    setting, last_channel = _efficientnet_conf(arch)
    return _efficientnet(setting, kwargs.pop("dropout", default_dropout), last_channel, weights,
                         progress, norm_layer=partial(nn.BatchNorm2d, eps=1e-03), **kwargs)
efficientnet_b0 = _builder("efficientnet_b0", EfficientNet_B0_Weights, EfficientNet,
                           _b_series, "efficientnet_b0", 1.0, 1.0, 0.2, False,
                           doc='EfficientNet B0 ("EfficientNet: Rethinking Model Scaling for '
                               'Convolutional Neural Networks"); ``kwargs`` go to '
                               "``EfficientNet``.")
efficientnet_b1 = _builder("efficientnet_b1", EfficientNet_B1_Weights, EfficientNet,
                           _b_series, "efficientnet_b1", 1.0, 1.1, 0.2, False,
                           doc="EfficientNet B1.")
efficientnet_b2 = _builder("efficientnet_b2", EfficientNet_B2_Weights, EfficientNet,
                           _b_series, "efficientnet_b2", 1.1, 1.2, 0.3, False,
                           doc="EfficientNet B2.")
efficientnet_b3 = _builder("efficientnet_b3", EfficientNet_B3_Weights, EfficientNet,
                           _b_series, "efficientnet_b3", 1.2, 1.4, 0.3, False,
                           doc="EfficientNet B3.")
efficientnet_b4 = _builder("efficientnet_b4", EfficientNet_B4_Weights, EfficientNet,
                           _b_series, "efficientnet_b4", 1.4, 1.8, 0.4, False,
                           doc="EfficientNet B4.")
efficientnet_b5 = _builder("efficientnet_b5", EfficientNet_B5_Weights, EfficientNet,
                           _b_series, "efficientnet_b5", 1.6, 2.2, 0.4, True,
                           doc="EfficientNet B5 (batch norm with eps 0.001 and momentum 0.01, as "
                               "the ported weights).")
efficientnet_b6 = _builder("efficientnet_b6", EfficientNet_B6_Weights, EfficientNet,
                           _b_series, "efficientnet_b6", 1.8, 2.6, 0.5, True,
                           doc="EfficientNet B6.")
efficientnet_b7 = _builder("efficientnet_b7", EfficientNet_B7_Weights, EfficientNet,
                           _b_series, "efficientnet_b7", 2.0, 3.1, 0.5, True,
                           doc="EfficientNet B7.")
efficientnet_v2_s = _builder("efficientnet_v2_s", EfficientNet_V2_S_Weights, EfficientNet,
                             _v2_series, "efficientnet_v2_s", 0.2,
                             doc='EfficientNetV2-S ("EfficientNetV2: Smaller Models and Faster '
                                 'Training").')
efficientnet_v2_m = _builder("efficientnet_v2_m", EfficientNet_V2_M_Weights, EfficientNet,
                             _v2_series, "efficientnet_v2_m", 0.3,
                             doc="EfficientNetV2-M.")
efficientnet_v2_l = _builder("efficientnet_v2_l", EfficientNet_V2_L_Weights, EfficientNet,
                             _v2_series, "efficientnet_v2_l", 0.4,
                             doc="EfficientNetV2-L.")
