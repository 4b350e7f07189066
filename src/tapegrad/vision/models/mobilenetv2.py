"""MobileNetV2 (Sandler et al. 2018, "MobileNetV2: Inverted Residuals and Linear Bottlenecks"):
blocks that expand the channels with a 1x1 convolution, filter them depthwise (3x3), and project
them back linearly (no activation), with a residual connection when the shape allows."""

from collections.abc import Callable
from functools import partial

from ... import flatten, nn
from ..._tensor import Tensor
from ..ops.misc import Conv2dNormActivation
from ..transforms._presets import ImageClassification
from ._api import WeightsEnum
from ._meta import (
    _IMAGENET_META,
    _MODIFIED_RECIPE_DOCS,
    _NEW_RECIPE_REG_TUNING,
    _SIMPLE_RECIPE_DOCS,
)
from ._utils import (
    _builder,
    _classifier,
    _imagenet1k_weights,
    _init_weights,
    _make_divisible,
)

__all__ = ["MobileNetV2", "MobileNet_V2_Weights", "mobilenet_v2"]


class InvertedResidual(nn.Module):
    """expand (1x1, ReLU6; skipped for ``expand_ratio`` 1), depthwise 3x3 (ReLU6), project (1x1,
    batch norm, no activation); ``x + block(x)`` at stride 1 with equal channels."""

    def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        self.stride = stride
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        hidden_dim = int(round(inp * expand_ratio))
        self.use_res_connect = self.stride == 1 and inp == oup
        layers: list[nn.Module] = []
        if expand_ratio != 1:
            layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1,
                                               norm_layer=norm_layer,
                                               activation_layer=nn.ReLU6))
        layers.extend([
            Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim,
                                 norm_layer=norm_layer, activation_layer=nn.ReLU6),
            nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
            norm_layer(oup),
        ])
        self.conv = nn.Sequential(*layers)
        self.out_channels = oup
        self._is_cn = stride > 1

    def forward(self, x: Tensor) -> Tensor:
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Module):
    """The network. ``inverted_residual_setting`` lists stages as [expansion t, channels c,
    repeats n, first stride s]; ``width_mult`` scales the channels, rounded to multiples of
    ``round_nearest``."""

    def __init__(self, num_classes: int = 1000, width_mult: float = 1.0,
                 inverted_residual_setting: list[list[int]] | None = None,
                 round_nearest: int = 8, block: Callable[..., nn.Module] | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None,
                 dropout: float = 0.2) -> None:
        super().__init__()
        if block is None:
            block = InvertedResidual
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        input_channel = 32
        last_channel = 1280
        if inverted_residual_setting is None:
            inverted_residual_setting = [
                # t, c, n, s
                [1, 16, 1, 1],
                [6, 24, 2, 2],
                [6, 32, 3, 2],
                [6, 64, 4, 2],
                [6, 96, 3, 1],
                [6, 160, 3, 2],
                [6, 320, 1, 1],
            ]
        if len(inverted_residual_setting) == 0 or len(inverted_residual_setting[0]) != 4:
            raise ValueError("inverted_residual_setting should be non-empty or a 4-element list, "
                             f"got {inverted_residual_setting}")
        input_channel = _make_divisible(input_channel * width_mult, round_nearest)
        self.last_channel = _make_divisible(last_channel * max(1.0, width_mult), round_nearest)
        features: list[nn.Module] = [
            Conv2dNormActivation(3, input_channel, stride=2, norm_layer=norm_layer,
                                 activation_layer=nn.ReLU6)
        ]
        for t, c, n, s in inverted_residual_setting:
            output_channel = _make_divisible(c * width_mult, round_nearest)
            for i in range(n):
                features.append(block(input_channel, output_channel, s if i == 0 else 1,
                                      expand_ratio=t, norm_layer=norm_layer))
                input_channel = output_channel
        features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1,
                                             norm_layer=norm_layer, activation_layer=nn.ReLU6))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout),
                                        nn.Linear(self.last_channel, num_classes))

        _init_weights(self)

    def _forward_impl(self, x: Tensor) -> Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), (1, 1))
        return self.classifier(flatten(x, 1))

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


class MobileNet_V2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "mobilenet_v2-b0353104.pth",
        partial(ImageClassification, crop_size=224), _IMAGENET_META, num_params=3504872,
        recipe="https://github.com/pytorch/vision/tree/main/references/classification#mobilenetv2",
        acc=(71.878, 90.286), _ops=0.301, _file_size=13.555, _docs=_SIMPLE_RECIPE_DOCS)
    IMAGENET1K_V2 = _imagenet1k_weights(
        "mobilenet_v2-7ebf99e0.pth", partial(ImageClassification, crop_size=224, resize_size=232),
        _IMAGENET_META, num_params=3504872, recipe=_NEW_RECIPE_REG_TUNING, acc=(72.154, 90.822),
        _ops=0.301, _file_size=13.598, _docs=_MODIFIED_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V2


mobilenet_v2 = _builder("mobilenet_v2", MobileNet_V2_Weights, MobileNetV2, _classifier, MobileNetV2,
                        doc='MobileNetV2 from "MobileNetV2: Inverted Residuals and Linear '
                            'Bottlenecks"; ``kwargs`` go to ``MobileNetV2``.')
