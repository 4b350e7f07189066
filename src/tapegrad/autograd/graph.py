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

import itertools
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._tensor import Tensor

_sequence = itertools.count()
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

    def __init__(self, next_functions: tuple = ()) -> None:
        self.next_functions = next_functions
        self._seq = next(_sequence)
        self._hooks: NodeHooks | None = None

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

    def __call__(self, *grads: Any) -> Any:
        out = self.apply(list(grads))
        return out[0] if len(out) == 1 else out


class AccumulateGrad(Node):
    """The node of a leaf tensor: adds the incoming gradient into ``variable.grad``.

    The engine calls ``accumulate`` (see engine.py); ``variable`` is the leaf itself.
    """

    __slots__ = ("variable",)
    _cpp_name = "torch::autograd::AccumulateGrad"

    def __init__(self, variable: Tensor) -> None:
        super().__init__(())
        self.variable = variable
        # torch gives the accumulator the largest sequence number: it runs as soon as it is
        # ready, so .grad is filled (and post-accumulate hooks fire) as early as possible.
        self._seq = LAST_SEQUENCE


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
    from .._dtype import LEGACY_NAMES

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
        f"; expected version {saved} instead. {_HINT}"
    )
