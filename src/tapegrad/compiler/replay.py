"""Replay: the compiled callable, its cache of captures, and the choice at each call.

``CompiledFunction(fn)`` is what ``tapegrad.compile`` returns for a function (and what a
compiled module calls). At each call::

    key = guards.key(args)                 # grad mode, argument shapes/dtypes/values
    entry with that key whose guards hold?
      ready      -> run its program (a replay: flat NumPy calls, no Tensors or nodes; a call
                    whose outputs need their graph also gets its backward program, joined to
                    the outputs by one CompiledFunctionBackward node: aot.py)
      eager      -> call fn (the capture found a graph break; the reason is kept)
      pending    -> capture again; the same steps as last time -> ready
    none         -> a new entry (at most ``cache_size_limit``, torch's recompile limit 8,
                    beyond it: eager) and a first capture

A capture is an eager call with a recorder on the side (capture.py), so the calls that capture
give exactly eager results. Two captures must agree before a program replays (program.py
``same_steps``), so a program starts replaying on the third call of a signature.

Every way a call ends up running eagerly is reported under ``TORCH_LOGS`` (or
``TAPEGRAD_LOGS``): ``graph_breaks`` for a graph break (as it happens), a signature whose
captures cannot become a program (the reason, once) and a replay handed back to eager code
(``PathChanged``, below); ``recompiles`` for each recompile and, once, the recompile limit.

A replay repeats the value checks eager code makes (capture.py): bad values raise eager's
error; values that eager code would send down another path (cross-entropy's lean path needs
every target in range and none ignored) raise ``PathChanged`` before the program changes any
state, and that call runs eagerly.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from .._tensor import Tensor as _Tensor
from ..autograd.grad_mode import _state
from ..autograd.graph import edge
from ..nn.modules.module import Module as _Module
from ..ops import _registry
from ..optim.optimizer import Optimizer
from . import aot as aot_mod
from . import api
from . import capture as cap
from . import guards as guard_mod
from .api import live_functions
from .program import (
    Program,
    describe_output,
    output_constants,
    same_steps,
    same_value,
    slot_uses,
    spent_node,
)

cache_size_limit = 8  # torch._dynamo.config.recompile_limit (tapegrad._dynamo.config sets it)
_MAX_CAPTURES = 4  # captures of one signature that disagree before it is run eagerly


class Entry:
    """One signature's state: a pending capture, a program, or the reason it runs eagerly."""

    __slots__ = ("key", "guards", "pending", "program", "eager", "captures", "backward",
                 "pending_aot", "pending_output")

    def __init__(self, key: tuple) -> None:
        self.key = key
        self.guards: guard_mod.Guards | None = None
        self.pending: cap.Recorder | None = None
        self.program: Program | None = None
        self.eager: str | None = None
        self.captures = 0
        self.backward: Backward | None = None  # a program's backward half (aot.py)
        self.pending_aot: aot_mod.AotCapture | None = None
        self.pending_output: Any = None  # how the pending capture's result is rebuilt


class CompiledFunction:
    """``tapegrad.compile(fn)``: captures ``fn``'s calls and replays them (module docstring)."""

    def __init__(self, fn: Any, *, fullgraph: bool = False, module: Any = None,
                 dynamic: bool | None = None, backend: Any = "inductor") -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        # torch's "eager" backend runs the captured graph with the ordinary autograd: outputs
        # keep their eager nodes (``ReluBackward0``), not a ``CompiledFunctionBackward``
        self.eager_nodes = backend == "eager"
        self.dynamic = dynamic  # accepted; every mode captures each new shape (_compile.py)
        self.module = module
        self.entries: list[Entry] = []
        self.recompiles = 0
        self.limit_hit = False  # (the recompile limit reached: logged once)
        self.profiled = False  # (a call under the profiler: logged once)
        self.called = False  # (the "eager_then_compile" stance runs the first call eagerly)
        functools.update_wrapper(self, fn, updated=())  # type: ignore[arg-type]
        live_functions.add(self)

    def reset(self) -> None:
        """Forget every capture (``torch.compiler.reset()``)."""
        self.entries = []
        self.recompiles = 0
        self.limit_hit = False
        self.profiled = False
        self.called = False

    # -- the call -------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if cap._active is not None:  # inside another capture: run as plain code, recorded
            return self.fn(*args, **kwargs)
        if "profiler" in _registry._DETOURS:  # the profiler hears the ops of eager code
            if not self.profiled:  # (reported once per function, not at every call)
                self.profiled = True
                cap.log("graph_breaks", f"{self!r} runs eagerly while the profiler records, "
                        "so that the profile lists its ops")
            return self.fn(*args, **kwargs)
        if api.stance.stance != "default" and self._stance_says_eager():
            return self.fn(*args, **kwargs)
        self.called = True
        key = guard_mod.key(args, kwargs)
        for e in self.entries:
            if e.key == key and (e.guards is None or e.guards.holds()):
                if e.program is not None:
                    # grad mode off while a program runs (its backward rules read it, as in
                    # the engine); the guard key holds the caller's mode
                    prev = _state.enabled
                    _state.enabled = False
                    try:
                        if e.backward is not None:
                            return e.backward.attach(e.program.run(args, kwargs), args, kwargs)
                        return e.program.run(args, kwargs)
                    except cap.PathChanged as changed:  # checked before any state changed:
                        _state.enabled = prev  # run eagerly
                        cap.log("graph_breaks", f"{self!r} runs this call eagerly: the value "
                                f"check {changed} takes another path than at capture")
                        return self.fn(*args, **kwargs)
                    finally:
                        _state.enabled = prev
                if e.eager is not None:
                    return self.fn(*args, **kwargs)
                return self._capture(e, args, kwargs)
        if len(self.entries) >= cache_size_limit:
            if not self.limit_hit:  # (reported once, as torch warns once per function)
                self.limit_hit = True
                cap.log("recompiles", f"{self!r} hit the recompile limit ({cache_size_limit}): "
                        f"calls of new signatures run eagerly; last reason: {self._miss(key)}")
            return self.fn(*args, **kwargs)
        if self.entries:
            name = api.stance.stance
            if name == "eager_on_recompile":
                return self.fn(*args, **kwargs)
            why = self._miss(key)
            if name == "fail_on_recompile":
                raise RuntimeError(self._recompile_error(why))
            self.recompiles += 1
            cap.log("recompiles", f"recompiling {self!r}: {why}")
        e = Entry(key)
        self.entries.append(e)
        return self._capture(e, args, kwargs)

    def _capture(self, e: Entry, args: tuple, kwargs: dict) -> Any:
        rec = cap.Recorder(args, kwargs, self.fullgraph)
        roots = [self.module] if self.module is not None else []
        refs: list = []
        spaces: list = []
        mods, opts = guard_mod.reachable(self.fn, refs=refs, spaces=spaces)
        # modules passed as arguments: their buffers (batch norm's running statistics) are
        # read live and their training flags guarded, as for the modules the function names
        mods += [a for a in (*args, *kwargs.values())
                 if isinstance(a, _Module) and a not in mods]
        # a module's plain attributes are names too: a forward that keeps ``self.last = y``
        # or counts its calls changes them, which a replay would not repeat
        seen: set = set()
        for root in roots + mods:
            for m in root.modules():
                if id(m) not in seen:
                    seen.add(id(m))
                    spaces.append((m.__dict__, None))
        # a list, dict or set passed as an argument: the call may change it in place (append
        # its loss to a ``losses`` argument), which a replay would not repeat
        held = {f"argument {k}": a for k, a in (*enumerate(args), *kwargs.items())
                if type(a) in (list, dict, set)}
        if held:
            spaces.append((held, None))
        rebinds = guard_mod.Rebinds(spaces)
        rec.optimizers = opts + [a for a in (*args, *kwargs.values())
                                 if isinstance(a, Optimizer) and a not in opts]
        flags_before = guard_mod.Guards(roots + mods, [])
        for where, name, obj, path in refs:
            if isinstance(obj, _Tensor):
                rec.named.setdefault(id(obj), (where, name, path))
                rec.named_arrays.setdefault(id(obj._data), obj)
        for m in roots + mods:
            for t in (*m.buffers(), *m.parameters()):
                rec.module_arrays.setdefault(id(t._data), t)
        aot: aot_mod.AotCapture | str | None = None
        with cap.recording(rec):
            out = self.fn(*args, **kwargs)
            outs = None if rec.breaks or rec.backward_ran else aot_mod.graph_outputs(out)
            if outs is not None and self.eager_nodes:
                aot = "the eager backend keeps the outputs' own graph (run eagerly)"
            elif outs is not None:  # the outputs need their graph: capture their backward
                aot = aot_mod.capture_backward(rec, outs, self.module)
        e.captures += 1
        rec.side_effects(rebinds.change())
        if rec.breaks:
            e.eager = "graph break: " + rec.breaks[0]  # (logged as the break happened)
            e.guards = flags_before
            return out
        if isinstance(aot, str):
            self._eager(e, aot)
            e.guards = flags_before
            return out
        output = describe_output(rec, out, graph_ok=aot is not None,
                                 eager_nodes=self.eager_nodes)
        if isinstance(output, str):
            self._eager(e, output)
            e.guards = flags_before
            return out
        if not self.eager_nodes:
            _mark_spent(out, output)
        if isinstance(aot, aot_mod.AotCapture) and outs:
            aot_mod.mark_outputs(outs)  # (named as a replay's outputs are)
        bound = [s.obj for s in rec.steps if s.kind == "bind"]
        if aot is not None:
            bound += [s.obj for s in aot.bwd_steps if s.kind == "bind"]
        e.guards = guard_mod.Guards(roots + mods, bound, refs)
        e.guards.flags = flags_before.flags  # the flags the call started with
        first = e.pending
        if first is not None:
            diff = same_steps(first, rec)
            if diff is None and not same_value(output_constants(e.pending_output),
                                               output_constants(output)):
                diff = "a returned Python value changed"  # a constant of the program
            first_aot = e.pending_aot
            if diff is None and (aot is None) != (first_aot is None):
                diff = "a backward captured at one call only"
            elif diff is None and aot is not None and first_aot is not None:
                diff = same_steps(_view(first, first_aot.bwd_steps), _view(rec, aot.bwd_steps))
            if diff is None:
                names = _tensor_names(roots + mods)
                unwatched = _unwatched_tensor(rec, first, names, _defaults(self.fn))
                if unwatched is not None:
                    self._eager(e, unwatched)
                    e.pending = e.pending_aot = None
                    return out
                if aot is None:
                    e.program = Program(rec, first, output, names)
                elif first_aot is not None:
                    made = Backward.make(rec, first, aot, first_aot, output, names)
                    if isinstance(made, str):
                        self._eager(e, made)
                        e.pending = e.pending_aot = None
                        return out
                    e.program, e.backward = made
                e.pending = e.pending_aot = None
                return out
            if e.captures >= _MAX_CAPTURES:
                self._eager(e, f"the captured steps change from call to call ({diff})")
                e.pending = e.pending_aot = None
                return out
        e.pending = rec
        e.pending_aot = aot
        e.pending_output = output
        return out

    def _eager(self, e: Entry, why: str) -> None:
        """The signature of ``e`` runs eagerly from now on, for ``why``: reported under
        ``TORCH_LOGS=graph_breaks`` (a graph break met during the capture is reported as it
        happens; these are the other reasons a capture cannot become a program)."""
        e.eager = why
        cap.log("graph_breaks", f"{self!r} runs eagerly for this signature: {why}")

    def _stance_says_eager(self) -> bool:
        """Under a stance other than "default": does this call run eagerly before any lookup?"""
        name = api.check_stance()
        if name == "force_eager":
            return True
        if name in ("eager_then_compile", "aot_eager_then_compile") and not self.called:
            self.called = True
            return True
        return False

    def _miss(self, key: tuple) -> str:
        """Why no capture fits a call with this guard key (the newest capture's view)."""
        for e in reversed(self.entries):
            if e.key == key and e.guards is not None:
                return e.guards.failure() or "guards failed"
        return guard_mod.key_change(guard_mod.nearest([e.key for e in self.entries], key), key)

    def _recompile_error(self, why: str) -> str:
        code = getattr(getattr(self.module, "forward", self.fn), "__code__", None)
        where = "" if code is None else (
            f" filename: '{code.co_filename}', function name: '{code.co_name}', "
            f"line number: {code.co_firstlineno}")
        return (f"Detected recompile when torch.compile stance is 'fail_on_recompile'.{where}"
                f"\n    triggered by the following guard failure(s):\n    - {why}")

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
                if e.backward is not None:
                    bwd = e.backward.program
                    parts.append(f"# program {i}, its backward (CompiledFunctionBackward): "
                                 f"{bwd.n_calls} calls\n" + bwd.listing())
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


def _view(rec: cap.Recorder, steps: list) -> cap.Recorder:
    """The recorder with another list of steps (the backward half of a capture)."""
    view = copy.copy(rec)
    view.steps = steps
    return view


class Backward:
    """A program's backward half: the backward program and how to join it to the outputs."""

    __slots__ = ("program", "edges", "out_meta", "grad_pos", "checked")

    def __init__(self, program: Program, edges: list, out_meta: tuple, grad_pos: tuple,
                 checked: list) -> None:
        self.program = program
        # per input of the node: ("arg", i), ("kwarg", k) (and a path into a container
        # argument), ("obj", t) or ("named", globals dict or closure cell, name or None, path)
        self.edges = edges
        self.out_meta = out_meta
        self.grad_pos = grad_pos
        self.checked = checked  # the same, for the saved tensors whose version is checked

    @staticmethod
    def make(rec: cap.Recorder, first: cap.Recorder, aot: aot_mod.AotCapture,
             first_aot: aot_mod.AotCapture, output: Any, names: dict) -> tuple | str:
        """The forward and backward programs of a call (aot.py), or why there are none."""
        grads = []
        grad_pos = []
        wanted = [i for i, t in enumerate(aot.inputs) if t._requires_grad]
        for pos, g in zip(wanted, aot.grads, strict=True):
            if g is None:
                continue
            slot = rec._slot(g._data)
            if slot is None:
                return "a gradient was made outside the recorded ops"
            grads.append(("tensor", slot))
            grad_pos.append(pos)
        grad_slots = [d[1] for d in grads]
        saved = aot_mod.saved_slots(aot, slot_uses, grad_slots)
        graph_out = [rec._slot(o._data) for o in aot.outputs]
        fwd = Program(rec, first, output, names, keep=saved, graph_out=graph_out)  # type: ignore[arg-type]
        bwd_rec, bwd_first = _view(rec, aot.bwd_steps), _view(first, first_aot.bwd_steps)
        bwd_rec.arg_tensors = {}
        bwd = Program(bwd_rec, bwd_first, ("tuple", grads), names,
                      inputs=saved + aot.grad_slots)

        def where(t: Any) -> tuple:
            w = rec.arg_tensors.get(id(t))
            if w is not None:
                return w
            named = rec.named.get(id(t))
            if named is not None:  # read through a global name or closure cell
                return ("named", *named)
            return ("obj", t)

        edges = [where(t) for t in aot.inputs]
        # saved arrays that are (views of) tensors from outside: their versions are checked
        # at backward, as eager's saved tensors are
        def owner(a: Any) -> Any:
            return a if getattr(a, "base", None) is None else a.base

        bound_by = {id(owner(s.obj._data)): s.obj for s in aot.fwd_steps if s.kind == "bind"}
        checked: list = []
        for v in saved:
            t = bound_by.get(id(owner(rec.arrays[v])))
            if t is not None:
                w = where(t)
                if all(c[0] != w[0] or c[1] is not w[1] or c[2:] != w[2:] for c in checked):
                    checked.append(w)
        out_meta = tuple((o._data.shape, o._data.dtype) for o in aot.outputs)
        return fwd, Backward(bwd, edges, out_meta, tuple(grad_pos), checked)

    def attach(self, result: tuple, args: tuple, kwargs: dict) -> Any:
        """A replayed forward's result, its outputs joined to one backward node."""
        out, saved, tensors = result

        def tensor(w: tuple) -> Any:
            kind = w[0]
            if kind == "named":
                v = w[1][w[2]] if w[2] is not None else w[1].cell_contents
                for k in w[3]:
                    v = v[k]
                return v
            return cap.arg_value(w, args, kwargs) if kind in ("arg", "kwarg") else w[1]

        edges = tuple(edge(tensor(w)) for w in self.edges)
        versions = tuple((t, t._version_counter.value) for t in map(tensor, self.checked))
        node = aot_mod.CompiledFunctionBackward(self.program.run, saved, edges, self.out_meta,
                                                self.grad_pos, versions)
        for i, t in enumerate(tensors):
            t._grad_fn = node
            t._requires_grad = True
            t._output_nr = i
        return out


def _mark_spent(value: Any, out: tuple) -> None:
    """A capture's returned tensors whose backward the call ran get the ``grad_fn`` a replay
    gives them (``program.spent``: a used-up ``CompiledFunctionBackward``), so a loss prints
    the same at every call, as torch.compile's does from the first."""
    kind = out[0]
    if kind == "spent":
        value._grad_fn = spent_node()
        value._output_nr = 0
    elif kind in ("tuple", "list"):
        for v, o in zip(value, out[1], strict=True):
            _mark_spent(v, o)
    elif kind == "dict":
        for k, o in out[1]:
            _mark_spent(value[k], o)


def _defaults(fn: Any) -> set:
    """The ids of the tensors among a function's default argument values (fixed to it)."""
    fn = getattr(fn, "__func__", fn)
    values = (*(getattr(fn, "__defaults__", None) or ()),
              *(getattr(fn, "__kwdefaults__", None) or {}).values())
    return {id(v) for v in values if isinstance(v, _Tensor)}


def _unwatched_tensor(rec: cap.Recorder, first: cap.Recorder, names: dict,
                      defaults: set) -> str | None:
    """Why the program may not read a tensor from before the call live, or None.

    A program reads a tensor it did not make through what a guard watches: an argument, a
    global, attribute or closure variable, a module's parameter or buffer, a leaf's ``.grad``
    (or a default argument value, which stays the function's).
    A tensor the function reached some other way (an item of a dict or list it closes over)
    could be replaced between calls without any guard noticing, and the replay would go on
    reading the old one, so such a function runs eagerly."""
    for s, f in zip(rec.steps, first.steps, strict=True):
        if s.kind != "bind" or f.obj is not s.obj:  # (not the same tensor: made in the call)
            continue
        t = s.obj
        if (id(t) in rec.arg_tensors or id(t) in rec.named or id(t) in names
                or id(t) in defaults or "grad_of" in s.params):
            continue
        return ("a tensor reached through a container or object that no guard watches (a "
                "dict or list item, say): a replay would not see it replaced")
    return None


def _tensor_names(modules: list) -> dict:
    """id(parameter or buffer) -> a name for the listing (``p_0_weight``: ``0.weight``)."""
    names: dict = {}
    for m in modules:
        for kind, items in (("p", m.named_parameters()), ("b", m.named_buffers())):
            for name, t in items:
                names.setdefault(id(t), f"{kind}_{name.replace('.', '_')}")
    return names

