"""Autocast's state and its mechanism: the per-thread flags ``torch.is_autocast_enabled`` and
friends report, and the casts the listed ops make while CPU autocast is on.

Costs nothing while autocast is off: no op reads a flag for it. Entering the first region
(``set_autocast_enabled("cpu", True)``, which ``torch.autocast.__enter__`` calls) installs the
casts, leaving the last one takes them out again:

    registry entries on a list       entry.__class__ = _AutocastOp: its __call__ casts the inputs
    public composites on a list      fn.__code__ = a trampoline into _call_listed, which casts
                                     the arguments and runs the original code with autocast
                                     excluded (torch's autocast kernel redispatches below itself:
                                     the composite's inner ops see no autocast)

Swapping the code rather than rebinding names catches every reference to the function: its
public names, ``from ... import`` copies in other modules, and a ``loss_fn = F.cross_entropy``
saved by the user before the region began.

Which op gets which cast is data (_autocast_lists.py). A cast is ``tensor.to(dtype)``, a
differentiable ToCopyBackward0 node, so gradients reach float32 parameters in float32.

The cache: within a region, the low-precision cast of a float32 leaf that requires grad (a
weight) is made once and reused by every op that uses it (a model that runs a layer twice, or a
loop of forwards, casts each weight once); the outermost ``autocast`` clears it on exit.

The state is per thread, as torch's; the installed casts are process-wide, and each checks its
own thread's state, so another thread's ops run unchanged.
"""

from __future__ import annotations

import inspect
import sys
import threading
import types
import warnings
import weakref
from collections.abc import Callable
from typing import Any

from . import _autocast_lists as lists
from . import _dtype
from ._conversions import convert as _convert
from ._device import device as _device
from ._tensor import Tensor
from .ops._registry import REGISTRY, OpDef, apply

# the devices that have an autocast state, with their default low-precision dtype
_DEFAULT_DTYPES = {
    "cpu": _dtype.bfloat16, "cuda": _dtype.float16, "ipu": _dtype.float16,
    "xpu": _dtype.float16, "maia": _dtype.bfloat16, "xla": _dtype.bfloat16,
    "mps": _dtype.float16, "hpu": _dtype.bfloat16, "mtia": _dtype.float16,
    "privateuseone": _dtype.float16,
}
_NO_AUTOCAST_KEY = ("unknown device type for autocast in "
                    "get_autocast_dispatch_key_from_device_type")


class _State(threading.local):
    def __init__(self) -> None:
        self.cpu = False  # CPU autocast on in this thread: what the installed casts read
        self.excluded = False  # inside a listed composite: its inner ops are not cast again
        self.enabled: dict[str, bool] = dict.fromkeys(_DEFAULT_DTYPES, False)
        self.dtypes: dict[str, Any] = dict(_DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0


_state = _State()


def _device_type(device_type: Any, func: str, unknown: str = _NO_AUTOCAST_KEY) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"{func}(): argument 'device_type' (position 1) must be str, not "
                        f"{type(device_type).__name__}")
    kind = _device(device_type).type
    if kind not in _DEFAULT_DTYPES:
        raise RuntimeError(unknown)
    return kind


# ---------------------------------------------------------------------------------------------
# torch.is_autocast_enabled & co.
# ---------------------------------------------------------------------------------------------

def is_autocast_enabled(device_type: str = "cuda") -> bool:
    """Whether autocast is on for ``device_type`` in this thread (no argument: "cuda")."""
    return _state.enabled[_device_type(device_type, "is_autocast_enabled")]


def set_autocast_enabled(device_type: Any = None, enabled: Any = None) -> None:
    """``set_autocast_enabled(device_type, enabled)``, or ``set_autocast_enabled(enabled)``
    for "cuda"."""
    if device_type is None and enabled is not None:  # set_autocast_enabled(enabled=...)
        device_type, enabled = enabled, None
    if enabled is None:
        device_type, enabled = "cuda", device_type
        if not isinstance(enabled, bool):
            raise TypeError("set_autocast_enabled(): argument 'enabled' (position 1) must be "
                            f"bool, not {type(enabled).__name__}")
    elif not isinstance(enabled, bool):
        raise TypeError("set_autocast_enabled(): argument 'enabled' (position 2) must be bool, "
                        f"not {type(enabled).__name__}")
    kind = _device_type(device_type, "set_autocast_enabled")
    _state.enabled[kind] = enabled
    if kind == "cpu" and _state.cpu != enabled:
        _state.cpu = enabled
        _thread_switched(enabled)


def get_autocast_dtype(device_type: str) -> Any:
    """The low-precision dtype autocast uses for ``device_type`` in this thread."""
    kind = _device(device_type).type if isinstance(device_type, str) else None
    if kind == "hip":
        return _dtype.float16
    return _state.dtypes[_device_type(device_type, "get_autocast_dtype",
                                      "unsupported scalarType")]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    kind = _device(device_type).type
    if kind in _state.dtypes:
        _state.dtypes[kind] = dtype


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = enabled


def autocast_increment_nesting() -> int:
    """One more autocast region open in this thread; returns the depth."""
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    """One autocast region fewer; returns the depth (``autocast`` clears the cache at 0)."""
    _state.nesting -= 1
    return _state.nesting


def clear_autocast_cache() -> None:
    """Forget the cached casts of weights (the outermost ``autocast`` does this on exit)."""
    _CACHE.clear()


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead. (Triggered "
                  "internally at /__w/pytorch/pytorch/torch/csrc/autograd/init.cpp:"
                  f"{_INIT_LINES[old.split('(')[0]]}.)", DeprecationWarning, stacklevel=3)


# where torch 2.13's warnings say they come from
_INIT_LINES = {
    "is_autocast_cpu_enabled": 883, "set_autocast_cpu_enabled": 874,
    "is_autocast_ipu_enabled": 909, "set_autocast_ipu_enabled": 900,
    "is_autocast_xla_enabled": 935, "set_autocast_xla_enabled": 926,
    "set_autocast_gpu_dtype": 952, "set_autocast_cpu_dtype": 967,
    "set_autocast_ipu_dtype": 982, "set_autocast_xla_dtype": 997,
    "get_autocast_gpu_dtype": 1007, "get_autocast_cpu_dtype": 1016,
    "get_autocast_ipu_dtype": 1025, "get_autocast_xla_dtype": 1034,
}


def is_autocast_cpu_enabled() -> bool:
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def is_autocast_ipu_enabled() -> bool:
    _deprecated("is_autocast_ipu_enabled()", "is_autocast_enabled('ipu')")
    return is_autocast_enabled("ipu")


def set_autocast_ipu_enabled(enabled: bool, /) -> None:
    _deprecated("set_autocast_ipu_enabled(enabled)", "set_autocast_enabled('ipu', enabled)")
    set_autocast_enabled("ipu", enabled)


def is_autocast_xla_enabled() -> bool:
    _deprecated("is_autocast_xla_enabled()", "is_autocast_enabled('xla')")
    return is_autocast_enabled("xla")


def set_autocast_xla_enabled(enabled: bool, /) -> None:
    _deprecated("set_autocast_xla_enabled(enabled)", "set_autocast_enabled('xla', enabled)")
    set_autocast_enabled("xla", enabled)


def get_autocast_cpu_dtype() -> Any:
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def set_autocast_cpu_dtype(dtype: Any) -> None:
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def get_autocast_gpu_dtype() -> Any:
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def set_autocast_gpu_dtype(dtype: Any) -> None:
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def get_autocast_ipu_dtype() -> Any:
    _deprecated("get_autocast_ipu_dtype()", "get_autocast_dtype('ipu')")
    return get_autocast_dtype("ipu")


def set_autocast_ipu_dtype(dtype: Any, /) -> None:
    _deprecated("set_autocast_ipu_dtype(dtype)", "set_autocast_dtype('ipu', dtype)")
    set_autocast_dtype("ipu", dtype)


def get_autocast_xla_dtype() -> Any:
    _deprecated("get_autocast_xla_dtype()", "get_autocast_dtype('xla')")
    return get_autocast_dtype("xla")


def set_autocast_xla_dtype(dtype: Any, /) -> None:
    _deprecated("set_autocast_xla_dtype(dtype)", "set_autocast_dtype('xla', dtype)")
    set_autocast_dtype("xla", dtype)


# ---------------------------------------------------------------------------------------------
# The casts
# ---------------------------------------------------------------------------------------------

# id(leaf) -> (weak reference to the leaf, its cast): the casts of weights within a region
_CACHE: dict[int, tuple[Any, Any]] = {}


def _eligible(t: Any) -> bool:
    """A tensor autocast may cast: floating point, not float64."""
    kind = t._data.dtype.kind
    return kind == "f" and t._data.dtype.itemsize != 8 or kind == "V"  # "V": bfloat16


def _cast(t: Any, dtype: Any) -> Any:
    """``t.to(dtype)``, through the cache for a float32 leaf that requires grad."""
    nd = t._data.dtype
    src = _dtype._FROM_NP[nd]
    if src is dtype or not (nd.kind == "f" and nd.itemsize != 8 or nd.kind == "V"):
        return t  # (the test of _eligible, inline: this runs for every input of a listed op)
    if (src is _dtype.float32 and t._requires_grad and t.grad_fn is None and t._base is None
            and dtype is _state.dtypes["cpu"] and _state.cache_enabled):
        hit = _CACHE.get(id(t))
        if hit is not None and hit[0]() is t:
            return hit[1]
        out = _convert(t, dtype)
        _CACHE[id(t)] = (weakref.ref(t), out)
        return out
    return _convert(t, dtype)


def _promote_dtype(tensors: list) -> Any:
    """The widest eligible type among ``tensors``, starting from the autocast dtype (torch's
    ``prioritize``: float64 ignored, float32 wins, a second low type is an error)."""
    low = _state.dtypes["cpu"]
    current = low
    for t in tensors:
        if not _eligible(t):
            continue
        d = t.dtype
        if d is _dtype.float32 or current is _dtype.float32:
            current = _dtype.float32
        elif d is not low:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _tensors_in(values: Any) -> list:
    found = []
    for v in values:
        if isinstance(v, Tensor):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            found.extend(x for x in v if isinstance(x, Tensor))
    return found


def _cast_all(values: Any, dtype: Any) -> Any:
    if isinstance(values, Tensor):
        return _cast(values, dtype)
    if isinstance(values, (list, tuple)) and any(isinstance(x, Tensor) for x in values):
        return type(values)(_cast(x, dtype) if isinstance(x, Tensor) else x for x in values)
    return values


def _target(policy: str, args: tuple, kwargs: dict) -> Any:
    if policy == lists.LOWER:
        return _state.dtypes["cpu"]
    if policy == lists.FP32:
        return _dtype.float32
    return _promote_dtype(_tensors_in(args) + _tensors_in(kwargs.values()))


def _call_listed(key: int, args: tuple, kwargs: dict) -> Any:
    """What a listed public function does while autocast is installed (see _install)."""
    fn, policy, unlisted, signature = _listed[key]
    state = _state
    if not state.cpu or state.excluded:
        return fn(*args, **kwargs)
    if unlisted is not None:
        try:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            off = unlisted(bound.arguments)
        except TypeError:  # bad arguments: the function raises torch's error itself
            off = False
        if off:
            return _excluded(fn, args, kwargs)
    if policy == lists.UNLISTED:
        return fn(*args, **kwargs)
    if policy == lists.CONTRACTION:
        return _contraction(fn, args, kwargs, state.dtypes["cpu"])
    dtype = _target(policy, args, kwargs)
    args = tuple([_cast_all(a, dtype) for a in args])
    if kwargs:
        kwargs = {k: _cast_all(v, dtype) for k, v in kwargs.items()}
    return _excluded(fn, args, kwargs)


def _excluded(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """``fn(*args, **kwargs)`` with autocast off for the ops inside it."""
    state = _state
    state.excluded = True
    try:
        return fn(*args, **kwargs)
    finally:
        state.excluded = False


def _contraction(fn: Callable, args: tuple, kwargs: dict, low: Any) -> Any:
    """einsum: torch contracts each pair of operands with one ``bmm`` when an index is summed
    between them (a plain product otherwise, with nothing summed: unlisted). The bmm's way:
    operands rounded to the low type, products accumulated in float32, the result rounded
    once."""
    operands = args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    equation = str(args[0] if args else kwargs.get("equation", "")).replace(" ", "")
    lhs, _, rhs = equation.partition("->")
    terms = lhs.split(",")
    if not _sums_between(terms, rhs if "->" in equation else None) or not all(
            _eligible(t) for t in operands):
        return _excluded(fn, args, kwargs)
    widened = [_cast(t, low).to(_dtype.float32) for t in operands]
    return _cast(_excluded(fn, (args[0], *widened), {}), low)


def _sums_between(terms: list, rhs: str | None) -> bool:
    """Whether an index appears in two of the operands and is summed away."""
    if len(terms) < 2:
        return False
    letters = "".join(terms)
    if rhs is None:  # implicit output: the indices that appear once, sorted
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    shared = [c for c in set(letters) if sum(c in t for t in terms) >= 2]
    return any(c not in rhs for c in shared)


# ---------------------------------------------------------------------------------------------
# Installing and removing the casts
# ---------------------------------------------------------------------------------------------

_lock = threading.Lock()
_threads_on = 0  # threads with CPU autocast on
# per listed public function: its twin (the original code), policy, condition, signature
_listed: list[tuple[Callable, str, Any, Any]] = []
_swapped: list[tuple[Any, Any, Any]] = []  # (function, original code, trampoline code)
_registry_ops: list[Any] = []
_KEY = -424242  # the constant that each copy of _trampoline's code replaces by its key


# The code a listed public function runs while autocast is installed: a call into
# _call_listed, under the name _prepare puts into the function's module (and leaves there:
# another thread may be about to look it up when the last region closes).
def _trampoline(*args: Any, **kwargs: Any) -> Any:
    return __tapegrad_autocast__(-424242, args, kwargs)  # type: ignore[name-defined]  # noqa: F821


def _thread_switched(on: bool) -> None:
    global _threads_on
    with _lock:
        _threads_on += 1 if on else -1
        if on and _threads_on == 1:
            _install()
        elif not on and _threads_on == 0:
            _uninstall()


def _resolve(path: str) -> tuple[Any, str]:
    owner: Any = sys.modules["tapegrad"]  # the package (loaded before any of its modules)
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    return owner, name


def _prepare(fn: Any, policy: str, unlisted: Any) -> tuple[Any, Any, Any]:
    """For one listed public function: a twin function object that keeps its original code,
    registered under a key, and a copy of the trampoline's code that calls ``_call_listed``
    with that key (named as the function, for tracebacks)."""
    twin = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    twin.__kwdefaults__ = fn.__kwdefaults__
    key = len(_listed)
    _listed.append((twin, policy, unlisted,
                    inspect.signature(twin) if unlisted is not None else None))
    template = _trampoline.__code__
    original = fn.__code__
    code = template.replace(co_consts=tuple(key if c == _KEY else c for c in template.co_consts),
                            co_name=original.co_name, co_qualname=original.co_qualname,
                            co_filename=original.co_filename,
                            co_firstlineno=original.co_firstlineno)
    fn.__globals__["__tapegrad_autocast__"] = _call_listed
    return fn, original, code


def _install() -> None:
    """Swap the listed functions' code for their trampolines (every reference to a function
    then goes through ``_call_listed``: its public names, ``from ... import`` copies, a
    ``loss_fn = F.cross_entropy`` saved before the region), and the listed registry entries'
    class for ``_AutocastOp``. Prepared once; later installs are assignments."""
    if not _swapped:
        done: set[int] = set()
        for path, policy in lists.PUBLIC_POLICY.items():
            owner, name = _resolve(path)
            fn = owner.__dict__.get(name) if owner is Tensor else getattr(owner, name, None)
            if isinstance(fn, types.FunctionType) and id(fn) not in done:
                done.add(id(fn))
                _swapped.append(_prepare(fn, policy, lists.UNLISTED_WHEN.get(path)))
        _registry_ops.extend(REGISTRY[name] for name in lists.REGISTRY_POLICY
                             if name in REGISTRY)
    for fn, _, code in _swapped:
        fn.__code__ = code
    for op in _registry_ops:
        op.__class__ = _AutocastOp


def _uninstall() -> None:
    for fn, original, _ in _swapped:
        fn.__code__ = original
    for op in _registry_ops:
        op.__class__ = OpDef


def _registry_call(op: Any, inputs: tuple, params: dict) -> Any:
    state = _state
    if state.cpu and not state.excluded:
        policy = lists.REGISTRY_POLICY[op.name]
        dtype = _target(policy, inputs, {})
        return apply(op, *[_cast_all(x, dtype) for x in inputs], **params)
    return apply(op, *inputs, **params)


def _autocast_op_class() -> type:
    class _AutocastOp(OpDef):
        """A registry entry on a list while autocast is installed: casts, then applies."""

        __slots__ = ()

        def __call__(self, *inputs: Any, **params: Any) -> Any:
            return _registry_call(self, inputs, params)

    return _AutocastOp


_AutocastOp: Any = _autocast_op_class()
