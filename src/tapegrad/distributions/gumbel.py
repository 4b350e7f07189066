"""``Gumbel(loc, scale)``: the distribution of maxima; loc - scale log(-log u)."""

from __future__ import annotations

import math
from numbers import Number
from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import _EULER_GAMMA, broadcast_all, delegate_to

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """Uniform(tiny, 1 - eps) through -log, negate, -log, then loc - scale x."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real  # type: ignore[assignment]

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = torch.finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(finfo.tiny, 1 - finfo.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(torch.full_like(self.loc, finfo.tiny),
                                torch.full_like(self.loc, 1 - finfo.eps),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-torch.ones_like(
            self.scale)), ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape: Any, _instance: Any = None) -> Gumbel:
        return self._expand_parameters(Gumbel, batch_shape, _instance, "loc", "scale")

    def log_prob(self, value: Any) -> Tensor:  # y - e^y - log scale, y = (loc - x) / scale
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return y - y.exp() - self.scale.log()

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER_GAMMA

    mode = delegate_to("loc")

    @property
    def stddev(self) -> Tensor:
        return math.pi / math.sqrt(6) * self.scale

    @property
    def variance(self) -> Tensor:
        return self.stddev.pow(2)

    def entropy(self) -> Tensor:
        return self.scale.log() + (1 + _EULER_GAMMA)
