"""ConvNeXt (Liu et al. 2022, "A ConvNet for the 2020s"): a ResNet modernized toward vision
transformers: a 4x4 patchify stem, blocks of a 7x7 depthwise convolution, layer norm and an
inverted MLP (4x wider, GELU) in channels-last layout, a learned per-channel layer scale, and
stochastic depth."""

from collections.abc import Callable
from functools import partial
from typing import Any

from ... import nn, ones
from ..._tensor import Tensor
from ...nn import functional as F
from ..ops.misc import Conv2dNormActivation, Permute
from ..ops.stochastic_depth import StochasticDepth
from ..transforms._presets import ImageClassification
from ._api import WeightsEnum
from ._meta import _family_meta
from ._utils import _builder, _check_stage_settings, _classifier, _imagenet1k_v1_enum

__all__ = ["ConvNeXt", "ConvNeXt_Tiny_Weights", "ConvNeXt_Small_Weights",
           "ConvNeXt_Base_Weights", "ConvNeXt_Large_Weights", "convnext_tiny", "convnext_small",
           "convnext_base", "convnext_large"]


class LayerNorm2d(nn.LayerNorm):
    """Layer norm over the channels of an (N, C, H, W) tensor."""

    def forward(self, x: Tensor) -> Tensor:
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    """``x + stochastic_depth(layer_scale * block(x))``; ``block``: depthwise 7x7, layer norm,
    linear to 4x, GELU, linear back (the linears on channels-last data)."""

    def __init__(self, dim: int, layer_scale: float, stochastic_depth_prob: float,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = partial(nn.LayerNorm, eps=1e-6)
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True),
            Permute([0, 2, 3, 1]),
            norm_layer(dim),
            nn.Linear(in_features=dim, out_features=4 * dim, bias=True),
            nn.GELU(),
            nn.Linear(in_features=4 * dim, out_features=dim, bias=True),
            Permute([0, 3, 1, 2]),
        )
        self.layer_scale = nn.Parameter(ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input: Tensor) -> Tensor:
        result = self.layer_scale * self.block(input)
        result = self.stochastic_depth(result)
        result += input
        return result


class CNBlockConfig:
    """One stage: its blocks' channels, the next stage's channels (None for the last), and its
    number of blocks."""

    def __init__(self, input_channels: int, out_channels: int | None, num_layers: int) -> None:
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(input_channels={self.input_channels}, "
                f"out_channels={self.out_channels}, num_layers={self.num_layers})")


class ConvNeXt(nn.Module):
    """The network: a 4x4 stride-4 stem with layer norm, the stages with a downsampling layer
    (layer norm, 2x2 stride-2 convolution) after each but the last, pooling, and a classifier
    (layer norm, flatten, linear). Block i of n drops its branch with probability
    ``stochastic_depth_prob * i / (n - 1)``."""

    def __init__(self, block_setting: list[CNBlockConfig], stochastic_depth_prob: float = 0.0,
                 layer_scale: float = 1e-6, num_classes: int = 1000,
                 block: Callable[..., nn.Module] | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None, **kwargs: Any) -> None:
        super().__init__()
        _check_stage_settings(block_setting, CNBlockConfig, "block_setting", "CNBlockConfig")
        if block is None:
            block = CNBlock
        if norm_layer is None:
            norm_layer = partial(LayerNorm2d, eps=1e-6)

        layers: list[nn.Module] = []
        firstconv_output_channels = block_setting[0].input_channels
        layers.append(Conv2dNormActivation(3, firstconv_output_channels, kernel_size=4, stride=4,
                                           padding=0, norm_layer=norm_layer,
                                           activation_layer=None, bias=True))
        total_stage_blocks = sum(cnf.num_layers for cnf in block_setting)
        stage_block_id = 0
        for cnf in block_setting:
            stage: list[nn.Module] = []
            for _ in range(cnf.num_layers):
                sd_prob = stochastic_depth_prob * stage_block_id / (total_stage_blocks - 1.0)
                stage.append(block(cnf.input_channels, layer_scale, sd_prob))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:
                layers.append(nn.Sequential(
                    norm_layer(cnf.input_channels),
                    nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2),
                ))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        lastblock = block_setting[-1]
        lastconv_output_channels = (lastblock.out_channels if lastblock.out_channels is not None
                                    else lastblock.input_channels)
        self.classifier = nn.Sequential(norm_layer(lastconv_output_channels), nn.Flatten(1),
                                        nn.Linear(lastconv_output_channels, num_classes))

        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def _forward_impl(self, x: Tensor) -> Tensor:
        return self.classifier(self.avgpool(self.features(x)))

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


def _convnext(block_setting: list[CNBlockConfig], stochastic_depth_prob: float,
              weights: WeightsEnum | None, progress: bool, **kwargs: Any) -> ConvNeXt:
    return _classifier(ConvNeXt, weights, progress, block_setting,
                       stochastic_depth_prob=stochastic_depth_prob, **kwargs)


def _sized(block_setting: list[CNBlockConfig], default_depth_prob: float,
           weights: WeightsEnum | None, progress: bool, /, **kwargs: Any) -> ConvNeXt:
    """One size of ConvNeXt: its stages, and its ``stochastic_depth_prob`` unless given."""
    stochastic_depth_prob = kwargs.pop("stochastic_depth_prob", default_depth_prob)
    return _convnext(block_setting, stochastic_depth_prob, weights, progress, **kwargs)


_DOCS = (
    "\n"
    "        These weights improve upon the results of the original paper by using a "
    "modified version of TorchVision's\n"
    "        `new training recipe\n"
    "        <https://pytorch.org/blog/how-to-train-state-of-the-art-models-using-torchvision-latest-primitives/>`_.\n"  # noqa: E501
    "    "
)
_COMMON_META = _family_meta(
    (32, 32), "https://github.com/pytorch/vision/tree/main/references/classification#convnext",
    _DOCS)


# each size's ImageNet-1K weights: the transforms' resize size, then the checkpoint, parameters,
# (acc@1, acc@5), GFLOPS and file size (MB)
_WEIGHTS = {
    "tiny": (236, "convnext_tiny-983f1562.pth", 28589128, (82.52, 96.146), 4.456, 109.119),
    "small": (230, "convnext_small-0c510722.pth", 50223688, (83.616, 96.65), 8.684, 191.703),
    "base": (232, "convnext_base-6075fbad.pth", 88591464, (84.062, 96.87), 15.355, 338.064),
    "large": (232, "convnext_large-ea097f82.pth", 197767336, (84.414, 96.976), 34.361, 754.537),
}


def _weights_enum(name: str, size: str) -> type[WeightsEnum]:
    """The weights enum ``name`` (IMAGENET1K_V1 and DEFAULT) from the row of ``size``."""
    resize_size, *row = _WEIGHTS[size]
    transforms = partial(ImageClassification, crop_size=224, resize_size=resize_size)
    return _imagenet1k_v1_enum(name, __name__, tuple(row), transforms, _COMMON_META)


ConvNeXt_Tiny_Weights = _weights_enum("ConvNeXt_Tiny_Weights", "tiny")
ConvNeXt_Small_Weights = _weights_enum("ConvNeXt_Small_Weights", "small")
ConvNeXt_Base_Weights = _weights_enum("ConvNeXt_Base_Weights", "base")
ConvNeXt_Large_Weights = _weights_enum("ConvNeXt_Large_Weights", "large")


convnext_tiny = _builder("convnext_tiny", ConvNeXt_Tiny_Weights, ConvNeXt,
                         _sized, [CNBlockConfig(96, 192, 3), CNBlockConfig(192, 384, 3),
                                  CNBlockConfig(384, 768, 9), CNBlockConfig(768, None, 3)], 0.1,
                         doc='ConvNeXt Tiny ("A ConvNet for the 2020s"); ``kwargs`` go to '
                             "``ConvNeXt``.")
convnext_small = _builder("convnext_small", ConvNeXt_Small_Weights, ConvNeXt,
                          _sized, [CNBlockConfig(96, 192, 3), CNBlockConfig(192, 384, 3),
                                   CNBlockConfig(384, 768, 27), CNBlockConfig(768, None, 3)], 0.4,
                          doc="ConvNeXt Small.")
convnext_base = _builder("convnext_base", ConvNeXt_Base_Weights, ConvNeXt,
                         _sized, [CNBlockConfig(128, 256, 3), CNBlockConfig(256, 512, 3),
                                  CNBlockConfig(512, 1024, 27), CNBlockConfig(1024, None, 3)], 0.5,
                         doc="ConvNeXt Base.")
convnext_large = _builder("convnext_large", ConvNeXt_Large_Weights, ConvNeXt,
                          _sized, [CNBlockConfig(192, 384, 3), CNBlockConfig(384, 768, 3),
                                   CNBlockConfig(768, 1536, 27), CNBlockConfig(1536, None, 3)], 0.5,
                          doc="ConvNeXt Large.")
