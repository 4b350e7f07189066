"""More elementwise math: inverse hyperbolic functions, atan2, hypot, copysign, logaddexp,
fmax/fmin, float_power, ldexp/frexp, frac, deg2rad/rad2deg, nan_to_num, nextafter, heaviside,
gcd/lcm, the bitwise ops and shifts, and torch's aliases of them (arcsinh, arctan2, fix...).

The entries follow ``elementwise.py``'s pattern (NumPy forward and backward rule side by side;
binary forwards promote their operands to torch's result dtype with ``_promote``); float-valued
functions of integer inputs give the default float dtype, as in torch.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _dtype, return_types
from .._out import rule as out_rule
from .._tensor import Tensor
from ._registry import apply_, defop, write_into
from .complex import sgn_backward as complex_sgn_backward
from .elementwise import (
    _SCALARS,
    _broadcast_error,
    _float_result,
    _promote,
    _zero_grad,
    acos,
    asin,
    atan,
    exp,
    invalid_arguments,
    isfinite,
    pow,
    reciprocal,
    rsqrt,
    trunc,
    where,
    wrap_int_scalar,
)
from .special import _public

_LN2 = math.log(2.0)


def _float_binary(ufunc: Any, a: Any, b: Any) -> np.ndarray:
    """``ufunc(a, b)`` at torch's promoted dtype, integers and bools giving the default float."""
    a, b = _promote(a, b)
    a, b = _float_result(a), _float_result(b)
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        a = np.asarray(a)
    with np.errstate(all="ignore"):
        try:
            return np.asarray(ufunc(a, b))
        except ValueError:
            raise _broadcast_error(a, b) from None


def _tensor_args(name: str, input: Any, other: Any, scalar_other: bool = False,
                 other_name: str = "other") -> None:
    if not isinstance(input, Tensor):
        if scalar_other:  # two overloads (Tensor, Tensor) and (Tensor, Number): none matches
            raise invalid_arguments(name, input, other)
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(other, Tensor) or (scalar_other and isinstance(other, _SCALARS)):
        return
    raise TypeError(f"{name}(): argument '{other_name}' (position 2) must be Tensor, not "
                    f"{type(other).__name__}")


# ---------------------------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------------------------

def _unary(name: str, node: str, fn: Any, save: tuple = (0,), save_output: bool = False) -> Any:
    def forward(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return np.asarray(fn(_float_result(x)))

    forward.__name__ = name
    return defop(name, node=node, save=save, save_output=save_output)(forward)


_asinh = _unary("asinh", "AsinhBackward0", np.arcsinh)
_acosh = _unary("acosh", "AcoshBackward0", np.arccosh)
_atanh = _unary("atanh", "AtanhBackward0", np.arctanh)
_exp2 = _unary("exp2", "Exp2Backward0", np.exp2, save=(), save_output=True)
_deg2rad = _unary("deg2rad", "Deg2RadBackward0", np.deg2rad, save=())
_rad2deg = _unary("rad2deg", "Rad2DegBackward0", np.rad2deg, save=())


@_asinh.backward
def asinh_backward(ctx: Any, grad: Tensor) -> tuple:  # d asinh x = 1/sqrt(x^2 + 1)
    (x,) = ctx.saved
    return (grad * rsqrt(x * x + 1),)


@_acosh.backward
def acosh_backward(ctx: Any, grad: Tensor) -> tuple:  # d acosh x = 1/sqrt(x^2 - 1)
    (x,) = ctx.saved
    return (grad * rsqrt(x * x - 1),)


@_atanh.backward
def atanh_backward(ctx: Any, grad: Tensor) -> tuple:  # d atanh x = 1/(1 - x^2)
    (x,) = ctx.saved
    return (grad / (1 - x * x),)


@_exp2.backward
def exp2_backward(ctx: Any, grad: Tensor) -> tuple:  # d 2^x = 2^x ln 2
    (y,) = ctx.saved
    return (grad * y * _LN2,)


@_deg2rad.backward
def deg2rad_backward(ctx: Any, grad: Tensor) -> tuple:  # d (x pi/180) = pi/180
    return (grad * (math.pi / 180),)


@_rad2deg.backward
def rad2deg_backward(ctx: Any, grad: Tensor) -> tuple:  # d (x 180/pi) = 180/pi
    return (grad * (180 / math.pi),)


@defop("frac", node="FracBackward0")
def _frac(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "iub":
        raise RuntimeError(f'"frac_cpu" not implemented for '
                           f"'{_dtype.from_numpy_dtype(x.dtype).name.capitalize()}'")
    return x - np.trunc(x)


@_frac.backward
def frac_backward(ctx: Any, grad: Tensor) -> tuple:  # d (x - trunc x) = 1
    return (grad,)


@defop("sgn", node="SgnBackward0", save=(0,))
def _sgn(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.bool_:
        return x.copy()
    return np.sign(x)


@_sgn.backward
def sgn_backward(ctx: Any, grad: Tensor) -> tuple:
    # piecewise constant (real inputs); complex: z / |z|
    if grad._data.dtype.kind == "c":
        return (complex_sgn_backward(ctx.saved[0], grad),)
    return (_zero_grad(grad),)


_sgn.holomorphic = False


@defop("nan_to_num", node="NanToNumBackward0", save=(0,))
def _nan_to_num(x: np.ndarray, *, nan: Any = 0.0, posinf: Any = None,
                neginf: Any = None) -> np.ndarray:
    if x.dtype.kind in "iub":
        return x.copy()
    info = np.finfo(x.dtype)
    return np.nan_to_num(x, nan=0.0 if nan is None else nan,
                         posinf=info.max if posinf is None else posinf,
                         neginf=info.min if neginf is None else neginf)


@_nan_to_num.backward
def nan_to_num_backward(ctx: Any, grad: Tensor) -> tuple:
    # 1 where x is finite, 0 where it was replaced
    (x,) = ctx.saved
    return (where(isfinite(x), grad, 0.0),)


# ---------------------------------------------------------------------------------------------
# Binary
# ---------------------------------------------------------------------------------------------

@defop("atan2", node="Atan2Backward0", save=(0, 1))
def _atan2(a: Any, b: Any) -> np.ndarray:
    return _float_binary(np.arctan2, a, b)


@_atan2.backward
def atan2_backward(ctx: Any, grad: Tensor) -> tuple:  # (b, -a) / (a^2 + b^2), and 0 at (0, 0)
    a, b = ctx.saved
    d = a * a + b * b
    # torch's order (float32 rounds the same); at the origin 1/d is taken as 0, as torch's
    # rule does (its second derivative there stays NaN: 0 times the reciprocal's infinite slope)
    r = where(d == 0, 0.0, reciprocal(d))
    need_a, need_b = ctx.needs_input_grad
    return (grad * b * r if need_a else None), (grad * -a * r if need_b else None)


@defop("hypot", node="HypotBackward0", save=(0, 1), save_output=True)
def _hypot(a: Any, b: Any) -> np.ndarray:
    return _float_binary(np.hypot, a, b)


@_hypot.backward
def hypot_backward(ctx: Any, grad: Tensor) -> tuple:  # (a, b) / hypot(a, b)
    a, b, y = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (grad * a / y if need_a else None), (grad * b / y if need_b else None)


@defop("logaddexp", node="LogaddexpBackward0", save=(0, 1))
def _logaddexp(a: Any, b: Any) -> np.ndarray:
    return _float_binary(np.logaddexp, a, b)


@_logaddexp.backward
def logaddexp_backward(ctx: Any, grad: Tensor) -> tuple:  # (1/(1 + e^(b-a)), 1/(1 + e^(a-b)))
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (grad / (1 + exp(b - a)) if need_a else None), (
        grad / (1 + exp(a - b)) if need_b else None)


@defop("logaddexp2", node="Logaddexp2Backward0", save=(0, 1))
def _logaddexp2(a: Any, b: Any) -> np.ndarray:
    return _float_binary(np.logaddexp2, a, b)


@_logaddexp2.backward
def logaddexp2_backward(ctx: Any, grad: Tensor) -> tuple:  # (1/(1 + 2^(b-a)), 1/(1 + 2^(a-b)))
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (grad / (1 + pow(2.0, b - a)) if need_a else None), (
        grad / (1 + pow(2.0, a - b)) if need_b else None)


@defop("copysign", node="CopysignBackward0", save=(0,), save_output=True)
def _copysign(a: Any, b: Any) -> np.ndarray:
    return _float_binary(np.copysign, a, b)


@defop("copysign_scalar", node="CopysignBackward1", save=(0,), save_output=True)
def _copysign_scalar(a: Any, *, other: Any) -> np.ndarray:
    return _float_binary(np.copysign, a, other)


def copysign_backward(ctx: Any, grad: Tensor) -> tuple:  # y/x (+-1; 0 at x = 0); none for b
    x, y = ctx.saved
    # y / x masked to 0 where x = 0, as torch's rule (its second derivative there is NaN)
    ratio = where(x == 0, 0.0, y / x)
    if len(ctx.needs_input_grad) == 1:
        return (grad * ratio,)
    return (grad * ratio if ctx.needs_input_grad[0] else None), (
        _zero_grad(grad) if ctx.needs_input_grad[1] else None)


_copysign.backward(copysign_backward)
_copysign_scalar.backward(copysign_backward)


def _extremum_nan(name: str, node: str, ufunc: Any, wins: str) -> Any:
    def forward(a: Any, b: Any) -> np.ndarray:
        a, b = _promote(a, b)
        try:
            return np.asarray(ufunc(a, b))
        except ValueError:
            raise _broadcast_error(a, b) from None

    op = defop(name, node=node, save=(0, 1))(forward)

    @op.backward
    def extremum_nan_backward(ctx: Any, grad: Tensor) -> tuple:
        # to the input chosen (a on ties, b if a is NaN)
        a, b = ctx.saved
        a_wins = ((a >= b) if wins == "ge" else (a <= b)) | b.isnan()
        need_a, need_b = ctx.needs_input_grad
        return (where(a_wins, grad, 0.0) if need_a else None), (
            where(a_wins, 0.0, grad) if need_b else None)

    return op


_fmax = _extremum_nan("fmax", "FmaxBackward0", np.fmax, "ge")
_fmin = _extremum_nan("fmin", "FminBackward0", np.fmin, "le")


@defop("ldexp", node="LdexpBackward0", save=(0, 1), save_output=True)
def _ldexp(a: Any, b: Any) -> np.ndarray:
    a = _float_result(a) if isinstance(a, np.ndarray) else np.asarray(
        a, dtype=_dtype.get_default_dtype().np)
    with np.errstate(all="ignore"):
        return np.asarray(a * np.exp2(np.asarray(b, dtype=a.dtype)))


@_ldexp.backward
def ldexp_backward(ctx: Any, grad: Tensor) -> tuple:  # (2^e, x 2^e ln 2)
    x, e, y = ctx.saved
    need_x, need_e = ctx.needs_input_grad
    scale = pow(2.0, e)
    if not (e.dtype.is_floating_point or e.dtype.is_complex):
        scale = where(e < 0, 0.0, scale)  # torch takes 2^e in e's integer dtype: 0 for e < 0
    return (grad * scale if need_x else None), (grad * y * _LN2 if need_e else None)


@defop("frexp", node="FrexpBackward0", save=(0,), outputs=2)
def _frexp(x: np.ndarray) -> tuple:
    if x.dtype.kind not in "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(x)
    return m, e.astype(np.int32)


@_frexp.backward
def frexp_backward(ctx: Any, grads: list) -> tuple:
    # x = m 2^e: dm/dx = 2^-e (the exponent is constant)
    (x,) = ctx.saved
    gm = grads[0]
    if gm is None:
        return (None,)
    _, e = np.frexp(x._data)
    return (gm / Tensor._make(np.exp2(e).astype(x._data.dtype)),)


@defop("nextafter", node="NextafterBackward0", save=(0, 1))
def _nextafter(a: Any, b: Any) -> np.ndarray:
    a, b = _promote(a, b)
    try:
        return np.asarray(np.nextafter(a, b))
    except ValueError:
        raise _broadcast_error(a, b) from None


@defop("heaviside", node="NotImplemented")
def _heaviside(a: Any, b: Any) -> np.ndarray:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype != b.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    a, b = _promote(a, b)
    try:
        if np.result_type(a, b).kind in "iub":  # in the integer type (NumPy's heaviside goes
            return np.asarray(np.where(a == 0, b, a > 0)).astype(  # through float64)
                np.result_type(a, b), copy=False)
        return np.asarray(np.heaviside(a, b)).astype(np.result_type(a, b), copy=False)
    except ValueError:
        raise _broadcast_error(a, b) from None


@_nextafter.backward
def nextafter_backward(ctx: Any, grad: Tensor) -> tuple:
    # torch's convention: 1 for x (0 where x = y, which
    a, b = ctx.saved                        # is the value itself), 0 for the direction
    need_a, need_b = ctx.needs_input_grad
    return (where(a != b, grad, 0.0) if need_a else None), (
        _zero_grad(grad) if need_b else None)


_heaviside.node_cls._cpp_name = "torch::autograd::NotImplemented"


@_heaviside.backward
def heaviside_backward(ctx: Any, grad: Tensor) -> tuple:
    raise RuntimeError("derivative for aten::heaviside is not implemented")


# ---------------------------------------------------------------------------------------------
# Integer ops: gcd, lcm, bitwise and shifts (no gradients)
# ---------------------------------------------------------------------------------------------

def _integer_binary(name: str, ufunc: Any, a: Any, b: Any, bools: bool = False) -> Tensor:
    x = a._data if isinstance(a, Tensor) else a
    y = b._data if isinstance(b, Tensor) else b
    x, y = wrap_int_scalar(*_promote(x, y))
    kind = np.result_type(x, y).kind
    if kind in "fc" or (kind == "b" and not bools):
        dt = _dtype.from_numpy_dtype(np.result_type(x, y)).name.capitalize()
        dt = {"Float32": "Float", "Float64": "Double", "Bool": "Bool"}.get(dt, dt)
        kernel = {"bitwise_left_shift": "lshift", "bitwise_right_shift": "rshift"}.get(name, name)
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{dt}\'')
    try:
        return Tensor._make(np.asarray(ufunc(x, y)))
    except ValueError:
        raise _broadcast_error(x, y) from None


def _gcd(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """torch's gcd: Euclid's algorithm on |a| and |b| in the integer type, where |min| wraps to
    min itself (gcd(-2^63, 2^63-1) is -1 there; NumPy's gcd, unsigned inside, says 1). NumPy's
    gcd for every element, then the loop for those holding the type's minimum."""
    out = np.asarray(np.gcd(a, b))
    if out.dtype.kind != "i" or not out.size:
        return out
    low = np.iinfo(out.dtype).min
    wrapped = (np.asarray(a) == low) | (np.asarray(b) == low)
    if not wrapped.any():
        return out
    x, y = np.broadcast_arrays(np.asarray(a, out.dtype), np.asarray(b, out.dtype))
    with np.errstate(over="ignore"):
        x, y = np.abs(x[wrapped]), np.abs(y[wrapped])
        while (x != 0).any():  # (x, y) <- (y rem x, x), C's remainder (fmod on integers)
            live = x != 0
            x[live], y[live] = np.fmod(y[live], x[live]), x[live]
    out = np.array(out)
    out[wrapped] = y
    return out


def _lcm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """torch's lcm: |a / gcd * b| (0 where the gcd is 0), in C's int for the types narrower
    than it (C promotes them), else in the type itself; wrapped to the type at the end."""
    g = _gcd(a, b)
    wide = np.dtype(np.int32) if g.dtype.itemsize < 4 else g.dtype
    with np.errstate(all="ignore"):
        q = np.floor_divide(np.asarray(a, wide), np.where(g == 0, 1, g).astype(wide))  # exact
        out = np.abs(q * np.asarray(b, wide))
        return np.asarray(np.where(g == 0, 0, out)).astype(g.dtype)


def _shift(ufunc: Any, name: str) -> Any:
    def fn(x: Any, y: Any) -> Any:
        # torch: shifting by the width or more gives 0 (or -1 for a negative left operand
        # shifted right); NumPy's result there is undefined.
        with np.errstate(all="ignore"):
            bits = np.asarray(x).dtype.itemsize * 8
            y_arr = np.asarray(y)
            big = (y_arr >= bits) | (y_arr < 0)
            out = ufunc(x, np.where(big, 0, y_arr).astype(y_arr.dtype, copy=False))
            if np.any(big):
                fill = np.where(np.asarray(x) < 0, -1, 0) if ufunc is np.right_shift else 0
                out = np.where(big, fill, out).astype(np.asarray(out).dtype)
        return out

    fn.__name__ = name
    return fn


_lshift = _shift(np.left_shift, "lshift")
_rshift = _shift(np.right_shift, "rshift")


# ---------------------------------------------------------------------------------------------
# The public functions
# ---------------------------------------------------------------------------------------------

asinh = _public(_asinh, "asinh", documented=False)
acosh = _public(_acosh, "acosh", documented=False)
atanh = _public(_atanh, "atanh", documented=False)
exp2 = _public(_exp2, "exp2", documented=False)
deg2rad = _public(_deg2rad, "deg2rad", documented=False)
rad2deg = _public(_rad2deg, "rad2deg", documented=False)
frac = _public(_frac, "frac", documented=False)
sgn = _public(_sgn, "sgn", documented=False)
arcsinh, arccosh, arctanh = asinh, acosh, atanh
arccos, arcsin, arctan = acos, asin, atan  # torch's NumPy-style names of elementwise.py's ops


def nan_to_num(input: Tensor, nan: Any = None, posinf: Any = None, neginf: Any = None
               ) -> Tensor:
    """NaN -> ``nan`` (0 by default), +inf -> ``posinf`` (the dtype's largest), -inf ->
    ``neginf``."""
    return _nan_to_num(input, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf)


def _binary_public(op: Any, name: str) -> Any:
    def fn(input: Any, other: Any) -> Tensor:
        _tensor_args(name, input, other)
        return op(input, other)

    fn.__name__ = name
    return fn


atan2 = _binary_public(_atan2, "atan2")
arctan2 = atan2
hypot = _binary_public(_hypot, "hypot")
logaddexp = _binary_public(_logaddexp, "logaddexp")
logaddexp2 = _binary_public(_logaddexp2, "logaddexp2")
fmax = _binary_public(_fmax, "fmax")
fmin = _binary_public(_fmin, "fmin")
nextafter = _binary_public(_nextafter, "nextafter")


def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where input < 0, 1 where input > 0, ``values`` where input == 0."""
    _tensor_args("heaviside", input, values, other_name="values")
    return _heaviside(input, values)


def copysign(input: Any, other: Any) -> Tensor:
    """|input| with the sign of ``other`` (a tensor or a number)."""
    _tensor_args("copysign", input, other, scalar_other=True)
    if isinstance(other, Tensor):
        return _copysign(input, other)
    return _copysign_scalar(input, other=other)


def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """input * 2^other."""
    _tensor_args("ldexp", input, other)
    return _ldexp(input, other)


def frexp(input: Tensor) -> Any:
    """(mantissa, exponent) with input = mantissa * 2^exponent, |mantissa| in [0.5, 1)."""
    m, e = _frexp(input)
    return _Frexp(m, e)


_Frexp = return_types.frexp.of


def float_power(input: Any, exponent: Any) -> Tensor:
    """input ** exponent in float64 (complex128 for complex operands)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(exponent).__name__}), but expected "
                        "one of:")
    target = _dtype.float64
    for v in (input, exponent):
        if isinstance(v, Tensor) and v.dtype.is_complex or isinstance(v, complex):
            target = _dtype.complex128
    a = input.to(target) if isinstance(input, Tensor) else input
    b = exponent.to(target) if isinstance(exponent, Tensor) else exponent
    return pow(a, b)


def _float_power_out(args: tuple, out: Any) -> None:
    """float_power's out rule: out has the result's dtype, float64 (complex128)."""
    target = _dtype.float64
    for v in args[:2]:
        if isinstance(v, Tensor) and v.dtype.is_complex or isinstance(v, complex):
            target = _dtype.complex128
    if isinstance(out, Tensor) and out.dtype != target:
        raise RuntimeError(f"the output given to float_power has dtype {out.dtype} but the "
                           f"operation's result requires dtype {target}")


out_rule("float_power", check=_float_power_out)


def fix(input: Tensor) -> Tensor:
    """``torch.fix``: the alias of ``trunc``."""
    return trunc(input)


def positive(input: Tensor) -> Tensor:
    """``+input``: the tensor itself (bool tensors are refused, as torch does)."""
    if input.dtype == _dtype.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def gcd(input: Tensor, other: Tensor) -> Tensor:
    _tensor_args("gcd", input, other)
    return _integer_binary("gcd", _gcd, input, other)


def lcm(input: Tensor, other: Tensor) -> Tensor:
    _tensor_args("lcm", input, other)
    return _integer_binary("lcm", _lcm, input, other)


def _bitwise_public(name: str, ufunc: Any) -> Any:
    def fn(input: Any, other: Any) -> Tensor:
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({type(input).__name__}, {type(other).__name__}), but expected "
                            "one of:")
        return _integer_binary(name, ufunc, input, other, bools=True)

    fn.__name__ = name
    return fn


bitwise_and = _bitwise_public("bitwise_and", np.bitwise_and)
bitwise_or = _bitwise_public("bitwise_or", np.bitwise_or)
bitwise_xor = _bitwise_public("bitwise_xor", np.bitwise_xor)
bitwise_left_shift = _bitwise_public("bitwise_left_shift", _lshift)
bitwise_right_shift = _bitwise_public("bitwise_right_shift", _rshift)


def bitwise_not(input: Tensor) -> Tensor:
    x = input._data
    if x.dtype.kind in "fc":
        raise RuntimeError("\"bitwise_not_cpu\" not implemented for "
                           f"'{'Float' if x.dtype == np.float32 else 'Double'}'")
    return Tensor._make(np.invert(x))


def _inplace_binary(op: Any) -> Any:
    def method(self: Tensor, other: Any) -> Tensor:
        return apply_(op, self, other)

    return method


def _inplace_unary(op: Any) -> Any:
    def method(self: Tensor) -> Tensor:
        return apply_(op, self)

    return method


def _inplace_from(fn: Any) -> Any:
    """In-place form of a function without a registry entry of its own: compute, then copy."""
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        result = fn(self, *args, **kwargs)
        write_into(self, result._data)
        self._version_counter.value += 1
        return self

    return method


def isposinf(input: Tensor) -> Tensor:
    """True where the element is +inf."""
    return Tensor._make(np.asarray(np.isposinf(input._data)))


def isneginf(input: Tensor) -> Tensor:
    """True where the element is -inf."""
    return Tensor._make(np.asarray(np.isneginf(input._data)))


def isreal(input: Tensor) -> Tensor:
    """True where the element has no imaginary part (every element of a real tensor)."""
    x = input._data
    return Tensor._make(np.asarray(x.imag == 0) if x.dtype.kind == "c" else np.ones(
        x.shape, dtype=bool))


METHODS: dict[str, Any] = {
    "isposinf": isposinf, "isneginf": isneginf, "isreal": isreal,
    "asinh": asinh, "acosh": acosh, "atanh": atanh, "arcsinh": asinh, "arccosh": acosh,
    "arctanh": atanh, "exp2": exp2, "deg2rad": deg2rad, "rad2deg": rad2deg, "frac": frac,
    "sgn": sgn, "nan_to_num": nan_to_num, "atan2": atan2, "arctan2": atan2, "hypot": hypot,
    "logaddexp": logaddexp, "logaddexp2": logaddexp2, "fmax": fmax, "fmin": fmin,
    "nextafter": nextafter, "heaviside": heaviside, "copysign": copysign, "ldexp": ldexp,
    "frexp": frexp, "float_power": float_power, "fix": fix, "positive": positive, "gcd": gcd,
    "lcm": lcm, "bitwise_left_shift": bitwise_left_shift,
    "bitwise_right_shift": bitwise_right_shift,
    "asinh_": _inplace_unary(_asinh), "acosh_": _inplace_unary(_acosh),
    "atanh_": _inplace_unary(_atanh), "arcsinh_": _inplace_unary(_asinh),
    "arccosh_": _inplace_unary(_acosh), "arctanh_": _inplace_unary(_atanh),
    "exp2_": _inplace_unary(_exp2), "deg2rad_": _inplace_unary(_deg2rad),
    "rad2deg_": _inplace_unary(_rad2deg), "frac_": _inplace_unary(_frac),
    "sgn_": _inplace_unary(_sgn),
    "atan2_": _inplace_binary(_atan2), "arctan2_": _inplace_binary(_atan2),
    "hypot_": _inplace_binary(_hypot), "nextafter_": _inplace_binary(_nextafter),
    "heaviside_": _inplace_binary(_heaviside), "ldexp_": _inplace_binary(_ldexp),
    "copysign_": lambda self, other: (apply_(_copysign, self, other) if isinstance(
        other, Tensor) else apply_(_copysign_scalar, self, other=other)),
    "nan_to_num_": lambda self, nan=None, posinf=None, neginf=None: apply_(
        _nan_to_num, self, nan=0.0 if nan is None else nan, posinf=posinf, neginf=neginf),
    "fix_": _inplace_from(fix), "float_power_": _inplace_from(float_power),
    "gcd_": _inplace_from(gcd), "lcm_": _inplace_from(lcm),
    "bitwise_and_": _inplace_from(bitwise_and), "bitwise_or_": _inplace_from(bitwise_or),
    "bitwise_xor_": _inplace_from(bitwise_xor), "bitwise_not_": _inplace_from(bitwise_not),
    "bitwise_left_shift_": _inplace_from(bitwise_left_shift),
    "bitwise_right_shift_": _inplace_from(bitwise_right_shift),
    "__lshift__": bitwise_left_shift, "__rshift__": bitwise_right_shift,
    "__ilshift__": _inplace_from(bitwise_left_shift),
    "__irshift__": _inplace_from(bitwise_right_shift),
    "__rlshift__": lambda self, other: bitwise_left_shift(other, self),
    "__rrshift__": lambda self, other: bitwise_right_shift(other, self),
    "arccos": acos, "arcsin": asin, "arctan": atan,
}

__all__ = [
    "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2", "arctanh", "asinh",
    "atan2", "atanh", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "copysign", "deg2rad", "exp2", "fix", "float_power",
    "fmax", "fmin", "frac", "frexp", "gcd", "heaviside", "hypot", "isneginf", "isposinf",
    "isreal", "lcm", "ldexp", "logaddexp", "logaddexp2", "nan_to_num", "nextafter", "positive",
    "rad2deg", "sgn",
]
