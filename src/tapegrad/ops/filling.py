"""Filling: ``torch.fill`` (out of place: FillBackward0 for a number, FillBackward1 for a 0-d
tensor value) and the function forms ``torch.fill_`` and ``torch.zero_``."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from . import elementwise as ew
from ._registry import defop

# The same forward and backward rules as fill_'s (ops/elementwise.py), under the node names
# torch gives the out-of-place overloads: FillBackward0/1 (fill_ has FillBackward2/3).
_fill = defop("fill_out_of_place", node="FillBackward0")(ew._fill.forward)
_fill.backward(ew._fill.rule)
_fill_tensor = defop("fill_tensor_out_of_place", node="FillBackward1")(ew._fill_tensor.forward)
_fill_tensor.backward(ew._fill_tensor.rule)


def fill(input: Tensor, value: Any) -> Tensor:
    """A tensor like ``input`` with every element ``value``."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return _fill_tensor(input, value)
    return _fill(input, value=value)


def fill_(input: Tensor, value: Any) -> Tensor:
    return ew.fill_(input, value)


def zero_(input: Tensor) -> Tensor:
    return ew.zero_(input)


__all__ = ["fill", "fill_", "zero_"]
