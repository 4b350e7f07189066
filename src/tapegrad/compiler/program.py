"""Program: a capture's steps turned into one flat Python function of NumPy calls.

The steps of a ``Recorder`` (capture.py) become the lines of a generated function, one call
per line, every array a local variable named by its slot (``a12``)::

    def program(args, kwargs):
        a0 = t0._data                          # a parameter, read when first needed
        a1 = args[0]._data                     # a tensor argument
        a2 = addmm(a0, a1, a3, beta=1, alpha=1)
        ...
        ctx12.saved = (T(a9),)                 # a backward rule, called on a context
        r = tanh_backward(ctx12, T(a14))       # made once (grad mode is off during a replay)
        a15 = r[0]._data
        ctx12.saved = r = None
        a16, = view_fast_backward(ctx13, (), a15)  # a rule's fast path on arrays (fast_paths)
        accumulate_grad(t0, a17)               # into the parameter's .grad
        m0(o0)                                 # optimizer.step(), opaque
        return T(a9)

Running it is a replay: no Tensor or graph node is made, no grad-mode flag is read, and the
NumPy calls are the ones the eager call made, in the same order, so the values are the same
bits. ``listing()`` is that source, for reading; ``dot()`` draws its data flow (Graphviz DOT:
a node per line, an edge per array passed on). A local is deleted after its last use, so
memory is released as eagerly as the eager call's graph releases it.

Two captures of the same function (under the same guards) are compared step by step before a
program is made (``same_steps``): a value computed outside the recorded calls (a tensor made
from data in Python) then shows up as a constant that changed, and the function is not
compiled.
"""

from __future__ import annotations

import keyword
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import Node
from ..ops import _registry, low_precision
from . import capture as cap
from .aot import CompiledFunctionBackward
from .capture import Recorder, SlotRef, Step, TupleRef
from .optim_replay import replay_of


def slot_uses(s: Step) -> list[int]:
    """The slots a step reads."""
    if s.kind == "rule":
        _, saved, grads, params, _ = (r[1] for r in s.ins)
        refs = list(saved) + list(grads)
        return [r[1] for r in refs if r[0] == "s"] + _param_slots(params)
    return [v for kind, v in s.ins if kind == "s"] + _param_slots(s.params)


def _param_slots(params: dict) -> list[int]:
    """The slots a step's keyword parameters read."""
    out: list[int] = []
    for v in params.values():
        if isinstance(v, SlotRef):
            out.append(v.slot)
        elif isinstance(v, TupleRef):
            out.extend(v.slots())
    return out


def same_value(a: Any, b: Any) -> bool:
    """Equal as constants of a program: arrays bit for bit, containers item by item."""
    if a is b:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, Tensor):
        return same_value(a._data, b._data)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b
    cls = type(a)
    if cls.__module__.startswith("tapegrad.ops") and cls.__eq__ is object.__eq__ and hasattr(
            cls, "__slots__"):  # a kernel's plain value object (pooling's geometry): by fields
        return all(same_value(getattr(a, n, None), getattr(b, n, None)) for n in cls.__slots__)
    try:
        return bool(a == b)
    except Exception:
        return False


def same_steps(r1: Recorder, r2: Recorder) -> str | None:
    """None when two captures recorded the same program; else what differs."""
    if len(r1.steps) != len(r2.steps):
        return f"{len(r1.steps)} steps, then {len(r2.steps)}"
    for i, (s1, s2) in enumerate(zip(r1.steps, r2.steps, strict=True)):
        if s1.kind != s2.kind or s1.fn is not s2.fn or s1.outs != s2.outs:
            return f"step {i}: {s1.name} then {s2.name}"
        if s1.kind == "bind":
            where = r1.arg_tensors.get(id(s1.obj))
            if where is not None or r2.arg_tensors.get(id(s2.obj)) is not None:
                if where != r2.arg_tensors.get(id(s2.obj)):
                    return f"step {i}: another argument read"
                continue
            src1, src2 = r1.named.get(id(s1.obj)), r2.named.get(id(s2.obj))
            if src1 is not None and src2 is not None and src1[0] is src2[0] and (
                    src1[1:] == src2[1:]):
                continue  # the same global name or closure cell, read at each call
            if "grad_of" in s1.params or "grad_of" in s2.params:
                if not _same_target(s1.params.get("grad_of"), s2.params.get("grad_of"), r1, r2):
                    return f"step {i}: the .grad of another tensor read"
                continue
            if s1.obj is not s2.obj and not same_value(r1.snapshots[s1.outs[0]],
                                                       r2.snapshots[s2.outs[0]]):
                return f"step {i}: a tensor made outside the recorded ops changed its values"
            continue
        if s1.kind == "method" and s1.obj is not s2.obj:
            return f"step {i}: {s1.name} on another object"
        if s1.kind in ("accumulate", "effect") and not _same_target(s1.obj, s2.obj, r1, r2):
            return f"step {i}: {s1.name} on another object"
        if s1.kind == "check" and s1.obj != s2.obj:
            return f"step {i}: {s1.name} answered {s1.obj!r}, then {s2.obj!r}"
        if not same_value(s1.ins, s2.ins) or not same_value(s1.params, s2.params):
            return f"step {i}: {s1.name} got other constants"
    return None


def _same_target(t1: Any, t2: Any, r1: Recorder, r2: Recorder) -> bool:
    """Do two captures' steps act on the same leaf? The same tensor, or the argument in the
    same position (a leaf passed in at each call, whose ``.grad`` the step fills)."""
    if t1 is t2:
        return True
    where = r1.arg_tensors.get(id(t1))
    return where is not None and where == r2.arg_tensors.get(id(t2))


_LITERALS = (int, float, bool, str, type(None))


def _literal(v: Any) -> str | None:
    """Python source for a constant that reads back as the same value, else None."""
    if type(v) in _LITERALS:
        text = repr(v)
        try:
            if type(eval(text)) is type(v) and same_value(eval(text), v):  # noqa: S307
                return text
        except Exception:
            return None
        return None
    if type(v) is tuple and all(_literal(x) is not None for x in v):
        inner = ", ".join(_literal(x) for x in v)  # type: ignore[misc]
        return f"({inner},)" if len(v) == 1 else f"({inner})"
    return None


class Program:
    """The generated replay function of one capture, with its source (``listing()``)."""

    def __init__(self, rec: Recorder, first: Recorder, output: Any,
                 names: dict | None = None, inputs: list[int] | None = None,
                 keep: list[int] | None = None, graph_out: list[int] | None = None) -> None:
        """``inputs``: slots handed in as ``args[i]`` arrays (a backward program's saved
        arrays and gradients); ``keep``: slots returned too, after the output (the saved
        arrays of a forward program); ``graph_out``: the output slots whose tensors are
        returned a third time, to be given a ``grad_fn`` (aot.py)."""
        self.namespace: dict[str, Any] = {"T": Tensor._make}
        self.tensor_names = names or {}  # id(parameter) -> its name in its module
        self._names: dict[int, str] = {}
        self.n_calls = 0
        self._owners: dict | None = None
        # per step: its kind, its line, the slots it reads and those it makes (for dot())
        self.flow: list[tuple[str, str, list[int], list[int]]] = []
        self.returned: list[int] = []
        lines: list[str] = []
        output = _fresh_outputs(output, first)
        order = _checks_first(rec.steps, rec)
        steps = [rec.steps[j] for j in order]
        firsts = [first.steps[j] for j in order]
        returned = set(_output_slots(output)) | set(keep or ())
        self.returned = sorted(returned)
        self._graph_out = {slot: f"o{k}" for k, slot in enumerate(graph_out or ())}
        for k, slot in enumerate(inputs or ()):
            lines.append(f"a{slot} = args[{k}]")
        last_use: dict[int, int] = {}
        for i, s in enumerate(steps):
            for v in slot_uses(s):
                last_use[v] = i
        for slot in returned:
            last_use[slot] = len(steps)

        changed = False  # has a step before this one changed state outside the program?
        for i, s in enumerate(steps):
            if s.kind == "check":
                s = Step("check", s.fn, s.ins, {"late": changed}, s.outs, s.name, s.obj)
            changed = changed or _changes_state(s)
            line = self._line(s, firsts[i], rec, first, last_use, returned, i)
            lines.append(line)
            self.flow.append((s.kind, line, slot_uses(s), [o for o in s.outs if o is not None]))
            dead = [f"a{v}" for v in slot_uses(s) if last_use.get(v) == i]
            dead += [f"a{o}" for o in s.outs if o is not None and o not in last_use]
            if dead:
                lines.append("del " + ", ".join(dict.fromkeys(dead)))
        for slot, name in self._graph_out.items():
            lines.append(f"{name} = T(a{slot})")
        ret = self._rebuild(output)
        if keep is not None:
            saved = "".join(f"a{v}, " for v in keep)
            outs = "".join(f"{n}, " for n in self._graph_out.values())
            ret = f"{ret}, ({saved}), ({outs})"
        lines.append("return " + ret)
        body = "\n".join("    " + ln for line in lines for ln in line.split("\n"))
        self.source = "def program(args, kwargs):\n" + body + "\n"
        code = compile(self.source, "<tapegrad.compile program>", "exec")
        exec(code, self.namespace)  # noqa: S102 - the source above, generated here
        self.run: Callable = self.namespace["program"]

    def _name(self, obj: Any, base: str) -> str:
        """A namespace name for a function or object, readable in the listing."""
        key = id(obj)
        name = self._names.get(key)
        if name is None:
            base = "".join(c if c.isalnum() else "_" for c in base) or "f"
            if base[0].isdigit() or keyword.iskeyword(base) or base in self.namespace:
                n = 1
                while f"{base}_{n}" in self.namespace:
                    n += 1
                base = f"{base}_{n}"
            name = base
            self.namespace[name] = obj
            self._names[key] = name
        return name

    def _const(self, v: Any) -> str:
        text = _literal(v)
        if text is not None:
            return text
        name = f"c{len(self.namespace)}"
        self.namespace[name] = v
        return name

    def _arg(self, r: tuple) -> str:
        return f"a{r[1]}" if r[0] == "s" else self._const(r[1])

    def _tensor_arg(self, r: tuple, rec: Recorder, wide: bool = False) -> str:
        """A rule's input: an array of the program as a Tensor, or a constant; ``wide``: a
        float16/bfloat16 array widened to float32 first (``capture.run_widened_rule``)."""
        if r[0] == "s" and type(rec.arrays[r[1]]) is np.ndarray:
            if wide and rec.arrays[r[1]].dtype.char in "eE":
                return f"T({self._name(low_precision.widen, 'widen')}(a{r[1]}))"
            return f"T(a{r[1]})"
        return self._arg(r)

    def _kw(self, v: Any) -> str:
        if isinstance(v, TupleRef):
            return "(" + "".join(self._kw(x) + ", " for x in v.items) + ")"
        return f"a{v.slot}" if isinstance(v, SlotRef) else self._const(v)

    def _line(self, s: Step, f_step: Step, rec: Recorder, first: Recorder, last_use: dict,
              returned: set, i: int) -> str:
        self.n_calls += s.kind != "bind"
        if s.kind == "bind":
            slot = s.outs[0]
            t = s.obj
            where = rec.arg_tensors.get(id(t))
            if where is not None:
                return f"a{slot} = {cap.arg_source(where)}._data"
            leaf = s.params.get("grad_of")
            if leaf is not None:  # a leaf's .grad, read as it is at that point of the replay
                return f"a{slot} = {self._leaf(leaf, rec, f'leaf{slot}')}._grad._data"
            named = rec.named.get(id(t))
            if named is not None and first.named.get(id(f_step.obj)) == named:
                return f"a{slot} = {self._named(named)}._data"
            if f_step.obj is t:  # the same tensor at both captures: read it live
                name = self.tensor_names.get(id(t), f"t{slot}")
                return f"a{slot} = {self._name(t, name)}._data"
            # a tensor made during the call outside the recorded ops (``torch.zeros``), the
            # same values each time: a fresh copy of them at each replay, as eager code makes
            # a new tensor at each call (the program may write into it, or return it)
            return f"a{slot} = {self._name(rec.snapshots[slot], f'k{slot}')}.copy(order='K')"
        if s.kind == "rule":  # the rule called on a context made once, inputs as Tensors
            op, saved, grads, params, meta = (r[1] for r in s.ins)
            ctx = self._name(cap.ReplayCtx((), params, meta), f"ctx{i}")
            wide = s.fn is cap.run_widened_rule
            if op.fast_rule is not None and op.outputs == 1 and not wide and (
                    self._arrays_only(rec, grads)) and (
                    self._arrays_only(rec, [r for r in saved if not _plain_constant(r)])):
                return self._fast_rule_line(s, op, ctx, saved, grads, params, rec)
            lines = [f"{ctx}.saved = ("
                     f"{''.join(self._tensor_arg(r, rec, wide) + ', ' for r in saved)})"]
            if any(isinstance(v, (SlotRef, TupleRef)) for v in params.values()):
                pd = ", ".join(f"{k!r}: {self._kw(v)}" for k, v in params.items())
                lines.append(f"{ctx}.params = {{{pd}}}")
            gs = [self._tensor_arg(r, rec, wide) for r in grads]
            g = gs[0] if op.outputs == 1 else "[" + ", ".join(gs) + "]"
            if op.fast_rule is None:
                rule = self._name(op.rule, op.name + "_backward")
                lines.append(f"r = {rule}({ctx}, {g})")
            else:  # its fast path, or its rule under create_graph, as the engine chooses
                run = self._name(_registry.first_order, "first_order")
                lines.append(f"r = {run}({self._name(op, op.name + '_op')}, {ctx}, {g})")
            lines += [f"a{o} = r[{k}]._data" for k, o in enumerate(s.outs) if o is not None]
            lines.append(f"{ctx}.saved = r = None")
            return "\n".join(lines)
        args = [self._arg(r) for r in s.ins]
        if s.kind == "check":  # run again; the same answer as at capture, else PathChanged
            exp = cap.expect_late if s.params["late"] else cap.expect
            return (f"{self._name(exp, exp.__name__)}({self._name(s.fn, s.name)}, "
                    f"{', '.join([self._const(s.obj)] + args)})")
        kw = [f"{k}={self._kw(v)}" for k, v in s.params.items()]
        if s.kind == "call":
            fn = self._name(s.fn, s.name)
            outs = ", ".join(f"a{o}" for o in s.outs)
            if len(s.outs) > 1 or s.obj is True:  # unpacked, even a sequence of one
                outs += ","
            return f"{outs} = {fn}({', '.join(args + kw)})"
        if s.kind == "inplace":
            fn = self._name(s.fn, s.name)
            return f"{self._name(cap.inplace, 'inplace')}({', '.join([fn] + args + kw)})"
        if s.kind == "effect":
            return f"{self._name(s.fn, s.fn.__name__)}({self._leaf(s.obj, rec, 'leaf')})"
        if s.kind == "accumulate":
            t = self._leaf(s.obj, rec, "leaf")
            g = s.ins[0]
            # (an argument's layout may differ from call to call: its .grad is always a copy)
            steal = g[0] == "s" and id(s.obj) not in rec.arg_tensors and self._stealable(
                g[1], i, s.obj._data, rec, last_use, returned)
            acc = cap.accumulate_grad_steal if steal else cap.accumulate_grad
            return f"{self._name(acc, acc.__name__)}({t}, {args[0]})"
        # an opaque method (optimizer.step, zero_grad)
        obj = self._name(s.obj, type(s.obj).__name__.lower())
        meth = self._name(s.fn, f"{type(s.obj).__name__}_{s.fn.__name__}")
        counted = getattr(getattr(s.obj, "__dict__", {}).get(s.fn.__name__),
                          "_wrapped_by_lr_sched", False)
        note = f"{obj}._opt_called = True\n" if counted else ""  # (an LR scheduler's flag)
        if not args and not kw:
            replay = replay_of(s.fn)  # Adam's, SGD's, RMSprop's step at replay
            if replay is not None:
                return f"{note}{self._name(replay, replay.__name__)}({obj}, {meth})"
        return f"{note}{meth}({', '.join([obj] + args + kw)})"

    @staticmethod
    def _arrays_only(rec: Recorder, refs: Any) -> bool:
        """Are all these values arrays of the program (no constant, no array subclass)?"""
        return all(r[0] == "s" and type(rec.arrays[r[1]]) is np.ndarray for r in refs)

    def _fast_rule_line(self, s: Step, op: Any, ctx: str, saved: tuple, grads: tuple,
                        params: dict, rec: Recorder) -> str:
        """A rule with a fast first-order path (``OpDef.fast_rule``, ops/fast_paths.py), called
        on the arrays themselves: no Tensor made around its inputs and results. (NumPy gives a
        scalar, not a 0-d array, for arithmetic on 0-d arrays: such results go through
        ``as_arrays``.)"""
        lines = []
        if any(isinstance(v, (SlotRef, TupleRef)) for v in params.values()):
            pd = ", ".join(f"{k!r}: {self._kw(v)}" for k, v in params.items())
            lines.append(f"{ctx}.params = {{{pd}}}")
        outs = "".join(("_" if o is None else f"a{o}") + ", " for o in s.outs)
        rule = self._name(op.fast_rule, op.name + "_fast_backward")
        held = "".join(self._arg(r) + ", " for r in saved)
        call = f"{rule}({ctx}, ({held}), {self._arg(grads[0])})"
        if any(o is not None and rec.arrays[o].ndim == 0 for o in s.outs):
            call = f"{self._name(as_arrays, 'as_arrays')}({call})"
        lines.append(f"{outs}= {call}")
        return "\n".join(lines)

    def _leaf(self, t: Tensor, rec: Recorder, base: str) -> str:
        """The expression for a leaf a step acts on: the argument it was passed as (a new
        tensor at each call), else the tensor itself (a parameter)."""
        where = rec.arg_tensors.get(id(t))
        if where is not None:
            return cap.arg_source(where)
        named = rec.named.get(id(t))
        if named is not None and named[2]:  # an item of a list or dict behind a name: read
            return self._named(named)  # through it, as its array is (the item may change)
        return self._name(t, self.tensor_names.get(id(t), base))

    def _named(self, named: tuple) -> str:
        """The expression for a tensor read through a global name, an attribute or a closure
        cell, and the path into a container held there (``Recorder.named``)."""
        holder, key, path = named
        if key is not None:  # a global or an attribute: read through its dict
            base = "globals" if "__builtins__" in holder else "attrs"
            src = f"{self._name(holder, base)}[{key!r}]"
        else:
            src = f"{self._name(holder, 'cell')}.cell_contents"
        return src + "".join(f"[{k!r}]" for k in path)

    def _stealable(self, slot: int, i: int, param: np.ndarray, rec: Recorder, last_use: dict,
                   returned: set) -> bool:
        """Can the gradient in ``slot`` become the leaf's ``.grad`` without a copy? When it is
        laid out like the leaf, and no array of the program sharing its memory is read after
        step ``i``, returned, or read from outside (a bound tensor)."""
        g = rec.arrays[slot]
        if (type(g) is not np.ndarray or not g.flags.writeable or g.strides != param.strides
                or g.dtype != param.dtype):
            return False
        owner = g if g.base is None else g.base
        if self._owners is None:
            self._owners = {}
            for j, a in enumerate(rec.arrays):
                if type(a) is dict:  # a kernel's scratch dict (capture.py)
                    continue
                o = a if a.base is None else a.base
                self._owners.setdefault(id(o), []).append(j)
        bound = {s.outs[0] for s in rec.steps if s.kind == "bind"}
        sharing = self._owners.get(id(owner), ())
        for j in sharing:
            if j in bound or j in returned or last_use.get(j, -1) > i:
                return False
        # nothing but the capture's slots may hold the memory (no cache inside a kernel):
        # the slots' arrays, the views' bases, and here ``owner``, ``g`` and the argument
        held = len(sharing) + sum(rec.arrays[j] is not owner for j in sharing) + 2 + (g is owner)
        return sys.getrefcount(owner) <= held

    def _rebuild(self, out: Any) -> str:
        kind = out[0]
        if kind == "tensor":
            return self._graph_out.get(out[1]) or f"T(a{out[1]})"
        if kind == "spent":
            return f"{self._name(spent, 'spent')}(a{out[1]}, {out[2]!r})"
        if kind == "const":
            return self._const(out[1])
        if kind == "live":  # a tensor from before the call (a parameter), returned itself
            return self._name(out[1], "result")
        if kind in ("tuple", "list"):
            items = [self._rebuild(o) for o in out[1]]
            text = ", ".join(items) + ("," if kind == "tuple" and len(items) == 1 else "")
            return f"({text})" if kind == "tuple" else f"[{text}]"
        if kind == "dict":
            items = [f"{self._const(k)}: {self._rebuild(v)}" for k, v in out[1]]
            return "{" + ", ".join(items) + "}"
        raise AssertionError(kind)

    def listing(self) -> str:
        """The program's source: one NumPy-level call per line."""
        return self.source

    def dot(self, prefix: str = "") -> str:
        """The program's data flow as Graphviz DOT source: a box per line of the listing, an
        edge ``aN`` from the line that makes an array to each line that reads it. Reads of
        tensors are ellipses, value checks diamonds, calls that change state (gradients, the
        optimizer, the RNG aside) grey; render it with ``graphviz`` (``dot -Tsvg``). Node
        names start with ``prefix`` (several programs in one picture)."""

        def q(text: str) -> str:
            return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

        shapes = {"bind": "ellipse", "check": "diamond"}
        out = ["digraph program {", "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
        maker: dict[int, int] = {}
        for i, (kind, line, uses, outs) in enumerate(self.flow):
            style = ", style=filled, fillcolor=lightgrey" if kind in (
                "inplace", "accumulate", "effect", "method") else ""
            n = f"{prefix}s"
            out.append(f"  {n}{i} [label={q(line)}, shape={shapes.get(kind, 'box')}{style}];")
            for v in dict.fromkeys(uses):
                if v in maker:
                    out.append(f'  {n}{maker[v]} -> {n}{i} [label="a{v}"];')
            for o in outs:
                maker[o] = i
            if kind == "inplace" and uses:  # its target, written: later reads come from here
                maker[uses[0]] = i
        out.append(f'  {prefix}ret [label="return", shape=plaintext];')
        for v in self.returned:
            if v in maker:
                out.append(f'  {prefix}s{maker[v]} -> {prefix}ret [label="a{v}"];')
        out.append("}")
        return "\n".join(out) + "\n"




def _changes_state(s: Step) -> bool:
    """Does the step change anything outside the program's own arrays (a parameter, a
    gradient, the optimizer's state, the RNG) in a way that running the call again eagerly
    would repeat? Bound arrays written in place count; ``zero_grad`` and ``t.grad = None``
    do not (done twice, they leave what done once leaves)."""
    if s.kind == "method":
        return getattr(s.fn, "__name__", "") != "zero_grad"
    return s.kind in ("inplace", "accumulate") or (
        s.kind == "call" and s.fn in cap._DRAW_CALLS.values())


def _checks_first(steps: list, rec: Recorder) -> list[int]:
    """The order of the program's steps: each value check moved up to just after the steps
    that make or write its inputs (usually the arguments, then read first), so that a check that
    finds a changed path finds it before the program has changed any state. A check reading
    a tensor from outside the arguments (a buffer, a parameter) stays after the optimizer
    steps and gradient writes before it."""
    made: dict[int, int] = {}
    outside: set[int] = set()  # slots bound from tensors that are not arguments
    last_effect = -1
    # the arguments the checks read are read first (the same array wherever it is read)
    bind_of = {s.outs[0]: i for i, s in enumerate(steps)
               if s.kind == "bind" and id(s.obj) in rec.arg_tensors}
    order = sorted({bind_of[v] for s in steps if s.kind == "check" for v in slot_uses(s)
                    if v in bind_of})
    for i in order:
        made[steps[i].outs[0]] = i
    early = set(order)
    for i, s in enumerate(steps):
        if i in early:
            continue
        if s.kind == "check":
            ins = slot_uses(s)
            after = max((made[v] for v in ins if v in made), default=-1)
            if any(v in outside for v in ins):
                after = max(after, last_effect)
            # after that step, and after the checks already placed there
            pos = order.index(after) + 1 if after >= 0 else 0
            while pos < len(order) and steps[order[pos]].kind == "check":
                pos += 1
            order.insert(pos, i)
            continue
        order.append(i)
        for o in s.outs:
            if o is not None:
                made[o] = i
        if s.kind == "bind" and id(s.obj) not in rec.arg_tensors:
            outside.add(s.outs[0])
        elif s.kind == "inplace" and s.ins[0][0] == "s":
            made[s.ins[0][1]] = i  # written in place: a check reads it after this write
        elif s.kind in ("accumulate", "effect", "method"):
            last_effect = i
    return order


def _fresh_outputs(out: Any, first: Recorder) -> Any:
    """``out`` with each returned tensor that was bound from outside the recorded ops but is
    not the same tensor at both captures (made during the call, as ``torch.zeros``) turned
    into a new tensor on the replay's array: only a tensor from before the call (a parameter)
    is returned itself."""
    kind = out[0]
    if kind == "live":
        value, slot = out[1], out[2]
        if any(s.kind == "bind" and s.outs[0] == slot and s.obj is value for s in first.steps):
            return out
        return ("tensor", slot)
    if kind in ("tuple", "list"):
        return (kind, [_fresh_outputs(o, first) for o in out[1]])
    if kind == "dict":
        return ("dict", [(k, _fresh_outputs(o, first)) for k, o in out[1]])
    return out


def output_constants(out: Any) -> Any:
    """What two captures' outputs must agree on: the structure and Python values, a returned
    tensor by the slot it comes from (its values are the replay's)."""
    kind = out[0]
    if kind == "live":
        return ("live", out[2])
    if kind in ("tuple", "list"):
        return (kind, [output_constants(o) for o in out[1]])
    if kind == "dict":
        return ("dict", [(k, output_constants(o)) for k, o in out[1]])
    return out


def _plain_constant(ref: tuple) -> bool:
    """A saved value that is a constant an array rule takes as it is: None or a number."""
    return ref[0] == "c" and (ref[1] is None or type(ref[1]) in (int, float, bool, complex))


def as_arrays(results: tuple) -> tuple:
    """An array rule's results, a NumPy scalar (from arithmetic on 0-d arrays) made the 0-d
    array that ``Tensor._make`` makes of it in the eager rule."""
    return tuple(r if r is None or type(r) is np.ndarray else np.asarray(r) for r in results)


def spent(a: np.ndarray, name: str | None = None) -> Tensor:
    """A returned tensor on ``a`` whose backward the call itself ran (a training step's loss):
    as torch.compile returns it, with ``requires_grad`` and a used-up ``grad_fn``
    (``spent_node``), so a second backward raises torch's error."""
    t = Tensor._make(a)
    t._requires_grad = True
    t._grad_fn = spent_node(name)
    return t


def spent_node(name: str | None = None) -> Node:
    """A ``CompiledFunctionBackward`` whose graph is already used; ``name``: named as the
    eager node instead (torch's "eager" backend keeps eager nodes)."""
    cls: type = CompiledFunctionBackward
    if name is not None:
        cls = _SPENT.get(name) or _SPENT.setdefault(name, type(name, (CompiledFunctionBackward,), {
            "__slots__": (), "__repr__": Node.__repr__}))
    return cls(None, None, (), (), (), ())


_SPENT: dict[str, type] = {}  # eager node name -> a used-up node class of that name


def _output_slots(out: Any) -> list:
    kind = out[0]
    if kind in ("tensor", "spent"):
        return [out[1]]
    if kind in ("tuple", "list"):
        return [s for o in out[1] for s in _output_slots(o)]
    if kind == "dict":
        return [s for _, o in out[1] for s in _output_slots(o)]
    return []


def describe_output(rec: Recorder, value: Any, graph_ok: bool = False,
                    eager_nodes: bool = False) -> tuple | str:
    """How to rebuild a call's return value from slots; a string says why it can't be.
    ``graph_ok``: outputs that require grad are fine (their backward was captured, aot.py)."""
    if isinstance(value, Tensor):
        slot = rec._slot(value._data)
        if slot is None:
            return "a returned tensor was made outside the recorded ops"
        for s in rec.steps:
            if s.kind == "bind" and s.outs[0] == slot and s.obj is value:
                return ("live", value, slot)
        fn = value.grad_fn
        if fn is not None and not graph_ok and id(fn) in rec.applied:  # a step's loss,
            # after its backward (with ``graph_ok``, the backward that ran was aot.py's)
            return ("spent", slot, fn.name() if eager_nodes else None)
        if value._requires_grad and not graph_ok:
            return ("a returned tensor requires grad: its graph is needed for a later "
                    "backward, which a replay does not build")
        return ("tensor", slot)
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        items = []
        for v in value:
            d = describe_output(rec, v, graph_ok, eager_nodes)
            if isinstance(d, str):
                return d
            items.append(d)
        return (type(value).__name__, items)
    if type(value) is dict:
        pairs = []
        for k, v in value.items():
            d = describe_output(rec, v, graph_ok, eager_nodes)
            if isinstance(d, str):
                return d
            pairs.append((k, d))
        return ("dict", pairs)
    if type(value) is float and any(_changes_state(s) and s.kind == "method"
                                    for s in rec.steps):
        # a float is usually read from state (a scheduler's learning rate, a running
        # average): after a step that changes Python state, the captured value would go stale
        return ("a returned Python float may come from state the call changes (an "
                "optimizer or scheduler step); a replay would return the captured value")
    if type(value) in _LITERALS:
        return ("const", value)
    return f"a returned {type(value).__name__} is not a tensor or a constant"
