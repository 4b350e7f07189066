"""Forward-mode tangent rules that op entries declare beside their backward rules
(``@entry.jvp(linear_tangent(entry))``): the rule of an op linear in some of its inputs is the
op itself, applied to the tangents.

Forward-mode AD (autograd/forward_ad.py) runs these rules and derives the tangents of the other
ops from their backward rules. It sits above the ops, as the registry's detour; these builders
are written with the op families, below it, so that ops/*.py can import them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor


def zero_tangent(t: Tensor) -> Tensor:
    """The tangent of a tensor that has none: zeros of its shape and dtype."""
    return Tensor._make(np.zeros(t._data.shape, t._data.dtype))


def linear_tangent(op: Any, positions: tuple = (0,)) -> Callable:
    """The tangent rule of an op linear in the inputs at ``positions`` (jointly, and affine in
    Python numbers there): the op itself, applied to their tangents (zeros where none)."""

    def linear_jvp(tangents: list, inputs: tuple, out: Any, **params: Any) -> Any:
        args = list(inputs)
        for i in positions:
            if i >= len(inputs):
                break
            x = inputs[i]
            if isinstance(x, Tensor):
                t = tangents[i]
                args[i] = t if t is not None else zero_tangent(x)
            elif isinstance(x, (int, float, complex)) and not isinstance(x, bool):
                args[i] = 0
        return op(*args, **params)

    return linear_jvp


def multilinear_tangent(op: Any, positions: tuple = (0, 1)) -> Callable:
    """The tangent rule of an op linear in each input at ``positions`` separately (``a * b``,
    ``a @ b``): the sum over those inputs of the op with that one replaced by its tangent."""

    def multilinear_jvp(tangents: list, inputs: tuple, out: Any, **params: Any) -> Any:
        total = None
        for i in positions:
            if i >= len(inputs) or tangents[i] is None:
                continue
            args = list(inputs)
            args[i] = tangents[i]
            term = op(*args, **params)
            total = term if total is None else total + term
        return total

    return multilinear_jvp
