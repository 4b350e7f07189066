"""Compiled calls whose outputs need their graph: a forward program, a backward program, and
the one node that joins them (torch's AOTAutograd split).

``model = torch.compile(model)`` followed by an ordinary eager training loop calls the compiled
model with grad mode on, and the loss's ``backward()`` runs later, outside the compiled call.
A replay makes no graph nodes, so such a call needs its backward captured too. At capture
(after the forward ran eagerly, recorded), the backward is run once more on the side::

    grads = engine.run_backward(outputs, placeholder gradients, retain_graph=True,
                                inputs=every tensor the forward read that requires grad,
                                accumulate=False)

with the recorder still on: every backward rule, gradient sum and reduction lands in a second
list of steps, whose inputs are arrays of the forward (the *saved* arrays) and the placeholder
gradients of the outputs. The two lists become two programs (program.py):

* the forward program returns the call's result, the saved arrays and the output tensors that
  need a graph;
* the backward program takes the saved arrays and the outputs' gradients, and returns one
  gradient per input that requires grad (the total of every path, as the engine computes it
  before AccumulateGrad).

At replay the outputs get one ``CompiledFunctionBackward`` node as ``grad_fn`` (torch's name).
Its edges go to the parameters' AccumulateGrad nodes and the inputs' producers, so the engine
does the rest exactly as eagerly: gradients added into ``.grad`` (stolen when unshared), leaf
hooks, sums with other uses of the same tensors, ``retain_graph`` (the node drops its saved
arrays after a backward without it, and a second backward raises torch's error).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import engine
from ..autograd.grad_mode import _state
from ..autograd.graph import FREED_MESSAGE, Node, version_error

DOUBLE_BACKWARD = "torch.compile with aot_autograd does not currently support double backward"


class CompiledFunctionBackward(Node):
    """The ``grad_fn`` of a replayed call's outputs: runs the captured backward program."""

    __slots__ = ("backward", "saved", "out_meta", "grad_pos", "versions")

    def __init__(self, backward: Any, saved: tuple | None, edges: tuple, out_meta: tuple,
                 grad_pos: tuple, versions: tuple) -> None:
        super().__init__(edges)
        self.backward = backward  # the backward Program's function
        self.saved: tuple | None = saved
        self.out_meta = out_meta  # (shape, NumPy dtype) per output with a graph
        self.grad_pos = grad_pos  # per gradient the program returns: its edge's position
        self.versions = versions  # (tensor, version) of the saved tensors read from outside

    def apply(self, grads: list) -> tuple:
        saved = self.saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        if _state.enabled:  # create_graph: the program's gradients have no graph
            raise RuntimeError(DOUBLE_BACKWARD)
        for t, v in self.versions:
            if t._version_counter.value != v:
                raise version_error(t, None, 0, v)
        arrays = list(saved)
        for i, (shape, dtype) in enumerate(self.out_meta):
            g = grads[i] if i < len(grads) else None
            arrays.append(np.zeros(shape, dtype) if g is None else g._data)
        out = self.backward(arrays, None)
        result: list = [None] * (len(self._next) // 2)
        for pos, g in zip(self.grad_pos, out, strict=True):
            result[pos] = g
        return tuple(result)

    def release(self) -> None:
        self.saved = None

    def __repr__(self) -> str:
        return f"<torch.autograd.function.CompiledFunctionBackward object at {hex(id(self))}>"


class CapturedBackward(Node):
    """The ``grad_fn`` of a capture call's outputs: the call ran eagerly, so its outputs have
    their eager graph, and this node, named as torch.compile's (``CompiledFunctionBackward``),
    passes each output's gradient on to it unchanged. Outputs print alike at every call."""

    __slots__ = ()
    _cpp_name = "CompiledFunctionBackward"

    def apply(self, grads: list) -> tuple:
        n = len(self._next) // 2  # (the engine's list ends at the last output reached)
        return tuple(grads) + (None,) * (n - len(grads))

    __repr__ = CompiledFunctionBackward.__repr__


def mark_outputs(outs: list[Tensor]) -> None:
    """Put one ``CapturedBackward`` in front of the eager graph of a capture's outputs (those
    with a ``grad_fn``: a returned leaf stays itself)."""
    outs = [t for t in outs if t.grad_fn is not None]
    if not outs:
        return
    node = CapturedBackward(tuple((t.grad_fn, t._output_nr) for t in outs))
    for i, t in enumerate(outs):
        t._grad_fn = node
        t._output_nr = i


class AotCapture:
    """What the backward capture of one call found."""

    __slots__ = ("fwd_steps", "bwd_steps", "grad_slots", "n_fwd_slots", "inputs", "grads",
                 "outputs")

    def __init__(self) -> None:
        self.fwd_steps: list = []
        self.bwd_steps: list = []
        self.grad_slots: list[int] = []  # the placeholders' slots: the outputs' gradients
        self.n_fwd_slots = 0
        self.inputs: list[Tensor] = []  # every tensor the node has an edge to, in edge order
        self.grads: tuple = ()  # per input that requires grad: its gradient tensor or None
        self.outputs: list[Tensor] = []  # the outputs that need a graph


def graph_outputs(value: Any) -> list[Tensor] | None:
    """The output tensors that need a graph (in the order they are met), or None if none."""
    found: list[Tensor] = []

    def walk(v: Any) -> None:
        if isinstance(v, Tensor):
            if v._requires_grad and all(o is not v for o in found):
                found.append(v)
        elif type(v) in (tuple, list):
            for x in v:
                walk(x)
        elif type(v) is dict:
            for x in v.values():
                walk(x)

    walk(value)
    return found or None


def capture_backward(rec: Any, outputs: list[Tensor], module: Any) -> AotCapture | str:
    """Run the outputs' backward once on placeholder gradients, recorded as its own steps
    (the recorder is active). A string says why the call cannot be split."""
    aot = AotCapture()
    for o in outputs:
        if o.grad_fn is None:
            return "a returned tensor that requires grad is a leaf"
        if rec._slot(o._data) is None:
            return "a returned tensor was made outside the recorded ops"
    bound: list[Tensor] = []
    for s in rec.steps:
        if s.kind == "bind" and isinstance(s.obj, Tensor) and all(t is not s.obj for t in bound):
            bound.append(s.obj)
    # the edges: parameters first (in the module's order), other tensors read, then the
    # tensor arguments, as torch's compiled function lists them
    params = [p for p in module.parameters()] if module is not None else []
    args = sorted((t for t in bound if id(t) in rec.arg_tensors),
                  key=lambda t: _arg_order(rec.arg_tensors[id(t)]))
    inputs = [p for p in params if any(p is t for t in bound)]
    inputs += [t for t in bound if id(t) not in rec.arg_tensors and all(t is not p for p in inputs)]
    inputs += args
    aot.inputs = inputs
    wanted = [t for t in inputs if t._requires_grad]
    aot.fwd_steps = rec.steps
    aot.n_fwd_slots = len(rec.arrays)
    aot.outputs = outputs
    if not wanted:
        return "no tensor the call read requires grad"
    placeholders = []
    for o in outputs:
        g = Tensor._make(np.ones_like(o._data))
        aot.grad_slots.append(rec._new_slot(g._data))
        placeholders.append(g)
    rec.steps = []
    # the forwards' scratch dicts are emptied (and their arrays written) by the rules that
    # read them: kept, copied, for the real backward of this (eager) call
    scratch = [(d, copy.deepcopy(d)) for d in rec.arrays if type(d) is dict]
    hooks = [(t, t._hooks) for t in wanted if t._hooks]
    for t, _ in hooks:  # leaf hooks run at the real backward, not in this one
        t._hooks = None
    try:
        aot.grads = engine.run_backward(outputs, placeholders, retain_graph=True,
                                        create_graph=False, inputs=wanted, allow_unused=True,
                                        accumulate=False) or ()
    finally:
        for t, h in hooks:
            t._hooks = h
        for d, items in scratch:
            d.clear()
            d.update(items)
        aot.bwd_steps = rec.steps
        rec.steps = aot.fwd_steps
    return aot


def _arg_order(where: tuple) -> tuple:
    path = where[2] if len(where) > 2 else ()
    return ((0, where[1], "") if where[0] == "arg" else (1, 0, where[1])) + (
        tuple(map(str, path)),)


def saved_slots(aot: AotCapture, uses: Any, grad_out: list[int]) -> list[int]:
    """The forward's arrays the backward program reads (or returns as a gradient)."""
    slots: set[int] = set(grad_out)
    for s in aot.bwd_steps:
        slots.update(uses(s))
    return sorted(v for v in slots if v < aot.n_fwd_slots)
