"""Building blocks the models share: a convolution followed by a normalization and an activation
(``Conv2dNormActivation``, ``Conv3dNormActivation``), squeeze-and-excitation, a multi-layer
perceptron, a permutation layer, and batch normalization with frozen statistics."""

import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ... import nn, ones, zeros
from ..._tensor import Tensor
from ...nn import functional as F

interpolate = F.interpolate


def _make_ntuple(x: Any, n: int) -> tuple:
    """``x`` as a tuple: an iterable as it is, anything else repeated ``n`` times."""
    if isinstance(x, Iterable):
        return tuple(x)
    return (x,) * n


class FrozenBatchNorm2d(nn.Module):
    """Batch normalization whose statistics and affine parameters are buffers, never updated:
    ``y = (x - running_mean) / sqrt(running_var + eps) * weight + bias`` in training too."""

    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", ones(num_features))
        self.register_buffer("bias", zeros(num_features))
        self.register_buffer("running_mean", zeros(num_features))
        self.register_buffer("running_var", ones(num_features))

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        # a BatchNorm2d's checkpoint loads: its batch counter has no place here
        state_dict.pop(prefix + "num_batches_tracked", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, x: Tensor) -> Tensor:
        # scale = weight / sqrt(var + eps); shift = bias - mean * scale; y = x * scale + shift
        w = self.weight.reshape(1, -1, 1, 1)
        b = self.bias.reshape(1, -1, 1, 1)
        rv = self.running_var.reshape(1, -1, 1, 1)
        rm = self.running_mean.reshape(1, -1, 1, 1)
        scale = w * (rv + self.eps).rsqrt()
        shift = b - rm * scale
        return x * scale + shift

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.weight.shape[0]}, eps={self.eps})"


class ConvNormActivation(nn.Sequential):
    """convolution, then ``norm_layer`` (if any), then ``activation_layer`` (if any), as one
    Sequential; the padding defaults to "same" for odd kernels (``(k - 1) // 2 * dilation``) and
    the convolution has a bias only when there is no normalization."""

    def __init__(self, in_channels: int, out_channels: int,
                 kernel_size: int | tuple[int, ...] = 3, stride: int | tuple[int, ...] = 1,
                 padding: int | tuple[int, ...] | str | None = None, groups: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm2d,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
                 dilation: int | tuple[int, ...] = 1, inplace: bool | None = True,
                 bias: bool | None = None,
                 conv_layer: Callable[..., nn.Module] = nn.Conv2d) -> None:
        if padding is None:
            if isinstance(kernel_size, int) and isinstance(dilation, int):
                padding = (kernel_size - 1) // 2 * dilation
            else:
                dims = (len(kernel_size) if isinstance(kernel_size, Sequence)
                        else len(dilation))  # type: ignore[arg-type]
                kernel_size = _make_ntuple(kernel_size, dims)
                dilation = _make_ntuple(dilation, dims)
                padding = tuple((kernel_size[i] - 1) // 2 * dilation[i] for i in range(dims))
        if bias is None:
            bias = norm_layer is None
        layers = [conv_layer(in_channels, out_channels, kernel_size, stride, padding,
                             dilation=dilation, groups=groups, bias=bias)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            params = {} if inplace is None else {"inplace": inplace}
            layers.append(activation_layer(**params))
        super().__init__(*layers)
        self.out_channels = out_channels
        if self.__class__ == ConvNormActivation:
            warnings.warn("Don't use ConvNormActivation directly, please use Conv2dNormActivation "
                          "and Conv3dNormActivation instead.", stacklevel=1)


class Conv2dNormActivation(ConvNormActivation):
    """``Conv2d`` -> normalization (default ``BatchNorm2d``) -> activation (default ``ReLU``)."""

    def __init__(self, in_channels: int, out_channels: int,
                 kernel_size: int | tuple[int, int] = 3, stride: int | tuple[int, int] = 1,
                 padding: int | tuple[int, int] | str | None = None, groups: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm2d,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
                 dilation: int | tuple[int, int] = 1, inplace: bool | None = True,
                 bias: bool | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups,
                         norm_layer, activation_layer, dilation, inplace, bias, nn.Conv2d)


class Conv3dNormActivation(ConvNormActivation):
    """``Conv3d`` -> normalization (default ``BatchNorm3d``) -> activation (default ``ReLU``)."""

    def __init__(self, in_channels: int, out_channels: int,
                 kernel_size: int | tuple[int, int, int] = 3,
                 stride: int | tuple[int, int, int] = 1,
                 padding: int | tuple[int, int, int] | str | None = None, groups: int = 1,
                 norm_layer: Callable[..., nn.Module] | None = nn.BatchNorm3d,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
                 dilation: int | tuple[int, int, int] = 1, inplace: bool | None = True,
                 bias: bool | None = None) -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, groups,
                         norm_layer, activation_layer, dilation, inplace, bias, nn.Conv3d)


class SqueezeExcitation(nn.Module):
    """Squeeze-and-excitation (Hu et al. 2017): the channels are rescaled by
    ``sigma(fc2(delta(fc1(mean over the image))))``, ``fc1``/``fc2`` being 1x1 convolutions to
    ``squeeze_channels`` and back, ``delta`` = ``activation``, ``sigma`` = ``scale_activation``."""

    def __init__(self, input_channels: int, squeeze_channels: int,
                 activation: Callable[..., nn.Module] = nn.ReLU,
                 scale_activation: Callable[..., nn.Module] = nn.Sigmoid) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, input: Tensor) -> Tensor:
        scale = self.avgpool(input)
        scale = self.activation(self.fc1(scale))
        return self.scale_activation(self.fc2(scale))

    def forward(self, input: Tensor) -> Tensor:
        return self._scale(input) * input


class MLP(nn.Sequential):
    """Linear layers of the widths in ``hidden_channels``: each but the last followed by
    ``norm_layer`` (if any), ``activation_layer`` and dropout; the last by dropout only.
    ``inplace`` (when not None) goes to the activation and the dropout layers."""

    def __init__(self, in_channels: int, hidden_channels: list[int],
                 norm_layer: Callable[..., nn.Module] | None = None,
                 activation_layer: Callable[..., nn.Module] | None = nn.ReLU,
                 inplace: bool | None = None, bias: bool = True, dropout: float = 0.0):
        params = {} if inplace is None else {"inplace": inplace}
        layers: list[nn.Module] = []
        width = in_channels
        for hidden in hidden_channels[:-1]:
            layers.append(nn.Linear(width, hidden, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden))
            layers.append(activation_layer(**params))  # type: ignore[misc]
            layers.append(nn.Dropout(dropout, **params))
            width = hidden
        layers.append(nn.Linear(width, hidden_channels[-1], bias=bias))
        layers.append(nn.Dropout(dropout, **params))
        super().__init__(*layers)


class Permute(nn.Module):
    """``x.permute(dims)`` as a layer (a view)."""

    def __init__(self, dims: list[int]):
        super().__init__()
        self.dims = dims

    def forward(self, x: Tensor) -> Tensor:
        return x.permute(self.dims)
