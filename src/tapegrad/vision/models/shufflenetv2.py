"""ShuffleNet V2 (Ma et al. 2018, "ShuffleNet V2: Practical Guidelines for Efficient CNN
Architecture Design"): each block splits the channels in two (or, when downsampling, runs two
strided branches), transforms one half with 1x1 and depthwise 3x3 convolutions, concatenates,
and shuffles the channels of the two groups together."""

from collections.abc import Callable
from typing import Any

from ... import cat, nn, transpose
from ..._tensor import Tensor
from ._api import WeightsEnum
from ._meta import _NEW_RECIPE_DOCS
from ._utils import _builder, _classifier, _trained_imagenet1k_v1_enum

__all__ = ["ShuffleNetV2", "ShuffleNet_V2_X0_5_Weights", "ShuffleNet_V2_X1_0_Weights",
           "ShuffleNet_V2_X1_5_Weights", "ShuffleNet_V2_X2_0_Weights", "shufflenet_v2_x0_5",
           "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"]


def channel_shuffle(x: Tensor, groups: int) -> Tensor:
    """Interleave the channels of ``groups`` groups: (N, g*c, H, W) -> (N, c*g, H, W)."""
    batchsize, num_channels, height, width = x.size()
    channels_per_group = num_channels // groups
    x = x.view(batchsize, groups, channels_per_group, height, width)
    x = transpose(x, 1, 2).contiguous()
    return x.view(batchsize, num_channels, height, width)


class InvertedResidual(nn.Module):
    """One block: at stride 1 half the channels pass through and ``branch2`` transforms the
    other half; at stride > 1 ``branch1`` and ``branch2`` both see the whole input."""

    def __init__(self, inp: int, oup: int, stride: int) -> None:
        super().__init__()
        if not (1 <= stride <= 3):
            raise ValueError("illegal stride value")
        self.stride = stride
        branch_features = oup // 2
        if (self.stride == 1) and (inp != branch_features << 1):
            raise ValueError(f"Invalid combination of stride {stride}, inp {inp} and oup {oup} "
                             "values. If stride == 1 then inp should be equal to oup // 2 << 1.")
        if self.stride > 1:
            self.branch1 = nn.Sequential(
                self.depthwise_conv(inp, inp, kernel_size=3, stride=self.stride, padding=1),
                nn.BatchNorm2d(inp),
                nn.Conv2d(inp, branch_features, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(branch_features),
                nn.ReLU(inplace=True),
            )
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if (self.stride > 1) else branch_features, branch_features,
                      kernel_size=1, stride=1, padding=0, bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=True),
            self.depthwise_conv(branch_features, branch_features, kernel_size=3,
                                stride=self.stride, padding=1),
            nn.BatchNorm2d(branch_features),
            nn.Conv2d(branch_features, branch_features, kernel_size=1, stride=1, padding=0,
                      bias=False),
            nn.BatchNorm2d(branch_features),
            nn.ReLU(inplace=True),
        )

    @staticmethod
    def depthwise_conv(i: int, o: int, kernel_size: int, stride: int = 1, padding: int = 0,
                       bias: bool = False) -> nn.Conv2d:
        return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)

    def forward(self, x: Tensor) -> Tensor:
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = cat((x1, self.branch2(x2)), dim=1)
        else:
            out = cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    """The network: a stem (3x3 convolution, max pooling), stages 2-4 of ``stages_repeats``
    blocks, a 1x1 convolution ``conv5``, global average pooling, a linear classifier."""

    def __init__(self, stages_repeats: list[int], stages_out_channels: list[int],
                 num_classes: int = 1000,
                 inverted_residual: Callable[..., nn.Module] = InvertedResidual) -> None:
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError("expected stages_repeats as list of 3 positive ints")
        if len(stages_out_channels) != 5:
            raise ValueError("expected stages_out_channels as list of 5 positive ints")
        self._stage_out_channels = stages_out_channels

        input_channels = 3
        output_channels = self._stage_out_channels[0]
        self.conv1 = nn.Sequential(
            nn.Conv2d(input_channels, output_channels, 3, 2, 1, bias=False),
            nn.BatchNorm2d(output_channels),
            nn.ReLU(inplace=True),
        )
        input_channels = output_channels
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)

        self.stage2: nn.Sequential
        self.stage3: nn.Sequential
        self.stage4: nn.Sequential
        stage_names = [f"stage{i}" for i in [2, 3, 4]]
        for name, repeats, output_channels in zip(stage_names, stages_repeats,
                                                  self._stage_out_channels[1:], strict=False):
            seq = [inverted_residual(input_channels, output_channels, 2)]
            for _ in range(repeats - 1):
                seq.append(inverted_residual(output_channels, output_channels, 1))
            setattr(self, name, nn.Sequential(*seq))
            input_channels = output_channels

        output_channels = self._stage_out_channels[-1]
        self.conv5 = nn.Sequential(
            nn.Conv2d(input_channels, output_channels, 1, 1, 0, bias=False),
            nn.BatchNorm2d(output_channels),
            nn.ReLU(inplace=True),
        )
        self.fc = nn.Linear(output_channels, num_classes)

    def _forward_impl(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.conv1(x))
        x = self.stage4(self.stage3(self.stage2(x)))
        x = self.conv5(x).mean([2, 3])  # global average pooling
        return self.fc(x)

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


def _shufflenetv2(stages_repeats: list[int], stages_out_channels: list[int],
                  weights: WeightsEnum | None, progress: bool, /, **kwargs: Any) -> ShuffleNetV2:
    return _classifier(ShuffleNetV2, weights, progress, stages_repeats, stages_out_channels,
                       **kwargs)


# the two trainings of the weights: the transforms' keywords, the recipe, the docs
# (see _utils._trained_imagenet1k_v1_enum)
_PAPER: tuple[dict[str, Any], str, str] = (
    {}, "https://github.com/ericsun99/Shufflenet-v2-Pytorch",
    "These weights were trained from scratch to reproduce closely the results of the paper.")
_NEW = ({"resize_size": 232}, "https://github.com/pytorch/vision/pull/5906", _NEW_RECIPE_DOCS)
# each width's ImageNet-1K weights: training, checkpoint, parameters, (acc@1, acc@5), GFLOPS and
# file size (MB)
_WEIGHTS = {
    "x0_5": (_PAPER, "shufflenetv2_x0.5-f707e7126e.pth", 1366792, (60.552, 81.746), 0.04, 5.282),
    "x1_0": (_PAPER, "shufflenetv2_x1-5666bf0f80.pth", 2278604, (69.362, 88.316), 0.145, 8.791),
    "x1_5": (_NEW, "shufflenetv2_x1_5-3c479a10.pth", 3503624, (72.996, 91.086), 0.296, 13.557),
    "x2_0": (_NEW, "shufflenetv2_x2_0-8be3c8ee.pth", 7393996, (76.23, 93.006), 0.583, 28.433),
}


def _weights_enum(name: str, width: str) -> type[WeightsEnum]:
    """The weights enum ``name`` (IMAGENET1K_V1 and DEFAULT) from the row of ``width``."""
    training, *row = _WEIGHTS[width]
    return _trained_imagenet1k_v1_enum(name, __name__, training, tuple(row))


ShuffleNet_V2_X0_5_Weights = _weights_enum("ShuffleNet_V2_X0_5_Weights", "x0_5")
ShuffleNet_V2_X1_0_Weights = _weights_enum("ShuffleNet_V2_X1_0_Weights", "x1_0")
ShuffleNet_V2_X1_5_Weights = _weights_enum("ShuffleNet_V2_X1_5_Weights", "x1_5")
ShuffleNet_V2_X2_0_Weights = _weights_enum("ShuffleNet_V2_X2_0_Weights", "x2_0")


shufflenet_v2_x0_5 = _builder("shufflenet_v2_x0_5", ShuffleNet_V2_X0_5_Weights, ShuffleNetV2,
                              _shufflenetv2, [4, 8, 4], [24, 48, 96, 192, 1024],
                              doc='ShuffleNet V2 with 0.5x output channels ("ShuffleNet V2: '
                                  'Practical Guidelines for Efficient CNN Architecture Design"); '
                                  "``kwargs`` go to ``ShuffleNetV2``.")
shufflenet_v2_x1_0 = _builder("shufflenet_v2_x1_0", ShuffleNet_V2_X1_0_Weights, ShuffleNetV2,
                              _shufflenetv2, [4, 8, 4], [24, 116, 232, 464, 1024],
                              doc="ShuffleNet V2 with 1.0x output channels.")
shufflenet_v2_x1_5 = _builder("shufflenet_v2_x1_5", ShuffleNet_V2_X1_5_Weights, ShuffleNetV2,
                              _shufflenetv2, [4, 8, 4], [24, 176, 352, 704, 1024],
                              doc="ShuffleNet V2 with 1.5x output channels.")
shufflenet_v2_x2_0 = _builder("shufflenet_v2_x2_0", ShuffleNet_V2_X2_0_Weights, ShuffleNetV2,
                              _shufflenetv2, [4, 8, 4], [24, 244, 488, 976, 2048],
                              doc="ShuffleNet V2 with 2.0x output channels.")
