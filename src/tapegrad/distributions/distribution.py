"""``Distribution``: the base class of every probability distribution.

A distribution has a ``batch_shape`` (independent distributions side by side) and an
``event_shape`` (the shape of one draw); a sample of ``sample_shape`` has shape
``sample_shape + batch_shape + event_shape``. ``rsample`` draws *reparameterized* samples:
a differentiable function of the parameters and of parameter-free noise, so gradients flow
from the sample back to the parameters (the pathwise estimator); ``sample`` draws without a
graph. ``log_prob`` scores a value. With ``validate_args`` (on by default, as ``assert`` is)
parameters are checked against ``arg_constraints`` and scored values against ``support``, with
torch's messages.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any

import tapegrad as torch
from tapegrad import Tensor

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution"]

# What a failed validation says was expected, of a parameter or of a scored value.
_PARAMETER_EXPECTED = ("parameter {param} ({value}) of distribution {dist!r} to satisfy the "
                       "constraint {constraint!r}")
_SAMPLE_EXPECTED = ("value argument ({value}) to be within the support ({constraint!r}) of the "
                    "distribution {dist!r}")


class Distribution:
    """Distribution is the abstract base class for probability distributions."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument validation on or off for every distribution made afterwards."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape: Any = (), event_shape: Any = (),
                 validate_args: bool | None = None) -> None:
        self._batch_shape = torch.Size(batch_shape)
        self._event_shape = torch.Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(
                    f"{self.__class__} does not define `arg_constraints`. Please set "
                    "`arg_constraints = {}` or initialize the distribution with "
                    "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # cannot be checked
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # not computed yet: the given parameterization was checked
                self._check_constraint(constraint, getattr(self, param), _PARAMETER_EXPECTED,
                                       param)
        super().__init__()

    def expand(self, batch_shape: Any, _instance: Any = None) -> Distribution:
        """A new distribution with parameters expanded (not copied) to ``batch_shape``."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Any:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Any:
        """The shape of a single sample (without batching)."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """The constraint each tensor argument must satisfy."""
        raise NotImplementedError

    @property
    def support(self) -> Any:
        """The constraint a sample satisfies."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape: Any = ()) -> Tensor:
        """Draw a sample of shape ``sample_shape + batch_shape + event_shape``, no graph."""
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape: Any = ()) -> Tensor:
        """Draw a reparameterized sample (differentiable in the parameters)."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """Deprecated: ``sample((n,))``."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(torch.Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        return torch.exp(self.entropy())

    def _extended_shape(self, sample_shape: Any = ()) -> Any:
        """sample_shape + batch_shape + event_shape."""
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(sample_shape)
        return torch.Size(tuple(sample_shape) + tuple(self._batch_shape)
                          + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """Check a scored value's shape against batch and event shapes, and its support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError("Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual_shape} vs {expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(
                f"{self.__class__} does not define `support` to enable sample validation. "
                "Please initialize the distribution with `validate_args=False` to turn off "
                "validation.", stacklevel=2)
            return
        self._check_constraint(support, value, _SAMPLE_EXPECTED)

    def _check_constraint(self, constraint: Any, value: Tensor, expected: str,
                          param: str = "") -> None:
        """Raise torch's ValueError unless every entry of ``value`` satisfies ``constraint``.
        ``expected`` (``_PARAMETER_EXPECTED`` or ``_SAMPLE_EXPECTED``) says what was expected;
        it is filled in only when raising, as the reprs it holds take time."""
        if not bool(constraint.check(value).all()):
            described = f"{type(value).__name__} of shape {tuple(value.shape)}"
            expectation = expected.format(param=param, value=described, dist=self,
                                          constraint=constraint)
            raise ValueError(f"Expected {expectation}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls: type, _instance: Any = None) -> Any:
        if _instance is None and type(self).__init__ != cls.__init__:  # type: ignore[misc]
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _support_along_batch(self, values: Tensor, expand: bool) -> Tensor:
        """``enumerate_support`` of a distribution with scalar events: the support's
        ``values`` (1-d) as a column in front of the batch dims, expanded over them when
        ``expand`` (else of size 1 there)."""
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values

    def _expand_parameters(self, cls: type, batch_shape: Any, _instance: Any,
                           *names: str, copied: tuple = ()) -> Any:
        """torch's ``expand`` for ``cls``, a distribution whose parameters ``names`` (tensors or
        distributions) all have its batch shape: the new instance (``_instance``, or one made
        without ``__init__``) gets the attributes ``copied`` as they are and each of ``names``
        that this instance holds expanded to ``batch_shape`` (a lazily computed one that is
        not computed yet is left for the new instance to compute), then
        :meth:`_finish_expand`."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        for name in copied:
            setattr(new, name, getattr(self, name))
        for name in names:
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(batch_shape))
        return self._finish_expand(new, batch_shape)

    def _finish_expand(self, new: Any, batch_shape: Any) -> Any:
        """The last steps of every ``expand``: ``Distribution.__init__`` on ``new``
        (unvalidated) with ``batch_shape`` and this event shape, then this instance's
        ``_validate_args``. (torch calls the expanding class's parent ``__init__``, which there
        is always this one; here shared bases such as ``LocScale`` have an ``__init__`` of
        their own, so this one is named.)"""
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def __repr__(self) -> str:
        names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(
            f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
            for p in names)
        return self.__class__.__name__ + "(" + args + ")"


if sys.flags.optimize:  # python -O turns validation off, as it does assert
    Distribution._validate_args = False
