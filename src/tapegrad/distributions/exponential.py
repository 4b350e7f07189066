"""``Exponential(rate)``: waiting times; drawn as exponential_() / rate."""

from __future__ import annotations

from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from . import constraints
from .exp_family import ExponentialFamily
from .utils import batch_shape_of, broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution with density rate * exp(-rate x), x >= 0."""

    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(batch_shape_of(self.rate, rate), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Exponential:
        return self._expand_parameters(Exponential, batch_shape, _instance, "rate")

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def mode(self) -> Tensor:
        return torch.zeros_like(self.rate)

    @property
    def stddev(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return torch.empty(shape, dtype=self.rate.dtype).exponential_() / self.rate

    def log_prob(self, value: Any) -> Tensor:  # log rate - rate x
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 1 - torch.exp(-self.rate * value)

    def icdf(self, value: Any) -> Tensor:
        return -torch.log1p(-value) / self.rate

    def entropy(self) -> Tensor:
        return 1.0 - torch.log(self.rate)

    @property
    def _natural_params(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return -torch.log(-x)
