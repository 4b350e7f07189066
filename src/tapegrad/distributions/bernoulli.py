"""``Bernoulli(probs=|logits=)``: a coin flip, 1 with probability p."""

from __future__ import annotations

import math
from typing import Any

import tapegrad as torch
from tapegrad import Tensor
from tapegrad.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from ._binary_probs import BinaryProbsParam
from .exp_family import ExponentialFamily
from .utils import broadcast_all, delegate_to

__all__ = ["Bernoulli"]


class Bernoulli(BinaryProbsParam, ExponentialFamily):
    """The Bernoulli distribution, parameterized by ``probs`` or by ``logits`` (not both)."""

    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        self._init_probs_or_logits(probs, logits, validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Bernoulli:
        return self._expand_parameters(Bernoulli, batch_shape, _instance, "probs", "logits")

    mean = delegate_to("probs")

    @property
    def mode(self) -> Tensor:
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = math.nan
        return mode

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return torch.bernoulli(self.probs.expand(shape))

    def log_prob(self, value: Any) -> Tensor:  # x log p + (1 - x) log(1 - p)
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        return self._support_along_batch(torch.arange(2, dtype=self._param.dtype), expand)

    @property
    def _natural_params(self) -> tuple:
        return (torch.log(self.probs) - torch.log1p(-self.probs),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return torch.log1p(torch.exp(x))
