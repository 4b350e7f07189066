"""GoogLeNet (Szegedy et al. 2014, "Going Deeper with Convolutions"): inception modules (parallel
1x1, 3x3, "5x5" (a 3x3 here, as in torchvision's port) and pooled branches, concatenated), with
batch normalization, and two auxiliary classifiers that are used in training only."""

import warnings
from collections import namedtuple
from collections.abc import Callable
from functools import partial
from typing import Any

from ... import cat, flatten, nn, unsqueeze
from ..._tensor import Tensor
from ...nn import functional as F
from ..transforms._presets import ImageClassification
from ._api import WeightsEnum
from ._meta import _PORTED_DOCS, _family_meta
from ._utils import (
    M,
    _builder,
    _classifier,
    _imagenet1k_weights,
    _ovewrite_named_param,
)

__all__ = ["GoogLeNet", "GoogLeNetOutputs", "_GoogLeNetOutputs", "GoogLeNet_Weights",
           "googlenet"]

# what a model in training with auxiliary classifiers returns (otherwise just the logits)
GoogLeNetOutputs = namedtuple("GoogLeNetOutputs", ["logits", "aux_logits2", "aux_logits1"])
GoogLeNetOutputs.__annotations__ = {"logits": Tensor, "aux_logits2": Tensor | None,
                                    "aux_logits1": Tensor | None}
_GoogLeNetOutputs = GoogLeNetOutputs


def _renormalized(x: Tensor) -> Tensor:
    """An ImageNet-normalized batch as the ported GoogLeNet and Inception v3 weights expect it
    (``transform_input=True``): channel c becomes x * std_c / 0.5 + (mean_c - 0.5) / 0.5."""
    x_ch0 = unsqueeze(x[:, 0], 1) * (0.229 / 0.5) + (0.485 - 0.5) / 0.5
    x_ch1 = unsqueeze(x[:, 1], 1) * (0.224 / 0.5) + (0.456 - 0.5) / 0.5
    x_ch2 = unsqueeze(x[:, 2], 1) * (0.225 / 0.5) + (0.406 - 0.5) / 0.5
    return cat((x_ch0, x_ch1, x_ch2), 1)


def _init_truncated_normal(model: nn.Module, std: float) -> None:
    """GoogLeNet's and Inception v3's initialization: convolutions and linear layers truncated
    normal within 2 (std ``std``, or a layer's own ``stddev``), batch norms one and zero."""
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            # a layer may carry its own "stddev" (Inception's auxiliary classifier's fc does)
            layer_std = float(m.stddev) if hasattr(m, "stddev") else std
            nn.init.trunc_normal_(m.weight, mean=0.0, std=layer_std, a=-2, b=2)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)


class _InputRenormalizing(nn.Module):
    """The base of GoogLeNet and Inception v3: with ``transform_input``, ``_transform_input``
    re-normalizes the input as their ported weights expect it (``_renormalized``)."""

    transform_input: bool

    def _transform_input(self, x: Tensor) -> Tensor:
        return _renormalized(x) if self.transform_input else x


class GoogLeNet(_InputRenormalizing):
    """The network. ``transform_input`` re-normalizes an ImageNet-normalized input to the
    ``(x - 0.5) / 0.5`` scaling the original weights were trained with; ``blocks`` replaces
    the three block classes (convolution, inception, auxiliary classifier)."""

    __constants__ = ["aux_logits", "transform_input"]

    def __init__(self, num_classes: int = 1000, aux_logits: bool = True,
                 transform_input: bool = False, init_weights: bool | None = None,
                 blocks: list[Callable[..., nn.Module]] | None = None, dropout: float = 0.2,
                 dropout_aux: float = 0.7) -> None:
        super().__init__()
        if blocks is None:
            blocks = [BasicConv2d, Inception, InceptionAux]
        if init_weights is None:
            warnings.warn(
                "The default weight initialization of GoogleNet will be changed in future "
                "releases of torchvision. If you wish to keep the old behavior (which leads to "
                "long initialization times due to scipy/scipy#11299), please set "
                "init_weights=True.", FutureWarning, stacklevel=1)
            init_weights = True
        if len(blocks) != 3:
            raise ValueError(f"blocks length should be 3 instead of {len(blocks)}")
        conv_block, inception_block, inception_aux_block = blocks

        self.aux_logits = aux_logits
        self.transform_input = transform_input
        self.conv1 = conv_block(3, 64, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.conv2 = conv_block(64, 64, kernel_size=1)
        self.conv3 = conv_block(64, 192, kernel_size=3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception3a = inception_block(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = inception_block(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception4a = inception_block(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = inception_block(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = inception_block(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = inception_block(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = inception_block(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = nn.MaxPool2d(2, stride=2, ceil_mode=True)
        self.inception5a = inception_block(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = inception_block(832, 384, 192, 384, 48, 128, 128)
        if aux_logits:
            self.aux1 = inception_aux_block(512, num_classes, dropout=dropout_aux)
            self.aux2 = inception_aux_block(528, num_classes, dropout=dropout_aux)
        else:
            self.aux1 = None  # type: ignore[assignment]
            self.aux2 = None  # type: ignore[assignment]
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=dropout)
        self.fc = nn.Linear(1024, num_classes)

        if init_weights:
            _init_truncated_normal(self, 0.01)

    def _forward(self, x: Tensor) -> tuple[Tensor, Tensor | None, Tensor | None]:
        x = self.maxpool1(self.conv1(x))
        x = self.maxpool2(self.conv3(self.conv2(x)))
        x = self.inception3b(self.inception3a(x))
        x = self.inception4a(self.maxpool3(x))
        aux1 = self.aux1(x) if self.aux1 is not None and self.training else None
        x = self.inception4d(self.inception4c(self.inception4b(x)))
        aux2 = self.aux2(x) if self.aux2 is not None and self.training else None
        x = self.maxpool4(self.inception4e(x))
        x = self.inception5b(self.inception5a(x))
        x = flatten(self.avgpool(x), 1)
        x = self.fc(self.dropout(x))
        return x, aux2, aux1

    def eager_outputs(self, x: Tensor, aux2: Tensor | None,
                      aux1: Tensor | None) -> GoogLeNetOutputs:
        if self.training and self.aux_logits:
            return _GoogLeNetOutputs(x, aux2, aux1)
        return x  # type: ignore[return-value]

    def forward(self, x: Tensor) -> GoogLeNetOutputs:
        x = self._transform_input(x)
        x, aux2, aux1 = self._forward(x)
        return self.eager_outputs(x, aux2, aux1)


class Inception(nn.Module):
    """Four branches concatenated: 1x1; 1x1 then 3x3; 1x1 then 3x3; 3x3 max pooling then 1x1."""

    def __init__(self, in_channels: int, ch1x1: int, ch3x3red: int, ch3x3: int, ch5x5red: int,
                 ch5x5: int, pool_proj: int,
                 conv_block: Callable[..., nn.Module] | None = None) -> None:
        super().__init__()
        if conv_block is None:
            conv_block = BasicConv2d
        self.branch1 = conv_block(in_channels, ch1x1, kernel_size=1)
        self.branch2 = nn.Sequential(conv_block(in_channels, ch3x3red, kernel_size=1),
                                     conv_block(ch3x3red, ch3x3, kernel_size=3, padding=1))
        self.branch3 = nn.Sequential(conv_block(in_channels, ch5x5red, kernel_size=1),
                                     conv_block(ch5x5red, ch5x5, kernel_size=3, padding=1))
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=True),
            conv_block(in_channels, pool_proj, kernel_size=1),
        )

    def _forward(self, x: Tensor) -> list[Tensor]:
        return [self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)]

    def forward(self, x: Tensor) -> Tensor:
        return cat(self._forward(x), 1)


class InceptionAux(nn.Module):
    """An auxiliary classifier: 4x4 average pooling, a 1x1 convolution, two linear layers."""

    def __init__(self, in_channels: int, num_classes: int,
                 conv_block: Callable[..., nn.Module] | None = None,
                 dropout: float = 0.7) -> None:
        super().__init__()
        if conv_block is None:
            conv_block = BasicConv2d
        self.conv = conv_block(in_channels, 128, kernel_size=1)
        self.fc1 = nn.Linear(2048, 1024)
        self.fc2 = nn.Linear(1024, num_classes)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv(F.adaptive_avg_pool2d(x, (4, 4)))
        x = F.relu(self.fc1(flatten(x, 1)), inplace=True)
        return self.fc2(self.dropout(x))


class BasicConv2d(nn.Module):
    """Convolution without bias, batch norm (eps 0.001), ReLU."""

    def __init__(self, in_channels: int, out_channels: int, **kwargs: Any) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(out_channels, eps=0.001)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.bn(self.conv(x)), inplace=True)


_COMMON_META = _family_meta(
    (15, 15), "https://github.com/pytorch/vision/tree/main/references/classification#googlenet",
    _PORTED_DOCS)


class GoogLeNet_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "googlenet-1378be20.pth", partial(ImageClassification, crop_size=224), _COMMON_META,
        num_params=6624904, acc=(69.778, 89.53), _ops=1.498, _file_size=49.731)
    DEFAULT = IMAGENET1K_V1


def _with_aux_heads(model_class: Callable[..., M], weights: WeightsEnum | None, progress: bool,
                    kwargs: dict[str, Any], aux_logits_default: bool) -> tuple[M, bool]:
    """GoogLeNet or Inception v3 for ``weights``, and whether the caller asked for the auxiliary
    classifiers (``aux_logits``, by default ``aux_logits_default``). Pretrained weights need the
    input re-normalized (``transform_input``) unless told otherwise, the auxiliary classifiers
    their checkpoint holds and no initialization; the caller drops the classifiers it did not
    ask for."""
    asked_aux = kwargs.get("aux_logits", aux_logits_default)
    if weights is not None:
        if "transform_input" not in kwargs:
            _ovewrite_named_param(kwargs, "transform_input", True)
        _ovewrite_named_param(kwargs, "aux_logits", True)
        _ovewrite_named_param(kwargs, "init_weights", False)
    return _classifier(model_class, weights, progress, **kwargs), asked_aux


def _googlenet(weights: GoogLeNet_Weights | None, progress: bool, /, **kwargs: Any) -> GoogLeNet:
    """``googlenet`` once its weights are checked."""
    model, asked_aux = _with_aux_heads(GoogLeNet, weights, progress, kwargs, False)
    if weights is not None and not asked_aux:
        model.aux_logits = False
        model.aux1 = None  # type: ignore[assignment]
        model.aux2 = None  # type: ignore[assignment]
    elif weights is not None:
        warnings.warn("auxiliary heads in the pretrained googlenet model are NOT pretrained, "
                      "so make sure to train them", stacklevel=1)
    return model


googlenet = _builder("googlenet", GoogLeNet_Weights, GoogLeNet, _googlenet,
                     doc='GoogLeNet (Inception v1) from "Going Deeper with Convolutions"; '
                         "``kwargs`` go to ``GoogLeNet``. With weights, the input is "
                         "re-normalized (``transform_input=True``) unless told otherwise, and "
                         "the auxiliary classifiers (not pretrained) are dropped unless "
                         "``aux_logits=True``.")
