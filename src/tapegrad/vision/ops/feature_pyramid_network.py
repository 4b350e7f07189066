"""Feature Pyramid Network (Lin et al. 2017): a top-down pathway over a backbone's feature
maps (coarsest first), each level the sum of a 1x1 lateral projection of its map and the
nearest-upsampled level above, smoothed by a 3x3 convolution; optionally more levels on top
(``LastLevelMaxPool``, RetinaNet's ``LastLevelP6P7``)."""

from collections import OrderedDict
from collections.abc import Callable

from ... import nn
from ..._tensor import Tensor
from ...nn import functional as F
from ._utils import _rename_version_1_keys
from .misc import Conv2dNormActivation


class ExtraFPNBlock(nn.Module):
    """The base of extra levels: ``forward(results, x, names)`` gets the FPN's outputs, the
    original maps and their names, and returns the outputs and names extended."""

    def forward(self, results: list[Tensor], x: list[Tensor],  # type: ignore[empty-body]
                names: list[str]) -> tuple[list[Tensor], list[str]]:
        pass


def _apply_block(blocks: nn.ModuleList, x: Tensor, idx: int) -> Tensor:
    """``blocks[idx](x)`` (``idx`` may count from the end), the block found by iterating over
    the blocks, as torchvision finds it."""
    if idx < 0:
        idx += len(blocks)
    out = x
    for i, module in enumerate(blocks):
        if i == idx:
            out = module(x)
    return out


class FeaturePyramidNetwork(nn.Module):
    """The pyramid over maps of ``in_channels_list`` channels (an OrderedDict, finest first),
    every output with ``out_channels`` channels; convolutions Kaiming-uniform (a=1), biases 0.
    Version 2 wraps each convolution in a ``Conv2dNormActivation``; older checkpoints are
    renamed on load."""

    _version = 2

    def __init__(self, in_channels_list: list[int], out_channels: int,
                 extra_blocks: ExtraFPNBlock | None = None,
                 norm_layer: Callable[..., nn.Module] | None = None):
        super().__init__()
        self.inner_blocks = nn.ModuleList()
        self.layer_blocks = nn.ModuleList()
        for in_channels in in_channels_list:
            if in_channels == 0:
                raise ValueError("in_channels=0 is currently not supported")
            inner_block_module = Conv2dNormActivation(in_channels, out_channels, kernel_size=1,
                                                      padding=0, norm_layer=norm_layer,
                                                      activation_layer=None)
            layer_block_module = Conv2dNormActivation(out_channels, out_channels, kernel_size=3,
                                                      norm_layer=norm_layer,
                                                      activation_layer=None)
            self.inner_blocks.append(inner_block_module)
            self.layer_blocks.append(layer_block_module)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_uniform_(m.weight, a=1)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        if extra_blocks is not None and not isinstance(extra_blocks, ExtraFPNBlock):
            raise TypeError(f"extra_blocks should be of type ExtraFPNBlock not "
                            f"{type(extra_blocks)}")
        self.extra_blocks = extra_blocks

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict,
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str]) -> None:
        # version 1 held each block's conv directly, version 2 wraps it in Conv2dNormActivation
        moves = [(f"{block}.{i}", f"{block}.{i}.0") for block in ["inner_blocks", "layer_blocks"]
                 for i in range(len(self.inner_blocks))]
        _rename_version_1_keys(state_dict, prefix, local_metadata, moves)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def get_result_from_inner_blocks(self, x: Tensor, idx: int) -> Tensor:
        """``self.inner_blocks[idx](x)``."""
        return _apply_block(self.inner_blocks, x, idx)

    def get_result_from_layer_blocks(self, x: Tensor, idx: int) -> Tensor:
        """``self.layer_blocks[idx](x)``."""
        return _apply_block(self.layer_blocks, x, idx)

    def forward(self, x: dict[str, Tensor]) -> dict[str, Tensor]:
        names = list(x.keys())
        maps = list(x.values())
        last_inner = self.get_result_from_inner_blocks(maps[-1], -1)
        results = [self.get_result_from_layer_blocks(last_inner, -1)]
        for idx in range(len(maps) - 2, -1, -1):  # top-down
            inner_lateral = self.get_result_from_inner_blocks(maps[idx], idx)
            feat_shape = inner_lateral.shape[-2:]
            inner_top_down = F.interpolate(last_inner, size=feat_shape, mode="nearest")
            last_inner = inner_lateral + inner_top_down
            results.insert(0, self.get_result_from_layer_blocks(last_inner, idx))
        if self.extra_blocks is not None:
            results, names = self.extra_blocks(results, maps, names)
        return OrderedDict(zip(names, results, strict=False))


class LastLevelMaxPool(ExtraFPNBlock):
    """One more level ("pool"): the last output max-pooled with stride 2."""

    def forward(self, x: list[Tensor], y: list[Tensor],  # type: ignore[override]
                names: list[str]) -> tuple[list[Tensor], list[str]]:
        names.append("pool")
        x.append(F.max_pool2d(x[-1], kernel_size=1, stride=2, padding=0))
        return x, names


class LastLevelP6P7(ExtraFPNBlock):
    """RetinaNet's P6 and P7: strided 3x3 convolutions on P5 (or C5 when the channel counts
    differ), the second after a ReLU."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.p6 = nn.Conv2d(in_channels, out_channels, 3, 2, 1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)
        for module in [self.p6, self.p7]:
            nn.init.kaiming_uniform_(module.weight, a=1)
            nn.init.constant_(module.bias, 0)
        self.use_P5 = in_channels == out_channels

    def forward(self, p: list[Tensor], c: list[Tensor],
                names: list[str]) -> tuple[list[Tensor], list[str]]:
        p5, c5 = p[-1], c[-1]
        x = p5 if self.use_P5 else c5
        p6 = self.p6(x)
        p7 = self.p7(F.relu(p6))
        p.extend([p6, p7])
        names.extend(["p6", "p7"])
        return p, names
