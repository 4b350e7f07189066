"""Padding layers (constant / zero / reflect / replicate / circular, 1-3 spatial dims): each
stores its padding in ``F.pad``'s order (last dim first) and calls ``F.pad``."""

from __future__ import annotations

from typing import Any

from ..._tensor import Tensor
from .. import functional as F
from .module import Module
from .utils import _ntuple, _pair, _per_dimension_classes, _quadruple

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


CircularPad1d, CircularPad2d, CircularPad3d = _per_dimension_classes(
    "CircularPad{nd}d", lambda nd: (_CircularPadNd,), "Wrap-around padding of the last {dims}.",
    __name__, lambda nd: {"_nd": nd})


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


ConstantPad1d, ConstantPad2d, ConstantPad3d = _per_dimension_classes(
    "ConstantPad{nd}d", lambda nd: (_ConstantPadNd,), "Pad the last {dims} with ``value``.",
    __name__, lambda nd: {"_nd": nd})
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _per_dimension_classes(
    "ReflectionPad{nd}d", lambda nd: (_PadNd,),
    "Mirror padding of the last {dims} (the edge is not repeated).", __name__,
    lambda nd: {"_mode": "reflect", "_nd": nd})
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _per_dimension_classes(
    "ReplicationPad{nd}d", lambda nd: (_PadNd,), "Edge-repeating padding of the last {dims}.",
    __name__, lambda nd: {"_mode": "replicate", "_nd": nd})


class _ZeroPadNd(_ConstantPadNd):
    """Constant padding whose value is always 0 (and not shown in the repr)."""

    def __init__(self, padding: Any) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


ZeroPad1d, ZeroPad2d, ZeroPad3d = _per_dimension_classes(
    "ZeroPad{nd}d", lambda nd: (_ZeroPadNd, (ConstantPad1d, ConstantPad2d, ConstantPad3d)[nd - 1]),
    "Zero padding of the last {dims}.", __name__, lambda nd: {})
