"""``Normal(loc, scale)``: the Gaussian; reparameterized as loc + scale * eps."""

from __future__ import annotations

import math
from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from ._loc_scale import LocScale
from .exp_family import ExponentialFamily
from .utils import _standard_normal, delegate_to

__all__ = ["Normal"]


class Normal(LocScale, ExponentialFamily):
    """The normal distribution N(loc, scale^2).

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.distributions.Normal(0.0, 1.0).sample()
        tensor(1.5410)
    """

    _mean_carrier_measure = 0

    def expand(self, batch_shape: Any, _instance: Any = None) -> Normal:
        return self._expand_parameters(Normal, batch_shape, _instance, "loc", "scale")

    mean = delegate_to("loc")
    stddev = delegate_to("scale")

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.normal(self.loc.expand(shape), self.scale.expand(shape))

    def _standard_sample(self, shape: Any) -> Tensor:
        return _standard_normal(shape, dtype=self.loc.dtype)

    def log_prob(self, value: Any) -> Tensor:
        # log N(x; mu, s) = -(x - mu)^2 / (2 s^2) - log s - log sqrt(2 pi)
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale**2
        log_scale = (math.log(self.scale) if isinstance(self.scale, (int, float))
                     else self.scale.log())
        return -((value - self.loc) ** 2) / (2 * var) - log_scale - math.log(
            math.sqrt(2 * math.pi))

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + torch.erf((value - self.loc) * self.scale.reciprocal()
                                    / math.sqrt(2)))

    def icdf(self, value: Any) -> Tensor:
        return self.loc + self.scale * torch.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self) -> Tensor:
        return 0.5 + 0.5 * math.log(2 * math.pi) + torch.log(self.scale)

    @property
    def _natural_params(self) -> tuple:
        return (self.loc / self.scale.pow(2), -0.5 * self.scale.pow(2).reciprocal())

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return -0.25 * x.pow(2) / y + 0.5 * torch.log(-math.pi / y)
