"""``Laplace(loc, scale)``: the double exponential; inverse-CDF sampling from one uniform."""

from __future__ import annotations

from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from ._loc_scale import LocScale
from .utils import delegate_to

__all__ = ["Laplace"]


class Laplace(LocScale):
    """The Laplace distribution with density exp(-|x - loc| / scale) / (2 scale)."""

    def expand(self, batch_shape: Any, _instance: Any = None) -> Laplace:
        return self._expand_parameters(Laplace, batch_shape, _instance, "loc", "scale")

    mean = delegate_to("loc")

    @property
    def variance(self) -> Tensor:
        return 2 * self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return (2**0.5) * self.scale

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        # u ~ U(eps - 1, 1); x = loc - scale sign(u) log(1 - |u|)
        shape = self._extended_shape(sample_shape)
        finfo = torch.finfo(self.loc.dtype)
        u = torch.empty(shape, dtype=self.loc.dtype).uniform_(finfo.eps - 1, 1)
        return self.loc - self.scale * u.sign() * torch.log1p(-u.abs())

    def log_prob(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return -torch.log(2 * self.scale) - torch.abs(value - self.loc) / self.scale

    def cdf(self, value: Any) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * torch.expm1(
            -(value - self.loc).abs() / self.scale)

    def icdf(self, value: Any) -> Tensor:
        term = value - 0.5
        return self.loc - self.scale * term.sign() * torch.log1p(-2 * term.abs())

    def entropy(self) -> Tensor:
        return 1 + torch.log(2 * self.scale)
