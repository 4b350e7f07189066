"""The ``probs`` / ``logits`` parameterization of the distributions over one success
probability (Bernoulli, Binomial, NegativeBinomial, Geometric, LogitRelaxedBernoulli), written
once as two base classes.

Such a distribution is given ``probs`` or ``logits``; the other is computed from it on first
use (a sigmoid, or its inverse) and kept on the instance, as torch's ``lazy_property`` does
(``BinaryProbs``). All but Geometric also remember which one was given, as ``_param``, whose
shape is ``param_shape`` (``BinaryProbsParam``)::

    class Bernoulli(BinaryProbsParam, ExponentialFamily):
        ...
"""

from __future__ import annotations

from typing import Any

from tapegrad import Tensor

from . import constraints
from .distribution import Distribution
from .utils import (
    broadcast_all,
    lazy_property,
    logits_to_probs,
    probs_or_logits,
    probs_to_logits,
    set_probs_or_logits,
)

__all__ = ["BinaryProbs", "BinaryProbsParam"]


class BinaryProbs(Distribution):
    """A distribution given the probability of a success as ``probs`` or as ``logits``."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}

    @lazy_property
    def logits(self) -> Tensor:
        """log(p) - log(1 - p), from ``probs`` (clamped away from 0 and 1)."""
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        """sigmoid(logits), from ``logits``."""
        return logits_to_probs(self.logits, is_binary=True)


class BinaryProbsParam(BinaryProbs):
    """A ``BinaryProbs`` that keeps the parameter it was given as ``_param``."""

    _param: Tensor  # the given probs or logits (set_probs_or_logits)

    def _init_probs_or_logits(self, probs: Any, logits: Any, validate_args: bool | None,
                              **values: Any) -> None:
        """``__init__``'s work: the given one of ``probs`` and ``logits`` (exactly one must
        be) broadcast with ``values`` (a ``total_count``, say, stored under its name and cast
        to the parameter's dtype) and stored, then the distribution's ``__init__`` with
        their batch shape."""
        *others, param = broadcast_all(*values.values(), probs_or_logits(probs, logits))
        for name, value in zip(values, others, strict=True):
            setattr(self, name, value.type_as(param))
        set_probs_or_logits(self, param, probs is not None)
        super().__init__(param.size(), validate_args=validate_args)

    def _expand_parameters(self, cls: type, batch_shape: Any, _instance: Any,
                           *names: str, copied: tuple = ()) -> Any:
        """:meth:`Distribution._expand_parameters`, then ``_param`` the expanded one of
        ``probs`` and ``logits`` (``logits`` when this instance holds both, as in torch)."""
        new = super()._expand_parameters(cls, batch_shape, _instance, *names, copied=copied)
        new._param = new.logits if "logits" in self.__dict__ else new.probs
        return new

    @property
    def param_shape(self) -> Any:
        """The shape of the parameter the distribution was given (``probs`` or ``logits``)."""
        return self._param.size()
