"""MobileNetV3 (Howard et al. 2019, "Searching for MobileNetV3"): MobileNetV2's inverted
residual blocks with squeeze-and-excitation and hard-swish activations, in a large and a small
configuration found by architecture search."""

from collections.abc import Callable
from functools import partial
from typing import Any

from ... import flatten, nn
from ..._tensor import Tensor
from ..ops.misc import Conv2dNormActivation
from ..ops.misc import SqueezeExcitation as SElayer
from ..transforms._presets import ImageClassification
from ._api import WeightsEnum
from ._meta import _IMAGENET_META, _NEW_RECIPE_REG_TUNING
from ._utils import (
    _builder,
    _check_stage_settings,
    _classifier,
    _imagenet1k_weights,
    _init_weights,
    _make_divisible,
)

__all__ = ["MobileNetV3", "MobileNet_V3_Large_Weights", "MobileNet_V3_Small_Weights",
           "mobilenet_v3_large", "mobilenet_v3_small"]


class InvertedResidualConfig:
    """One block's settings (the channel counts scaled by ``width_mult``); ``activation`` is
    "RE" (ReLU) or "HS" (hard-swish)."""

    def __init__(self, input_channels: int, kernel: int, expanded_channels: int,
                 out_channels: int, use_se: bool, activation: str, stride: int, dilation: int,
                 width_mult: float):
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride
        self.dilation = dilation

    @staticmethod
    def adjust_channels(channels: int, width_mult: float) -> int:
        return _make_divisible(channels * width_mult, 8)


class InvertedResidual(nn.Module):
    """expand (1x1, unless no expansion), depthwise ``kernel`` x ``kernel``, squeeze-and-excite
    (hard sigmoid gate), project (1x1, no activation); residual at stride 1 and equal width."""

    def __init__(self, cnf: InvertedResidualConfig, norm_layer: Callable[..., nn.Module],
                 se_layer: Callable[..., nn.Module] = partial(  # noqa: B008
                     SElayer, scale_activation=nn.Hardsigmoid)):
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        layers: list[nn.Module] = []
        activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels,
                                               kernel_size=1, norm_layer=norm_layer,
                                               activation_layer=activation_layer))
        stride = 1 if cnf.dilation > 1 else cnf.stride
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels,
                                           kernel_size=cnf.kernel, stride=stride,
                                           dilation=cnf.dilation, groups=cnf.expanded_channels,
                                           norm_layer=norm_layer,
                                           activation_layer=activation_layer))
        if cnf.use_se:
            squeeze_channels = _make_divisible(cnf.expanded_channels // 4, 8)
            layers.append(se_layer(cnf.expanded_channels, squeeze_channels))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels,
                                           kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.out_channels = cnf.out_channels
        self._is_cn = cnf.stride > 1

    def forward(self, input: Tensor) -> Tensor:
        result = self.block(input)
        if self.use_res_connect:
            result += input
        return result


class MobileNetV3(nn.Module):
    """The network: a hard-swish stem, the blocks, a 1x1 convolution to six times the last
    block's width, global average pooling, and a two-layer classifier."""

    def __init__(self, inverted_residual_setting: list[InvertedResidualConfig],
                 last_channel: int, num_classes: int = 1000,
                 block: Callable[..., nn.Module] | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None, dropout: float = 0.2,
                 **kwargs: Any) -> None:
        super().__init__()
        _check_stage_settings(inverted_residual_setting, InvertedResidualConfig,
                              "inverted_residual_setting", "InvertedResidualConfig")
        if block is None:
            block = InvertedResidual
        if norm_layer is None:
            norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)

        layers: list[nn.Module] = []
        firstconv_output_channels = inverted_residual_setting[0].input_channels
        layers.append(Conv2dNormActivation(3, firstconv_output_channels, kernel_size=3, stride=2,
                                           norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))
        for cnf in inverted_residual_setting:
            layers.append(block(cnf, norm_layer))
        lastconv_input_channels = inverted_residual_setting[-1].out_channels
        lastconv_output_channels = 6 * lastconv_input_channels
        layers.append(Conv2dNormActivation(lastconv_input_channels, lastconv_output_channels,
                                           kernel_size=1, norm_layer=norm_layer,
                                           activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(lastconv_output_channels, last_channel),
            nn.Hardswish(inplace=True),
            nn.Dropout(p=dropout, inplace=True),
            nn.Linear(last_channel, num_classes),
        )

        _init_weights(self)

    def _forward_impl(self, x: Tensor) -> Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


def _mobilenet_v3_conf(arch: str, width_mult: float = 1.0, reduced_tail: bool = False,
                       dilated: bool = False,
                       **kwargs: Any) -> tuple[list[InvertedResidualConfig], int]:
    """The blocks of ``arch``. ``reduced_tail`` halves the last stage's channels,
    ``dilated`` dilates it instead of striding (both for detection and segmentation)."""
    reduce_divider = 2 if reduced_tail else 1
    dilation = 2 if dilated else 1
    bneck_conf = partial(InvertedResidualConfig, width_mult=width_mult)
    adjust_channels = partial(InvertedResidualConfig.adjust_channels, width_mult=width_mult)
    r = reduce_divider
    if arch == "mobilenet_v3_large":
        inverted_residual_setting = [
            # input, kernel, expanded, out, SE, activation, stride, dilation
            bneck_conf(16, 3, 16, 16, False, "RE", 1, 1),
            bneck_conf(16, 3, 64, 24, False, "RE", 2, 1),  # C1
            bneck_conf(24, 3, 72, 24, False, "RE", 1, 1),
            bneck_conf(24, 5, 72, 40, True, "RE", 2, 1),  # C2
            bneck_conf(40, 5, 120, 40, True, "RE", 1, 1),
            bneck_conf(40, 5, 120, 40, True, "RE", 1, 1),
            bneck_conf(40, 3, 240, 80, False, "HS", 2, 1),  # C3
            bneck_conf(80, 3, 200, 80, False, "HS", 1, 1),
            bneck_conf(80, 3, 184, 80, False, "HS", 1, 1),
            bneck_conf(80, 3, 184, 80, False, "HS", 1, 1),
            bneck_conf(80, 3, 480, 112, True, "HS", 1, 1),
            bneck_conf(112, 3, 672, 112, True, "HS", 1, 1),
            bneck_conf(112, 5, 672, 160 // r, True, "HS", 2, dilation),  # C4
            bneck_conf(160 // r, 5, 960 // r, 160 // r, True, "HS", 1, dilation),
            bneck_conf(160 // r, 5, 960 // r, 160 // r, True, "HS", 1, dilation),
        ]
        last_channel = adjust_channels(1280 // r)  # C5
    elif arch == "mobilenet_v3_small":
        inverted_residual_setting = [
            bneck_conf(16, 3, 16, 16, True, "RE", 2, 1),  # C1
            bneck_conf(16, 3, 72, 24, False, "RE", 2, 1),  # C2
            bneck_conf(24, 3, 88, 24, False, "RE", 1, 1),
            bneck_conf(24, 5, 96, 40, True, "HS", 2, 1),  # C3
            bneck_conf(40, 5, 240, 40, True, "HS", 1, 1),
            bneck_conf(40, 5, 240, 40, True, "HS", 1, 1),
            bneck_conf(40, 5, 120, 48, True, "HS", 1, 1),
            bneck_conf(48, 5, 144, 48, True, "HS", 1, 1),
            bneck_conf(48, 5, 288, 96 // r, True, "HS", 2, dilation),  # C4
            bneck_conf(96 // r, 5, 576 // r, 96 // r, True, "HS", 1, dilation),
            bneck_conf(96 // r, 5, 576 // r, 96 // r, True, "HS", 1, dilation),
        ]
        last_channel = adjust_channels(1024 // r)  # C5
    else:
        raise ValueError(f"Unsupported model type {arch}")
    return inverted_residual_setting, last_channel


def _mobilenet_v3(inverted_residual_setting: list[InvertedResidualConfig], last_channel: int,
                  weights: WeightsEnum | None, progress: bool, **kwargs: Any) -> MobileNetV3:
    return _classifier(MobileNetV3, weights, progress, inverted_residual_setting, last_channel,
                       **kwargs)


def _named(arch: str, weights: WeightsEnum | None, progress: bool, /,
           **kwargs: Any) -> MobileNetV3:
    """The MobileNetV3 configuration ``arch`` (``"mobilenet_v3_large"`` or ``"_small"``)."""
    inverted_residual_setting, last_channel = _mobilenet_v3_conf(arch, **kwargs)
    return _mobilenet_v3(inverted_residual_setting, last_channel, weights, progress, **kwargs)


class MobileNet_V3_Large_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "mobilenet_v3_large-8738ca79.pth",
        partial(ImageClassification, crop_size=224), _IMAGENET_META, num_params=5483032,
        recipe="https://github.com/pytorch/vision/tree/main/references/classification#mobilenetv3-large--small",  # noqa: E501
        acc=(74.042, 91.34), _ops=0.217, _file_size=21.114,
        _docs="These weights were trained from scratch by using a simple training recipe.")
    IMAGENET1K_V2 = _imagenet1k_weights(
        "mobilenet_v3_large-5c1a4163.pth",
        partial(ImageClassification, crop_size=224, resize_size=232), _IMAGENET_META,
        num_params=5483032, recipe=_NEW_RECIPE_REG_TUNING, acc=(75.274, 92.566), _ops=0.217,
        _file_size=21.107,
        _docs=(
            "\n"
            "                These weights improve marginally upon the results of the "
            "original paper by using a modified version of\n"
            "                TorchVision's `new training recipe\n"
            "                <https://pytorch.org/blog/how-to-train-state-of-the-art-models-using-torchvision-latest-primitives/>`_.\n"  # noqa: E501
            "            "
        ))
    DEFAULT = IMAGENET1K_V2


class MobileNet_V3_Small_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "mobilenet_v3_small-047dcff4.pth",
        partial(ImageClassification, crop_size=224), _IMAGENET_META, num_params=2542856,
        recipe="https://github.com/pytorch/vision/tree/main/references/classification#mobilenetv3-large--small",  # noqa: E501
        acc=(67.668, 87.402), _ops=0.057, _file_size=9.829,
        _docs=(
            "\n"
            "                These weights improve upon the results of the original "
            "paper by using a simple training recipe.\n"
            "            "
        ))
    DEFAULT = IMAGENET1K_V1


mobilenet_v3_large = _builder("mobilenet_v3_large", MobileNet_V3_Large_Weights, MobileNetV3,
                              _named, "mobilenet_v3_large",
                              doc='MobileNetV3-Large from "Searching for MobileNetV3"; '
                                  "``kwargs`` go to ``MobileNetV3`` (and ``width_mult``, "
                                  "``reduced_tail``, ``dilated`` to the configuration).")
mobilenet_v3_small = _builder("mobilenet_v3_small", MobileNet_V3_Small_Weights, MobileNetV3,
                              _named, "mobilenet_v3_small",
                              doc="MobileNetV3-Small.")
