"""``torch.compiler``'s functions (and ``torch._dynamo``'s of the same names): the stance, the
cache, and the markers user code puts around compiled regions.

What each one means here, where a capture records NumPy calls instead of tracing bytecode:

* ``set_stance``: ``"force_eager"`` runs every compiled callable eagerly; ``"eager_on_recompile"``
  runs a call eagerly when it would need a new capture (a new signature, or guards that fail)
  and the callable already has one; ``"fail_on_recompile"`` raises torch's error there instead;
  ``"eager_then_compile"`` and ``"aot_eager_then_compile"`` run a callable's first call eagerly.
  A function call, a context manager (the previous stance back on exit) and a decorator, as in
  torch.
* ``reset``: every compiled callable forgets its captures (the next call captures again).
* ``disable``: the function runs eagerly at every call. Called inside a capture it is a graph
  break (its Python must run at each call, so the call that reaches it runs eagerly).
* ``graph_break``: a graph break at that point (``torch._dynamo.graph_break()``).
* ``is_compiling``: True while a capture records (the branch taken then is the one replayed).
* ``allow_in_graph``, ``assume_constant_result``, ``mark_dynamic``, ``maybe_mark_dynamic``,
  ``mark_static``: accepted; a capture already records below the Python these hints are about,
  and every shape gets its own capture (see ``tapegrad/_compile.py`` on ``dynamic=``).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import Any

from .._compile import OptimizedModule
from ..nn.modules.module import Module
from . import capture as cap

# every compiled callable (replay.CompiledFunction adds itself): what reset() clears
live_functions: weakref.WeakSet = weakref.WeakSet()

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile",
           "eager_then_compile", "aot_eager_then_compile")


class DynamoStance:
    """The compiler's current stance (torch's ``DynamoStance``, printed the same way)."""

    __slots__ = ("stance", "skip_guard_eval_unsafe", "backend")

    def __init__(self, stance: str = "default", skip_guard_eval_unsafe: bool = False,
                 backend: Any = None) -> None:
        self.stance = stance
        self.skip_guard_eval_unsafe = skip_guard_eval_unsafe
        self.backend = backend

    def __repr__(self) -> str:
        return (f"DynamoStance(stance={self.stance!r}, skip_guard_eval_unsafe="
                f"{self.skip_guard_eval_unsafe}, backend={self.backend!r})")


stance = DynamoStance()  # read by CompiledFunction at each call (replay.py)


def _set(new: DynamoStance) -> DynamoStance:
    global stance
    prev, stance = stance, new
    return prev


def check_stance() -> str:
    """The current stance's name; torch's error for a name it does not know (raised at the
    first compiled call, as torch does, not by ``set_stance`` itself)."""
    name = stance.stance
    if name not in STANCES:
        raise RuntimeError(f"invalid torch.compile stance '{stance!r}'")
    return name


class set_stance:  # noqa: N801 - torch's name: a function, context manager and decorator
    """``torch.compiler.set_stance(stance="default", *, skip_guard_eval_unsafe=False,
    force_backend=None)``: set the compiler's stance now; as a context manager, the previous
    stance comes back on exit; as a decorator, the stance holds during each call.

    Example:
        >>> import tapegrad as torch
        >>> f = torch.compile(lambda x: x + 1)
        >>> with torch.compiler.set_stance("force_eager"):
        ...     f(torch.zeros(1))
        tensor([1.])
    """

    def __init__(self, stance: str = "default", *, skip_guard_eval_unsafe: bool = False,
                 force_backend: str | Callable | None = None) -> None:
        if cap._active is not None:
            raise AssertionError(f"Attempt to trace forbidden callable {set_stance}")
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = DynamoStance(stance, skip_guard_eval_unsafe, force_backend)
        self.prev = _set(self.stance)

    def __call__(self, fn: Callable) -> Callable:
        _set(self.prev)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return run

    def __enter__(self) -> None:
        _set(self.stance)

    def __exit__(self, *exc: Any) -> None:
        _set(self.prev)


def reset() -> None:
    """Every compiled callable forgets its captures; the next call of each captures anew."""
    for f in list(live_functions):
        f.reset()


def disable(fn: Callable | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """``fn`` to run eagerly at every call, never replayed (a graph break inside a capture);
    without ``fn``, a decorator."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)
    if getattr(fn, "_tapegrad_disabled", False):
        return fn
    why = "a function wrapped by torch.compiler.disable()" + (f" ({reason})" if reason else "")
    if isinstance(fn, Module):  # torch wraps the module; its calls run the disabled wrapper
        opt = OptimizedModule(fn)
        opt.__dict__["_compiled"] = _disabled(fn, type(fn).__name__, why)
        return opt
    return functools.wraps(fn)(_disabled(fn, getattr(fn, "__qualname__", repr(fn)), why))


def _disabled(fn: Callable, name: str, why: str) -> Callable:
    """``fn``, called as a graph break when a capture is recording."""

    def run(*args: Any, **kwargs: Any) -> Any:
        rec = cap._active
        if rec is not None and not rec.paused:
            rec.graph_break(f"call to {name}, {why}")
        return fn(*args, **kwargs)

    run._tapegrad_disabled = True  # type: ignore[attr-defined]
    return run


def graph_break(msg: str = "") -> None:
    """``torch._dynamo.graph_break()``: inside a capture, a graph break here; else nothing."""
    rec = cap._active
    if rec is not None and not rec.paused:
        rec.graph_break("call to torch._dynamo.graph_break()" + (f": {msg}" if msg else ""))


def is_compiling() -> bool:
    """True while a capture records (torch: while dynamo traces)."""
    return cap._active is not None


is_dynamo_compiling = is_compiling


def allow_in_graph(fn: Callable) -> Callable:
    """Accepted as torch's: a capture records the NumPy calls ``fn`` makes, whatever it is."""
    return fn


def assume_constant_result(fn: Callable) -> Callable:
    """Marked as torch marks it; a result that depends on tensor values is a graph break
    anyway."""
    fn._dynamo_marked_constant = True  # type: ignore[attr-defined]
    return fn


def cudagraph_mark_step_begin() -> None:
    """No CUDA graphs on a CPU: nothing to mark."""


def mark_dynamic(t: Any, index: Any, *, hint_override: int | None = None, min: int | None = None,
                 max: int | None = None, specialize_on: Any = None) -> None:
    """Noted on the tensor as torch notes it; each new shape is still captured on its own."""
    _mark(t, "_dynamo_dynamic_indices", index)


def maybe_mark_dynamic(t: Any, index: Any) -> None:
    _mark(t, "_dynamo_weak_dynamic_indices", index)


def mark_static(t: Any, index: Any = None) -> None:
    if index is None:
        return
    _mark(t, "_dynamo_static_indices", index)


def _mark(t: Any, attr: str, index: Any) -> None:
    dims = list(index) if isinstance(index, (list, tuple)) else [index]
    got = getattr(t, attr, None) or set()
    got.update(dims)
    setattr(t, attr, got)


# torch.compiler.list_backends() on a CPU build: the names and their tags (torch's registry)
_BACKENDS = {"cudagraphs": (), "inductor": (), "openxla": (), "tvm": (),
             "aot_eager": ("debug",), "aot_eager_decomp_partition": ("debug",),
             "eager": ("debug",)}


def list_backends(exclude_tags: tuple | None = ("debug", "experimental")) -> list[str]:
    """The backend names ``torch.compile(backend=...)`` takes, sorted."""
    skip = set(exclude_tags or ())
    return sorted(name for name, tags in _BACKENDS.items() if not skip.intersection(tags))


_default_backend: Any = "inductor"


def get_default_backend() -> Any:
    """The backend ``torch.compile`` names when called without one (set_default_backend)."""
    return _default_backend


def set_default_backend(backend: Any) -> None:
    """Set the default backend name (None: back to "inductor"); tapegrad has one way to
    replay whatever the name, so it is only remembered."""
    global _default_backend
    _default_backend = "inductor" if backend is None else backend


def is_exporting() -> bool:
    """No ``torch.export`` here: never exporting."""
    return False


def nested_compile_region(fn: Callable | None = None, *, options: Any = None,
                          max_reuse_entries: int = 8, reuse_hash_fn: Any = None) -> Any:
    """A hint that ``fn``'s region repeats (torch compiles it once and reuses it); a capture
    records every call's NumPy calls anyway, so ``fn`` runs as it is."""
    if fn is None:
        return functools.partial(nested_compile_region, options=options,
                                 max_reuse_entries=max_reuse_entries,
                                 reuse_hash_fn=reuse_hash_fn)

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    return run


def substitute_in_graph(original_fn: Callable, *, can_constant_fold_through: bool = False,
                        skip_signature_check: bool = False) -> Callable:
    """A decorator registering a traceable stand-in for ``original_fn`` in torch; a capture
    runs ``original_fn`` itself, so the stand-in is returned as written."""

    def register(fn: Callable) -> Callable:
        return fn

    return register
