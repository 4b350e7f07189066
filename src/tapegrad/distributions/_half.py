"""``Half``: what ``HalfNormal`` and ``HalfCauchy`` share: |X| for X ~ base(0, scale), a
symmetric base folded at 0, so that its density doubles on x >= 0 and its CDF is 2 F(x) - 1."""

from __future__ import annotations

import math
from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform
from .utils import delegate_to

__all__ = ["Half"]


class Half(TransformedDistribution):
    """|X| for X ~ ``_base_family(0, scale)``; subclasses name the family."""

    _base_family: Any  # the symmetric distribution folded: Normal or Cauchy
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative  # type: ignore[assignment]
    has_rsample = True

    def __init__(self, scale: Any, validate_args: bool | None = None) -> None:
        base_dist = self._base_family(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    scale = delegate_to("base_dist.scale")

    @property
    def mode(self) -> Tensor:
        return torch.zeros_like(self.scale)

    def _log_prob_value(self, value: Any) -> Any:
        """The scored value as the base distribution takes it (here: as given)."""
        return value

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = self._log_prob_value(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -math.inf)

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob: Any) -> Tensor:
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() - math.log(2)
