"""MaxViT (Tu et al. 2022, "MaxViT: Multi-Axis Vision Transformer"): each layer is an MBConv
block followed by two attention blocks: block attention (within non-overlapping windows of
``partition_size`` x ``partition_size`` pixels) and grid attention (among pixels spaced a grid
apart across the whole image), with relative position biases. The input size is fixed at
construction (224x224 by default) and must give block inputs divisible by the partition size."""

import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

from ... import arange, chunk, einsum, empty, flatten, meshgrid, nn, stack, swapaxes
from ... import float32 as _float32
from ..._tensor import Tensor
from ...nn import functional as F
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ..ops.stochastic_depth import StochasticDepth
from ..transforms._presets import ImageClassification, InterpolationMode
from ._api import WeightsEnum
from ._meta import _IMAGENET_CATEGORIES
from ._utils import (
    _builder,
    _imagenet1k_weights,
    _load_weights,
    _ovewrite_named_param,
)

__all__ = ["MaxVit", "MaxVit_T_Weights", "maxvit_t"]


def _assert(condition: bool, message: str) -> None:
    """``torch._assert``: an AssertionError with ``message`` unless ``condition``."""
    if not condition:
        raise AssertionError(message)


def _get_conv_output_shape(input_size: tuple[int, int], kernel_size: int, stride: int,
                           padding: int) -> tuple[int, int]:
    return ((input_size[0] - kernel_size + 2 * padding) // stride + 1,
            (input_size[1] - kernel_size + 2 * padding) // stride + 1)


def _make_block_input_shapes(input_size: tuple[int, int], n_blocks: int) -> list[tuple[int, int]]:
    """The sizes each block sees: the stem and every block halve the size (3x3, stride 2)."""
    shapes = []
    block_input_shape = _get_conv_output_shape(input_size, 3, 2, 1)
    for _ in range(n_blocks):
        block_input_shape = _get_conv_output_shape(block_input_shape, 3, 2, 1)
        shapes.append(block_input_shape)
    return shapes


def _get_relative_position_index(height: int, width: int) -> Tensor:
    """(h*w, h*w): the bias-table row of each pair of positions' offset."""
    coords = stack(meshgrid([arange(height), arange(width)], indexing="ij"))
    coords_flat = flatten(coords, 1)
    relative_coords = coords_flat[:, :, None] - coords_flat[:, None, :]
    relative_coords = relative_coords.permute(1, 2, 0).contiguous()
    relative_coords[:, :, 0] += height - 1
    relative_coords[:, :, 1] += width - 1
    relative_coords[:, :, 0] *= 2 * width - 1
    return relative_coords.sum(-1)


class MBConv(nn.Module):
    """Pre-normalized MBConv: norm, 1x1 expansion, depthwise 3x3 (strided), squeeze-excite, 1x1
    projection; plus a projection shortcut (average pooling and a 1x1 convolution) where the
    shape changes, and stochastic depth on the branch."""

    def __init__(self, in_channels: int, out_channels: int, expansion_ratio: float,
                 squeeze_ratio: float, stride: int, activation_layer: Callable[..., nn.Module],
                 norm_layer: Callable[..., nn.Module], p_stochastic_dropout: float = 0.0) -> None:
        super().__init__()
        proj: Sequence[nn.Module]
        self.proj: nn.Module
        should_proj = stride != 1 or in_channels != out_channels
        if should_proj:
            proj = [nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, bias=True)]
            if stride == 2:
                proj = [nn.AvgPool2d(kernel_size=3, stride=stride, padding=1)] + proj
            self.proj = nn.Sequential(*proj)
        else:
            self.proj = nn.Identity()

        mid_channels = int(out_channels * expansion_ratio)
        sqz_channels = int(out_channels * squeeze_ratio)
        if p_stochastic_dropout:
            self.stochastic_depth: nn.Module = StochasticDepth(p_stochastic_dropout, mode="row")
        else:
            self.stochastic_depth = nn.Identity()

        _layers: OrderedDict[str, nn.Module] = OrderedDict()
        _layers["pre_norm"] = norm_layer(in_channels)
        _layers["conv_a"] = Conv2dNormActivation(in_channels, mid_channels, kernel_size=1,
                                                 stride=1, padding=0,
                                                 activation_layer=activation_layer,
                                                 norm_layer=norm_layer, inplace=None)
        _layers["conv_b"] = Conv2dNormActivation(mid_channels, mid_channels, kernel_size=3,
                                                 stride=stride, padding=1,
                                                 activation_layer=activation_layer,
                                                 norm_layer=norm_layer, groups=mid_channels,
                                                 inplace=None)
        _layers["squeeze_excitation"] = SqueezeExcitation(mid_channels, sqz_channels,
                                                          activation=nn.SiLU)
        _layers["conv_c"] = nn.Conv2d(in_channels=mid_channels, out_channels=out_channels,
                                      kernel_size=1, bias=True)
        self.layers = nn.Sequential(_layers)

    def forward(self, x: Tensor) -> Tensor:
        res = self.proj(x)
        x = self.stochastic_depth(self.layers(x))
        return res + x


class RelativePositionalMultiHeadAttention(nn.Module):
    """Multi-head attention over the P positions of each of G partitions, with a learned bias
    per relative position and head; keys are scaled by ``feat_dim ** -0.5``."""

    def __init__(self, feat_dim: int, head_dim: int, max_seq_len: int) -> None:
        super().__init__()
        if feat_dim % head_dim != 0:
            raise ValueError(f"feat_dim: {feat_dim} must be divisible by head_dim: {head_dim}")
        self.n_heads = feat_dim // head_dim
        self.head_dim = head_dim
        self.size = int(math.sqrt(max_seq_len))
        self.max_seq_len = max_seq_len
        self.to_qkv = nn.Linear(feat_dim, self.n_heads * self.head_dim * 3)
        self.scale_factor = feat_dim ** -0.5
        self.merge = nn.Linear(self.head_dim * self.n_heads, feat_dim)
        self.relative_position_bias_table = nn.parameter.Parameter(
            empty(((2 * self.size - 1) * (2 * self.size - 1), self.n_heads), dtype=_float32))
        self.register_buffer("relative_position_index",
                             _get_relative_position_index(self.size, self.size))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def get_relative_positional_bias(self) -> Tensor:
        bias_index = self.relative_position_index.view(-1)
        relative_bias = self.relative_position_bias_table[bias_index].view(
            self.max_seq_len, self.max_seq_len, -1)
        relative_bias = relative_bias.permute(2, 0, 1).contiguous()
        return relative_bias.unsqueeze(0)

    def forward(self, x: Tensor) -> Tensor:
        B, G, P, D = x.shape
        H, DH = self.n_heads, self.head_dim
        qkv = self.to_qkv(x)
        q, k, v = chunk(qkv, 3, dim=-1)
        q = q.reshape(B, G, P, H, DH).permute(0, 1, 3, 2, 4)
        k = k.reshape(B, G, P, H, DH).permute(0, 1, 3, 2, 4)
        v = v.reshape(B, G, P, H, DH).permute(0, 1, 3, 2, 4)
        k = k * self.scale_factor
        dot_prod = einsum("B G H I D, B G H J D -> B G H I J", q, k)
        dot_prod = F.softmax(dot_prod + self.get_relative_positional_bias(), dim=-1)
        out = einsum("B G H I J, B G H J D -> B G H I D", dot_prod, v)
        out = out.permute(0, 1, 3, 2, 4).reshape(B, G, P, D)
        return self.merge(out)


class SwapAxes(nn.Module):
    """``x.swapaxes(a, b)`` as a layer."""

    def __init__(self, a: int, b: int) -> None:
        super().__init__()
        self.a = a
        self.b = b

    def forward(self, x: Tensor) -> Tensor:
        return swapaxes(x, self.a, self.b)


class WindowPartition(nn.Module):
    """(B, C, H, W) -> (B, (H/p)*(W/p), p*p, C): the p x p windows, positions within each."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: Tensor, p: int) -> Tensor:
        B, C, H, W = x.shape
        P = p
        x = x.reshape(B, C, H // P, P, W // P, P)
        x = x.permute(0, 2, 4, 3, 5, 1)
        return x.reshape(B, (H // P) * (W // P), P * P, C)


class WindowDepartition(nn.Module):
    """The inverse of ``WindowPartition``."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: Tensor, p: int, h_partitions: int, w_partitions: int) -> Tensor:
        B, G, PP, C = x.shape
        P = p
        HP, WP = h_partitions, w_partitions
        x = x.reshape(B, HP, WP, P, P, C)
        x = x.permute(0, 5, 1, 3, 2, 4)
        return x.reshape(B, C, HP * P, WP * P)


class PartitionAttentionLayer(nn.Module):
    """Attention within windows (``partition_type="window"``) or across a grid ("grid": the
    partition and position axes swapped), then an MLP, each residual with stochastic depth."""

    def __init__(self, in_channels: int, head_dim: int, partition_size: int,
                 partition_type: str, grid_size: tuple[int, int], mlp_ratio: int,
                 activation_layer: Callable[..., nn.Module],
                 norm_layer: Callable[..., nn.Module], attention_dropout: float,
                 mlp_dropout: float, p_stochastic_dropout: float) -> None:
        super().__init__()
        self.n_heads = in_channels // head_dim
        self.head_dim = head_dim
        self.n_partitions = grid_size[0] // partition_size
        self.partition_type = partition_type
        self.grid_size = grid_size
        if partition_type not in ["grid", "window"]:
            raise ValueError("partition_type must be either 'grid' or 'window'")
        if partition_type == "window":
            self.p, self.g = partition_size, self.n_partitions
        else:
            self.p, self.g = self.n_partitions, partition_size
        self.partition_op = WindowPartition()
        self.departition_op = WindowDepartition()
        self.partition_swap = SwapAxes(-2, -3) if partition_type == "grid" else nn.Identity()
        self.departition_swap = SwapAxes(-2, -3) if partition_type == "grid" else nn.Identity()
        self.attn_layer = nn.Sequential(
            norm_layer(in_channels),
            RelativePositionalMultiHeadAttention(in_channels, head_dim, partition_size ** 2),
            nn.Dropout(attention_dropout),
        )
        self.mlp_layer = nn.Sequential(
            nn.LayerNorm(in_channels),
            nn.Linear(in_channels, in_channels * mlp_ratio),
            activation_layer(),
            nn.Linear(in_channels * mlp_ratio, in_channels),
            nn.Dropout(mlp_dropout),
        )
        self.stochastic_dropout = StochasticDepth(p_stochastic_dropout, mode="row")

    def forward(self, x: Tensor) -> Tensor:
        gh, gw = self.grid_size[0] // self.p, self.grid_size[1] // self.p
        _assert(self.grid_size[0] % self.p == 0 and self.grid_size[1] % self.p == 0,
                "Grid size must be divisible by partition size. Got grid size of "
                f"{self.grid_size} and partition size of {self.p}")
        x = self.partition_swap(self.partition_op(x, self.p))
        x = x + self.stochastic_dropout(self.attn_layer(x))
        x = x + self.stochastic_dropout(self.mlp_layer(x))
        return self.departition_op(self.departition_swap(x), self.p, gh, gw)


class MaxVitLayer(nn.Module):
    """``MBconv``, then ``window_attention``, then ``grid_attention``."""

    def __init__(self, in_channels: int, out_channels: int, squeeze_ratio: float,
                 expansion_ratio: float, stride: int, norm_layer: Callable[..., nn.Module],
                 activation_layer: Callable[..., nn.Module], head_dim: int, mlp_ratio: int,
                 mlp_dropout: float, attention_dropout: float, p_stochastic_dropout: float,
                 partition_size: int, grid_size: tuple[int, int]) -> None:
        super().__init__()
        layers: OrderedDict = OrderedDict()
        layers["MBconv"] = MBConv(
            in_channels=in_channels, out_channels=out_channels, expansion_ratio=expansion_ratio,
            squeeze_ratio=squeeze_ratio, stride=stride, activation_layer=activation_layer,
            norm_layer=norm_layer, p_stochastic_dropout=p_stochastic_dropout)
        attention = partial(
            PartitionAttentionLayer, in_channels=out_channels, head_dim=head_dim,
            partition_size=partition_size, grid_size=grid_size, mlp_ratio=mlp_ratio,
            activation_layer=activation_layer, norm_layer=nn.LayerNorm,
            attention_dropout=attention_dropout, mlp_dropout=mlp_dropout,
            p_stochastic_dropout=p_stochastic_dropout)
        layers["window_attention"] = attention(partition_type="window")
        layers["grid_attention"] = attention(partition_type="grid")
        self.layers = nn.Sequential(layers)

    def forward(self, x: Tensor) -> Tensor:
        return self.layers(x)


class MaxVitBlock(nn.Module):
    """``n_layers`` MaxViT layers, the first strided; ``p_stochastic`` gives each layer's
    stochastic depth."""

    def __init__(self, in_channels: int, out_channels: int, squeeze_ratio: float,
                 expansion_ratio: float, norm_layer: Callable[..., nn.Module],
                 activation_layer: Callable[..., nn.Module], head_dim: int, mlp_ratio: int,
                 mlp_dropout: float, attention_dropout: float, partition_size: int,
                 input_grid_size: tuple[int, int], n_layers: int,
                 p_stochastic: list[float]) -> None:
        super().__init__()
        if not len(p_stochastic) == n_layers:
            raise ValueError(f"p_stochastic must have length n_layers={n_layers}, got "
                             f"p_stochastic={p_stochastic}.")
        self.layers = nn.ModuleList()
        self.grid_size = _get_conv_output_shape(input_grid_size, kernel_size=3, stride=2,
                                                padding=1)
        for idx, p in enumerate(p_stochastic):
            self.layers += [MaxVitLayer(
                in_channels=in_channels if idx == 0 else out_channels,
                out_channels=out_channels, squeeze_ratio=squeeze_ratio,
                expansion_ratio=expansion_ratio, stride=2 if idx == 0 else 1,
                norm_layer=norm_layer, activation_layer=activation_layer, head_dim=head_dim,
                mlp_ratio=mlp_ratio, mlp_dropout=mlp_dropout,
                attention_dropout=attention_dropout, partition_size=partition_size,
                grid_size=self.grid_size, p_stochastic_dropout=p)]

    def forward(self, x: Tensor) -> Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class MaxVit(nn.Module):
    """The network: a two-convolution stem, blocks of ``block_layers[i]`` layers with
    ``block_channels[i]`` channels, and a classifier (pooling, layer norm, linear + tanh,
    linear). Stochastic depth grows linearly from 0 to ``stochastic_depth_prob`` over the
    layers."""

    def __init__(self, input_size: tuple[int, int], stem_channels: int, partition_size: int,
                 block_channels: list[int], block_layers: list[int], head_dim: int,
                 stochastic_depth_prob: float,
                 norm_layer: Callable[..., nn.Module] | None = None,
                 activation_layer: Callable[..., nn.Module] = nn.GELU,
                 squeeze_ratio: float = 0.25, expansion_ratio: float = 4, mlp_ratio: int = 4,
                 mlp_dropout: float = 0.0, attention_dropout: float = 0.0,
                 num_classes: int = 1000) -> None:
        super().__init__()
        input_channels = 3
        if norm_layer is None:
            # TensorFlow's batch norm defaults (eps 1e-3, decay 0.99)
            norm_layer = partial(nn.BatchNorm2d, eps=1e-3, momentum=0.01)
        block_input_sizes = _make_block_input_shapes(input_size, len(block_channels))
        for idx, block_input_size in enumerate(block_input_sizes):
            if block_input_size[0] % partition_size != 0 or block_input_size[1] % partition_size != 0:  # noqa: E501
                raise ValueError(
                    f"Input size {block_input_size} of block {idx} is not divisible by partition "
                    f"size {partition_size}. Consider changing the partition size or the input "
                    f"size.\nCurrent configuration yields the following block input sizes: "
                    f"{block_input_sizes}.")

        self.stem = nn.Sequential(
            Conv2dNormActivation(input_channels, stem_channels, 3, stride=2,
                                 norm_layer=norm_layer, activation_layer=activation_layer,
                                 bias=False, inplace=None),
            Conv2dNormActivation(stem_channels, stem_channels, 3, stride=1, norm_layer=None,
                                 activation_layer=None, bias=True),
        )
        input_size = _get_conv_output_shape(input_size, kernel_size=3, stride=2, padding=1)
        self.partition_size = partition_size

        self.blocks = nn.ModuleList()
        in_channels = [stem_channels] + block_channels[:-1]
        out_channels = block_channels
        # the per-layer probabilities, spaced as NumPy's linspace spaces them
        p_stochastic = np.linspace(0, stochastic_depth_prob, sum(block_layers)).tolist()
        p_idx = 0
        for in_channel, out_channel, num_layers in zip(in_channels, out_channels, block_layers,
                                                        strict=False):
            self.blocks.append(MaxVitBlock(
                in_channels=in_channel, out_channels=out_channel, squeeze_ratio=squeeze_ratio,
                expansion_ratio=expansion_ratio, norm_layer=norm_layer,
                activation_layer=activation_layer, head_dim=head_dim, mlp_ratio=mlp_ratio,
                mlp_dropout=mlp_dropout, attention_dropout=attention_dropout,
                partition_size=partition_size, input_grid_size=input_size,
                n_layers=num_layers, p_stochastic=p_stochastic[p_idx:p_idx + num_layers]))
            input_size = self.blocks[-1].grid_size
            p_idx += num_layers

        self.classifier = nn.Sequential(
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.LayerNorm(block_channels[-1]),
            nn.Linear(block_channels[-1], block_channels[-1]),
            nn.Tanh(),
            nn.Linear(block_channels[-1], num_classes, bias=False),
        )
        self._init_weights()

    def forward(self, x: Tensor) -> Tensor:
        x = self.stem(x)
        for block in self.blocks:
            x = block(x)
        return self.classifier(x)

    def _init_weights(self) -> None:
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)


def _maxvit(stem_channels: int, block_channels: list[int], block_layers: list[int],
            stochastic_depth_prob: float, partition_size: int, head_dim: int,
            weights: WeightsEnum | None = None, progress: bool = False,
            **kwargs: Any) -> MaxVit:
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
        assert weights.meta["min_size"][0] == weights.meta["min_size"][1]
        _ovewrite_named_param(kwargs, "input_size", weights.meta["min_size"])
    input_size = kwargs.pop("input_size", (224, 224))
    model = MaxVit(stem_channels=stem_channels, block_channels=block_channels,
                   block_layers=block_layers, stochastic_depth_prob=stochastic_depth_prob,
                   head_dim=head_dim, partition_size=partition_size, input_size=input_size,
                   **kwargs)
    return _load_weights(model, weights, progress)


_COMMON_META: dict[str, Any] = {
    "categories": _IMAGENET_CATEGORIES,
    "min_size": (224, 224),
    "recipe": "https://github.com/pytorch/vision/tree/main/references/classification#maxvit",
    "_docs": (
        "These weights reproduce closely the results of the paper using a similar training "
        "recipe.\n"
        "            They were trained with a BatchNorm2D momentum of 0.99 instead of the "
        "more correct 0.01."
    ),
}


class MaxVit_T_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "maxvit_t-bc5ab103.pth",
        partial(ImageClassification, crop_size=224, resize_size=224,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, num_params=30919624, acc=(83.7, 96.722), _ops=5.558, _file_size=118.769)
    DEFAULT = IMAGENET1K_V1


maxvit_t = _builder("maxvit_t", MaxVit_T_Weights, MaxVit,
                    _maxvit, stem_channels=64, block_channels=[64, 128, 256, 512],
                    block_layers=[2, 2, 5, 2], head_dim=32, stochastic_depth_prob=0.2,
                    partition_size=7,
                    doc='MaxViT-T ("MaxViT: Multi-Axis Vision Transformer"); ``kwargs`` go to '
                        "``MaxVit`` (``input_size`` defaults to (224, 224)).")
