"""SqueezeNet (Iandola et al. 2016): "fire" modules (a 1x1 squeeze convolution feeding parallel
1x1 and 3x3 expand convolutions, concatenated) and a convolutional classifier. Version 1.1 has a
smaller stem and pools earlier: 2.4 times less computation for the same accuracy."""

from functools import partial
from typing import Any

from ... import cat, flatten, nn
from ..._tensor import Tensor
from ...nn import init
from ..transforms._presets import ImageClassification
from ._api import WeightsEnum
from ._meta import _IMAGENET_CATEGORIES
from ._utils import _builder, _classifier, _imagenet1k_weights

__all__ = ["SqueezeNet", "SqueezeNet1_0_Weights", "SqueezeNet1_1_Weights", "squeezenet1_0",
           "squeezenet1_1"]


class Fire(nn.Module):
    """squeeze (1x1) + ReLU, then [expand1x1 + ReLU, expand3x3 + ReLU] concatenated."""

    def __init__(self, inplanes: int, squeeze_planes: int, expand1x1_planes: int,
                 expand3x3_planes: int) -> None:
        super().__init__()
        self.inplanes = inplanes
        self.squeeze = nn.Conv2d(inplanes, squeeze_planes, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_planes, expand1x1_planes, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_planes, expand3x3_planes, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x: Tensor) -> Tensor:
        x = self.squeeze_activation(self.squeeze(x))
        return cat([self.expand1x1_activation(self.expand1x1(x)),
                    self.expand3x3_activation(self.expand3x3(x))], 1)


# the features of each version: the stem convolution (output channels, kernel size; stride 2,
# then ReLU and max pooling), then the Fire modules (inplanes, squeeze, expand 1x1, expand 3x3)
# with "M" for a max pooling
_FEATURES: dict[str, tuple[tuple[int, int], list[Any]]] = {
    "1_0": ((96, 7), [(96, 16, 64, 64), (128, 16, 64, 64), (128, 32, 128, 128), "M",
                      (256, 32, 128, 128), (256, 48, 192, 192), (384, 48, 192, 192),
                      (384, 64, 256, 256), "M", (512, 64, 256, 256)]),
    "1_1": ((64, 3), [(64, 16, 64, 64), (128, 16, 64, 64), "M", (128, 32, 128, 128),
                      (256, 32, 128, 128), "M", (256, 48, 192, 192), (384, 48, 192, 192),
                      (384, 64, 256, 256), (512, 64, 256, 256)]),
}


class SqueezeNet(nn.Module):
    """``features`` (stem and fire modules), ``classifier`` (dropout, a 1x1 convolution to the
    classes, ReLU, global average pooling)."""

    def __init__(self, version: str = "1_0", num_classes: int = 1000,
                 dropout: float = 0.5) -> None:
        super().__init__()
        self.num_classes = num_classes
        pool = partial(nn.MaxPool2d, kernel_size=3, stride=2, ceil_mode=True)
        if version not in ("1_0", "1_1"):
            raise ValueError(f"Unsupported SqueezeNet version {version}: 1_0 or 1_1 expected")
        (stem_channels, stem_kernel), fires = _FEATURES[version]
        layers: list[nn.Module] = [nn.Conv2d(3, stem_channels, kernel_size=stem_kernel, stride=2),
                                   nn.ReLU(inplace=True), pool()]
        layers += [pool() if fire == "M" else Fire(*fire) for fire in fires]
        self.features = nn.Sequential(*layers)
        final_conv = nn.Conv2d(512, self.num_classes, kernel_size=1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout), final_conv, nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                if m is final_conv:
                    init.normal_(m.weight, mean=0.0, std=0.01)
                else:
                    init.kaiming_uniform_(m.weight)
                if m.bias is not None:
                    init.constant_(m.bias, 0)

    def forward(self, x: Tensor) -> Tensor:
        return flatten(self.classifier(self.features(x)), 1)


def _squeezenet(version: str, weights: WeightsEnum | None, progress: bool,
                **kwargs: Any) -> SqueezeNet:
    return _classifier(SqueezeNet, weights, progress, version, **kwargs)


_COMMON_META: dict[str, Any] = {
    "categories": _IMAGENET_CATEGORIES,
    "recipe": "https://github.com/pytorch/vision/pull/49#issuecomment-277560717",
    "_docs": "These weights reproduce closely the results of the paper using a simple training recipe.",  # noqa: E501
}


class SqueezeNet1_0_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "squeezenet1_0-b66bff10.pth", partial(ImageClassification, crop_size=224), _COMMON_META,
        min_size=(21, 21), num_params=1248424, acc=(58.092, 80.42), _ops=0.819, _file_size=4.778)
    DEFAULT = IMAGENET1K_V1


class SqueezeNet1_1_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "squeezenet1_1-b8a52dc0.pth", partial(ImageClassification, crop_size=224), _COMMON_META,
        min_size=(17, 17), num_params=1235496, acc=(58.178, 80.624), _ops=0.349, _file_size=4.729)
    DEFAULT = IMAGENET1K_V1


squeezenet1_0 = _builder("squeezenet1_0", SqueezeNet1_0_Weights, SqueezeNet, _squeezenet, "1_0",
                         doc='SqueezeNet 1.0 ("SqueezeNet: AlexNet-level accuracy with 50x fewer '
                             'parameters and <0.5MB model size"); ``kwargs`` go to '
                             "``SqueezeNet``.")
squeezenet1_1 = _builder("squeezenet1_1", SqueezeNet1_1_Weights, SqueezeNet, _squeezenet, "1_1",
                         doc="SqueezeNet 1.1, from the official SqueezeNet repository.")
