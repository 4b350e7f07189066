"""The old spellings older PyTorch code still uses: typed tensor classes, the legacy
``torch.Tensor(...)`` constructor and ``x.type(...)`` (``Variable``, which the autograd core
imports, is in autograd/variable.py).

* ``torch.FloatTensor``, ``LongTensor``, ... (``LEGACY_NAMES`` in ``_dtype``) are classes that
  build tensors of their dtype: ``FloatTensor(2, 3)`` (sizes), ``FloatTensor([1, 2])`` (data),
  ``FloatTensor()`` (empty). A tensor is never *of* such a class (``type(x)`` is Tensor), but
  ``isinstance(x, torch.FloatTensor)`` is true exactly for a float32 tensor, through the
  metaclass's ``__instancecheck__``.
* ``torch.Tensor(...)`` follows the same rules with the default dtype, and returns an alias
  of a Tensor argument (of any dtype).
* ``torch.cuda.FloatTensor`` ... exist, as on a CPU-only torch, and refuse to build anything.
* ``x.type()`` names the legacy class ('torch.FloatTensor'); ``x.type(torch.DoubleTensor)``
  and ``x.type('torch.DoubleTensor')`` convert.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _device, _dtype
from ._creation import tensor
from ._naming import public
from ._tensor import Size, Tensor, _type_name
from .ops.shape import alias

_SIGNATURES = (
    " * (*, torch.device device = None)\n{kw} * (torch.Storage storage)\n * (Tensor other)\n"
    " * (tuple of ints size, *, torch.device device = None)\n"
    " * (object data, *, torch.device device = None)\n"
)

# TensorOptions' names of the dtypes, for the message of FloatTensor(long_tensor).
_C_NAMES = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
    "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _options(d: _dtype.dtype) -> str:
    return (f"TensorOptions(dtype={_C_NAMES[d.name]}, device=cpu, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _sized(sizes: tuple, dt: _dtype.dtype) -> Tensor:
    for s in sizes:
        if s < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {s}: {[int(v) for v in sizes]}"
            )
    return Tensor._make(np.zeros(tuple(int(s) for s in sizes), dtype=dt.np))


def construct(dt: _dtype.dtype | None, args: tuple, kwargs: dict) -> Tensor:
    """``torch.Tensor(*args, **kwargs)`` (``dt`` None: the default dtype) and
    ``torch.FloatTensor(*args, **kwargs)`` (``dt`` float32), with torch's rules and errors."""
    target = dt if dt is not None else _dtype.get_default_dtype()
    bad = [k for k in kwargs if k not in ("device", "size")]
    if bad:
        shown = ", ".join([_type_name(a) for a in args]
                          + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
        note = ("      didn't match because some of the keywords were incorrect: "
                f"{', '.join(bad)}\n")
        raise TypeError(
            f"new() received an invalid combination of arguments - got ({shown}), but "
            f"expected one of:\n{_SIGNATURES.format(kw=note)}"
        )
    dev = kwargs.get("device")
    if dev is not None:
        if args and isinstance(args[0], Tensor):
            raise RuntimeError(
                "Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is "
                "not supported.  Use torch.tensor(...) or torch.as_tensor(...) instead."
            )
        d = dev if isinstance(dev, _device.device) else _device.device(dev)
        if d.type != "cpu":
            raise RuntimeError(
                f"legacy constructor expects device type: cpu but device type: {d.type} was "
                "passed"
            )
    if "size" in kwargs:
        args = (*args, *tuple(kwargs["size"]))
    if not args:
        return Tensor._make(np.zeros(0, dtype=target.np))
    first = args[0]
    if len(args) == 1:
        if isinstance(first, Tensor):
            if dt is not None and first.dtype is not dt:
                raise TypeError(f"expected {_options(dt)} (got {_options(first.dtype)})")
            return alias(first)
        if isinstance(first, Size) or _is_int(first):
            return _sized(tuple(first) if isinstance(first, Size) else (first,), target)
        if isinstance(first, str):
            raise TypeError(f"new(): invalid data type '{_type_name(first)}'")
        if not isinstance(first, (list, tuple, np.ndarray)):
            raise TypeError(f"new(): data must be a sequence (got {_type_name(first)})")
        return tensor(first, dtype=target)
    for pos, s in enumerate(args, start=1):
        if not _is_int(s):
            raise TypeError(
                f"new(): argument 'size' failed to unpack the object at pos {pos} with error "
                f"\"type must be tuple of ints,but got {_type_name(s)}\""
            )
    return _sized(args, target)


class tensortype(type):
    """The metaclass of the typed tensor classes (torch's ``torch.tensortype``)."""

    dtype: _dtype.dtype
    is_cuda: bool
    is_sparse = False

    def __instancecheck__(cls, obj: Any) -> bool:
        return (not cls.is_cuda and isinstance(obj, Tensor)
                and obj.dtype is cls.dtype)

    def __subclasscheck__(cls, sub: Any) -> bool:
        return type.__subclasscheck__(cls, sub)

    def __call__(cls, *args: Any, **kwargs: Any) -> Tensor:
        if cls.is_cuda:
            raise TypeError(
                f"type torch.cuda.{cls.__name__} not available. Torch not compiled with CUDA "
                "enabled."
            )
        return construct(cls.dtype, args, kwargs)

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _make_type(dt: _dtype.dtype, name: str, cuda: bool) -> tensortype:
    cls = tensortype(name, (), {"dtype": dt, "is_cuda": cuda, "__doc__": None})
    return public(".cuda" if cuda else "")(cls)


# Which legacy classes torch has (no complex ones), by name: the CPU ones and torch.cuda's.
_TYPED = [n for n in _dtype.LEGACY_NAMES if not n.startswith("complex")]


def tensor_types() -> dict[str, tensortype]:
    """The classes ``torch.FloatTensor`` ... (bfloat16's only with ml_dtypes)."""
    return _legacy_types(cuda=False)


def cuda_tensor_types() -> dict[str, tensortype]:
    """``torch.cuda.FloatTensor`` ...: named, never built (a CPU-only build)."""
    return _legacy_types(cuda=True)


def _legacy_types(cuda: bool) -> dict[str, tensortype]:
    """The legacy class of each dtype that has one, by its name (``FloatTensor``), for the CPU
    or for torch.cuda."""
    out = {}
    for name in _TYPED:
        dt = getattr(_dtype, "bool_" if name == "bool" else name)
        if dt is not None:
            out[_dtype.LEGACY_NAMES[name]] = _make_type(dt, _dtype.LEGACY_NAMES[name], cuda)
    return out


TYPES = tensor_types()
_BY_STRING = {f"torch.{name}": cls.dtype for name, cls in TYPES.items()}


def tensor_type(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """``x.type()``: 'torch.FloatTensor'...; ``x.type(T)`` converts to a legacy class, a dtype,
    or a class name ('torch.DoubleTensor'), returning ``x`` when already of that type."""
    if dtype is None:
        return "torch." + _dtype.LEGACY_NAMES[self.dtype.name]
    target: Any
    if isinstance(dtype, _dtype.dtype):
        target = dtype
    elif isinstance(dtype, str):
        if dtype == "torch.Tensor":
            target = _dtype.get_default_dtype()
        elif dtype in _BY_STRING:
            target = _BY_STRING[dtype]
        elif dtype.startswith("torch.cuda.") and dtype[len("torch.cuda."):] in TYPES:
            raise RuntimeError(_device.NO_ATEN_CUDA)
        else:
            raise ValueError(f"invalid type: '{dtype}'")
    elif isinstance(dtype, tensortype):
        if dtype.is_cuda:
            raise RuntimeError(_device.NO_ATEN_CUDA)
        target = dtype.dtype
    elif dtype is Tensor:
        target = _dtype.get_default_dtype()
    elif isinstance(dtype, type):
        name = dtype.__name__ if dtype.__module__ == "builtins" else (
            f"{dtype.__module__}.{dtype.__qualname__}")
        raise ValueError(f"invalid type: '{name}'")
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    if target is self.dtype:
        return self
    return self.to(target)


# -- set_default_tensor_type ---------------------------------------------------------------------

_warned_default_type = False


def set_default_tensor_type(t: Any, /) -> None:
    """``torch.set_default_tensor_type(torch.DoubleTensor)`` (or its name): the default dtype
    (deprecated in torch 2.1 for ``set_default_dtype``; warns once per process, as torch)."""
    global _warned_default_type
    if isinstance(t, str):
        if t.startswith("torch.cuda.") and t[len("torch.cuda."):] in TYPES:
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        if t not in _BY_STRING:
            module, _, name = t.rpartition(".")
            if not module:
                raise ModuleNotFoundError(f"No module named '{t}'")
            raise AttributeError(f"module '{module}' has no attribute '{name}'")
        t = TYPES[t[len("torch."):]]
    if isinstance(t, tensortype) and t.is_cuda:
        raise TypeError(f"type torch.cuda.{t.__name__} not available. Torch not compiled with "
                        "CUDA enabled.")
    if not isinstance(t, tensortype):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if not _warned_default_type:
        _warned_default_type = True
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives.", UserWarning, stacklevel=2)
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(t.dtype)
