"""``LocScale``: what the location-scale families on the real line (``Normal``, ``Cauchy``,
``Laplace``) share: a real ``loc`` and a positive ``scale`` broadcast together, real samples
drawn with a reparameterization, and the mode at ``loc``."""

from __future__ import annotations

from typing import Any

from tapegrad import Tensor

from . import constraints
from .distribution import Distribution
from .utils import batch_shape_of, broadcast_all, delegate_to

__all__ = ["LocScale"]


class LocScale(Distribution):
    """A distribution of ``loc + scale * Z``, Z from one fixed standard distribution."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc: Any, scale: Any, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(batch_shape_of(self.loc, loc, scale), validate_args=validate_args)

    mode = delegate_to("loc")

    def _standard_sample(self, shape: Any) -> Tensor:
        """A draw of Z of ``shape``, free of the parameters."""
        raise NotImplementedError

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = self._standard_sample(shape)
        return self.loc + eps * self.scale
