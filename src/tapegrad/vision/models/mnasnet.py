"""MNASNet (Tan et al. 2018, "MnasNet: Platform-Aware Neural Architecture Search for Mobile"):
stacks of inverted residual blocks (1x1 expansion, depthwise 3x3 or 5x5, linear 1x1
projection), their widths scaled by ``alpha`` (the depth multiplier)."""

import warnings
from typing import Any

from ... import nn
from ..._tensor import Tensor
from ._api import WeightsEnum
from ._meta import _NEW_RECIPE_DOCS
from ._utils import _builder, _classifier, _trained_imagenet1k_v1_enum

__all__ = ["MNASNet", "MNASNet0_5_Weights", "MNASNet0_75_Weights", "MNASNet1_0_Weights",
           "MNASNet1_3_Weights", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3"]

# TensorFlow's batch norm decay of 0.9997, as PyTorch's momentum
_BN_MOMENTUM = 1 - 0.9997


class _InvertedResidual(nn.Module):
    """1x1 expansion by ``expansion_factor``, depthwise ``kernel_size``, linear 1x1 projection;
    a residual connection at stride 1 with equal channels."""

    def __init__(self, in_ch: int, out_ch: int, kernel_size: int, stride: int,
                 expansion_factor: int, bn_momentum: float = 0.1) -> None:
        super().__init__()
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if kernel_size not in [3, 5]:
            raise ValueError(f"kernel_size should be 3 or 5 instead of {kernel_size}")
        mid_ch = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2, stride=stride,
                      groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=bn_momentum),
        )

    def forward(self, input: Tensor) -> Tensor:
        if self.apply_residual:
            return self.layers(input) + input
        return self.layers(input)


def _stack(in_ch: int, out_ch: int, kernel_size: int, stride: int, exp_factor: int,
           repeats: int, bn_momentum: float) -> nn.Sequential:
    """``repeats`` blocks; only the first changes the channels and strides."""
    if repeats < 1:
        raise ValueError(f"repeats should be >= 1, instead got {repeats}")
    first = _InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor,
                              bn_momentum=bn_momentum)
    remaining = [_InvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor,
                                   bn_momentum=bn_momentum) for _ in range(1, repeats)]
    return nn.Sequential(first, *remaining)


def _round_to_multiple_of(val: float, divisor: int, round_up_bias: float = 0.9) -> int:
    """The multiple of ``divisor`` nearest ``val``, rounded up if that falls below
    ``round_up_bias * val``."""
    if not 0.0 < round_up_bias < 1.0:
        raise ValueError(f"round_up_bias should be greater than 0.0 and smaller than 1.0 "
                         f"instead of {round_up_bias}")
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


def _get_depths(alpha: float) -> list[int]:
    """The channel counts of the stem and the six stacks, scaled by ``alpha``."""
    depths = [32, 16, 24, 40, 80, 96, 192, 320]
    return [_round_to_multiple_of(depth * alpha, 8) for depth in depths]


class MNASNet(nn.Module):
    """The network, at width ``alpha``: a stem, six stacks, a 1x1 convolution to 1280
    channels, global average pooling and a linear classifier after dropout.

    Version 2 of the model scales the stem too; a version-1 checkpoint (saved before that change)
    still loads: ``_load_from_state_dict`` rebuilds the stem unscaled, with a warning."""

    # version 2: the stem's channels scale with alpha
    _version = 2

    def __init__(self, alpha: float, num_classes: int = 1000, dropout: float = 0.2) -> None:
        super().__init__()
        if alpha <= 0.0:
            raise ValueError(f"alpha should be greater than 0.0 instead of {alpha}")
        self.alpha = alpha
        self.num_classes = num_classes
        depths = _get_depths(alpha)
        layers = [
            # the stem: a strided 3x3, a depthwise 3x3, a linear 1x1
            nn.Conv2d(3, depths[0], 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            nn.Conv2d(depths[0], depths[0], 3, padding=1, stride=1, groups=depths[0],
                      bias=False),
            nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
            nn.Conv2d(depths[0], depths[1], 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(depths[1], momentum=_BN_MOMENTUM),
            # the stacks: in, out, kernel, stride, expansion, repeats
            _stack(depths[1], depths[2], 3, 2, 3, 3, _BN_MOMENTUM),
            _stack(depths[2], depths[3], 5, 2, 3, 3, _BN_MOMENTUM),
            _stack(depths[3], depths[4], 5, 2, 6, 3, _BN_MOMENTUM),
            _stack(depths[4], depths[5], 3, 1, 6, 2, _BN_MOMENTUM),
            _stack(depths[5], depths[6], 5, 2, 6, 4, _BN_MOMENTUM),
            _stack(depths[6], depths[7], 3, 1, 6, 1, _BN_MOMENTUM),
            nn.Conv2d(depths[7], 1280, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(1280, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(1280, num_classes))

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, mode="fan_out", nonlinearity="sigmoid")
                nn.init.zeros_(m.bias)

    def forward(self, x: Tensor) -> Tensor:
        x = self.layers(x).mean([2, 3])
        return self.classifier(x)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        version = local_metadata.get("version", None)
        if version not in [1, 2]:
            raise ValueError(f"version should be set to 1 or 2 instead of {version}")
        if version == 1 and not self.alpha == 1.0:
            # a version-1 model had the stem of alpha 1 whatever its alpha
            depths = _get_depths(self.alpha)
            v1_stem = [
                nn.Conv2d(3, 32, 3, padding=1, stride=2, bias=False),
                nn.BatchNorm2d(32, momentum=_BN_MOMENTUM),
                nn.ReLU(inplace=True),
                nn.Conv2d(32, 32, 3, padding=1, stride=1, groups=32, bias=False),
                nn.BatchNorm2d(32, momentum=_BN_MOMENTUM),
                nn.ReLU(inplace=True),
                nn.Conv2d(32, 16, 1, padding=0, stride=1, bias=False),
                nn.BatchNorm2d(16, momentum=_BN_MOMENTUM),
                _stack(16, depths[2], 3, 2, 3, 3, _BN_MOMENTUM),
            ]
            for idx, layer in enumerate(v1_stem):
                self.layers[idx] = layer
            self._version = 1
            warnings.warn(
                "A new version of MNASNet model has been implemented. Your checkpoint was saved "
                "using the previous version. This checkpoint will load and work as before, but "
                "you may want to upgrade by training a newer model or transfer learning from an "
                "updated ImageNet checkpoint.", UserWarning, stacklevel=1)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


def _mnasnet(alpha: float, weights: WeightsEnum | None, progress: bool,
             **kwargs: Any) -> MNASNet:
    return _classifier(MNASNet, weights, progress, alpha, **kwargs)


# the two trainings of the weights: the transforms' keywords, the recipe, the docs
# (see _utils._trained_imagenet1k_v1_enum)
_PAPER: tuple[dict[str, Any], str, str] = (
    {}, "https://github.com/1e100/mnasnet_trainer",
    "These weights reproduce closely the results of the paper.")
_NEW = ({"resize_size": 232}, "https://github.com/pytorch/vision/pull/6019", _NEW_RECIPE_DOCS)
# each alpha's (width multiplier's) ImageNet-1K weights: training, checkpoint, parameters,
# (acc@1, acc@5), GFLOPS and file size (MB)
_WEIGHTS = {
    0.5: (_PAPER, "mnasnet0.5_top1_67.823-3ffadce67e.pth", 2218512, (67.734, 87.49), 0.104, 8.591),
    0.75: (_NEW, "mnasnet0_75-7090bc5f.pth", 3170208, (71.18, 90.496), 0.215, 12.303),
    1.0: (_PAPER, "mnasnet1.0_top1_73.512-f206786ef8.pth", 4383312, (73.456, 91.51), 0.314, 16.915),
    1.3: (_NEW, "mnasnet1_3-a4c69d6f.pth", 6282256, (76.506, 93.522), 0.526, 24.246),
}


def _weights_enum(name: str, alpha: float) -> type[WeightsEnum]:
    """The weights enum ``name`` (IMAGENET1K_V1 and DEFAULT) from the row of ``alpha``."""
    training, *row = _WEIGHTS[alpha]
    return _trained_imagenet1k_v1_enum(name, __name__, training, tuple(row))


MNASNet0_5_Weights = _weights_enum("MNASNet0_5_Weights", 0.5)
MNASNet0_75_Weights = _weights_enum("MNASNet0_75_Weights", 0.75)
MNASNet1_0_Weights = _weights_enum("MNASNet1_0_Weights", 1.0)
MNASNet1_3_Weights = _weights_enum("MNASNet1_3_Weights", 1.3)


mnasnet0_5 = _builder("mnasnet0_5", MNASNet0_5_Weights, MNASNet, _mnasnet, 0.5,
                      doc='MNASNet with depth multiplier 0.5 ("MnasNet: Platform-Aware Neural '
                          'Architecture Search for Mobile"); ``kwargs`` go to ``MNASNet``.')
mnasnet0_75 = _builder("mnasnet0_75", MNASNet0_75_Weights, MNASNet, _mnasnet, 0.75,
                       doc="MNASNet with depth multiplier 0.75.")
mnasnet1_0 = _builder("mnasnet1_0", MNASNet1_0_Weights, MNASNet, _mnasnet, 1.0,
                      doc="MNASNet with depth multiplier 1.0.")
mnasnet1_3 = _builder("mnasnet1_3", MNASNet1_3_Weights, MNASNet, _mnasnet, 1.3,
                      doc="MNASNet with depth multiplier 1.3.")
