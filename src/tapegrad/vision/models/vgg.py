"""VGG (Simonyan and Zisserman 2014): stacks of 3x3 convolutions (optionally batch-normalized)
separated by max pooling, then three fully connected layers. Configurations "A", "B", "D", "E"
are VGG-11, 13, 16 and 19."""

from functools import partial
from typing import Any, cast

from ... import flatten, nn
from ..._tensor import Tensor
from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum
from ._meta import _IMAGENET_CATEGORIES
from ._utils import (
    _builder,
    _imagenet1k_weights,
    _load_weights,
    _ovewrite_named_param,
)

__all__ = [
    "VGG", "VGG11_Weights", "VGG11_BN_Weights", "VGG13_Weights", "VGG13_BN_Weights",
    "VGG16_Weights", "VGG16_BN_Weights", "VGG19_Weights", "VGG19_BN_Weights",
    "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
]


class VGG(nn.Module):
    """``features`` (given), ``avgpool`` to 7x7, ``classifier`` (three linear layers)."""

    def __init__(self, features: nn.Module, num_classes: int = 1000, init_weights: bool = True,
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.features = features
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, 4096),
            nn.ReLU(True),
            nn.Dropout(p=dropout),
            nn.Linear(4096, num_classes),
        )
        if init_weights:
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                    if m.bias is not None:
                        nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
                elif isinstance(m, nn.Linear):
                    nn.init.normal_(m.weight, 0, 0.01)
                    nn.init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))


def make_layers(cfg: list[str | int], batch_norm: bool = False) -> nn.Sequential:
    """The convolutional part of a configuration: a number is a 3x3 convolution to that many
    channels (+ BatchNorm2d) + ReLU, "M" a 2x2 max pooling."""
    layers: list[nn.Module] = []
    in_channels = 3
    for v in cfg:
        if v == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            continue
        v = cast(int, v)
        layers.append(nn.Conv2d(in_channels, v, kernel_size=3, padding=1))
        if batch_norm:
            layers.append(nn.BatchNorm2d(v))
        layers.append(nn.ReLU(inplace=True))
        in_channels = v
    return nn.Sequential(*layers)


cfgs: dict[str, list[str | int]] = {
    "A": [64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "B": [64, 64, "M", 128, 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M"],
    "D": [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"],
    "E": [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
          512, 512, 512, 512, "M"],
}


def _vgg(cfg: str, batch_norm: bool, weights: WeightsEnum | None, progress: bool,
         **kwargs: Any) -> VGG:
    if weights is not None:
        kwargs["init_weights"] = False
        if weights.meta["categories"] is not None:
            _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
    model = VGG(make_layers(cfgs[cfg], batch_norm=batch_norm), **kwargs)
    return _load_weights(model, weights, progress)


_COMMON_META: dict[str, Any] = {
    "min_size": (32, 32),
}

_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#alexnet-and-vgg"
_DOCS = "These weights were trained from scratch by using a simplified training recipe."


def _trained(checkpoint: str, num_params: int, acc: tuple[float, float], ops: float,
             file_size: float) -> Weights:
    """The ImageNet-1K weights of a VGG trained from scratch with the simplified recipe."""
    return _imagenet1k_weights(
        f"{checkpoint}.pth",
        partial(ImageClassification, crop_size=224), _COMMON_META, categories=_IMAGENET_CATEGORIES,
        recipe=_RECIPE, _docs=_DOCS, num_params=num_params, acc=acc, _ops=ops,
        _file_size=file_size)


class VGG11_Weights(WeightsEnum):
    IMAGENET1K_V1 = _trained("vgg11-8a719046", 132863336, (69.02, 88.628), 7.609, 506.84)
    DEFAULT = IMAGENET1K_V1


class VGG11_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _trained("vgg11_bn-6002323d", 132868840, (70.37, 89.81), 7.609, 506.881)
    DEFAULT = IMAGENET1K_V1


class VGG13_Weights(WeightsEnum):
    IMAGENET1K_V1 = _trained("vgg13-19584684", 133047848, (69.928, 89.246), 11.308, 507.545)
    DEFAULT = IMAGENET1K_V1


class VGG13_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _trained("vgg13_bn-abd245e5", 133053736, (71.586, 90.374), 11.308, 507.59)
    DEFAULT = IMAGENET1K_V1


class VGG16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _trained("vgg16-397923af", 138357544, (71.592, 90.382), 15.47, 527.796)
    IMAGENET1K_FEATURES = _imagenet1k_weights(
        "vgg16_features-amdegroot-88682ab5.pth",
        partial(ImageClassification, crop_size=224, mean=(0.48235, 0.45882, 0.40784),
                std=(1.0 / 255.0, 1.0 / 255.0, 1.0 / 255.0)),
        _COMMON_META, categories=None,
        recipe="https://github.com/amdegroot/ssd.pytorch#training-ssd",
        _docs=(
            "\n"
            "                These weights can't be used for classification because "
            "they are missing values in the `classifier`\n"
            "                module. Only the `features` module has valid values and "
            "can be used for feature extraction. The weights\n"
            "                were trained using the original input standardization method "
            "as described in the paper.\n"
            "            "
        ),
        num_params=138357544, acc=(float("nan"), float("nan")), _ops=15.47, _file_size=527.802)
    DEFAULT = IMAGENET1K_V1


class VGG16_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _trained("vgg16_bn-6c64b313", 138365992, (73.36, 91.516), 15.47, 527.866)
    DEFAULT = IMAGENET1K_V1


class VGG19_Weights(WeightsEnum):
    IMAGENET1K_V1 = _trained("vgg19-dcbb9e9d", 143667240, (72.376, 90.876), 19.632, 548.051)
    DEFAULT = IMAGENET1K_V1


class VGG19_BN_Weights(WeightsEnum):
    IMAGENET1K_V1 = _trained("vgg19_bn-c79401a0", 143678248, (74.218, 91.842), 19.632, 548.143)
    DEFAULT = IMAGENET1K_V1


vgg11 = _builder("vgg11", VGG11_Weights, VGG, _vgg, "A", False,
                 doc='VGG-11 (configuration "A") from "Very Deep Convolutional Networks for '
                     'Large-Scale Image Recognition"; ``kwargs`` go to ``VGG``.')
vgg11_bn = _builder("vgg11_bn", VGG11_BN_Weights, VGG, _vgg, "A", True,
                    doc="VGG-11 with batch normalization.")
vgg13 = _builder("vgg13", VGG13_Weights, VGG, _vgg, "B", False,
                 doc='VGG-13 (configuration "B").')
vgg13_bn = _builder("vgg13_bn", VGG13_BN_Weights, VGG, _vgg, "B", True,
                    doc="VGG-13 with batch normalization.")
vgg16 = _builder("vgg16", VGG16_Weights, VGG, _vgg, "D", False,
                 doc='VGG-16 (configuration "D").')
vgg16_bn = _builder("vgg16_bn", VGG16_BN_Weights, VGG, _vgg, "D", True,
                    doc="VGG-16 with batch normalization.")
vgg19 = _builder("vgg19", VGG19_Weights, VGG, _vgg, "E", False,
                 doc='VGG-19 (configuration "E").')
vgg19_bn = _builder("vgg19_bn", VGG19_BN_Weights, VGG, _vgg, "E", True,
                    doc="VGG-19 with batch normalization.")
