"""Vision Transformer (Dosovitskiy et al. 2020, "An Image is Worth 16x16 Words"): the image cut
into patches (one strided convolution), a learned class token prepended, learned position
embeddings added, a stack of pre-norm transformer encoder blocks, and a linear head on the class
token's output."""

import math
from collections import OrderedDict
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

from ... import cat, empty, nn, zeros
from ..._tensor import Tensor
from ..ops._utils import _rename_version_1_keys
from ..ops.misc import MLP, Conv2dNormActivation
from ..transforms._presets import ImageClassification
from ._api import Weights, WeightsEnum
from ._meta import (
    _IMAGENET_CATEGORIES,
)
from ._utils import (
    _builder,
    _imagenet1k_weights,
    _load_weights,
    _ovewrite_named_param,
    _swag_e2e_weights,
    _swag_linear_weights,
)

__all__ = ["VisionTransformer", "ViT_B_16_Weights", "ViT_B_32_Weights", "ViT_L_16_Weights",
           "ViT_L_32_Weights", "ViT_H_14_Weights", "vit_b_16", "vit_b_32", "vit_l_16",
           "vit_l_32", "vit_h_14"]


def _assert(condition: bool, message: str) -> None:
    """``torch._assert``: an AssertionError with ``message`` unless ``condition``."""
    if not condition:
        raise AssertionError(message)


class ConvStemConfig(NamedTuple):
    """One convolution of an optional convolutional stem (instead of the patchify one)."""

    out_channels: int
    kernel_size: int
    stride: int
    norm_layer: Callable[..., nn.Module] = nn.BatchNorm2d
    activation_layer: Callable[..., nn.Module] = nn.ReLU


class MLPBlock(MLP):
    """The transformer's feed-forward block: linear to ``mlp_dim``, GELU, dropout, linear back,
    dropout (Xavier-uniform weights, biases from N(0, 1e-6))."""

    # version 2: the linears are entries 0 and 3 of the Sequential (they were "linear_1",
    # "linear_2"); version-1 checkpoints are renamed on load
    _version = 2

    def __init__(self, in_dim: int, mlp_dim: int, dropout: float):
        super().__init__(in_dim, [mlp_dim, in_dim], activation_layer=nn.GELU, inplace=None,
                         dropout=dropout)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.normal_(m.bias, std=1e-6)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        _rename_version_1_keys(state_dict, prefix, local_metadata,
                               [("linear_1", "0"), ("linear_2", "3")])
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


class EncoderBlock(nn.Module):
    """``x = x + dropout(attention(ln_1(x)))``, then ``x + mlp(ln_2(x))``."""

    def __init__(self, num_heads: int, hidden_dim: int, mlp_dim: int, dropout: float,
                 attention_dropout: float,
                 norm_layer: Callable[..., nn.Module] = partial(  # noqa: B008
                     nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.num_heads = num_heads
        self.ln_1 = norm_layer(hidden_dim)
        self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads,
                                                    dropout=attention_dropout, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.ln_2 = norm_layer(hidden_dim)
        self.mlp = MLPBlock(hidden_dim, mlp_dim, dropout)

    def forward(self, input: Tensor) -> Tensor:
        _assert(input.dim() == 3,
                f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        x = self.ln_1(input)
        x, _ = self.self_attention(x, x, x, need_weights=False)
        x = self.dropout(x) + input
        y = self.mlp(self.ln_2(x))
        return x + y


class Encoder(nn.Module):
    """Position embeddings (N(0, 0.02), as BERT's) added, dropout, the blocks, a layer norm."""

    def __init__(self, seq_length: int, num_layers: int, num_heads: int, hidden_dim: int,
                 mlp_dim: int, dropout: float, attention_dropout: float,
                 norm_layer: Callable[..., nn.Module] = partial(  # noqa: B008
                     nn.LayerNorm, eps=1e-6)):
        super().__init__()
        self.pos_embedding = nn.Parameter(empty(1, seq_length, hidden_dim).normal_(std=0.02))
        self.dropout = nn.Dropout(dropout)
        layers: OrderedDict[str, nn.Module] = OrderedDict()
        for i in range(num_layers):
            layers[f"encoder_layer_{i}"] = EncoderBlock(num_heads, hidden_dim, mlp_dim, dropout,
                                                        attention_dropout, norm_layer)
        self.layers = nn.Sequential(layers)
        self.ln = norm_layer(hidden_dim)

    def forward(self, input: Tensor) -> Tensor:
        _assert(input.dim() == 3,
                f"Expected (batch_size, seq_length, hidden_dim) got {input.shape}")
        input = input + self.pos_embedding
        return self.ln(self.layers(self.dropout(input)))


class VisionTransformer(nn.Module):
    """The network for square ``image_size`` inputs cut into ``patch_size`` patches.
    ``representation_size`` adds a tanh pre-logits layer to the head; ``conv_stem_configs``
    replaces the patchify convolution by a convolutional stem (Xiao et al. 2021)."""

    def __init__(self, image_size: int, patch_size: int, num_layers: int, num_heads: int,
                 hidden_dim: int, mlp_dim: int, dropout: float = 0.0,
                 attention_dropout: float = 0.0, num_classes: int = 1000,
                 representation_size: int | None = None,
                 norm_layer: Callable[..., nn.Module] = partial(  # noqa: B008
                     nn.LayerNorm, eps=1e-6),
                 conv_stem_configs: list[ConvStemConfig] | None = None):
        super().__init__()
        _assert(image_size % patch_size == 0, "Input shape indivisible by patch size!")
        self.image_size = image_size
        self.patch_size = patch_size
        self.hidden_dim = hidden_dim
        self.mlp_dim = mlp_dim
        self.attention_dropout = attention_dropout
        self.dropout = dropout
        self.num_classes = num_classes
        self.representation_size = representation_size
        self.norm_layer = norm_layer

        if conv_stem_configs is not None:
            seq_proj = nn.Sequential()
            prev_channels = 3
            for i, config in enumerate(conv_stem_configs):
                seq_proj.add_module(f"conv_bn_relu_{i}", Conv2dNormActivation(
                    in_channels=prev_channels, out_channels=config.out_channels,
                    kernel_size=config.kernel_size, stride=config.stride,
                    norm_layer=config.norm_layer, activation_layer=config.activation_layer))
                prev_channels = config.out_channels
            seq_proj.add_module("conv_last", nn.Conv2d(in_channels=prev_channels,
                                                       out_channels=hidden_dim, kernel_size=1))
            self.conv_proj: nn.Module = seq_proj
        else:
            self.conv_proj = nn.Conv2d(in_channels=3, out_channels=hidden_dim,
                                       kernel_size=patch_size, stride=patch_size)

        seq_length = (image_size // patch_size) ** 2
        self.class_token = nn.Parameter(zeros(1, 1, hidden_dim))
        seq_length += 1  # the class token
        self.encoder = Encoder(seq_length, num_layers, num_heads, hidden_dim, mlp_dim, dropout,
                               attention_dropout, norm_layer)
        self.seq_length = seq_length

        heads_layers: OrderedDict[str, nn.Module] = OrderedDict()
        if representation_size is None:
            heads_layers["head"] = nn.Linear(hidden_dim, num_classes)
        else:
            heads_layers["pre_logits"] = nn.Linear(hidden_dim, representation_size)
            heads_layers["act"] = nn.Tanh()
            heads_layers["head"] = nn.Linear(representation_size, num_classes)
        self.heads = nn.Sequential(heads_layers)

        if isinstance(self.conv_proj, nn.Conv2d):
            fan_in = (self.conv_proj.in_channels * self.conv_proj.kernel_size[0]
                      * self.conv_proj.kernel_size[1])
            nn.init.trunc_normal_(self.conv_proj.weight, std=math.sqrt(1 / fan_in))
            if self.conv_proj.bias is not None:
                nn.init.zeros_(self.conv_proj.bias)
        elif (self.conv_proj.conv_last is not None
              and isinstance(self.conv_proj.conv_last, nn.Conv2d)):
            nn.init.normal_(self.conv_proj.conv_last.weight, mean=0.0,
                            std=math.sqrt(2.0 / self.conv_proj.conv_last.out_channels))
            if self.conv_proj.conv_last.bias is not None:
                nn.init.zeros_(self.conv_proj.conv_last.bias)
        if hasattr(self.heads, "pre_logits") and isinstance(self.heads.pre_logits, nn.Linear):
            fan_in = self.heads.pre_logits.in_features
            nn.init.trunc_normal_(self.heads.pre_logits.weight, std=math.sqrt(1 / fan_in))
            nn.init.zeros_(self.heads.pre_logits.bias)
        if isinstance(self.heads.head, nn.Linear):
            nn.init.zeros_(self.heads.head.weight)
            nn.init.zeros_(self.heads.head.bias)

    def _process_input(self, x: Tensor) -> Tensor:
        """(N, 3, H, W) -> (N, patches, hidden_dim)."""
        n, c, h, w = x.shape
        p = self.patch_size
        _assert(h == self.image_size,
                f"Wrong image height! Expected {self.image_size} but got {h}!")
        _assert(w == self.image_size,
                f"Wrong image width! Expected {self.image_size} but got {w}!")
        n_h = h // p
        n_w = w // p
        x = self.conv_proj(x)
        x = x.reshape(n, self.hidden_dim, n_h * n_w)
        return x.permute(0, 2, 1)

    def forward(self, x: Tensor) -> Tensor:
        x = self._process_input(x)
        n = x.shape[0]
        batch_class_token = self.class_token.expand(n, -1, -1)
        x = cat([batch_class_token, x], dim=1)
        x = self.encoder(x)
        return self.heads(x[:, 0])  # the class token's output


def _vision_transformer(patch_size: int, num_layers: int, num_heads: int, hidden_dim: int,
                        mlp_dim: int, weights: WeightsEnum | None, progress: bool,
                        **kwargs: Any) -> VisionTransformer:
    if weights is not None:
        _ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
        assert weights.meta["min_size"][0] == weights.meta["min_size"][1]
        _ovewrite_named_param(kwargs, "image_size", weights.meta["min_size"][0])
    image_size = kwargs.pop("image_size", 224)
    model = VisionTransformer(image_size=image_size, patch_size=patch_size,
                              num_layers=num_layers, num_heads=num_heads, hidden_dim=hidden_dim,
                              mlp_dim=mlp_dim, **kwargs)
    return _load_weights(model, weights, progress)


_COMMON_META: dict[str, Any] = {
    "categories": _IMAGENET_CATEGORIES,
}

_DEIT_DOCS = """
                These weights were trained from scratch by using a modified version of `DeIT
                <https://arxiv.org/abs/2012.12877>`_'s training recipe.
            """


def _deit_trained(name: str, checkpoint_hash: str, num_params: int, acc: tuple[float, float],
                  ops: float, file_size: float) -> Weights:
    """The ImageNet-1K weights of the ViT ``name`` trained from scratch with the DeiT-like recipe
    of torchvision's references (their section named after the model)."""
    return _imagenet1k_weights(
        f"{name}-{checkpoint_hash}.pth", partial(ImageClassification, crop_size=224),
        _COMMON_META, num_params=num_params, min_size=(224, 224),
        recipe=f"https://github.com/pytorch/vision/tree/main/references/classification#{name}",
        acc=acc, _ops=ops, _file_size=file_size, _docs=_DEIT_DOCS)


class ViT_B_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _deit_trained(
        "vit_b_16", "c867db91", 86567656, (81.072, 95.318), 17.564, 330.285)
    IMAGENET1K_SWAG_E2E_V1 = _swag_e2e_weights(
        "vit_b_16_swag-9ac1b537.pth", 384, _COMMON_META, num_params=86859496, min_size=(384, 384),
        acc=(85.304, 97.65), _ops=55.484, _file_size=331.398)
    IMAGENET1K_SWAG_LINEAR_V1 = _swag_linear_weights(
        "vit_b_16_lc_swag-4e70ced5.pth", _COMMON_META, num_params=86567656, min_size=(224, 224),
        acc=(81.886, 96.18), _ops=17.564, _file_size=330.285)
    DEFAULT = IMAGENET1K_V1


class ViT_B_32_Weights(WeightsEnum):
    IMAGENET1K_V1 = _deit_trained(
        "vit_b_32", "d86f8d99", 88224232, (75.912, 92.466), 4.409, 336.604)
    DEFAULT = IMAGENET1K_V1


class ViT_L_16_Weights(WeightsEnum):
    IMAGENET1K_V1 = _imagenet1k_weights(
        "vit_l_16-852ce7e3.pth",
        partial(ImageClassification, crop_size=224, resize_size=242), _COMMON_META,
        num_params=304326632, min_size=(224, 224),
        recipe="https://github.com/pytorch/vision/tree/main/references/classification#vit_l_16",
        acc=(79.662, 94.638), _ops=61.555, _file_size=1161.023,
        _docs=(
            "\n"
            "                These weights were trained from scratch by using a modified "
            "version of TorchVision's\n"
            "                `new training recipe\n"
            "                <https://pytorch.org/blog/how-to-train-state-of-the-art-models-using-torchvision-latest-primitives/>`_.\n"  # noqa: E501
            "            "
        ))
    IMAGENET1K_SWAG_E2E_V1 = _swag_e2e_weights(
        "vit_l_16_swag-4f3808c9.pth", 512, _COMMON_META, num_params=305174504, min_size=(512, 512),
        acc=(88.064, 98.512), _ops=361.986, _file_size=1164.258)
    IMAGENET1K_SWAG_LINEAR_V1 = _swag_linear_weights(
        "vit_l_16_lc_swag-4d563306.pth", _COMMON_META, num_params=304326632, min_size=(224, 224),
        acc=(85.146, 97.422), _ops=61.555, _file_size=1161.023)
    DEFAULT = IMAGENET1K_V1


class ViT_L_32_Weights(WeightsEnum):
    IMAGENET1K_V1 = _deit_trained(
        "vit_l_32", "c7638314", 306535400, (76.972, 93.07), 15.378, 1169.449)
    DEFAULT = IMAGENET1K_V1


class ViT_H_14_Weights(WeightsEnum):
    IMAGENET1K_SWAG_E2E_V1 = _swag_e2e_weights(
        "vit_h_14_swag-80465313.pth", 518, _COMMON_META, num_params=633470440, min_size=(518, 518),
        acc=(88.552, 98.694), _ops=1016.717, _file_size=2416.643)
    IMAGENET1K_SWAG_LINEAR_V1 = _swag_linear_weights(
        "vit_h_14_lc_swag-c1eb923e.pth", _COMMON_META, num_params=632045800, min_size=(224, 224),
        acc=(85.708, 97.73), _ops=167.295, _file_size=2411.209)
    DEFAULT = IMAGENET1K_SWAG_E2E_V1


vit_b_16 = _builder("vit_b_16", ViT_B_16_Weights, VisionTransformer,
                    _vision_transformer, patch_size=16, num_layers=12, num_heads=12,
                    hidden_dim=768, mlp_dim=3072,
                    doc='ViT-B/16 ("An Image is Worth 16x16 Words"); ``kwargs`` go to '
                        "``VisionTransformer`` (``image_size`` defaults to 224).")
vit_b_32 = _builder("vit_b_32", ViT_B_32_Weights, VisionTransformer,
                    _vision_transformer, patch_size=32, num_layers=12, num_heads=12,
                    hidden_dim=768, mlp_dim=3072,
                    doc="ViT-B/32.")
vit_l_16 = _builder("vit_l_16", ViT_L_16_Weights, VisionTransformer,
                    _vision_transformer, patch_size=16, num_layers=24, num_heads=16,
                    hidden_dim=1024, mlp_dim=4096,
                    doc="ViT-L/16.")
vit_l_32 = _builder("vit_l_32", ViT_L_32_Weights, VisionTransformer,
                    _vision_transformer, patch_size=32, num_layers=24, num_heads=16,
                    hidden_dim=1024, mlp_dim=4096,
                    doc="ViT-L/32.")
vit_h_14 = _builder("vit_h_14", ViT_H_14_Weights, VisionTransformer,
                    _vision_transformer, patch_size=14, num_layers=32, num_heads=16,
                    hidden_dim=1280, mlp_dim=5120,
                    doc="ViT-H/14 (its weights come from SWAG only, so ``pretrained=True`` has "
                        "none).", legacy=None)


def interpolate_embeddings(image_size: int, patch_size: int,
                           model_state: "OrderedDict[str, Tensor]",
                           interpolation_mode: str = "bicubic",
                           reset_heads: bool = False) -> "OrderedDict[str, Tensor]":
    """A checkpoint's position embeddings resized for ``image_size`` (the grid of image-patch
    embeddings interpolated, the class token's kept), to fine-tune at another resolution;
    ``reset_heads`` drops the head's weights."""
    pos_embedding = model_state["encoder.pos_embedding"]
    n, seq_length, hidden_dim = pos_embedding.shape
    if n != 1:
        raise ValueError(f"Unexpected position embedding shape: {pos_embedding.shape}")
    new_seq_length = (image_size // patch_size) ** 2 + 1
    if new_seq_length != seq_length:
        seq_length -= 1  # without the class token
        new_seq_length -= 1
        pos_embedding_token = pos_embedding[:, :1, :]
        pos_embedding_img = pos_embedding[:, 1:, :].permute(0, 2, 1)
        seq_length_1d = int(math.sqrt(seq_length))
        if seq_length_1d * seq_length_1d != seq_length:
            raise ValueError(
                "seq_length is not a perfect square! Instead got seq_length_1d * seq_length_1d = "
                f"{seq_length_1d * seq_length_1d } and seq_length = {seq_length}")
        pos_embedding_img = pos_embedding_img.reshape(1, hidden_dim, seq_length_1d, seq_length_1d)
        new_seq_length_1d = image_size // patch_size
        new_pos_embedding_img = nn.functional.interpolate(
            pos_embedding_img, size=new_seq_length_1d, mode=interpolation_mode,
            align_corners=True)
        new_pos_embedding_img = new_pos_embedding_img.reshape(1, hidden_dim, new_seq_length)
        new_pos_embedding_img = new_pos_embedding_img.permute(0, 2, 1)
        model_state["encoder.pos_embedding"] = cat([pos_embedding_token, new_pos_embedding_img],
                                                   dim=1)
        if reset_heads:
            model_state = OrderedDict((k, v) for k, v in model_state.items()
                                      if not k.startswith("heads"))
    return model_state
