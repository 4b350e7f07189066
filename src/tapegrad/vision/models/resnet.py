"""ResNet (He et al. 2015, "Deep Residual Learning for Image Recognition"), with its variants
ResNeXt (grouped convolutions) and Wide ResNet (wider bottlenecks).

A stem (7x7 convolution, batch norm, ReLU, max pooling), four stages of residual blocks
(``layer1``..``layer4``; each after the first halves the resolution), global average pooling
and a linear classifier. ``BasicBlock`` (two 3x3 convolutions) builds ResNet-18/34,
``Bottleneck`` (1x1, 3x3, 1x1, four times wider out) the deeper ones; the stride sits on the 3x3
convolution ("ResNet v1.5")."""

from collections.abc import Callable
from functools import partial
from typing import Any

from ... import flatten, nn
from ..._tensor import Tensor
from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum
from ._meta import (
    _IMAGENET_META,
    _NEW_RECIPE,
    _NEW_RECIPE_DOCS,
    _NEW_RECIPE_FIXRES,
    _SIMPLE_RECIPE_DOCS,
)
from ._utils import (
    _builder,
    _classifier,
    _imagenet1k_weights,
    _ovewrite_named_param,
)

__all__ = [
    "ResNet", "ResNet18_Weights", "ResNet34_Weights", "ResNet50_Weights", "ResNet101_Weights",
    "ResNet152_Weights", "ResNeXt50_32X4D_Weights", "ResNeXt101_32X8D_Weights",
    "ResNeXt101_64X4D_Weights", "Wide_ResNet50_2_Weights", "Wide_ResNet101_2_Weights",
    "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
    "resnext101_32x8d", "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2",
]


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1,
            dilation: int = 1) -> nn.Conv2d:
    """A 3x3 convolution without bias, padded to keep the size (at stride 1)."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation,
                     groups=groups, bias=False, dilation=dilation)


def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
    """A 1x1 convolution without bias."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    """``relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x))``, shortcut = ``downsample`` or x."""

    expansion: int = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1,
                 downsample: nn.Module | None = None, groups: int = 1, base_width: int = 64,
                 dilation: int = 1, norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        if groups != 1 or base_width != 64:
            raise ValueError("BasicBlock only supports groups=1 and base_width=64")
        if dilation > 1:
            raise NotImplementedError("Dilation > 1 not supported in BasicBlock")
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    """1x1 convolution down to ``width``, 3x3 (strided, grouped), 1x1 up to ``4 * planes``, each
    batch-normalized, ReLU between and after the residual sum."""

    expansion: int = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1,
                 downsample: nn.Module | None = None, groups: int = 1, base_width: int = 64,
                 dilation: int = 1, norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        width = int(planes * (base_width / 64.0)) * groups
        self.conv1 = conv1x1(inplanes, width)
        self.bn1 = norm_layer(width)
        self.conv2 = conv3x3(width, width, stride, groups, dilation)
        self.bn2 = norm_layer(width)
        self.conv3 = conv1x1(width, planes * self.expansion)
        self.bn3 = norm_layer(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    """The network: ``block`` repeated ``layers[i]`` times in stage i.

    ``zero_init_residual`` starts each block's last batch norm at zero (every block the identity
    at first); ``groups``/``width_per_group`` make ResNeXt and Wide ResNet;
    ``replace_stride_with_dilation`` (three flags, for stages 2-4) trades a stage's stride for
    dilation, keeping the resolution (for segmentation backbones).
    """

    def __init__(self, block: type[BasicBlock | Bottleneck], layers: list[int],
                 num_classes: int = 1000, zero_init_residual: bool = False, groups: int = 1,
                 width_per_group: int = 64,
                 replace_stride_with_dilation: list[bool] | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self._norm_layer = norm_layer
        self.inplanes = 64
        self.dilation = 1
        if replace_stride_with_dilation is None:
            replace_stride_with_dilation = [False, False, False]
        if len(replace_stride_with_dilation) != 3:
            raise ValueError("replace_stride_with_dilation should be None or a 3-element tuple, "
                             f"got {replace_stride_with_dilation}")
        self.groups = groups
        self.base_width = width_per_group
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = norm_layer(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(block, 64, layers[0])
        self.layer2 = self._make_layer(block, 128, layers[1], stride=2,
                                       dilate=replace_stride_with_dilation[0])
        self.layer3 = self._make_layer(block, 256, layers[2], stride=2,
                                       dilate=replace_stride_with_dilation[1])
        self.layer4 = self._make_layer(block, 512, layers[3], stride=2,
                                       dilate=replace_stride_with_dilation[2])
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * block.expansion, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
        if zero_init_residual:  # Goyal et al. 2017: each block starts as the identity
            for m in self.modules():
                if isinstance(m, Bottleneck) and m.bn3.weight is not None:
                    nn.init.constant_(m.bn3.weight, 0)
                elif isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

    def _make_layer(self, block: type[BasicBlock | Bottleneck], planes: int, blocks: int,
                    stride: int = 1, dilate: bool = False) -> nn.Sequential:
        norm_layer = self._norm_layer
        downsample = None
        previous_dilation = self.dilation
        if dilate:
            self.dilation *= stride
            stride = 1
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * block.expansion, stride),
                norm_layer(planes * block.expansion),
            )
        layers = [block(self.inplanes, planes, stride, downsample, self.groups, self.base_width,
                        previous_dilation, norm_layer)]
        self.inplanes = planes * block.expansion
        for _ in range(1, blocks):
            layers.append(block(self.inplanes, planes, groups=self.groups,
                                base_width=self.base_width, dilation=self.dilation,
                                norm_layer=norm_layer))
        return nn.Sequential(*layers)

    def _forward_impl(self, x: Tensor) -> Tensor:
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = self.avgpool(x)
        return self.fc(flatten(x, 1))

    def forward(self, x: Tensor) -> Tensor:
        return self._forward_impl(x)


def _resnet(block: type[BasicBlock | Bottleneck], layers: list[int],
            weights: WeightsEnum | None, progress: bool, **kwargs: Any) -> ResNet:
    return _classifier(ResNet, weights, progress, block, layers, **kwargs)


def _grouped(block: type[BasicBlock | Bottleneck], layers: list[int], fixed: dict[str, int],
             weights: WeightsEnum | None, progress: bool, /, **kwargs: Any) -> ResNet:
    """A ResNeXt or wide ResNet: ``_resnet`` with the keywords ``fixed`` (``groups``,
    ``width_per_group``) set; the caller may repeat them, not change them."""
    for param, value in fixed.items():
        _ovewrite_named_param(kwargs, param, value)
    return _resnet(block, layers, weights, progress, **kwargs)


_RESNET_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#resnet"
_RESNEXT_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#resnext"
_WIDE_RESNET_RECIPE = "https://github.com/pytorch/vision/pull/912#issue-445437439"
_RESNET50_V2_RECIPE = "https://github.com/pytorch/vision/issues/3995#issuecomment-1013906621"
_IMPROVED_DOCS = (
    "\n"
    "                These weights improve upon the results of the original "
    "paper by using TorchVision's `new training recipe\n"
    "                <https://pytorch.org/blog/how-to-train-state-of-the-art-models-using-torchvision-latest-primitives/>`_.\n"  # noqa: E501
    "            "
)


def _original(checkpoint: str, num_params: int, recipe: str, acc: tuple[float, float],
              ops: float, file_size: float) -> Weights:
    """The first ImageNet-1K weights of a ResNet, trained with a simple recipe."""
    return _imagenet1k_weights(
        checkpoint, partial(ImageClassification, crop_size=224), _IMAGENET_META,
        num_params=num_params, recipe=recipe, acc=acc, _ops=ops, _file_size=file_size,
        _docs=_SIMPLE_RECIPE_DOCS)


def _improved(checkpoint: str, num_params: int, recipe: str, acc: tuple[float, float],
              ops: float, file_size: float) -> Weights:
    """The ImageNet-1K weights of a ResNet retrained with TorchVision's new recipe, evaluated
    on the 224 center crop of a resize to 232."""
    return _imagenet1k_weights(
        checkpoint, partial(ImageClassification, crop_size=224, resize_size=232), _IMAGENET_META,
        num_params=num_params, recipe=recipe, acc=acc, _ops=ops, _file_size=file_size,
        _docs=_IMPROVED_DOCS)


class ResNet18_Weights(WeightsEnum):
    IMAGENET1K_V1 = _original(
        "resnet18-f37072fd.pth", 11689512, _RESNET_RECIPE, (69.758, 89.078), 1.814, 44.661)
    DEFAULT = IMAGENET1K_V1


class ResNet34_Weights(WeightsEnum):
    IMAGENET1K_V1 = _original(
        "resnet34-b627a593.pth", 21797672, _RESNET_RECIPE, (73.314, 91.42), 3.664, 83.275)
    DEFAULT = IMAGENET1K_V1


class ResNet50_Weights(WeightsEnum):
    IMAGENET1K_V1 = _original(
        "resnet50-0676ba61.pth", 25557032, _RESNET_RECIPE, (76.13, 92.862), 4.089, 97.781)
    IMAGENET1K_V2 = _improved(
        "resnet50-11ad3fa6.pth", 25557032, _RESNET50_V2_RECIPE, (80.858, 95.434), 4.089, 97.79)
    DEFAULT = IMAGENET1K_V2


class ResNet101_Weights(WeightsEnum):
    IMAGENET1K_V1 = _original(
        "resnet101-63fe2227.pth", 44549160, _RESNET_RECIPE, (77.374, 93.546), 7.801, 170.511)
    IMAGENET1K_V2 = _improved(
        "resnet101-cd907fc2.pth", 44549160, _NEW_RECIPE, (81.886, 95.78), 7.801, 170.53)
    DEFAULT = IMAGENET1K_V2


class ResNet152_Weights(WeightsEnum):
    IMAGENET1K_V1 = _original(
        "resnet152-394f9c45.pth", 60192808, _RESNET_RECIPE, (78.312, 94.046), 11.514, 230.434)
    IMAGENET1K_V2 = _improved(
        "resnet152-f82ba261.pth", 60192808, _NEW_RECIPE, (82.284, 96.002), 11.514, 230.474)
    DEFAULT = IMAGENET1K_V2


class ResNeXt50_32X4D_Weights(WeightsEnum):
    IMAGENET1K_V1 = _original(
        "resnext50_32x4d-7cdf4587.pth", 25028904, _RESNEXT_RECIPE, (77.618, 93.698), 4.23, 95.789)
    IMAGENET1K_V2 = _improved(
        "resnext50_32x4d-1a0047aa.pth", 25028904, _NEW_RECIPE, (81.198, 95.34), 4.23, 95.833)
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_32X8D_Weights(WeightsEnum):
    IMAGENET1K_V1 = _original(
        "resnext101_32x8d-8ba56ff5.pth", 88791336, _RESNEXT_RECIPE,
        (79.312, 94.526), 16.414, 339.586)
    IMAGENET1K_V2 = _improved(
        "resnext101_32x8d-110c445d.pth", 88791336, _NEW_RECIPE_FIXRES,
        (82.834, 96.228), 16.414, 339.673)
    DEFAULT = IMAGENET1K_V2


class ResNeXt101_64X4D_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "resnext101_64x4d-173b62eb.pth",
        partial(ImageClassification, crop_size=224, resize_size=232), _IMAGENET_META,
        num_params=83455272, recipe="https://github.com/pytorch/vision/pull/5935",
        acc=(83.246, 96.454), _ops=15.46, _file_size=319.318, _docs=_NEW_RECIPE_DOCS)
    DEFAULT = IMAGENET1K_V1


class Wide_ResNet50_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _original(
        "wide_resnet50_2-95faca4d.pth", 68883240, _WIDE_RESNET_RECIPE,
        (78.468, 94.086), 11.398, 131.82)
    IMAGENET1K_V2 = _improved(
        "wide_resnet50_2-9ba9bcbe.pth", 68883240, _NEW_RECIPE_FIXRES,
        (81.602, 95.758), 11.398, 263.124)
    DEFAULT = IMAGENET1K_V2


class Wide_ResNet101_2_Weights(WeightsEnum):
    IMAGENET1K_V1 = _original(
        "wide_resnet101_2-32ee1156.pth", 126886696, _WIDE_RESNET_RECIPE,
        (78.848, 94.284), 22.753, 242.896)
    IMAGENET1K_V2 = _improved(
        "wide_resnet101_2-d733dc28.pth", 126886696, _NEW_RECIPE, (82.51, 96.02), 22.753, 484.747)
    DEFAULT = IMAGENET1K_V2


resnet18 = _builder("resnet18", ResNet18_Weights, ResNet, _resnet, BasicBlock, [2, 2, 2, 2],
                    doc='ResNet-18 from "Deep Residual Learning for Image Recognition"; '
                        "``weights`` a member of ``ResNet18_Weights`` or None, ``kwargs`` go to "
                        "``ResNet``.")
resnet34 = _builder("resnet34", ResNet34_Weights, ResNet, _resnet, BasicBlock, [3, 4, 6, 3],
                    doc="ResNet-34.")
resnet50 = _builder("resnet50", ResNet50_Weights, ResNet, _resnet, Bottleneck, [3, 4, 6, 3],
                    doc="ResNet-50 (bottleneck blocks, the stride on the 3x3 convolution).")
resnet101 = _builder("resnet101", ResNet101_Weights, ResNet, _resnet, Bottleneck, [3, 4, 23, 3],
                     doc="ResNet-101.")
resnet152 = _builder("resnet152", ResNet152_Weights, ResNet, _resnet, Bottleneck, [3, 8, 36, 3],
                     doc="ResNet-152.")
resnext50_32x4d = _builder("resnext50_32x4d", ResNeXt50_32X4D_Weights, ResNet,
                           _grouped, Bottleneck, [3, 4, 6, 3], {"groups": 32, "width_per_group": 4},
                           doc='ResNeXt-50 32x4d ("Aggregated Residual Transformations for Deep '
                               'Neural Networks").')
resnext101_32x8d = _builder("resnext101_32x8d", ResNeXt101_32X8D_Weights, ResNet,
                            _grouped, Bottleneck, [3, 4, 23, 3],
                            {"groups": 32, "width_per_group": 8},
                            doc="ResNeXt-101 32x8d.")
resnext101_64x4d = _builder("resnext101_64x4d", ResNeXt101_64X4D_Weights, ResNet,
                            _grouped, Bottleneck, [3, 4, 23, 3],
                            {"groups": 64, "width_per_group": 4},
                            doc="ResNeXt-101 64x4d.")
wide_resnet50_2 = _builder("wide_resnet50_2", Wide_ResNet50_2_Weights, ResNet,
                           _grouped, Bottleneck, [3, 4, 6, 3], {"width_per_group": 64 * 2},
                           doc='Wide ResNet-50-2 ("Wide Residual Networks"): bottlenecks twice '
                               "as wide.")
wide_resnet101_2 = _builder("wide_resnet101_2", Wide_ResNet101_2_Weights, ResNet,
                            _grouped, Bottleneck, [3, 4, 23, 3], {"width_per_group": 64 * 2},
                            doc="Wide ResNet-101-2.")
