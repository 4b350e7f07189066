"""Capture: run a function once, eagerly, while writing down every kernel call it makes.

A ``Recorder`` is active during one call of a compiled function. The call runs exactly as it
would eagerly (so its results are right whatever happens to the capture), and on the side the
recorder writes a flat list of ``Step``\\ s, each one NumPy-level call::

    call        out arrays = kernel(input arrays and constants, **params)    (an op's forward)
    inplace     copyto(target, kernel(target, ...), casting="unsafe")         (``add_``, ``copy_``)
    rule        input gradients = a backward rule, on saved arrays and output gradients
    accumulate  the gradient array added into a leaf's ``.grad``             (AccumulateGrad)
    effect      ``t.grad = None``
    method      ``optimizer.step()``, ``zero_grad()``: run as they are, opaque
    bind        an array read from a tensor that existed before (parameter, argument, buffer,
                a leaf's ``.grad``, a tensor behind a global name)
    check       a value check run again on the replay's values (``_registry.value_check``:
                a target in range, or which of two paths the values take)

Arrays are named by *slots*: the recorder remembers, for every array it has seen, which step
produced it (or which tensor it was read from); a kernel's inputs are then slot numbers.

Where the calls are heard, all of it switched on only while a recorder is active (eager code
pays nothing). The core's own work is heard as one of its listeners (``_CaptureListener``,
pushed on autograd/listeners.py's stack for the capture):

* forward kernels, and the backward rules' ops (rules are written with tapegrad ops): the op
  registry's ``apply``/``apply_`` detour (``_registry.detour("capture", True)``, the switch
  forward-mode AD uses too) announces every op (``run_op``), and :func:`_recorded_apply`
  here runs and records it;
* backward rules: the engine announces each node's rule (``run_node``); an ``OpNode``'s rule
  whose work all went through ops keeps those steps, a rule with NumPy fast paths (most of
  the hot ones) becomes one ``rule`` step that runs it again at replay on a small context
  (``ReplayCtx``, made once per line of the program) instead of a graph node;
* a kernel's scratch dict (``params["_cache"]``: what a forward leaves for its rule) is a slot
  of its own, made fresh by the program at each replay, so two replayed calls never share it;
* the engine's three direct array paths: ``sum_to`` (a broadcast gradient reduced) and
  ``cast_array`` (a gradient rounded to its float16/bfloat16 input's dtype, or widened back
  to float32), which the engine announces as kernel calls (``kernel_called``), and
  AccumulateGrad (``run_accumulate``: the capture accumulates itself, as a program will);
* float16 and bfloat16: an op that the registry ran through ``low_precision.widened_forward``
  (torch's low-precision kernels: widened to float32, computed, rounded once) is recorded as
  that call (``addmm_widened`` in a listing), and a rule that ``widened_rule`` ran on widened
  values as a ``run_widened_rule`` step, so a replay rounds where eager code rounds;
* the Tensor's own methods (announced from _tensor.py): a conversion, printing or a hook
  (``tensor_called``) is a graph break, as are the flag setters on a tensor from before the
  call; ``t.grad = None`` is an ``effect`` step (``grad_assigned``), and a gradient read
  from ``.grad`` (``grad_read``) is bound as that tensor's ``.grad``;
* Module's hooks (announced from nn/modules/module.py, ``module_called``): registering one,
  or calling a module that has some, is a graph break;
* dropout's noise (announced from _rng.py, ``noise_drawn``): ``Engine.dropout_noise`` (and
  ``alpha_dropout_noise``) is recorded as a call on the default generator, so a replay draws
  from the stream exactly as eager code does; seeding a generator or setting its state
  (``torch.manual_seed`` inside the call, announced as ``run_method``) is an opaque call,
  made again at replay;
* the optimizers' ``step`` and ``zero_grad``, ``Module.zero_grad`` and the LR schedulers'
  ``step`` (announced from optim/optimizer.py, nn/modules/module.py and
  optim/lr_scheduler.py as ``run_method``): each is recorded as an opaque method call whose
  Python runs again at replay, on the real state (an Adam step's bias corrections, a
  scheduler's learning rate change every step, so they cannot be constants);
* value checks (``_registry.value_check``: the functions library code calls to read values
  in Python before a kernel, such as cross-entropy's target range or embedding's indices,
  announced as ``value_checked``): each call becomes a step on the same arrays, so a replay
  raises the error eager code raises; a check that returns arrays (an index array derived
  from a target) is a ``call`` whose outputs later kernels read; one that returns a Python
  value (which path the values take) is replayed as "the same value again", else
  ``PathChanged``: the replay gives the call back to eager code (replay.py), which takes the
  other path;
* outputs whose shape depends on the values (``nonzero``, ``unique``, ``masked_select``: the
  entries marked ``dynamic_shape``): the steps after such a call were recorded for its shape,
  so a ``check`` step follows it (``output_shape``), and a replay that finds another shape
  raises ``PathChanged``: that call runs eagerly.

What ends a capture (a *graph break*): reading a tensor's values into Python (``.item()``,
``bool()``, ``.tolist()``, ``.numpy()``, printing), registering hooks, hooks already on the
tensors or modules met, ``create_graph``, a closure passed to ``optimizer.step``, assigning
``.data`` or a tensor to ``.grad``, ``requires_grad_`` on a tensor from before the call, a
random op whose values are drawn outside its kernel (``torch.normal(mean, std)`` with
``mean`` requiring grad). The call goes on eagerly; the recorder only notes the reason (see
``compiler.explain``). After the call, a side effect a replay would not repeat is one too:
a name, attribute or closure variable the call rebound, a list, dict or set it changed in
place (``guards.Rebinds``, ``Recorder.side_effects``).

What a capture cannot see: values computed from arrays outside any kernel (library code that
reads ``._data`` with NumPy, ``torch.randn`` inside the call). Such a tensor is bound like a
constant; replay.py captures twice and compares (program.py ``same_steps``), so a constant
that changes between calls sends the function to eager execution. Checks on values made
outside kernels are repeated only where the library marks them as value checks (above).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from .. import _random
from .._random import default_generator
from .._tensor import Tensor
from ..autograd import engine, forward_ad, listeners
from ..autograd.grad_mode import _state
from ..ops import _registry, low_precision
from .guards import container_tensors


class Unsupported(RuntimeError):
    """A graph break under ``fullgraph=True`` (torch's ``torch._dynamo.exc.Unsupported``)."""


GraphBreak = Unsupported  # the name the compiler's code and tests use


class PathChanged(Exception):
    """Raised by a replay's value check: eager code would take another path on these values
    (replay.py then runs the call eagerly)."""


# The recorder of the call being captured, or None (one at a time).
_active: Recorder | None = None


# ---------------------------------------------------------------------------------------------
# The array-level helpers a program calls (the same NumPy calls eager code makes)
# ---------------------------------------------------------------------------------------------

def accumulate_grad(t: Tensor, g: np.ndarray) -> None:
    """AccumulateGrad, first order: a copy laid out like the leaf, or an in-place add."""
    old = t._grad
    if old is None:
        data = np.empty_like(t._data)
        np.copyto(data, g)
        t._grad = Tensor._make(data)
    else:
        np.add(old._data, g, out=old._data, casting="unsafe")
        old._version_counter.value += 1


def accumulate_grad_steal(t: Tensor, g: np.ndarray) -> None:
    """AccumulateGrad when the program holds the only reference to ``g`` (laid out like the
    leaf at capture): the array becomes ``.grad`` itself, as eager AccumulateGrad steals a free
    buffer. (A leaf read through a container's item may be another tensor now, laid out
    otherwise: then a copy laid out like it, as eager makes.)"""
    old = t._grad
    if old is None:
        if g.strides != t._data.strides:
            data = np.empty_like(t._data)
            np.copyto(data, g)
            g = data
        t._grad = Tensor._make(g)
    else:
        np.add(old._data, g, out=old._data, casting="unsafe")
        old._version_counter.value += 1


def clear_grad(t: Tensor) -> None:
    """``t.grad = None``."""
    t._grad = None


def inplace(kernel: Callable, target: np.ndarray, *args: Any, **params: Any) -> None:
    """An in-place op: the kernel on the target's values, written back into its memory."""
    np.copyto(target, kernel(target, *args, **params), casting="unsafe")


def expect(check: Callable, expected: Any, *args: Any) -> None:
    """A value check at replay: it raises eager's error on bad values, and its answer (which
    path the values take) must be the capture's, else the program does not apply."""
    if check(*args) != expected:
        raise PathChanged(check.__name__)


def expect_late(check: Callable, expected: Any, *args: Any) -> None:
    """``expect`` after the program has changed state (an optimizer step, the RNG): too late
    to hand the call back to eager code, so a changed path is an error."""
    if check(*args) != expected:
        raise RuntimeError(
            f"tapegrad.compile: the value check {check.__name__} takes another path than at "
            "capture, after the compiled program has already changed state; call the "
            "function uncompiled for these values")


def default_engine() -> Any:
    """The default generator's engine (looked up at each call: manual_seed may replace it)."""
    return default_generator.engine


# ---------------------------------------------------------------------------------------------
# The recording
# ---------------------------------------------------------------------------------------------

class SlotRef:
    """A keyword parameter of a kernel that is an array of the program (a slot), not a constant
    (cross-entropy's target array, say)."""

    __slots__ = ("slot",)

    def __init__(self, slot: int) -> None:
        self.slot = slot

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SlotRef) and other.slot == self.slot

    def __hash__(self) -> int:
        return hash(self.slot)


class TupleRef:
    """A keyword parameter that is a tuple holding arrays of the program (an index key such as
    ``(slice(None), idx)``): per item a ``SlotRef`` or a constant."""

    __slots__ = ("items",)

    def __init__(self, items: tuple) -> None:
        self.items = items

    def slots(self) -> list[int]:
        return [x.slot for x in self.items if isinstance(x, SlotRef)]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TupleRef) or len(other.items) != len(self.items):
            return False
        for a, b in zip(self.items, other.items, strict=True):
            if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
                if not (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
                        and a.tobytes() == b.tobytes()):
                    return False
            elif type(a) is not type(b) or a != b:
                return False
        return True

    def __hash__(self) -> int:
        return hash(len(self.items))


class Step:
    """One recorded call. ``ins``: per argument, ``("s", slot)`` or ``("c", constant)``."""

    __slots__ = ("kind", "fn", "ins", "params", "outs", "name", "obj")

    def __init__(self, kind: str, fn: Any, ins: tuple, params: dict, outs: tuple, name: str,
                 obj: Any = None) -> None:
        self.kind = kind
        self.fn = fn
        self.ins = ins
        self.params = params
        self.outs = outs
        self.name = name
        # the tensor (bind, accumulate) or object (method) the step acts on; for a call,
        # True when the kernel returns a sequence of arrays
        self.obj = obj


class Recorder:
    """The steps of one call, the arrays they read and wrote, and any graph breaks."""

    def __init__(self, args: tuple, kwargs: dict, fullgraph: bool = False) -> None:
        self.steps: list[Step] = []
        self.slot_of: dict[int, int] = {}  # id(array) -> slot
        self.arrays: list[np.ndarray] = []  # slot -> array (kept alive: ids stay unique)
        self.snapshots: list[Any] = []  # slot -> a copy of a bound tensor's values (else None)
        self.breaks: list[str] = []
        self.paused = 0
        self.backward_ran = False
        # the graph nodes a backward in the call ran, by id (held, so that no later node can
        # take a freed one's id and pass for spent)
        self.applied: dict[int, Any] = {}
        self.grad_of: dict[int, tuple] = {}  # id(a .grad tensor read) -> (it, its leaf)
        # id(tensor) -> (globals dict or closure cell, name or None): tensors the function
        # reaches by a name, read through that name at replay (set by replay.py)
        self.named: dict[int, tuple] = {}
        self.fullgraph = fullgraph
        self.arg_tensors: dict[int, tuple] = {}  # id(tensor) -> ("arg", i) / ("kwarg", name)
        self.arg_arrays: dict[int, Tensor] = {}  # id(array) -> the argument tensor holding it
        self.named_arrays: dict[int, Tensor] = {}  # the same for the tensors in ``named``
        # id(array) -> the module buffer or parameter holding it (a kernel parameter that is
        # a buffer's array, as batch norm's running statistics, is read live; set by replay.py)
        self.module_arrays: dict[int, Tensor] = {}
        self.optimizers: list = []  # optimizers the call reaches (set by replay.py)
        # an argument tensor is read as ``args[i]``; one inside a list, tuple or dict argument
        # (a step given its parameters as a list) through its path: ``("arg", i, path)``
        for where, a in [(("arg", i), a) for i, a in enumerate(args)] + [
                (("kwarg", k), a) for k, a in kwargs.items()]:
            if isinstance(a, Tensor):
                self.arg_tensors.setdefault(id(a), where)
                self.arg_arrays.setdefault(id(a._data), a)
            else:
                for path, t in container_tensors(a):
                    self.arg_tensors.setdefault(id(t), (*where, path))
                    self.arg_arrays.setdefault(id(t._data), t)

    def _holder(self, a: np.ndarray) -> Tensor | None:
        """The tensor a replay reads ``a`` through: an argument, a tensor behind a global name,
        attribute or closure variable, a module's parameter or buffer. None for any other."""
        key = id(a)
        for table in (self.arg_arrays, self.named_arrays, self.module_arrays):
            t = table.get(key)
            if t is not None:
                return t
        return None

    def from_outside(self, t: Tensor) -> bool:
        """Is ``t`` a tensor that existed before the call: an argument, a module's parameter or
        buffer, a tensor behind a name, or one the program has bound?"""
        if id(t) in self.arg_tensors or id(t) in self.named:
            return True
        if self.module_arrays.get(id(t._data)) is t:
            return True
        return any(s.obj is t for s in self.steps if s.kind == "bind")

    # -- slots ----------------------------------------------------------------------------------

    def _new_slot(self, a: np.ndarray, snapshot: Any = None) -> int:
        slot = len(self.arrays)
        self.arrays.append(a)
        self.snapshots.append(snapshot)
        self.slot_of[id(a)] = slot
        return slot

    def _slot(self, a: np.ndarray) -> int | None:
        slot = self.slot_of.get(id(a))
        if slot is not None and self.arrays[slot] is a:
            return slot
        return None

    def ref(self, x: Any) -> tuple:
        """The input reference of one argument: a slot for a tensor's array, else a constant."""
        if isinstance(x, Tensor):
            a = x._data
            slot = self._slot(a)
            if slot is None:  # first read of a tensor made before this call (or outside ops)
                owner = self._holder(a)
                if owner is not None and owner is not x:  # another tensor on its array
                    return self.ref(owner)  # (``x.detach()`` of an argument): through it
                slot = self._new_slot(a, np.array(a, copy=True))
                via = self.grad_of.get(id(x))
                params = {"grad_of": via[1]} if via is not None and via[0] is x else {}
                self.steps.append(Step("bind", None, (), params, (slot,), "bind", x))
            return ("s", slot)
        if isinstance(x, np.ndarray):
            slot = self._slot(x)
            if slot is not None:
                return ("s", slot)
            return ("c", np.array(x, copy=True))
        return ("c", x)

    def array_ref(self, v: Any) -> tuple:
        """The input reference of a value check's argument: a tensor's or a program array's
        slot (an argument tensor's array is read through the argument), else a constant."""
        if isinstance(v, np.ndarray):
            slot = self._live_slot(v)
            return ("s", slot) if slot is not None else ("c", np.array(v, copy=True))
        return self.ref(v)

    def _live_slot(self, v: np.ndarray) -> int | None:
        """The slot of a program array, or of the array of a tensor the call reads at each
        replay (an argument, a tensor behind a global name or closure variable, a module's
        parameter or buffer): bound through that tensor. None for anything else."""
        slot = self._slot(v)
        if slot is not None:
            return slot
        t = self._holder(v)
        return None if t is None else self.ref(t)[1]

    def params(self, params: dict) -> dict:
        """A kernel's keyword parameters: arrays of the program become slot references."""
        out = {}
        for k, v in params.items():
            if k == "_cache" and type(v) is dict:
                # a forward's scratch dict for its backward rule: made fresh at each replay
                # (a slot of the program), so that two replayed calls never share one
                slot = self._slot(v)  # type: ignore[arg-type]
                if slot is None:
                    slot = self._new_slot(v)  # type: ignore[arg-type]
                    self.steps.append(Step("call", dict, (), {}, (slot,), "dict"))
                v = SlotRef(slot)
            elif isinstance(v, np.ndarray):
                v = self._param_array(v)
            elif type(v) is tuple and any(isinstance(x, np.ndarray) for x in v):
                v = TupleRef(tuple(self._param_array(x) if isinstance(x, np.ndarray) else x
                                   for x in v))
            out[k] = v
        return out

    def _param_array(self, v: np.ndarray) -> Any:
        """An array parameter: a slot reference to the program's array, or a constant copy."""
        slot = self._live_slot(v)
        if slot is None:
            slot = self._copy_of_arg(v)
        return SlotRef(slot) if slot is not None else np.array(v, copy=True)

    def _copy_of_arg(self, v: np.ndarray) -> int | None:
        """A kernel parameter that is a copy of an argument tensor's values (cross-entropy
        copies its target), or of a tensor read through a name: recorded as that copy, so a
        replay follows the argument or the name. Matched by value, which is the only trace a
        copy leaves; only for integer and bool arrays (class indices, masks), where a constant
        equal to an argument by chance is unlikely."""
        if v.dtype.kind not in "iub":
            return None
        for t in (*self.arg_arrays.values(), *self.named_arrays.values()):
            a = t._data
            if a.shape == v.shape and a.dtype == v.dtype and a.tobytes() == v.tobytes():
                src = self.ref(t)
                self.steps.append(Step("call", np.copy, (src,), {}, self.outputs((v,)), "copy"))
                return self.slot_of[id(v)]
        return None

    def outputs(self, arrays: tuple) -> tuple:
        return tuple(self._new_slot(a) for a in arrays)

    # -- graph breaks ---------------------------------------------------------------------------

    def graph_break(self, reason: str) -> None:
        """Note why the call cannot be replayed; it goes on eagerly, unrecorded."""
        if self.breaks:
            return
        where = _user_frame()
        text = f"{reason}" + (f" (at {where})" if where else "")
        self.breaks.append(text)
        self.paused += 1  # nothing more to record
        log("graph_breaks", f"graph break: {text}")
        if self.fullgraph:
            raise Unsupported(f"graph break (fullgraph=True): {text}")

    def side_effects(self, change: str | None) -> None:
        """After the call: a name it rebound or a container it changed (``guards.Rebinds``)
        is a graph break, noted as one, since a replay would not repeat it."""
        if change is None or self.breaks:
            return
        text = f"{change}, a side effect a replay would not repeat"
        self.breaks.append(text)
        log("graph_breaks", f"graph break: {text}")
        if self.fullgraph:
            raise Unsupported(f"graph break (fullgraph=True): {text}")


def arg_source(where: tuple) -> str:
    """The expression a program reads an argument tensor through: ``args[0]``,
    ``kwargs['x']``, or for an item of a container argument ``args[0][2]``."""
    base = f"args[{where[1]}]" if where[0] == "arg" else f"kwargs[{where[1]!r}]"
    return base + "".join(f"[{k!r}]" for k in where[2]) if len(where) > 2 else base


def arg_value(where: tuple, args: tuple, kwargs: dict) -> Any:
    """The argument tensor ``where`` (``Recorder.arg_tensors``) names in this call."""
    v = args[where[1]] if where[0] == "arg" else kwargs[where[1]]
    for k in where[2] if len(where) > 2 else ():
        v = v[k]
    return v


def log(kind: str, text: str) -> None:
    """Print ``text`` to stderr when ``TAPEGRAD_LOGS`` or torch's ``TORCH_LOGS`` (a comma-
    separated list) names ``kind``: ``graph_breaks`` or ``recompiles``."""
    for var in ("TAPEGRAD_LOGS", "TORCH_LOGS"):
        names = os.environ.get(var, "")
        if names and kind in (n.strip().lstrip("+") for n in names.split(",")):
            print(f"[tapegrad.compile] {text}", file=sys.stderr)
            return


def _user_frame() -> str:
    """file:line of the innermost frame outside tapegrad's own package."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    f: Any = sys._getframe(2)
    while f is not None:
        fname = f.f_code.co_filename
        if not os.path.abspath(fname).startswith(pkg):
            return f"{fname}:{f.f_lineno}"
        f = f.f_back
    return ""


# ---------------------------------------------------------------------------------------------
# The hooks, installed for the duration of a capture
# ---------------------------------------------------------------------------------------------

def _recorded_apply(op: Any, inputs: tuple, params: dict) -> Any:
    """An op during a capture: run plainly (the detour off inside it), and recorded as a
    ``call`` step."""
    rec = _active
    with forward_ad._detour_off():  # (``op(...)``: ``apply``, or ``apply_nondiff``)
        if rec is None or rec.paused:
            return op(*inputs, **params)
        if op.forward is _random._take_values:
            # a random op on inputs that require grad (torch.normal(mean, std), bernoulli):
            # its values are drawn before the op, outside any kernel a replay could run
            rec.graph_break(f"{op.name} draws random values outside the recorded kernels")
            return op(*inputs, **params)
        ins = tuple(rec.ref(x) for x in inputs)
        kw = rec.params(params)
        result = op(*inputs, **params)
    arrays = (result._data,) if op.outputs == 1 else tuple(r._data for r in result)
    fn = _kernel(op, inputs)
    name = op.name if fn is op.forward else fn.__name__
    outs = rec.outputs(arrays)
    # (obj: the kernel returns a sequence, even of one array: ``split`` into one piece)
    rec.steps.append(Step("call", fn, ins, kw, outs, name, op.outputs != 1))
    if op.dynamic_shape:
        # the output's shape depends on the values (nonzero, unique): the steps after it were
        # recorded for this shape, so a replay checks it, and another shape runs eagerly
        for slot, a in zip(outs, arrays, strict=True):
            rec.steps.append(Step("check", output_shape, (("s", slot),), {}, (),
                                  f"{op.name}_shape", a.shape))
    return result


def output_shape(a: np.ndarray) -> tuple:
    """The shape of an op's output whose shape depends on its input's values (a replay
    expects the capture's shape: ``expect``)."""
    return a.shape


def _kernel(op: Any, inputs: tuple) -> Callable:
    """The function the registry ran for ``op`` on these inputs: its forward, or with a float16
    or bfloat16 input, the forward as torch's low-precision kernels compute it
    (``low_precision.widened_forward``)."""
    if not (_registry._LOW and op.widen and any(
            isinstance(x, Tensor) and x._data.dtype.char in "eE" for x in inputs)):
        return op.forward
    fn = _WIDENED.get(op)
    if fn is None:
        def fn(*arrays: Any, **params: Any) -> Any:
            return low_precision.widened_forward(op, list(arrays), params)

        fn.__name__ = fn.__qualname__ = op.name + "_widened"
        _WIDENED[op] = fn
    return fn


_WIDENED: dict = {}  # op -> its widened forward, one function per op (same_steps compares them)


def _recorded_apply_(op: Any, target: Tensor, others: tuple, params: dict) -> Tensor:
    """An in-place op during a capture: run plainly, and recorded as an ``inplace`` step."""
    rec = _active
    with forward_ad._detour_off():
        if rec is None or rec.paused:
            return _registry.apply_(op, target, *others, **params)
        ins = (rec.ref(target),) + tuple(rec.ref(x) for x in others)
        kw = rec.params(params)
        result = _registry.apply_(op, target, *others, **params)
    # the target's array keeps its slot: it was written in place
    fn = _kernel(op, (target, *others))
    rec.steps.append(Step("inplace", fn, ins, kw, (), op.name + "_"))
    return result


class ReplayCtx:
    """What a backward rule reads from its node, rebuilt from arrays at replay."""

    __slots__ = ("saved", "params", "input_meta", "needs_input_grad", "input_shapes")

    def __init__(self, saved: tuple, params: dict, meta: tuple) -> None:
        self.saved = saved
        self.params = params
        self.input_meta, self.needs_input_grad, self.input_shapes = meta


def rule_meta(input_meta: tuple) -> tuple:
    """What a rule's context says about its inputs, computed once per program step."""
    return (input_meta, tuple(m is not None for m in input_meta),
            tuple(m[0] if m is not None else None for m in input_meta))


def run_rule(op: Any, saved: tuple, grads: tuple, params: dict, meta: tuple) -> tuple:
    """A backward rule run as one step: saved values and gradients in as arrays, the input
    gradients out as arrays (None where there is none), with grad mode off as in the engine.
    ``meta`` is ``rule_meta(node.input_meta)``."""
    make = Tensor._make
    ctx = ReplayCtx(tuple(make(a) if type(a) is np.ndarray else a for a in saved), params,
                    meta)
    gs = [None if g is None else make(g) for g in grads]
    prev = _state.enabled
    _state.enabled = False
    try:
        out = _registry.first_order(op, ctx, gs[0] if op.outputs == 1 else gs)
    finally:
        _state.enabled = prev
    return tuple(None if g is None else g._data for g in out)


def run_widened_rule(op: Any, saved: tuple, grads: tuple, params: dict, meta: tuple) -> tuple:
    """``run_rule`` as ``low_precision.widened_rule`` runs a rule: its float16/bfloat16 saved
    values and gradients widened to float32 first (the engine's recorded casts round the
    results)."""
    def wide(a: Any) -> Any:
        return low_precision.widen(a) if type(a) is np.ndarray and a.dtype.char in "eE" else a

    return run_rule(op, tuple(wide(a) for a in saved), tuple(wide(g) for g in grads), params,
                    meta)


def _recorded_node_apply(node: Any, grads: list, run: Callable) -> tuple:
    """An OpNode's rule (``run(grads)``): its ops recorded one by one when it is written with
    ops only, else the whole rule recorded as one ``run_rule`` step (rules with NumPy fast
    paths)."""
    rec = _active
    if rec is None or rec.paused:
        return run(grads)
    if any(g is not None and g._data.dtype.kind == "c" for g in grads):
        rec.graph_break("a complex gradient")
        return run(grads)
    n_steps, n_slots = len(rec.steps), len(rec.arrays)
    rec.applied[id(node)] = node
    saved = node.saved
    widened = (_registry._LOW and node.op.widen and not _state.enabled
               and low_precision.rule_widens(node.op, grads))  # (OpNode.apply's test)
    out = run(grads)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    fine = all(s.kind != "bind" for s in rec.steps[n_steps:]) and all(
        g is None or (isinstance(g, Tensor) and rec._slot(g._data) is not None) for g in outs)
    if fine:
        return out
    # forget what was recorded inside the rule, and record the rule as one step
    del rec.steps[n_steps:]
    for slot in range(n_slots, len(rec.arrays)):
        a = rec.arrays[slot]
        if rec.slot_of.get(id(a)) == slot:
            del rec.slot_of[id(a)]
    ins = (("c", node.op), ("c", tuple(rec.ref(x) for x in saved)),
           ("c", tuple(rec.ref(g) if g is not None else ("c", None) for g in grads)),
           ("c", rec.params(node.params)), ("c", rule_meta(node.input_meta)))
    slots = tuple(rec._new_slot(g._data) if isinstance(g, Tensor) else None for g in outs)
    run = run_widened_rule if widened else run_rule
    rec.steps.append(Step("rule", run, ins, {}, slots, node.op.name + "_backward"))
    return out


def _recorded_kernel(name: str, fn: Callable, inputs: tuple, params: dict,
                     outputs: tuple) -> None:
    """An array call the engine made outside any op (``sum_to``'s reduction, ``cast``),
    recorded as a ``call`` step."""
    rec = _active
    if rec is not None and not rec.paused:
        ins = tuple(rec.ref(x) for x in inputs)
        rec.steps.append(Step("call", fn, ins, params, rec.outputs(outputs), name))


def _recorded_accumulate(run: Callable, args: tuple) -> None:
    """AccumulateGrad during a capture (``run(*args)``: the engine's ``_run_accumulate``):
    recorded as an ``accumulate`` step, and done as the program will do it."""
    node, g, create_graph, _capture, _captured, accumulate, listen = args
    rec = _active
    if rec is None or rec.paused or not accumulate:
        return run(*args)
    t = node.variable
    if create_graph:
        rec.graph_break("backward(create_graph=True)")
    elif t._hooks or t._post_hooks:
        rec.graph_break("a hook on a leaf tensor")
    if rec.paused:
        return run(*args)
    rec.backward_ran = True
    if g._data.shape != t._data.shape:
        g = engine._heard_sum_to(g, t._data.shape, listen)
    if g._data.dtype != t._data.dtype:
        if g._data.dtype.kind == "c" and t._data.dtype.kind != "c":
            g = g.real
        g = g.to(t.dtype)
    ins = (rec.ref(g),)
    rec.steps.append(Step("accumulate", accumulate_grad, ins, {}, (), "accumulate_grad", t))
    accumulate_grad(t, g._data)


class _CaptureListener(listeners.Listener):
    """What a capture hears of the core's work (autograd/listeners.py): each op, each
    OpNode's rule, the engine's own array calls and AccumulateGrad, recorded by the active
    recorder (the helpers above)."""

    def run_op(self, op: Any, inputs: tuple, params: dict, run: Callable) -> Any:
        return _recorded_apply(op, inputs, params)

    def run_op_(self, op: Any, target: Any, others: tuple, params: dict, run: Callable) -> Any:
        return _recorded_apply_(op, target, others, params)

    def run_node(self, node: Any, run: Callable, grads: list) -> Any:
        if type(node).apply is not _registry.OpNode.apply:  # a custom Function's node...
            return run(grads)
        return _recorded_node_apply(node, grads, run)

    def kernel_called(self, name: str, fn: Callable, inputs: tuple, params: dict,
                      outputs: tuple) -> None:
        _recorded_kernel(name, fn, inputs, params, outputs)

    def run_accumulate(self, node: Any, run: Callable, *args: Any) -> Any:
        return _recorded_accumulate(run, args)

    def tensor_called(self, tensor: Any, name: str) -> None:
        """A Tensor method that hands values (or a say over the graph) to Python: a graph
        break; a flag set on a tensor the program reads from outside (an argument, a
        parameter, a tensor behind a name), whose flag the guards assume, too. A tensor the
        call made itself (``x.detach().requires_grad_()``, a backward rule's own small graph)
        gets the same flag at every call, so the capture goes on."""
        rec = _active
        if rec is None or rec.paused:
            return
        if name in _FLAG_SETTERS:
            if rec.from_outside(tensor):
                rec.graph_break(_FLAG_SETTERS[name])
        else:
            rec.graph_break(_BREAKS[name])

    def grad_read(self, tensor: Any, grad: Any) -> None:
        """``t.grad`` read: the gradient is read as "``t``'s ``.grad``" when the program binds
        it."""
        rec = _active
        if rec is not None and not rec.paused:
            rec.grad_of[id(grad)] = (grad, tensor)

    def grad_assigned(self, tensor: Any, value: Any) -> None:
        """``t.grad = None`` (and ``del t.grad``) recorded as a step; any other assignment to
        ``.grad`` is a graph break."""
        rec = _active
        if rec is not None and not rec.paused:
            if value is None:
                rec.steps.append(Step("effect", clear_grad, (), {}, (), "clear_grad", tensor))
            else:
                rec.graph_break("a tensor assigned to .grad")

    def module_called(self, module: Any, name: str) -> None:
        """A module's hooks registered, or a module with hooks called: a graph break, as a
        replay would not call them."""
        rec = _active
        if rec is not None and not rec.paused:
            if name == "__call__":
                rec.graph_break(f"hooks on the module {type(module).__name__}")
            else:
                rec.graph_break(_MODULE_BREAKS[name])

    def run_method(self, obj: Any, method: Callable, args: tuple, kwargs: dict,
                   run: Callable) -> Any:
        # (an optimizer's step takes a closure; a scheduler's step an epoch or a metric)
        takes_closure = getattr(method, "hooked", False)
        return _recorded_method(obj, method.__name__, method, run, args, kwargs, takes_closure)

    def value_checked(self, check: Callable, args: tuple, result: Any) -> None:
        _recorded_check(check, args, result)

    def noise_drawn(self, engine: Any, name: str, shape: Any, dtype: Any, p: float,
                    noise: Any) -> None:
        """An engine's dropout draw recorded as a call on the default generator: a replay
        draws again, from the stream, as eager code does."""
        rec = _active
        if rec is None or rec.paused:
            return
        if engine is not _random.default_generator.engine:
            rec.graph_break("dropout noise from a generator other than the default one")
        else:
            ins = (("c", tuple(shape)), ("c", dtype), ("c", p))
            outs = noise if isinstance(noise, tuple) else (noise,)
            rec.steps.append(Step("call", _DRAW_CALLS[name], ins, {}, rec.outputs(outs), name))


_LISTENER = _CaptureListener()


def _draw_call(name: str) -> Callable:
    """What a program calls for a recorded draw: the same draw from the default generator."""

    def call(shape: Any, dtype: Any, p: float) -> Any:
        return getattr(default_engine(), name)(shape, dtype, p)

    call.__name__ = name
    return call


_DRAWS = ("dropout_noise", "alpha_dropout_noise")  # the Engine's recorded dropout draws
_DRAW_CALLS = {name: _draw_call(name) for name in _DRAWS}


def _recorded_method(obj: Any, name: str, orig: Callable, run: Callable, args: tuple,
                     kwargs: dict, takes_closure: bool = True) -> Any:
    """A method call (``run(*args, **kwargs)``, the same as ``orig(obj, *args, **kwargs)``)
    recorded as one opaque step: its own Python runs at replay, on live state.
    ``takes_closure``: an optimizer's ``step(closure)`` (a graph break: the closure's work
    would not be recorded)."""
    rec = _active
    if rec is None or rec.paused:
        return run(*args, **kwargs)
    if takes_closure and name == "step" and (args or kwargs.get("closure") is not None):
        if args[0] if args else kwargs.get("closure"):
            rec.graph_break("optimizer.step(closure)")
            return run(*args, **kwargs)
    ins = tuple(rec.ref(a) for a in args)
    kw = dict(kwargs)
    rec.paused += 1
    try:
        out = run(*args, **kwargs)
    finally:
        rec.paused -= 1
    rec.steps.append(Step("method", orig, ins, kw, (), f"{type(obj).__name__}.{name}", obj))
    return out


def _recorded_check(check: Callable, args: tuple, out: Any) -> None:
    """A value check that ran during a capture (``out = check(*args)``; had the values been
    bad, eager's error would have ended the call before this): recorded as a step on the same
    arrays."""
    rec = _active
    if rec is None or rec.paused:
        return
    ins = tuple(rec.array_ref(a) for a in args)
    if isinstance(out, np.ndarray):
        rec.steps.append(Step("call", check, ins, {}, rec.outputs((out,)), check.__name__))
    elif isinstance(out, tuple) and out and all(isinstance(a, np.ndarray) for a in out):
        rec.steps.append(Step("call", check, ins, {}, rec.outputs(out), check.__name__, True))
    elif out is None or type(out) in (bool, int, str):
        rec.steps.append(Step("check", check, ins, {}, (), check.__name__, out))
    else:
        rec.graph_break(f"the value check {check.__name__} returned a {type(out).__name__}")


# Tensor methods that hand a tensor's values (or a say over the graph) to Python (announced
# to ``_CaptureListener.tensor_called``), and the assignment to ``.data``.
_BREAKS = {
    "item": "Tensor.item() reads a value into Python",
    "tolist": "Tensor.tolist() reads values into Python",
    "numpy": "Tensor.numpy() hands the array out",
    "__array__": "a tensor converted to a NumPy array",
    "__bool__": "data-dependent control flow (bool(tensor))",
    "__float__": "float(tensor) reads a value into Python",
    "__int__": "int(tensor) reads a value into Python",
    "__index__": "a tensor used as a Python index",
    "__repr__": "printing a tensor",
    "__str__": "printing a tensor",
    "__format__": "formatting a tensor",
    "register_hook": "Tensor.register_hook",
    "register_post_accumulate_grad_hook": "Tensor.register_post_accumulate_grad_hook",
    "retain_grad": "Tensor.retain_grad",
    "data=": "assigning .data",
}
# Tensor's flag setters: a graph break only on a tensor the program reads from outside.
_FLAG_SETTERS = {
    "requires_grad_": "Tensor.requires_grad_ changes a flag the program depends on",
    "requires_grad=": "assigning .requires_grad changes a flag the program depends on",
}
_MODULE_BREAKS = {
    "register_forward_hook": "Module.register_forward_hook",
    "register_forward_pre_hook": "Module.register_forward_pre_hook",
    "register_full_backward_hook": "Module.register_full_backward_hook",
    "register_full_backward_pre_hook": "Module.register_full_backward_pre_hook",
}


@contextmanager
def recording(rec: Recorder) -> Iterator[Recorder]:
    """Listen to the core (``_LISTENER``), and run the block with ``rec`` active."""
    global _active
    if "profiler" in _registry._DETOURS:  # (it hears the ops eager code runs)
        rec.graph_break("the profiler is recording")
    elif _registry._SPECIAL:  # forward-mode AD or saved-tensor hooks are on: not for capture
        rec.graph_break("forward-mode AD or saved-tensor hooks are active")
    for other in listeners.stack():  # (a listener the capture would keep from hearing)
        if other.capture_break is not None:
            rec.graph_break(other.capture_break)
    _active = rec
    _registry.detour("capture", True)
    listeners.push(_LISTENER)
    try:
        yield rec
    finally:
        listeners.pop(_LISTENER)
        _active = None
        _registry.detour("capture", False)


def capturing() -> bool:
    """True while a compiled function is being captured."""
    return _active is not None
