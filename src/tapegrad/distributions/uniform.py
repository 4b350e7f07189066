"""``Uniform(low, high)``: uniform on [low, high); reparameterized as low + u (high - low)."""

from __future__ import annotations

import math
from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from . import constraints
from .distribution import Distribution
from .utils import batch_shape_of, broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """The continuous uniform distribution on the half-open interval [low, high)."""

    has_rsample = True

    @property
    def arg_constraints(self) -> dict:  # type: ignore[override]
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    def __init__(self, low: Any, high: Any, validate_args: bool | None = None) -> None:
        self.low, self.high = broadcast_all(low, high)
        super().__init__(batch_shape_of(self.low, low, high), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Uniform:
        return self._expand_parameters(Uniform, batch_shape, _instance, "low", "high")

    @property
    def mean(self) -> Tensor:
        return (self.high + self.low) / 2

    @property
    def mode(self) -> Tensor:
        return math.nan * self.high

    @property
    def stddev(self) -> Tensor:
        return (self.high - self.low) / 12**0.5

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low).pow(2) / 12

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self) -> Any:
        return constraints.interval(self.low, self.high)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        rand = torch.rand(shape, dtype=self.low.dtype)
        return self.low + rand * (self.high - self.low)

    def log_prob(self, value: Any) -> Tensor:  # log(1[low <= x < high]) - log(high - low)
        if self._validate_args:
            self._validate_sample(value)
        lb = self.low.le(value).type_as(self.low)
        ub = self.high.gt(value).type_as(self.low)
        return torch.log(lb.mul(ub)) - torch.log(self.high - self.low)

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        result = (value - self.low) / (self.high - self.low)
        return result.clamp(min=0, max=1)

    def icdf(self, value: Any) -> Tensor:
        return value * (self.high - self.low) + self.low

    def entropy(self) -> Tensor:
        return torch.log(self.high - self.low)
