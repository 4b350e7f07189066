"""Replay: the compiled callable, its cache of captures, and the choice at each call.

``CompiledFunction(fn)`` is what ``tapegrad.compile`` returns for a function (and what a
compiled module calls). At each call::

    key = guards.key(args)                 # grad mode, argument shapes/dtypes/values
    entry with that key whose guards hold?
      ready      -> run its program (a replay: flat NumPy calls, no Tensors or nodes)
      eager      -> call fn (the capture found a graph break; the reason is kept)
      pending    -> capture again; the same steps as last time -> ready
    none         -> a new entry (at most ``cache_size_limit``, torch's recompile limit 8,
                    beyond it: eager) and a first capture

A capture is an eager call with a recorder on the side (capture.py), so the calls that capture
give exactly eager results. Two captures must agree before a program replays (program.py
``same_steps``), so a program starts replaying on the third call of a signature.

A replay repeats the value checks eager code makes (capture.py): bad values raise eager's
error; values that eager code would send down another path (cross-entropy's lean path needs
every target in range and none ignored) raise ``PathChanged`` before the program changes any
state, and that call runs eagerly.
"""

from __future__ import annotations

import functools
from typing import Any

from .._tensor import Tensor as _Tensor
from . import capture as cap
from . import guards as guard_mod
from .program import Program, describe_output, same_steps

cache_size_limit = 8  # torch._dynamo.config.recompile_limit
_MAX_CAPTURES = 4  # captures of one signature that disagree before it is run eagerly


class Entry:
    """One signature's state: a pending capture, a program, or the reason it runs eagerly."""

    __slots__ = ("key", "guards", "pending", "program", "eager", "captures")

    def __init__(self, key: tuple) -> None:
        self.key = key
        self.guards: guard_mod.Guards | None = None
        self.pending: cap.Recorder | None = None
        self.program: Program | None = None
        self.eager: str | None = None
        self.captures = 0


class CompiledFunction:
    """``tapegrad.compile(fn)``: captures ``fn``'s calls and replays them (module docstring)."""

    def __init__(self, fn: Any, *, fullgraph: bool = False, module: Any = None) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.module = module
        self.entries: list[Entry] = []
        self.recompiles = 0
        functools.update_wrapper(self, fn, updated=())  # type: ignore[arg-type]

    # -- the call -------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if cap._active is not None:  # inside another capture: run as plain code, recorded
            return self.fn(*args, **kwargs)
        key = guard_mod.key(args, kwargs)
        for e in self.entries:
            if e.key == key and (e.guards is None or e.guards.holds()):
                if e.program is not None:
                    try:
                        return e.program.run(args, kwargs)
                    except cap.PathChanged:  # checked before any state changed: run eagerly
                        return self.fn(*args, **kwargs)
                if e.eager is not None:
                    return self.fn(*args, **kwargs)
                return self._capture(e, args, kwargs)
        if len(self.entries) >= cache_size_limit:
            return self.fn(*args, **kwargs)
        if self.entries:
            self.recompiles += 1
        e = Entry(key)
        self.entries.append(e)
        return self._capture(e, args, kwargs)

    def _capture(self, e: Entry, args: tuple, kwargs: dict) -> Any:
        rec = cap.Recorder(args, kwargs, self.fullgraph)
        roots = [self.module] if self.module is not None else []
        refs: list = []
        mods, _ = guard_mod.reachable(self.fn, refs=refs)
        flags_before = guard_mod.Guards(roots + mods, [])
        for where, name, obj in refs:
            if isinstance(obj, _Tensor):
                rec.named.setdefault(id(obj), (where, name))
        with cap.recording(rec):
            out = self.fn(*args, **kwargs)
        e.captures += 1
        if rec.breaks:
            e.eager = "graph break: " + rec.breaks[0]
            e.guards = flags_before
            return out
        output = describe_output(rec, out)
        if isinstance(output, str):
            e.eager = output
            e.guards = flags_before
            return out
        bound = [s.obj for s in rec.steps if s.kind == "bind"]
        e.guards = guard_mod.Guards(roots + mods, bound, refs)
        e.guards.flags = flags_before.flags  # the flags the call started with
        first = e.pending
        if first is not None:
            diff = same_steps(first, rec)
            if diff is None:
                e.program = Program(rec, first, output, _tensor_names(roots + mods))
                e.pending = None
                return out
            if e.captures >= _MAX_CAPTURES:
                e.eager = f"the captured steps change from call to call ({diff})"
                e.pending = None
                return out
        e.pending = rec
        return out

    # -- inspection -----------------------------------------------------------------------------

    def programs(self) -> list[Program]:
        return [e.program for e in self.entries if e.program is not None]

    def listing(self) -> str:
        """The NumPy-call listing of every program, and why any signature runs eagerly."""
        parts = []
        for i, e in enumerate(self.entries):
            if e.program is not None:
                parts.append(f"# program {i}: {e.program.n_calls} calls\n"
                             + e.program.listing())
            elif e.eager is not None:
                parts.append(f"# signature {i} runs eagerly: {e.eager}")
            else:
                parts.append(f"# signature {i}: captured once, replays after one more capture")
        return "\n".join(parts) if parts else "# not called yet"

    def dot(self) -> str:
        """Graphviz DOT source of every program's data flow (``Program.dot``), one cluster
        per program; render with ``graphviz`` (``tapegrad.show``'s optional dependency)."""
        parts = ["digraph compiled {"]
        for i, p in enumerate(self.programs()):
            body = p.dot(prefix=f"p{i}").splitlines()[1:-1]
            parts += [f"  subgraph cluster_{i} {{", f'  label="program {i}";'] + body + ["  }"]
        parts.append("}")
        return "\n".join(parts) + "\n"

    def __repr__(self) -> str:
        return f"<compiled {getattr(self.fn, '__qualname__', self.fn)!r}>"

    def __str__(self) -> str:
        return self.listing()


def _tensor_names(modules: list) -> dict:
    """id(parameter or buffer) -> a name for the listing (``p_0_weight``: ``0.weight``)."""
    names: dict = {}
    for m in modules:
        for kind, items in (("p", m.named_parameters()), ("b", m.named_buffers())):
            for name, t in items:
                names.setdefault(id(t), f"{kind}_{name.replace('.', '_')}")
    return names

