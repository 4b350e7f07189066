"""The ``probs`` / ``logits`` pair of the distributions over one success probability
(Bernoulli, Binomial, NegativeBinomial, Geometric, LogitRelaxedBernoulli), written once.

Such a distribution is given ``probs`` or ``logits`` (``utils.set_probs_or_logits``); the
other is computed from it on first use (a sigmoid, or its inverse) and kept on the instance,
as torch's ``lazy_property`` does. Each class takes them as class attributes::

    class Bernoulli(ExponentialFamily):
        logits = _binary_probs.logits
        probs = _binary_probs.probs
        param_shape = _binary_probs.param_shape
"""

from __future__ import annotations

from typing import Any

from tapegrad import Tensor

from .utils import lazy_property, logits_to_probs, probs_to_logits

__all__ = ["logits", "param_shape", "probs"]


@lazy_property
def logits(self: Any) -> Tensor:
    """log(p) - log(1 - p), from ``probs`` (clamped away from 0 and 1)."""
    return probs_to_logits(self.probs, is_binary=True)


@lazy_property
def probs(self: Any) -> Tensor:
    """sigmoid(logits), from ``logits``."""
    return logits_to_probs(self.logits, is_binary=True)


@property  # type: ignore[misc]
def param_shape(self: Any) -> Any:
    """The shape of the parameter the distribution was given (``probs`` or ``logits``)."""
    return self._param.size()
