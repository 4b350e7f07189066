"""The Tensor's methods that run ops, make new tensors or convert: its operators (``x + y``,
``x[i]``, ``x == y``), its in-place methods (``add_``, ``copy_``, ``x[i] = v``), ``type``,
``contiguous``, the ``new_*`` family, and the legacy constructor ``Tensor(2, 3)``.

_tensor.py holds the Tensor's data and metadata and sits below the graph and the ops; these
methods call the ops, so they are written here, above the ops, as the body of a class that is
never instantiated, and ``_attach`` puts each on Tensor when ``tapegrad`` is imported (as
_methods.py does for the method forms of the functional ops).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _creation
from . import _legacy as _legacy_mod
from . import _memory_format as _mf_mod
from ._memory_format import contiguous_format as _mf_contiguous
from ._tensor import CPU, Tensor
from .ops import _views
from .ops import elementwise as _ops_ew
from .ops import indexing as _ops_idx
from .ops import linalg as _ops_la
from .ops import shape as _ops_shape

# A type checker reads the methods as a Tensor's (``self`` is a Tensor); at run time the class
# is a plain holder whose attributes are copied onto Tensor.
if TYPE_CHECKING:
    _Holder = Tensor
else:
    _Holder = object


class _TensorMethods(_Holder):
    """The methods ``_attach`` puts on Tensor (never instantiated)."""

    # -- construction ------------------------------------------------------------------------------

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:  # type: ignore[misc]
        # The legacy constructor (see _legacy.py): Tensor(2, 3) has sizes, Tensor([1, 2]) data.
        if cls is Tensor:
            return _legacy_mod.construct(None, args, kwargs)
        self = object.__new__(cls)
        Tensor._init(self, np.empty(0, dtype=np.float32))
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if type(self) is not Tensor and (args or kwargs):  # a subclass: MyTensor([1, 2])
            self._data = _legacy_mod.construct(None, args, kwargs)._data

    # -- views made again --------------------------------------------------------------------------

    def _view_func(self, new_base: Tensor) -> Tensor:
        """This view made again on ``new_base``: its recorded view ops (with view replay on when
        it was made), else as_strided with its geometry (torch's ``_view_func``)."""
        return _views.replay_view(new_base, _views.replay_chain(self))

    def _rev_view_func_unsafe(self, new_view: Tensor) -> Tensor:
        """A tensor laid out as this view's base, viewing ``new_view`` (torch's reverse view
        function): as_strided of ``new_view`` with the base's geometry, relative to the view."""
        return _views.reverse_view(self, new_view)

    # -- pickling, conversion, copies --------------------------------------------------------------

    def __reduce_ex__(self, proto: Any) -> Any:
        return (_creation._rebuild, (self._data.copy(), self._requires_grad))

    def type(self, dtype: Any = None, non_blocking: builtins.bool = False, *,
             memory_format: Any = None) -> Any:
        """'torch.FloatTensor'...; ``type(torch.DoubleTensor)`` converts (see _legacy.py)."""
        return _legacy_mod.tensor_type(self, dtype, non_blocking)

    def contiguous(self, *, memory_format: Any = _mf_contiguous) -> Tensor:
        if memory_format is not None and memory_format is not _mf_contiguous:
            fmt = _mf_mod.contiguous_layout(self._data, memory_format)  # channels_last, ...
            return self if fmt is None else _ops_shape._clone(self, memory_format=fmt)
        return self if self._data.flags.c_contiguous else _ops_shape.clone(self)

    # -- new_*: self's dtype unless given; the device is self's (the CPU) unless given -------------

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None,
                   requires_grad: builtins.bool = False) -> Tensor:
        return _creation.tensor(data, dtype=dtype or self.dtype, device=_here(device),
                                requires_grad=requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False, layout: Any = None,
                  pin_memory: builtins.bool = False) -> Tensor:
        return _creation.zeros(*size, dtype=dtype or self.dtype, device=_here(device),
                               requires_grad=requires_grad, pin_memory=pin_memory)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None,
                 requires_grad: builtins.bool = False, layout: Any = None,
                 pin_memory: builtins.bool = False) -> Tensor:
        return _creation.ones(*size, dtype=dtype or self.dtype, device=_here(device),
                              requires_grad=requires_grad, pin_memory=pin_memory)

    def new_full(self, size: Any, fill_value: Any, *, dtype: Any = None, layout: Any = None,
                 device: Any = None, pin_memory: builtins.bool = False,
                 requires_grad: builtins.bool = False) -> Tensor:
        return _creation.full(size, fill_value, dtype=dtype or self.dtype,
                              device=_here(device), requires_grad=requires_grad,
                              pin_memory=pin_memory)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None,
                  requires_grad: builtins.bool = False, layout: Any = None,
                  pin_memory: builtins.bool = False) -> Tensor:
        return _creation.zeros(*size, dtype=dtype or self.dtype, device=_here(device),
                               requires_grad=requires_grad, pin_memory=pin_memory)

    def equal(self, other: Tensor) -> builtins.bool:
        return _creation.equal(self, other)

    def allclose(self, other: Tensor, rtol: builtins.float = 1e-05,
                 atol: builtins.float = 1e-08,
                 equal_nan: builtins.bool = False) -> builtins.bool:
        return _creation.allclose(self, other, rtol, atol, equal_nan)

    def isclose(self, other: Tensor, rtol: builtins.float = 1e-05,
                atol: builtins.float = 1e-08,
                equal_nan: builtins.bool = False) -> Tensor:
        return _creation.isclose(self, other, rtol, atol, equal_nan)

    # -- in-place ops (version counter, history rewriting: ops/_registry.apply_) -------------------

    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops_ew.add_(self, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return _ops_ew.sub_(self, other, alpha=alpha)

    def mul_(self, other: Any) -> Tensor:
        return _ops_ew.mul_(self, other)

    def div_(self, other: Any, *, rounding_mode: Any = None) -> Tensor:
        return _ops_ew.div_(self, other, rounding_mode=rounding_mode)

    def pow_(self, exponent: Any) -> Tensor:
        return _ops_ew.pow_(self, exponent)

    def neg_(self) -> Tensor:
        return _ops_ew.inplace("neg", self)

    def exp_(self) -> Tensor:
        return _ops_ew.inplace("exp", self)

    def log_(self) -> Tensor:
        return _ops_ew.inplace("log", self)

    def sqrt_(self) -> Tensor:
        return _ops_ew.inplace("sqrt", self)

    def abs_(self) -> Tensor:
        return _ops_ew.inplace("abs", self)

    def sigmoid_(self) -> Tensor:
        return _ops_ew.inplace("sigmoid", self)

    def tanh_(self) -> Tensor:
        return _ops_ew.inplace("tanh", self)

    def relu_(self) -> Tensor:
        return _ops_ew.inplace("relu", self)

    def sin_(self) -> Tensor:
        return _ops_ew.inplace("sin", self)

    def cos_(self) -> Tensor:
        return _ops_ew.inplace("cos", self)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:
        return _ops_ew.clamp_(self, min, max)

    clip_ = clamp_

    def zero_(self) -> Tensor:
        return _ops_ew.zero_(self)

    def fill_(self, value: Any) -> Tensor:
        return _ops_ew.fill_(self, value)

    def copy_(self, other: Any = None, non_blocking: builtins.bool = False, *,
              src: Any = None) -> Tensor:
        """Copy ``other`` (a tensor, or ``src=``: torch's name in its storage form) into self."""
        if other is None:
            if src is None:
                raise TypeError('copy_() missing 1 required positional arguments: "other"')
            other = src
        return _ops_ew.copy_(self, other)

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return _ops_idx.masked_fill_(self, mask, value)

    def index_put_(self, indices: Any, values: Any, accumulate: builtins.bool = False) -> Tensor:
        return _ops_idx.index_put_(self, indices, values, accumulate)

    def scatter_(self, dim: builtins.int, index: Tensor, src: Any = None, *,
                 value: Any = None, reduce: Any = None) -> Tensor:
        return _ops_idx.scatter_(self, dim, index, src, value=value)

    def scatter_add_(self, dim: builtins.int, index: Tensor, src: Tensor) -> Tensor:
        return _ops_idx.scatter_add_(self, dim, index, src)

    def __setitem__(self, index: Any, value: Any, /) -> None:
        _ops_idx.setitem(self, index, value)

    def __iadd__(self, other: Any) -> Tensor:
        return _ops_ew.add_(self, other)

    def __isub__(self, other: Any) -> Tensor:
        return _ops_ew.sub_(self, other)

    # (mypy compares it with __mul__ without binding __mul__'s first parameter, as __mul__ is
    # the function ops.elementwise.mul: see "arithmetic" below)
    def __imul__(self, other: Any) -> Tensor:  # type: ignore[misc]
        return _ops_ew.mul_(self, other)

    def __itruediv__(self, other: Any) -> Tensor:
        return _ops_ew.div_(self, other)

    # -- arithmetic --------------------------------------------------------------------------------
    #
    # An operator whose op function takes exactly its operands, in its order, is that function
    # itself: ``a * b`` calls ``ops.elementwise.mul(a, b)`` with no frame in between, and ``2 * a``
    # (``a.__rmul__(2)``) calls mul(a, 2), the same product; ``2 / a`` is ``rdiv(a, 2)``. The
    # others are methods: add, sub and div take keywords an operator must not (``alpha``,
    # ``rounding_mode``), and ``2 ** a``, ``2 // a``, ``2 % a`` swap the operands.

    def __add__(self, other: Any) -> Tensor:
        return _ops_ew.add(self, other)

    def __radd__(self, other: Any) -> Tensor:
        return _ops_ew.add(self, other)

    def __sub__(self, other: Any) -> Tensor:
        return _ops_ew.sub(self, other)

    def __rsub__(self, other: Any) -> Tensor:
        return _ops_ew.rsub(self, other)

    __mul__ = __rmul__ = _ops_ew.mul

    def __truediv__(self, other: Any) -> Tensor:
        return _ops_ew.div(self, other)

    __rtruediv__ = _ops_ew.rdiv

    __floordiv__ = _ops_ew.floor_divide

    def __rfloordiv__(self, other: Any) -> Tensor:
        return _ops_ew.floor_divide(other, self)

    __mod__ = _ops_ew.remainder

    def __rmod__(self, other: Any) -> Tensor:
        return _ops_ew.remainder(other, self)

    __pow__ = _ops_ew.pow

    def __rpow__(self, other: Any) -> Tensor:
        return _ops_ew.pow(other, self)

    __neg__ = _ops_ew.neg
    __abs__ = _ops_ew.abs

    def __matmul__(self, other: Any) -> Tensor:
        return _ops_la.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Tensor:
        return _ops_la.matmul(other, self)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return _ops_ew.compare("eq", self, other)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return _ops_ew.compare("ne", self, other)

    def __lt__(self, other: Any) -> Tensor:
        return _ops_ew.compare("lt", self, other)

    def __le__(self, other: Any) -> Tensor:
        return _ops_ew.compare("le", self, other)

    def __gt__(self, other: Any) -> Tensor:
        return _ops_ew.compare("gt", self, other)

    def __ge__(self, other: Any) -> Tensor:
        return _ops_ew.compare("ge", self, other)

    def __invert__(self) -> Tensor:
        return _ops_ew.bitwise("invert", self)

    def __and__(self, other: Any) -> Tensor:
        return _ops_ew.bitwise("and", self, other)

    __rand__ = __and__

    def __or__(self, other: Any) -> Tensor:
        return _ops_ew.bitwise("or", self, other)

    __ror__ = __or__

    def __xor__(self, other: Any) -> Tensor:
        return _ops_ew.bitwise("xor", self, other)

    __rxor__ = __xor__

    def __getitem__(self, index: Any, /) -> Tensor:
        return _ops_idx.getitem(self, index)


def _here(device: Any) -> Any:
    """The device of a ``new_*`` tensor: self's (the CPU), not the default device, unless given."""
    return CPU if device is None else device


# What class creation puts in any class's namespace (not methods to attach)
_CLASS_BOOKKEEPING = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__",
                      "__hash__", "__firstlineno__", "__static_attributes__"}


def _attach() -> None:
    """Put every method of ``_TensorMethods`` on Tensor, named as Tensor's own (``Tensor.add_``
    in reprs, as when they were written in its class body)."""
    for name, value in vars(_TensorMethods).items():
        if name in _CLASS_BOOKKEEPING:
            continue
        fn = getattr(value, "__func__", value)  # (__new__ is a staticmethod)
        if fn.__qualname__.startswith("_TensorMethods."):
            fn.__qualname__ = "Tensor." + fn.__qualname__.removeprefix("_TensorMethods.")
        setattr(Tensor, name, value)


_attach()
