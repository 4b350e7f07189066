"""``HalfNormal(scale)``: |X| for X ~ Normal(0, scale)."""

from __future__ import annotations

import math
from typing import Any

from tapegrad import Tensor

from ._half import Half
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(Half):
    """The folded normal at 0: density 2 N(x; 0, scale) for x >= 0."""

    _base_family = Normal

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfNormal:
        return self._expand_parameters(HalfNormal, batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (1 - 2 / math.pi)
