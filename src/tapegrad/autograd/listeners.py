"""Listeners: who hears what the backward engine and the ops do, without replacing any code.

The engine announces each step of a backward pass to a stack of listeners, the way JAX's and
HIPS autograd's tracers stack; the op registry's detour announces each op. The backward trace
(show/trace.py), the profiler (autograd/profiler.py), anomaly mode's NaN check, the health
monitor (show/watch.py), a compiled function's capture (compiler/capture.py) and the
``tapegrad doctor`` and ``tapegrad graph`` commands (show/doctor.py, show/_commands.py)
subscribe here; none of them replaces a function or method of another module while it listens.

    with listening(my_listener):      # pushed for the block, popped after it
        loss.backward()

A listener derives from :class:`Listener` and overrides the events it wants; the others do
nothing (or, for an event *around* a run, just run it). In the order a pass announces them:

    backward_started(roots, inputs)     a pass begins from ``roots`` (tensors or
                                        GradientEdges); ``inputs``: ``grad()``'s or
                                        ``backward(inputs=)``'s, else None
    node_started(node, grads)           a node left the ready queue with the gradients in its
                                        buffer (a list, one per output, None where none came;
                                        None when nothing reached it at all)
    pre_hooks(node, hooks, grads)       its tensor hooks, retain_grad and pre-hooks are about
                                        to run on ``grads`` (``graph.NodeHooks``) ...
    pre_hooks_ran(node, grads)          ... and the gradients they left
    captured(node)                      ``autograd.grad`` kept one of the node's gradients
    node_skipped(node)                  nothing asked for (``inputs=``) lies behind the node:
                                        its rule does not run
    run_node(node, run, grads)          around the node's rule: must return ``run(grads)``
                                        (or what stands for it)
    post_hooks(node, hooks)             its post-hooks are about to run
    node_returned(node, grads)          the gradients for its inputs, one per input (a tuple,
                                        None where none), as the rule and post-hooks left
                                        them: anomaly mode's NaN check looks here
    gradient_sent(node, i, child, nr, grad)
                                        input ``i``'s gradient, reduced to the input's shape
                                        and cast to its dtype, went into slot ``nr`` of
                                        ``child``'s buffer (``child`` None: input ``i`` has no
                                        edge; ``grad`` None: no gradient for it)
    run_accumulate(node, run, *args)    around AccumulateGrad: must return ``run(*args)`` (or
                                        do what it does)
    gradient_accumulated(node, grad, stored)
                                        what lands in the leaf's ``.grad`` (``stored`` False:
                                        returned by ``autograd.grad`` instead)
    kernel_called(name, fn, inputs, params, outputs)
                                        the engine ran an array function itself, outside any
                                        op: ``outputs = fn(*arrays of inputs, **params)``
                                        (``sum_to``, ``cast``)
    backward_finished()                 the pass is over (after an error too)

Outside a backward pass, and inside one:

    run_op(op, inputs, params, run)     around an op while the registry's detour is on
                                        (``_registry.detour``: forward-mode AD, saved-tensor
                                        hooks, the profiler, a capture): must return
                                        ``run(op, inputs, params)`` or what the op returns
    run_op_(op, target, others, params, run)
                                        the same around an in-place op (``apply_``)

``run_node`` is announced by a node called directly (``grad_fn(g)``) too. The ops are
announced only while the stack's switch for ops is on: ``ops/_registry._SPECIAL``, the one
flag ``apply`` reads (kept there, a global of the hot path's own module), turned on and off
with ``_registry.detour(name, on)`` by whoever needs every op (forward-mode AD and the
saved-tensor hooks, which do their work in the same detour, the profiler, a capture).

From the layers below and beside the engine (they read ``tapegrad._announce.listener``, or
``tapegrad._rng.listener`` for the random engine, which mirror ``active``):

    tensor_called(tensor, name)         a Tensor method that hands values, or a say over the
                                        graph, to Python is about to run: ``item``, ``tolist``,
                                        ``numpy``, ``__array__``, the conversions (``__bool__``,
                                        ``__float__``, ``__int__``, ``__index__``), printing
                                        (``__repr__``, ``__str__``, ``__format__``), the hooks
                                        (``register_hook``, ``retain_grad``...), and the flag
                                        setters: ``requires_grad_`` and ``requires_grad=`` and
                                        ``data=`` (an assignment)
    grad_read(tensor, grad)             ``tensor.grad`` was read and is ``grad`` (not None)
    grad_assigned(tensor, value)        ``tensor.grad = value`` (or ``del tensor.grad``:
                                        ``value`` None) is about to happen
    run_backward(tensor, run)           around ``tensor.backward(...)``: must return ``run()``
    detaching(tensor)                   ``tensor.detach()`` is about to make its copy
    module_called(module, name)         a Module method that hands a say over the calls to
                                        Python is about to run: one of the four
                                        ``register_*_hook`` (``register_forward_hook``...),
                                        or ``__call__`` on a module with hooks (its own or
                                        global ones)
    run_method(obj, method, args, kwargs, run)
                                        around a method whose work a compiled program repeats
                                        as one call (``Module.zero_grad``): ``method`` is the
                                        class's function (``method(obj, *args, **kwargs)``
                                        does the same); must return ``run(*args, **kwargs)``
                                        (also the random engine's ``manual_seed``, ``seed``
                                        and ``set_state``)
    noise_drawn(engine, name, shape, dtype, p, noise)
                                        a random engine (``_rng.Engine``) drew dropout's
                                        ``noise`` (``name``: ``dropout_noise`` or
                                        ``alpha_dropout_noise``) for these arguments
    value_checked(check, args, result)  a value check (``_registry.value_check``: library
                                        code reading arrays' values in Python, outside any
                                        kernel) ran: ``result = check(*args)``
    optimizer_created(optimizer)        ``Optimizer.__init__`` has set up ``optimizer``'s
                                        param groups
    run_autograd_backward(tensors, run) around ``autograd.backward(tensors, ...)`` (which
                                        ``Tensor.backward`` calls): must return ``run()``

A backward run from inside a hook announces its own pass, nested in the outer one. The engine
reads ``active`` once per pass: with no listener it is None, and the loop pays one ``is None``
test per node and per edge.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .. import _announce, _rng


class Listener:
    """A subscriber to the engine's events (see the module docstring); every event does
    nothing here, and an event around a run runs it."""

    # Why a compiled function cannot be captured while this listener listens (it would miss
    # what the capture replays), or None.
    capture_break: str | None = None

    def backward_started(self, roots: Any, inputs: Any) -> None:
        pass

    def node_started(self, node: Any, grads: list | None) -> None:
        pass

    def pre_hooks(self, node: Any, hooks: Any, grads: list) -> None:
        pass

    def pre_hooks_ran(self, node: Any, grads: list) -> None:
        pass

    def captured(self, node: Any) -> None:
        pass

    def node_skipped(self, node: Any) -> None:
        pass

    def run_node(self, node: Any, run: Callable, grads: list) -> Any:
        return run(grads)

    def post_hooks(self, node: Any, hooks: Any) -> None:
        pass

    def node_returned(self, node: Any, grads: tuple) -> None:
        pass

    def gradient_sent(self, node: Any, i: int, child: Any, nr: int, grad: Any) -> None:
        pass

    def run_accumulate(self, node: Any, run: Callable, *args: Any) -> Any:
        return run(*args)

    def gradient_accumulated(self, node: Any, grad: Any, stored: bool) -> None:
        pass

    def kernel_called(self, name: str, fn: Callable, inputs: tuple, params: dict,
                      outputs: tuple) -> None:
        pass

    def backward_finished(self) -> None:
        pass

    def run_op(self, op: Any, inputs: tuple, params: dict, run: Callable) -> Any:
        return run(op, inputs, params)

    def run_op_(self, op: Any, target: Any, others: tuple, params: dict, run: Callable) -> Any:
        return run(op, target, others, params)

    def tensor_called(self, tensor: Any, name: str) -> None:
        pass

    def grad_read(self, tensor: Any, grad: Any) -> None:
        pass

    def grad_assigned(self, tensor: Any, value: Any) -> None:
        pass

    def run_backward(self, tensor: Any, run: Callable) -> Any:
        return run()

    def detaching(self, tensor: Any) -> None:
        pass

    def module_called(self, module: Any, name: str) -> None:
        pass

    def noise_drawn(self, engine: Any, name: str, shape: Any, dtype: Any, p: float,
                    noise: Any) -> None:
        pass

    def run_method(self, obj: Any, method: Callable, args: tuple, kwargs: dict,
                   run: Callable) -> Any:
        return run(*args, **kwargs)

    def value_checked(self, check: Callable, args: tuple, result: Any) -> None:
        pass

    def optimizer_created(self, optimizer: Any) -> None:
        pass

    def run_autograd_backward(self, tensors: Any, run: Callable) -> Any:
        return run()


class _Chain(Listener):
    """Several listeners heard as one: each event goes to all of them, bottom of the stack
    first; an event around a run nests them, the bottom one outermost."""

    def __init__(self, listeners: tuple[Listener, ...]) -> None:
        self.listeners = listeners

    def _tell(self, event: str, *args: Any) -> None:
        for listener in self.listeners:
            getattr(listener, event)(*args)

    def backward_started(self, roots: Any, inputs: Any) -> None:
        self._tell("backward_started", roots, inputs)

    def node_started(self, node: Any, grads: list | None) -> None:
        self._tell("node_started", node, grads)

    def pre_hooks(self, node: Any, hooks: Any, grads: list) -> None:
        self._tell("pre_hooks", node, hooks, grads)

    def pre_hooks_ran(self, node: Any, grads: list) -> None:
        self._tell("pre_hooks_ran", node, grads)

    def captured(self, node: Any) -> None:
        self._tell("captured", node)

    def node_skipped(self, node: Any) -> None:
        self._tell("node_skipped", node)

    def run_node(self, node: Any, run: Callable, grads: list) -> Any:
        for listener in reversed(self.listeners):
            run = functools.partial(listener.run_node, node, run)
        return run(grads)

    def post_hooks(self, node: Any, hooks: Any) -> None:
        self._tell("post_hooks", node, hooks)

    def node_returned(self, node: Any, grads: tuple) -> None:
        self._tell("node_returned", node, grads)

    def gradient_sent(self, node: Any, i: int, child: Any, nr: int, grad: Any) -> None:
        self._tell("gradient_sent", node, i, child, nr, grad)

    def run_accumulate(self, node: Any, run: Callable, *args: Any) -> Any:
        for listener in reversed(self.listeners):
            run = functools.partial(listener.run_accumulate, node, run)
        return run(*args)

    def gradient_accumulated(self, node: Any, grad: Any, stored: bool) -> None:
        self._tell("gradient_accumulated", node, grad, stored)

    def kernel_called(self, name: str, fn: Callable, inputs: tuple, params: dict,
                      outputs: tuple) -> None:
        self._tell("kernel_called", name, fn, inputs, params, outputs)

    def backward_finished(self) -> None:
        self._tell("backward_finished")

    def run_op(self, op: Any, inputs: tuple, params: dict, run: Callable) -> Any:
        for listener in reversed(self.listeners):
            run = _around_op(listener, run)
        return run(op, inputs, params)

    def run_op_(self, op: Any, target: Any, others: tuple, params: dict, run: Callable) -> Any:
        for listener in reversed(self.listeners):
            run = _around_op_(listener, run)
        return run(op, target, others, params)

    def tensor_called(self, tensor: Any, name: str) -> None:
        self._tell("tensor_called", tensor, name)

    def grad_read(self, tensor: Any, grad: Any) -> None:
        self._tell("grad_read", tensor, grad)

    def grad_assigned(self, tensor: Any, value: Any) -> None:
        self._tell("grad_assigned", tensor, value)

    def run_backward(self, tensor: Any, run: Callable) -> Any:
        for listener in reversed(self.listeners):
            run = functools.partial(listener.run_backward, tensor, run)
        return run()

    def detaching(self, tensor: Any) -> None:
        self._tell("detaching", tensor)

    def module_called(self, module: Any, name: str) -> None:
        self._tell("module_called", module, name)

    def noise_drawn(self, engine: Any, name: str, shape: Any, dtype: Any, p: float,
                    noise: Any) -> None:
        self._tell("noise_drawn", engine, name, shape, dtype, p, noise)

    def run_method(self, obj: Any, method: Callable, args: tuple, kwargs: dict,
                   run: Callable) -> Any:
        for listener in reversed(self.listeners):
            run = _around_method(listener, obj, method, run)
        return run(*args, **kwargs)

    def value_checked(self, check: Callable, args: tuple, result: Any) -> None:
        self._tell("value_checked", check, args, result)

    def optimizer_created(self, optimizer: Any) -> None:
        self._tell("optimizer_created", optimizer)

    def run_autograd_backward(self, tensors: Any, run: Callable) -> Any:
        for listener in reversed(self.listeners):
            run = functools.partial(listener.run_autograd_backward, tensors, run)
        return run()


def _around_op(listener: Listener, run: Callable) -> Callable:
    """``run`` (an op's run) with ``listener`` around it."""
    return lambda op, inputs, params: listener.run_op(op, inputs, params, run)


def _around_op_(listener: Listener, run: Callable) -> Callable:
    """``run`` (an in-place op's run) with ``listener`` around it."""
    return lambda op, target, others, params: listener.run_op_(op, target, others, params, run)


def _around_method(listener: Listener, obj: Any, method: Callable, run: Callable) -> Callable:
    """``run`` (a method's work) with ``listener`` around it."""
    return lambda *args, **kwargs: listener.run_method(obj, method, args, kwargs, run)


_stack: list[Listener] = []
# What the engine announces to: None with no listener, the listener itself with one, a
# _Chain of the stack with several. Rebuilt on every push and pop.
active: Listener | None = None


def _rebuild() -> None:
    global active
    active = None if not _stack else _stack[0] if len(_stack) == 1 else _Chain(tuple(_stack))
    _announce.listener = _rng.listener = active


def push(listener: Listener) -> None:
    """Start announcing to ``listener`` (on top of those already listening)."""
    _stack.append(listener)
    _rebuild()


def pop(listener: Listener) -> None:
    """Stop announcing to ``listener`` (the top one as a rule; one further down is taken out
    of the stack all the same)."""
    for i in range(len(_stack) - 1, -1, -1):
        if _stack[i] is listener:
            del _stack[i]
            break
    _rebuild()


@contextmanager
def listening(listener: Listener) -> Iterator[Listener]:
    """``push(listener)`` for the block, ``pop(listener)`` after it (after an error too)."""
    push(listener)
    try:
        yield listener
    finally:
        pop(listener)


def stack() -> tuple[Listener, ...]:
    """The listeners now listening, the first pushed first."""
    return tuple(_stack)
