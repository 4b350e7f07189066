"""Tensor factories: tensor, as_tensor, from_numpy, zeros/ones/full/empty, *_like, arange,
linspace, eye; and comparisons of whole tensors (equal, allclose).

Python data gets torch's dtypes: bools -> bool, ints -> int64, floats -> the default dtype
(float32), complex -> complex64. NumPy arrays keep their dtype.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from . import _dtype
from ._alloc_errors import check_sizes, out_of_memory
from ._rng import _fma32, _fma64
from ._tensor import Tensor, device
from .ops import _registry
from .ops.elementwise import isclose_kernel
from .ops.factories import _allocated, _dt, _like_dtype, _new, _place, _size, zeros_like
from .ops.factories import empty as empty  # (the factories ops use: here with the others)
from .ops.factories import zeros as zeros


def _unwrap(data: Any) -> Any:
    """Nested lists may hold tensors and NumPy values: make them plain. A tensor inside a list
    stands for one number, as torch converts it (``item()``: more than one element raises); it
    becomes a 0-d array, so that its dtype takes part in the inference."""
    if isinstance(data, Tensor):
        return data._data
    if isinstance(data, (list, tuple)):
        out = []
        for d in data:  # (a loop, not a comprehension: one frame a level, for the warnings)
            out.append(_element(d, 1))
        return out
    return data


_ndarrays_met = [False, False]  # in the data being converted; warned (once a process)


def _element(x: Any, depth: int) -> Any:
    if isinstance(x, Tensor):  # (a warning points at the caller of tensor(), through depth
        return x._scalar(np.ndarray, stacklevel=5 + depth)  # levels of lists)
    if isinstance(x, (list, tuple)):
        out = []
        for d in x:
            out.append(_element(d, depth + 1))
        return out
    if isinstance(x, np.ndarray):
        _ndarrays_met[0] = True
    return x


def _infer_dtype(data: Any) -> _dtype.dtype:
    """torch's dtype for nested data: Python bools, ints, floats and complex numbers take bool,
    int64, the default float dtype and its complex type; NumPy values and arrays, and the
    tensors inside (0-d arrays here), their own dtype; all of them promoted together."""
    order = "ebifc"  # e: no Python scalar at all (an empty list is float, as in torch)
    best = "e"
    typed: _dtype.dtype | None = None
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
            continue
        if isinstance(x, (np.ndarray, np.generic)):
            d = _dtype.from_numpy_dtype(x.dtype)
            typed = d if typed is None else _dtype.promote_types(typed, d)
            continue
        if isinstance(x, bool):
            k = "b"
        elif isinstance(x, int):
            k = "i"
        elif isinstance(x, float):
            k = "f"
        elif isinstance(x, complex):
            k = "c"
        elif isinstance(x, str):
            raise TypeError("new(): invalid data type 'str'")
        else:
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")
        if order.index(k) > order.index(best):
            best = k
    default = _dtype.get_default_dtype()
    python = {"b": _dtype.bool_, "i": _dtype.int64, "f": default, "c": default.to_complex(),
              "e": None}[best]
    if typed is None:
        return python or default
    return typed if python is None else _dtype.promote_types(typed, python)


def to_array(data: Any, dtype: _dtype.dtype | None = None) -> np.ndarray:
    """NumPy array of ``data`` with torch's dtype inference (a copy)."""
    if isinstance(data, Tensor):
        arr = data._data
        return arr.astype(dtype.np) if dtype is not None else arr.copy()
    if isinstance(data, np.ndarray):
        return np.array(data, dtype=dtype.np if dtype is not None else None, copy=True)
    if isinstance(data, np.generic):
        return np.array(data, dtype=dtype.np if dtype is not None else data.dtype)
    plain = _unwrap(data)
    if _ndarrays_met[0]:
        _ndarrays_met[0] = False
        if not _ndarrays_met[1]:
            _ndarrays_met[1] = True  # torch warns once a process
            warnings.warn(
                "Creating a tensor from a list of numpy.ndarrays is extremely slow. Please "
                "consider converting the list to a single numpy.ndarray with numpy.array() "
                "before converting to a tensor.", UserWarning, stacklevel=3)
    if dtype is None:
        dtype = _infer_dtype(plain)
    try:
        arr = np.array(plain, dtype=np.float64 if dtype.is_floating_point else None)
    except ValueError:
        raise ValueError(_ragged_message(plain)) from None
    except TypeError:
        if not dtype.is_complex and _infer_dtype(plain).is_complex:
            raise TypeError("must be real number, not complex") from None
        raise
    if arr.dtype == object:
        raise ValueError(_ragged_message(plain))
    if arr.dtype.kind == "c" and dtype.np.kind in "iu":
        raise TypeError("'complex' object cannot be interpreted as an integer")
    if dtype.np.kind in "iu" and arr.size:
        _check_int_range(arr, dtype)
    if dtype.np.kind in "iu" and arr.dtype.kind == "f":
        arr = np.trunc(arr)
    return arr.astype(dtype.np)


def _check_int_range(arr: np.ndarray, dtype: _dtype.dtype) -> None:
    """torch refuses Python numbers that do not fit an integer dtype (c10's checked cast):
    floats outside [min, max] (NaN and inf too); ints outside [min, max], where an unsigned
    type also takes negatives down to -max (two's complement: uint8 -1 is 255)."""
    if arr.dtype.kind == "u" and arr.max() > np.iinfo(np.int64).max:  # a Python int >= 2**63
        raise ValueError("Overflow when unpacking long long")
    info = np.iinfo(dtype.np)
    if arr.dtype.kind == "f":
        with np.errstate(invalid="ignore"):
            bad = ~np.isfinite(arr) | (arr < info.min) | (arr > info.max)
    elif arr.dtype.kind in "iu":
        low = -int(info.max) if info.min == 0 else int(info.min)
        bad = (arr < low) | (arr > info.max)
    else:
        return
    if bad.any():
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def _ragged_message(data: Any) -> str:
    def walk(x: Any, depth: int) -> str | None:
        if not isinstance(x, list) or not x:
            return None
        lens = [len(e) if isinstance(e, list) else None for e in x]
        first = lens[0]
        for n in lens[1:]:
            if n != first:
                return f"expected sequence of length {first} at dim {depth + 1} (got {n})"
        for e in x:
            r = walk(e, depth + 1)
            if r:
                return r
        return None

    return walk(data, 0) or "could not convert data to a tensor"


def tensor(data: Any, *, dtype: Any = None, device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data``.

    Example:
        >>> import tapegrad as torch
        >>> torch.tensor([[1, 2], [3, 4]])
        tensor([[1, 2],
                [3, 4]])
        >>> torch.tensor([1.0, 2.0], requires_grad=True)
        tensor([1., 2.], requires_grad=True)
    """
    _place(device, pin_memory, copy=True)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    d = _dtype.to_dtype(dtype) if dtype is not None else None
    return _new(to_array(data, d), requires_grad)


def scalar_tensor(s: Any, *, dtype: Any = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A 0-d tensor holding ``s`` (of the default float dtype unless ``dtype`` says)."""
    d = dtype if dtype is not None else _dtype.get_default_dtype()
    return tensor(s, dtype=d, requires_grad=requires_grad)


def as_tensor(data: Any, *, dtype: Any = None, device: Any = None) -> Tensor:
    """Like ``tensor`` but shares memory with a Tensor or ndarray of the same dtype."""
    _place(device, copy=True)
    d = _dtype.to_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        return data if d is None or d is data.dtype else data.to(d)
    if isinstance(data, np.ndarray) and (d is None or d.np == data.dtype):
        _dtype.from_numpy_dtype(data.dtype)
        return _new(data)
    return _new(to_array(data, d))


def asarray(obj: Any, *, dtype: Any = None, device: Any = None, copy: Any = None,
            requires_grad: Any = None) -> Tensor:
    """``obj`` as a tensor: sharing memory with it when it can (``copy=None``), always in new
    memory (``copy=True``), or never (``copy=False``: an error when a copy is needed)."""
    if copy is False:
        if isinstance(obj, Tensor):
            if dtype is not None and _dtype.to_dtype(dtype) is not obj.dtype:
                name = _dtype.scalar_type_name
                raise ValueError(f"can't alias tensor with dtype '{name(obj.dtype)}' "
                                 f"into dtype '{name(_dtype.to_dtype(dtype))}'.")
        elif not isinstance(obj, np.ndarray):
            raise ValueError("can't alias arbitrary sequence into a tensor.")
    t = as_tensor(obj, dtype=dtype, device=device)
    if copy and (t is obj or isinstance(obj, (Tensor, np.ndarray)) and np.shares_memory(
            t._data, obj._data if isinstance(obj, Tensor) else obj)):
        t = Tensor._make(t._data.copy())
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor that shares memory with ``ndarray``."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    if not ndarray.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and PyTorch does not support non-writable "
            "tensors. This means writing to this tensor will result in undefined behavior. You "
            "may want to copy the array to protect its data or make it writable before "
            "converting it to a tensor. This type of warning will be suppressed for the rest of "
            "this program.",
            UserWarning,
            stacklevel=2,
        )
    return _new(ndarray)


def ones(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False,
         layout: Any = None, pin_memory: bool = False) -> Tensor:
    _place(device, pin_memory)
    return _new(_allocated(np.ones, _size(size, "ones"), _dt(dtype)), requires_grad)


def full(size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
         requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    _place(device, pin_memory)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.scalar_dtype(fill_value)
    if type(fill_value) is int and d.np.kind in "iu":  # -9 as uint8 is 247, as in torch
        fill_value = _dtype.checked_int(fill_value, d.np)
    if not isinstance(size, (tuple, list)):
        raise TypeError("full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    return _new(_allocated(np.full, _size((tuple(size),), "full"),
                           d.np, fill_value), requires_grad)


def ones_like(input: Tensor, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None, layout: Any = None,
              pin_memory: bool = False
              ) -> Tensor:
    _place(device, like=True)
    return _new(_allocated(np.ones, input._data.shape, _like_dtype(input, dtype)),
                requires_grad)


def empty_like(input: Tensor, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False, memory_format: Any = None, layout: Any = None,
               pin_memory: bool = False
               ) -> Tensor:
    _place(device, like=True)
    return zeros_like(input, dtype=dtype, requires_grad=requires_grad)


def full_like(input: Tensor, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False, memory_format: Any = None, layout: Any = None,
              pin_memory: bool = False
              ) -> Tensor:
    _place(device, like=True)
    np_dtype = _like_dtype(input, dtype)
    if type(fill_value) is int and np_dtype.kind in "iu":  # -9 as uint8 is 247, as in torch
        fill_value = _dtype.checked_int(fill_value, np_dtype)
    return _new(_allocated(np.full, input._data.shape, np_dtype, fill_value), requires_grad)


def _num(x: Any) -> Any:
    return x.item() if isinstance(x, Tensor) else x


def _c_str(x: Any) -> str:
    """A number as C++'s stream prints it (``0``, ``0.5``, ``inf``, ``1e+20``)."""
    return f"{x:g}" if isinstance(x, float) else str(x)


def _to_scalar_type(value: Any, d: Any) -> Any:
    """A Python number converted to an integer ``d`` as torch's ``Scalar.to<T>()`` does:
    truncated toward zero, refused when it overflows (negative values of an integer type wrap
    into an unsigned one)."""
    info = np.iinfo(d.np) if d.np.kind in "iu" else None
    if info is None:  # bool
        return bool(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value) or value < info.min or value > info.max:
            raise RuntimeError(f"value cannot be converted to type {_c_type(d)} without "
                               "overflow")
        return int(value)
    value = int(value)
    low = -info.max if info.min == 0 else info.min
    if value < low or value > info.max:
        raise RuntimeError(f"value cannot be converted to type {_c_type(d)} without overflow")
    return int(np.array(value).astype(d.np))


def _c_type(d: Any) -> str:
    return {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t"}.get(d.np.name, d.np.name)


def arange(start: Any = 0, end: Any = None, step: Any = 1, *, dtype: Any = None,
           layout: Any = None, device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 for integer arguments.

    For an integer ``dtype`` torch truncates ``start``, ``end`` and ``step`` to integers first
    and counts the values from those (int64) or from the original numbers (other widths).
    """
    _place(device)
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if dtype is not None:
        d = _space_dtype(dtype)
    else:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        d = _dtype.get_default_dtype() if is_float else _dtype.int64
    fs, fe, ft = float(start), float(end), float(step)  # the checks see the numbers given
    if ft == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(fs) and math.isfinite(fe)):
        raise RuntimeError(f"unsupported range: {_c_str(start)} -> {_c_str(end)}")
    if not ((ft > 0 and fe >= fs) or (ft < 0 and fe <= fs)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    integral = not (d.is_floating_point or d.is_complex)
    # the values: torch's accumulate type of an integer dtype, int64, or double
    xs: float = int(start) if integral else fs
    xe: float = int(end) if integral else fe
    xt: float = int(step) if integral else ft
    if d is _dtype.int64:  # counted in integers: ceil of a truncating division
        if xt == 0:  # a fractional step truncated to 0
            raise ValueError("step must be nonzero")
        num = xe - xs + xt - (1 if xt > 0 else -1)
        n = abs(num) // abs(xt) * (1 if (num >= 0) == (xt > 0) else -1)
    else:
        n = math.ceil((fe - fs) / ft)
    n = max(n, 0)
    check_sizes((n,), d.np.itemsize)
    try:
        if integral:
            values = (np.arange(n, dtype=np.int64) * xt + xs).astype(d.np)
        else:
            values = (xs + np.arange(n, dtype=np.float64) * xt).astype(d.np)
    except MemoryError as e:
        raise out_of_memory(e) from None
    return _new(values, requires_grad)


_SPACE_SIGNATURES = [
    "(Tensor start, Tensor end, int steps{base}, *, Tensor out = None, torch.dtype dtype = "
    "None, torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
    "bool requires_grad = False)".replace("Tensor start, Tensor end", pair)
    for pair in ("Tensor start, Tensor end", "Number start, Tensor end",
                 "Tensor start, Number end", "Number start, Number end")
]


def _parser_type(x: Any) -> str:
    if isinstance(x, Tensor):
        return "Tensor"
    if isinstance(x, _dtype.dtype):
        return "torch.dtype"
    return type(x).__name__


def _space_args(name: str, start: Any, end: Any, steps: Any, kwargs: dict) -> int:
    """torch's argument parser for linspace/logspace: ``start``/``end`` numbers or tensors,
    ``steps`` an int; anything else is its "invalid combination of arguments" TypeError."""
    def number(x: Any) -> bool:
        return isinstance(x, (Tensor, int, float, complex, np.number))

    steps_ok = (isinstance(steps, (int, np.integer)) and not isinstance(steps, bool)) or (
        isinstance(steps, Tensor) and steps._data.ndim == 0 and steps._data.dtype.kind in "iu")
    if number(start) and number(end) and steps_ok:
        return int(_num(steps))
    given = {k: v for k, v in kwargs.items() if v is not None}
    got = [_parser_type(v) for v in (start, end, steps)]
    got += [f"{k}={_parser_type(v)}" for k, v in reversed(list(given.items()))]
    base = ", float base = 10.0" if name == "logspace" else ""
    options = "".join(f" * {sig.format(base=base)}\n" for sig in _SPACE_SIGNATURES)
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({', '.join(got)}), but expected one of:\n{options}")


def _space_ends(name: str, start: Any, end: Any, steps: int) -> tuple:
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if isinstance(start, Tensor) and start.ndim or isinstance(end, Tensor) and end.ndim:
        ds = start.ndim if isinstance(start, Tensor) else 0
        de = end.ndim if isinstance(end, Tensor) else 0
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got "
                           f"start with {ds} dimension(s) and end with {de} dimension(s).")
    return _num(start), _num(end)


def _space_dtype(dtype: Any, *ends: Any) -> Any:
    """The result's dtype: ``dtype``, else the default (its complex twin for a complex end;
    with ``out=``, ``dtype`` is out's: ``_out.factory_dtype``)."""
    if dtype is not None:
        return _dtype.to_dtype(dtype)
    d = _dtype.get_default_dtype()
    return d.to_complex() if any(isinstance(e, complex) for e in ends) else d


def _linear_steps(start: Any, end: Any, steps: int, d: Any, fused: bool = True) -> np.ndarray:
    """torch's linspace kernel: the first half counted up from ``start``, the second half down
    from ``end``, by a step of the dtype (float64 for integer dtypes, whose ends are truncated
    to the dtype first)."""
    if d.is_floating_point or d.is_complex:
        work = d.np
        a, b = work.type(start), work.type(end)
    else:
        work = np.dtype(np.float64)
        a, b = (float(_to_scalar_type(v, d)) for v in (start, end))
    if steps == 1:
        return np.array([a], dtype=work)
    step = (work.type(b) - work.type(a)) / work.type(steps - 1)
    i = np.arange(steps)
    if fused and work in (np.float32, np.float64):  # one fused multiply-add each, as torch
        fma = _fma32 if work == np.float32 else _fma64
        up = fma(i.astype(work), step, np.full(steps, a, dtype=work))
        down = fma((steps - 1 - i).astype(work), -step, np.full(steps, b, dtype=work))
        return np.where(i < steps // 2, up, down).astype(work)
    return np.where(i < steps // 2, work.type(a) + step * i.astype(work),
                    work.type(b) - step * (steps - 1 - i).astype(work)).astype(work)


def linspace(start: Any, end: Any, steps: Any, *, dtype: Any = None, device: Any = None,
             requires_grad: bool = False, layout: Any = None, pin_memory: bool = False
             ) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (both included)."""
    steps = _space_args("linspace", start, end, steps,
                        {"dtype": dtype, "layout": layout, "device": device})
    _place(device, pin_memory)
    start, end = _space_ends("linspace", start, end, steps)
    d = _space_dtype(dtype, start, end)
    values = _linear_steps(start, end, steps, d)
    if not (d.is_floating_point or d.is_complex):
        values = np.trunc(values)
    return _new(values.astype(d.np), requires_grad)


def logspace(start: Any, end: Any, steps: Any, base: float = 10.0, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False, layout: Any = None,
             pin_memory: bool = False) -> Tensor:
    """``steps`` values from ``base ** start`` to ``base ** end``, evenly spaced in the
    exponent (an integer ``dtype`` truncates the exponents' ends, then the powers)."""
    steps = _space_args("logspace", start, end, steps,
                        {"dtype": dtype, "layout": layout, "device": device})
    _place(device, pin_memory)
    start, end = _space_ends("logspace", start, end, steps)
    d = _space_dtype(dtype, start, end)
    if steps == 1 and not (d.is_floating_point or d.is_complex):
        exps = np.array([float(start)])  # one value: base ** start, start as given
    else:
        wide = np.complex128 if d.is_complex else np.float64
        exps = (_linear_steps(start, end, steps, d, fused=False).astype(wide) if steps
                else np.zeros(0))
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.power(float(base), exps)
        if not (d.is_floating_point or d.is_complex):
            values = np.trunc(values)
    return _new(values.astype(d.np), requires_grad)


def eye(n: int, m: Any = None, *, dtype: Any = None, layout: Any = None, device: Any = None,
        pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    _place(device)
    cols = n if m is None else m
    check_sizes((n, cols), _dt(dtype).itemsize)
    try:
        return _new(np.eye(n, cols, dtype=_dt(dtype)), requires_grad)
    except MemoryError as e:
        raise out_of_memory(e) from None


def scalar_like(value: Any, like: Tensor) -> Tensor:
    """A 0-d tensor for a Python number meeting ``like`` in a reflected operator."""
    if isinstance(value, Tensor):
        return value
    d = _dtype.result_type(like, value)
    return Tensor._make(np.asarray(value, dtype=d.np if not isinstance(value, float) or
                                   d.is_floating_point else None))


def equal(input: Tensor, other: Tensor) -> bool:
    """True when both have the same shape and values."""
    return _equal_arrays(input._data, other._data)


@_registry.value_check  # (a Python answer from values: a compiled program asks it again)
def _equal_arrays(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b))


def isclose(input: Tensor, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    for pos, (arg, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"isclose(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(value).__name__}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
        return isclose_kernel(input, other, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return Tensor._make(isclose_kernel.forward(input._data, other._data, rtol=rtol, atol=atol,
                                               equal_nan=equal_nan))  # without the detour


def allclose(input: Tensor, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    b = other._data if isinstance(other, Tensor) else other
    return _allclose_arrays(input._data, b, rtol, atol, equal_nan)


@_registry.value_check
def _allclose_arrays(a: np.ndarray, b: Any, rtol: float, atol: float, equal_nan: bool) -> bool:
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _rebuild(data: np.ndarray, requires_grad: bool) -> Tensor:
    return Tensor._make(data, requires_grad)


def is_tensor(obj: Any, /) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


def is_nonzero(input: Tensor) -> bool:
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() != 1:
        raise RuntimeError(
            "Boolean value of Tensor with more than one value is ambiguous"
        )
    return bool(input.item())


__all__ = ["device"]
