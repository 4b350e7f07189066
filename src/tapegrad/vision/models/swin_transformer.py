"""Swin Transformer (Liu et al. 2021, "Swin Transformer: Hierarchical Vision Transformer using
Shifted Windows") and Swin V2 (Liu et al. 2022, "Swin Transformer V2: Scaling Up Capacity and
Resolution").

Self-attention runs inside non-overlapping windows of ``window_size`` patches, the windows of
every other block shifted by half a window (with a mask so that patches brought together by the
cyclic shift do not attend to each other), with a learned bias per relative position; patch
merging halves the resolution and doubles the channels between stages. V2 normalizes the
residual branches after (not before) the blocks, attends by scaled cosine similarity, and draws
the position bias from a small MLP over log-spaced relative coordinates."""

import math
from collections.abc import Callable
from functools import partial
from typing import Any

from ... import abs as _abs
from ... import (
    arange,
    cat,
    clamp,
    flatten,
    log,
    log2,
    meshgrid,
    nn,
    ones,
    roll,
    sigmoid,
    sign,
    stack,
    zeros,
)
from ... import float32 as _float32
from ..._tensor import Tensor
from ...nn import functional as F
from ..ops.misc import MLP, Permute
from ..ops.stochastic_depth import StochasticDepth
from ..transforms._presets import ImageClassification, InterpolationMode
from ._api import WeightsEnum
from ._meta import _IMAGENET_CATEGORIES
from ._utils import _builder, _classifier, _imagenet1k_weights

__all__ = ["SwinTransformer", "Swin_T_Weights", "Swin_S_Weights", "Swin_B_Weights",
           "Swin_V2_T_Weights", "Swin_V2_S_Weights", "Swin_V2_B_Weights", "swin_t", "swin_s",
           "swin_b", "swin_v2_t", "swin_v2_s", "swin_v2_b"]


def _patch_merging_pad(x: Tensor) -> Tensor:
    """(..., H, W, C) -> (..., H/2, W/2, 4C): the four pixels of each 2x2 cell side by side
    (an odd size padded with zeros first)."""
    H, W, _ = x.shape[-3:]
    x = F.pad(x, (0, 0, 0, W % 2, 0, H % 2))
    x0 = x[..., 0::2, 0::2, :]
    x1 = x[..., 1::2, 0::2, :]
    x2 = x[..., 0::2, 1::2, :]
    x3 = x[..., 1::2, 1::2, :]
    return cat([x0, x1, x2, x3], -1)


def _get_relative_position_bias(relative_position_bias_table: Tensor,
                                relative_position_index: Tensor,
                                window_size: list[int]) -> Tensor:
    """The (1, heads, N, N) bias of every pair of a window's N patches, looked up by their
    relative position."""
    N = window_size[0] * window_size[1]
    relative_position_bias = relative_position_bias_table[relative_position_index]
    relative_position_bias = relative_position_bias.view(N, N, -1)
    return relative_position_bias.permute(2, 0, 1).contiguous().unsqueeze(0)


class PatchMerging(nn.Module):
    """Concatenate each 2x2 cell's features, layer norm, linear 4C -> 2C."""

    def __init__(self, dim: int, norm_layer: Callable[..., nn.Module] = nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(4 * dim)

    def forward(self, x: Tensor) -> Tensor:
        return self.reduction(self.norm(_patch_merging_pad(x)))


class PatchMergingV2(nn.Module):
    """V2: the linear first, the layer norm on its 2C outputs."""

    def __init__(self, dim: int, norm_layer: Callable[..., nn.Module] = nn.LayerNorm):
        super().__init__()
        self.dim = dim
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = norm_layer(2 * dim)

    def forward(self, x: Tensor) -> Tensor:
        return self.norm(self.reduction(_patch_merging_pad(x)))


def shifted_window_attention(input: Tensor, qkv_weight: Tensor, proj_weight: Tensor,
                             relative_position_bias: Tensor, window_size: list[int],
                             num_heads: int, shift_size: list[int],
                             attention_dropout: float = 0.0, dropout: float = 0.0,
                             qkv_bias: Tensor | None = None, proj_bias: Tensor | None = None,
                             logit_scale: Tensor | None = None,
                             training: bool = True) -> Tensor:
    """Multi-head self-attention within (shifted) windows of a (B, H, W, C) input.

    The input is padded to whole windows and rolled by ``-shift_size``; each window's patches
    attend to each other (``softmax(q k^T / sqrt(d) + bias + mask) v``, or with V2's
    ``logit_scale``, ``softmax(cos(q, k) * scale + bias + mask) v``), where the mask is -100
    between patches from different regions of the unrolled image; the result is rolled back
    and cropped. A shift is dropped along a dimension that one window covers.
    """
    B, H, W, C = input.shape
    # pad to a multiple of the window size
    pad_r = (window_size[1] - W % window_size[1]) % window_size[1]
    pad_b = (window_size[0] - H % window_size[0]) % window_size[0]
    x = F.pad(input, (0, 0, 0, pad_r, 0, pad_b))
    _, pad_H, pad_W, _ = x.shape

    shift_size = shift_size.copy()
    if window_size[0] >= pad_H:
        shift_size[0] = 0
    if window_size[1] >= pad_W:
        shift_size[1] = 0
    if sum(shift_size) > 0:
        x = roll(x, shifts=(-shift_size[0], -shift_size[1]), dims=(1, 2))

    # (B, H, W, C) -> (B * windows, patches per window, C)
    num_windows = (pad_H // window_size[0]) * (pad_W // window_size[1])
    x = x.view(B, pad_H // window_size[0], window_size[0], pad_W // window_size[1],
               window_size[1], C)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(B * num_windows, window_size[0] * window_size[1], C)

    if logit_scale is not None and qkv_bias is not None:
        # V2 has no key bias: the middle third of the qkv bias is held at zero
        qkv_bias = qkv_bias.clone()
        length = qkv_bias.numel() // 3
        qkv_bias[length:2 * length].zero_()
    qkv = F.linear(x, qkv_weight, qkv_bias)
    qkv = qkv.reshape(x.size(0), x.size(1), 3, num_heads, C // num_heads).permute(2, 0, 3, 1, 4)
    q, k, v = qkv[0], qkv[1], qkv[2]
    if logit_scale is not None:
        # cosine attention, the learned temperature capped at 100
        attn = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        logit_scale = clamp(logit_scale, max=math.log(100.0)).exp()
        attn = attn * logit_scale
    else:
        q = q * (C // num_heads) ** -0.5
        attn = q.matmul(k.transpose(-2, -1))
    attn = attn + relative_position_bias

    if sum(shift_size) > 0:
        # label the nine regions of the rolled image; patches of different regions never meet
        attn_mask = x.new_zeros((pad_H, pad_W))
        h_slices = ((0, -window_size[0]), (-window_size[0], -shift_size[0]),
                    (-shift_size[0], None))
        w_slices = ((0, -window_size[1]), (-window_size[1], -shift_size[1]),
                    (-shift_size[1], None))
        count = 0
        for h in h_slices:
            for w in w_slices:
                attn_mask[h[0]:h[1], w[0]:w[1]] = count
                count += 1
        attn_mask = attn_mask.view(pad_H // window_size[0], window_size[0],
                                   pad_W // window_size[1], window_size[1])
        attn_mask = attn_mask.permute(0, 2, 1, 3).reshape(num_windows,
                                                           window_size[0] * window_size[1])
        attn_mask = attn_mask.unsqueeze(1) - attn_mask.unsqueeze(2)
        attn_mask = attn_mask.masked_fill(attn_mask != 0, -100.0).masked_fill(
            attn_mask == 0, 0.0)
        attn = attn.view(x.size(0) // num_windows, num_windows, num_heads, x.size(1), x.size(1))
        attn = attn + attn_mask.unsqueeze(1).unsqueeze(0)
        attn = attn.view(-1, num_heads, x.size(1), x.size(1))

    attn = F.softmax(attn, dim=-1)
    attn = F.dropout(attn, p=attention_dropout, training=training)
    x = attn.matmul(v).transpose(1, 2).reshape(x.size(0), x.size(1), C)
    x = F.linear(x, proj_weight, proj_bias)
    x = F.dropout(x, p=dropout, training=training)

    # the windows back into the image, unrolled and cropped
    x = x.view(B, pad_H // window_size[0], pad_W // window_size[1], window_size[0],
               window_size[1], C)
    x = x.permute(0, 1, 3, 2, 4, 5).reshape(B, pad_H, pad_W, C)
    if sum(shift_size) > 0:
        x = roll(x, shifts=(shift_size[0], shift_size[1]), dims=(1, 2))
    return x[:, :H, :W, :].contiguous()


class ShiftedWindowAttention(nn.Module):
    """The attention of a Swin block: ``qkv`` and ``proj`` linears, and a learned bias table
    with one entry per relative position and head (N(0, 0.02), truncated)."""

    def __init__(self, dim: int, window_size: list[int], shift_size: list[int], num_heads: int,
                 qkv_bias: bool = True, proj_bias: bool = True, attention_dropout: float = 0.0,
                 dropout: float = 0.0):
        super().__init__()
        if len(window_size) != 2 or len(shift_size) != 2:
            raise ValueError("window_size and shift_size must be of length 2")
        self.window_size = window_size
        self.shift_size = shift_size
        self.num_heads = num_heads
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim, bias=proj_bias)
        self.define_relative_position_bias_table()
        self.define_relative_position_index()

    def define_relative_position_bias_table(self) -> None:
        self.relative_position_bias_table = nn.Parameter(zeros(
            (2 * self.window_size[0] - 1) * (2 * self.window_size[1] - 1), self.num_heads))
        nn.init.trunc_normal_(self.relative_position_bias_table, std=0.02)

    def define_relative_position_index(self) -> None:
        """``relative_position_index[i * N + j]``: the table row of patches i and j's offset."""
        coords_h = arange(self.window_size[0])
        coords_w = arange(self.window_size[1])
        coords = stack(meshgrid(coords_h, coords_w, indexing="ij"))  # 2, Wh, Ww
        coords_flatten = flatten(coords, 1)  # 2, Wh*Ww
        relative_coords = coords_flatten[:, :, None] - coords_flatten[:, None, :]
        relative_coords = relative_coords.permute(1, 2, 0).contiguous()  # Wh*Ww, Wh*Ww, 2
        relative_coords[:, :, 0] += self.window_size[0] - 1  # offsets from 0
        relative_coords[:, :, 1] += self.window_size[1] - 1
        relative_coords[:, :, 0] *= 2 * self.window_size[1] - 1
        relative_position_index = relative_coords.sum(-1).flatten()  # Wh*Ww*Wh*Ww
        self.register_buffer("relative_position_index", relative_position_index)

    def get_relative_position_bias(self) -> Tensor:
        return _get_relative_position_bias(self.relative_position_bias_table,
                                           self.relative_position_index, self.window_size)

    def forward(self, x: Tensor) -> Tensor:
        return shifted_window_attention(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(),
            self.window_size, self.num_heads, shift_size=self.shift_size,
            attention_dropout=self.attention_dropout, dropout=self.dropout,
            qkv_bias=self.qkv.bias, proj_bias=self.proj.bias, training=self.training)


class ShiftedWindowAttentionV2(ShiftedWindowAttention):
    """V2's attention: a learned log temperature per head (``logit_scale``, starting at
    log 10), and the bias from ``cpb_mlp`` (2 -> 512 -> heads) over log-spaced relative
    coordinates, squashed to (0, 16) by ``16 * sigmoid``."""

    def __init__(self, dim: int, window_size: list[int], shift_size: list[int], num_heads: int,
                 qkv_bias: bool = True, proj_bias: bool = True, attention_dropout: float = 0.0,
                 dropout: float = 0.0):
        super().__init__(dim, window_size, shift_size, num_heads, qkv_bias=qkv_bias,
                         proj_bias=proj_bias, attention_dropout=attention_dropout,
                         dropout=dropout)
        self.logit_scale = nn.Parameter(log(10 * ones((num_heads, 1, 1))))
        self.cpb_mlp = nn.Sequential(nn.Linear(2, 512, bias=True), nn.ReLU(inplace=True),
                                     nn.Linear(512, num_heads, bias=False))
        if qkv_bias:
            length = self.qkv.bias.numel() // 3
            self.qkv.bias[length:2 * length].data.zero_()

    def define_relative_position_bias_table(self) -> None:
        """The buffer ``relative_coords_table``: each relative offset scaled to [-8, 8], then
        ``sign(t) * log2(|t| + 1) / 3``."""
        relative_coords_h = arange(-(self.window_size[0] - 1), self.window_size[0],
                                   dtype=_float32)
        relative_coords_w = arange(-(self.window_size[1] - 1), self.window_size[1],
                                   dtype=_float32)
        relative_coords_table = stack(meshgrid([relative_coords_h, relative_coords_w],
                                               indexing="ij"))
        relative_coords_table = relative_coords_table.permute(1, 2, 0).contiguous().unsqueeze(0)
        relative_coords_table[:, :, :, 0] /= self.window_size[0] - 1
        relative_coords_table[:, :, :, 1] /= self.window_size[1] - 1
        relative_coords_table *= 8
        relative_coords_table = (sign(relative_coords_table)
                                 * log2(_abs(relative_coords_table) + 1.0) / 3.0)
        self.register_buffer("relative_coords_table", relative_coords_table)

    def get_relative_position_bias(self) -> Tensor:
        relative_position_bias = _get_relative_position_bias(
            self.cpb_mlp(self.relative_coords_table).view(-1, self.num_heads),
            self.relative_position_index, self.window_size)
        return 16 * sigmoid(relative_position_bias)

    def forward(self, x: Tensor) -> Tensor:
        return shifted_window_attention(
            x, self.qkv.weight, self.proj.weight, self.get_relative_position_bias(),
            self.window_size, self.num_heads, shift_size=self.shift_size,
            attention_dropout=self.attention_dropout, dropout=self.dropout,
            qkv_bias=self.qkv.bias, proj_bias=self.proj.bias, logit_scale=self.logit_scale,
            training=self.training)


class SwinTransformerBlock(nn.Module):
    """``x + sd(attn(norm1(x)))``, then ``x + sd(mlp(norm2(x)))`` (sd: stochastic depth)."""

    def __init__(self, dim: int, num_heads: int, window_size: list[int], shift_size: list[int],
                 mlp_ratio: float = 4.0, dropout: float = 0.0, attention_dropout: float = 0.0,
                 stochastic_depth_prob: float = 0.0,
                 norm_layer: Callable[..., nn.Module] = nn.LayerNorm,
                 attn_layer: Callable[..., nn.Module] = ShiftedWindowAttention):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = attn_layer(dim, window_size, shift_size, num_heads,
                               attention_dropout=attention_dropout, dropout=dropout)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.norm2 = norm_layer(dim)
        self.mlp = MLP(dim, [int(dim * mlp_ratio), dim], activation_layer=nn.GELU, inplace=None,
                       dropout=dropout)
        for m in self.mlp.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.stochastic_depth(self.attn(self.norm1(x)))
        return x + self.stochastic_depth(self.mlp(self.norm2(x)))


class SwinTransformerBlockV2(SwinTransformerBlock):
    """V2's block: the norms after the attention and the MLP (res-post-norm)."""

    def __init__(self, dim: int, num_heads: int, window_size: list[int], shift_size: list[int],
                 mlp_ratio: float = 4.0, dropout: float = 0.0, attention_dropout: float = 0.0,
                 stochastic_depth_prob: float = 0.0,
                 norm_layer: Callable[..., nn.Module] = nn.LayerNorm,
                 attn_layer: Callable[..., nn.Module] = ShiftedWindowAttentionV2):
        super().__init__(dim, num_heads, window_size, shift_size, mlp_ratio=mlp_ratio,
                         dropout=dropout, attention_dropout=attention_dropout,
                         stochastic_depth_prob=stochastic_depth_prob, norm_layer=norm_layer,
                         attn_layer=attn_layer)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.stochastic_depth(self.norm1(self.attn(x)))
        return x + self.stochastic_depth(self.norm2(self.mlp(x)))


class SwinTransformer(nn.Module):
    """The network: a patch embedding (``patch_size`` convolution, channels last, layer norm),
    stages of ``depths[i]`` blocks (alternately unshifted and shifted by half a window) with
    ``num_heads[i]`` heads and patch merging between, a final norm, pooling and a linear head.
    Block i of n drops its branches with probability ``stochastic_depth_prob * i / (n - 1)``."""

    def __init__(self, patch_size: list[int], embed_dim: int, depths: list[int],
                 num_heads: list[int], window_size: list[int], mlp_ratio: float = 4.0,
                 dropout: float = 0.0, attention_dropout: float = 0.0,
                 stochastic_depth_prob: float = 0.1, num_classes: int = 1000,
                 norm_layer: Callable[..., nn.Module] | None = None,
                 block: Callable[..., nn.Module] | None = None,
                 downsample_layer: Callable[..., nn.Module] = PatchMerging):
        super().__init__()
        self.num_classes = num_classes
        if block is None:
            block = SwinTransformerBlock
        if norm_layer is None:
            norm_layer = partial(nn.LayerNorm, eps=1e-5)

        layers: list[nn.Module] = []
        layers.append(nn.Sequential(
            nn.Conv2d(3, embed_dim, kernel_size=(patch_size[0], patch_size[1]),
                      stride=(patch_size[0], patch_size[1])),
            Permute([0, 2, 3, 1]),
            norm_layer(embed_dim),
        ))
        total_stage_blocks = sum(depths)
        stage_block_id = 0
        for i_stage in range(len(depths)):
            stage: list[nn.Module] = []
            dim = embed_dim * 2 ** i_stage
            for i_layer in range(depths[i_stage]):
                sd_prob = stochastic_depth_prob * float(stage_block_id) / (total_stage_blocks - 1)
                stage.append(block(
                    dim, num_heads[i_stage], window_size=window_size,
                    shift_size=[0 if i_layer % 2 == 0 else w // 2 for w in window_size],
                    mlp_ratio=mlp_ratio, dropout=dropout, attention_dropout=attention_dropout,
                    stochastic_depth_prob=sd_prob, norm_layer=norm_layer))
                stage_block_id += 1
            layers.append(nn.Sequential(*stage))
            if i_stage < (len(depths) - 1):
                layers.append(downsample_layer(dim, norm_layer))
        self.features = nn.Sequential(*layers)

        num_features = embed_dim * 2 ** (len(depths) - 1)
        self.norm = norm_layer(num_features)
        self.permute = Permute([0, 3, 1, 2])  # B H W C -> B C H W
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten(1)
        self.head = nn.Linear(num_features, num_classes)

        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x: Tensor) -> Tensor:
        x = self.permute(self.norm(self.features(x)))
        return self.head(self.flatten(self.avgpool(x)))


def _swin_transformer(patch_size: list[int], embed_dim: int, depths: list[int],
                      num_heads: list[int], window_size: list[int],
                      stochastic_depth_prob: float, weights: WeightsEnum | None,
                      progress: bool, **kwargs: Any) -> SwinTransformer:
    return _classifier(SwinTransformer, weights, progress, patch_size=patch_size,
                       embed_dim=embed_dim, depths=depths, num_heads=num_heads,
                       window_size=window_size, stochastic_depth_prob=stochastic_depth_prob,
                       **kwargs)


_COMMON_META: dict[str, Any] = {
    "categories": _IMAGENET_CATEGORIES,
    "_docs": "These weights reproduce closely the results of the paper using a similar training recipe.",  # noqa: E501
}

_V1_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#swintransformer"
_V2_RECIPE = "https://github.com/pytorch/vision/tree/main/references/classification#swintransformer-v2"  # noqa: E501


class Swin_T_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "swin_t-704ceda3.pth",
        partial(ImageClassification, crop_size=224, resize_size=232,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, num_params=28288354, min_size=(224, 224), recipe=_V1_RECIPE,
        acc=(81.474, 95.776), _ops=4.491, _file_size=108.19)
    DEFAULT = IMAGENET1K_V1


class Swin_S_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "swin_s-5e29d889.pth",
        partial(ImageClassification, crop_size=224, resize_size=246,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, num_params=49606258, min_size=(224, 224), recipe=_V1_RECIPE,
        acc=(83.196, 96.36), _ops=8.741, _file_size=189.786)
    DEFAULT = IMAGENET1K_V1


class Swin_B_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "swin_b-68c6b09e.pth",
        partial(ImageClassification, crop_size=224, resize_size=238,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, num_params=87768224, min_size=(224, 224), recipe=_V1_RECIPE,
        acc=(83.582, 96.64), _ops=15.431, _file_size=335.364)
    DEFAULT = IMAGENET1K_V1


class Swin_V2_T_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "swin_v2_t-b137f0e2.pth",
        partial(ImageClassification, crop_size=256, resize_size=260,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, num_params=28351570, min_size=(256, 256), recipe=_V2_RECIPE,
        acc=(82.072, 96.132), _ops=5.94, _file_size=108.626)
    DEFAULT = IMAGENET1K_V1


class Swin_V2_S_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "swin_v2_s-637d8ceb.pth",
        partial(ImageClassification, crop_size=256, resize_size=260,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, num_params=49737442, min_size=(256, 256), recipe=_V2_RECIPE,
        acc=(83.712, 96.816), _ops=11.546, _file_size=190.675)
    DEFAULT = IMAGENET1K_V1


class Swin_V2_B_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "swin_v2_b-781e5279.pth",
        partial(ImageClassification, crop_size=256, resize_size=272,
                interpolation=InterpolationMode.BICUBIC),
        _COMMON_META, num_params=87930848, min_size=(256, 256), recipe=_V2_RECIPE,
        acc=(84.112, 96.864), _ops=20.325, _file_size=336.372)
    DEFAULT = IMAGENET1K_V1


swin_t = _builder("swin_t", Swin_T_Weights, SwinTransformer,
                  _swin_transformer, patch_size=[4, 4], embed_dim=96, depths=[2, 2, 6, 2],
                  num_heads=[3, 6, 12, 24], window_size=[7, 7], stochastic_depth_prob=0.2,
                  doc='Swin-T ("Swin Transformer: Hierarchical Vision Transformer using Shifted '
                      'Windows"); ``kwargs`` go to ``SwinTransformer``.')
swin_s = _builder("swin_s", Swin_S_Weights, SwinTransformer,
                  _swin_transformer, patch_size=[4, 4], embed_dim=96, depths=[2, 2, 18, 2],
                  num_heads=[3, 6, 12, 24], window_size=[7, 7], stochastic_depth_prob=0.3,
                  doc="Swin-S.")
swin_b = _builder("swin_b", Swin_B_Weights, SwinTransformer,
                  _swin_transformer, patch_size=[4, 4], embed_dim=128, depths=[2, 2, 18, 2],
                  num_heads=[4, 8, 16, 32], window_size=[7, 7], stochastic_depth_prob=0.5,
                  doc="Swin-B.")
swin_v2_t = _builder("swin_v2_t", Swin_V2_T_Weights, SwinTransformer,
                     _swin_transformer, patch_size=[4, 4], embed_dim=96, depths=[2, 2, 6, 2],
                     num_heads=[3, 6, 12, 24], window_size=[8, 8], stochastic_depth_prob=0.2,
                     block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2,
                     doc='Swin-V2-T ("Swin Transformer V2: Scaling Up Capacity and Resolution").')
swin_v2_s = _builder("swin_v2_s", Swin_V2_S_Weights, SwinTransformer,
                     _swin_transformer, patch_size=[4, 4], embed_dim=96, depths=[2, 2, 18, 2],
                     num_heads=[3, 6, 12, 24], window_size=[8, 8], stochastic_depth_prob=0.3,
                     block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2,
                     doc="Swin-V2-S.")
swin_v2_b = _builder("swin_v2_b", Swin_V2_B_Weights, SwinTransformer,
                     _swin_transformer, patch_size=[4, 4], embed_dim=128, depths=[2, 2, 18, 2],
                     num_heads=[4, 8, 16, 32], window_size=[8, 8], stochastic_depth_prob=0.5,
                     block=SwinTransformerBlockV2, downsample_layer=PatchMergingV2,
                     doc="Swin-V2-B.")
