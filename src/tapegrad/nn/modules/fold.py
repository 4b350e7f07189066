"""Fold and Unfold: sliding blocks of an image to columns and back (``F.unfold``/``F.fold``).

    Unfold: (N, C, H, W) -> (N, C*kh*kw, L)      L = number of block positions
    Fold:   (N, C*kh*kw, L) -> (N, C, H, W)      overlapping blocks are summed
"""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


def _set_block_settings(module: Module, kernel_size: Any, dilation: Any, padding: Any,
                        stride: Any) -> None:
    """Store the settings of the sliding blocks that Fold and Unfold share, as given."""
    module.kernel_size = kernel_size
    module.dilation = dilation
    module.padding = padding
    module.stride = stride


class Fold(Module):
    """Combine an array of sliding local blocks into a large tensor (col2im)."""

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        self.output_size = output_size
        _set_block_settings(self, kernel_size, dilation, padding, stride)

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return ("output_size={output_size}, kernel_size={kernel_size}, dilation={dilation}, "
                "padding={padding}, stride={stride}".format(**self.__dict__))


class Unfold(Module):
    """Extract sliding local blocks from a batched input (im2col)."""

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
                 stride: Any = 1) -> None:
        super().__init__()
        _set_block_settings(self, kernel_size, dilation, padding, stride)

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding}, "
                "stride={stride}".format(**self.__dict__))
