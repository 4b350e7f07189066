"""``Gamma(concentration, rate)``: sums of exponential waiting times, drawn by torch's
Marsaglia-Tsang sampler (``_sampling``) with the implicit reparameterization gradient."""

from __future__ import annotations

from typing import Any

import tapegrad as torch
from tapegrad import Tensor
from tapegrad.ops.special import gammainc

from . import constraints
from .exp_family import ExponentialFamily
from .utils import batch_shape_of, broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """The gamma distribution with density rate^a x^{a-1} e^{-rate x} / Gamma(a)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration: Any, rate: Any, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = batch_shape_of(self.concentration, concentration, rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gamma:
        return self._expand_parameters(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = torch._standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)  # never exactly 0
        return value

    def log_prob(self, value: Any) -> Tensor:
        # a log rate + (a - 1) log x - rate x - log Gamma(a)
        value = torch.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (torch.xlogy(self.concentration, self.rate)
                + torch.xlogy(self.concentration - 1, value)
                - self.rate * value - torch.lgamma(self.concentration))

    def cdf(self, value: Any) -> Tensor:  # P(a, rate x), the regularized incomplete gamma
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)

    def entropy(self) -> Tensor:
        return (self.concentration - torch.log(self.rate) + torch.lgamma(self.concentration)
                + (1.0 - self.concentration) * torch.digamma(self.concentration))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())
