"""Small public functions of ``torch`` and methods of ``Tensor`` that belong to no op family:
predicates (``is_signed``, ``is_same_size``, ``is_set_to``), the deprecated ``torch.range``,
``frombuffer``, the legacy ``Tensor.new``, element-by-element Python callbacks (``apply_``,
``map_``, ``map2_``), ``fill_diagonal_``, ``adjoint``, memory-layout queries (``dim_order``) and
process settings (``set_warn_always``, ``set_flush_denormal``, ``init_num_threads``).
"""

from __future__ import annotations

import builtins
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from . import _creation, _dtype, _layout, _legacy
from ._tensor import Tensor
from .ops.complex import adjoint as _adjoint

# -- predicates --------------------------------------------------------------------------------


def typename(obj: Any, /) -> str:
    """``'torch.FloatTensor'`` for a tensor, ``module.QualName`` for anything else."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def is_signed(input: Tensor) -> bool:
    """True for a dtype with negative values (not bool, uint8)."""
    return input.dtype.is_signed


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(input.shape) == tuple(other.shape)


def is_nonzero(self: Tensor) -> bool:
    """The truth of a one-element tensor; torch's errors for the others."""
    return _creation.is_nonzero(self)


def is_inference(input: Tensor) -> bool:
    return input.is_inference()


def is_storage(obj: Any, /) -> bool:
    """tapegrad has no storage objects: always False."""
    return False


def get_device(input: Tensor) -> int:
    """The device index: -1 for the CPU."""
    return input.get_device()


def _root(a: np.ndarray) -> Any:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a.base if a.base is not None else a


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """True when both tensors look at the same memory with the same sizes and strides."""
    a, b = self._data, tensor._data
    return (self.data_ptr() == tensor.data_ptr() and a.shape == b.shape
            and a.strides == b.strides and a.dtype == b.dtype and _root(a) is _root(b))


def dim_order(self: Tensor, *, ambiguity_check: bool = False) -> tuple[int, ...]:
    """The dims from outermost to innermost in memory (largest stride first)."""
    strides = self.stride()
    return tuple(sorted(builtins.range(self.ndim), key=lambda d: -strides[d]))


def is_shared(self: Tensor) -> bool:
    """True after ``share_memory_()`` (a CPU tensor is otherwise in private memory)."""
    return bool(self.__dict__.get("_shared", False))


def share_memory_(self: Tensor) -> Tensor:
    """Mark the tensor as shared; tapegrad's processes share nothing, so the memory stays."""
    self.__dict__["_shared"] = True
    return self


def const_data_ptr(self: Tensor) -> int:
    return self.data_ptr()


def as_subclass(self: Tensor, cls: type) -> Tensor:
    """The same data, version counter and graph position, as an instance of ``cls``: a new
    Python object, as torch's alias is, so the tensor's state (hooks, view and conjugation
    flags) comes along but not the attributes set on the object itself."""
    out: Any = object.__new__(cls)
    for name in ("_data", "_requires_grad", "_grad_fn", "_grad", "_output_nr", "_base"):
        setattr(out, name, getattr(self, name))
    if self._base is not None:
        out._vv = self._vv
    out._vc = None
    out._version_counter = self._version_counter
    out.__dict__.update((k, v) for k, v in self.__dict__.items() if hasattr(Tensor, k))
    return out


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (a view)."""
    return _adjoint(input)


# -- construction ------------------------------------------------------------------------------


def range(start: Any, end: Any, step: Any = 1, *, dtype: Any = None,  # noqa: A001
          layout: Any = _layout.strided, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Deprecated: values from ``start`` to ``end`` INCLUSIVE by ``step`` (default float
    dtype even for integers); use ``arange``."""
    warnings.warn(
        "torch.range is deprecated and will be removed in a future release because its "
        "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
        "which produces values in [start, end).", UserWarning, stacklevel=2)
    dt = dtype if dtype is not None else _dtype.get_default_dtype()
    count = int(np.floor((float(end) - float(start)) / float(step))) + 1
    values = float(start) + np.arange(max(count, 0), dtype=np.float64) * float(step)
    result = Tensor._make(values.astype(dt.np))
    if requires_grad:
        result.requires_grad_(True)
    return result


def frombuffer(buffer: Any, *, dtype: Any, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-d tensor over a Python buffer's memory (no copy: writes go to the buffer)."""
    view = memoryview(buffer)
    length = view.nbytes
    size = dtype.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0 and (length - offset) % size != 0:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                         f"bytes) must be a multiple of element size ({size})")
    if count < 0:
        count = (length - offset) // size
    elif length - offset < count * size:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    if view.readonly:
        warnings.warn("The given buffer is not writable, and PyTorch does not support "
                      "non-writable tensors. This means you can write to the underlying "
                      "(supposedly non-writable) buffer using the tensor. You may want to copy "
                      "the buffer to protect its data or make it writable before converting it "
                      "to a tensor. This type of warning will be suppressed for the rest of "
                      "this program.", UserWarning, stacklevel=2)
    data = np.frombuffer(buffer, dtype=dtype.np, count=count, offset=offset)
    if view.readonly:
        data = data.copy()
    result = Tensor._make(data)
    if requires_grad:
        result.requires_grad_(True)
    return result


def new(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """The legacy constructor with this tensor's dtype: ``x.new(2, 3)``, ``x.new([1, 2])``."""
    return _legacy.construct(self.dtype, args, kwargs)


# -- element-by-element Python callbacks -------------------------------------------------------


def _write_values(self: Tensor, values: list) -> Tensor:
    # as torch's: written behind autograd's back (the version counter does not move)
    self._data[...] = np.asarray(values, dtype=object).reshape(self._data.shape).astype(
        self._data.dtype)
    return self


def apply_(self: Tensor, callable: Callable) -> Tensor:
    """Replace every element ``v`` with ``callable(v)`` (a Python function; slow)."""
    return _write_values(self, [callable(v) for v in self._data.ravel().tolist()])


def map_(self: Tensor, other: Tensor, callable: Callable) -> Tensor:
    """``self[i] = callable(self[i], other[i])``; ``other`` broadcast to ``self``."""
    theirs = np.broadcast_to(other._data, self._data.shape).ravel().tolist()
    mine = self._data.ravel().tolist()
    return _write_values(self, [callable(a, b) for a, b in zip(mine, theirs, strict=True)])


def map2_(self: Tensor, x: Tensor, y: Tensor, callable: Callable) -> Tensor:
    """``self[i] = callable(self[i], x[i], y[i])``; ``x`` and ``y`` broadcast to ``self``."""
    shape = self._data.shape
    xs = np.broadcast_to(x._data, shape).ravel().tolist()
    ys = np.broadcast_to(y._data, shape).ravel().tolist()
    mine = self._data.ravel().tolist()
    return _write_values(self, [callable(a, b, c)
                                for a, b, c in zip(mine, xs, ys, strict=True)])


def fill_diagonal_(self: Tensor, fill_value: Any, wrap: bool = False) -> Tensor:
    """Set the main diagonal (every index equal) to ``fill_value``; a tall matrix with
    ``wrap=True`` starts again below, one row after the end of each diagonal block."""
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if len(shape) == 2:
        rows, cols = shape
        stop = rows * cols if wrap and rows > cols else min(rows, cols) * cols
        flat = np.arange(0, stop, cols + 1, dtype=np.int64)
        index = np.unravel_index(flat, shape)
    else:
        index = (np.arange(shape[0], dtype=np.int64),) * len(shape)
    key = tuple(Tensor._make(np.asarray(i)) for i in index)
    self[key] = fill_value
    return self


# -- process settings --------------------------------------------------------------------------

_WARN_ALWAYS = [False]


def set_warn_always(b: bool, /) -> None:
    """Warn every time (not once) for the warnings torch gives once per process."""
    _WARN_ALWAYS[0] = bool(b)


def is_warn_always_enabled() -> bool:
    return _WARN_ALWAYS[0]


def set_flush_denormal(mode: bool) -> bool:
    """Whether the requested mode holds. Flushing denormal floats to zero is a CPU flag NumPy
    does not expose: turning it off always holds (True), turning it on does not (False, as
    torch answers on CPUs without the flag)."""
    return not mode


def init_num_threads() -> None:
    """Set up the intra-op thread pool: tapegrad's (the BLAS's) needs no setup."""


FUNCTIONS = {
    "typename": typename, "is_signed": is_signed, "is_same_size": is_same_size,
    "is_inference": is_inference, "is_storage": is_storage,
    "get_device": get_device, "adjoint": adjoint, "range": range, "frombuffer": frombuffer,
    "set_warn_always": set_warn_always, "is_warn_always_enabled": is_warn_always_enabled,
    "set_flush_denormal": set_flush_denormal, "init_num_threads": init_num_threads,
}

METHODS = {
    "is_signed": is_signed, "is_same_size": is_same_size, "is_nonzero": is_nonzero,
    "is_set_to": is_set_to, "dim_order": dim_order, "is_shared": is_shared,
    "share_memory_": share_memory_, "const_data_ptr": const_data_ptr,
    "as_subclass": as_subclass, "adjoint": adjoint, "new": new, "apply_": apply_,
    "map_": map_, "map2_": map2_, "fill_diagonal_": fill_diagonal_,
}

__all__ = ["FUNCTIONS", "METHODS"]
