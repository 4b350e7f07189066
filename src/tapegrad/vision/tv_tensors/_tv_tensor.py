"""``TVTensor``: the base of the tensor subclasses that tell the v2 transforms what a tensor holds
(an image, a video, a mask, boxes, keypoints).

A TVTensor is a tapegrad ``Tensor`` of a subclass, sharing the data of the tensor it was made
from. Its methods and operators return plain tensors, as torchvision's do (``img + 1`` is no
longer an image: the transforms decide what keeps the label), except ``clone``, ``to``,
``detach``, ``requires_grad_`` and ``pin_memory``, which keep the class and its metadata; under
``set_return_type("TVTensor")`` every method keeps it. This is done here by wrapping the
``Tensor`` methods once, when this module is imported, so plain tensors pay nothing for it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import tapegrad

from ... import _printing
from ..._tensor import Tensor
from . import _torch_function_helpers as _helpers

D = TypeVar("D", bound="TVTensor")


def _same_sequence(output: Any, parts: Any) -> Any:
    """``parts`` in a sequence of ``output``'s type (a list, a tuple, or the named tuple of a
    ``max(dim=...)``, which torch's structseq builds from one iterable as well)."""
    make = getattr(type(output), "_make", None)
    return make(parts) if make is not None else type(output)(parts)


def _rebuild_tv_tensor(cls: type, data: Any, requires_grad: bool, state: dict) -> TVTensor:
    """Unpickle a TVTensor: its class, data, requires_grad and metadata."""
    out = tapegrad.as_tensor(data).as_subclass(cls)
    out.__dict__.update(state)
    if requires_grad:
        out.requires_grad_(True)
    return out  # type: ignore[return-value]


class TVTensor(Tensor):
    """The base class of ``Image``, ``Video``, ``Mask``, ``BoundingBoxes`` and ``KeyPoints``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # the subclasses build themselves in __new__; Tensor's legacy constructor must not run
        pass

    @staticmethod
    def _to_tensor(data: Any, dtype: Any = None, device: Any = None,
                   requires_grad: bool | None = None) -> Tensor:
        if requires_grad is None:
            requires_grad = data.requires_grad if isinstance(data, Tensor) else False
        return tapegrad.as_tensor(data, dtype=dtype, device=device).requires_grad_(
            requires_grad)

    @classmethod
    def _wrap_output(cls, output: Any, args: Sequence[Any] = (),
                     kwargs: Mapping[str, Any] | None = None) -> Any:
        """``output`` (a tensor, or a tuple or list of them) as this class."""
        if isinstance(output, Tensor) and not isinstance(output, cls):
            output = output.as_subclass(cls)
        if isinstance(output, (tuple, list)):
            output = _same_sequence(output, (cls._wrap_output(part, args, kwargs)
                                            for part in output))
        return output

    @classmethod
    def wrap(cls, tensor: Tensor, like: TVTensor, **kwargs: Any) -> TVTensor:
        """``tensor`` as this class, with the metadata of ``like`` (the base class has none)."""
        return tensor.as_subclass(cls)  # type: ignore[return-value]

    def _make_repr(self, **kwargs: Any) -> str:
        extra_repr = ", ".join(f"{key}={value}" for key, value in kwargs.items())
        return f"{TVTensor.__repr__(self)[:-1]}, {extra_repr})"

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        fn = self.grad_fn
        return _printing.format_tensor(
            self._data, self.dtype.name,
            requires_grad=self._requires_grad and fn is None,
            grad_fn_name=None if fn is None else fn.name().split("::")[-1],
            prefix=f"{type(self).__name__}(")

    def __deepcopy__(self: D, memo: dict[int, Any]) -> D:
        return self.detach().clone().requires_grad_(self.requires_grad)  # type: ignore[return-value]

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild_tv_tensor, (type(self), self._data.copy(), self._requires_grad,
                                     dict(self.__dict__)))


# torch's operators that answer NotImplemented (so Python tries the other operand, then raises
# "unsupported operand") when TVTensors of two unrelated classes meet; the other methods raise
_BINARY_OPERATORS = frozenset(
    f"__{op}__" for base in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                             "div")
    for op in (base, "r" + base, "i" + base)) | {"__ne__", "__lt__", "__le__", "__gt__", "__ge__"}
# operators torch runs without asking the subclasses
_NO_DISPATCH = frozenset({"__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__",
                          "__lshift__", "__rshift__", "__rlshift__", "__rrshift__", "__eq__",
                          "__iand__", "__ior__", "__ixor__", "__ilshift__", "__irshift__"})


def _dispatch_fails(self: TVTensor, args: tuple, kwargs: dict) -> list[type] | None:
    """The TVTensor classes among the operands when none is a subclass of all of them (torch's
    ``__torch_function__`` handlers all answer NotImplemented then), else None."""
    types = [type(self)]
    for arg in (*args, *kwargs.values()):
        for part in (arg if isinstance(arg, (list, tuple)) else (arg,)):
            if isinstance(part, TVTensor) and type(part) not in types:
                types.append(type(part))
    if len(types) == 1 or any(all(issubclass(t, u) for u in types) for t in types):
        return None
    return types


def _dispatch_error(name: str, types: list[type]) -> TypeError:
    handlers = "".join(f"  - tensor subclass {t}\n" for t in types)
    return TypeError(f"Multiple dispatch failed for 'torch.Tensor.{name}'; all "
                     f"__torch_function__ handlers returned NotImplemented:\n\n{handlers}\n"
                     "For more information, try re-running with TORCH_LOGS=not_implemented")


def _keeping_class(name: str, method: Any) -> Any:
    """``method`` of Tensor as TVTensors run it: the result as a plain tensor, or as the
    TVTensor's class where the method or ``set_return_type`` says so. Operands of unrelated
    TVTensor classes (an image plus a mask) are refused, as torch's dispatch refuses them."""
    forced = name in _helpers._FORCE_TORCHFUNCTION_SUBCLASS
    check = name not in _NO_DISPATCH
    operator = name in _BINARY_OPERATORS

    @functools.wraps(method)
    def run(self: TVTensor, *args: Any, **kwargs: Any) -> Any:
        if check and (args or kwargs):
            types = _dispatch_fails(self, args, kwargs)
            if types is not None:
                if operator:
                    return NotImplemented
                raise _dispatch_error(name, types)
        output = method(self, *args, **kwargs)
        if forced or _helpers._TORCHFUNCTION_SUBCLASS:
            return type(self)._wrap_output(output, (self, *args), kwargs)
        if isinstance(output, TVTensor):  # an in-place op returns self: hand out a plain alias
            return output.as_subclass(Tensor)
        return output

    return run


def _setitem(self: TVTensor, key: Any, value: Any) -> None:
    types = _dispatch_fails(self, (key, value), {})
    if types is not None:
        raise _dispatch_error("__setitem__", types)
    Tensor.__setitem__(self, key, value)


# methods that return no tensor, build the object, or must see the subclass itself
_UNWRAPPED = frozenset({
    "__init__", "__new__", "__repr__", "__str__", "__format__", "__hash__", "__len__",
    "__bool__", "__float__", "__int__", "__index__", "__complex__", "__reduce_ex__",
    "__reduce__", "__deepcopy__", "__copy__", "__setattr__", "__getattribute__", "__getattr__",
    "__delattr__", "__dir__", "__setitem__", "__array__", "__array_wrap__", "__contains__",
    "__init_subclass__", "__class_getitem__", "__sizeof__", "__subclasshook__", "__iter__",
    "__dlpack__", "__dlpack_device__", "__getstate__", "__setstate__", "__reversed__",
    "as_subclass", "numpy", "tolist", "item", "size", "dim", "stride", "numel", "data_ptr",
    "element_size", "storage_offset", "is_contiguous", "is_floating_point", "is_complex",
    "untyped_storage", "storage", "backward", "register_hook", "retain_grad",
    "register_post_accumulate_grad_hook", "type",
})


def _install() -> None:
    for name, attr in vars(Tensor).items():
        private = name.startswith("_") and not name.endswith("__")
        if private or name in _UNWRAPPED or name in vars(TVTensor) or not callable(attr):
            continue
        if isinstance(attr, (staticmethod, classmethod, type, property)):
            continue
        setattr(TVTensor, name, _keeping_class(name, attr))
    TVTensor.__setitem__ = _setitem  # type: ignore[method-assign,assignment]


_install()
