"""Flatten parameters into one vector and back: ``parameters_to_vector`` /
``vector_to_parameters`` (e.g. for second-order methods or evolution strategies)."""

from __future__ import annotations

from collections.abc import Iterable

from ..._tensor import Tensor
from ...ops.shape import cat
from ..modules.module import _typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor holding every parameter's values, in order.

    Example:
        >>> import tapegrad as torch
        >>> lin = torch.nn.Linear(3, 2)
        >>> torch.nn.utils.parameters_to_vector(lin.parameters()).shape
        torch.Size([8])
    """
    return cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Set the parameters' values from consecutive slices of ``vec``."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for param in parameters:
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
