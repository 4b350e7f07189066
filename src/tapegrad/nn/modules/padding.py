"""Padding layers (constant / zero / reflect / replicate / circular, 1-3 spatial dims): each
stores its padding in ``F.pad``'s order (last dim first) and calls ``F.pad``."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _quadruple

__all__ = [
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
]

_sextuple = _ntuple(6, "_sextuple")
_EXPAND = {1: _pair, 2: _quadruple, 3: _sextuple}


class _PadNd(Module):
    __constants__ = ["padding"]
    _mode = "constant"
    _nd = 1

    def __init__(self, padding: Any) -> None:
        super().__init__()
        self.padding = _EXPAND[self._nd](padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise ValueError(
                f"expected {self._nd + 1}D or {self._nd + 2}D input (got {input.dim()}D input)"
            )
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Wrap-around padding of the last dim."""

    _nd = 1


class CircularPad2d(_CircularPadNd):
    """Wrap-around padding of the last two dims."""

    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Wrap-around padding of the last three dims."""

    _nd = 3


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _nd = 1

    def __init__(self, padding: Any, value: float) -> None:
        super().__init__()
        self.value = value
        self.padding = _EXPAND[self._nd](padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``."""

    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``."""

    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``."""

    _nd = 3


class ReflectionPad1d(_PadNd):
    """Mirror padding of the last dim (the edge is not repeated)."""

    _mode = "reflect"
    _nd = 1


class ReflectionPad2d(_PadNd):
    """Mirror padding of the last two dims."""

    _mode = "reflect"
    _nd = 2


class ReflectionPad3d(_PadNd):
    """Mirror padding of the last three dims."""

    _mode = "reflect"
    _nd = 3


class ReplicationPad1d(_PadNd):
    """Edge-repeating padding of the last dim."""

    _mode = "replicate"
    _nd = 1


class ReplicationPad2d(_PadNd):
    """Edge-repeating padding of the last two dims."""

    _mode = "replicate"
    _nd = 2


class ReplicationPad3d(_PadNd):
    """Edge-repeating padding of the last three dims."""

    _mode = "replicate"
    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    """Constant padding whose value is always 0 (and not shown in the repr)."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Zero padding of the last dim."""


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Zero padding of the last two dims."""


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Zero padding of the last three dims."""
