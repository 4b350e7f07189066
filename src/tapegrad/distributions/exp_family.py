"""``ExponentialFamily``: distributions whose density is exp(<t(x), theta> - F(theta) + k(x)).

For them the entropy follows from the log-normalizer F by the Bregman divergence identity,
H = F(theta) - <theta, grad F(theta)> - E[k(x)], computed here with autograd; subclasses give
their natural parameters, F and E[k(x)] (``_mean_carrier_measure``).
"""

from __future__ import annotations

from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base class of exponential-family distributions."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Any) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """H = F(theta) - <theta, dF/dtheta> - E[k(x)] (the Bregman divergence of F)."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = torch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for np_, g in zip(nparams, gradients, strict=True):
            result = result - (np_ * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
