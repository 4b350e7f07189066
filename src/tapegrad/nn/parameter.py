"""``nn.Parameter`` and ``nn.Buffer``: tensors a Module registers when they are assigned to it.

A Parameter is a Tensor subclass that shares memory (and the version counter) with the tensor it
wraps and requires grad by default. Ops on Parameters return plain Tensors (every op builds its
result with ``Tensor._make``), so only the leaf itself is a Parameter::

    w = nn.Parameter(torch.randn(3, 2))   # Parameter containing: tensor(..., requires_grad=True)
    y = w * 2                             # a plain Tensor with grad_fn=MulBackward0
"""

from __future__ import annotations

from typing import Any

from .._creation import empty
from .._naming import public
from .._tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


def _wrap(cls: type, data: Tensor | None) -> Any:
    """A new ``cls`` instance viewing ``data``'s memory with its version counter."""
    if data is None:
        data = empty(0)
    self: Any = object.__new__(cls)
    Tensor._init(self, data._data)
    if data._inference:  # an inference tensor wrapped is one (it has no version counter)
        self._inference = True
    else:
        self._version_counter = data._version_counter
    return self


@public(".nn.parameter")
class Parameter(Tensor):
    """A Tensor that a Module lists in ``parameters()`` when assigned as an attribute.

    Args:
        data: the tensor to wrap (memory is shared). Default: an empty float tensor.
        requires_grad: whether the parameter requires gradient. Default: ``True``.

    Example:
        >>> import tapegrad as torch
        >>> torch.nn.Parameter(torch.ones(2))
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        self = _wrap(cls, data)
        if requires_grad:
            if self._data.dtype.kind not in "fc" and self.dtype.name != "bfloat16":
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            self.requires_grad_(True)  # (torch's error for an inference tensor outside)
        return self

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__

    def __deepcopy__(self, memo: dict) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    # mypy wrongly reports this signature, identical to Tensor's, as an incompatible override
    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_parameter, (self.data.clone(), self.requires_grad))


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


@public(".nn.parameter")
class Buffer(Tensor):
    """A Tensor that a Module lists in ``buffers()`` when assigned as an attribute.

    Args:
        data: the tensor to wrap (memory is shared). Default: an empty float tensor.
        persistent: whether the buffer is part of the module's ``state_dict``.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        self = _wrap(cls, data)
        self._requires_grad = bool(data is not None and data.requires_grad)
        self.persistent = persistent
        return self

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass


# -- parameters and buffers whose shape a lazy module learns at its first call --------------

_NO_SHAPE = ("Can't access the shape of an uninitialized parameter or buffer. This error usually "
             "happens in `load_state_dict` when trying to load an uninitialized parameter into "
             "an initialized one. Call `forward` to initialize the parameters before accessing "
             "their attributes.")


class UninitializedTensorMixin:
    """A parameter or buffer without a shape yet: ``materialize(shape)`` gives it one and
    makes it what it stands for (``cls_to_become``: a Parameter, a Tensor)."""

    cls_to_become: type

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give it values (uninitialized) of ``shape``, in its dtype unless ``dtype``."""
        me: Any = self
        me.data = empty(shape, device=device, dtype=dtype if dtype is not None
                        else me.data.dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self) -> Any:
        raise RuntimeError(_NO_SHAPE)

    def share_memory_(self) -> Any:
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (self.__class__, (self.requires_grad,))  # type: ignore[attr-defined]


@public(".nn.parameter")
class UninitializedParameter(UninitializedTensorMixin, Parameter):  # type: ignore[misc]
    """A Parameter whose shape is not known yet (a lazy module's, until its first call)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None
                ) -> UninitializedParameter:
        self = _wrap(cls, empty(0, device=device, dtype=dtype))
        self._requires_grad = requires_grad
        return self

    def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None
                 ) -> None:
        pass

    def __deepcopy__(self, memo: dict) -> UninitializedParameter:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, self.data.dtype)
        return memo[id(self)]


@public(".nn.parameter")
class UninitializedBuffer(UninitializedTensorMixin, Tensor):  # type: ignore[misc]
    """A buffer whose shape is not known yet (a lazy module's, until its first call)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> UninitializedBuffer:
        self = _wrap(cls, empty(0, device=device, dtype=dtype))
        self._requires_grad = requires_grad
        self.persistent = persistent
        self._is_buffer = True
        return self

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        pass


def is_lazy(param: Any) -> bool:
    """Whether ``param`` has no shape yet."""
    return isinstance(param, UninitializedTensorMixin)
