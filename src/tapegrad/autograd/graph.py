"""The backward graph: nodes (what ``grad_fn`` holds), edges, saved tensors, hooks.

A forward op with an input that requires grad records one node::

    x (leaf) ──► AccumulateGrad ◄──┐
                                   │ next_functions ((AccumulateGrad, 0), (None, 0))
    y = x * 2  ── y.grad_fn = MulBackward0
                    saved: what the backward rule needs (x, at the version it had)

Edges point from a node to the nodes that made its inputs, as ``(node, output_nr)`` pairs,
``None`` for an input that needs no gradient. Nodes never point at the tensors they produced:
an output the rule needs is saved as its array and version counter, and rebuilt when unpacked,
so there is no Tensor -> Node -> Tensor cycle and a dropped graph is freed by reference counting.

Saved inputs are checked when unpacked: an input changed in place since it was saved raises
torch's "modified by an inplace operation" error, and a node whose saved values were released
by an earlier backward raises torch's "backward through the graph a second time" error.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from .._dtype import LEGACY_NAMES, from_numpy_dtype
from .._grad_state import _sequence  # (the node numbers: ops/_registry.py takes them here)
from .._tensor import Tensor, install_above
from . import listeners
from .grad_mode import enable_grad

LAST_SEQUENCE = 1 << 62

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)

_HINT = (
    "Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
    "with torch.autograd.set_detect_anomaly(True, check_nan=False)."
)
_ANOMALY_HINT = (
    "Hint: the backtrace further above shows the operation that failed to compute its gradient. "
    "The variable in question was changed in there or anywhere later. Good luck!"
)

# ---------------------------------------------------------------------------------------------
# Anomaly mode (autograd.detect_anomaly / set_detect_anomaly). While "enabled", every node made
# remembers the Python stack of the forward call that made it (in _forward_stacks, weakly, so
# no node lives longer for it), and a failing backward node prints that stack as a warning
# before its error propagates; with "check_nan" the engine also raises on a NaN gradient (its
# listener engine.NAN_CHECK, pushed by set_anomaly_enabled). Off, the cost is one dict read
# per node created and one per backward call.
_anomaly: dict[str, Any] = {"enabled": False, "check_nan": True}
_forward_stacks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


_backward_codes: set = set()  # the engine's run_backward code object (registered by the engine)


def remember_forward(node: Node) -> None:
    """Keep the forward stack that created ``node``, less tapegrad's own frames at its end, and
    the node whose backward (under create_graph) was running when it was made, if any."""
    frames = traceback.extract_stack()
    while frames and frames[-1].filename.startswith(_PACKAGE_DIR):
        frames.pop()
    parent = None
    f: Any = sys._getframe(1)
    while f is not None:
        if f.f_code in _backward_codes:
            parent = f.f_locals.get("node")
            break
        f = f.f_back
    _forward_stacks[node] = (frames, parent)


_TRIGGERED = " (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/"


def forward_stack_messages(node: Node) -> list[str]:
    """torch's "Error detected in X" warning texts for a node whose backward failed: its
    forward traceback, then one for each backward that created it (create_graph)."""
    entry = _forward_stacks.get(node)
    if entry is None:
        return [
            f"Error detected in {node.name()}. No forward pass information available. Enable "
            "detect anomaly during forward pass for more information."
            + _TRIGGERED + "python_anomaly_mode.cpp:100.)"
        ]
    frames, parent = entry
    out = [
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        + "".join(traceback.format_list(frames))
        + _TRIGGERED + "python_anomaly_mode.cpp:122.)"
    ]
    seen = {id(node)}
    while parent is not None and id(parent) not in seen and parent in _forward_stacks:
        seen.add(id(parent))
        frames, grandparent = _forward_stacks[parent]
        out.append(
            f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of forward call "
            "that induced the previous calculation:\n"
            + "".join(traceback.format_list(frames))
            + _TRIGGERED + "python_anomaly_mode.cpp:129.)"
        )
        parent = grandparent
    return out


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` takes the hook out again."""

    __slots__ = ("_hooks", "id")
    _ids = itertools.count()

    def __init__(self, hooks: dict[int, Any]) -> None:
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


install_above(RemovableHandle=RemovableHandle)  # what a leaf's register_hook returns


NO_EDGE = (None, 0)  # the edge of an input that needs no gradient (a number, a constant)


class NodeHooks:
    """What a node carries only once someone hooks into it (most nodes never do)."""

    __slots__ = ("pre", "post", "tensor", "retain", "metadata")

    def __init__(self) -> None:
        self.pre: dict[int, Callable] = {}  # node.register_prehook
        self.post: dict[int, Callable] = {}  # node.register_hook
        self.tensor: dict[int, dict[int, Callable]] = {}  # Tensor.register_hook, per output
        self.retain: dict[int, Any] = {}  # retain_grad: output_nr -> weakref to the tensor
        self.metadata: dict = {}


class Node:
    """Base of every ``grad_fn``: edges to the next nodes, hooks, and creation order.

    ``_seq`` orders the engine's ready queue: the node created last runs first, as in torch.
    ``_hooks`` stays None until a hook is registered, so the engine checks one attribute.
    """

    __slots__ = ("_e0", "_n0", "_rest", "_seq", "_hooks", "__weakref__")
    _e0: Node | None
    _n0: int
    _rest: tuple
    _cpp_name: str | None = None
    # True for nodes whose rule runs even when no gradient reached them (a custom Function's
    # backward gets zeros then, as in torch); others pass "no gradient" on without running
    _runs_without_grad = False

    def __init__(self, next_functions: tuple = ()) -> None:
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._hooks: NodeHooks | None = None
        if _anomaly["enabled"]:
            remember_forward(self)

    # The edges are kept flat, (node0, nr0, node1, nr1, ...), and the first one lives in the
    # node itself: _e0/_n0 (``_n0 == -1`` for a node without inputs), the others in ``_rest``,
    # which is one of the shared constants () or NO_EDGE for the common unary and tensor-scalar
    # ops. Python's cyclic garbage collector visits every container that lives on, and in a
    # torch-sized process each full collection costs ~0.1 s; an op that leaves one object
    # behind instead of three or four triggers far fewer of them.
    @property
    def _next(self) -> tuple:
        """All edges, flat: ``(node0, nr0, node1, nr1, ...)``."""
        if self._n0 < 0:
            return ()
        return (self._e0, self._n0) + self._rest

    def _set_edges(self, flat: tuple) -> None:
        if not flat:
            self._e0, self._n0, self._rest = None, -1, ()
            return
        self._e0, self._n0 = flat[0], flat[1]
        rest = flat[2:]
        self._rest = () if not rest else NO_EDGE if rest == NO_EDGE else rest

    @property
    def next_functions(self) -> tuple:
        """``((node, output_nr), ...)``, one per input; ``(None, 0)`` for an input without
        gradient."""
        flat = self._next
        return tuple((flat[i], flat[i + 1]) for i in range(0, len(flat), 2))

    @next_functions.setter
    def next_functions(self, edges: tuple) -> None:
        self._set_edges(tuple(x for e in edges for x in e))

    def name(self) -> str:
        """The node's name as torch prints it (``MulBackward0``)."""
        return self._cpp_name or type(self).__name__

    def _sequence_nr(self) -> int:
        """The creation order the engine's ready queue uses (the newest node runs first)."""
        return self._seq

    def _set_sequence_nr(self, sequence_nr: int) -> None:
        self._seq = sequence_nr

    def _register_hook_dict(self, tensor: Any) -> None:
        """torch's private hook-dict registration; tapegrad keeps a tensor's hooks on the
        node already (``_add_tensor_hook``), so there is nothing to move."""

    def _hook_state(self) -> NodeHooks:
        if self._hooks is None:
            self._hooks = NodeHooks()
        return self._hooks

    @property
    def metadata(self) -> dict:
        return self._hook_state().metadata

    def register_hook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; a non-None result replaces
        ``grad_inputs``."""
        hooks = self._hook_state().post
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn: Callable) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; a non-None result replaces them."""
        hooks = self._hook_state().pre
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def _add_tensor_hook(self, output_nr: int, fn: Callable) -> RemovableHandle:
        hooks = self._hook_state().tensor.setdefault(output_nr, {})
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    # Subclasses implement: apply(grads) -> grads for next_functions, and release().
    def apply(self, grads: list) -> tuple:
        raise NotImplementedError

    def release(self) -> None:
        """Drop saved values after a backward without retain_graph."""

    def _num_outputs(self) -> int:
        """How many gradients the node takes: one per output of the op that made it."""
        return 1

    def __call__(self, *grads: Any) -> Any:
        """Run the node's rule on the given output gradients (``grad_fn(g)``): one gradient
        per input (a tuple when there are several), as torch's nodes return."""
        n = self._num_outputs()
        if len(grads) != n:
            raise TypeError(f"expected {n} arguments, got {len(grads)} instead")
        listen = listeners.active  # (announced as the engine announces a node's rule)
        grads_in = list(grads)
        out = tuple(self.apply(grads_in) if listen is None else listen.run_node(
            self, self.apply, grads_in))
        return out[0] if len(out) == 1 else out


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into ``variable.grad``.

    The engine calls ``accumulate`` (see engine.py); ``variable`` is the leaf itself.
    """

    __slots__ = ("variable",)
    _cpp_name = "torch::autograd::AccumulateGrad"

    def __init__(self, variable: Tensor) -> None:
        # Node.__init__ with no edges, written out (a leaf's accumulator is made again on every
        # forward, its tensor holding it weakly): no inputs, so nothing to point at
        self._e0, self._n0, self._rest = None, -1, ()
        self._hooks = None
        self.variable = variable
        # torch gives the accumulator the largest sequence number: it runs as soon as it is
        # ready, so .grad is filled (and post-accumulate hooks fire) as early as possible. (The
        # number a node would have taken is used all the same, as every node's creation does.)
        next(_sequence)
        self._seq = LAST_SEQUENCE
        if _anomaly["enabled"]:
            remember_forward(self)

    def _sequence_nr(self) -> int:
        return (1 << 64) - 1  # torch's UINT64_MAX for accumulators

    def apply(self, grads: list) -> tuple:
        """``acc(g)`` called by hand: adds ``g`` into the leaf's ``.grad``; no gradient flows on.
        (A backward pass accumulates through the engine's ``_run_accumulate`` instead.)"""
        t, g = self.variable, grads[0]
        if g is not None:
            if t._grad is None:
                t._grad = Tensor._make(np.array(g._data, dtype=t._data.dtype, copy=True))
            else:
                np.add(t._grad._data, g._data, out=t._grad._data, casting="unsafe")
        return ()


def grad_accumulator(t: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, created once and cached on the tensor (weakly, so the
    node, which refers to the tensor, does not keep it alive in a cycle)."""
    ref = t._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(t)
        t._accumulator = weakref.ref(node)
    return node


def edge(t: Any) -> tuple[Node | None, int]:
    """The edge to what produced ``t``: its grad_fn, its accumulator, or None."""
    if t is None or not getattr(t, "_requires_grad", False):
        return (None, 0)
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (grad_accumulator(t), 0)


def _describe(t: Tensor, producer: Node | None, output_nr: int) -> str:
    shape = ", ".join(str(s) for s in t.shape)
    what = f"[torch.{LEGACY_NAMES.get(t.dtype.name, 'Tensor')} [{shape}]]"
    if producer is not None and not isinstance(producer, AccumulateGrad):
        name = producer.name()
        for suffix in ("Backward0", "Backward1", "Backward2", "Backward"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
        what += f", which is output {output_nr} of {name},"
    return what


def version_error(t: Tensor, producer: Node | None, output_nr: int, saved: int) -> RuntimeError:
    """torch's message for a saved tensor that was changed in place after it was saved."""
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {_describe(t, producer, output_nr)} is at version {t._version_counter.value}"
        f"; expected version {saved} instead. "
        f"{_ANOMALY_HINT if _anomaly['enabled'] else _HINT}"
    )


def increment_version(tensor: Any) -> None:
    """Tell autograd that ``tensor`` (or each tensor of an iterable) was changed in place behind
    its back (saved values of it then raise in backward). An inference tensor has no version
    counter: it is left alone."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not t._inference:
            t._version_counter.value += 1


# ---------------------------------------------------------------------------------------------
# Graph tasks: what the running backward pass will execute
#
#   engine.run_backward pushes a GraphTask for the pass (a hook that calls backward again pushes
#   another on top) and pops it at the end; register_multi_grad_hook asks the innermost one
#   which of its tensors' nodes the pass will reach. Per thread, as torch's.
# ---------------------------------------------------------------------------------------------

_task_ids = itertools.count()
_tasks = threading.local()


class GraphTask:
    """One backward pass: its id, and the nodes it will run (``nodes``: every node reached
    from the roots; with ``inputs`` given, only ``needed`` and ``captured`` run)."""

    __slots__ = ("id", "nodes", "roots", "needed", "captured")

    def __init__(self, nodes: Any, roots: list, needed: set | None, captured: set) -> None:
        self.id = next(_task_ids)
        self.nodes = nodes  # the engine's dependency counts: every node below a root
        self.roots = roots
        self.needed = needed
        self.captured = captured

    def will_execute(self, node: Node) -> bool:
        if self.needed is None:
            return node in self.nodes or node in self.roots
        return node in self.needed or node in self.captured


def push_task(task: GraphTask) -> None:
    stack = getattr(_tasks, "stack", None)
    if stack is None:
        stack = _tasks.stack = []
    stack.append(task)


def pop_task() -> None:
    _tasks.stack.pop()


def current_task() -> GraphTask | None:
    stack = getattr(_tasks, "stack", None)
    return stack[-1] if stack else None


def current_graph_task_id() -> int:
    """The id of the backward pass running in this thread, -1 outside one."""
    task = current_task()
    return -1 if task is None else task.id


def will_engine_execute_node(node: Node) -> bool:
    """Whether the running backward pass will run ``node`` (torch's error outside one)."""
    task = current_task()
    if task is None:
        raise RuntimeError(
            "_will_engine_execute_node should only be called during the backward pass")
    return task.will_execute(node)


# ---------------------------------------------------------------------------------------------
# Gradient edges: a (node, output_nr) pair that stands for a tensor in grad() and backward()
# ---------------------------------------------------------------------------------------------


class GradientEdge(NamedTuple):
    """An edge of the graph, usable where ``grad``/``backward`` take tensors: the gradient of
    output ``output_nr`` of ``node``. ``get_gradient_edge(t)`` gives a tensor's."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


# (shape, dtype) of the outputs whose edges get_gradient_edge handed out: a backward from such
# an edge with an implicit gradient needs its output's shape (weak: nothing lives longer for it)
_edge_meta: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def edge_metadata(node: Node, output_nr: int) -> tuple | None:
    """(shape, dtype) of output ``output_nr`` of ``node``, where tapegrad knows it."""
    if isinstance(node, AccumulateGrad):
        v = node.variable
        return (tuple(v._data.shape), v.dtype)
    known = _edge_meta.get(node)
    if known is not None and output_nr in known:
        return known[output_nr]
    meta = getattr(node, "_output_meta", None)
    if meta is not None and output_nr < len(meta):
        shape, np_dtype = meta[output_nr]
        return (tuple(shape), from_numpy_dtype(np_dtype))
    return None


def grad_fn_or_accumulator(t: Any) -> Node:
    """The node a tensor's gradient enters: its grad_fn, or its leaf's AccumulateGrad."""
    if isinstance(t, GradientEdge):
        return t.node
    if t._requires_grad and t.grad_fn is None:
        return grad_accumulator(t)
    return t.grad_fn


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge ``tensor``'s gradient flows through: pass it to ``grad``/``backward`` in place
    of the tensor (it stays valid after the tensor is changed in place or dropped)."""
    if not tensor._requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    node = grad_fn_or_accumulator(tensor)
    known = _edge_meta.get(node)
    if known is None:
        known = _edge_meta[node] = {}
    known[tensor._output_nr] = (tuple(tensor._data.shape), tensor.dtype)
    token = None
    if getattr(node, "_forward_cls", None) is not None:  # a custom Function's node: torch
        with enable_grad():
            token = tensor.view_as(tensor).grad_fn
    return GradientEdge(node, tensor._output_nr, token)


class _MultiHandle(RemovableHandle):
    """The handle of ``register_multi_grad_hook``: removes the hook from every tensor."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple) -> None:
        self.handles = handles
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def register_multi_grad_hook(tensors: Any, fn: Callable, *, mode: str = "all") -> Any:
    """One hook over several tensors' gradients, once per backward pass.

    ``mode="all"``: ``fn(grads)`` after the pass computed the gradient of every tensor it
    reaches, with None for the others. ``mode="any"``: ``fn(grad)`` with the first of them.
    """
    modes = ("all", "any")
    if mode not in modes:
        raise ValueError(f"Expects mode to be one of {modes} but got {mode}")
    lock = threading.Lock()
    if mode == "all":
        nodes = [grad_fn_or_accumulator(t) for t in tensors]
        count: dict[int, int] = {}
        expected: dict[int, int] = {}
        buffers: dict[int, list] = {}

        def inner(idx: int) -> Callable:
            def hook(grad: Any) -> None:
                task = current_graph_task_id()
                with lock:
                    seen = count.get(task, 0)
                    if seen == 0:
                        expected[task] = sum(will_engine_execute_node(n) for n in nodes)
                        buffers[task] = [None] * len(nodes)
                    count[task] = seen + 1
                    buffers[task][idx] = grad
                    done = seen + 1 == expected[task]
                    if done:
                        grads = buffers.pop(task)
                        del count[task], expected[task]
                if done:
                    fn(grads)

            return hook

        handles = tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors))
    else:
        ran: set[int] = set()

        @functools.wraps(fn)
        def first(grad: Any) -> None:
            task = current_graph_task_id()
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)

        handles = tuple(t.register_hook(first) for t in tensors if t._requires_grad)
    return _MultiHandle(handles)


# ---------------------------------------------------------------------------------------------
# Saved-tensor hooks: what a node keeps for backward passes through pack / unpack hooks
#
#   with saved_tensors_hooks(pack, unpack):     y = x.exp()
#       the node keeps pack(y), not y          (ops/_registry.apply's detour: _pack_node)
#   backward: y' = unpack(pack(y)) is what the rule reads (the node's class is swapped for a
#   subclass of the same name whose ``saved`` unpacks); as in torch, what unpack returns is not
#   version-checked (the hooks answer for it: allow_mutation_on_saved_tensors relies on that).
#
# Nodes recorded while no hook is active are untouched: nothing here costs them anything.
# ---------------------------------------------------------------------------------------------

_saved_hooks: list[tuple[Callable, Callable]] = []  # innermost last
_disabled: list[str] = []  # messages of the active disable_saved_tensors_hooks blocks


def _hooks_active() -> bool:
    return bool(_saved_hooks)


def _no_detour_update() -> None:
    """What ``_update_detour`` does before forward_ad has registered its update."""


# The registry's detour flag, which a saved-tensor hook turns on as a dual level does: forward_ad
# keeps it, above the ops, so it hands its update over with ``register_detour_update`` when it
# is imported (autograd/function.py imports it, with the package).
_detour_update: Callable[[], None] = _no_detour_update


def register_detour_update(update: Callable[[], None]) -> None:
    """Install forward_ad's update of the registry's detour flag (``_update_detour`` calls it
    whenever a saved-tensor hook comes or goes)."""
    global _detour_update
    _detour_update = update


def _update_detour() -> None:
    _detour_update()


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` runs on every tensor an op saves for backward,
    and what it returns is kept instead; ``unpack_hook(packed)`` gives the tensor back when the
    backward pass needs it.

    Example:
        >>> import tapegrad as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        ...     y = x.exp()
        >>> y.sum().backward()
        >>> x.grad
        tensor([2.7183, 2.7183])
    """

    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _disabled:
            raise RuntimeError(_disabled[-1])
        _saved_hooks.append((self.pack_hook, self.unpack_hook))
        _update_detour()

    def __exit__(self, *exc: object) -> None:
        _saved_hooks.pop()
        _update_detour()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors on the CPU (with ``pin_memory`` in pinned memory). tapegrad's
    tensors always live on the CPU, so packing is a copy-free hand-over."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        self.pin_memory = pin_memory
        self.device_type = device_type

        def pack(t: Tensor) -> tuple:
            return (t.device, t)

        def unpack(packed: tuple) -> Tensor:
            return packed[1]

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Context manager: entering ``saved_tensors_hooks`` inside raises ``error_message``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        if _saved_hooks:  # torch: hooks already active here cannot be switched off
            raise RuntimeError(self.error_message)
        _disabled.append(self.error_message)

    def __exit__(self, *exc: object) -> None:
        _disabled.pop()


PACK_INPLACE_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack "
    "hook cannot be modified by in-place operations as this can lead to unexpected side-effects. "
    "Please open an issue if you need to perform in-place operations on the input to a pack "
    "hook."
)


# Functions called with a tensor just before an in-place op writes into it, while saved-tensor
# hooks are active (forward_ad.special_apply_ calls them): allow_mutation_on_saved_tensors
# keeps a copy of what a graph saved before the write changes it.
_mutation_hooks: list[Callable[[Any], None]] = []


class _Handle:
    """What allow_mutation_on_saved_tensors' pack hook keeps in place of a saved tensor."""


class _AllowMutationOnSavedContext:
    """allow_mutation_on_saved_tensors' state (torch's attribute names): the saved tensors
    (``original``), the copies made before an in-place change (``cloned``), and the
    handles of saved tensors by (id, address, version) and by (address, version)."""

    def __init__(self) -> None:
        self.cloned: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.original: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.sid_to_tid: dict[tuple, set] = {}

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


_mutation_allowed: list[_AllowMutationOnSavedContext] = []


class allow_mutation_on_saved_tensors:
    """Context manager: tensors saved for backward inside it may be changed in place; the
    graph keeps a copy made just before the change (no "modified by an inplace operation"
    error). The backward must run inside the same block. Yields its state object.

    Example:
        >>> import tapegrad as torch
        >>> a = torch.ones(3, requires_grad=True)
        >>> with torch.autograd.graph.allow_mutation_on_saved_tensors():
        ...     b = a.clone()
        ...     out = (b ** 2).sum()
        ...     b.sin_()
        ...     out.backward()
        >>> a.grad
        tensor([2., 2., 2.])
    """

    _MESSAGE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                "in which the graph was originally recorded.")

    def __enter__(self) -> _AllowMutationOnSavedContext:
        ctx = self.ctx = _AllowMutationOnSavedContext()

        def key(t: Any) -> tuple:
            return (t.data_ptr(), t._version)

        def pack(t: Any) -> _Handle:
            tid = (id(t),) + key(t)
            ctx.sid_to_tid.setdefault(key(t), set()).add(tid)
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None:
                handle = _Handle()
                ctx.tid_to_weakhandle[tid] = handle
                ctx.original[handle] = t
            return handle

        def unpack(handle: _Handle) -> Any:
            if not _mutation_allowed or _mutation_allowed[-1] is not ctx:
                raise AssertionError(self._MESSAGE)
            if handle in ctx.cloned:
                return ctx.cloned[handle]
            if handle not in ctx.original:
                raise AssertionError(self._MESSAGE)
            return ctx.original[handle]

        def before_write(t: Any) -> None:
            for tid in ctx.sid_to_tid.get(key(t), ()):
                handle = ctx.tid_to_weakhandle.get(tid)
                if handle is None or handle in ctx.cloned:
                    continue
                ctx.cloned[handle] = ctx.original[handle].detach().clone()
                del ctx.original[handle]

        self.hooks = saved_tensors_hooks(pack, unpack)
        self.hooks.__enter__()
        try:
            if _mutation_allowed:
                raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        except RuntimeError:
            self.hooks.__exit__()
            raise
        self.before_write = before_write
        _mutation_allowed.append(ctx)
        _mutation_hooks.append(before_write)
        return ctx

    def __exit__(self, *exc: object) -> None:
        _mutation_hooks.remove(self.before_write)
        _mutation_allowed.remove(self.ctx)
        self.ctx.clear()
        self.hooks.__exit__()


class _Packed:
    """A saved tensor as a pack hook returned it, with what its unpacking must restore."""

    __slots__ = ("value", "unpack", "counter", "grad_fn", "output_nr", "requires_grad",
                 "accumulator", "tangent")

    def __init__(self, t: Tensor, pack: Callable, unpack: Callable) -> None:
        version = None if t._inference else t._version_counter.value
        self.value = pack(t)
        if version is not None and t._version_counter.value != version:
            raise RuntimeError(PACK_INPLACE_MESSAGE)
        self.unpack = unpack
        self.counter = t._version_counter
        self.grad_fn = t.grad_fn
        self.output_nr = t._output_nr
        self.requires_grad = t._requires_grad
        self.accumulator = (grad_accumulator(t) if t._requires_grad and t.grad_fn is None
                            else None)
        self.tangent = t._fw_grad

    def restore(self, node: Node, saved_version: int | None) -> Tensor:
        t = self.unpack(self.value)
        if not isinstance(t, Tensor):
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got result of "
                f"type {type(t).__name__}"
            )
        # (no version check: what the hooks hand back is theirs to vouch for, as in torch,
        # whose SavedVariable checks versions only without hooks)
        if self.requires_grad and (t.grad_fn is not self.grad_fn or not t._requires_grad):
            # the unpacked values keep their place in the graph (double backward)
            alias = Tensor._make(t._data, requires_grad=True)
            alias._grad_fn = self.grad_fn
            alias._output_nr = self.output_nr
            if self.accumulator is not None:
                alias._accumulator = weakref.ref(self.accumulator)
            t = alias
        if self.tangent is not None and t._fw_grad is None:
            t = t.view_as(t) if t._requires_grad else Tensor._make(t._data)
            t._fw_grad = self.tangent
        return t


def _pack_node(node: Any, output: Tensor | None) -> None:
    """Run the innermost pack hook on everything ``node`` saved (see saved_tensors_hooks)."""
    pack, unpack = _saved_hooks[-1]
    saved = node._saved
    if saved:
        node._saved = tuple(_Packed(t, pack, unpack) if isinstance(t, Tensor) else t
                            for t in saved)
    if node._out is not None and output is not None:
        node._out = (_Packed(output, pack, unpack),) + tuple(node._out[1:])
    node.__class__ = _hooked_class(type(node))


_HOOKED: dict[type, type] = {}


def _hooked_class(cls: type) -> type:
    """The node class ``cls`` with a ``saved`` that unpacks; the same name, so grad_fn prints
    as before."""
    if cls in _HOOKED.values():
        return cls
    hooked = _HOOKED.get(cls)
    if hooked is None:
        hooked = type(cls.__name__, (cls,), {"__slots__": (), "saved": property(_unpacked),
                                             "_saved_arrays": _unpacked_arrays})
        _HOOKED[cls] = hooked
    return hooked


def _unpacked_arrays(node: Any) -> list:
    """The unpacked saved values as a fast first-order path takes them (ops/_registry.py:
    ``OpNode._saved_arrays``): arrays, numbers and None as they are."""
    return [t._data if isinstance(t, Tensor) else t for t in _unpacked(node)]


def _unpacked(node: Any) -> tuple:
    saved = node._saved
    if saved is None:
        raise RuntimeError(FREED_MESSAGE)
    out = []
    for t, check in zip(saved, node._versions, strict=True):
        if isinstance(t, _Packed):
            t = t.restore(node, check)
        elif check is not None and t._version_counter.value != check:
            raise version_error(t, t.grad_fn, t._output_nr, check)
        out.append(t)
    if node._out is not None:
        first, counter, version = node._out[:3]
        if isinstance(first, _Packed):  # (unchecked, as above)
            value = first.unpack(first.value)
            if not isinstance(value, Tensor):
                raise TypeError(
                    "Output of saved tensor unpack_hook expected to be a Tensor but got result "
                    f"of type {type(value).__name__}"
                )
            t = Tensor._make(value._data, requires_grad=True)
            t._grad_fn = node
            t._version_counter = counter
            if len(node._out) > 3:
                t._fw_grad = node._out[3]
            elif first.tangent is not None:
                t._fw_grad = first.tangent
            out.append(t)
        else:
            dt = Tensor._make(first)
            dt._version_counter = counter
            if counter.value != version:
                raise version_error(dt, node, 0, version)
            t = Tensor._make(first, requires_grad=True)
            t._grad_fn = node
            t._version_counter = counter
            out.append(t)
    return tuple(out)
