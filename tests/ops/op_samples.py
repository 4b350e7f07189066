"""Sample inputs for every op tapegrad mirrors: an OpInfo-like table that drives tests/ops.

Each :class:`OpSample` is one call written in torch's API against a module ``L``::

    sample("mul", lambda L, a, b: a * b, T(3, 1), T(1, 4))

names the op family (``"mul"``), the expression, and one :class:`Arg` per tensor argument. An
``Arg`` knows its shape, how to draw its values (deterministically, from a generator seeded with
the sample's id) and whether it is differentiable (``requires_grad=True``). Integer index tensors
and boolean masks are never differentiable and keep their dtype; floating arguments are cast to the
dtype under test (float64 for gradients, float32 for the float32 forward check).

Argument makers (shape first, like ``torch.randn``):

=========  =====================================================================================
``T``      standard normal values
``P``      positive values in [0.5, 2) (log, sqrt, rsqrt, pow bases, divisors)
``U``      uniform values in [lo, hi) (tan, log1p)
``A``      distinct values away from the kinks 0, ±0.5, ±1 and with distinct magnitudes
           (abs, sign, relu, clamp, max/min without ties, inf-norm)
``Q``      values drawn from a small set, so that ties and zeros occur (comparisons, logical ops)
``C``      fixed float values
``I``      fixed int64 values (index tensors)
``R``      random int64 values in [lo, hi)
``M``      a boolean mask (random with both values present, or fixed)
=========  =====================================================================================

Flags: ``grad=False`` marks a sample whose outputs torch cannot differentiate (comparisons,
argmax, floor division...); ``gradgrad=False`` skips second-order checks; ``float32=False`` skips
the float32 forward check.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Shape = tuple[int, ...]
Generator = Callable[[np.random.Generator, Shape], np.ndarray]


# --------------------------------------------------------------------------------------------
# Arguments
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Arg:
    """One tensor argument of a sample."""

    shape: Shape
    gen: Generator
    diff: bool = True  # requires_grad=True (only meaningful for floating arguments)
    floating: bool = True  # cast to the float dtype under test; False keeps int64 / bool

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        arr = np.asarray(self.gen(rng, self.shape))
        assert arr.shape == self.shape, (arr.shape, self.shape)
        return arr.astype(np.float64) if self.floating else arr


def T(*shape: int, diff: bool = True) -> Arg:
    """Standard normal values."""
    return Arg(shape, lambda rng, s: rng.standard_normal(s), diff)


def U(*shape: int, lo: float, hi: float, diff: bool = True) -> Arg:
    """Uniform values in [lo, hi)."""
    return Arg(shape, lambda rng, s: rng.uniform(lo, hi, s), diff)


def P(*shape: int, diff: bool = True) -> Arg:
    """Positive values in [0.5, 2)."""
    return U(*shape, lo=0.5, hi=2.0, diff=diff)


_KINKS = np.array([0.0, 0.5, -0.5, 1.0, -1.0])
# A lattice with an odd offset, so that no two lattice points have the same magnitude.
_LATTICE = np.arange(-2.0, 2.0, 0.02) + 0.0037
_LATTICE = _LATTICE[np.abs(_LATTICE[:, None] - _KINKS[None, :]).min(axis=1) > 0.1]


def _away(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    return rng.choice(_LATTICE, size=n, replace=False).reshape(shape)


def A(*shape: int, diff: bool = True) -> Arg:
    """Distinct values, magnitudes distinct too, at least 0.1 away from 0, ±0.5 and ±1."""
    return Arg(shape, _away, diff)


def Q(*shape: int, values: Sequence[float] = (-1.0, 0.0, 1.0, 2.0), diff: bool = True) -> Arg:
    """Values drawn from a small set (ties and zeros happen)."""
    return Arg(shape, lambda rng, s: rng.choice(np.asarray(values, dtype=np.float64), s), diff)


def C(values: Any, diff: bool = True) -> Arg:
    """Fixed float values."""
    arr = np.asarray(values, dtype=np.float64)
    return Arg(arr.shape, lambda rng, s: arr.copy(), diff)


def I(values: Any) -> Arg:  # noqa: E743 - short name, like the other makers
    """A fixed int64 tensor (an index)."""
    arr = np.asarray(values, dtype=np.int64)
    return Arg(arr.shape, lambda rng, s: arr.copy(), diff=False, floating=False)


def R(*shape: int, lo: int = -5, hi: int = 6) -> Arg:
    """Random int64 values in [lo, hi)."""
    return Arg(shape, lambda rng, s: rng.integers(lo, hi, s, dtype=np.int64), False, False)


def _mask(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    flat = rng.random(n) < 0.5
    if n >= 2:  # both values present
        flat[0], flat[-1] = True, False
        rng.shuffle(flat)
    return flat.reshape(shape)


def M(*shape_or_values: Any) -> Arg:
    """A boolean mask: ``M(3, 4)`` random (both values present) or ``M([True, False])`` fixed."""
    if shape_or_values and not isinstance(shape_or_values[0], int):
        arr = np.asarray(shape_or_values[0], dtype=bool)
        return Arg(arr.shape, lambda rng, s: arr.copy(), diff=False, floating=False)
    return Arg(tuple(shape_or_values), _mask, diff=False, floating=False)


def _frac_safe(rng: np.random.Generator, shape: Shape) -> np.ndarray:
    # n + f with f in [0.1, 0.4): a/b stays away from integers for b in {±0.5, ±1, ±2}
    return rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.4, shape)


def F(*shape: int, diff: bool = True) -> Arg:
    """Numerators for floor division / remainder: quotients by ±0.5, ±1, ±2 avoid integers."""
    return Arg(shape, _frac_safe, diff)


def D(*shape: int, values: Sequence[float] = (0.5, -0.5, 1.0, -1.0, 2.0, -2.0), diff=True) -> Arg:
    """Divisors for floor division / remainder (see ``F``)."""
    return Q(*shape, values=values, diff=diff)


# --------------------------------------------------------------------------------------------
# Samples
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpSample:
    """One op call: ``fn(L, *tensors)`` with tensors built from ``args``."""

    op: str
    fn: Callable[..., Any]
    args: tuple[Arg, ...]
    id: str
    grad: bool = True
    gradgrad: bool = True
    float32: bool = True
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def seed(self) -> int:
        return zlib.crc32(self.id.encode())

    def arrays(self) -> list[np.ndarray]:
        """The argument values (float64 for floating args), the same on every call."""
        if "arrays" not in self._cache:
            rng = np.random.default_rng(self.seed)
            self._cache["arrays"] = [arg.draw(rng) for arg in self.args]
        return [a.copy() for a in self._cache["arrays"]]

    @property
    def differentiable(self) -> bool:
        return self.grad and any(a.diff and a.floating for a in self.args)

    def make_inputs(self, L: Any, dtype: str = "float64", requires_grad: bool = True) -> list:
        """Build ``L`` tensors for the arguments (floating ones in ``dtype``)."""
        out = []
        for arg, arr in zip(self.args, self.arrays(), strict=True):
            if arg.floating:
                t = L.tensor(arr.astype(dtype), requires_grad=requires_grad and arg.diff)
            else:
                t = L.tensor(arr)
            out.append(t)
        return out

    def diff_positions(self) -> list[int]:
        """Indices of the arguments that require grad."""
        return [i for i, a in enumerate(self.args) if a.diff and a.floating]

    def __repr__(self) -> str:
        return f"OpSample({self.id})"


SAMPLES: list[OpSample] = []
_COUNTS: dict[str, int] = {}


def _shape_tag(args: Sequence[Arg]) -> str:
    return ",".join("x".join(map(str, a.shape)) if a.shape else "0d" for a in args)


def sample(op: str, fn: Callable[..., Any], *args: Arg, **flags: Any) -> None:
    """Register one sample of ``op``; its id is ``op-<n>-<shapes>``."""
    n = _COUNTS.get(op, 0)
    _COUNTS[op] = n + 1
    SAMPLES.append(OpSample(op, fn, tuple(args), f"{op}-{n}-{_shape_tag(args)}", **flags))


NO_GRAD = {"grad": False, "gradgrad": False}
INT_ONLY = {"grad": False, "gradgrad": False, "float32": False}
INF = float("inf")

# --------------------------------------------------------------------------------------------
# Arithmetic: + - * / // % ** with tensors, Python scalars, reflected forms, 0-d tensors
# --------------------------------------------------------------------------------------------

sample("add", lambda L, a, b: a + b, T(3, 4), T(3, 4))
sample("add", lambda L, a, b: a + b, T(3, 4), T(4))
sample("add", lambda L, a, b: a + b, T(2, 1, 4), T(3, 1))
sample("add", lambda L, a, b: a + b, T(3, 4), T())
sample("add", lambda L, a, b: a + b, T(), T())
sample("add", lambda L, a: a + 2, T(3, 4))
sample("add", lambda L, a: 2.5 + a, T(3, 4))
sample("add", lambda L, a: a + a, T(4))
sample("add", lambda L, a, b: L.add(a, b, alpha=2), T(3, 4), T(4))
sample("add", lambda L, a, b: a.add(b), T(2, 3), T(2, 3, diff=False))
sample("add", lambda L, a, i: a + i, T(3, 4), R(3, 4))
sample("add", lambda L, i, j: i + j, R(3, 4), R(4), **INT_ONLY)
sample("add", lambda L, i: i + 2.5, R(3, 4), **INT_ONLY)

sample("sub", lambda L, a, b: a - b, T(3, 4), T(3, 4))
sample("sub", lambda L, a, b: a - b, T(3, 1), T(1, 4))
sample("sub", lambda L, a: a - 2, T(3, 4))
sample("sub", lambda L, a: 2 - a, T(3, 4))
sample("sub", lambda L, a: 2.5 - a, T())
sample("sub", lambda L, a, s: a - s, T(3, 4), T())
sample("sub", lambda L, s, a: s - a, T(), T(2, 3))
sample("sub", lambda L, a, b: L.sub(a, b, alpha=2), T(3, 4), T(4))
sample("sub", lambda L, a, b: a.sub(b), T(2, 3), T(3))
sample("sub", lambda L, i, j: i - j, R(3, 4), R(3, 4), **INT_ONLY)

sample("mul", lambda L, a, b: a * b, T(3, 4), T(3, 4))
sample("mul", lambda L, a, b: a * b, T(3, 1), T(1, 4))
sample("mul", lambda L, a, b: a * b, T(2, 3, 4), T(4))
sample("mul", lambda L, a: a * 2, T(3, 4))
sample("mul", lambda L, a: 2.5 * a, T(3, 4))
sample("mul", lambda L, a, s: a * s, T(3, 4), T())
sample("mul", lambda L, a: a * a, T(3, 4))
sample("mul", lambda L, a, b: L.mul(a, b), T(4), T(4))
sample("mul", lambda L, a, b: a.mul(b), T(3, 4), T(3, 4, diff=False))
sample("mul", lambda L, a, m: a * m, T(3, 4), M(3, 4))
sample("mul", lambda L, i: i * 2.5, R(3, 4), **INT_ONLY)
sample("mul", lambda L, i, j: i * j, R(3, 4), R(4), **INT_ONLY)

sample("div", lambda L, a, b: a / b, T(3, 4), A(3, 4))
sample("div", lambda L, a, b: a / b, T(3, 4), P(4))
sample("div", lambda L, a: a / 2, T(3, 4))
sample("div", lambda L, a: 2 / a, A(3, 4))
sample("div", lambda L, a: 1.5 / a, P())
sample("div", lambda L, a, s: a / s, T(3, 4), P())
sample("div", lambda L, a, b: L.div(a, b), T(3, 4), P(3, 1))
sample("div", lambda L, a, b: a.div(b), T(2, 3), P(2, 3, diff=False))
sample("div", lambda L, a: a.div(2.0, rounding_mode="floor"), F(3, 4), gradgrad=False)
sample("div", lambda L, a, b: L.div(a, b, rounding_mode="trunc"), F(3, 4), D(3, 4), gradgrad=False)
sample("div", lambda L, i, j: i / j, R(3, 4), R(3, 4, lo=1), **INT_ONLY)
sample("div", lambda L, i: i / 2, R(3, 4), **INT_ONLY)

# floor division: torch has no derivative (grad_fn is NotImplemented), so forward values only
sample("floor_divide", lambda L, a, b: a // b, F(3, 4), D(3, 4), **NO_GRAD)
sample("floor_divide", lambda L, a, b: a // b, F(3, 4, diff=False), D(4, diff=False), **NO_GRAD)
sample("floor_divide", lambda L, a: a // 2, F(3, 4, diff=False), **NO_GRAD)
sample("floor_divide", lambda L, a: a // -0.5, F(3, 4, diff=False), **NO_GRAD)
sample(
    "floor_divide",
    lambda L, a: 2 // a,
    D(3, 4, values=(0.7, -0.7, 1.3, -1.3, 3.0, -3.0), diff=False),
    **NO_GRAD,
)
sample(
    "floor_divide",
    lambda L, a, b: L.floor_divide(a, b),
    F(4, diff=False),
    D(4, diff=False),
    **NO_GRAD,
)
sample("floor_divide", lambda L, i, j: i // j, R(3, 4), I([3, -3, 2, -2]), **INT_ONLY)
sample("floor_divide", lambda L, i: i // 2, R(3, 4), **INT_ONLY)

sample("remainder", lambda L, a, b: a % b, F(3, 4), D(3, 4))
sample("remainder", lambda L, a: a % 2, F(3, 4))
sample("remainder", lambda L, a: a % -1.0, F(3, 4))
sample("remainder", lambda L, a, b: L.remainder(a, b), F(3, 4), D(4))
sample("remainder", lambda L, a, b: a.remainder(b), F(3, 4), D(3, 4, diff=False))
sample(
    "remainder",
    lambda L, a: 2 % a,
    D(3, 4, values=(0.7, -0.7, 1.3, -1.3, 3.0, -3.0), diff=False),
    **NO_GRAD,
)
sample("remainder", lambda L, i: i % 3, R(3, 4), **INT_ONLY)
sample("remainder", lambda L, i: i % -3, R(3, 4), **INT_ONLY)

sample("pow", lambda L, a: a**2, T(3, 4))
sample("pow", lambda L, a: a**3, T(3, 4))
sample("pow", lambda L, a: a**0.5, P(3, 4))
sample("pow", lambda L, a: a**-1.5, P(3, 4))
sample("pow", lambda L, a: a**0, T(3, 4))
sample("pow", lambda L, a: 2**a, T(3, 4))
sample("pow", lambda L, a: 2.5**a, T())
sample("pow", lambda L, a, b: a**b, P(3, 4), T(3, 4))
sample("pow", lambda L, a, b: a**b, P(3, 4), T(4))
sample("pow", lambda L, a, s: a**s, P(3, 4), T())
sample("pow", lambda L, s, b: s**b, P(), T(4))
sample("pow", lambda L, a: L.pow(a, 2), T(4))
sample("pow", lambda L, a, b: L.pow(a, b), P(2, 3), T(2, 3, diff=False))
sample("pow", lambda L, a: a.pow(3), T(2, 3))
sample("pow", lambda L, i: i**2, R(3, 4), **INT_ONLY)
sample("pow", lambda L, i: i**0.5, R(3, 4, lo=0), **INT_ONLY)

# --------------------------------------------------------------------------------------------
# Unary elementwise
# --------------------------------------------------------------------------------------------

sample("neg", lambda L, a: -a, T(3, 4))
sample("neg", lambda L, a: L.neg(a), T())
sample("neg", lambda L, a: a.neg(), T(2, 3, 4))
sample("neg", lambda L, i: -i, R(4), **INT_ONLY)

sample("abs", lambda L, a: a.abs(), A(3, 4))
sample("abs", lambda L, a: L.abs(a), A())
sample("abs", lambda L, a: abs(a), A(2, 3))
sample("abs", lambda L, i: i.abs(), R(5), **INT_ONLY)

sample("sign", lambda L, a: a.sign(), A(3, 4))
sample("sign", lambda L, a: L.sign(a), A())
sample("sign", lambda L, a: a.sign(), Q(6, diff=False), **NO_GRAD)

for _name, _method in [
    ("exp", "exp"),
    ("expm1", "expm1"),
    ("sin", "sin"),
    ("cos", "cos"),
    ("tanh", "tanh"),
    ("sigmoid", "sigmoid"),
]:
    sample(_name, lambda L, a, m=_method: getattr(a, m)(), T(3, 4))
    sample(_name, lambda L, a, m=_method: getattr(L, m)(a), T())
    sample(_name, lambda L, a, m=_method: getattr(L, m)(a), T(2, 3, 4))

for _name in ("log", "sqrt", "rsqrt"):
    sample(_name, lambda L, a, m=_name: getattr(a, m)(), P(3, 4))
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a), P())
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a), P(2, 3, 4))

sample("log1p", lambda L, a: a.log1p(), U(3, 4, lo=-0.5, hi=2.0))
sample("log1p", lambda L, a: L.log1p(a), U(lo=-0.5, hi=2.0))
sample("tan", lambda L, a: a.tan(), U(3, 4, lo=-1.2, hi=1.2))
sample("tan", lambda L, a: L.tan(a), U(lo=-1.2, hi=1.2))
sample("exp", lambda L, i: L.exp(i), R(4), **INT_ONLY)  # integer input -> float32 result
sample("sqrt", lambda L, i: i.sqrt(), R(4, lo=0), **INT_ONLY)

sample("relu", lambda L, a: a.relu(), A(3, 4))
sample("relu", lambda L, a: L.relu(a), A())
sample("relu", lambda L, a: L.relu(a), A(2, 3, 4))

sample("clamp", lambda L, a: L.clamp(a, -0.5, 0.5), A(3, 4))
sample("clamp", lambda L, a: a.clamp(min=0.0), A(3, 4))
sample("clamp", lambda L, a: a.clamp(max=0.5), A(3, 4))
sample("clamp", lambda L, a: a.clamp(-1, 1), A())
sample("clamp", lambda L, a: a.clip(-0.5, 0.5), A(3, 4))
sample("clamp", lambda L, a: L.clip(a, min=-0.5), A(3, 4))
_LO = U(3, 4, lo=-0.55, hi=-0.45)
_HI = U(3, 4, lo=0.45, hi=0.55)
sample("clamp", lambda L, a, lo, hi: L.clamp(a, lo, hi), A(3, 4), _LO, _HI)
sample("clamp", lambda L, a, lo: a.clamp(min=lo), A(3, 4), _LO)
sample("clamp", lambda L, a, hi: a.clamp(max=hi), A(3, 4), _HI)
sample(
    "clamp",
    lambda L, a, lo, hi: a.clip(lo, hi),
    A(3, 4),
    U(4, lo=-0.55, hi=-0.45),
    U(3, 1, lo=0.45, hi=0.55, diff=False),
)
sample("clamp", lambda L, i: i.clamp(-2, 2), R(3, 4), **INT_ONLY)
sample("clamp_min", lambda L, a: a.clamp_min(0.0), A(3, 4))
sample("clamp_min", lambda L, a, lo: L.clamp_min(a, lo), A(3, 4), _LO)
sample("clamp_max", lambda L, a: L.clamp_max(a, 0.5), A(3, 4))
sample("clamp_max", lambda L, a, hi: a.clamp_max(hi), A(3, 4), _HI)
sample("clamp", lambda L, i: i.clamp(min=0.5), R(3, 4), **INT_ONLY)

sample("maximum", lambda L, a, b: L.maximum(a, b), T(3, 4), T(3, 4))
sample("maximum", lambda L, a, b: L.maximum(a, b), T(3, 4), T(4))
sample("maximum", lambda L, a, b: L.max(a, b), T(3, 1), T(1, 4))
sample("maximum", lambda L, a, b: a.maximum(b), T(3, 4), T())
sample("maximum", lambda L, i, j: L.maximum(i, j), R(3, 4), R(3, 4), **INT_ONLY)
sample("minimum", lambda L, a, b: L.minimum(a, b), T(3, 4), T(3, 4))
sample("minimum", lambda L, a, b: L.minimum(a, b), T(2, 1, 4), T(3, 1))
sample("minimum", lambda L, a, b: L.min(a, b), T(4), T(4, diff=False))
sample("minimum", lambda L, a, b: a.minimum(b), T(), T())

sample("where", lambda L, c, a, b: L.where(c, a, b), M(3, 4), T(3, 4), T(3, 4))
sample("where", lambda L, c, a, b: L.where(c, a, b), M(3, 1), T(3, 4), T(4))
sample("where", lambda L, c, a: L.where(c, a, 0.0), M(3, 4), T(3, 4))
sample("where", lambda L, c, b: L.where(c, 1.5, b), M(4), T(3, 4))
sample("where", lambda L, c, a, b: a.where(c, b), M(3, 4), T(3, 4), T())
sample("where", lambda L, a, b: L.where(a > 0, a, b), A(3, 4), T(3, 4))
sample("where", lambda L, c, i, j: L.where(c, i, j), M(3, 4), R(3, 4), R(3, 4), **INT_ONLY)

# --------------------------------------------------------------------------------------------
# Comparisons and logical ops: no grad, bool results
# --------------------------------------------------------------------------------------------

_CMP = [
    ("eq", lambda a, b: a == b),
    ("ne", lambda a, b: a != b),
    ("lt", lambda a, b: a < b),
    ("le", lambda a, b: a <= b),
    ("gt", lambda a, b: a > b),
    ("ge", lambda a, b: a >= b),
]
for _name, _op in _CMP:
    sample(_name, lambda L, a, b, op=_op: op(a, b), Q(3, 4), Q(3, 4), **NO_GRAD)
    sample(_name, lambda L, a, b, op=_op: op(a, b), Q(3, 4), Q(4), **NO_GRAD)
    sample(_name, lambda L, a, op=_op: op(a, 1), Q(3, 4), **NO_GRAD)
    sample(_name, lambda L, a, op=_op: op(0.5, a), Q(3, 4), **NO_GRAD)  # reflected
    sample(_name, lambda L, a, b, op=_op: op(a, b), Q(3, 4), Q(), **NO_GRAD)
    sample(
        _name, lambda L, i, j, op=_op: op(i, j), R(3, 4, lo=-2, hi=2), R(4, lo=-2, hi=2), **INT_ONLY
    )
    sample(_name, lambda L, i, a, op=_op: op(i, a), R(3, 4, lo=-2, hi=2), Q(3, 4), **NO_GRAD)
    sample(_name, lambda L, a, b, n=_name: getattr(L, n)(a, b), Q(3, 4), Q(3, 4), **NO_GRAD)
    sample(_name, lambda L, a, b, n=_name: getattr(a, n)(b), Q(3, 4), Q(4), **NO_GRAD)

_QB = {"values": (-1.0, 0.0, 2.0)}
sample("logical_and", lambda L, m, n: L.logical_and(m, n), M(3, 4), M(3, 4), **INT_ONLY)
sample("logical_and", lambda L, m, n: m.logical_and(n), M(3, 4), M(4), **INT_ONLY)
sample(
    "logical_and", lambda L, a, b: L.logical_and(a, b), Q(3, 4, **_QB), Q(3, 4, **_QB), **NO_GRAD
)
sample("logical_or", lambda L, m, n: L.logical_or(m, n), M(3, 4), M(3, 4), **INT_ONLY)
sample("logical_or", lambda L, a, m: L.logical_or(a, m), Q(3, 4, **_QB), M(4), **NO_GRAD)
sample("logical_not", lambda L, m: L.logical_not(m), M(3, 4), **INT_ONLY)
sample("logical_not", lambda L, a: a.logical_not(), Q(3, 4, **_QB), **NO_GRAD)
sample("logical_not", lambda L, i: L.logical_not(i), R(5, lo=-1, hi=2), **INT_ONLY)
sample("logical_xor", lambda L, m, n: L.logical_xor(m, n), M(3, 4), M(3, 4), **INT_ONLY)
sample("invert", lambda L, m: ~m, M(3, 4), **INT_ONLY)
sample("invert", lambda L, a: ~(a > 0), Q(3, 4), **NO_GRAD)
sample("bitwise_and", lambda L, m, n: m & n, M(3, 4), M(3, 4), **INT_ONLY)
sample("bitwise_and", lambda L, m, n: m & n, M(3, 4), M(4), **INT_ONLY)
sample("bitwise_or", lambda L, m, n: m | n, M(3, 4), M(3, 4), **INT_ONLY)
sample("bitwise_xor", lambda L, m, n: m ^ n, M(3, 4), M(3, 1), **INT_ONLY)
sample("bitwise_and", lambda L, a, b: (a > 0) & (b < 1), Q(3, 4), Q(3, 4), **NO_GRAD)

# --------------------------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------------------------

sample("sum", lambda L, a: a.sum(), T(3, 4))
sample("sum", lambda L, a: a.sum(1), T(3, 4))
sample("sum", lambda L, a: a.sum(dim=1, keepdim=True), T(3, 4))
sample("sum", lambda L, a: a.sum(dim=(0, 2)), T(2, 3, 4))
sample("sum", lambda L, a: a.sum(-1), T(2, 3, 4))
sample("sum", lambda L, a: L.sum(a, (0, -1), keepdim=True), T(2, 3, 4))
sample("sum", lambda L, a: L.sum(a), T())
sample("sum", lambda L, i: i.sum(), R(3, 4), **INT_ONLY)
sample("sum", lambda L, i: i.sum(0), R(3, 4), **INT_ONLY)
sample("sum", lambda L, m: m.sum(), M(3, 4), **INT_ONLY)

sample("mean", lambda L, a: a.mean(), T(3, 4))
sample("mean", lambda L, a: a.mean(0), T(3, 4))
sample("mean", lambda L, a: a.mean(dim=-1, keepdim=True), T(3, 4))
sample("mean", lambda L, a: a.mean((0, 1), keepdim=True), T(2, 3, 4))
sample("mean", lambda L, a: L.mean(a, dim=(1, 2)), T(2, 3, 4))
sample("mean", lambda L, a: L.mean(a), T())

sample("prod", lambda L, a: a.prod(), A(3, 4))
sample("prod", lambda L, a: a.prod(1), A(3, 4))
sample("prod", lambda L, a: a.prod(dim=-1, keepdim=True), A(2, 3, 4))
sample("prod", lambda L, a: L.prod(a, 0), A(3, 4))
sample("prod", lambda L, a: a.prod(), A())
sample("prod", lambda L, i: i.prod(), R(4, lo=1, hi=4), **INT_ONLY)

sample("max", lambda L, a: a.max(), A(3, 4))
sample("max", lambda L, a: a.max(dim=1), A(3, 4))
sample("max", lambda L, a: a.max(1, keepdim=True), A(3, 4))
sample("max", lambda L, a: a.max(dim=-1).values, A(2, 3, 4))
sample("max", lambda L, a: a.max(dim=0, keepdim=True).indices, A(2, 3, 4), **NO_GRAD)
sample("max", lambda L, a: L.max(a, 0), A(3, 4))
sample("max", lambda L, a: a.max(), A())
sample("max", lambda L, i: i.max(), R(3, 4), **INT_ONLY)
sample("min", lambda L, a: a.min(), A(3, 4))
sample("min", lambda L, a: a.min(dim=0), A(3, 4))
sample("min", lambda L, a: L.min(a, dim=1, keepdim=True), A(2, 3, 4))
sample("min", lambda L, a: a.min(-1)[0], A(3, 4))
sample("min", lambda L, a: a.min(), A())

sample("amax", lambda L, a: a.amax(), A(3, 4))
sample("amax", lambda L, a: a.amax(1), A(3, 4))
sample("amax", lambda L, a: a.amax((0, 2), keepdim=True), A(2, 3, 4))
sample("amax", lambda L, a: L.amax(a, dim=-1), A(2, 3, 4))
sample("amin", lambda L, a: a.amin(), A(3, 4))
sample("amin", lambda L, a: a.amin(-1), A(3, 4))
sample("amin", lambda L, a: L.amin(a, dim=(0, 1), keepdim=True), A(2, 3, 4))

sample("argmax", lambda L, a: a.argmax(), A(3, 4), **NO_GRAD)
sample("argmax", lambda L, a: a.argmax(1), A(3, 4), **NO_GRAD)
sample("argmax", lambda L, a: a.argmax(dim=-1, keepdim=True), A(2, 3, 4), **NO_GRAD)
sample("argmax", lambda L, a: L.argmax(a, 0), A(3, 4), **NO_GRAD)
sample("argmin", lambda L, a: a.argmin(), A(3, 4), **NO_GRAD)
sample("argmin", lambda L, a: a.argmin(dim=0, keepdim=True), A(3, 4), **NO_GRAD)
sample("argmin", lambda L, a: L.argmin(a, -1), A(2, 3, 4), **NO_GRAD)

for _name in ("var", "std"):
    sample(_name, lambda L, a, m=_name: getattr(a, m)(), T(3, 5))
    sample(_name, lambda L, a, m=_name: getattr(a, m)(1), T(3, 5))
    sample(_name, lambda L, a, m=_name: getattr(a, m)(dim=(0, 1)), T(2, 3, 4))
    sample(_name, lambda L, a, m=_name: getattr(a, m)(1, unbiased=False), T(3, 5))
    sample(_name, lambda L, a, m=_name: getattr(a, m)(correction=0), T(3, 5))
    sample(_name, lambda L, a, m=_name: getattr(a, m)(dim=1, correction=2, keepdim=True), T(3, 5))
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a, dim=0), T(4, 3))
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a, -1, keepdim=True), T(2, 3, 4))

sample("norm", lambda L, a: a.norm(), T(3, 4))
sample("norm", lambda L, a: a.norm(p=1), A(3, 4))
sample("norm", lambda L, a: a.norm(p=INF), A(3, 4))
sample("norm", lambda L, a: a.norm(dim=1), T(3, 4))
sample("norm", lambda L, a: a.norm(p=1, dim=0), A(3, 4))
sample("norm", lambda L, a: a.norm(INF, dim=-1), A(3, 4))
sample("norm", lambda L, a: a.norm(2, dim=1, keepdim=True), T(2, 3, 4))
sample("norm", lambda L, a: L.norm(a), T(4))
sample("norm", lambda L, a: L.norm(a, dim=(0, 1)), T(3, 4))

sample("logsumexp", lambda L, a: a.logsumexp(1), T(3, 4))
sample("logsumexp", lambda L, a: L.logsumexp(a, dim=0, keepdim=True), T(3, 4))
sample("logsumexp", lambda L, a: a.logsumexp((0, 1)), T(2, 3, 4))
sample("logsumexp", lambda L, a: a.logsumexp(-1), T(4))

sample("cumsum", lambda L, a: a.cumsum(1), T(3, 4))
sample("cumsum", lambda L, a: a.cumsum(dim=0), T(3, 4))
sample("cumsum", lambda L, a: L.cumsum(a, -1), T(2, 3, 4))
sample("cumsum", lambda L, a: a.cumsum(0), T(5))
sample("cumsum", lambda L, a: a.cumsum(0), T())
sample("cumsum", lambda L, i: i.cumsum(0), R(5), **INT_ONLY)

for _name in ("softmax", "log_softmax"):
    sample(_name, lambda L, a, m=_name: getattr(a, m)(1), T(3, 4))
    sample(_name, lambda L, a, m=_name: getattr(a, m)(dim=-1), T(2, 3, 4))
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a, 0), T(3, 4))
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a, dim=1), T(2, 3, 4))
    sample(_name, lambda L, a, m=_name: getattr(a, m)(0), T(5))

# --------------------------------------------------------------------------------------------
# Linear algebra
# --------------------------------------------------------------------------------------------

sample("matmul", lambda L, a, b: a @ b, T(4), T(4))
sample("matmul", lambda L, a, b: a @ b, T(3), T(3, 4))
sample("matmul", lambda L, a, b: a @ b, T(3, 4), T(4))
sample("matmul", lambda L, a, b: a @ b, T(3, 4), T(4, 2))
sample("matmul", lambda L, a, b: a @ b, T(2, 3, 4), T(2, 4, 5))
sample("matmul", lambda L, a, b: a @ b, T(2, 3, 4), T(4, 5))
sample("matmul", lambda L, a, b: a @ b, T(2, 1, 3, 4), T(3, 4, 2))
sample("matmul", lambda L, a, b: a @ b, T(3, 4), T(2, 4, 5))
sample("matmul", lambda L, a, b: a @ b, T(4), T(2, 4, 3))
sample("matmul", lambda L, a, b: a @ b, T(2, 3, 4), T(4))
sample("matmul", lambda L, a, b: L.matmul(a, b), T(3, 4), T(4, 2, diff=False))
sample("matmul", lambda L, a, b: a.matmul(b), T(2, 3), T(3, 4))
sample("mm", lambda L, a, b: a.mm(b), T(3, 4), T(4, 2))
sample("mm", lambda L, a, b: L.mm(a, b), T(1, 4), T(4, 3))
sample("bmm", lambda L, a, b: a.bmm(b), T(2, 3, 4), T(2, 4, 5))
sample("bmm", lambda L, a, b: L.bmm(a, b), T(3, 2, 2), T(3, 2, 1))
sample("dot", lambda L, a, b: a.dot(b), T(4), T(4))
sample("dot", lambda L, a, b: L.dot(a, b), T(3), T(3, diff=False))
sample("outer", lambda L, a, b: L.outer(a, b), T(3), T(4))
sample("outer", lambda L, a, b: a.outer(b), T(2), T(5))

# Solves, the matrix exponential, QR and weight norm (ops/factorizations.py, ops/weight_norm.py)
sample("linalg_solve", lambda L, a, b: L.linalg.solve(a + 4 * L.eye(3, dtype=a.dtype), b),
       T(3, 3), T(3, 2))
sample("linalg_solve", lambda L, a, b: L.linalg.solve(a + 4 * L.eye(3, dtype=a.dtype), b),
       T(2, 3, 3), T(3))
sample("linalg_solve", lambda L, a, b: L.linalg.solve(a + 4 * L.eye(3, dtype=a.dtype), b,
                                                      left=False), T(3, 3), T(2, 3))
sample("linalg_matrix_exp", lambda L, a: L.linalg.matrix_exp(0.5 * a), T(3, 3))
sample("linalg_cholesky", lambda L, a: L.linalg.cholesky(a @ a.mT + L.eye(3, dtype=a.dtype)),
       T(3, 3))
sample("linalg_cholesky", lambda L, a: L.linalg.cholesky(a @ a.mT + L.eye(2, dtype=a.dtype),
                                                         upper=True), T(2, 2, 2))
sample("linalg_solve_triangular",
       lambda L, a, b: L.linalg.solve_triangular(a.triu() + 3 * L.eye(3, dtype=a.dtype), b,
                                                 upper=True), T(3, 3), T(3, 2))
sample("linalg_matrix_exp", lambda L, a: L.matrix_exp(0.5 * a), T(2, 2, 2))
sample("linalg_qr", lambda L, a: L.linalg.qr(a), T(4, 3))
sample("linalg_householder_product", lambda L, a, t: L.linalg.householder_product(a, t),
       T(4, 3), U(3, lo=0.2, hi=1.8))
sample("linalg_householder_product", lambda L, a, t: L.orgqr(a, t), T(2, 3, 3),
       U(2, 2, lo=0.2, hi=1.8))
sample("linalg_qr", lambda L, a: L.linalg.qr(a)[1], T(2, 3, 3))
sample("linalg_qr", lambda L, a: L.linalg.qr(a)[0], T(2, 4))
# Decompositions, determinants, inverses and solvers, the fused products (ops/decompositions.py,
# ops/solvers.py, ops/linalg_legacy.py, ops/linalg.py); singular vectors through gauge-invariant
# quantities (their signs differ between LAPACK builds)
sample("linalg_svd", lambda L, a: (lambda u, s, vh: (s, u @ vh))(*L.linalg.svd(
    a, full_matrices=False)), T(4, 3))
sample("linalg_svd", lambda L, a: L.linalg.svdvals(a), T(2, 2, 3))
sample("linalg_eigh", lambda L, a: (lambda w, v: (w, v @ (w.unsqueeze(-1) * v.mT)))(
    *L.linalg.eigh(a + a.mT)), T(3, 3))
sample("linalg_det", lambda L, a: L.linalg.det(a), T(2, 3, 3))
sample("linalg_slogdet", lambda L, a: L.linalg.slogdet(a)[1], T(3, 3))
sample("linalg_inv_ex", lambda L, a: L.linalg.inv(a + 3 * L.eye(3, dtype=a.dtype)), T(3, 3))
sample("linalg_pinv", lambda L, a: L.linalg.pinv(a), T(4, 3))
sample("linalg_lstsq", lambda L, a, b: L.linalg.lstsq(a, b).solution, T(4, 3), T(4, 2))
sample("linalg_lu", lambda L, a: L.linalg.lu(a)[1:], T(3, 3))
sample("linalg_lu_factor_ex", lambda L, a: L.linalg.lu_factor(a).LU, T(3, 3))
sample("linalg_lu_solve", lambda L, a, b: L.linalg.lu_solve(
    *L.linalg.lu_factor(a + 3 * L.eye(3, dtype=a.dtype)), b), T(3, 3), T(3, 2))
sample("lu_unpack", lambda L, a: L.lu_unpack(*L.linalg.lu_factor(a))[1:], T(3, 3))
sample("cholesky", lambda L, a: L.cholesky(a @ a.mT + L.eye(3, dtype=a.dtype)), T(3, 3))
sample("cholesky_inverse", lambda L, a: L.cholesky_inverse(a.tril() + 3 * L.eye(
    3, dtype=a.dtype)), T(3, 3))
sample("cholesky_solve", lambda L, b, a: L.cholesky_solve(b, a.tril() + 3 * L.eye(
    3, dtype=a.dtype)), T(3, 2), T(3, 3))
sample("triangular_solve", lambda L, b, a: L.triangular_solve(b, a.triu() + 3 * L.eye(
    3, dtype=a.dtype))[0], T(3, 2), T(3, 3))
sample("ormqr", lambda L, a, t, c: L.ormqr(a, t, c), T(3, 2), U(2, lo=0.2, hi=1.8), T(3, 2))
sample("linalg_cross", lambda L, a, b: L.linalg.cross(a, b), T(2, 3), T(2, 3))
sample("addmv", lambda L, c, a, v: L.addmv(c, a, v, beta=0.5, alpha=2), T(3), T(3, 4), T(4))
sample("addr", lambda L, c, a, b: c.addr(a, b), T(3, 2), T(3), T(2))
sample("baddbmm", lambda L, c, a, b: L.baddbmm(c, a, b), T(2, 3, 2), T(2, 3, 4), T(2, 4, 2))
sample("addbmm", lambda L, c, a, b: L.addbmm(c, a, b, alpha=0.5), T(3, 2), T(2, 3, 4),
       T(2, 4, 2))
# torch's double backward of the fused weight norm treats the norms as constants (not the true
# second derivative, so no gradgradcheck); tests/nn/test_parametrize.py compares it with torch
_WN = {"gradgrad": False}
sample("_weight_norm_interface", lambda L, v, g: L._weight_norm(v, g, 0), T(3, 4), P(3, 1),
       **_WN)
sample("_weight_norm_interface", lambda L, v, g: L._weight_norm(v, g, 2), T(2, 3, 4),
       P(1, 1, 4), **_WN)
sample("_weight_norm_interface", lambda L, v, g: L._weight_norm(v, g, 1), T(2, 3, 4),
       P(1, 3, 1))

# --------------------------------------------------------------------------------------------
# Shape and view ops
# --------------------------------------------------------------------------------------------

sample("view", lambda L, a: a.view(4, 3), T(3, 4))
sample("view", lambda L, a: a.view(-1), T(3, 4))
sample("view", lambda L, a: a.view(2, -1, 2), T(3, 4))
sample("view", lambda L, a: a.view((6, 2)), T(3, 4))
sample("view", lambda L, a: a.view(1, 1), T())
sample("view", lambda L, a: a.view(()), T(1))

sample("reshape", lambda L, a: a.reshape(4, 3), T(3, 4))
sample("reshape", lambda L, a: a.reshape(-1), T(2, 3, 4))
sample("reshape", lambda L, a: a.reshape((2, -1)), T(3, 4))
sample("reshape", lambda L, a: L.reshape(a, (6, 2)), T(3, 4))
sample("reshape", lambda L, a: a.t().reshape(-1), T(3, 4))  # non-contiguous input
sample("reshape", lambda L, a: a.transpose(0, 1).reshape(2, 6), T(3, 4))
sample("reshape", lambda L, a: a[:, ::2].reshape(3, 2, 1), T(3, 4))
sample("reshape", lambda L, a: a.reshape(1), T())

sample("flatten", lambda L, a: a.flatten(), T(2, 3, 4))
sample("flatten", lambda L, a: a.flatten(1), T(2, 3, 4))
sample("flatten", lambda L, a: a.flatten(0, 1), T(2, 3, 4))
sample("flatten", lambda L, a: L.flatten(a, start_dim=1, end_dim=-1), T(2, 3, 4, 1))
sample("flatten", lambda L, a: a.flatten(), T())
sample("flatten", lambda L, a: a.transpose(0, 1).flatten(), T(3, 4))

sample("squeeze", lambda L, a: a.squeeze(), T(3, 1, 4, 1))
sample("squeeze", lambda L, a: a.squeeze(1), T(3, 1, 4, 1))
sample("squeeze", lambda L, a: a.squeeze(-1), T(3, 1, 4, 1))
sample("squeeze", lambda L, a: a.squeeze((1, 3)), T(3, 1, 4, 1))
sample("squeeze", lambda L, a: a.squeeze(0), T(3, 4))  # not size 1: no-op, still a node
sample("squeeze", lambda L, a: L.squeeze(a, 0), T(1, 4))
sample("squeeze", lambda L, a: a.squeeze(), T(1, 1))

sample("unsqueeze", lambda L, a: a.unsqueeze(0), T(3, 4))
sample("unsqueeze", lambda L, a: a.unsqueeze(-1), T(3, 4))
sample("unsqueeze", lambda L, a: a.unsqueeze(1), T(3, 4))
sample("unsqueeze", lambda L, a: L.unsqueeze(a, -2), T(2, 3, 4))
sample("unsqueeze", lambda L, a: a.unsqueeze(0), T())

sample("permute", lambda L, a: a.permute(2, 0, 1), T(2, 3, 4))
sample("permute", lambda L, a: a.permute(-1, 0, 1), T(2, 3, 4))
sample("permute", lambda L, a: a.permute((1, 0)), T(3, 4))
sample("permute", lambda L, a: L.permute(a, (1, 2, 0)), T(2, 3, 4))

sample("transpose", lambda L, a: a.transpose(0, 1), T(3, 4))
sample("roll", lambda L, a: L.roll(a, 1, 0), T(3, 4))
sample("roll", lambda L, a: a.roll((1, -2), (1, 0)), T(3, 4))
sample("roll", lambda L, a: L.roll(a, 5), T(3, 4))
sample("transpose", lambda L, a: a.transpose(-1, -3), T(2, 3, 4))
sample("transpose", lambda L, a: L.transpose(a, 1, 2), T(2, 3, 4))
sample("transpose", lambda L, a: a.transpose(0, 0), T(3, 4))

sample("t", lambda L, a: a.t(), T(3, 4))
sample("t", lambda L, a: a.t(), T(4))
sample("t", lambda L, a: L.t(a), T(2, 3))
sample("T", lambda L, a: a.T, T(3, 4))
sample("mT", lambda L, a: a.mT, T(2, 3, 4))
sample("mT", lambda L, a: a.mT, T(3, 4))

sample("expand", lambda L, a: a.expand(3, 4), T(1, 4))
sample("expand", lambda L, a: a.expand(3, 4), T(3, 1))
sample("expand", lambda L, a: a.expand(2, -1, -1), T(3, 4))
sample("expand", lambda L, a: a.expand((2, 3, 4)), T(4))
sample("expand", lambda L, a: a.expand(2, 3), T())
sample("expand", lambda L, a, b: a.expand_as(b), T(3, 1), T(2, 3, 4, diff=False))

sample("repeat", lambda L, a: a.repeat(2, 3), T(3, 4))
sample("repeat", lambda L, a: a.repeat(2, 1, 1), T(3, 4))
sample("repeat", lambda L, a: a.repeat(3), T(4))
sample("repeat", lambda L, a: a.repeat((1, 2)), T(3, 4))

sample("flip", lambda L, a: a.flip(0), T(3, 4))
sample("flip", lambda L, a: a.flip((0, 1)), T(3, 4))
sample("flip", lambda L, a: L.flip(a, [-1]), T(2, 3, 4))
sample("flip", lambda L, a: a.flip(0, 2), T(2, 3, 4))

sample("tril", lambda L, a: a.tril(), T(4, 4))
sample("tril", lambda L, a: a.tril(1), T(3, 5))
sample("tril", lambda L, a: L.tril(a, -1), T(2, 3, 3))
sample("triu", lambda L, a: a.triu(), T(4, 4))
sample("triu", lambda L, a: a.triu(diagonal=1), T(3, 5))
sample("triu", lambda L, a: L.triu(a, -1), T(2, 3, 3))

# --------------------------------------------------------------------------------------------
# Joining and splitting (multi-output ops: some outputs used, others dropped)
# --------------------------------------------------------------------------------------------

sample("cat", lambda L, a, b: L.cat([a, b]), T(3, 4), T(3, 4))
sample("cat", lambda L, a, b: L.cat([a, b], dim=1), T(3, 4), T(3, 2))
sample("cat", lambda L, a, b, c: L.cat((a, b, c), -1), T(2, 1), T(2, 3, diff=False), T(2, 2))
sample("cat", lambda L, a, b: L.cat([a, b], 0), T(2, 4), T(3, 4))
sample("cat", lambda L, a: L.cat([a], 0), T(3, 4))

sample("stack", lambda L, a, b: L.stack([a, b]), T(3, 4), T(3, 4))
sample("stack", lambda L, a, b: L.stack([a, b], dim=1), T(3, 4), T(3, 4, diff=False))
sample("stack", lambda L, a, b, c: L.stack((a, b, c), -1), T(2, 3), T(2, 3), T(2, 3))
sample("stack", lambda L, a, b: L.stack([a, b]), T(), T())

sample("split", lambda L, a: a.split(2, dim=1), T(3, 5))
sample("split", lambda L, a: a.split(2, 1)[0], T(3, 5))
sample("split", lambda L, a: a.split([1, 3], dim=1), T(3, 4))
sample("split", lambda L, a: L.split(a, [2, 1])[1], T(3, 4))
sample("split", lambda L, a: a.split(1)[::2], T(3, 4))
sample("chunk", lambda L, a: a.chunk(3, dim=1), T(3, 5))
sample("chunk", lambda L, a: a.chunk(2)[1], T(4, 3))
sample("chunk", lambda L, a: L.chunk(a, 2, -1)[0], T(2, 3, 4))
sample("unbind", lambda L, a: a.unbind(), T(3, 4))
sample("unbind", lambda L, a: a.unbind(1)[0::2], T(3, 4))
sample("unbind", lambda L, a: L.unbind(a, -1)[1], T(2, 3, 4))

# --------------------------------------------------------------------------------------------
# Indexing
# --------------------------------------------------------------------------------------------

sample("getitem", lambda L, a: a[1], T(3, 4))
sample("getitem", lambda L, a: a[-1], T(3, 4))
sample("getitem", lambda L, a: a[1, 2], T(3, 4))
sample("getitem", lambda L, a: a[-1, -2], T(2, 3, 4))
sample("getitem", lambda L, a: a[1:3], T(4, 3))
sample("getitem", lambda L, a: a[::2], T(5, 3))
sample("getitem", lambda L, a: a[1::2, ::3], T(5, 7))
sample("getitem", lambda L, a: a[:, 1:-1], T(3, 4))
sample("getitem", lambda L, a: a[-2:], T(3, 4))
sample("getitem", lambda L, a: a[3:], T(3, 4))  # empty
sample("getitem", lambda L, a: a[None], T(3, 4))
sample("getitem", lambda L, a: a[:, None], T(3, 4))
sample("getitem", lambda L, a: a[..., 1], T(2, 3, 4))
sample("getitem", lambda L, a: a[..., None], T(3, 4))
sample("getitem", lambda L, a: a[None, ..., 1:], T(2, 3, 4))
sample("getitem", lambda L, a: a[0, ..., 1], T(2, 3, 4))
sample("getitem", lambda L, a: a[[0, 2, 0]], T(3, 4))
sample("getitem", lambda L, a: a[[0, 2, 0], 1:], T(3, 4))
sample("getitem", lambda L, a: a[:, [1, 1, 0]], T(3, 4))
sample("getitem", lambda L, a: a[[-1, 0]], T(3, 4))
sample("getitem", lambda L, a, i: a[i], T(3, 4), I([2, 0, 2, 2]))
sample("getitem", lambda L, a, i: a[i], T(3, 4), I([[0, 1], [1, 1]]))
sample("getitem", lambda L, a, i, j: a[i, j], T(3, 4), I([[0], [2]]), I([1, 3, 1]))
sample("getitem", lambda L, a: a[0, [1, 2]], T(3, 4))
sample("getitem", lambda L, a: a[..., [0, 0]], T(2, 3, 4))
sample("getitem", lambda L, a: a[1:, [0, 0, 2]], T(3, 4))
sample("getitem", lambda L, a, i: a[i], T(3, 4), I(1))  # 0-d integer tensor
sample("getitem", lambda L, a, i: a[:, i, :], T(2, 3, 4), I([2, 0]))
sample("getitem", lambda L, a, i, j: a[i, :, j], T(2, 3, 4), I([1, 0]), I([3, 3]))
sample("getitem", lambda L, a, i: a[::2, i], T(3, 4), I([3, 1]))
sample("getitem", lambda L, a, m: a[m], T(3, 4), M(3, 4))
sample("getitem", lambda L, a, m: a[m], T(3, 4), M([True, False, True]))
sample("getitem", lambda L, a, m: a[:, m], T(3, 4), M([False, True, True, False]))
sample("getitem", lambda L, a, m: a[m], T(2, 3, 4), M(2, 3))
sample("getitem", lambda L, a: a[a > 0], T(3, 4))
sample("getitem", lambda L, a: a[[True, False, True]], T(3, 4))
sample("getitem", lambda L, a: a[None, 1:, [0, 0]], T(3, 4))
sample("getitem", lambda L, a, i: a[i, None, ..., 1:], T(2, 3, 4), I([1, 1, 0]))
sample("getitem", lambda L, i: i[[0, 2]], R(3, 4), **INT_ONLY)

sample("gather", lambda L, a, i: a.gather(1, i), T(3, 4), I([[0, 0], [1, 3], [3, 3]]))
sample("gather", lambda L, a, i: L.gather(a, 0, i), T(3, 4), I([[0, 1, 2, 0], [2, 2, 2, 2]]))
sample("gather", lambda L, a, i: a.gather(-1, i), T(2, 3, 4), I(np.ones((2, 3, 2), int) * 3))
sample("gather", lambda L, a, i: a.gather(dim=1, index=i), T(3, 4), I([[1], [0], [2]]))

sample(
    "scatter", lambda L, a, i, s: a.scatter(1, i, s), T(3, 4), I([[0, 2], [1, 3], [3, 0]]), T(3, 2)
)
sample("scatter", lambda L, a, i, s: a.scatter(0, i, s), T(3, 4), I([[2, 0, 1, 0]]), T(1, 4))
sample("scatter", lambda L, a, i: a.scatter(1, i, 2.0), T(3, 4), I([[0], [1], [3]]))
sample(
    "scatter",
    lambda L, a, i, s: L.scatter(a, -1, i, s),
    T(2, 3),
    I([[1, 0], [2, 1]]),
    T(2, 2, diff=False),
)
sample(
    "scatter_add",
    lambda L, a, i, s: a.scatter_add(1, i, s),
    T(3, 4),
    I([[0, 0], [1, 1], [3, 3]]),
    T(3, 2),
)
sample(
    "scatter_add",
    lambda L, a, i, s: L.scatter_add(a, 0, i, s),
    T(3, 4),
    I([[2, 0, 2, 0], [2, 2, 1, 0]]),
    T(2, 4),
)
sample(
    "scatter_add",
    lambda L, a, i, s: a.scatter_add(-1, i, s),
    T(3),
    I([0, 0, 2, 0]),
    T(4, diff=False),
)

sample("index_select", lambda L, a, i: a.index_select(0, i), T(3, 4), I([0, 2, 0]))
sample("index_select", lambda L, a, i: L.index_select(a, 1, i), T(3, 4), I([3, 3, 1]))
sample("index_select", lambda L, a, i: a.index_select(-1, i), T(2, 3, 4), I([1]))
sample("index_select", lambda L, a, i: a.index_select(0, i), T(3, 4), I(1))

sample("masked_fill", lambda L, a, m: a.masked_fill(m, 0.0), T(3, 4), M(3, 4))
sample("masked_fill", lambda L, a, m: a.masked_fill(m, -1.5), T(3, 4), M(4))
sample("masked_fill", lambda L, a, m, v: a.masked_fill(m, v), T(3, 4), M(3, 4), T())
sample("masked_fill", lambda L, a, m: L.masked_fill(a, m, 2), T(2, 3, 4), M(3, 1))
sample("masked_fill", lambda L, a: a.masked_fill(a > 0, 0.0), A(3, 4))

# --------------------------------------------------------------------------------------------
# More elementwise functions, rounding, cumulative product, fused addmm, copies and aliases
# --------------------------------------------------------------------------------------------

for _name in ("asin", "acos", "atan"):
    sample(_name, lambda L, a, m=_name: getattr(a, m)(), U(3, 4, lo=-0.9, hi=0.9))
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a), U(lo=-0.9, hi=0.9))
for _name in ("sinh", "cosh"):
    sample(_name, lambda L, a, m=_name: getattr(a, m)(), T(3, 4))
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a), T())
for _name in ("log2", "log10", "reciprocal"):
    sample(_name, lambda L, a, m=_name: getattr(a, m)(), P(3, 4))
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a), P())
sample("reciprocal", lambda L, a: a.reciprocal(), A(2, 3))

# piecewise constant: zero gradients (inputs kept away from the jumps)
for _name in ("floor", "ceil", "round", "trunc"):
    sample(_name, lambda L, a, m=_name: getattr(a, m)(), F(3, 4))
    sample(_name, lambda L, a, m=_name: getattr(L, m)(a), F())
    sample(_name, lambda L, i, m=_name: getattr(i, m)(), R(4), **INT_ONLY)

sample("cumprod", lambda L, a: a.cumprod(1), A(3, 4))
sample("cumprod", lambda L, a: L.cumprod(a, dim=0), A(3, 4))
sample("cumprod", lambda L, a: a.cumprod(-1), A(2, 3, 4))

sample("cumprod", lambda L, a: a.cumprod(1), Q(3, 4))  # zeros: the gradient without division
sample("nansum", lambda L, a: L.nansum(a), T(3, 4))
sample("nansum", lambda L, a: a.nansum(1, keepdim=True), T(3, 4))
sample("var_mean", lambda L, a: L.var_mean(a, 1), T(3, 4))
sample("var_mean", lambda L, a: L.var_mean(a, dim=(0, 1), correction=0), T(3, 4))
sample("std_mean", lambda L, a: L.std_mean(a, 0, keepdim=True), T(3, 4))
sample("std_mean", lambda L, a: L.std_mean(a), T(3, 4))

# special functions (ops/special.py)
sample("erfc", lambda L, a: L.erfc(a), T(3, 4))
sample("erfinv", lambda L, a: L.erfinv(a), U(3, 4, lo=-0.9, hi=0.9))
sample("erfinv", lambda L, a: a.erfinv(), U(5, lo=-0.9, hi=0.9))
sample("erfcx", lambda L, a: L.special.erfcx(a), T(3, 4))
sample("ndtr", lambda L, a: L.special.ndtr(a), T(3, 4))
sample("ndtri", lambda L, a: L.special.ndtri(a), U(3, 4, lo=0.05, hi=0.95))
sample("log_ndtr", lambda L, a: L.special.log_ndtr(a), T(3, 4))
sample("lgamma", lambda L, a: L.lgamma(a), P(3, 4))
sample("lgamma", lambda L, a: a.lgamma(), A(5))
sample("digamma", lambda L, a: L.digamma(a), P(3, 4))
sample("polygamma", lambda L, a: L.polygamma(2, a), P(3, 4))
sample("polygamma", lambda L, a: a.polygamma(1), P(4))
sample("mvlgamma", lambda L, a: L.mvlgamma(a, 3), U(3, 4, lo=1.5, hi=3.0))
sample("i0", lambda L, a: L.i0(a), T(3, 4))
sample("i0e", lambda L, a: L.special.i0e(a), T(3, 4))
sample("i1", lambda L, a: L.special.i1(a), T(3, 4))
sample("i1e", lambda L, a: L.special.i1e(a), T(3, 4))
sample("sinc", lambda L, a: L.sinc(a), T(3, 4))
sample("entr", lambda L, a: L.special.entr(a), P(3, 4))
sample("logit", lambda L, a: L.logit(a), U(3, 4, lo=0.05, hi=0.95))
sample("logit", lambda L, a: a.logit(eps=0.2), U(3, 4, lo=0.05, hi=0.95))
sample("xlogy", lambda L, a, b: L.xlogy(a, b), T(3, 4), P(3, 4))
sample("xlogy", lambda L, a, b: a.xlogy(b), Q(3, 4), P(4))
sample("xlog1py", lambda L, a, b: L.special.xlog1py(a, b), T(3, 4), P(3, 4))
sample("zeta", lambda L, a, b: L.special.zeta(a, b), U(3, 4, lo=2, hi=4, diff=False), P(3, 4))
sample("gammainc", lambda L, a, x: L.special.gammainc(a, x), U(3, 4, lo=0.5, hi=3, diff=False),
       P(3, 4))
# torch has no second derivative of cdist (_cdist_backward) and pdist (_pdist_backward)
sample("cdist", lambda L, a, b: L.cdist(a, b), T(2, 3, 4), T(2, 5, 4), gradgrad=False)
sample("cdist", lambda L, a, b: L.cdist(a, b, p=1.5), T(3, 4), T(5, 4), gradgrad=False)
sample("pdist", lambda L, a: L.pdist(a), T(5, 3), gradgrad=False)
sample("pdist", lambda L, a: L.nn.functional.pdist(a, p=1.5), T(4, 3), gradgrad=False)
sample("native_group_norm", lambda L, x, w, b: L.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5)[0],
       T(2, 4, 3), T(4), T(4))
sample("cdist", lambda L, a, b: L.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), T(3, 4),
       T(5, 4))
sample("gammaincc", lambda L, a, x: L.special.gammaincc(a, x),
       U(3, 4, lo=0.5, hi=3, diff=False), P(3, 4))

sample("lerp", lambda L, a, b: L.lerp(a, b, 0.3), T(3, 4), T(3, 4))
sample("lerp", lambda L, a, b: a.lerp(b, 0.7), T(3, 4), T(4))
sample("lerp_tensor", lambda L, a, b, w: L.lerp(a, b, w), T(3, 4), T(3, 4), U(3, 4, lo=0, hi=1))
sample("addcmul", lambda L, a, b, c: L.addcmul(a, b, c, value=0.5), T(3, 4), T(3, 4), T(4))
sample("addcdiv", lambda L, a, b, c: L.addcdiv(a, b, c), T(3, 4), T(3, 4), P(3, 4))
sample("addcdiv", lambda L, a, b, c: a.addcdiv(b, c, value=-2), T(3, 4), T(3, 4), P(4))
sample("round_decimals", lambda L, a: L.round(a, decimals=2), F(3, 4))
sample("fmod", lambda L, a: L.fmod(a, 1.5), F(3, 4))
sample("fmod_tensor", lambda L, a, b: L.fmod(a, b), F(3, 4), D(3, 4))
sample("vdot", lambda L, a, b: L.vdot(a, b), T(5), T(5))

sample("rsub_tensor", lambda L, a, b: L.rsub(a, b, alpha=2), T(3, 4), T(4))

# the diagonal family (ops/shape_composite.py)
sample("diagonal", lambda L, a: L.diagonal(a), T(3, 4))
sample("diagonal", lambda L, a: a.diagonal(offset=1, dim1=-1, dim2=0), T(3, 4, 2))
sample("diagonal", lambda L, a: (a * 1).diagonal(-1).exp(), T(4, 3))
sample("diag_embed", lambda L, a: L.diag_embed(a), T(2, 3))
sample("diag_embed", lambda L, a: L.diag_embed(a, offset=-1, dim1=0, dim2=2), T(2, 3))
sample("diag_copy", lambda L, a: L.diag(a, 1), T(3, 4))
sample("trace", lambda L, a: L.trace(a), T(3, 4))
sample("rot90", lambda L, a: L.rot90(a), T(3, 4))
sample("rot90", lambda L, a: a.rot90(3, [1, 0]), T(2, 3, 4))

# more elementwise math (ops/elementwise_math.py)
sample("asinh", lambda L, a: L.asinh(a), T(3, 4))
sample("acosh", lambda L, a: a.acosh(), U(3, 4, lo=1.2, hi=3.0))
sample("atanh", lambda L, a: L.arctanh(a), U(3, 4, lo=-0.8, hi=0.8))
sample("exp2", lambda L, a: L.exp2(a), T(3, 4))
sample("deg2rad", lambda L, a: L.deg2rad(a), T(3, 4))
sample("rad2deg", lambda L, a: a.rad2deg(), T(3, 4))
sample("frac", lambda L, a: L.frac(a), F(3, 4))
sample("sgn", lambda L, a: L.sgn(a), A(3, 4))
sample("nan_to_num", lambda L, a: L.nan_to_num(a, nan=0.5, posinf=2.0), T(3, 4))
sample("atan2", lambda L, a, b: L.atan2(a, b), T(3, 4), T(4))
sample("hypot", lambda L, a, b: L.hypot(a, b), T(3, 4), T(3, 4))
sample("logaddexp", lambda L, a, b: L.logaddexp(a, b), T(3, 4), T(3, 1))
sample("logaddexp2", lambda L, a, b: a.logaddexp2(b), T(3, 4), T(3, 4))
sample("copysign", lambda L, a, b: L.copysign(a, b), A(3, 4), T(3, 4))
sample("copysign_scalar", lambda L, a: L.copysign(a, -1.0), A(3, 4))
sample("fmax", lambda L, a, b: L.fmax(a, b), A(3, 4), A(3, 4))
sample("fmin", lambda L, a, b: a.fmin(b), A(3, 4), A(3, 4))
sample("ldexp", lambda L, a, e: L.ldexp(a, e), T(3, 4), R(3, 4, lo=0, hi=4))
sample("frexp", lambda L, a: L.frexp(a).mantissa, A(3, 4))
sample("nextafter", lambda L, a, b: L.nextafter(a, b), T(3, 4), T(3, 4))
sample("heaviside", lambda L, a, b: L.heaviside(a, b), Q(3, 4, diff=False), T(4, diff=False),
       **NO_GRAD)
sample("float_power", lambda L, a, b: L.float_power(a, b), P(3, 4), T(3, 4))

sample("addmm", lambda L, c, a, b: L.addmm(c, a, b), T(3, 2), T(3, 4), T(4, 2))
sample("addmm", lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2), T(2), T(3, 4), T(4, 2))
sample("addmm", lambda L, c, a, b: c.addmm(a, b), T(3, 1), T(3, 4), T(4, 2, diff=False))
sample("mv", lambda L, a, b: L.mv(a, b), T(3, 4), T(4))
sample("mv", lambda L, a, b: a.mv(b), T(2, 3), T(3))

sample("clone", lambda L, a: a.clone(), T(3, 4))
sample("clone", lambda L, a: L.clone(a), T())
sample("alias", lambda L, a: a[...], T(3, 4))
sample("as_strided", lambda L, a: a.as_strided((2, 2), (1, 2)), T(3, 4))
sample("as_strided", lambda L, a: L.as_strided(a, (3,), (4,), 1), T(3, 4))
sample("to_copy", lambda L, a: a.to(L.float64, copy=True), T(3, 4), float32=False)
sample("to_copy", lambda L, a: a.to(L.float32), T(3, 4), **NO_GRAD)  # float32: too coarse
sample("to_copy", lambda L, a: a.double(), T(3, 4), float32=False, **NO_GRAD)  # no-op on f64
sample("to_copy", lambda L, i: i.to(L.float64), R(3, 4), **INT_ONLY)
sample("to_copy", lambda L, a: a.int(), T(3, 4), **NO_GRAD)
sample("narrow_copy", lambda L, a: L.narrow_copy(a, 1, 1, 2), T(3, 4))
sample("narrow_copy", lambda L, a: a.narrow_copy(-1, -3, 2), T(2, 3, 4))


def _setitem(a, index, value):
    b = a.clone()
    b[index] = value
    return b


# In-place ops and copies on fresh non-leaf tensors (the sample function makes them each call)
sample("copy", lambda L, a: L.zeros_like(a).copy_(a), T(3, 4))
sample("copy", lambda L, a: L.zeros(2, 3, 4, dtype=a.dtype).copy_(a), T(4))
sample("fill", lambda L, a: (a * 1).fill_(2.0), T(3, 4))
sample("fill", lambda L, a, v: (a * 1).fill_(v), T(3, 4), T())
sample("index_put", lambda L, a, i, v: a.index_put((i,), v), T(3, 4), I([0, 2]), T(2, 4))
sample(
    "index_put",
    lambda L, a, i, v: a.index_put((i,), v, accumulate=True),
    T(3, 4),
    I([0, 0, 2]),
    T(4),
)
sample(
    "index_put", lambda L, a, i, j, v: L.index_put(a, (i, j), v), T(3, 4), I([0, 2]), I([1, 3]), T()
)
sample("setitem", lambda L, a, v: _setitem(a, 1, v), T(3, 4), T(4))
sample("setitem", lambda L, a, v: _setitem(a, (slice(None), slice(1, 3)), v), T(3, 4), T(3, 1))
sample("setitem", lambda L, a: _setitem(a, 0, 0.0), T(3, 4))
sample("setitem", lambda L, a, m, v: _setitem(a, m, v), T(3, 4), M(3, 4), T())
sample("setitem", lambda L, a, i, v: _setitem(a, i, v), T(3, 4), I([2, 0]), T(2, 4))
sample("inplace", lambda L, a, b: (a * 1).mul_(b), T(3, 4), T(4))
sample("inplace", lambda L, a, b: (a * 1).add_(b, alpha=2), T(3, 4), T(3, 4))
sample("inplace", lambda L, a, b: (a + 0).sub_(b).div_(2), T(3, 4), T(3, 4))
sample("inplace", lambda L, a: a.clone().exp_(), T(3, 4))
# comparisons in place: the result is 0/1 in a's dtype; its gradient is zero (EqBackward1/0);
# values away from ties, so that finite differences see the zero too
sample("inplace", lambda L, a, b: (a * 1).eq_(b), A(3, 4), T(3, 4))
sample("inplace", lambda L, a: (a * 1).eq_(0.5), A(3, 4))
sample("inplace", lambda L, a, b: (a * 1).ne_(b), A(3, 4), T(3, 4))
sample("inplace", lambda L, a: (a * 1).ne_(0.5), A(3, 4))
sample("inplace", lambda L, a, b: (a * 1).lt_(b), A(3, 4), T(3, 4))
sample("inplace", lambda L, a: (a * 1).lt_(0.5), A(3, 4))
sample("inplace", lambda L, a, b: (a * 1).le_(b), A(3, 4), T(3, 4))
sample("inplace", lambda L, a: (a * 1).le_(0.5), A(3, 4))
sample("inplace", lambda L, a, b: (a * 1).gt_(b), A(3, 4), T(3, 4))
sample("inplace", lambda L, a: (a * 1).gt_(0.5), A(3, 4))
sample("inplace", lambda L, a, b: (a * 1).ge_(b), A(3, 4), T(3, 4))
sample("inplace", lambda L, a: (a * 1).ge_(0.5), A(3, 4))
sample("inplace", lambda L, a: a.clone().sigmoid_(), T(3, 4))
sample("inplace", lambda L, a: a.clone().clamp_(-0.5, 0.5), A(3, 4))
sample("inplace", lambda L, a: a.clone().zero_(), T(3, 4))
sample("inplace", lambda L, a: (a * 1)[1:].mul_(3), T(3, 4))

# --------------------------------------------------------------------------------------------
# Writing by index (ops/scatter.py, ops/view_scatter.py) and ordering (ops/sorting.py), one
# sample per node; the OpInfo entries (tests/ops/test_opinfo.py) sweep them in full
# --------------------------------------------------------------------------------------------

sample("index_add", lambda L, a, s, i: a.index_add(0, i, s, alpha=2), T(3, 4), T(2, 4),
       I([2, 0]))
sample("index_copy", lambda L, a, s, i: L.index_copy(a, 1, i, s), T(3, 4), T(3, 2), I([3, 0]))
sample("index_fill", lambda L, a, i: a.index_fill(1, i, -1.0), T(3, 4), I([1, 2]))
sample("index_fill", lambda L, a, v, i: a.index_fill(0, i, v), T(3, 4), T(), I([2]))
sample("index_reduce", lambda L, a, s, i: a.index_reduce(0, i, s, "amax"), T(3, 4), T(3, 4),
       I([0, 2, 0]))
sample("scatter_reduce", lambda L, a, s, i: a.scatter_reduce(0, i, s, "mean"), T(3, 4),
       T(2, 4), I([[0, 1, 2, 0], [2, 2, 0, 1]]))
sample("put", lambda L, a, s, i: a.put(i, s), T(3, 4), T(3), I([0, 5, 11]))
sample("take", lambda L, a, i: L.take(a, i), T(3, 4), I([[0, 5], [11, 5]]))
sample("masked_scatter", lambda L, a, m, s: a.masked_scatter(m, s), T(3, 4), M(3, 4), T(12))
sample("masked_select", lambda L, a, m: L.masked_select(a, m), T(3, 4), M(4))
sample("select_scatter", lambda L, a, s: L.select_scatter(a, s, 1, 2), T(3, 4), T(3))
sample("slice_scatter", lambda L, a, s: L.slice_scatter(a, s, 1, 0, 4, 2), T(3, 4), T(3, 2))
sample("diagonal_scatter", lambda L, a, s: L.diagonal_scatter(a, s, 1), T(3, 4), T(3))
sample("sort", lambda L, a: a.sort(1, descending=True).values, T(3, 4))
sample("sort", lambda L, a: L.sort(a, stable=True).values, T(3, 4))
sample("topk", lambda L, a: a.topk(2).values, T(3, 4))
sample("kthvalue", lambda L, a: a.kthvalue(2, 0).values, T(3, 4))
sample("median", lambda L, a: a.median(), T(3, 4))
sample("median", lambda L, a: a.median(1, keepdim=True).values, T(3, 4))
sample("nanmedian", lambda L, a: a.nanmedian(), T(3, 4))
sample("nanmedian", lambda L, a: L.nanmedian(a, 0).values, T(3, 4))
sample("mode", lambda L, a: a.mode(1).values, T(3, 4))
sample("cummax", lambda L, a: a.cummax(1).values, T(3, 4))
sample("cummin", lambda L, a: L.cummin(a, 0).values, T(3, 4))
sample("aminmax", lambda L, a: L.aminmax(a, dim=1), T(3, 4))
sample("logcumsumexp", lambda L, a: a.logcumsumexp(1), T(3, 4))
sample("roll", lambda L, a: a.roll((1, -2), (0, 1)), T(3, 4))
sample("unfold", lambda L, a: a.unfold(1, 2, 1), T(3, 4))
sample("unfold", lambda L, a: a.unfold(0, 2, 2), T(5, 2))
sample("unsafe_split", lambda L, a: L.unsafe_split(a, 2, 1), T(3, 4))
sample("unsafe_split_with_sizes", lambda L, a: L.unsafe_split_with_sizes(a, [1, 3], 1), T(3, 4))
# the whole of a as the "slice" (the inverse's gradient is the slice of the incoming one, which
# is the true derivative only when the output covers exactly self's elements)
sample("as_strided_inplace", lambda L, a: (a * 1).as_strided_((2, 2), (1, 2)), T(3, 4))
sample("slice_inverse", lambda L, a: L.slice_inverse(a, L.zeros(4, 5, dtype=a.dtype), 1, 0, 5),
       T(4, 5))
sample("fill", lambda L, a: L.fill(a, 2.0), T(3, 4))
sample("fill", lambda L, a, v: L.fill(a, v), T(3, 4), T())

# --------------------------------------------------------------------------------------------
# block_diag, dist, renorm, linalg.eig, segment_reduce (ops/shape_composite.py, ops/norms.py,
# ops/decompositions.py, ops/segments.py)
# --------------------------------------------------------------------------------------------

sample("block_diag", lambda L, a, b, c: L.block_diag(a, b, c), T(2, 3), T(3), T())
sample("dist", lambda L, a, b: L.dist(a, b), T(3, 4), T(4))
sample("dist", lambda L, a, b: a.dist(b, 3), A(3, 4), A(3, 4))
sample("renorm", lambda L, a: L.renorm(a, 2, 0, 0.5), A(3, 4))
# eigenvalues (real and imaginary parts) and |V|: the gauge-invariant parts of the result
sample("linalg_eig", lambda L, a: (lambda w, v: (w.real, w.imag, v.abs()))(*L.linalg.eig(a)),
       C([[2.0, 1.0, 0.0], [0.5, 3.0, 1.0], [0.0, 0.2, 5.0]]))
# the gradient of segment_reduce has no derivative (in torch either)
sample("segment_reduce", lambda L, a: L.segment_reduce(a, "max", lengths=L.tensor([1, 3])),
       A(4, 2), gradgrad=False)
sample("segment_reduce", lambda L, a: L.segment_reduce(a, "prod", lengths=L.tensor([1, 0, 3]),
                                                       initial=2.0), A(4, 2), gradgrad=False)
