"""Filling: ``torch.fill`` (out of place: FillBackward0 for a number, FillBackward1 for a 0-d
tensor value), the function forms ``torch.fill_`` and ``torch.zero_``, and
``torch.scalar_tensor``."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from . import elementwise as ew
from ._registry import defop


@defop("fill_out_of_place", node="FillBackward0")
def _fill(x: np.ndarray, *, value: Any) -> np.ndarray:
    return np.full_like(x, value)


@_fill.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # the old values are gone: no gradient flows back
    return (grad * 0,)


@defop("fill_tensor_out_of_place", node="FillBackward1")
def _fill_tensor(x: np.ndarray, value: np.ndarray) -> np.ndarray:
    return np.full_like(x, value)


@_fill_tensor.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # every element was the value: it gets their sum
    need_x, need_v = ctx.needs_input_grad
    return (grad * 0 if need_x else None), (grad.sum() if need_v else None)


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


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: Any = None, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding ``s`` (of the default float dtype unless ``dtype`` says)."""
    from .. import _dtype

    d = dtype if dtype is not None else _dtype.get_default_dtype()
    from .. import tensor

    return tensor(s, dtype=d, requires_grad=requires_grad)


__all__ = ["fill", "fill_", "zero_", "scalar_tensor"]
