"""DenseNet (Huang et al. 2016, "Densely Connected Convolutional Networks"): in each dense block,
every layer sees the concatenation of all earlier layers' outputs and adds ``growth_rate`` new
channels; transition layers (1x1 convolution, 2x2 average pooling) halve the channels and the
resolution between blocks. ``memory_efficient=True`` recomputes each layer's concatenation and
bottleneck in the backward pass (activation checkpointing) instead of keeping them."""

import re
from collections import OrderedDict
from functools import partial
from typing import Any

from ... import cat, flatten, nn
from ..._tensor import Tensor
from ...nn import functional as F
from ...utils import checkpoint as cp
from ..transforms._presets import ImageClassification
from ._api import WeightsEnum
from ._meta import _family_meta
from ._utils import _builder, _imagenet1k_v1_enum, _ovewrite_named_param

__all__ = ["DenseNet", "DenseNet121_Weights", "DenseNet161_Weights", "DenseNet169_Weights",
           "DenseNet201_Weights", "densenet121", "densenet161", "densenet169", "densenet201"]


class _DenseLayer(nn.Module):
    """BN-ReLU-1x1 convolution to ``bn_size * growth_rate`` channels (the bottleneck), then
    BN-ReLU-3x3 convolution to ``growth_rate`` channels, then dropout."""

    def __init__(self, num_input_features: int, growth_rate: int, bn_size: int,
                 drop_rate: float, memory_efficient: bool = False) -> None:
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1,
                               stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1,
                               padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        self.memory_efficient = memory_efficient

    def bn_function(self, inputs: list[Tensor]) -> Tensor:
        return self.conv1(self.relu1(self.norm1(cat(inputs, 1))))

    def any_requires_grad(self, input: list[Tensor]) -> bool:
        return any(t.requires_grad for t in input)

    def call_checkpoint_bottleneck(self, input: list[Tensor]) -> Tensor:
        def closure(*inputs: Tensor) -> Tensor:
            return self.bn_function(list(inputs))

        return cp.checkpoint(closure, *input, use_reentrant=False)

    def forward(self, input: Tensor | list[Tensor]) -> Tensor:
        prev_features = [input] if isinstance(input, Tensor) else input
        if self.memory_efficient and self.any_requires_grad(prev_features):
            bottleneck_output = self.call_checkpoint_bottleneck(prev_features)
        else:
            bottleneck_output = self.bn_function(prev_features)
        new_features = self.conv2(self.relu2(self.norm2(bottleneck_output)))
        if self.drop_rate > 0:
            new_features = F.dropout(new_features, p=self.drop_rate, training=self.training)
        return new_features


class _DenseBlock(nn.ModuleDict):
    """``num_layers`` dense layers; the output concatenates the input and every layer's."""

    _version = 2

    def __init__(self, num_layers: int, num_input_features: int, bn_size: int,
                 growth_rate: int, drop_rate: float, memory_efficient: bool = False) -> None:
        super().__init__()
        for i in range(num_layers):
            layer = _DenseLayer(num_input_features + i * growth_rate, growth_rate=growth_rate,
                                bn_size=bn_size, drop_rate=drop_rate,
                                memory_efficient=memory_efficient)
            self.add_module(f"denselayer{i + 1}", layer)

    def forward(self, init_features: Tensor) -> Tensor:
        features = [init_features]
        for _, layer in self.items():
            features.append(layer(features))
        return cat(features, 1)


class _Transition(nn.Sequential):
    """BN-ReLU-1x1 convolution, then 2x2 average pooling."""

    def __init__(self, num_input_features: int, num_output_features: int) -> None:
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1,
                              bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    """The network: a stem, dense blocks of ``block_config[i]`` layers with transitions between,
    a final batch norm, global average pooling and a linear classifier."""

    def __init__(self, growth_rate: int = 32,
                 block_config: tuple[int, int, int, int] = (6, 12, 24, 16),
                 num_init_features: int = 64, bn_size: int = 4, drop_rate: float = 0,
                 num_classes: int = 1000, memory_efficient: bool = False) -> None:
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3,
                                bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1)),
        ]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            block = _DenseBlock(num_layers=num_layers, num_input_features=num_features,
                                bn_size=bn_size, growth_rate=growth_rate, drop_rate=drop_rate,
                                memory_efficient=memory_efficient)
            self.features.add_module(f"denseblock{i + 1}", block)
            num_features = num_features + num_layers * growth_rate
            if i != len(block_config) - 1:
                trans = _Transition(num_input_features=num_features,
                                    num_output_features=num_features // 2)
                self.features.add_module(f"transition{i + 1}", trans)
                num_features = num_features // 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        out = F.relu(self.features(x), inplace=True)
        out = F.adaptive_avg_pool2d(out, (1, 1))
        return self.classifier(flatten(out, 1))


def _load_state_dict(model: nn.Module, weights: WeightsEnum, progress: bool) -> None:
    # The published checkpoints name a dense layer's modules "norm.1", "conv.2"...; the layers
    # are attributes "norm1", "conv2" now, so the keys lose their dot before loading.
    pattern = re.compile(
        r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$"  # noqa: E501
    )
    state_dict = weights.get_state_dict(progress=progress, check_hash=True)
    for key in list(state_dict.keys()):
        found = pattern.match(key)
        if found:
            state_dict[found.group(1) + found.group(2)] = state_dict.pop(key)
    model.load_state_dict(state_dict)


def _densenet(growth_rate: int, block_config: tuple[int, int, int, int], num_init_features: int,
              weights: WeightsEnum | None, progress: bool, **kwargs: Any) -> DenseNet:
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = DenseNet(growth_rate, block_config, num_init_features, **kwargs)
    if weights is not None:
        _load_state_dict(model=model, weights=weights, progress=progress)
    return model


_COMMON_META = _family_meta(
    (29, 29), "https://github.com/pytorch/vision/pull/116",
    "These weights are ported from LuaTorch.")


# each depth's ImageNet-1K weights: checkpoint, parameters, (acc@1, acc@5), GFLOPS, file size (MB)
_WEIGHTS = {
    "121": ("densenet121-a639ec97.pth", 7978856, (74.434, 91.972), 2.834, 30.845),
    "161": ("densenet161-8d451a50.pth", 28681000, (77.138, 93.56), 7.728, 110.369),
    "169": ("densenet169-b2777c0a.pth", 14149480, (75.6, 92.806), 3.36, 54.708),
    "201": ("densenet201-c1103571.pth", 20013928, (76.896, 93.37), 4.291, 77.373),
}


def _weights_enum(name: str, depth: str) -> type[WeightsEnum]:
    """The weights enum ``name`` (IMAGENET1K_V1 and DEFAULT) from the row of ``depth``."""
    return _imagenet1k_v1_enum(name, __name__, _WEIGHTS[depth],
                               partial(ImageClassification, crop_size=224), _COMMON_META)


DenseNet121_Weights = _weights_enum("DenseNet121_Weights", "121")
DenseNet161_Weights = _weights_enum("DenseNet161_Weights", "161")
DenseNet169_Weights = _weights_enum("DenseNet169_Weights", "169")
DenseNet201_Weights = _weights_enum("DenseNet201_Weights", "201")


densenet121 = _builder("densenet121", DenseNet121_Weights, DenseNet,
                       _densenet, 32, (6, 12, 24, 16), 64,
                       doc='DenseNet-121 from "Densely Connected Convolutional Networks"; '
                           "``kwargs`` go to ``DenseNet`` (``memory_efficient=True`` checkpoints "
                           "the bottlenecks).")
densenet161 = _builder("densenet161", DenseNet161_Weights, DenseNet,
                       _densenet, 48, (6, 12, 36, 24), 96,
                       doc="DenseNet-161.")
densenet169 = _builder("densenet169", DenseNet169_Weights, DenseNet,
                       _densenet, 32, (6, 12, 32, 32), 64,
                       doc="DenseNet-169.")
densenet201 = _builder("densenet201", DenseNet201_Weights, DenseNet,
                       _densenet, 32, (6, 12, 48, 32), 64,
                       doc="DenseNet-201.")
