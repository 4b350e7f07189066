"""Helpers shared by the distributions: broadcasting parameters (and the batch shape they
give), the ``probs``-or-``logits`` parameterization, logits <-> probabilities, clamping
probabilities away from 0 and 1, lazily computed attributes, and properties that read an
attribute of another object (``delegate_to``)."""

from __future__ import annotations

import numbers
import operator
from functools import update_wrapper
from typing import Any

import tapegrad as torch
from tapegrad import Tensor

__all__ = ["batch_shape_of", "broadcast_all", "clamp_probs", "delegate_to",
           "expand_probs_or_logits", "lazy_property", "logits_to_probs", "probs_or_logits",
           "probs_to_logits", "set_probs_or_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]


# The Euler-Mascheroni constant (the mean of a standard Gumbel draw is this).
_EULER_GAMMA = 0.57721566490153286060


def broadcast_all(*values: Any) -> tuple:
    """Broadcast tensors and numbers to one shape; numbers become tensors of the first
    tensor's dtype (the default dtype when all are numbers)."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        dtype = torch.get_default_dtype()
        for v in values:
            if isinstance(v, Tensor):
                dtype = v.dtype
                break
        values = tuple(v if isinstance(v, Tensor) else torch.tensor(v, dtype=dtype)
                       for v in values)
    shape = torch.Size(torch.broadcast_shapes(*(v.shape for v in values)))
    return tuple(v if v.shape == shape else v.expand(shape) for v in values)


def batch_shape_of(broadcast: Tensor, *given: Any) -> torch.Size:
    """A distribution's batch shape: () when every parameter was ``given`` as a plain number
    (the distribution stays scalar), else the shape of its ``broadcast`` parameters."""
    if all(isinstance(v, numbers.Number) for v in given):
        return torch.Size()
    return broadcast.size()


def probs_or_logits(probs: Any, logits: Any) -> Any:
    """The one of ``probs`` and ``logits`` that was given: exactly one must be."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return probs if probs is not None else logits


def set_probs_or_logits(dist: Any, param: Tensor, is_probs: bool) -> None:
    """``dist.probs`` (``is_probs``) or ``dist.logits`` set to ``param``, and ``dist._param``
    (the given one, whose shape is ``param_shape``); the other is computed on first use."""
    if is_probs:
        dist.probs = param
    else:
        dist.logits = param
    dist._param = param


def expand_probs_or_logits(dist: Any, new: Any, shape: Any) -> None:
    """In ``new``, an ``expand`` of ``dist``: those of ``probs`` and ``logits`` that ``dist``
    holds (given or computed already), expanded to ``shape``, and ``_param`` the last."""
    if "probs" in dist.__dict__:
        new.probs = dist.probs.expand(shape)
        new._param = new.probs
    if "logits" in dist.__dict__:
        new.logits = dist.logits.expand(shape)
        new._param = new.logits


def _standard_normal(shape: Any, dtype: Any, device: Any = None) -> Tensor:
    """A new tensor of standard normals, drawn as ``torch.empty(shape).normal_()``."""
    return torch.empty(shape, dtype=dtype).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dimensions."""
    if dim == 0:
        return value
    required_shape = value.shape[: value.dim() - dim] + (-1,)
    return value.reshape(required_shape).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid(logits) when binary, else softmax over the last dim."""
    if is_binary:
        return torch.sigmoid(logits)
    return torch.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp into [eps, 1 - eps] of the dtype, so that logs stay finite."""
    eps = torch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log(p) - log(1 - p) when binary, else log(p) (each after clamping)."""
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(ps_clamped) - torch.log1p(-ps_clamped)
    return torch.log(ps_clamped)


def delegate_to(path: str) -> Any:
    """A read-only property whose value is ``self.<path>``, ``path`` a dotted attribute path
    such as ``"base_dist.scale"``: how a distribution built on another one shows that one's
    parameters (and moments) as its own, without copying them."""
    return property(operator.attrgetter(path), doc=f"``self.{path}``.")


class lazy_property:  # noqa: N801 - torch's name
    """Computed on first access, then stored on the instance (as a plain attribute)."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)  # type: ignore[arg-type]

    def __get__(self, instance: Any, obj_type: Any = None) -> Any:
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):  # noqa: N801
    """What a lazy_property reads as on the class: also a property, for introspection."""

    def __init__(self, wrapped: Any) -> None:
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (below diagonal ``diag``) of the last two dims, as a vector."""
    n = mat.shape[-1]
    if not -n <= diag < n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    flat = mat.reshape(mat.shape[:-2] + (n * n,))
    return flat[..., torch.tensor(_tril_positions(n, diag))]


def _tril_positions(n: int, diag: int) -> list:
    return [i * n + j for i in range(n) for j in range(n) if j - i <= diag]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The inverse of :func:`tril_matrix_to_vec`: a vector laid into a lower triangle."""
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if not round(n) - n < torch.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    flat = vec.new_zeros(vec.shape[:-1] + (n * n,))
    idx = torch.tensor(_tril_positions(n, diag)).expand(vec.shape)
    return flat.scatter_add(-1, idx, vec).reshape(vec.shape[:-1] + (n, n))
