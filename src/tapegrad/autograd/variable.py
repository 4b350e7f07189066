"""``torch.autograd.variable``: ``Variable``, the constructor of PyTorch before 0.4.

``Variable(x, requires_grad=True)`` is a new leaf sharing ``x``'s memory, with the flag set;
``isinstance(x, Variable)`` is true for every tensor. The other old spellings (typed tensor
classes, the legacy ``torch.Tensor(...)`` constructor) are in ``_legacy.py``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _dtype
from .._naming import public
from .._tensor import Tensor, _type_name

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)


@public(".autograd.variable")
class Variable(metaclass=_VariableMeta):
    """``torch.autograd.Variable(data, requires_grad=False, volatile=False)``.

    Variables were merged into Tensors in PyTorch 0.4; the constructor remains: it returns a
    new leaf tensor sharing ``data``'s memory, with ``requires_grad`` as given.

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.autograd import Variable
        >>> x = Variable(torch.tensor([1.0, 2.0]), requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad
        tensor([2., 4.])
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
        names = ("data", "requires_grad", "volatile")
        for k in kwargs:
            if k not in names:
                raise TypeError(f"'{k}' is an invalid keyword argument for this function")
        bound = dict(zip(names, args, strict=False))
        bound.update(kwargs)
        data = bound.get("data")
        rg = bound.get("requires_grad", False)
        if rg is not False and rg is not True:
            if not hasattr(rg, "__index__"):
                raise TypeError(
                    f"'{type(rg).__name__}' object cannot be interpreted as an integer"
                )
            rg = bool(rg.__index__())
        if bound.get("volatile", False):
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        if data is None:
            out = Tensor._make(np.zeros(0, dtype=_dtype.get_default_dtype().np))
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {_type_name(data)}")
        else:
            out = Tensor._make(data._data)
            out._version_counter = data._version_counter
        if rg:
            if out._data.dtype.kind not in "fc" and out.dtype.name != "bfloat16":
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            out._requires_grad = True
        return out
