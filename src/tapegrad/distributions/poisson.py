"""``Poisson(rate)``: counts of events at a constant rate."""

from __future__ import annotations

from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from . import constraints
from .exp_family import ExponentialFamily
from .utils import batch_shape_of, broadcast_all, delegate_to

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution, P(k) = rate^k e^{-rate} / k!."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Any, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(batch_shape_of(self.rate, rate), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Poisson:
        return self._expand_parameters(Poisson, batch_shape, _instance, "rate")

    mean = delegate_to("rate")

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    variance = delegate_to("rate")

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.poisson(self.rate.expand(shape))

    def log_prob(self, value: Any) -> Tensor:  # k log rate - rate - log k!
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple:
        return (torch.log(self.rate),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return torch.exp(x)
