"""``Geometric(probs=|logits=)``: the number of failures before the first success."""

from __future__ import annotations

from typing import Any

import tapegrad as torch
from tapegrad import Tensor
from tapegrad.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from ._binary_probs import BinaryProbs
from .utils import batch_shape_of, broadcast_all, probs_or_logits

__all__ = ["Geometric"]


class Geometric(BinaryProbs):
    """P(k) = (1 - p)^k p, k = 0, 1, ...; sampled as floor(log u / log(1 - p))."""

    support = constraints.nonnegative_integer

    def __init__(self, probs: Any = None, logits: Any = None,
                 validate_args: bool | None = None) -> None:
        given = probs_or_logits(probs, logits)
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        super().__init__(batch_shape_of(param, given), validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Geometric:
        return self._expand_parameters(Geometric, batch_shape, _instance, "probs", "logits")

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def mode(self) -> Tensor:
        return torch.zeros_like(self.probs)

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs


    def sample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = torch.empty(shape, dtype=self.probs.dtype).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value: Any) -> Tensor:  # k log(1 - p) + log p
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
