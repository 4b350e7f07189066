"""Elementwise ops: arithmetic, unary math, clamp/maximum/minimum/where, comparisons.

Each differentiable op is one registry entry, forward and backward side by side. Binary forwards
get arrays already promoted to torch's result dtype (``_promote``), so an ``int64 * 2.5`` is
float32 as in torch, never NumPy's float64. A Python number operand stays a Python number: it is
an input of the node with no edge, as torch's "wrapped numbers" are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _blas, _dtype
from .._out import rule as out_rule
from .._tensor import Tensor
from ..autograd.engine import register_grad_copy
from ..kernels.low_precision import widen as _widen
from . import _registry
from ._registry import REGISTRY, apply_, defop, fast_backward, nondiff, scalar_type_name
from ._tangents import linear_tangent, multilinear_tangent

_SCALARS = (int, float, bool, complex)


# ---------------------------------------------------------------------------------------------
# Type promotion for binary ops
# ---------------------------------------------------------------------------------------------

def _np_result(a: Any, b: Any) -> np.dtype | None:
    """The NumPy dtype of torch's result for operands ``a``, ``b`` (arrays or Python numbers),
    or None when the plain NumPy operation already gives it."""
    ta, tb = type(a), type(b)
    if ta is np.ndarray and tb is np.ndarray:
        if a.dtype == b.dtype:
            return None
    elif ta is np.ndarray and tb in _SCALARS:
        kind = a.dtype.kind
        if kind in "fc" or (tb is int and kind in "iu") or tb is bool:
            return None
    elif tb is np.ndarray and ta in _SCALARS:
        kind = b.dtype.kind
        if kind in "fc" or (ta is int and kind in "iu") or ta is bool:
            return None
    return _dtype.result_type(_as_operand(a), _as_operand(b)).np


class _ArrayOperand:
    """Lets ``_dtype.result_type`` see an ndarray as a tensor (dtype + ndim)."""

    __slots__ = ("dtype", "ndim")

    def __init__(self, a: np.ndarray) -> None:
        self.dtype = _dtype.from_numpy_dtype(a.dtype)
        self.ndim = a.ndim


def _as_operand(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return _ArrayOperand(x)
    if isinstance(x, np.generic):
        return x.item()
    return x


def _bf16_c(a: np.ndarray) -> bool:
    """A C-contiguous bfloat16 array (widened to float32 on its bits, in the same layout)."""
    return a.dtype.char == "E" and a.flags.c_contiguous


def _promote(a: Any, b: Any) -> tuple[Any, Any]:
    """Cast array operands to torch's result dtype (Python numbers stay as they are)."""
    if isinstance(a, np.generic):  # NumPy returns scalars from 0-d operations
        a = np.asarray(a)
    if isinstance(b, np.generic):
        b = np.asarray(b)
    target = _np_result(a, b)
    if target is None:
        return a, b
    if isinstance(a, np.ndarray) and a.dtype != target:
        a = _widen(a) if _bf16_c(a) and target == np.float32 else a.astype(target)
    if isinstance(b, np.ndarray) and b.dtype != target:
        b = _widen(b) if _bf16_c(b) and target == np.float32 else b.astype(target)
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        a = np.asarray(a, dtype=target)
    return a, b


def _float_result(a: Any) -> Any:
    """Integer and bool inputs of float-valued functions (exp, sqrt, ...) become float32."""
    if isinstance(a, np.ndarray) and a.dtype.kind in "iub":
        return a.astype(_dtype.get_default_dtype().np)
    return a


def _check(x: Any, name: str) -> Any:
    if isinstance(x, Tensor) or isinstance(x, _SCALARS):
        return x
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(
        f"{name}(): argument 'other' (position 1) must be Tensor, not {type(x).__name__}"
    )


def invalid_arguments(name: str, *args: Any) -> TypeError:
    """torch's error for an overloaded function called with no overload's types."""
    got = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in args)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     "but expected one of:")


def require_tensors(name: str, input: Any, other: Any) -> None:
    """torch's error when ``input`` or ``other`` of a Tensor-only function is not a Tensor."""
    for pos, (arg, value) in enumerate((("input", input), ("other", other)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                            f"{type(value).__name__}")


def _broadcast_error(a: Any, b: Any) -> RuntimeError:
    sa, sb = np.shape(a), np.shape(b)
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + tuple(sa)
    pb = (1,) * (n - len(sb)) + tuple(sb)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(
                f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) at "
                f"non-singleton dimension {i}"
            )
    return RuntimeError("shapes cannot be broadcast")


def _array(v: Any) -> Any:
    """A Tensor's array, or the Python number as it is."""
    return v._data if isinstance(v, Tensor) else v


def _binary(ufunc: np.ufunc, a: Any, b: Any) -> np.ndarray:
    # The two commonest cases need no promotion (NumPy already gives torch's dtype): a float
    # array with a Python float, and two arrays of one dtype.
    if type(a) is not np.ndarray or not (
        (type(b) is float and a.dtype.kind in "fc")
        or (type(b) is np.ndarray and a.dtype == b.dtype)
    ):
        a, b = _promote(a, b)
    try:
        return ufunc(a, b)
    except ValueError:
        raise _broadcast_error(a, b) from None
    except OverflowError:  # a Python int out of the array's range: it wraps, as in C (and torch)
        return ufunc(*(np.array(x).astype(b.dtype if x is a else a.dtype)
                       if type(x) is int else x for x in (a, b)))


def _times_alpha(a: Any, b: Any, alpha: Any) -> Any:
    """``b * alpha`` for add and sub. Integer results take alpha as torch converts a scalar
    argument (unsigned types wrap negative values: ``uint8 - 3 * uint8`` stays in uint8)."""
    a2, b2 = _promote(a, b)
    target = (b2 if isinstance(b2, np.ndarray) else np.asarray(a2)).dtype
    if target.kind not in "iu" or type(alpha) is bool:
        return b * alpha
    if isinstance(alpha, float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    scale = _dtype.checked_int(int(alpha), target)
    with np.errstate(over="ignore"):
        return np.asarray(b2).astype(target, copy=False) * scale  # wraps modulo 2**bits


# ---------------------------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------------------------

def _fma32(x: Any, y: Any, z: Any) -> np.ndarray:
    """x * y + z rounded once to float32, as the fused multiply-add of torch's vectorized float32
    kernels (a + alpha * b, addcmul) rounds it: a product of two float32 numbers is exact in
    float64, so only the sum rounds there, and once more to float32 (the same float32 result but
    for rare double roundings at an exact tie)."""
    return (np.multiply(x, y, dtype=np.float64) + z).astype(np.float32)


def _alpha_fma(a: Any, b: Any, alpha: Any) -> np.ndarray | None:
    """a + alpha * b as torch's kernel computes it (one fused rounding), or None where that
    kernel is not the one (complex or bool alpha, a number operand of a float64 tensor) or
    float64 would need the slow way. Arrays of one shape go through the BLAS's axpy (one
    rounding, as fast as NumPy's two passes); other float32 ones through float64 (three times
    slower: small or broadcast operands only)."""
    if (type(b) in (int, float) and isinstance(a, np.ndarray) and a.dtype == np.float32
            and a.ndim > 0):  # a number: torch's kernel takes it in the tensor's dtype
        b = np.asarray(b, dtype=np.float32)
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
            and a.dtype.char in "fd" and isinstance(alpha, (int, float))
            and not isinstance(alpha, bool)):
        return None
    al = a.dtype.type(alpha)
    if (a.shape == b.shape and a.size >= _AXPY_MIN and a.flags.c_contiguous
            and b.flags.c_contiguous):
        out = a.copy()
        flat, x = out.reshape(-1), b.reshape(-1)
        main = flat.size - flat.size % _AXPY_BLOCK  # (OpenBLAS's tail loop rounds twice)
        if _blas.axpy(float(al), x[:main], flat[:main]):
            tail = slice(main, None)
            flat[tail] = (_fma32(x[tail], np.float64(al), flat[tail]) if a.dtype == np.float32
                          else flat[tail] + al * x[tail])  # (float64: an ulp off at worst)
            return out
    if a.dtype != np.float32:
        return None
    try:
        out = _fma32(b, np.float64(al), a)
    except ValueError:
        raise _broadcast_error(a, b) from None
    _unfuse_hoisted_tails(out, a, b, al)
    return out


def _unfuse_hoisted_tails(out: np.ndarray, a: np.ndarray, b: np.ndarray, al: Any) -> None:
    """Where ``b`` is one number along torch's inner loop (a (1,)-shaped or 0-dim tensor, or
    broadcast over the trailing dimensions), the compiler's vectorized remainder loop of torch's
    float32 kernel adds a product ``alpha * b`` it rounded once outside the loop: a + round(
    alpha b), two roundings, in some elements of each row's last 32. Which ones depends only on
    the row's length (AVX-512: a fused 16-wide vector where 16 remain, then one fused element,
    then 4-wide unfused vectors, then fused elements one by one); rows longer than torch's
    grain (32768 elements in all) are split among threads and left fused."""
    if out.size > 32768 or a.shape != out.shape or not a.flags.c_contiguous:
        return
    b_shape = (1,) * (out.ndim - b.ndim) + b.shape
    k = out.ndim
    while k > 0 and b_shape[k - 1] == 1:
        k -= 1
    if k == out.ndim:  # b varies along the innermost dimension: nothing is hoisted
        return
    row = int(np.prod(out.shape[k:], dtype=np.int64))
    t = row % 32
    start = row - t
    if t >= 16:
        start, t = start + 16, t - 16
    count = 4 * ((t - 1) // 4) if t >= 5 else 0
    if count == 0:
        return
    cols = slice(start + 1, start + 1 + count)
    rows_out = out.reshape(-1, row)
    rows_a = a.reshape(-1, row)
    product = (np.float32(al) * np.broadcast_to(b, out.shape).reshape(-1, row)[:, cols])
    rows_out[:, cols] = rows_a[:, cols] + product.astype(np.float32)


_AXPY_MIN = 4096  # smaller: the float64 way (float32) or two roundings (float64) cost less
_AXPY_BLOCK = 32  # OpenBLAS's axpy fuses blocks of 32 elements and rounds the rest twice


def _zero_grad(grad: Tensor) -> Tensor:
    """The gradient of a piecewise constant function: torch's zeros (+0.0; ``grad * 0`` would
    give -0.0 where grad < 0, which prints as ``-0.``)."""
    return Tensor._make(np.zeros(grad.shape, dtype=grad._data.dtype))


def _same_float(a: Any, b: Any) -> tuple:
    """Two float arrays of different dtypes in their common one (float32 and bfloat16 in
    float32): torch scales and adds in the result's dtype, not in the narrower operand's."""
    if (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype != b.dtype
            and a.dtype.kind in "fV" and b.dtype.kind in "fV"):
        return _promote(a, b)
    return a, b


@defop("add", node="AddBackward0")
def _add(a: Any, b: Any, *, alpha: Any = 1) -> np.ndarray:
    if alpha != 1:
        a, b = _same_float(a, b)
        fused = _alpha_fma(a, b, alpha)
        if fused is not None:
            return fused
        b = _times_alpha(a, b, alpha)
    return _binary(np.add, a, b)


@_add.backward
def add_backward(ctx: Any, grad: Tensor) -> tuple:  # d(a + alpha*b) = (1, alpha)
    alpha = ctx.params.get("alpha", 1)
    return grad, (grad if alpha == 1 else grad * alpha)


@defop("sub", node="SubBackward0")
def _sub(a: Any, b: Any, *, alpha: Any = 1) -> np.ndarray:
    if alpha != 1:
        a, b = _same_float(a, b)
        fused = _alpha_fma(a, b, -alpha) if type(alpha) in (int, float) else None
        if fused is not None:
            return fused
        b = _times_alpha(a, b, alpha)
    if isinstance(a, np.ndarray) and a.dtype == np.bool_ and isinstance(b, np.ndarray) and (
        b.dtype == np.bool_
    ):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or"
            " `logical_xor()` operator instead."
        )
    return _binary(np.subtract, a, b)


@_sub.backward
def sub_backward(ctx: Any, grad: Tensor) -> tuple:  # d(a - alpha*b) = (1, -alpha)
    if ctx.input_meta[1] is None:  # b needs no gradient (x - 0.25): no negation to pay for
        return grad, None
    alpha = ctx.params.get("alpha", 1)
    return grad, (-grad if alpha == 1 else grad * -alpha)


@defop("rsub", node="RsubBackward1")
def _rsub(x: np.ndarray, *, other: Any) -> np.ndarray:
    return _binary(np.subtract, other, x)


@_rsub.backward
def rsub_backward(ctx: Any, grad: Tensor) -> tuple:  # d(c - x)/dx = -1
    return (-grad,)


@defop("mul", node="MulBackward0", save=(0, 1), save_if={0: 1, 1: 0})
def _mul(a: Any, b: Any) -> np.ndarray:
    return _binary(np.multiply, a, b)


@_mul.backward
def mul_backward(ctx: Any, grad: Tensor) -> tuple:  # d(a*b) = (b, a)
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (grad * b if need_a else None), (grad * a if need_b else None)


@fast_backward("mul")
def mul_fast_backward(ctx: Any, saved: tuple, g: np.ndarray) -> tuple:
    # the rule on the arrays when grad mode is off (ops/fast_paths.py says when that runs):
    # the commonest rule of all, its two products without two trips through ``apply``
    a, b = saved  # (arrays, or Python numbers)
    meta_a, meta_b = ctx.input_meta  # None where an input needs no gradient (needs_input_grad
    # without a property call: 3,000 of a 1,000-op deep-chain step's opcodes)
    return (_binary(np.multiply, g, b) if meta_a is not None else None,
            _binary(np.multiply, g, a) if meta_b is not None else None)


@defop("div", node="DivBackward0", save=(0, 1), save_if={0: 1})
def _div(a: Any, b: Any) -> np.ndarray:
    a, b = _promote(a, b)
    a = _float_result(a)
    b = _float_result(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        try:
            return np.true_divide(a, b)
        except ValueError:
            raise _broadcast_error(a, b) from None


def _integer_divisor(a: Any, b: Any, kernel: str) -> bool:
    """For the integer kernels of the division family (``kernel``: torch's name, as in
    "div_floor_cpu"): torch's errors for bool operands and for a zero divisor (checked only
    where the kernel runs: a broadcast to no element divides nothing). True for an integer
    result."""
    kind = np.result_type(a, b).kind
    if kind == "b":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    if kind not in "iu":
        return False
    try:
        empty = 0 in np.broadcast_shapes(np.shape(a), np.shape(b))
    except ValueError:  # the kernel raises torch's broadcast error
        return True
    if not empty and np.any(np.asarray(b) == 0):
        raise RuntimeError("ZeroDivisionError")
    return True


@defop("div_mode", node="DivBackward2")
def _div_mode(a: Any, b: Any, *, rounding_mode: str) -> np.ndarray:
    a, b = _promote(a, b)
    return _rounded_div(a, b, rounding_mode)


@_div_mode.backward
def div_mode_backward(ctx: Any, grad: Tensor) -> tuple:
    # rounding is piecewise constant: derivative 0
    return tuple(_zero_grad(grad) if n else None for n in ctx.needs_input_grad)


def _rounded_div(a: Any, b: Any, mode: str) -> np.ndarray:
    is_int = mode in ("floor", "trunc") and _integer_divisor(a, b, f"div_{mode}_cpu")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (min // -1 wraps)
        if mode == "floor":
            out = np.floor_divide(a, b)
        elif mode == "trunc" and is_int:  # in integers (a float quotient loses int64's bits)
            out = np.floor_divide(a, b)
            out += (a - out * b != 0) & ((np.asarray(a) < 0) != (np.asarray(b) < 0))
        elif mode == "trunc":
            out = np.trunc(np.true_divide(a, b))
        else:
            raise RuntimeError(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                f"'{mode}'"
            )
    return np.asarray(out)


@_div.backward
def div_backward(ctx: Any, grad: Tensor) -> tuple:  # d(a/b) = (1/b, -a/b^2)
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    ga = grad / b if need_a else None
    gb = -grad * ((a / b) / b) if need_b else None  # (torch's order: float32 rounds the same)
    return ga, gb


@defop("reciprocal", node="ReciprocalBackward0", save_output=True)
def _reciprocal(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.reciprocal(_float_result(x))


@_reciprocal.backward
def reciprocal_backward(ctx: Any, grad: Tensor) -> tuple:  # d(1/x) = -1/x^2 = -y^2
    (y,) = ctx.saved
    return (-grad * (y * y),)  # (torch's order: float32 rounds the same)


@defop("neg", node="NegBackward0")
def _neg(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.bool_:
        raise RuntimeError(
            "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
            "invert a mask, use the `~` or `logical_not()` operator instead."
        )
    return np.negative(x)


@_neg.backward
def neg_backward(ctx: Any, grad: Tensor) -> tuple:  # d(-x) = -1
    return (-grad,)


@defop("pow", node="PowBackward0", save=(0,))
def _pow(x: np.ndarray, *, exponent: Any, tensor_exponent: bool = False) -> np.ndarray:
    x, e = _promote(x, exponent)
    if isinstance(x, np.ndarray) and x.dtype.kind in "iu" and isinstance(e, (int, np.integer)):
        if e < 0 and tensor_exponent:  # a 0-d tensor exponent: elementwise, as tensor ** tensor
            return _int_pow_negative(x, np.asarray(e, dtype=x.dtype))
        if e < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
    with np.errstate(divide="ignore", invalid="ignore"):
        if e in _POW_AS_TORCH and not tensor_exponent and x.dtype.char in "fd":
            return _POW_AS_TORCH[e](x)
        return np.power(x, e)


# A float32 or float64 tensor (dtype char f, d) to a number, not to a 0-d tensor, rounds as
# torch's kernel does: it multiplies for 2 and 3 (x ** 3 through pow differs from x * x * x in the
# last bit for a quarter of the elements), divides for -1 and -2, and takes sqrt for 0.5 and
# -0.5 (NumPy's power squares and divides already).
_POW_AS_TORCH: dict[float, Callable[[np.ndarray], np.ndarray]] = {
    3: lambda x: x * x * x,
    -2: lambda x: np.reciprocal(x * x),
    0.5: np.sqrt,
    -0.5: lambda x: np.reciprocal(np.sqrt(x)),
}


@_pow.backward
def pow_backward(ctx: Any, grad: Tensor) -> tuple:  # d(x^e) = e x^(e-1)
    (x,) = ctx.saved
    e = ctx.params["exponent"]
    if e == 0:
        return (_zero_grad(grad),)
    # torch's order, grad * (e * x^(e-1)), so that float32 rounds the same
    if ctx.params.get("tensor_exponent"):
        return (grad * (e * _pow(x, exponent=e - 1, tensor_exponent=True)),)
    return (grad * (e * x ** (e - 1)),)


@defop("pow_tensor", node="PowBackward1", save=(0, 1), save_output=True)
def _pow_tensor(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = _promote(a, b)
        if a.dtype.kind in "iu" and np.any(b < 0):
            return _int_pow_negative(a, b)
        return _binary(np.power, a, b)


def _int_pow_negative(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer powers with some negative exponents, as torch's kernel takes them (NumPy
    refuses): 1 stays 1, -1 gives +-1 by the exponent's parity, any other base gives 0."""
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise _broadcast_error(a, b) from None
    out = np.power(a, np.where(b < 0, 0, b))
    odd = (b % 2) != 0
    neg = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(a.dtype)
    return np.where(b < 0, neg, out)


@_pow_tensor.backward
def pow_tensor_backward(ctx: Any, grad: Tensor) -> tuple:  # d(a^b) = (b a^(b-1), a^b log a)
    a, b, y = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    ga = gb = None
    if need_a:  # (torch's orders, grad * (b a^(b-1)) and grad * (y log a): float32 rounds the same)
        ga = where(b == 0, 0.0, grad * (b * a ** (b - 1)))
    if need_b:
        if b.is_complex() and not a.is_complex():  # a negative real base has a complex log
            a = a.to(b.dtype)
        gb = grad * where((a == 0) & (b.real >= 0), 0.0, y * log(a))  # (complex: Re b)
    return ga, gb


@defop("pow_scalar_base", node="PowBackward2", save=(0,), save_output=True)
def _pow_scalar_base(e: np.ndarray, *, base: Any) -> np.ndarray:
    if e.dtype.kind in "iu" and type(base) in (int, bool) and np.any(e < 0):
        return _int_pow_negative(np.array(base).astype(e.dtype), e)  # (wrapped, as C)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _binary(np.power, base, e)


@_pow_scalar_base.backward
def pow_scalar_base_backward(ctx: Any, grad: Tensor) -> tuple:  # d(c^x) = c^x log c
    e, y = ctx.saved
    base = ctx.params["base"]
    if base == 0:  # 0^x is flat where x >= 0 (torch: 0 there, y log 0 elsewhere)
        flat = (e.imag == 0) & (e.real >= 0) if e.is_complex() else e >= 0
        return (grad * where(flat, 0.0, y * float("-inf")),)
    if isinstance(base, complex) or e.is_complex():
        return (grad * (y * complex(np.log(complex(base)))),)
    return (grad * (y * (math.log(base) if base > 0 else math.nan)),)


def _remainder_np(a: Any, b: Any) -> np.ndarray:
    a, b = _promote(a, b)
    _integer_divisor(a, b, "remainder_cpu")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _binary(np.remainder, a, b)


@defop("remainder", node="RemainderBackward0")
def _remainder(x: np.ndarray, *, other: Any) -> np.ndarray:
    return _remainder_np(x, other)


@_remainder.backward
def remainder_backward(ctx: Any, grad: Tensor) -> tuple:  # d(x mod c)/dx = 1
    return (grad,)


@defop("remainder_tensor", node="RemainderBackward1", save=(0, 1))
def _remainder_tensor(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _remainder_np(a, b)


@_remainder_tensor.backward
def remainder_tensor_backward(ctx: Any, grad: Tensor) -> tuple:
    # a mod b = a - b floor(a/b): (1, -floor(a/b))
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    # the quotient through div's rounding mode, as torch (its derivative is 0, also at b = 0)
    return (grad if need_a else None), (
        -grad * _div_mode(a, b, rounding_mode="floor") if need_b else None)


@defop("remainder_scalar_tensor", node="NotImplemented")
def _remainder_scalar_tensor(a: Any, b: np.ndarray) -> np.ndarray:
    return _remainder_np(a, b)


_remainder_scalar_tensor.node_cls._cpp_name = "torch::autograd::NotImplemented"


@_remainder_scalar_tensor.backward
def remainder_scalar_tensor_backward(ctx: Any, grad: Tensor) -> tuple:
    # torch has no derivative for number % tensor
    raise RuntimeError("derivative for aten::remainder is not implemented")


@defop("floor_divide", node="NotImplemented")
def _floor_divide(a: Any, b: Any) -> np.ndarray:
    a, b = _promote(a, b)
    _integer_divisor(a, b, "div_floor_cpu")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _binary(np.floor_divide, a, b)


_floor_divide.node_cls._cpp_name = "torch::autograd::NotImplemented"


@_floor_divide.backward
def floor_divide_backward(ctx: Any, grad: Tensor) -> tuple:
    raise RuntimeError("derivative for aten::floor_divide is not implemented")


# ---------------------------------------------------------------------------------------------
# Unary math
# ---------------------------------------------------------------------------------------------

def _unary(name: str, node: str, fn: Any, save: tuple = (), save_output: bool = False,
           quiet: bool = False) -> Any:
    def forward(x: np.ndarray) -> np.ndarray:
        if quiet:  # fn never warns: no errstate (~1 us)
            return fn(_float_result(x))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(_float_result(x))

    forward.__name__ = name
    return defop(name, node=node, save=save, save_output=save_output)(forward)


_exp = _unary("exp", "ExpBackward0", np.exp, save_output=True)
_log = _unary("log", "LogBackward0", np.log, save=(0,))
_log2 = _unary("log2", "Log2Backward0", np.log2, save=(0,))
_log10 = _unary("log10", "Log10Backward0", np.log10, save=(0,))
_log1p = _unary("log1p", "Log1PBackward0", np.log1p, save=(0,))
_expm1 = _unary("expm1", "Expm1Backward0", np.expm1, save_output=True)
_sqrt = _unary("sqrt", "SqrtBackward0", np.sqrt, save_output=True)
_rsqrt = _unary("rsqrt", "RsqrtBackward0", lambda x: 1 / np.sqrt(x), save_output=True)
_sin = _unary("sin", "SinBackward0", np.sin, save=(0,))
_cos = _unary("cos", "CosBackward0", np.cos, save=(0,))
_tan = _unary("tan", "TanBackward0", np.tan, save_output=True)
_tanh = _unary("tanh", "TanhBackward0", np.tanh, save_output=True, quiet=True)
_asin = _unary("asin", "AsinBackward0", np.arcsin, save=(0,))
_acos = _unary("acos", "AcosBackward0", np.arccos, save=(0,))
_atan = _unary("atan", "AtanBackward0", np.arctan, save=(0,))
_sinh = _unary("sinh", "SinhBackward0", np.sinh, save=(0,))
_cosh = _unary("cosh", "CoshBackward0", np.cosh, save=(0,))


def _sigmoid_np(x: np.ndarray) -> np.ndarray:
    # 1/(1+e^-x), branch-free and in one buffer (torch's own CPU formula): for very negative
    # x, e^-x overflows to inf and the result is 0, never NaN (the caller silences the warning).
    # (1 / t rather than NumPy's reciprocal: the same correctly rounded quotient, and twice as
    # fast, NumPy's reciprocal having no SIMD loop; complex reciprocals use another formula)
    out = np.negative(x, out=np.empty_like(x))  # (an array even for a 0-d x)
    np.exp(out, out=out)
    out += 1
    if out.dtype.kind == "c":
        return np.reciprocal(out, out=out)
    return np.divide(1, out, out=out)


_sigmoid = _unary("sigmoid", "SigmoidBackward0", _sigmoid_np, save_output=True)


@_exp.backward
def exp_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx e^x = e^x
    (y,) = ctx.saved
    return (grad * y,)


@_log.backward
def log_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx log x = 1/x
    (x,) = ctx.saved
    return (grad / x,)


@_log2.backward
def log2_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx log2 x = 1/(x ln 2)
    (x,) = ctx.saved
    return (grad / (x * 0.6931471805599453),)


@_log10.backward
def log10_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx log10 x = 1/(x ln 10)
    (x,) = ctx.saved
    return (grad / (x * 2.302585092994046),)


@_log1p.backward
def log1p_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx log(1+x) = 1/(1+x)
    (x,) = ctx.saved
    return (grad / (x + 1),)


@_expm1.backward
def expm1_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx (e^x - 1) = e^x = y + 1
    (y,) = ctx.saved
    return (grad * (y + 1),)


@_sqrt.backward
def sqrt_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx sqrt x = 1/(2 sqrt x)
    (y,) = ctx.saved
    return (grad / (y * 2),)


@_rsqrt.backward
def rsqrt_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx x^-1/2 = -1/2 x^-3/2 = -y^3/2
    (y,) = ctx.saved
    return (grad * (y * y * y) * -0.5,)


@_sin.backward
def sin_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx sin x = cos x
    (x,) = ctx.saved
    return (grad * cos(x),)


@_cos.backward
def cos_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx cos x = -sin x
    (x,) = ctx.saved
    return (grad * -sin(x),)


@_tan.backward
def tan_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx tan x = 1 + tan^2 x
    (y,) = ctx.saved
    return (grad * (y * y + 1),)


@_tanh.backward
def tanh_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx tanh x = 1 - tanh^2 x
    (y,) = ctx.saved
    return (_tanh_backward(grad, y),)


@_asin.backward
def asin_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx asin x = 1/sqrt(1-x^2)
    (x,) = ctx.saved
    return (grad * rsqrt(1 - x * x),)


@_acos.backward
def acos_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx acos x = -1/sqrt(1-x^2)
    (x,) = ctx.saved
    return (-grad * rsqrt(1 - x * x),)


@_atan.backward
def atan_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx atan x = 1/(1+x^2)
    (x,) = ctx.saved
    return (grad / (x * x + 1),)


@_sinh.backward
def sinh_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx sinh x = cosh x
    (x,) = ctx.saved
    return (grad * cosh(x),)


@_cosh.backward
def cosh_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx cosh x = sinh x
    (x,) = ctx.saved
    return (grad * sinh(x),)


@_sigmoid.backward
def sigmoid_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx s(x) = s(x)(1 - s(x))
    (y,) = ctx.saved
    return (_sigmoid_backward(grad, y),)


# The derivatives of sigmoid, tanh and relu are ops of their own (one NumPy pass instead of
# three, and a node torch also prints when the gradient is differentiated again).
@defop("sigmoid_backward", node="SigmoidBackwardBackward0", save=(0, 1))
def _sigmoid_backward(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    return g * (1 - y) * y  # (torch's order: float32 rounds the same)


@_sigmoid_backward.backward
def sigmoid_backward_backward(ctx: Any, gg: Tensor) -> tuple:  # d/dg = y(1-y); d/dy = g(1-2y)
    g, y = ctx.saved
    need_g, need_y = ctx.needs_input_grad
    return (_sigmoid_backward(gg, y) if need_g else None), (gg * g * (1 - 2 * y) if need_y
                                                            else None)


@defop("tanh_backward", node="TanhBackwardBackward0", save=(0, 1))
def _tanh_backward(g: np.ndarray, y: np.ndarray) -> np.ndarray:
    # (torch fuses 1 - y*y into one rounding; through float64 that costs this rule three times
    # its time, and tanh's forward, SLEEF's, differs in the last bit anyway: not emulated)
    return g * (1 - y * y)


@_tanh_backward.backward
def tanh_backward_backward(ctx: Any, gg: Tensor) -> tuple:  # d/dg = 1 - y^2; d/dy = -2gy
    g, y = ctx.saved
    need_g, need_y = ctx.needs_input_grad
    return (_tanh_backward(gg, y) if need_g else None), (gg * g * y * -2 if need_y else None)


_SAME_SIZE_INT = {2: np.int16, 4: np.int32, 8: np.int64}
_BITS_MIN = 4096  # smaller arrays take the plain np.where form (0-d ones included)


def _zero_where(mask: np.ndarray, a: np.ndarray, ints: Any) -> np.ndarray:
    """``a`` with +0 where ``mask`` holds, on the bits: ``a AND (mask - 1)`` (all ones where the
    mask is False). Two fast integer passes; NaN and -0.0 elsewhere pass unchanged, and a NaN
    masked out becomes 0. ``a`` and ``mask`` have one shape; ``ints`` is ``a``'s size in ints."""
    bits = np.subtract(mask.view(np.uint8), 1, dtype=ints)
    np.bitwise_and(bits, np.ascontiguousarray(a).view(ints), out=bits)
    return bits.view(a.dtype)


def _masked(grad: Tensor, keep: Tensor) -> Tensor:
    """``where(keep, grad, 0)``, the clamps' gradients as torch's: +0 off the mask, where
    ``grad * keep`` gives -0 for a negative grad (printed ``-0.``). (First order, on the bits:
    ``masked_array`` in ops/fast_paths.py.)"""
    return where(keep, grad, 0.0)


@defop("threshold_backward", node="ThresholdBackwardBackward0", save=(1,))
def _threshold_backward(g: np.ndarray, y: np.ndarray, *, threshold: Any = 0) -> np.ndarray:
    cut = np.less_equal(y, threshold)  # torch: y <= threshold ? 0 : g (a NaN y keeps g)
    ints = _SAME_SIZE_INT.get(g.dtype.itemsize) if g.dtype.kind == "f" else None
    if ints is None or cut.shape != g.shape or g.size < _BITS_MIN:
        return np.where(cut, 0, g).astype(g.dtype, copy=False)
    return _zero_where(cut, g, ints)


@_threshold_backward.backward
def threshold_backward_backward(ctx: Any, gg: Tensor) -> tuple:
    # linear in g with the same mask; constant in y
    (y,) = ctx.saved
    need_g, need_y = ctx.needs_input_grad
    t = ctx.params.get("threshold", 0)
    return (_threshold_backward(gg, y, threshold=t) if need_g else None), (
        gg * 0 if need_y else None)


_ZEROS: dict = {}  # dtype -> a read-only zero vector, grown to the largest size asked for


def _zeros_as(x: np.ndarray) -> np.ndarray:
    """A read-only array of zeros in ``x``'s shape and dtype: a view of one cached vector.
    NumPy's maximum of two contiguous arrays runs its vector loop, about 2.7x faster than
    with a scalar 0 (0.049 against 0.137 ms on 346,112 float32, AMD EPYC)."""
    z = _ZEROS.get(x.dtype)
    if z is None or z.size < x.size:
        z = _ZEROS[x.dtype] = np.zeros(max(x.size, 1 << 12), dtype=x.dtype)
        z.flags.writeable = False
    return z[:x.size].reshape(x.shape)


def _maximum_is_relu(dtype: Any) -> bool:
    """Whether ``np.maximum(zeros, x)`` on a contiguous ``dtype`` array is exactly torch's relu
    (``x < 0 ? 0 : x``) on this NumPy build, checked once on every special value at every
    position of short and long, aligned and offset arrays: -0.0 and NaNs (sign included) must
    come back as they went in. NumPy's SIMD loops return the second operand for a tie of zeros
    and propagate NaN; a scalar loop returns +0 for -0.0, so a build without them fails."""
    tiny = float(np.finfo(dtype).smallest_subnormal)
    pattern = np.array([-0.0, np.nan, -np.nan, -1.0, 1.0, -np.inf, np.inf, 0.0, -tiny, tiny,
                        -3.5, 2.5], dtype=dtype)
    ints = _SAME_SIZE_INT[pattern.itemsize]
    for n in (1, 7, 9, 17, 33, 65, 4099):
        for offset in (0, 1):
            base = np.resize(pattern, n + offset)
            for shift in range(pattern.size if n < 100 else 1):
                x = np.roll(base, shift)[offset:]
                want = x.copy()
                want[x < 0] = 0
                if not np.array_equal(np.maximum(_zeros_as(x), x).view(ints), want.view(ints)):
                    return False
    return True


# relu's forward: NumPy's maximum is one pass where the bit-mask form (_zero_where) is three,
# 2.5x faster on 346,112 float32 (0.10 against 0.24 ms, the CNN's first activation, on a 2-core
# Intel Xeon with AVX-512; against an array of zeros, not a scalar, 0.05 ms on an AMD EPYC);
# it is used where the probe above finds it exact, for contiguous
# float32/float64 arrays. The probe (about 4 ms) runs at the first relu of each dtype, not at
# import: None here means "not probed yet".
_RELU_BY_MAXIMUM: dict[np.dtype, bool | None] = {np.dtype(np.float32): None,
                                                  np.dtype(np.float64): None}


def _probe_relu_by_maximum(dtype: np.dtype) -> bool:
    with np.errstate(invalid="ignore"):
        exact = _RELU_BY_MAXIMUM[dtype] = _maximum_is_relu(dtype)
    return exact


@defop("relu", node="ReluBackward0", save_output=True)
def _relu(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.bool_:
        raise RuntimeError('"clamp_min_cpu" not implemented for \'Bool\'')
    if x.dtype.kind != "f":
        return np.maximum(x, 0).astype(x.dtype, copy=False)
    # torch: x < 0 ? 0 : x, so -0.0 and NaN come back as they went in
    by_maximum = _RELU_BY_MAXIMUM.get(x.dtype, False)
    if by_maximum is None:
        by_maximum = _probe_relu_by_maximum(x.dtype)
    if by_maximum and x.flags.c_contiguous:
        return np.maximum(_zeros_as(x), x)
    ints = _SAME_SIZE_INT.get(x.dtype.itemsize)
    if ints is None or x.size < _BITS_MIN:
        return np.where(np.less(x, 0), x.dtype.type(0), x)
    return _zero_where(np.less(x, 0), x, ints)  # strided, or a NumPy whose maximum is not relu


@_relu.backward
def relu_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx max(x, 0) = [x > 0]
    (y,) = ctx.saved
    return (_threshold_backward(grad, y),)


@defop("abs", node="AbsBackward0", save=(0,))
def _abs(x: np.ndarray) -> np.ndarray:
    return np.abs(x)


@_abs.backward
def abs_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx |x| = sign x (complex: sgn z = z / |z|)
    (x,) = ctx.saved
    if x._data.dtype.kind == "c":
        return (grad * x.sgn(),)
    return (grad * sign(x),)


def _zero_grad_unary(name: str, node: str, fn: Any) -> Any:
    op = defop(name, node=node)(fn)

    @op.backward
    def zero_grad_backward(ctx: Any, grad: Tensor) -> tuple:  # piecewise constant: derivative 0
        return (_zero_grad(grad),)

    return op


_sign = _zero_grad_unary("sign", "SignBackward0",  # a bool is its own sign
                         lambda x: x.copy() if x.dtype == np.bool_ else np.sign(x))
_floor = _zero_grad_unary("floor", "FloorBackward0", lambda x: np.floor(x))
_ceil = _zero_grad_unary("ceil", "CeilBackward0", lambda x: np.ceil(x))
_round = _zero_grad_unary("round", "RoundBackward0", lambda x: np.round(x))


@defop("round_decimals", node="RoundBackward1")
def _round_decimals(x: np.ndarray, *, decimals: int) -> np.ndarray:
    if x.dtype.kind in "iub":
        if decimals:
            raise RuntimeError("round_cpu not implemented for integer inputs with decimals != 0")
        return x.copy()
    with np.errstate(all="ignore"):  # torch: x * 10^d, round, / 10^d (divides for d < 0)
        if decimals >= 0:
            scale = x.dtype.type(10.0**decimals)
            return np.asarray(np.rint(x * scale) / scale)
        scale = x.dtype.type(10.0**-decimals)
        return np.asarray(np.rint(x / scale) * scale)


@_round_decimals.backward
def round_decimals_backward(ctx: Any, grad: Tensor) -> tuple:  # piecewise constant
    return (_zero_grad(grad),)
_trunc = _zero_grad_unary("trunc", "TruncBackward0", lambda x: np.trunc(x))


# ---------------------------------------------------------------------------------------------
# clamp, maximum, minimum, where
# ---------------------------------------------------------------------------------------------

@defop("clamp", node="ClampBackward1", save=(0,))
def _clamp(x: np.ndarray, *, min: Any = None, max: Any = None) -> np.ndarray:
    if x.dtype.kind in "iu":  # integer bounds of an integer tensor: torch's checked conversion
        min, max = (_dtype.checked_scalar(v, x.dtype) if type(v) is int else v
                    for v in (min, max))
    out = x
    if min is not None:
        x, min = _promote(x, min)
        out = np.maximum(x, min)
    if max is not None:
        out, max = _promote(out, max)
        out = np.minimum(out, max)
    if min is not None and max is not None and min > max:  # torch: every value becomes max
        out = np.full_like(out, max)
    return out if out is not x else x.copy()


@_clamp.backward
def clamp_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx clamp(x) = [min <= x <= max]
    (x,) = ctx.saved
    lo, hi = ctx.params.get("min"), ctx.params.get("max")
    mask = None
    if lo is not None:
        mask = x >= lo
    if hi is not None:
        mask = (x <= hi) if mask is None else mask & (x <= hi)
    assert mask is not None  # (clamp refuses two missing bounds)
    return (_masked(grad, mask),)


@defop("clamp_tensor", node="ClampBackward0", save=(0, 1, 2))
def _clamp_tensor(x: np.ndarray, lo: Any, hi: Any, *, has_min: bool, has_max: bool
                  ) -> np.ndarray:
    out = x
    if lo is not None:
        out = _binary(np.maximum, out, lo)
    if hi is not None:
        out = _binary(np.minimum, out, hi)
    return out if out is not x else x.copy()


@_clamp_tensor.backward
def clamp_tensor_backward(ctx: Any, grad: Tensor) -> tuple:
    # x passes where lo <= x <= hi; else the bound does
    x, lo, hi = ctx.saved
    need_x, need_lo, need_hi = ctx.needs_input_grad
    mask = None
    if lo is not None:
        mask = x >= lo
    if hi is not None:
        mask = (x <= hi) if mask is None else mask & (x <= hi)
    assert mask is not None  # (clamp refuses two missing bounds)
    gx = _masked(grad, mask) if need_x else None
    # with both bounds, min > max makes every value max: then max gets the whole gradient
    glo = _masked(grad, (x < lo) & (lo < hi) if hi is not None else x < lo) if need_lo else None
    ghi = _masked(grad, (x > hi) | (hi < lo) if lo is not None else x > hi) if need_hi else None
    return gx, glo, ghi


def _extremum(name: str, node: str, ufunc: np.ufunc, wins: str) -> Any:
    op = defop(name, node=node, save=(0, 1))(lambda a, b: _binary(ufunc, a, b))

    @op.backward
    def extremum_backward(ctx: Any, grad: Tensor) -> tuple:
        # the larger (smaller) input gets it; ties share
        a, b = ctx.saved
        a_wins = (a > b) if wins == "gt" else (a < b)
        half = grad / 2
        ga = where(a == b, half, where(a_wins, grad, 0.0))
        gb = where(a == b, half, where(a_wins, 0.0, grad))
        return ga, gb

    return op


_maximum = _extremum("maximum", "MaximumBackward0", np.maximum, "gt")
_minimum = _extremum("minimum", "MinimumBackward0", np.minimum, "lt")


@defop("where", node="WhereBackward0")
def _where(a: Any, b: Any, *, condition: np.ndarray) -> np.ndarray:
    a, b = _promote(a, b)
    try:
        return np.where(condition, a, b)
    except ValueError:
        shapes = [np.shape(condition), np.shape(a), np.shape(b)]
        for i in range(1, 3):  # the first pair that fails, as torch reports it
            try:
                shapes[0] = np.broadcast_shapes(shapes[0], shapes[i])
            except ValueError:
                raise _broadcast_error(np.empty(shapes[0]), np.empty(shapes[i])) from None
        raise


@_where.backward
def where_backward(ctx: Any, grad: Tensor) -> tuple:  # the chosen branch gets the gradient
    cond = Tensor._make(ctx.params["condition"])
    need_a, need_b = ctx.needs_input_grad
    ga = where(cond, grad, 0.0) if need_a else None
    gb = where(cond, 0.0, grad) if need_b else None
    return ga, gb


# ---------------------------------------------------------------------------------------------
# Public functions (what Tensor methods and tapegrad.* call)
# ---------------------------------------------------------------------------------------------

def add(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    """``input + alpha * other``, broadcasting, with torch's type promotion."""
    if not isinstance(input, Tensor):
        return _add(_check(other, "add"), input, alpha=1) if alpha == 1 else (
            _add(Tensor._make(np.asarray(input)), other, alpha=alpha))
    return _add(input, _check(other, "add"), alpha=alpha)


def sub(input: Any, other: Any, *, alpha: Any = 1) -> Tensor:
    if not isinstance(input, Tensor):
        return rsub(other, input, alpha=alpha)
    return _sub(input, _check(other, "sub"), alpha=alpha)


subtract = sub


@defop("rsub_tensor", node="RsubBackward0")
def _rsub_tensor(x: Any, other: Any, *, alpha: Any = 1) -> np.ndarray:
    return _sub.forward(other, x, alpha=alpha)


@_rsub_tensor.backward
def rsub_tensor_backward(ctx: Any, grad: Tensor) -> tuple:  # d(other - alpha x) = (-alpha, 1)
    alpha = ctx.params.get("alpha", 1)
    need_x, need_o = ctx.needs_input_grad
    return (grad * -alpha if need_x else None), (grad if need_o else None)


def rsub(input: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    """``other - alpha * input``."""
    if not isinstance(input, Tensor):
        got = ", ".join("Tensor" if isinstance(v, Tensor) else type(v).__name__
                        for v in (input, other))
        raise TypeError(f"rsub() received an invalid combination of arguments - got ({got}), "
                        "but expected one of:\n * (Tensor input, Tensor other, *, Number alpha = "
                        "1)\n * (Tensor input, Number other, Number alpha = 1)\n")
    if isinstance(other, Tensor):
        return _rsub_tensor(input, other, alpha=alpha)
    if alpha != 1:
        input = input * alpha
    return _rsub(input, other=_check(other, "rsub"))


def mul(input: Any, other: Any) -> Tensor:
    if not isinstance(input, Tensor):
        return _mul(_check(other, "mul"), input)
    return _mul(input, _check(other, "mul"))


multiply = mul


def div(input: Any, other: Any, *, rounding_mode: Any = None) -> Tensor:
    if not isinstance(input, Tensor):
        input = Tensor._make(np.asarray(input))
    if rounding_mode is not None:
        return _div_mode(input, _check(other, "div"), rounding_mode=rounding_mode)
    return _div(input, _check(other, "div"))


divide = true_divide = div


def rdiv(input: Tensor, other: Any) -> Tensor:
    """``other / input`` for a Python number ``other`` (torch: reciprocal, then multiply)."""
    if isinstance(other, Tensor):
        return div(other, input)
    return _mul(_reciprocal(input), other)


def reciprocal(input: Tensor) -> Tensor:
    return _reciprocal(input)


def neg(input: Tensor) -> Tensor:
    return _neg(input)


negative = neg


def pow(input: Any, exponent: Any) -> Tensor:
    """``input ** exponent``: PowBackward0 (tensor ** number), 1 (tensor ** tensor), 2 (number **
    tensor)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise invalid_arguments("pow", input, exponent)
    if isinstance(input, Tensor):
        if isinstance(exponent, Tensor):
            if exponent.ndim == 0 and not exponent._requires_grad and input.ndim > 0 and (
                exponent.dtype._rank <= input.dtype._rank
            ) and exponent._fw_grad is None:  # a dual exponent stays a tensor (forward_ad)
                return _pow(input, exponent=exponent.item(), tensor_exponent=True)
            return _pow_tensor(input, exponent)
        return _pow(input, exponent=_check(exponent, "pow"))
    return _pow_scalar_base(exponent, base=_check(input, "pow"))


def square(input: Tensor) -> Tensor:
    return _pow(input, exponent=2)


def _wrapped_number(value: Any, other: Any) -> Tensor:
    """A Python number opposite a tensor, as a 0-d tensor of the pair's result dtype."""
    d = _dtype.result_type(value, other)
    return Tensor._make(np.array(value).astype(d.np))


def remainder(input: Any, other: Any) -> Tensor:
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise invalid_arguments("remainder", input, other)
    reject_complex(input, '"remainder_cpu" not implemented for \'{}\'')
    if isinstance(other, Tensor):
        if not isinstance(input, Tensor):  # a number: wrapped, as torch's (5 % int8 is int8)
            return _remainder_scalar_tensor(_wrapped_number(input, other), other)
        return _remainder_tensor(input, other)
    return _remainder(input, other=_check(other, "remainder"))


def _fmod_np(a: Any, b: Any) -> np.ndarray:
    a, b = _promote(a, b)
    _integer_divisor(a, b, "fmod_cpu")
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.asarray(_binary(np.fmod, a, b))  # (a number out of the type's range wraps)


@defop("fmod", node="FmodBackward0")
def _fmod(x: np.ndarray, *, other: Any) -> np.ndarray:
    return _fmod_np(x, other)


@_fmod.backward
def fmod_backward(ctx: Any, grad: Tensor) -> tuple:  # d fmod(x, c)/dx = 1
    return (grad,)


@defop("fmod_tensor", node="FmodBackward1", save=(0, 1))
def _fmod_tensor(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _fmod_np(a, b)


@_fmod_tensor.backward
def fmod_tensor_backward(ctx: Any, grad: Tensor) -> tuple:
    # fmod(a, b) = a - b trunc(a/b): (1, -trunc(a/b))
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (grad if need_a else None), (
        -grad * _div_mode(a, b, rounding_mode="trunc") if need_b else None)


def fmod(input: Tensor, other: Any) -> Tensor:
    """C's fmod: the remainder with the sign of ``input``."""
    reject_complex(input, '"fmod_cpu" not implemented for \'{}\'')
    if not isinstance(input, Tensor):
        raise invalid_arguments("fmod", input, other)
    if isinstance(other, Tensor):
        return _fmod_tensor(input, other)
    return _fmod(input, other=_check(other, "fmod"))


def floor_divide(input: Any, other: Any) -> Tensor:
    reject_complex(input, '"div_floor_cpu" not implemented for \'{}\'')
    if not isinstance(input, Tensor):
        input = _wrapped_number(input, other)
    return _floor_divide(input, _check(other, "floor_divide"))


def exp(input: Tensor) -> Tensor:
    return _exp(input)


def log(input: Tensor) -> Tensor:
    return _log(input)


def log2(input: Tensor) -> Tensor:
    return _log2(input)


def log10(input: Tensor) -> Tensor:
    return _log10(input)


def log1p(input: Tensor) -> Tensor:
    return _log1p(input)


def expm1(input: Tensor) -> Tensor:
    return _expm1(input)


def sqrt(input: Tensor) -> Tensor:
    return _sqrt(input)


def rsqrt(input: Tensor) -> Tensor:
    return _rsqrt(input)


def sin(input: Tensor) -> Tensor:
    return _sin(input)


def cos(input: Tensor) -> Tensor:
    return _cos(input)


def tan(input: Tensor) -> Tensor:
    return _tan(input)


def tanh(input: Tensor) -> Tensor:
    return _tanh(input)


def asin(input: Tensor) -> Tensor:
    return _asin(input)


def acos(input: Tensor) -> Tensor:
    return _acos(input)


def atan(input: Tensor) -> Tensor:
    return _atan(input)


def sinh(input: Tensor) -> Tensor:
    return _sinh(input)


def cosh(input: Tensor) -> Tensor:
    return _cosh(input)


def sigmoid(input: Tensor) -> Tensor:
    return _sigmoid(input)


def relu(input: Tensor) -> Tensor:
    return _relu(input)


def abs(input: Tensor) -> Tensor:
    return _abs(input)


absolute = abs


def sign(input: Tensor) -> Tensor:
    reject_complex(input, "Unlike NumPy, torch.sign is not intended to support complex numbers. "
                   "Please use torch.sgn instead.")
    return _sign(input)


def floor(input: Tensor) -> Tensor:
    reject_complex(input, "floor is not supported for complex inputs")
    return _floor(input)


def ceil(input: Tensor) -> Tensor:
    reject_complex(input, "ceil is not supported for complex inputs")
    return _ceil(input)


def round(input: Tensor, *, decimals: Any = None) -> Tensor:
    """Round half to even; ``decimals`` digits after the point (RoundBackward1)."""
    reject_complex(input, '"round_vml_cpu" not implemented for \'{}\'')
    if decimals is not None:
        return _round_decimals(input, decimals=int(decimals))
    return _round(input)


def trunc(input: Tensor) -> Tensor:
    reject_complex(input, "trunc is not supported for complex inputs")
    return _trunc(input)


def clamp(input: Tensor, min: Any = None, max: Any = None) -> Tensor:
    """Limit values to [min, max]; number bounds: ClampBackward1, tensor bounds: ClampBackward0."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        lo = min if isinstance(min, Tensor) or min is None else Tensor._make(np.asarray(min))
        hi = max if isinstance(max, Tensor) or max is None else Tensor._make(np.asarray(max))
        return _clamp_tensor(input, lo, hi, has_min=lo is not None, has_max=hi is not None)
    return _clamp(input, min=min, max=max)


clip = clamp


_clamp_min = defop("clamp_min", node="ClampMinBackward0", save=(0,))(
    lambda x, *, min: _clamp.forward(x, min=min))
_clamp_max = defop("clamp_max", node="ClampMaxBackward0", save=(0,))(
    lambda x, *, max: _clamp.forward(x, max=max))
_clamp_min_t = defop("clamp_min_tensor", node="ClampMinBackward1", save=(0, 1))(
    lambda x, lo: _binary(np.maximum, x, lo))
_clamp_max_t = defop("clamp_max_tensor", node="ClampMaxBackward1", save=(0, 1))(
    lambda x, hi: _binary(np.minimum, x, hi))


@_clamp_min.backward
def clamp_min_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx max(x, m) = [x >= m]
    (x,) = ctx.saved
    return (_masked(grad, x >= ctx.params["min"]),)


@_clamp_max.backward
def clamp_max_backward(ctx: Any, grad: Tensor) -> tuple:  # d/dx min(x, m) = [x <= m]
    (x,) = ctx.saved
    return (_masked(grad, x <= ctx.params["max"]),)


@_clamp_min_t.backward
def clamp_min_t_backward(ctx: Any, grad: Tensor) -> tuple:  # x where x >= m, else the bound
    x, lo = ctx.saved
    keep = x >= lo
    need_x, need_lo = ctx.needs_input_grad
    return (_masked(grad, keep) if need_x else None), (_masked(grad, ~keep) if need_lo else None)


@_clamp_max_t.backward
def clamp_max_t_backward(ctx: Any, grad: Tensor) -> tuple:  # x where x <= m, else the bound
    x, hi = ctx.saved
    keep = x <= hi
    need_x, need_hi = ctx.needs_input_grad
    return (_masked(grad, keep) if need_x else None), (_masked(grad, ~keep) if need_hi else None)


def clamp_min(input: Tensor, min: Any) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_arguments("clamp_min", input, min)
    if isinstance(min, Tensor):
        return _clamp_min_t(input, min)
    return _clamp_min(input, min=min)


def clamp_max(input: Tensor, max: Any) -> Tensor:
    if not isinstance(input, Tensor):
        raise invalid_arguments("clamp_max", input, max)
    if isinstance(max, Tensor):
        return _clamp_max_t(input, max)
    return _clamp_max(input, max=max)


def maximum(input: Tensor, other: Tensor) -> Tensor:
    require_tensors("maximum", input, other)
    reject_complex(input, "maximum not implemented for complex tensors.", RuntimeError)
    reject_complex(other, "maximum not implemented for complex tensors.", RuntimeError)
    return _maximum(input, other)


def minimum(input: Tensor, other: Tensor) -> Tensor:
    require_tensors("minimum", input, other)
    reject_complex(input, "minimum not implemented for complex tensors.", RuntimeError)
    reject_complex(other, "minimum not implemented for complex tensors.", RuntimeError)
    return _minimum(input, other)


def where(condition: Tensor, input: Any = None, other: Any = None) -> Any:
    """Pick ``input`` where ``condition`` holds, else ``other``. One argument: ``nonzero``."""
    if input is None and other is None:
        from .indexing import nonzero  # circular: ops/indexing.py builds on this module

        return nonzero(condition, as_tuple=True)
    cond = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype "
                           f"{_registry.scalar_type_name(_dtype.from_numpy_dtype(cond.dtype))}")
    a = input if isinstance(input, (Tensor, *_SCALARS)) else Tensor._make(np.asarray(input))
    b = other if isinstance(other, (Tensor, *_SCALARS)) else Tensor._make(np.asarray(other))
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        a = Tensor._make(np.asarray(a, dtype=_dtype.result_type(a, b).np))
    return _where(a, b, condition=cond)


def _where_out(args: tuple, out: Any) -> None:
    """where's out rule: both branches tensors (torch's forms with a number have no out), and
    out of their common dtype."""
    a, b = args[1], args[2]
    for value, name, position in ((a, "input", 2), (b, "other", 3)):
        if not isinstance(value, Tensor):
            raise TypeError(f"where(): argument '{name}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    if isinstance(out, Tensor) and (isinstance(a, Tensor) or isinstance(b, Tensor)):
        want = _dtype.result_type(a, b)
        if out.dtype is not want:
            raise RuntimeError(f"Expected out type to be {scalar_type_name(want)} but got "
                               f"{scalar_type_name(out.dtype)}")


def _clamp_out(args: tuple, out: Any) -> None:
    """clamp's out rule: out has the input's dtype."""
    x = args[0]
    if isinstance(out, Tensor) and isinstance(x, Tensor) and out.dtype is not x.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(out.dtype)} but expected "
                           f"{scalar_type_name(x.dtype)}")


out_rule("where", check=_where_out)
out_rule("clamp", "clip", check=_clamp_out)


def _lerp_np(a: np.ndarray, b: np.ndarray, w: Any) -> np.ndarray:
    # torch's formula, exact at both ends: w < 1/2 ? a + w (b - a) : b - (b - a)(1 - w)
    a, b = _promote(a, b)
    if isinstance(w, np.ndarray):
        w = w.astype(np.result_type(a, b), copy=False)
    diff = b - a
    with np.errstate(invalid="ignore"):
        return np.asarray(np.where(np.abs(w) < 0.5, a + w * diff, b - diff * (1 - w)))


@defop("lerp", node="LerpBackward0", save=())
def _lerp(a: np.ndarray, b: np.ndarray, *, weight: Any) -> np.ndarray:
    return _lerp_np(a, b, weight)


@_lerp.backward
def lerp_backward(ctx: Any, grad: Tensor) -> tuple:  # (1 - w, w)
    w = ctx.params["weight"]
    need_a, need_b = ctx.needs_input_grad
    return (grad * (1 - w) if need_a else None), (grad * w if need_b else None)


@defop("lerp_tensor", node="LerpBackward1", save=(0, 1, 2))
def _lerp_tensor(a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
    return _lerp_np(a, b, w)


@_lerp_tensor.backward
def lerp_tensor_backward(ctx: Any, grad: Tensor) -> tuple:  # (1 - w, w, b - a)
    a, b, w = ctx.saved
    need_a, need_b, need_w = ctx.needs_input_grad
    return (grad * (1 - w) if need_a else None), (grad * w if need_b else None), (
        grad * (b - a) if need_w else None)


def lerp(input: Tensor, end: Tensor, weight: Any) -> Tensor:
    """``input + weight * (end - input)``; ``weight`` a number or a tensor."""
    if isinstance(end, Tensor) and isinstance(input, Tensor) and end.dtype != input.dtype:
        raise RuntimeError(f"expected dtype {_registry.cpp_type_name(input.dtype)} for `end` "
                           f"but got dtype {_registry.cpp_type_name(end.dtype)}")
    if isinstance(weight, Tensor):
        return _lerp_tensor(input, end, weight)
    return _lerp(input, end, weight=weight)


@defop("addcmul", node="AddcmulBackward0", save=(1, 2))
def _addcmul(a: Any, t1: Any, t2: Any, *, value: Any = 1) -> np.ndarray:
    if all(isinstance(t, np.ndarray) and t.dtype == np.float32 for t in (a, t1, t2)) and (
            isinstance(value, (int, float)) and not isinstance(value, bool)):
        try:  # torch's float32 kernel: a + (value * t1) * t2 with one fused rounding
            return _fma32(t1 * np.float32(value) if value != 1 else t1, t2, a)
        except ValueError:
            raise _broadcast_error(a, _binary(np.multiply, t1, t2)) from None
    prod = _binary(np.multiply, t1, t2) if value == 1 else _binary(
        np.multiply, _binary(np.multiply, t1, value), t2)
    return _binary(np.add, a, prod)


@_addcmul.backward
def addcmul_backward(ctx: Any, grad: Tensor) -> tuple:  # (1, value t2, value t1)
    t1, t2 = ctx.saved
    v = ctx.params.get("value", 1)
    need_a, need_1, need_2 = ctx.needs_input_grad
    # (torch's orders, grad * (t2 * v): float32 rounds the same)
    return (grad if need_a else None), (grad * (t2 * v) if need_1 else None), (
        grad * (t1 * v) if need_2 else None)


@defop("addcdiv", node="AddcdivBackward0", save=(1, 2))
def _addcdiv(a: Any, t1: Any, t2: Any, *, value: Any = 1) -> np.ndarray:
    for t in (t1, t2):
        if isinstance(t, np.ndarray) and t.dtype.kind in "iub":
            raise RuntimeError(
                "Integer division with addcdiv is no longer supported, and in a future release "
                "addcdiv will perform a true division of tensor1 and tensor2. The historic "
                "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
                "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
                "tensor2) for float inputs. The future addcdiv behavior is just the latter "
                "implementation: (input + value * tensor1 / tensor2), for all dtypes."
            )
    num = t1 if value == 1 else _binary(np.multiply, t1, value)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _binary(np.add, a, _binary(np.true_divide, num, t2))


@_addcdiv.backward
def addcdiv_backward(ctx: Any, grad: Tensor) -> tuple:  # (1, value / t2, -value t1 / t2^2)
    t1, t2 = ctx.saved
    v = ctx.params.get("value", 1)
    need_a, need_1, need_2 = ctx.needs_input_grad
    # (torch's orders: float32 rounds the same)
    v_t2 = Tensor._make(np.full_like(t2._data, v)) / t2 if need_1 else None  # a true division
    return (grad if need_a else None), (grad * v_t2 if need_1 else None), (
        -grad * (v * t1 / (t2 * t2)) if need_2 else None)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``."""
    if value == 1:
        return _addcmul(input, tensor1, tensor2)
    return _addcmul(input, tensor1, tensor2, value=value)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 / tensor2``."""
    if value == 1:
        return _addcdiv(input, tensor1, tensor2)
    return _addcdiv(input, tensor1, tensor2, value=value)


# ---------------------------------------------------------------------------------------------
# Comparisons and logical ops: no gradient, bool results
# ---------------------------------------------------------------------------------------------

def _data(x: Any) -> Any:
    return x._data if isinstance(x, Tensor) else x


def reject_complex(x: Any, message: str, exc: type = NotImplementedError) -> None:
    """torch's error for an op without complex kernels (``{}`` in the message: the dtype's
    c10 name, ComplexFloat or ComplexDouble)."""
    if isinstance(x, Tensor) and x._data.dtype.kind == "c":
        raise exc(message.replace("{}", scalar_type_name(x.dtype)))


def _comparison(name: str, ufunc: Callable) -> Any:
    """The entry of one comparison: both operands cast to their common dtype, then ``ufunc``
    (bool out). Ordering comparisons have no complex kernel."""

    @nondiff(name)
    def forward(a: Any, b: Any) -> np.ndarray:
        x, y = _promote(a, b)
        if (x.dtype.kind == "c" or type(y) is complex) and name[0] in "lg":  # a is a Tensor
            d = _dtype.from_numpy_dtype(np.result_type(x, y))
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{scalar_type_name(d)}'")
        try:
            return np.asarray(ufunc(x, y))
        except ValueError:
            raise _broadcast_error(x, y) from None

    return forward


_COMPARE = {
    "eq": _comparison("eq", np.equal), "ne": _comparison("ne", np.not_equal),
    "lt": _comparison("lt", np.less), "le": _comparison("le", np.less_equal),
    "gt": _comparison("gt", np.greater), "ge": _comparison("ge", np.greater_equal),
}


@nondiff("isclose")
def isclose_kernel(a: np.ndarray, b: Any, *, rtol: float, atol: float,
                   equal_nan: bool) -> np.ndarray:
    """|a - b| <= atol + rtol * |b|, elementwise (``torch.isclose``). Integers and bools are
    equal, or close in the default float dtype (as torch computes it: exactly equal when both
    tolerances are 0, never through float64, which cannot tell 2^63 - 1 from 2^63 - 2)."""
    if np.result_type(a, b).kind in "iub":
        close = np.asarray(np.equal(a, b))
        if rtol == 0 and atol == 0:
            return close
        f = _dtype.get_default_dtype().np
        fa, fb = np.asarray(a).astype(f), np.asarray(b).astype(f)
        with np.errstate(all="ignore"):
            err = np.abs(fa - fb)
            return close | (np.isfinite(err) & (err <= atol + np.abs(rtol * fb)))
    return np.asarray(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def compare(name: str, a: Any, b: Any) -> Any:
    if not isinstance(b, (Tensor, *_SCALARS, np.generic)):
        if name in ("eq", "ne") and b is None or not hasattr(b, "__len__"):
            return name == "ne" if name in ("eq", "ne") else NotImplemented
        b = Tensor._make(np.asarray(b))
    op = _COMPARE[name]
    if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
        return op(a, b)
    return Tensor._make(op.forward(_data(a), _data(b)))  # the same, without the detour


def _checked_comparison(name: str) -> Callable[[Any, Any], Tensor]:
    """``torch.<name>(input, other)`` for a comparison ``name``: ``input`` must be a tensor,
    ``other`` a tensor or a number."""

    def op(input: Any, other: Any) -> Tensor:
        if not isinstance(input, Tensor):
            raise invalid_arguments(name, input, other)
        return compare(name, input, other)

    op.__name__ = op.__qualname__ = name
    return op


eq, ne, lt, le, gt, ge = (_checked_comparison(name)
                          for name in ("eq", "ne", "lt", "le", "gt", "ge"))


greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


@nondiff("bitwise_not")
def _bitwise_not(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "f":
        raise TypeError('"bitwise_not_cpu" not implemented for \'Float\'')
    return np.asarray(np.invert(x))


def wrap_int_scalar(x: Any, y: Any) -> tuple[Any, Any]:
    """A Python int operand of an op on an integer array, cast to the array's dtype the way
    torch casts it (wrapping around: ``uint8 & -32`` masks with 224), where NumPy would refuse
    an out-of-range int."""
    if type(y) is int and isinstance(x, np.ndarray) and x.dtype.kind in "iu":
        y = np.array(y, dtype=np.int64).astype(x.dtype)
    elif type(x) is int and isinstance(y, np.ndarray) and y.dtype.kind in "iu":
        x = np.array(x, dtype=np.int64).astype(y.dtype)
    return x, y


def _bitwise(name: str, ufunc: Callable) -> Any:
    """The entry of one bitwise op on integers or bools (``&``, ``|``, ``^``)."""

    @nondiff(f"bitwise_{name}")
    def forward(a: np.ndarray, b: Any) -> np.ndarray:
        x, y = wrap_int_scalar(*_promote(a, b))
        if np.result_type(x, y).kind in "fc":
            d = _dtype.from_numpy_dtype(np.result_type(x, y))
            raise NotImplementedError(f'"bitwise_{name}_cpu" not implemented for '
                                      f"'{_registry.scalar_type_name(d)}'")
        try:
            return np.asarray(ufunc(x, y))
        except ValueError:
            raise _broadcast_error(x, y) from None

    return forward


_BITWISE = {"and": _bitwise("and", np.bitwise_and), "or": _bitwise("or", np.bitwise_or),
            "xor": _bitwise("xor", np.bitwise_xor)}


def bitwise(name: str, a: Tensor, b: Any = None) -> Tensor:
    if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
        return _bitwise_not(a) if name == "invert" else _BITWISE[name](a, b)
    if name == "invert":  # the same, without the detour
        return Tensor._make(_bitwise_not.forward(a._data))
    return Tensor._make(_BITWISE[name].forward(a._data, _data(b)))


def _unary_mask(name: str, ufunc: Callable) -> Callable:
    """The entry of a test on each element (``isnan``...) or ``logical_not`` (bool out), and
    the public function that runs it."""

    @nondiff(name)
    def op(x: Any) -> np.ndarray:
        return np.asarray(ufunc(x))

    def public(input: Tensor) -> Tensor:
        if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
            return op(input)
        return Tensor._make(op.forward(_data(input)))  # the same, without the detour

    public.__name__ = public.__qualname__ = name
    return public


def _logical(name: str, ufunc: Callable) -> Callable:
    """The entry of ``logical_and``/``or``/``xor`` (the truth values combined, bool out), and
    the public function that runs it."""

    @nondiff(name)
    def op(a: Any, b: Any) -> np.ndarray:
        return np.asarray(ufunc(a, b))

    def public(input: Tensor, other: Any) -> Tensor:
        require_tensors(name, input, other)
        if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
            return op(input, other)
        return Tensor._make(op.forward(_data(input), _data(other)))  # without the detour

    public.__name__ = public.__qualname__ = name
    return public


logical_and = _logical("logical_and", np.logical_and)
logical_or = _logical("logical_or", np.logical_or)
logical_xor = _logical("logical_xor", np.logical_xor)
logical_not = _unary_mask("logical_not", np.logical_not)
isnan = _unary_mask("isnan", np.isnan)
isinf = _unary_mask("isinf", np.isinf)
isfinite = _unary_mask("isfinite", np.isfinite)
signbit = _unary_mask("signbit", np.signbit)


# ---------------------------------------------------------------------------------------------
# In-place forms
# ---------------------------------------------------------------------------------------------

def inplace(name: str, target: Tensor, *others: Any, **params: Any) -> Tensor:
    return apply_(REGISTRY[name], target, *others, **params)


def add_(target: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return apply_(_add, target, _check(other, "add_"), alpha=alpha)


def sub_(target: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    return apply_(_sub, target, _check(other, "sub_"), alpha=alpha)


def mul_(target: Tensor, other: Any) -> Tensor:
    return apply_(_mul, target, _check(other, "mul_"))


def div_(target: Tensor, other: Any, *, rounding_mode: Any = None) -> Tensor:
    if rounding_mode is not None:
        return apply_(_div_mode, target, _check(other, "div_"), rounding_mode=rounding_mode)
    return apply_(_div, target, _check(other, "div_"))


def pow_(target: Tensor, exponent: Any) -> Tensor:
    if isinstance(exponent, Tensor):
        return apply_(_pow_tensor, target, exponent)
    return apply_(_pow, target, exponent=exponent)


def clamp_(target: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return target.copy_(clamp(target, min, max))
    return apply_(_clamp, target, min=min, max=max)


@defop("fill", node="FillBackward2")
def _fill(x: np.ndarray, *, value: Any) -> np.ndarray:
    return np.full_like(x, value)


@defop("zero", node="ZeroBackward0")
def _zero(x: np.ndarray) -> np.ndarray:
    return np.zeros_like(x)


@defop("fill_tensor", node="FillBackward3")
def _fill_tensor(x: np.ndarray, value: np.ndarray) -> np.ndarray:
    return np.full_like(x, value)


@_fill.backward
def fill_backward(ctx: Any, grad: Tensor) -> tuple:
    # the old values are gone: no gradient flows back
    return (_zero_grad(grad),)


@_zero.backward
def zero_backward(ctx: Any, grad: Tensor) -> tuple:
    # the old values are gone: no gradient flows back
    return (_zero_grad(grad),)


@_fill_tensor.backward
def fill_tensor_backward(ctx: Any, grad: Tensor) -> tuple:
    # every element was the value: it gets their sum
    need_x, need_v = ctx.needs_input_grad
    return (_zero_grad(grad) if need_x else None), (grad.sum() if need_v else None)


def fill_(target: Tensor, value: Any) -> Tensor:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        if value._requires_grad or value._fw_grad is not None:
            return apply_(_fill_tensor, target, value)
        value = value._data.astype(target._data.dtype)[()]  # a tensor converts as a cast does
    elif isinstance(value, (bool, int, float, complex)):
        value = _dtype.checked_scalar(value, target._data.dtype)  # (torch's overflow check)
    return apply_(_fill, target, value=value)


def zero_(target: Tensor) -> Tensor:
    return apply_(_zero, target)


@defop("copy", node="CopyBackwards")
def _copy(dst: np.ndarray, src: Any) -> np.ndarray:
    try:
        return np.broadcast_to(np.asarray(src), dst.shape).astype(dst.dtype)
    except ValueError:  # torch's two errors: shapes that do not broadcast, and a broadcast
        try:            # shape that is not the destination's
            shape = np.broadcast_shapes(dst.shape, np.shape(src))
        except ValueError:
            raise _broadcast_error(dst, src) from None
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}") from None


@_copy.backward
def copy_backward(ctx: Any, grad: Tensor) -> tuple:
    # the old values are overwritten; src gets the gradient
    need_dst, need_src = ctx.needs_input_grad
    return (grad * 0 if need_dst else None), grad


def _grad_copy(grad: Tensor) -> Tensor:
    """A gradient copied for a leaf's ``.grad`` by a create_graph backward, differentiably."""
    return _copy(Tensor._make(np.empty_like(grad._data)), grad)


register_grad_copy(_grad_copy)


def copy_(target: Tensor, src: Any) -> Tensor:
    """Copy ``src`` (broadcast, cast to the target's dtype) into ``target``."""
    if not isinstance(src, Tensor):
        src = Tensor._make(np.asarray(src))
    if target._data.dtype != src._data.dtype:
        # cast first (float -> int truncates, as torch's copy_ does); ToCopyBackward0 when src
        # requires grad, so its gradient comes back in its own dtype
        src = src.to(target.dtype)
    return apply_(_copy, target, src)


# ---------------------------------------------------------------------------------------------
# Forward-mode tangent rules of the commonest ops (autograd/forward_ad.py derives the others'
# from their backward rules)
# ---------------------------------------------------------------------------------------------

def _tangent_rules() -> None:
    _add.jvp(linear_tangent(_add, (0, 1)))  # d(a + alpha b) = da + alpha db
    _sub.jvp(linear_tangent(_sub, (0, 1)))
    _neg.jvp(linear_tangent(_neg))
    _mul.jvp(multilinear_tangent(_mul))  # d(a b) = da b + a db

    @_div.jvp
    def div_jvp(tangents: list, inputs: tuple, out: Tensor) -> Tensor:  # d(a/b) = (da - out db) / b
        (ta, tb), (_, b) = tangents, inputs
        num = ta if tb is None else (tb * -out if ta is None else ta - tb * out)
        return num / b

    @_exp.jvp
    def exp_jvp(tangents: list, inputs: tuple, out: Tensor) -> Tensor:  # d e^x = e^x dx
        return tangents[0] * out

    @_log.jvp
    def log_jvp(tangents: list, inputs: tuple, out: Tensor) -> Tensor:  # d log x = dx / x
        return tangents[0] / inputs[0]

    @_tanh.jvp
    def tanh_jvp(tangents: list, inputs: tuple, out: Tensor) -> Tensor:  # d tanh x = (1 - y^2) dx
        return tangents[0] * (1 - out * out)

    @_sigmoid.jvp
    def sigmoid_jvp(tangents: list, inputs: tuple, out: Tensor) -> Tensor:  # d s(x) = s (1 - s) dx
        return tangents[0] * (out * (1 - out))


_tangent_rules()
