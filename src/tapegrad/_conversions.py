"""``Tensor.to`` and its shorthands (``x.float()``, ``x.long()``, ``x.bool()``, ...).

torch's ``to`` has three forms, tried in this order, each with ``non_blocking``, ``copy`` and a
keyword-only ``memory_format``::

    x.to(device=None, dtype=None, non_blocking=False, copy=False, *, memory_format=None)
    x.to(dtype, non_blocking=False, copy=False, *, memory_format=None)
    x.to(other, non_blocking=False, copy=False, *, memory_format=None)   # other's dtype, device

The result is ``x`` itself when nothing would change: same dtype, same device, no ``copy=True``,
and a memory format that is ``preserve_format`` or the one ``x``'s strides already suggest.
Otherwise it is a new tensor, recorded as ``ToCopyBackward0`` (whose gradient is the incoming
one cast back to ``x``'s dtype); a conversion to an integer or bool dtype cuts the graph, since
such tensors cannot require grad.
"""

from __future__ import annotations

from typing import Any

from . import _dtype
from . import _memory_format as mf
from ._device import check as check_device
from ._device import device
from ._tensor import Tensor, install_above
from .ops.shape import _to_copy

_SIGNATURES = (
    "(torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)",
    "(torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
    "(Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)",
)
# each form's positional names; the first name of forms 2 and 3 is required
_FORMS = (("device", "dtype", "non_blocking", "copy"), ("dtype", "non_blocking", "copy"),
          ("tensor", "non_blocking", "copy"))
_PY_DTYPES = (float, int, bool, complex)


def _type_name(v: Any) -> str:
    if isinstance(v, Tensor):
        return "Tensor"
    if isinstance(v, _dtype.dtype):
        return "torch.dtype"
    if isinstance(v, device):
        return "torch.device"
    if isinstance(v, mf.memory_format):
        return "torch.memory_format"
    return type(v).__name__


def _invalid(args: tuple, kwargs: dict) -> TypeError:
    """torch's message for arguments no form of ``to`` accepts."""
    got = ", ".join(_type_name(a) for a in args)
    named = [f"{k}={_type_name(v)}" for k, v in reversed(kwargs.items())]
    if named:
        got = got + ", " + ", ".join(named) if args else ", ".join(named) + ", "
    lines = "".join(f" * {s}\n" for s in _SIGNATURES)
    return TypeError(f"to() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{lines}")


def _is_dtype(v: Any) -> bool:
    # a dtype, a Python type, or (as torch's parser takes them) a bool, float or complex
    # number standing for its type: x.to(1.5) is x.to(torch.float64)
    return (isinstance(v, _dtype.dtype) or any(v is t for t in _PY_DTYPES)
            or type(v) in (bool, float, complex))


def _is_device(v: Any) -> bool:
    return isinstance(v, (str, device)) or (type(v) is int)


def _fits(name: str, v: Any) -> bool:
    if name == "device":
        return v is None or _is_device(v)
    if name == "dtype":
        return v is None or _is_dtype(v)
    if name == "tensor":
        return isinstance(v, Tensor)
    if name == "memory_format":
        return v is None or isinstance(v, mf.memory_format)
    return type(v) is bool  # non_blocking, copy


def _bind(form: int, args: tuple, kwargs: dict) -> dict | None:
    names = _FORMS[form]
    if len(args) > len(names):
        return None
    bound: dict[str, Any] = dict(zip(names, args, strict=False))
    for k, v in kwargs.items():
        if k in bound or (k not in names and k != "memory_format"):
            return None
        bound[k] = v
    if form and names[0] not in bound:
        return None
    if not all(_fits(k, v) for k, v in bound.items()):
        return None
    if form == 1 and bound["dtype"] is None:
        return None
    return bound


def parse(args: tuple, kwargs: dict) -> tuple[Any, Any, bool, Any]:
    """``to``'s arguments -> (device, dtype, copy, memory_format); None where not given."""
    for form in range(3):
        b = _bind(form, args, kwargs)
        if b is not None:
            break
    else:
        raise _invalid(args, kwargs)
    if form == 2:
        other = b["tensor"]
        return other.device, other.dtype, b.get("copy", False), b.get("memory_format")
    return b.get("device"), b.get("dtype"), b.get("copy", False), b.get("memory_format")


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``x.to(dtype)``, ``x.to('cpu')``, ``x.to(other)``, ``x.to(memory_format=...)``: ``x``
    converted, or ``x`` itself when nothing changes (see the module docstring)."""
    if len(args) == 1 and not kwargs:  # the common calls, without the parsing: to(dtype), to('cpu')
        a = args[0]
        if isinstance(a, _dtype.dtype):
            return convert(self, a)
        if type(a) is str and a == "cpu":
            return self
    dev, dt, copy, fmt = parse(args, kwargs)
    if dev is not None:
        check_device(dev)  # a CPU-only build's error for any other device
    if type(dt) in (bool, float, complex):
        dt = type(dt)
    return convert(self, None if dt is None else _dtype.to_dtype(dt), copy, fmt)


install_above(to=to)  # Tensor.to


def convert(self: Tensor, dt: Any, copy: bool = False, fmt: Any = None) -> Tensor:
    """``self`` as dtype ``dt`` (None: its own) laid out as ``fmt`` (None: preserved), a copy
    only when one is needed or ``copy``."""
    if dt is None:
        dt = self.dtype
    if fmt is mf.preserve_format:
        fmt = None
    if fmt is not None and fmt is not mf.contiguous_format:
        mf._check_rank(self._data.ndim, fmt)
    if dt is self.dtype and not copy and (fmt is None or mf.suggest(self._data) is fmt):
        return self
    if self._requires_grad and not (dt.is_floating_point or dt.is_complex):
        return Tensor._make(_to_copy.forward(self._data, dtype=dt.np, memory_format=fmt))
    return _to_copy(self, dtype=dt.np, memory_format=fmt)


def _shorthand(target: Any, name: str, dtype_name: str) -> Any:
    def method(self: Tensor, *, memory_format: Any = None) -> Tensor:
        return convert(self, target() if callable(target) else target, False,
                       mf.check(memory_format, name))

    method.__name__ = name
    method.__doc__ = f"``self.{name}()`` is ``self.to(torch.{dtype_name})``."
    return method


def _bfloat16() -> Any:
    if _dtype.bfloat16 is None:
        raise RuntimeError("bfloat16 needs the optional dependency ml_dtypes")
    return _dtype.bfloat16


# x.float(), x.double(), ...: each one conversion to a fixed dtype
SHORTHANDS = {
    "float": _shorthand(_dtype.float32, "float", "float32"),
    "double": _shorthand(_dtype.float64, "double", "float64"),
    "half": _shorthand(_dtype.float16, "half", "float16"),
    "bfloat16": _shorthand(_bfloat16, "bfloat16", "bfloat16"),
    "long": _shorthand(_dtype.int64, "long", "int64"),
    "int": _shorthand(_dtype.int32, "int", "int32"),
    "short": _shorthand(_dtype.int16, "short", "int16"),
    "char": _shorthand(_dtype.int8, "char", "int8"),
    "byte": _shorthand(_dtype.uint8, "byte", "uint8"),
    "bool": _shorthand(_dtype.bool_, "bool", "bool"),
    "cfloat": _shorthand(_dtype.complex64, "cfloat", "complex64"),
    "cdouble": _shorthand(_dtype.complex128, "cdouble", "complex128"),
    "chalf": _shorthand(_dtype.complex32, "chalf", "complex32"),
}

__all__ = ["to", "convert", "parse", "SHORTHANDS"]
