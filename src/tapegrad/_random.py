"""Random tensors: ``Generator``, the default generator, and rand/randn/randint/... over it.

Every value comes from ``_rng.Engine`` (torch's CPU generator, bit for bit), so a seeded program
prints torch's numbers, and every call takes exactly as many draws as torch's does, so a long
mix of calls stays in step (``get_rng_state()`` holds torch's bytes afterwards). This module is
the layer a user sees: torch's signatures and defaults, argument checks with torch's messages, the
layout of the result, and the autograd side of the in-place fills.

Data flow of one call::

    torch.randn(2, 3, generator=g)                     x.t().normal_(0, 2)
      parse size / dtype / generator                    check in-place rules (leaf, view, ...)
      new C-contiguous destination                      destination: x's memory, as it lies
                 \\                                     /
                  _draw_values(destination, draw)
                    draw(shape, dtype, contiguous, order) -> values in FILL ORDER (memory
                    order: torch's TensorIterator visits the smallest stride first), placed
                    at their logical positions; complex = its real view, (..., 2) floats
                 /                                     \\
      Tensor (leaf; requires_grad=...)                   apply_(NormalBackward0, x, values)
                                                         writes, bumps the version counter

``*_like`` (and the exponential race inside ``multinomial``) allocate like torch's
``empty_like``, keeping the input's memory order, so their values land where torch puts them.
Random ops record torch's nodes (``NormalBackward0``, ``BernoulliBackward1``, ...); their
gradients are zero.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import _dtype, _out, _sampling
from . import _rng as rng
from ._alloc_errors import check_sizes, out_of_memory
from ._creation import _new, _place
from ._device import check_generator_device
from ._naming import public
from ._rng import STATE_SIZE, Engine, _is_bf16, fill_order
from ._sort_emulation import topk_positions
from ._tensor import Tensor, device
from .autograd.grad_mode import _state
from .ops._registry import OpDef, OpNode, apply, apply_, check_inplace, scalar_type_name
from .ops._warnings import _warn_at_caller
from .ops.elementwise import _broadcast_error
from .ops.shape import expand

__all__ = [
    "STATE_SIZE",
    "Generator",
    "default_generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "rand",
    "rand_like",
    "randn",
    "randn_like",
    "randint",
    "randint_like",
    "randperm",
    "normal",
    "bernoulli",
    "multinomial",
    "poisson",
    "binomial",
]


# ---------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------


@public("._C")
class Generator:
    """``torch.Generator``: an independent stream of random numbers (torch's CPU generator).

    A new generator starts from torch's default seed, 67280421310721.

    Example:
        >>> import tapegrad as torch
        >>> g = torch.Generator().manual_seed(0)
        >>> torch.rand(2, generator=g)
        tensor([0.4963, 0.7682])
    """

    __slots__ = ("engine", "_device", "__weakref__")

    def __init__(self, device: Any = "cpu") -> None:
        self._device = _device_of(device)
        self.engine = Engine()

    @property
    def device(self) -> device:
        return self._device

    def manual_seed(self, seed: int) -> Generator:
        """Seed the generator (-2**63 <= seed < 2**64) and return it."""
        if isinstance(seed, np.integer):  # torch's Generator wants a Python int here
            raise TypeError("an integer is required")
        self.engine.manual_seed(seed)
        return self

    def seed(self) -> int:
        """Seed from the OS entropy pool; return the 64-bit seed used."""
        return self.engine.seed()

    def initial_seed(self) -> int:
        """The seed last set (as an unsigned 64-bit number)."""
        return self.engine.initial_seed()

    def get_state(self) -> Tensor:
        """The state as a uint8 tensor of 5056 bytes, in torch's layout."""
        return Tensor._make(self.engine.get_state())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state from ``get_state`` (also one saved by torch); return the generator."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {_typename(new_state)}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if not new_state._data.flags.c_contiguous:
            raise RuntimeError("RNG state must be contiguous")
        self.engine.set_state(new_state._data)
        return self

    def clone_state(self) -> Generator:
        """A new generator in the same state."""
        twin = Generator(self._device)
        twin.engine.set_state(self.engine.get_state())
        return twin

    def get_offset(self) -> int:
        raise RuntimeError("CPU Generator does not use offset")

    def set_offset(self, offset: int) -> Generator:
        raise RuntimeError("CPU Generator does not use offset")

    def __getstate__(self) -> dict:
        return {"device": str(self._device), "state": self.engine.get_state().tobytes()}

    def __setstate__(self, state: dict) -> None:
        self._device = _device_of(state["device"])
        self.engine = Engine()
        self.engine.set_state(np.frombuffer(state["state"], dtype=np.uint8))

    def __repr__(self) -> str:
        cls = type(self)
        return f"<{cls.__module__}.{cls.__name__} object at {hex(id(self))}>"


def _device_of(dev: Any) -> device:
    return check_generator_device(dev)


default_generator = Generator()
default_generator.seed()  # like torch, the default generator starts from a random seed


def _engine(generator: Generator | None) -> Engine:
    """The engine of ``generator``, or of the default generator."""
    return (default_generator if generator is None else generator).engine


def manual_seed(seed: Any) -> Generator:
    """Seed the default generator; return it. Anything ``int()`` accepts is a seed.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.rand(3)
        tensor([0.4963, 0.7682, 0.0885])
    """
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator from the OS entropy pool; return the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default generator's state: 5056 bytes (uint8), torch's layout.

    Example:
        >>> import tapegrad as torch
        >>> state = torch.get_rng_state()
        >>> a = torch.rand(2)
        >>> torch.set_rng_state(state)
        >>> bool((torch.rand(2) == a).all())
        True
    """
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the default generator's state (from ``get_rng_state``, also torch's)."""
    default_generator.set_state(new_state)


# ---------------------------------------------------------------------------------------------
# Argument parsing with torch's messages
# ---------------------------------------------------------------------------------------------

_MISSING: Any = object()

_FACTORY_KW = (
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False"
)
_SIGNATURES = {
    "rand": [
        f"(tuple of ints size, *, torch.Generator generator, {_FACTORY_KW})",
        f"(tuple of ints size, *, {_FACTORY_KW})",
    ],
    "randint": [
        f"(int high, tuple of ints size, *, torch.Generator generator, {_FACTORY_KW})",
        f"(int high, tuple of ints size, *, {_FACTORY_KW})",
        f"(int low, int high, tuple of ints size, *, torch.Generator generator, {_FACTORY_KW})",
        f"(int low, int high, tuple of ints size, *, {_FACTORY_KW})",
    ],
    "randperm": [
        f"(int n, *, torch.Generator generator, {_FACTORY_KW})",
        f"(int n, *, {_FACTORY_KW})",
    ],
    "normal": [
        "(Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
        "(Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)",
        "(float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)",
        "(float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
        + _FACTORY_KW
        + ")",
    ],
    "random_": [
        "(*, torch.Generator generator = None)",
        "(int from, int to, *, torch.Generator generator = None)",
        "(int to, *, torch.Generator generator = None)",
    ],
    "randint_like": [
        f"(Tensor input, {bounds}, *, {gen}torch.memory_format memory_format = None, "
        "torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
        "bool pin_memory = False, bool requires_grad = False)"
        for bounds in ("int low, int high", "Tensor high", "int high")
        for gen in ("torch.Generator generator, ", "")
    ],
}
_SIGNATURES["randn"] = _SIGNATURES["rand"]


def _typename(x: Any) -> str:
    """The type name torch's argument parser prints (``tp_name``)."""
    if isinstance(x, Generator):
        return "torch._C.Generator"
    cls = type(x)
    if cls.__module__ == "builtins" or issubclass(cls, (Tensor, _dtype.dtype)):
        return cls.__name__
    return f"{cls.__module__.split('.')[0]}.{cls.__name__}"


def _invalid(name: str, args: Sequence[Any], kwargs: dict) -> TypeError:
    """torch's "received an invalid combination of arguments" TypeError."""
    parts = [_typename(a) for a in args]
    kw = [f"{k}={_typename(v)}" for k, v in reversed(list(kwargs.items()))]
    got = ", ".join(parts + kw) + (", " if kw and not parts else "")
    options = "".join(f" * {s}\n" for s in _SIGNATURES[name])
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected "
        f"one of:\n{options}"
    )


def _is_int(x: Any) -> bool:
    """An int for torch's parser: Python/NumPy integers and 0-d integer tensors, not bools."""
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    return isinstance(x, Tensor) and x._data.ndim == 0 and x._data.dtype.kind in "iu"


def _as_int(x: Any) -> int:
    v = int(x.item()) if isinstance(x, Tensor) else int(x)
    if not -(2**63) <= v < 2**63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _int_arg(fname: str, name: str, pos: int | None, x: Any) -> int:
    if not _is_int(x):
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fname}(): argument '{name}'{where} must be int, not {_typename(x)}")
    return _as_int(x)


def _float_arg(fname: str, name: str, pos: int, x: Any) -> float:
    if isinstance(x, Tensor) and x._data.ndim == 0:
        return float(x.item())
    if isinstance(x, (bool, int, float, np.integer, np.floating)):
        return float(x)
    raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be float, not "
                    f"{_typename(x)}")


def _check_generator(fname: str, generator: Any, args: Sequence[Any], kwargs: dict) -> None:
    if generator is not None and not isinstance(generator, Generator):
        raise _invalid(fname, args, {**kwargs, "generator": generator})


def _int_tuple(fname: str, value: Any, pos: int | None) -> tuple[int, ...]:
    """A ``tuple of ints size`` argument (tuple, list or Size), with torch's messages."""
    where = f" (position {pos})" if pos else ""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'size'{where} must be tuple of ints, not "
                        f"{_typename(value)}")
    for i, s in enumerate(value):
        if not _is_int(s):
            if i == 0:  # torch's parser type-checks the first element when it picks a signature
                if pos is None:
                    raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, not "
                                    f"{_typename(value)}")
                raise TypeError(f"{fname}(): argument 'size'{where} must be tuple of ints, but "
                                f"found element of type {_typename(s)} at pos 0")
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{_typename(s)}\"")
    for i, s in enumerate(value):
        try:
            _as_int(s)
        except ValueError:  # (torch's message has no closing quote)
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"Overflow when unpacking long long") from None
    return _checked_shape(tuple(_as_int(s) for s in value))


def _checked_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    for s in shape:
        if s < 0:
            dims = ", ".join(map(str, shape))
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: [{dims}]")
    return shape


def _size_args(fname: str, size: tuple, kwargs: dict, other_kw: bool) -> tuple[int, ...]:
    """``rand(*size)`` / ``rand(size=...)``: ints as varargs, or one tuple/list/Size.

    ``kwargs`` holds what the signature does not name (only ``size`` is valid there);
    ``other_kw`` says whether a factory keyword (dtype, generator, ...) was given.
    """
    size_kw = kwargs.get("size", _MISSING)
    if set(kwargs) - {"size"} or (size and size_kw is not _MISSING):
        raise _invalid(fname, size, kwargs)
    if size_kw is not _MISSING:
        if not isinstance(size_kw, (tuple, list)):
            raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, not "
                            f"{_typename(size_kw)}")
        return _int_tuple(fname, size_kw, None)
    if not size:
        if other_kw:
            raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
        raise _invalid(fname, size, kwargs)
    if len(size) == 1 and not _is_int(size[0]):
        return _int_tuple(fname, size[0], 1)
    if not _is_int(size[0]):
        raise _invalid(fname, size, kwargs)
    return _int_tuple(fname, tuple(size), 1)


def _to_dtype(dtype: Any, default: _dtype.dtype) -> _dtype.dtype:
    return default if dtype is None else _dtype.to_dtype(dtype)


def _real_np(d: np.dtype) -> np.dtype:
    """The dtype drawn for ``d``: complex tensors are filled through their real view."""
    return {"c": np.dtype(np.float32 if d == np.complex64 else np.float64)}.get(d.kind, d)


def _type_name(d: np.dtype) -> str:
    return scalar_type_name(_dtype._FROM_NP[np.dtype(d)])


def _fmt(x: float) -> str:
    return rng._fmt(float(x))


# ---------------------------------------------------------------------------------------------
# Layout: where drawn values go
# ---------------------------------------------------------------------------------------------

_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)

Draw = Callable[[tuple, np.dtype, bool, "np.ndarray | None"], np.ndarray]


def _elem_strides(arr: np.ndarray) -> tuple[int, ...]:
    return tuple(s // arr.itemsize for s in arr.strides)


def _draw_values(arr: np.ndarray, draw: Draw) -> np.ndarray:
    """Values for the destination ``arr`` (C-order, arr's dtype), drawn in torch's fill order.

    ``draw(shape, dtype, contiguous, order)`` returns one value per element in the order they
    are drawn; ``order`` (None when ``arr`` is C-contiguous) gives the flat C index each one
    belongs to. A complex destination is filled through its real view (..., 2).
    """
    shape, strides = arr.shape, _elem_strides(arr)
    if arr.size and any(n > 1 and s == 0 for n, s in zip(shape, strides, strict=True)):
        draw((0,), _real_np(arr.dtype), True, None)  # torch checks the arguments first
        raise RuntimeError(_OVERLAP)
    return _draw_laid_out(shape, strides, arr.dtype, bool(arr.flags.c_contiguous), draw)


def _draw_laid_out(shape: tuple, strides: tuple, dt: np.dtype, contiguous: bool,
                   draw: Draw) -> np.ndarray:
    """:func:`_draw_values` for a layout given as shape and strides (in elements)."""
    if dt.kind == "c":
        shape, strides = shape + (2,), tuple(2 * s for s in strides) + (1,)
    order = None if contiguous else fill_order(shape, strides)
    drawn = draw(shape, _real_np(dt), contiguous, order).reshape(-1)
    if order is None:
        values = drawn.reshape(shape)
    else:
        values = np.empty(drawn.size, dtype=drawn.dtype)
        values[order] = drawn
        values = values.reshape(shape)
    if dt.kind == "c":
        values = values.view(dt).reshape(shape[:-1])
    return values


def _dense_dims(shape: tuple, strides: tuple) -> list[int]:
    """The dims from fastest to slowest, as torch's ``empty_like`` keeps an input's layout.

    An insertion sort by stride: smaller strides go first, equal strides put the smaller size
    first, and a zero stride compares as "don't know" (the contiguous order stays).
    """
    perm = list(range(len(shape) - 1, -1, -1))

    def cmp(d0: int, d1: int) -> int:
        s0, s1 = abs(strides[d0]), abs(strides[d1])
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return -1 if s0 < s1 else 1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, len(perm)):
        j = i
        for k in range(i - 1, -1, -1):
            c = cmp(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return perm


def _is_dense(shape: tuple, strides: tuple) -> bool:
    """Non-overlapping and dense: the elements fill a block of memory with no gaps."""
    expected = 1
    for st, n in sorted((st, n) for n, st in zip(shape, strides, strict=True) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def _empty_like(arr: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A new array shaped like ``arr`` whose memory order is arr's (``preserve_format``): the
    same strides when arr is dense, else dense strides in arr's order of strides."""
    strides = _elem_strides(arr)
    if _is_dense(arr.shape, strides):
        itemsize = np.dtype(dtype).itemsize
        return np.lib.stride_tricks.as_strided(
            np.empty(arr.size, dtype=dtype), arr.shape, [s * itemsize for s in strides],
            writeable=True,
        )
    slow_first = _dense_dims(arr.shape, strides)[::-1]
    out = np.empty([arr.shape[d] for d in slow_first], dtype=dtype)
    return out.transpose(np.argsort(slow_first))


def _draw_new(shape: tuple, dtype: np.dtype, draw: Draw) -> np.ndarray:
    """Values for a new C-contiguous array (no destination is allocated)."""
    check_sizes(shape, np.dtype(dtype).itemsize)
    try:
        return _draw_laid_out(shape, (), np.dtype(dtype), True, draw)
    except MemoryError as e:  # (the bytes of the tensor asked for, not of the draw's words)
        raise out_of_memory(e, math.prod(shape) * np.dtype(dtype).itemsize) from None


def _draw_like(arr: np.ndarray, dtype: np.dtype, draw: Draw) -> np.ndarray:
    out = _empty_like(arr, dtype)
    out[...] = _draw_values(out, draw)
    return out


# ---------------------------------------------------------------------------------------------
# Graph nodes of the random ops: the values do not depend on the inputs, so every gradient is 0
# ---------------------------------------------------------------------------------------------


def _take_values(*inputs: Any, values: list) -> np.ndarray:
    return values.pop()  # handed over in a list, so the node does not keep the array alive


def _zero_grads(ctx: OpNode, grad: Any) -> tuple:  # d(random values)/d(anything) = 0
    # (the engine casts each gradient to its input's dtype)
    return tuple(
        None if shape is None else Tensor._make(np.zeros(shape, dtype=grad._data.dtype))
        for shape in ctx.input_shapes
    )


def _random_op(name: str, node: str) -> OpDef:
    """A node-recording entry for a random op (not in REGISTRY: op_samples cannot draw)."""
    op = OpDef(name, node, _take_values, (), False, False, 1)
    op.rule = _zero_grads
    return op


def _no_derivative_of(aten: str) -> Callable:
    def rule(ctx: OpNode, grad: Any) -> tuple:
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")

    return rule


_no_derivative = _no_derivative_of("bernoulli")


_UNIFORM = _random_op("uniform_", "UniformBackward0")
_NORMAL_ = _random_op("normal_", "NormalBackward0")
_NORMAL_TF = _random_op("normal_tensor_float", "NormalBackward1")
_NORMAL_FT = _random_op("normal_float_tensor", "NormalBackward2")
_NORMAL_TT = _random_op("normal_tensor_tensor", "NormalBackward3")
_RANDOM_FROM_TO = _random_op("random_from_to", "RandomBackward0")
_RANDOM_TO = _random_op("random_to", "RandomBackward1")
_RANDOM = _random_op("random_", "RandomBackward2")
_EXPONENTIAL = _random_op("exponential_", "ExponentialBackward0")
_BERNOULLI = _random_op("bernoulli", "BernoulliBackward0")
_BERNOULLI_T = _random_op("bernoulli_tensor", "BernoulliBackward1")
_BERNOULLI_F = _random_op("bernoulli_float", "BernoulliBackward2")
_BERNOULLI_P = OpDef("bernoulli_p", "NotImplemented", _take_values, (), False, False, 1)
_BERNOULLI_P.rule = _no_derivative
_BERNOULLI_P.node_cls._cpp_name = "torch::autograd::NotImplemented"  # type: ignore[attr-defined]


def _guard(t: Tensor, others: tuple = ()) -> None:
    """torch's in-place checks (leaf, view), made after parsing the arguments and before
    checking their values. An inference tensor outside inference mode is checked later."""
    if t._inference and not _state.inference:
        return
    check_inplace(t, _state.enabled and (t._requires_grad or any(o._requires_grad
                                                                  for o in others)))


def _fill_(t: Tensor, op: OpDef, draw: Draw, others: tuple = ()) -> Tensor:
    """Fill ``t`` in place (after :func:`_guard`): values in fill order, op's node."""
    values = _draw_values(t._data, draw)
    if t._inference and not _state.inference:
        # torch writes the values, then refuses to bump the inference tensor's version
        t._data[...] = values
        check_inplace(t, False)
    return apply_(op, t, *others, values=[values])


def _result(values: np.ndarray, op: OpDef, inputs: tuple) -> Tensor:
    """A new tensor of drawn values; ``op``'s node when an input requires grad."""
    if any(x._requires_grad for x in inputs):
        return apply(op, *inputs, values=[values])
    return _new(values)


# ---------------------------------------------------------------------------------------------
# Draw functions: (shape, dtype, contiguous, order) -> values in fill order
# ---------------------------------------------------------------------------------------------


def _uniform_draw(eng: Engine, low: float, high: float) -> Draw:
    def draw(shape: tuple, dt: np.dtype, contiguous: bool, order: Any) -> np.ndarray:
        return eng.uniform(shape, dt, low, high)

    return draw


def _check_std(std: float) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


def _normal_draw(eng: Engine, mean: float, std: float, complex_std: bool = False) -> Draw:
    _check_std(std)

    def draw(shape: tuple, dt: np.dtype, contiguous: bool, order: Any) -> np.ndarray:
        # a complex tensor is normal_(mean, std / sqrt(2)) on its real view
        s = std / math.sqrt(2) if complex_std else std
        return eng.normal(shape, dt, mean, s, contiguous=contiguous)

    return draw


def _random_draw(eng: Engine, low: int | None, high: int | None) -> Draw:
    def draw(shape: tuple, dt: np.dtype, contiguous: bool, order: Any) -> np.ndarray:
        if dt.kind != "f" and not _is_bf16(dt):
            return eng.random_(shape, dt, low, high)
        # the engine's precision warning for float dtypes, re-raised at the user's call
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = eng.random_(shape, dt, low, high)
        for w in caught:
            _warn_at_caller(w.message, w.category)
        return values

    return draw


def _check_random_dtype(d: np.dtype, bounded: bool) -> None:
    if d.kind == "c":
        if bounded:
            raise RuntimeError(
                "check_random_bounds handles only integral, floating-point and boolean types"
            )
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{_type_name(d)}'")


def _bernoulli_draw(eng: Engine, p: float) -> Draw:
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")

    def draw(shape: tuple, dt: np.dtype, contiguous: bool, order: Any) -> np.ndarray:
        return eng.bernoulli(p, shape, dt)

    return draw


_P_IN_RANGE = (
    "Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
    "improved?  If so, please report an enhancement request to PyTorch.)"
)


def _bernoulli_tensor_draw(eng: Engine, p: Tensor, dest: np.ndarray | None) -> Draw:
    """``bernoulli_(p_tensor)``: p broadcast to the destination, read in fill order.

    torch checks each p as it draws, so a p outside [0, 1] raises after the values before it
    were drawn (and written into ``dest``, for an in-place call).
    """
    pdt = p._data.dtype
    if not (pdt.kind == "f" or _is_bf16(pdt)):
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                  f"'{_type_name(pdt)}'")

    def draw(shape: tuple, dt: np.dtype, contiguous: bool, order: Any) -> np.ndarray:
        if not math.prod(shape):
            return np.empty(0, dtype=dt)
        pv = np.broadcast_to(p._data, shape).reshape(-1)
        if order is not None:
            pv = pv[order]
        inside = (pv >= 0) & (pv <= 1)
        if not inside.all():
            k = int(np.argmin(inside))
            head = eng.bernoulli(np.ascontiguousarray(pv[:k]), (k,), dt)
            if dest is not None and k:
                at = np.arange(k) if order is None else order[:k]
                dest[np.unravel_index(at, shape)] = head
            raise RuntimeError(_P_IN_RANGE)
        return eng.bernoulli(np.ascontiguousarray(pv), (pv.size,), dt)

    return draw


def _expand_to(p: Tensor, shape: tuple) -> None:
    """torch's errors when ``p`` does not expand to ``shape`` (expand_inplace)."""
    expand(Tensor._make(p._data), *shape)


def _exponential_draw(eng: Engine, lambd: float, d: np.dtype) -> Draw:
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    if not (d.kind == "f" or _is_bf16(d)):
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype must be a "
            f"floating point but you specified {_type_name(d)}"
        )

    def draw(shape: tuple, dt: np.dtype, contiguous: bool, order: Any) -> np.ndarray:
        return eng.exponential(shape, dt, lambd)

    return draw


# ---------------------------------------------------------------------------------------------
# In-place fills: Tensor.uniform_, normal_, random_, bernoulli_, exponential_
# ---------------------------------------------------------------------------------------------


def _bind(fname: str, names: tuple[str, ...], args: tuple, kwargs: dict) -> list[Any]:
    """Bind positional and keyword values to ``names`` (which may be Python keywords)."""
    if len(args) > len(names):
        raise TypeError(f"{fname}() takes {len(names)} positional arguments but {len(args)} "
                        "were given")
    for k in kwargs:
        if k not in names:
            raise TypeError(f"{fname}() got an unexpected keyword argument '{k}'")
    bound = list(args) + [_MISSING] * (len(names) - len(args))
    for i, name in enumerate(names):
        if name in kwargs:
            if i < len(args):
                raise TypeError(f"{fname}() got multiple values for argument '{name}'")
            bound[i] = kwargs[name]
    return bound


def uniform_(self: Tensor, *args: float, generator: Generator | None = None,
             **kwargs: float) -> Tensor:
    """``Tensor.uniform_(from=0, to=1, *, generator=None)``: uniform values in [from, to).

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.empty(3).uniform_(-1, 1)
        tensor([-0.0075,  0.5364, -0.8230])
    """
    frm, to = _bind("uniform_", ("from", "to"), args, kwargs)
    low = 0.0 if frm is _MISSING else _float_arg("uniform_", "from", 1, frm)
    high = 1.0 if to is _MISSING else _float_arg("uniform_", "to", 2, to)
    _guard(self)
    return _fill_(self, _UNIFORM, _uniform_draw(_engine(generator), low, high))


def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """``Tensor.normal_(mean=0, std=1, *, generator=None)``: normal values.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.empty(3).normal_(1.0, 0.5)
        tensor([ 1.7705,  0.8533, -0.0894])
    """
    mean = _float_arg("normal_", "mean", 1, mean)
    std = _float_arg("normal_", "std", 2, std)
    _guard(self)
    draw = _normal_draw(_engine(generator), mean, std, self._data.dtype.kind == "c")
    return _fill_(self, _NORMAL_, draw)


def random_(self: Tensor, *args: int | None, generator: Generator | None = None,
            **kwargs: int | None) -> Tensor:
    """``Tensor.random_()``, ``random_(to)``, ``random_(from, to)`` (``to=None``: up to the
    dtype's largest value): integers drawn uniformly, in the tensor's dtype.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.empty(4, dtype=torch.int64).random_(10)
        tensor([4, 9, 3, 0])
    """
    if len(args) > 2 or set(kwargs) - {"from", "to"}:
        raise _invalid("random_", args, kwargs)
    if "from" in kwargs:  # random_(from=a) alone matches no signature
        if args or "to" not in kwargs:
            raise _invalid("random_", args, kwargs)
        given = [kwargs["from"], kwargs["to"]]
    elif "to" in kwargs:
        if len(args) > 1:
            raise _invalid("random_", args, kwargs)
        given = [*args, kwargs["to"]]
    else:
        given = list(args)
    if len(given) == 2:
        frm, to = given
        ok = _is_int(frm) and (to is None or _is_int(to))
    elif len(given) == 1:
        frm, to = 0, given[0]
        ok = _is_int(to)
    else:
        frm = to = None
        ok = True
    if not ok:
        raise _invalid("random_", args, kwargs)
    frm = None if frm is None else _as_int(frm)
    to = None if to is None else _as_int(to)
    _guard(self)
    _check_random_dtype(self._data.dtype, bool(given))
    op = _RANDOM if not given else (_RANDOM_TO if len(given) == 1 else _RANDOM_FROM_TO)
    return _fill_(self, op, _random_draw(_engine(generator), frm, to))


def bernoulli_(self: Tensor, p: Any = 0.5, *, generator: Generator | None = None) -> Tensor:
    """``Tensor.bernoulli_(p=0.5, *, generator=None)``: 1 with probability p (a number or a
    tensor broadcast to self), else 0.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.empty(4).bernoulli_(0.5)
        tensor([0., 0., 1., 0.])
    """
    eng = _engine(generator)
    dt = self._data.dtype
    if isinstance(p, Tensor):
        _guard(self, (p,))
        if dt.kind == "c":
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_self_\" not implemented for '{_type_name(dt)}'"
            )
        _expand_to(p, self._data.shape)
        draw = _bernoulli_tensor_draw(eng, p, self._data)
        return _fill_(self, _BERNOULLI_T, draw, (p,))
    p = _float_arg("bernoulli_", "p", 1, p)
    _guard(self)
    draw = _bernoulli_draw(eng, p)
    if dt.kind == "c":
        raise NotImplementedError(f"\"bernoulli_scalar_cpu_\" not implemented for "
                                  f"'{_type_name(dt)}'")
    return _fill_(self, _BERNOULLI_F, draw)


def exponential_(self: Tensor, lambd: float = 1.0, *,
                 generator: Generator | None = None) -> Tensor:
    """``Tensor.exponential_(lambd=1, *, generator=None)``: exponential values, rate lambd.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.empty(3).exponential_()
        tensor([3.5083, 1.2304, 0.6150])
    """
    lambd = _float_arg("exponential_", "lambd", 1, lambd)
    _guard(self)
    draw = _exponential_draw(_engine(generator), lambd, self._data.dtype)
    return _fill_(self, _EXPONENTIAL, draw)


def _float_fill(name: str, d: np.dtype) -> None:
    if not (d.kind == "f" or _is_bf16(d)):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{_type_name(d)}'")


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Generator | None = None) -> Tensor:
    """``Tensor.cauchy_(median=0, sigma=1)``: Cauchy values, median + sigma tan(pi (u - 1/2))."""
    return _location_scale_fill_(self, "cauchy", _CAUCHY, median, "sigma", sigma, generator)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Generator | None = None) -> Tensor:
    """``Tensor.log_normal_(mean=1, std=2)``: exp of normal values."""
    return _location_scale_fill_(self, "log_normal", _LOG_NORMAL, mean, "std", std, generator)


def _location_scale_fill_(self: Tensor, name: str, kind: OpDef, loc: float, scale_name: str,
                          scale: float, generator: Generator | None) -> Tensor:
    """``cauchy_`` and ``log_normal_``: torch's checks (a positive scale, a floating point
    tensor), then the values the engine's sampler of the same name draws."""
    _guard(self)
    if not scale > 0.0:
        raise RuntimeError(f"{name}_ expects {scale_name} > 0.0, but found "
                           f"{scale_name}={_fmt(scale)}")
    _float_fill(name, self._data.dtype)
    sample = getattr(_engine(generator), name)

    def draw(shape: tuple, dt: np.dtype, contiguous: bool, order: Any) -> np.ndarray:
        return sample(shape, dt, loc, scale)

    return _fill_(self, kind, draw)


def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """``Tensor.geometric_(p)``: the number of Bernoulli(p) trials up to the first success."""
    _guard(self)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    eng = _engine(generator)

    def draw(shape: tuple, dt: np.dtype, contiguous: bool, order: Any) -> np.ndarray:
        return eng.geometric(shape, dt, p)

    return _fill_(self, _GEOMETRIC, draw)


_CAUCHY = _random_op("cauchy_", "CauchyBackward0")
_LOG_NORMAL = _random_op("log_normal_", "LogNormalBackward0")
_GEOMETRIC = _random_op("geometric_", "GeometricBackward0")


# ---------------------------------------------------------------------------------------------
# Factories: rand, randn, randint, randperm, normal and the *_like variants
# ---------------------------------------------------------------------------------------------


def _finish(values: np.ndarray, requires_grad: bool, out: Tensor | None, fname: str) -> Tensor:
    if out is None:
        return _new(values, requires_grad)
    return _write_out(values, out, fname)


def _write_out(values: np.ndarray, out: Tensor, fname: str) -> Tensor:
    """``out=``: the values go into ``out`` (``_out``'s checks, resized when its shape
    differs). The random factories take their ``out`` themselves: they draw into it as the
    in-place fills do, in its own memory order."""
    _out.check(f"aten::{fname}", out, ())
    _out.prepare(out, values.shape)
    out._data[...] = values
    out._version_counter.value += 1
    return out


def _out_dtype(dtype: Any, out: Tensor | None, default: _dtype.dtype) -> _dtype.dtype:
    d = _to_dtype(dtype, default)
    if out is not None:
        if dtype is not None and d is not out.dtype:
            raise RuntimeError(f"dtype {scalar_type_name(d)} does not match dtype of out "
                               f"parameter ({scalar_type_name(out.dtype)})")
        d = out.dtype
    return d


def _out_fill(out: Tensor, shape: tuple, fname: str, draw: Draw) -> Tensor:
    """A factory with ``out=``: out is resized if needed and filled like an in-place op."""
    _write_out(np.empty(shape, out._data.dtype), out, fname)  # checks and resize
    out._data[...] = _draw_values(out._data, draw)
    return out


def rand(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
         dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: bool = False,
         requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """Uniform values in [0, 1): ``rand(2, 3)``, ``rand((2, 3))``, ``rand(size=[2, 3])``.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.rand(2, 2)
        tensor([[0.4963, 0.7682],
                [0.0885, 0.1320]])
    """
    _place(device, pin_memory)
    other_kw = dtype is not None or out is not None or requires_grad
    shape, eng = _factory_args("rand", size, kwargs, generator, other_kw)
    d = _out_dtype(dtype, out, _dtype.get_default_dtype())
    draw = _uniform_draw(eng, 0.0, 1.0)
    if out is not None:
        return _out_fill(out, shape, "rand", draw)
    return _new(_draw_new(shape, d.np, draw), requires_grad)


def randn(*size: Any, generator: Generator | None = None, out: Tensor | None = None,
          dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: bool = False,
          requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """Standard normal values: ``randn(2, 3)``, ``randn((2, 3))``, ``randn(size=[2, 3])``.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.randn(3)
        tensor([ 1.5410, -0.2934, -2.1788])
    """
    _place(device, pin_memory)
    other_kw = dtype is not None or out is not None or requires_grad
    shape, eng = _factory_args("randn", size, kwargs, generator, other_kw)
    d = _out_dtype(dtype, out, _dtype.get_default_dtype())
    draw = _normal_draw(eng, 0.0, 1.0, d.is_complex)
    if out is not None:
        return _out_fill(out, shape, "randn", draw)
    return _new(_draw_new(shape, d.np, draw), requires_grad)


def _factory_args(fname: str, size: tuple, kwargs: dict, generator: Any, other_kw: bool
                  ) -> tuple[tuple[int, ...], Engine]:
    """The shape and engine of rand/randn, or torch's TypeError."""
    shape = _size_args(fname, size, kwargs, other_kw or generator is not None)
    _check_generator(fname, generator, size, kwargs)
    return shape, _engine(generator)


def randint(*args: Any, generator: Generator | None = None, out: Tensor | None = None,
            dtype: Any = None, layout: Any = None, device: Any = None, pin_memory: bool = False,
            requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """``randint(high, size)`` / ``randint(low, high, size)``: integers in [low, high), int64
    unless ``dtype`` says otherwise (``size`` is a tuple).

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.randint(3, 10, (2, 3))
        tensor([[7, 6, 3],
                [5, 4, 5]])
    """
    _place(device, pin_memory)
    factory_kw = dtype is not None or out is not None or requires_grad
    low, high, shape = _randint_args(args, kwargs, factory_kw)
    _check_generator("randint", generator, args, kwargs)
    d = _out_dtype(dtype, out, _dtype.int64)
    _check_random_dtype(d.np, True)
    draw = _random_draw(_engine(generator), low, high)
    if out is not None:
        return _out_fill(out, shape, "randint", draw)
    return _new(_draw_new(shape, d.np, draw), requires_grad)


def _randint_args(args: tuple, kwargs: dict, factory_kw: bool) -> tuple[int, int, tuple]:
    """Bind randint's ``(high, size)`` or ``(low, high, size)``, with torch's messages."""
    if set(kwargs) - {"low", "high", "size"} or len(args) > 3:
        raise _invalid("randint", args, kwargs)
    three = "low" in kwargs or len(args) + len(set(kwargs) & {"high", "size"}) >= 3
    names = ("low", "high", "size") if three else ("high", "size")
    bound = dict(zip(names, args, strict=False))
    for k, v in kwargs.items():
        if k in bound or k not in names:
            raise _invalid("randint", args, kwargs)
        bound[k] = v
    missing = [k for k in names if k not in bound]
    if missing:
        if factory_kw:
            raise TypeError(f"randint() missing {len(missing)} required positional arguments: "
                            + ", ".join(f'"{k}"' for k in missing))
        raise _invalid("randint", args, kwargs)
    size = bound["size"]
    if three:
        if not (_is_int(bound["low"]) and _is_int(bound["high"])) or not isinstance(
            size, (tuple, list)
        ) or not all(_is_int(s) for s in size):
            raise _invalid("randint", args, kwargs)
        return _as_int(bound["low"]), _as_int(bound["high"]), _int_tuple("randint", size, 3)
    high = _int_arg("randint", "high", None if "high" in kwargs else 1, bound["high"])
    return 0, high, _int_tuple("randint", size, None if "size" in kwargs else 2)


_RANDPERM_LIMITS = {
    "int8": (127, "value cannot be converted to type int8_t without overflow"),
    "uint8": (255, "value cannot be converted to type uint8_t without overflow"),
    "int16": (32767, "value cannot be converted to type int16_t without overflow"),
}


def randperm(n: int = _MISSING, *, generator: Generator | None = None, out: Tensor | None = None,
             dtype: Any = None, layout: Any = None, device: Any = None,
             pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """A random permutation of 0..n-1 (int64 unless ``dtype`` says otherwise).

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.randperm(5)
        tensor([4, 0, 1, 3, 2])
    """
    _place(device, pin_memory)
    if n is _MISSING:
        raise _invalid("randperm", (), {})
    n = _int_arg("randperm", "n", 1, n)
    _check_generator("randperm", generator, (n,), {})
    d = _out_dtype(dtype, out, _dtype.int64)
    _checked_shape((n,))
    name = d.name
    if name in ("bool", "complex64", "complex128"):
        raise NotImplementedError(f"\"randperm\" not implemented for '{scalar_type_name(d)}'")
    if name in _RANDPERM_LIMITS and n - 1 > _RANDPERM_LIMITS[name][0]:
        raise RuntimeError(_RANDPERM_LIMITS[name][1])
    if name == "float16" and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if name == "float32" and n > 2**24 + 1:
        raise RuntimeError("n cannot be greater than 2^24+1 for Float type.")
    values = _engine(generator).randperm(n, d.np)
    if out is not None:
        return _write_out(values, out, "randperm")
    return _new(values, requires_grad)


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
              layout: Any = None, device: Any = None, pin_memory: bool = False,
              requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Uniform values in [0, 1) shaped like ``input`` (its dtype unless ``dtype`` is given).

    The result keeps input's memory order, as torch's does, so a transposed input gets the
    values torch gives it.
    """
    _place(device, like=True)
    d = _like_dtype("rand_like", input, dtype)
    draw = _uniform_draw(_engine(generator), 0.0, 1.0)
    return _new(_draw_like(input._data, d.np, draw), requires_grad)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: Any = None,
               layout: Any = None, device: Any = None, pin_memory: bool = False,
               requires_grad: bool = False, memory_format: Any = None) -> Tensor:
    """Standard normal values shaped like ``input`` (see :func:`rand_like`)."""
    _place(device, like=True)
    d = _like_dtype("randn_like", input, dtype)
    draw = _normal_draw(_engine(generator), 0.0, 1.0, d.is_complex)
    return _new(_draw_like(input._data, d.np, draw), requires_grad)


def randint_like(input: Tensor, *args: int, generator: Generator | None = None,
                 dtype: Any = None, layout: Any = None, device: Any = None,
                 pin_memory: bool = False, requires_grad: bool = False,
                 memory_format: Any = None, **kwargs: int) -> Tensor:
    """``randint_like(input, high)`` / ``randint_like(input, low, high)``: integers in
    [low, high) shaped like ``input``, in its dtype unless ``dtype`` is given."""
    _place(device, like=True)
    d = _like_dtype("randint_like", input, dtype)
    low, high = _bind("randint_like", ("low", "high"), args, kwargs)
    if high is _MISSING:
        if low is _MISSING:
            raise _invalid("randint_like", (input,), {})
        low, high = 0, low
        if isinstance(high, Tensor):  # randint_like(input, high_tensor)
            if high._data.size != 1:
                raise RuntimeError("high must be a scalar tensor and on CPU")
            high = int(high._data.reshape(-1)[0])
    elif low is _MISSING:
        low = 0
    if not (_is_int(low) and _is_int(high)):
        raise _invalid("randint_like", (input, *args), kwargs)
    _check_random_dtype(d.np, True)
    draw = _random_draw(_engine(generator), _as_int(low), _as_int(high))
    return _new(_draw_like(input._data, d.np, draw), requires_grad)


def _like_dtype(fname: str, input: Any, dtype: Any) -> _dtype.dtype:
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_typename(input)}")
    return _to_dtype(dtype, input.dtype)


def normal(mean: Any = _MISSING, std: Any = 1.0, size: Any = None, *,
           generator: Generator | None = None, out: Tensor | None = None, dtype: Any = None,
           layout: Any = None, device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """Normal values: ``normal(mean, std)`` with tensors (or one tensor and one number), or
    ``normal(mean, std, size)`` with numbers.

    With tensors, the result has the broadcast shape and mean's dtype (std's if mean is a
    number): torch draws ``normal_(0, 1)`` and then computes ``value * std + mean``.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.normal(2.0, 3.0, size=(3,))
        tensor([ 6.6230,  1.1197, -4.5364])
        >>> torch.normal(torch.zeros(2), torch.ones(2))
        tensor([ 0.5684, -1.0845])
    """
    _place(device, pin_memory)
    given = [a for a in (mean, std, size) if a is not _MISSING and a is not None]
    factory_kw = dtype is not None or requires_grad or layout is not None
    if mean is _MISSING:
        raise TypeError('normal() missing 1 required positional arguments: "mean"')
    m_t, s_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    m_num = not m_t and _is_number(mean)
    s_num = std is _MISSING or (not s_t and _is_number(std))
    if (m_t or s_t) and (size is not None or factory_kw) or not (m_t or m_num) or not (
        s_t or s_num
    ):
        raise _invalid("normal", given, {})
    _check_generator("normal", generator, given, {})
    eng = _engine(generator)
    if not (m_t or s_t):
        if std is _MISSING or size is None or not isinstance(size, (tuple, list)) or not all(
            _is_int(s) for s in size
        ):
            raise _invalid("normal", given, {})
        shape = _checked_shape(tuple(_as_int(s) for s in size))
        d = _out_dtype(dtype, out, _dtype.get_default_dtype())
        draw = _normal_draw(eng, float(mean), float(std), d.is_complex)
        if out is not None:
            return _out_fill(out, shape, "normal", draw)
        return _new(_draw_new(shape, d.np, draw), requires_grad)
    return _normal_tensors(eng, mean, 1.0 if std is _MISSING else std, out)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)


def _normal_tensors(eng: Engine, mean: Any, std: Any, out: Tensor | None) -> Tensor:
    """``normal`` with a tensor mean and/or std: ``normal_(0, 1)`` (``normal_(0, std)`` for a
    number std) into a contiguous result of mean's dtype, then ``*= std``, ``+= mean``."""
    m_t, s_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    d = (mean if m_t else std)._data.dtype
    if s_t and not bool(np.all(std._data >= 0)):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    if not s_t:
        _check_std(float(std))
    if d.kind not in "fc" and not _is_bf16(d):
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_type_name(d)}'")
    try:
        shape = np.broadcast_shapes(
            mean._data.shape if m_t else (), std._data.shape if s_t else ()
        )
    except ValueError:
        raise _broadcast_error(mean._data, std._data) from None
    if s_t:
        values = _draw_new(shape, d, _normal_draw(eng, 0.0, 1.0, d.kind == "c"))
        values = _inplace_arith(values, std._data, np.multiply)
    else:
        values = _draw_new(shape, d, _normal_draw(eng, 0.0, float(std), d.kind == "c"))
    values = _inplace_arith(values, mean._data if m_t else float(mean), np.add)
    if out is not None:
        return _write_out(values, out, "normal")
    if m_t and s_t:
        return _result(values, _NORMAL_TT, (mean, std))
    return _result(values, _NORMAL_TF if m_t else _NORMAL_FT, (mean,) if m_t else (std,))


def _inplace_arith(a: np.ndarray, b: Any, op: Any) -> np.ndarray:
    """``a.op_(b)`` as torch computes it: in the promoted dtype (float for float16/bfloat16),
    rounded once to a's dtype. A number ``b`` takes a's dtype's compute type."""
    d = a.dtype
    if not isinstance(b, np.ndarray):
        if d.kind == "c":
            return op(a, np.asarray(b, dtype=d)).astype(d)
        scalar_type = np.float64 if d == np.float64 else np.float32
        return op(a.astype(scalar_type), scalar_type(b)).astype(d)
    bt, at = _dtype._FROM_NP[b.dtype], _dtype._FROM_NP[d]
    common = _dtype.promote_types(at, bt).np
    compute = np.dtype(np.float32) if common.itemsize == 2 and common.kind != "c" else common
    res = op(a.astype(compute), b.astype(compute))
    if res.dtype == np.float64 and d.itemsize == 2:
        res = res.astype(np.float32)  # c10's double -> half/bfloat16 goes through float
    return res.astype(d)


def bernoulli(input: Tensor, p: Any = None, *, generator: Generator | None = None,
              out: Tensor | None = None) -> Tensor:
    """``bernoulli(input)``: 1 with probability ``input`` (elementwise), else 0, in input's
    dtype; ``bernoulli(input, p)``: probability p for every element.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.bernoulli(torch.tensor([0.1, 0.9, 0.5]))
        tensor([0., 1., 1.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{_typename(input)}")
    eng = _engine(generator)
    dt = input._data.dtype
    if p is None:
        if dt.kind == "c":
            raise NotImplementedError(
                f"\"bernoulli_tensor_cpu_self_\" not implemented for '{_type_name(dt)}'"
            )
        draw = _bernoulli_tensor_draw(eng, input, None)
        op = _BERNOULLI
    else:
        draw = _bernoulli_draw(eng, _float_arg("bernoulli", "p", 2, p))
        if dt.kind == "c":
            raise NotImplementedError(f"\"bernoulli_scalar_cpu_\" not implemented for "
                                      f"'{_type_name(dt)}'")
        op = _BERNOULLI_P
    values = _draw_new(input._data.shape, dt, draw)  # a contiguous result, whatever input is
    if out is not None:
        return _write_out(values, out, "bernoulli")
    if _state.enabled and input._requires_grad:
        return apply(op, input, values=[values])
    return _new(values)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None, out: Tensor | None = None) -> Tensor:
    """Indices drawn from the categories whose weights are ``input`` (1-D, or 2-D: one row per
    distribution), without replacement unless ``replacement=True``.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.multinomial(torch.tensor([0.1, 0.2, 0.3, 0.4]), 2)
        tensor([2, 1])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not "
                        f"{_typename(input)}")
    k = _int_arg("multinomial", "num_samples", 2, num_samples)
    eng = _engine(generator)
    probs = input._data
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not (probs.dtype.kind == "f" or _is_bf16(probs.dtype)):
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           + _type_name(probs.dtype))
    if out is not None and out._data.dtype != np.int64:
        raise RuntimeError("multinomial expects Long tensor out, got: "
                           + _type_name(out._data.dtype))
    n_cat = probs.shape[-1]
    rng.check_sample_count(k, n_cat, replacement)
    if n_cat > 2**24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    if replacement and k > 1:
        values = _multinomial_replacement(eng, probs, k)
    else:
        values = _multinomial_race(eng, probs, k)
    if out is not None:
        return _write_out(values, out, "multinomial")
    return _new(values)


def _multinomial_replacement(eng: Engine, probs: np.ndarray, k: int) -> np.ndarray:
    """With replacement, torch checks each row as it gets to it: rows before a bad one have
    drawn their samples by the time it raises."""
    rows = probs.reshape(-1, probs.shape[-1]) if probs.ndim == 2 else probs.reshape(1, -1)
    rf = rows.astype(np.float64)
    for i, row in enumerate(rf):
        message = None
        neg, notfinite = ~(row >= 0), ~np.isfinite(row)
        if neg.any() or notfinite.any():
            first_neg = int(np.argmax(neg)) if neg.any() else row.size
            first_inf = int(np.argmax(notfinite)) if notfinite.any() else row.size
            message = (
                "invalid multinomial distribution (encountering probability entry < 0)"
                if first_neg <= first_inf
                else "invalid multinomial distribution (encountering probability entry = "
                "infinity or NaN)"
            )
        elif not row.sum() > 0:
            message = "invalid multinomial distribution (sum of probabilities <= 0)"
        if message is not None:
            if i:
                eng.multinomial(np.ascontiguousarray(rows[:i]), k, True)
            raise RuntimeError(message)
    return eng.multinomial(np.ascontiguousarray(probs), k, True)


def _multinomial_race(eng: Engine, probs: np.ndarray, k: int) -> np.ndarray:
    """Without replacement (or one sample): ``q = exponential_(1)`` laid out like probs (so
    drawn in its memory order), then per row the argmax (k == 1) or torch's top k of
    ``probs / q``, divided in probs' dtype."""
    pf = probs.astype(np.float64)
    if not (np.isfinite(pf).all() and (pf >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (pf.reshape(-1, probs.shape[-1]).sum(axis=1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    q = _draw_like(probs, probs.dtype, _exponential_draw(eng, 1.0, probs.dtype))
    ratio = (probs / q).astype(np.float64).reshape(-1, probs.shape[-1])
    if k == 1:
        out = np.argmax(ratio, axis=1)[:, None]
    else:
        out = _topk_indices(ratio, k)
    out = out.astype(np.int64)
    return out[0] if probs.ndim == 1 else out


def _topk_indices(ratio: np.ndarray, k: int) -> np.ndarray:
    """The indices of torch's CPU ``topk(k)`` (largest, sorted) along the last dim of 2-D
    ``ratio``. Rows without ties have one answer (a stable sort); rows with ties replay
    torch's selection (``_sort_emulation``: tied values come out in whatever order
    libstdc++'s partial_sort or nth_element and sort leave them)."""
    out = np.argsort(-ratio, axis=1, kind="stable")[:, :k]
    n = ratio.shape[1]
    srt = np.sort(ratio, axis=1)
    tied = (srt[:, 1:] == srt[:, :-1]).any(axis=1) if n > 1 else np.zeros(len(ratio), bool)
    for r in np.nonzero(tied)[0]:
        out[r] = topk_positions(ratio[r], k, largest=True, sorted=True)
    return out


def _float_input(fname: str, x: Any, what: str = "input") -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{what}' (position 1) must be Tensor, not "
                        f"{_typename(x)}")
    if x._data.dtype.kind != "f" or x._data.dtype.itemsize == 2:
        raise NotImplementedError(
            f"\"{fname}_cpu\" not implemented for '{_type_name(x._data.dtype)}'")
    return x


def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """``torch.poisson(rates)``: a Poisson(rate) count per element, in rates' dtype (see
    ``_sampling``); its gradient is zero.

    Example:
        >>> import tapegrad as torch
        >>> _ = torch.manual_seed(0)
        >>> torch.poisson(torch.tensor([1.0, 20.0]))
        tensor([ 2., 23.])
    """
    _float_input("poisson", input)
    values = _sampling.poisson(_engine(generator), input._data)
    return _result(values, _POISSON, (input,)) if _state.enabled else _new(values)


def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """``torch.binomial(count, prob)``: a Binomial(count, prob) draw per element."""
    _float_input("binomial", count, "count")
    if not isinstance(prob, Tensor):
        raise TypeError(f"binomial(): argument 'prob' (position 2) must be Tensor, not "
                        f"{_typename(prob)}")
    values = _sampling.binomial(_engine(generator), count._data, prob._data)
    return _result(values, _BINOMIAL, (count, prob)) if _state.enabled else _new(values)


def _standard_gamma(input: Tensor, generator: Generator | None = None) -> Tensor:
    """``torch._standard_gamma(alpha)``: a Gamma(alpha, 1) draw per element, differentiable
    in alpha (the implicit reparameterization gradient)."""
    _float_input("gamma", input)
    values = _sampling.standard_gamma(_engine(generator), input._data)
    return _sampling.draw_result(values, _sampling._STANDARD_GAMMA, input)


def _sample_dirichlet(input: Tensor, generator: Generator | None = None) -> Tensor:
    """``torch._sample_dirichlet(alpha)``: a Dirichlet(alpha) draw per row of the last dim."""
    _float_input("dirichlet", input)
    values = _sampling.sample_dirichlet(_engine(generator), input._data)
    return _sampling.draw_result(values, _sampling._DIRICHLET, input)


def _standard_gamma_grad(input: Tensor, output: Tensor) -> Tensor:
    """``torch._standard_gamma_grad(alpha, x)``: dx/dalpha for x ~ Gamma(alpha, 1)."""
    return _new(_sampling.standard_gamma_grad(input._data, output._data))


def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """``torch._dirichlet_grad(x, alpha, total)``."""
    return _new(_sampling.dirichlet_grad(x._data, alpha._data, total._data))


_POISSON = _random_op("poisson", "PoissonBackward0")
_BINOMIAL = OpDef("binomial", "NotImplemented", _take_values, (), False, False, 1)
_BINOMIAL.rule = _no_derivative_of("binomial")
_BINOMIAL.node_cls._cpp_name = "torch::autograd::NotImplemented"  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------
# Tensor methods
# ---------------------------------------------------------------------------------------------


def _tensor_bernoulli(self: Tensor, p: Any = None, *,
                      generator: Generator | None = None) -> Tensor:
    """``Tensor.bernoulli(p=None, *, generator=None)``: see :func:`bernoulli`."""
    return bernoulli(self, p, generator=generator)


def _tensor_multinomial(self: Tensor, num_samples: int, replacement: bool = False, *,
                        generator: Generator | None = None) -> Tensor:
    """``Tensor.multinomial``: see :func:`multinomial`."""
    return multinomial(self, num_samples, replacement, generator=generator)


Tensor.uniform_ = uniform_  # type: ignore[attr-defined]
Tensor.normal_ = normal_  # type: ignore[attr-defined]
Tensor.random_ = random_  # type: ignore[attr-defined]
Tensor.bernoulli_ = bernoulli_  # type: ignore[attr-defined]
Tensor.exponential_ = exponential_  # type: ignore[attr-defined]
Tensor.cauchy_ = cauchy_  # type: ignore[attr-defined]
Tensor.log_normal_ = log_normal_  # type: ignore[attr-defined]
Tensor.geometric_ = geometric_  # type: ignore[attr-defined]
Tensor.bernoulli = _tensor_bernoulli  # type: ignore[attr-defined]
Tensor.multinomial = _tensor_multinomial  # type: ignore[attr-defined]


def _no_worker_generator() -> Any:
    return None


# The DataLoader's thread workers keep a generator each; utils/data/_worker.py, above this
# module, hands over how to find the current one when it loads (before any worker runs).
_worker_generator: Callable[[], Any] = _no_worker_generator


def register_worker_generator(find: Callable[[], Any]) -> None:
    """Install how ``thread_safe_generator`` finds this thread worker's generator."""
    global _worker_generator
    _worker_generator = find


def thread_safe_generator() -> Any:
    """The generator of this DataLoader thread worker; None elsewhere (ops then use the global
    one)."""
    return _worker_generator()
