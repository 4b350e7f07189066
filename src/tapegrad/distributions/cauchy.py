"""``Cauchy(loc, scale)`` (the ratio of two normals; no mean, no variance) and ``HalfCauchy``."""

from __future__ import annotations

import math
from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from ._half import Half
from ._loc_scale import LocScale
from .utils import delegate_to

__all__ = ["Cauchy", "HalfCauchy"]


class Cauchy(LocScale):
    """density 1 / (pi scale (1 + ((x - loc) / scale)^2)); drawn with ``cauchy_``."""

    def expand(self, batch_shape: Any, _instance: Any = None) -> Cauchy:
        return self._expand_parameters(Cauchy, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self) -> Tensor:
        return torch.full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def variance(self) -> Tensor:
        return torch.full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def _standard_sample(self, shape: Any) -> Tensor:
        return torch.empty(shape, dtype=self.loc.dtype).cauchy_()

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return torch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value: Any) -> Tensor:
        return torch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self) -> Tensor:
        return math.log(4 * math.pi) + self.scale.log()


class HalfCauchy(Half):
    """|X| for X ~ Cauchy(0, scale)."""

    _base_family = Cauchy

    def expand(self, batch_shape: Any, _instance: Any = None) -> HalfCauchy:
        return self._expand_parameters(HalfCauchy, batch_shape, _instance)

    @property
    def mean(self) -> Tensor:
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    variance = delegate_to("base_dist.variance")

    def _log_prob_value(self, value: Any) -> Any:  # torch's HalfCauchy scores in scale's dtype
        return torch.as_tensor(value, dtype=self.base_dist.scale.dtype)
