"""Dtypes as objects (``tapegrad.float32`` ...) and PyTorch's type-promotion rules.

Every tapegrad dtype wraps one NumPy dtype. Promotion follows torch, not NumPy:

* ``int64 tensor + float32 tensor`` is float32 (NumPy would say float64);
* operands are ranked dimensioned tensor > zero-dim tensor > Python scalar, and a lower-ranked
  operand only matters when it brings a higher *category* (bool < integer < floating point);
* a Python float meets an integer tensor as the default dtype (float32), a Python int meets a
  bool tensor as int64.
"""

from __future__ import annotations

import importlib.util
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ._naming import public

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

# bfloat16: NumPy has no such type of its own, ml_dtypes provides it (a dependency of tapegrad;
# an installation without it has no torch.bfloat16).
# Importing ml_dtypes takes about 0.5 s (two thirds of ``import tapegrad``), so it is imported
# when a bfloat16 NumPy dtype is first needed (``bfloat16.np``), not with tapegrad.
HAVE_BFLOAT16 = importlib.util.find_spec("ml_dtypes") is not None


@public("")
class dtype:
    """A tensor element type, printed as ``torch.float32``."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_rank")

    def __init__(self, name: str, np_dtype: DTypeLike, rank: int) -> None:
        self.name = name
        self.np: np.dtype[Any] = np.dtype(np_dtype)
        kind = self.np.kind
        self.is_floating_point = kind == "f" or name == "bfloat16"
        self.is_complex = kind == "c" or name == "complex32"
        self.is_signed = name not in ("uint8", "bool")
        self.itemsize = self.np.itemsize
        self._rank = rank  # 0 bool, 1 integer, 2 floating point, 3 complex

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self) -> str:
        return self.name

    def to_real(self) -> dtype:
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self) -> dtype:
        return {"float64": complex128}.get(self.name, complex64)


bool_ = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)


# The first float16 or bfloat16 NumPy dtype tapegrad hands out switches on the registry's
# low-precision path (ops/low_precision.py): until then no op pays for looking at it. The
# registry, a layer above, listens (``on_low_precision``); this module tells its listeners once.
_low_seen = False
_LOW_LISTENERS: list = []


def on_low_precision(listener: Any) -> None:
    """Call ``listener()`` once a float16 or bfloat16 tensor may exist (now, if one may)."""
    _LOW_LISTENERS.append(listener)
    if _low_seen:
        listener()


def _saw_low_precision() -> None:
    global _low_seen
    if _low_seen:
        return
    _low_seen = True
    for listener in _LOW_LISTENERS:
        listener()


def _set_2_byte_float_fields(d: dtype, name: str) -> None:
    """What ``dtype.__init__`` sets but ``np`` for float16 and bfloat16, whose classes below
    hand out their NumPy dtype only when asked."""
    d.name = name
    d.is_floating_point = True
    d.is_complex = False
    d.is_signed = True
    d.itemsize = 2
    d._rank = 2


@public("", "dtype")  # (a dtype of its own class: torch.float16 is a torch.dtype)
class _Float16(dtype):
    """``torch.float16``: its NumPy dtype, once handed out, switches on the low-precision path."""

    __slots__ = ("_np",)

    def __init__(self) -> None:  # what dtype.__init__ sets, with the NumPy dtype kept aside
        self._np: np.dtype[Any] = np.dtype(np.float16)
        _set_2_byte_float_fields(self, "float16")

    @property
    def np(self) -> np.dtype[Any]:  # type: ignore[override]
        if not _low_seen:
            _saw_low_precision()
        return self._np


float16 = _Float16()
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)


@public("", "dtype")
class _LazyBfloat16(dtype):
    """``torch.bfloat16``, whose NumPy dtype (ml_dtypes') is imported on first use."""

    __slots__ = ("_np",)

    def __init__(self) -> None:  # what dtype.__init__ sets, without touching the NumPy dtype
        self._np: np.dtype[Any] | None = None
        _set_2_byte_float_fields(self, "bfloat16")

    @property
    def np(self) -> np.dtype[Any]:  # type: ignore[override]
        if self._np is None:
            try:
                import ml_dtypes  # optional, loaded on first use (it costs about 0.5 s)
            except ImportError as exc:  # pragma: no cover - a broken installation
                raise RuntimeError("bfloat16 needs the optional dependency ml_dtypes") from exc
            self._np = np.dtype(ml_dtypes.bfloat16)
            _FROM_NP[self._np] = self
        if not _low_seen:
            _saw_low_precision()
        return self._np


bfloat16: dtype | None = _LazyBfloat16() if HAVE_BFLOAT16 else None


ALL = [bool_, uint8, int8, int16, int32, int64, float16, float32, float64, complex64, complex128]
if bfloat16 is not None:
    ALL.append(bfloat16)

# NumPy dtype -> tapegrad dtype (the reverse of dtype.np); bfloat16 joins when it is loaded.
_FROM_NP: dict[np.dtype, dtype] = {d.np: d for d in ALL if d is not bfloat16 and d is not float16}
_FROM_NP[float16._np] = float16

# torch's unsigned types of "limited support": tensors hold them (torch.hash_tensor returns
# uint64, torch.from_numpy takes them), few ops compute with them, and they promote with no other
# dtype. Not in ALL: no op is tested for them.
uint16 = dtype("uint16", np.uint16, 1)
uint32 = dtype("uint32", np.uint32, 1)
uint64 = dtype("uint64", np.uint64, 1)
LIMITED_UNSIGNED = (uint16, uint32, uint64)
_FROM_NP.update({d.np: d for d in LIMITED_UNSIGNED})

# complex32 (torch.chalf): NumPy has no such type. Its values, pairs of float16, are held
# exactly in a structured dtype of two float16 fields (4 bytes an element, as in torch), so
# conversions, copies, indexing, views and printing keep them; arithmetic on complex32 tensors
# is not provided (NumPy has no loops for it). Not in ALL: no op is tested for it.
CHALF_NP = np.dtype([("real", np.float16), ("imag", np.float16)])
complex32 = dtype("complex32", CHALF_NP, 3)
_FROM_NP[CHALF_NP] = complex32


def to_chalf(x: np.ndarray) -> np.ndarray:
    """``x`` as complex32 (float16 parts; through complex64, as torch converts)."""
    if x.dtype == CHALF_NP:
        return x.copy()
    c = np.asarray(x).astype(np.complex64)
    out = np.empty(c.shape, dtype=CHALF_NP)
    out["real"] = c.real
    out["imag"] = c.imag
    return out


def from_chalf(x: np.ndarray) -> np.ndarray:
    """A complex32 array's values as complex64 (exact)."""
    out = np.empty(x.shape, dtype=np.complex64)
    out.real = x["real"]
    out.imag = x["imag"]
    return out


# torch's aliases: torch.half, torch.float, torch.double, torch.long, torch.int, ...
ALIASES = {
    "half": float16,
    "float": float32,
    "double": float64,
    "short": int16,
    "int": int32,
    "long": int64,
    "cfloat": complex64,
    "cdouble": complex128,
    "chalf": complex32,
}

_default_float = float32


def get_default_dtype() -> dtype:
    """The dtype of Python floats turned into tensors (float32 unless changed)."""
    return _default_float


def set_default_dtype(d: dtype) -> None:
    """Set the default floating point dtype (float32 or float64, as torch allows)."""
    global _default_float
    if not isinstance(d, dtype) or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float = d


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The tapegrad dtype of a NumPy dtype, or torch's TypeError for one it cannot hold."""
    try:
        d = _FROM_NP[np_dtype]
        if d.itemsize == 2 and not _low_seen and d.is_floating_point:
            _saw_low_precision()  # a float16 array from outside (from_numpy, load)
        return d
    except KeyError:
        if bfloat16 is not None and getattr(np_dtype, "name", None) == "bfloat16" and (
                np_dtype == bfloat16.np):  # ml_dtypes' array, before tapegrad needed the type
            return bfloat16
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool."
        ) from None


def to_dtype(d: object) -> dtype:
    """Accept a tapegrad dtype, a NumPy dtype or a Python type (float, int, bool)."""
    if isinstance(d, dtype):
        return d
    if d is float:
        return float64
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return complex128
    return from_numpy_dtype(np.dtype(d))  # type: ignore[call-overload]


# -- dtype names as torch's messages print them -------------------------------------------

_SCALAR_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
    "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
    "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
    "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
}


def scalar_type_name(d: Any) -> str:
    """c10's name of a dtype as messages print it (Float, Long, ...)."""
    return _SCALAR_NAMES[d.name]


# the C++ type of each dtype as torch's messages print it (GCC's names: "long int", ...)
_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "uint16": "short unsigned int",
    "uint32": "unsigned int", "uint64": "long unsigned int", "float16": "c10::Half",
    "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
    "complex32": "c10::complex<c10::Half>", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def cpp_type_name(d: Any) -> str:
    """The C++ name of a dtype as some of torch's messages print it (float, c10::Half, ...)."""
    return _CPP_NAMES.get(d.name, d.name)


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """torch.promote_types: the smallest dtype both can be cast to, torch's way."""
    if type1 is type2:
        return type1
    if type1 in LIMITED_UNSIGNED or type2 in LIMITED_UNSIGNED:
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {scalar_type_name(type1)} and "
                           f"{scalar_type_name(type2)}")
    if type1._rank != type2._rank:
        high, low = (type1, type2) if type1._rank > type2._rank else (type2, type1)
        if high.is_complex and low.is_floating_point and low.itemsize > high.itemsize // 2:
            return complex128
        return high  # a float type absorbs any integer, an integer absorbs bool
    if type1.is_floating_point:
        if {type1.name, type2.name} == {"float16", "bfloat16"}:
            return float32
        return type1 if type1.itemsize > type2.itemsize else type2
    return _FROM_NP[np.promote_types(type1.np, type2.np)]


def scalar_dtype(value: object) -> dtype:
    """The dtype a Python scalar takes when it stands alone (torch.tensor(2.5) is float32)."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, int):
        return int64
    if isinstance(value, complex):
        return complex64 if _default_float is float32 else complex128
    return _default_float


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Let a lower-priority operand class in only when it brings a higher category."""
    if higher is None:
        return lower
    if lower is None or lower._rank <= higher._rank:
        return higher
    if lower.is_complex and higher.is_floating_point:
        return higher.to_complex()  # the higher-priority operand's precision: f32 + c128 0-d
    return lower if higher._rank < lower._rank else higher


def result_type(*operands: object) -> dtype:
    """torch.result_type over tensors and Python scalars (see the module docstring)."""
    dim_t = zero_t = wrapped = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.ndim:  # type: ignore[attr-defined]
                dim_t = d if dim_t is None else promote_types(dim_t, d)
            else:
                zero_t = d if zero_t is None else promote_types(zero_t, d)
        else:
            s = scalar_dtype(x)
            wrapped = s if wrapped is None else promote_types(wrapped, s)
    out = _combine(dim_t, _combine(zero_t, wrapped))
    assert out is not None
    return out


# The legacy type names used in messages: [torch.FloatTensor [3, 4]].
LEGACY_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
    "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor",
}


# The C++ names torch's scalar-conversion errors use.
C_TYPE_NAMES = {"int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
                "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
                "uint64": "uint64_t", "bool": "bool", "float32": "float", "float64": "double",
                "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def checked_scalar(value: Any, np_dtype: np.dtype) -> Any:
    """A Python number converted to ``np_dtype`` as torch converts a scalar argument (``fill_``,
    ``masked_fill``): c10's checked conversion, ``RuntimeError`` where it overflows. Integers
    go through :func:`checked_int`; a float for an integer type must lie within the type's range
    (NaN and infinities do not), then is truncated; a float type takes values up to its largest
    finite one (infinities and NaN as they are); a complex number with an imaginary part does not
    fit a real type; bool takes anything."""
    kind = np_dtype.kind
    if kind == "b":
        return np.bool_(bool(value))
    if isinstance(value, bool):
        value = int(value)
    fail = RuntimeError(f"value cannot be converted to type {C_TYPE_NAMES[np_dtype.name]} "
                        "without overflow")
    if isinstance(value, complex):
        if kind != "c" and value.imag != 0:
            raise fail
        if kind != "c":
            value = value.real
    if kind in "iu":
        if isinstance(value, (int, np.integer)):
            return checked_int(int(value), np_dtype)
        info = np.iinfo(np_dtype)
        v = float(value)
        if not (float(info.min) <= v <= float(info.max)):  # (in doubles, as C++; NaN fails)
            raise fail
        return np.array(math.trunc(v)).astype(np_dtype)[()]
    top = float(np.finfo(np_dtype).max) if np_dtype.name != "bfloat16" else 3.3895313892515355e38
    parts = (value.real, value.imag) if isinstance(value, complex) else (value,)
    for part in parts:
        p = float(part)
        if math.isfinite(p) and abs(p) > top:
            raise fail
    return value


def checked_int(value: int, np_dtype: np.dtype) -> Any:
    """A Python int as an integer dtype's scalar, the way torch converts a scalar argument
    (``fill_value``, ``alpha``): an unsigned type takes negative values down to ``-max``
    modulo 2**bits (``-9`` as uint8 is 247), anything else out of range is an error."""
    info = np.iinfo(np_dtype)
    low = -int(info.max) if info.min == 0 else int(info.min)
    if not low <= value <= info.max:
        raise RuntimeError(f"value cannot be converted to type {C_TYPE_NAMES[np_dtype.name]} "
                           "without overflow")
    return np.array(value).astype(np_dtype)[()]
