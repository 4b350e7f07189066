"""The backward engine: runs the graph from the roots to the leaves, without recursion.

    backward(tensors, grad_tensors, ...)   (``loss.backward()``; exported by tapegrad.autograd)
      torch's argument checks; ones for a scalar loss's implicit gradient; then
    run_backward(roots, grads)
      1. discover: walk next_functions with an explicit stack, counting for every node how many
         edges point at it (its dependencies) -- a chain of a million ops is just a long loop;
         roots and ``inputs`` may be tensors or GradientEdges;
      2. prune: with ``inputs`` given, only the nodes on a path to them are needed; a node that
         is captured (``autograd.grad``) but not needed runs only its tensor pre-hooks, as torch;
      3. execute: a heap of ready nodes, the most recently created first (torch's order); for
         each node
            tensor hooks / retain_grad -> node pre-hooks -> rule (grad mode = create_graph)
            -> post-hooks -> sum_to + cast each gradient to its input's shape and dtype
            -> add it to the next node's buffer (in place, first order, when nothing else
               holds the gradient already there); a node whose count reaches 0 is ready;
         every hook result is checked (count, shape, dtype) with torch's messages; a node's
         buffer is popped when it runs, and its saved values are released unless retain_graph;
      4. leaves (``_run_accumulate``): tensor hooks -> AccumulateGrad's pre-hooks -> add into
         ``.grad`` (in place unless create_graph) -> post-accumulate hooks -> its post-hooks;
         ``autograd.grad`` captures instead of accumulating.
    Each step is announced to the listeners (autograd/listeners.py: the backward trace, the
    profiler, anomaly mode's NaN check, a compiled function's capture), read once per pass;
    with none, each node and edge pays one ``is None`` test.
    The pass runs as a GraphTask on a thread-local stack (graph.current_graph_task_id, ...);
    saved-tensor hooks entered or left during the pass last only for that pass.

``sum_to`` is the only place where a broadcast gradient is reduced to its input's shape.
"""

from __future__ import annotations

import heapq
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import _numpy_warnings
from .._dtype import ALL, LEGACY_NAMES
from .._tensor import _WARNED_ONCE, Size, Tensor
from ..kernels import low_precision
from ..kernels.sums import broadcast_axes, sum_to_array
from . import listeners as _listeners
from .grad_mode import _state
from .graph import (
    AccumulateGrad,
    GradientEdge,
    GraphTask,
    Node,
    NodeHooks,
    _anomaly,
    _backward_codes,
    _saved_hooks,
    _update_detour,
    edge_metadata,
    forward_stack_messages,
    grad_accumulator,
    pop_task,
    push_task,
)


def _no_grad_copy(g: Tensor) -> Tensor:
    raise RuntimeError("the copy op of create_graph gradients is not registered (tapegrad.ops)")


# The differentiable copy that a create_graph backward makes of a leaf's first gradient: the
# copy op, which sits above the engine with the other ops, so the op's module hands it over with
# ``register_grad_copy`` when it is imported (ops/elementwise.py).
_grad_copy: Callable[[Tensor], Tensor] = _no_grad_copy


def register_grad_copy(copy: Callable[[Tensor], Tensor]) -> None:
    """Install the op that copies a gradient into a leaf's ``.grad`` under create_graph (a
    result with a CopyBackwards node, as torch's)."""
    global _grad_copy
    _grad_copy = copy


def _no_stack(tensors: Sequence[Tensor], dim: int) -> Tensor:
    raise RuntimeError("the stack op is not loaded (tapegrad.ops.shape registers it)")


# The stack op that ``grad(..., is_grads_batched=True)`` joins its passes' results with: it
# sits above the engine with the other ops, and ops/shape.py hands it over when imported.
stack: Callable[[Sequence[Tensor], int], Tensor] = _no_stack


def register_stack(op: Callable[[Sequence[Tensor], int], Tensor]) -> None:
    """Install the stack op (``autograd.grad``'s batched gradients)."""
    global stack
    stack = op


def sum_to(grad: Tensor, shape: Sequence[int]) -> Tensor:
    """Sum ``grad`` over the dims that broadcasting added or stretched, down to ``shape``."""
    shape = tuple(shape)
    a = grad._data
    gshape = a.shape
    if gshape == shape:
        return grad
    if not _state.enabled and a.dtype.kind == "f" and a.itemsize >= 4:
        # first order: straight on the array, one reduction and no ops (a bias or residual
        # gradient on every step: ~15 -> ~5 us)
        return Tensor._make(sum_to_array(a, shape))
    lead = len(gshape) - len(shape)
    axes = broadcast_axes(gshape, shape)
    if axes:
        grad = grad.sum(dim=axes, keepdim=True)
    if lead or grad._data.shape != shape:
        grad = grad.reshape(shape)
    return grad


def _root_edge(t: Any, i: int) -> tuple[Node, int]:
    """The edge a root's gradient enters: a tensor's, or a GradientEdge as given."""
    if isinstance(t, GradientEdge):
        return t.node, t.output_nr
    if not isinstance(t, Tensor):
        raise RuntimeError(f"element {i} of tensors tuple is neither a Tensor nor a GradientEdge")
    fn = t.grad_fn
    if fn is not None:
        return fn, t._output_nr
    if t._requires_grad:
        return grad_accumulator(t), 0
    raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")


def _input_edge(t: Any) -> tuple[Node, int]:
    """The edge whose gradient ``grad(..., inputs)`` returns for one input."""
    if isinstance(t, GradientEdge):
        return t.node, t.output_nr
    if t.grad_fn is not None:
        return t.grad_fn, t._output_nr
    return grad_accumulator(t), 0


def _discover(roots: list[Node]) -> dict[Node, int]:
    """Dependency counts of every node reachable from ``roots`` (iterative DFS)."""
    deps: dict[Node, int] = {}
    seen = set()
    stack = []
    for r in roots:
        if r not in seen:
            seen.add(r)
            stack.append(r)
    while stack:
        node = stack.pop()
        if node._n0 < 0:
            continue
        # node._next[::2], written out: the other edges, then the first one from the node's
        # slot. One loop over (node._e0, *rest[::2]) reads better but builds a tuple per node:
        # 46 ms instead of 31 ms on a 100,000-node chain.
        rest = node._rest
        for child in rest[::2] if rest else ():
            if child is not None:
                deps[child] = deps.get(child, 0) + 1
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        child = node._e0
        if child is not None:
            deps[child] = deps.get(child, 0) + 1
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return deps


def _needed_nodes(roots: list[Node], targets: set, include_targets: bool) -> set:
    """The nodes a pass restricted to ``targets`` must run: those with an edge path to a target
    (and, for ``backward(inputs=...)``, the targets themselves). A target reached only to read
    its gradient (``grad()``) is not run unless another target lies behind it, as in torch."""
    needed: set = set()
    done: set = set()
    for root in roots:
        if root in done:
            continue
        stack = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                done.add(node)
                if (include_targets and node in targets) or any(
                    c is not None and (c in needed or c in targets) for c in node._next[::2]
                ):
                    needed.add(node)
                continue
            if node in done:
                continue
            stack.append((node, True))
            for child in node._next[::2]:
                if child is not None and child not in done:
                    stack.append((child, False))
    return needed


def _invalid_shape(node: Node, i: int, g: Tensor, shape: tuple) -> RuntimeError:
    return RuntimeError(
        f"Function {node.name()} returned an invalid gradient at index {i} - got "
        f"{list(g._data.shape)} but expected shape compatible with {list(shape)}"
    )


def _accumulate(t: Tensor, g: Tensor, create_graph: bool) -> None:
    """AccumulateGrad: add ``g`` into the leaf's ``.grad`` as torch does."""
    old = t._grad
    if old is None:
        if create_graph:  # a differentiable copy (torch prints grad_fn=<CopyBackwards>)
            t._grad = _grad_copy(g)
        else:  # a copy laid out like the parameter (torch's gradient layout contract)
            data = np.empty_like(t._data, dtype=g._data.dtype)  # (g's dtype: grad_dtype)
            np.copyto(data, g._data)
            t._grad = Tensor._make(data)
    elif create_graph:
        t._grad = old + g
    else:
        np.add(old._data, g._data, out=old._data, casting="unsafe")
        old._version_counter.value += 1


# ---------------------------------------------------------------------------------------------
# The entry point: ``backward`` (``loss.backward()`` calls it; ``tapegrad.autograd`` exports it)
# checks its arguments the way torch does, makes the implicit gradient of a scalar loss (ones),
# and hands over to ``run_backward``. ``autograd.grad`` (autograd/__init__.py) shares the checks.
# ---------------------------------------------------------------------------------------------

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _make_grads(outputs: tuple, grads: tuple, is_grads_batched: bool = False) -> list:
    """torch's ``_make_grads``: ones for implicit scalar gradients, shape and dtype checks for
    the given ones (an extra gradient past the last output is ignored, as torch's zip does)."""
    out: list[Tensor | None] = []
    for i, (t, g) in enumerate(zip(outputs, grads, strict=False)):
        if isinstance(t, GradientEdge):
            meta = edge_metadata(t.node, t.output_nr)
            if meta is None:
                raise RuntimeError(
                    "tapegrad knows the shape of a GradientEdge's output only for edges made "
                    "by get_gradient_edge()"
                )
            shape, dtype = meta
        elif isinstance(t, Tensor):
            shape, dtype = tuple(t._data.shape), t.dtype
        else:
            raise AssertionError("Expected output to be a torch.Tensor")
        if isinstance(g, Tensor):
            first = g[0] if is_grads_batched else g
            if tuple(first._data.shape) != shape:
                j = grads.index(g)
                if is_grads_batched:
                    shown = Size(first._data.shape[1:])  # (what torch reports)
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each "
                        "grad_output as the batch dimension. The sizes of the remaining "
                        "dimensions are expected to match the shape of corresponding output, "
                        f"but a mismatch was detected: grad_output[{j}] has a shape of "
                        f"{shown} and output[{i}] has a shape of "
                        f"{Size(shape)}. If you only want some tensors in `grad_output` to be "
                        "considered batched, consider using vmap."
                    )
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{j}] has a shape of {Size(first._data.shape)}"
                    f" and output[{i}] has a shape of {Size(shape)}."
                )
            if dtype.is_complex != g.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{grads.index(g)}] has a dtype "
                    f"of {g.dtype} and output[{i}] has a dtype of {dtype}."
                )
            out.append(g)
        elif g is None:
            if isinstance(t, GradientEdge) or t._requires_grad:
                if not all(s == 1 for s in shape):
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not dtype.is_floating_point:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{dtype}"
                    )
                out.append(Tensor._make(np.ones(shape, dtype=dtype.np)))
            else:
                out.append(None)
        else:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return out


def _check_run(tensors: tuple, grads: list) -> None:
    """The engine's own argument checks (torch's run_backward, in C++)."""
    if len(tensors) != len(grads):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    for i, (t, g) in enumerate(zip(tensors, grads, strict=True)):
        if isinstance(t, Tensor) and not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None and (not isinstance(t, Tensor) or t._requires_grad):
            raise RuntimeError(
                f"element {i} of gradients tuple is None, but the corresponding Tensor requires "
                "grad")


def _check_inputs(inputs: tuple, accumulate: bool) -> None:
    for t in inputs:
        if isinstance(t, GradientEdge):
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        if accumulate:
            t.retain_grad()  # backward(inputs=[non-leaf]) fills its .grad, as torch's does
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def _inputs_tuple(inputs: Any, where: str) -> tuple:
    if isinstance(inputs, (Tensor, GradientEdge)):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{where}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    return tuple(inputs)


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad`` (only into
    ``inputs``' with ``inputs`` given; a non-leaf input retains its gradient).

    Example:
        >>> import tapegrad as torch
        >>> x = torch.tensor(3.0, requires_grad=True)
        >>> torch.autograd.backward(x * x)
        >>> x.grad
        tensor(6.)
    """
    listener = _listeners.active
    if listener is not None:  # (``tapegrad doctor`` traces a script's first backward)
        listener.run_autograd_backward(tensors, lambda: _backward(
            tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs))
        return
    _backward(tensors, grad_tensors, retain_graph, create_graph, grad_variables, inputs)


def _backward(tensors: Any, grad_tensors: Any, retain_graph: bool | None, create_graph: bool,
              grad_variables: Any, inputs: Any) -> None:
    """``backward``'s work (its warnings name the caller of ``backward``)."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=3)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
    inputs_tuple = () if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and not inputs_tuple:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _as_tuple(tensors) if tensors is not None else (None,)
    if create_graph and not _WARNED_ONCE.get("create_graph"):
        _WARNED_ONCE["create_graph"] = True  # torch's TORCH_WARN_ONCE: once per process
        warnings.warn(CREATE_GRAPH_WARNING, UserWarning, stacklevel=4)
    grads = _tensor_or_tensors_to_tuple(grad_tensors, len(outputs))
    grad_list = _make_grads(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    _check_run(outputs, grad_list)
    if inputs_tuple:
        _check_inputs(inputs_tuple, accumulate=True)
    run_backward(outputs, grad_list, retain_graph, create_graph,
                 inputs=inputs_tuple if inputs is not None else None, accumulate=True)


backward.__module__ = "tapegrad.autograd"  # (torch.autograd.backward: where users call it)


def _tensor_or_tensors_to_tuple(x: Any, length: int) -> tuple:
    if x is None:
        return (None,) * length
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)



def run_backward(
    tensors: Sequence[Any],
    grad_tensors: Sequence[Tensor | None],
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[Any] | None = None,
    allow_unused: bool = True,
    accumulate: bool = True,
) -> tuple | None:
    """Backpropagate ``grad_tensors`` from ``tensors`` (tensors or GradientEdges); see the
    module docstring. With ``inputs`` (tensors or GradientEdges) only the nodes on a path to
    them run; ``accumulate=False`` (``autograd.grad``) returns their gradients instead of
    accumulating into ``.grad``."""
    filters = warnings.filters  # NumPy's overflow warnings stay silent: the filter in front
    if not filters or filters[0] is not _numpy_warnings.ENTRY:  # (_numpy_warnings.py)
        _numpy_warnings.install()
    root_edges = [_root_edge(t, i) for i, t in enumerate(tensors)]
    roots = [n for n, _ in root_edges]
    deps = _discover(roots)

    # With inputs: which nodes run (needed) and whose gradients are read (capture: edge ->
    # first slot; a repeated input gets a copy of the same gradient at the end).
    capture: dict[tuple[Node, int], int] = {}
    repeats: list[tuple[int, int]] = []
    needed: set | None = None
    captured_nodes: set = set()
    if inputs is not None:
        edges = [_input_edge(t) for t in inputs]
        for i, key in enumerate(edges):
            first = capture.setdefault(key, i)
            if first != i:
                repeats.append((i, first))
        targets = {n for n, _ in edges}
        needed = _needed_nodes(roots, targets, include_targets=accumulate)
        if accumulate:
            capture = {}
        else:
            captured_nodes = targets
    captured: list = [None] * (len(inputs) if inputs is not None else 0)

    buffers: dict[Node, list] = {}
    for (root, nr), g in zip(root_edges, grad_tensors, strict=True):
        _add_to_buffer(buffers, root, nr, g)

    # The ready queue: (-priority, tie-breaker, node); the newest node pops first.
    ready: list = []
    counter = 0
    for root in buffers:
        if deps.get(root, 0) == 0 and (needed is None or root in needed
                                       or root in captured_nodes):
            ready.append((-root._seq, counter, root))
            counter += 1
    heapq.heapify(ready)
    push, pop = heapq.heappush, heapq.heappop
    anomaly = _anomaly["enabled"]  # (its NaN check listens: NAN_CHECK)
    # who hears this pass (autograd/listeners.py): None, as a rule, and then the loop pays
    # one ``is None`` test per node and per edge
    listen = _listeners.active

    task = GraphTask(deps, roots, needed, captured_nodes)
    push_task(task)
    hooks_before = _saved_hooks[:]  # saved-tensor hooks entered or left inside hooks or
    # backward rules last until the end of this pass only (torch restores its thread state)
    prev_mode, prev_grad_mode = _state.enabled, _state.grad_mode
    _state.enabled = _state.grad_mode = create_graph  # backward rules record iff create_graph
    node = None  # (the failing node, for anomaly mode's report)
    if listen is not None:
        listen.backward_started(tensors, inputs)
    try:
        while ready:
            node = pop(ready)[2]
            grads = buffers.pop(node, None)
            if listen is not None:
                listen.node_started(node, grads)
            n0 = node._n0  # the edges, flat (node._next, written out: this loop is hot)
            nexts = () if n0 < 0 else (node._e0, n0) + node._rest
            n_in = len(nexts) // 2
            if (grads is None or (grads[0] is None and all(g is None for g in grads))) and (
                    node._hooks is None and not node._runs_without_grad
                    or type(node) is AccumulateGrad):
                out: tuple = (None,) * n_in  # nothing reached it: pass "no gradient" on
            elif type(node) is AccumulateGrad:
                # tensor hooks, pre-hooks, .grad, post-accumulate hooks, post-hooks (there)
                if listen is None:
                    _run_accumulate(node, grads[0], create_graph, capture,  # type: ignore[index]
                                    captured, accumulate)  # (grads is a list here)
                else:
                    listen.run_accumulate(node, _run_accumulate, node,
                                          grads[0],  # type: ignore[index]
                                          create_graph, capture, captured, accumulate, listen)
                continue
            else:
                if grads is None:  # no gradient arrived, but hooks or a custom backward see it
                    grads = [None] * node._num_outputs()
                hooks = node._hooks
                if needed is not None:
                    if node not in needed:  # a target read only: its tensor hooks, then stop
                        if hooks is not None:
                            grads = _call_tensor_pre_hooks(hooks, grads, create_graph)
                        kept = _capture(node, grads, capture, captured)
                        if listen is not None:
                            if kept:
                                listen.captured(node)
                            listen.node_skipped(node)
                        continue
                    if capture and _capture(node, grads, capture, captured) and (
                            listen is not None):
                        listen.captured(node)
                if hooks is not None:
                    if listen is not None:
                        listen.pre_hooks(node, hooks, grads)
                    grads = _call_pre_hooks(hooks, grads, create_graph)
                    if listen is not None:
                        listen.pre_hooks_ran(node, grads)
                    if not node._runs_without_grad and all(g is None for g in grads):
                        out = (None,) * n_in  # the hooks saw "no gradient"; nothing to run
                        grads = []
                if grads:
                    out = node.apply(grads) if listen is None else listen.run_node(
                        node, node.apply, grads)
                if type(out) is not tuple:
                    out = tuple(out) if isinstance(out, list) else (out,)
                if hooks is not None and hooks.post:
                    if listen is not None:
                        listen.post_hooks(node, hooks)
                    out = _call_post_hooks(hooks, out, grads)
                if not retain_graph:
                    node.release()
                if len(out) != n_in:
                    raise RuntimeError(
                        f"function {node.name()} returned an incorrect number of gradients "
                        f"(expected {n_in}, got {len(out)})"
                    )
                if listen is not None:
                    listen.node_returned(node, out)
            meta = getattr(node, "input_meta", None)
            for i in range(n_in):
                child = nexts[2 * i]
                if child is None:
                    if listen is not None:
                        listen.gradient_sent(node, i, None, 0, None)
                    continue
                nr = nexts[2 * i + 1]
                g = out[i]
                if g is not None:
                    if meta is not None:
                        m = meta[i]
                        if m is not None and (
                            g._data.shape != m[0] or g._data.dtype.num != m[1]
                        ):
                            g = _validate(node, i, g, m, child, listen)
                    buf = buffers.get(child)
                    if buf is None:
                        buffers[child] = [g] if nr == 0 else [None] * nr + [g]
                    else:
                        _add_to_buffer(buffers, child, nr, g)
                if listen is not None:
                    listen.gradient_sent(node, i, child, nr, g)
                left = deps[child] - 1
                deps[child] = left
                if left == 0 and (needed is None or child in needed
                                  or child in captured_nodes):
                    push(ready, (-child._seq, counter, child))  # ready, even if every
                    counter += 1  # gradient that reached it was None
            out, g = (), None  # hold no gradient past its node (see _unshared)
    except Exception:
        if anomaly and node is not None:  # anomaly mode: where the failing node was made
            for message in forward_stack_messages(node):
                warnings.warn(message, UserWarning, stacklevel=3)
        raise
    finally:
        _state.enabled, _state.grad_mode = prev_mode, prev_grad_mode
        pop_task()
        if _saved_hooks != hooks_before:
            _saved_hooks[:] = hooks_before
            _update_detour()
        if listen is not None:
            listen.backward_finished()

    if inputs is None:
        return None
    for i, first in repeats:
        captured[i] = captured[first]
    return tuple(captured)


def _capture(node: Node, grads: list, capture: dict, captured: list) -> bool:
    """``autograd.grad``: keep the gradients of the edges asked for (True if it kept one)."""
    kept = False
    for nr in range(len(grads)):
        slot = capture.get((node, nr))
        if slot is not None and grads[nr] is not None:
            captured[slot] = grads[nr]
            kept = True
    return kept


_backward_codes.add(run_backward.__code__)  # anomaly mode: nodes made during a backward


def _dtype_of_num(num: int) -> Any:
    """The tapegrad dtype whose NumPy dtype has this type number."""
    d = _BY_NUM.get(num)
    if d is None:
        d = _BY_NUM[num] = next(d for d in ALL if d.np.num == num)
    return d


_BY_NUM: dict[int, Any] = {}


def _validate(node: Node, i: int, g: Tensor, meta: tuple, child: Node | None = None,
              listen: _listeners.Listener | None = None) -> Tensor:
    """Reduce a broadcast gradient to its input's shape and cast it to its (NumPy) dtype (a
    leaf whose ``grad_dtype`` was set decides its own dtype in ``_run_accumulate``). The
    array calls it makes outside any op are announced to ``listen``."""
    shape, dtype = meta
    if g._data.shape != shape:
        gs = g._data.shape
        if len(gs) < len(shape) or any(
            s != 1 and s != d for s, d in zip(shape[::-1], gs[::-1], strict=False)
        ):
            raise _invalid_shape(node, i, g, shape)
        g = sum_to(g, shape) if listen is None else _heard_sum_to(g, shape, listen)
    if g._data.dtype.num != dtype and not (
            type(child) is AccumulateGrad and child.variable._grad_dtype is not False):
        target = _dtype_of_num(dtype)
        if g._data.dtype.kind == "V" and g.dtype.name == "complex32":
            g = g.cfloat()  # (its real part is taken next)
        if g._data.dtype.kind == "c" and not target.is_complex:
            g = g.real  # a real input's gradient is the real part (torch's convention)
        if not _state.enabled and g._data.dtype.char in "efE" and target.np.char in "efE":
            # first order, between float32 and a 16-bit type (mixed precision, every cast
            # autocast made): on the array, without an op
            wide = g
            g = cast_array(g, target.np)
            if listen is not None:
                listen.kernel_called("cast", low_precision.cast, (wide,),
                                     {"dtype": target.np}, (g._data,))
        else:
            g = g.to(target)
    return g


def _heard_sum_to(grad: Tensor, shape: tuple, listen: _listeners.Listener) -> Tensor:
    """``sum_to`` while listeners listen: its first-order path on the array, which no op
    records, announced as a kernel call (a compiled program repeats it)."""
    out = sum_to(grad, shape)
    a = grad._data
    if out is not grad and not _state.enabled and a.dtype.kind == "f" and a.itemsize >= 4:
        listen.kernel_called("sum_to", sum_to_array, (grad,), {"shape": tuple(shape)},
                             (out._data,))
    return out


def cast_array(g: Tensor, dtype: np.dtype) -> Tensor:
    """A first-order gradient converted between float32 and a 16-bit float type on its array,
    rounded to nearest even (no op: the conversion of every cast that autocast made)."""
    return Tensor._make(low_precision.cast(g._data, dtype))


def _add_to_buffer(buffers: dict, node: Node, nr: int, g: Tensor | None) -> None:
    buf = buffers.get(node)
    if buf is None:
        buf = [None] * (nr + 1)
        buffers[node] = buf
    elif len(buf) <= nr:
        buf.extend([None] * (nr + 1 - len(buf)))
    old = buf[nr]
    if old is None:
        buf[nr] = g
    elif g is None or not _add_in_place(old, g):
        buf[nr] = old + g


# References while _add_in_place looks at a buffered gradient, counting getrefcount's own
# argument: the Tensor's are the buffer list, the ``old`` of _add_to_buffer and of
# _add_in_place, and the argument (4); its array's are the Tensor's ``_data`` slot, the local
# ``a`` and the argument (3). Anything more (the same Tensor sent along another edge, a hook
# that kept it, a view of the array) means someone else can see it.
_BUFFERED_REFS = 4
_BUFFERED_ARRAY_REFS = 3


def _add_in_place(old: Tensor, g: Tensor) -> bool:
    """Add ``g`` into a buffered first-order gradient in place, when nothing else can see it
    (a residual stream's gradient meets several of these on every step; torch's input buffers
    accumulate in place too). False where it does not apply: under create_graph, for a
    gradient someone else holds, for a view, or where the sum would change shape or dtype."""
    if _state.enabled:
        return False
    a, b = old._data, g._data
    if (a.base is not None or not a.flags.writeable or a.shape != b.shape
            or a.dtype != b.dtype or a.dtype.kind not in "fc"
            or sys.getrefcount(old) > _BUFFERED_REFS
            or sys.getrefcount(a) > _BUFFERED_ARRAY_REFS
            or np.may_share_memory(a, b)):
        return False
    np.add(a, b, out=a)
    return True


def _hook_name(hook: Any) -> str:
    return getattr(hook, "__name__", "<unknown>") if isinstance(
        getattr(hook, "__name__", None), str) else "<unknown>"


def _type_name(t: Tensor) -> str:
    return f"torch.{LEGACY_NAMES.get(t.dtype.name, 'Tensor')}"


def _checked(hook: Any, original: Any, result: Any) -> Any:
    """A hook's replacement for one gradient, with torch's checks (None: keep the original)."""
    if result is None:
        return original
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(result).__name__}'")
    if result._data.dtype != original._data.dtype:
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has changed the type of value (was "
            f"{_type_name(original)} got {_type_name(result)})"
        )
    if result._data.shape != original._data.shape:
        raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
    return result


def _checked_tuple(hook: Any, originals: tuple, result: Any) -> tuple:
    """A node hook's replacement for all its gradients (a tuple of the same length)."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(originals):
        raise RuntimeError(
            f"hook '{_hook_name(hook)}' has returned an incorrect number of values (got "
            f"{len(result)}, but expected {len(originals)})"
        )
    return tuple(_checked(hook, o, r) for o, r in zip(originals, result, strict=True))


def _call_tensor_pre_hooks(hooks: NodeHooks, grads: list, create_graph: bool) -> list:
    """Tensor hooks (``t.register_hook``, per output), then retain_grad (torch's order)."""
    for nr, tensor_hooks in hooks.tensor.items():
        if nr < len(grads):
            for hook in list(tensor_hooks.values()):
                grads[nr] = _checked(hook, grads[nr], hook(grads[nr]))
    for nr, ref in hooks.retain.items():
        t = ref()
        if t is None or nr >= len(grads) or grads[nr] is None:
            continue
        g = grads[nr]
        if t._grad is None:  # a copy (differentiable under create_graph), as torch's clone
            t._grad = g.clone() if create_graph else Tensor._make(np.array(g._data, copy=True))
        else:
            t._grad = t._grad + (g if create_graph else g.detach())
    return grads


def _call_pre_hooks(hooks: NodeHooks, grads: list, create_graph: bool) -> list:
    """Tensor hooks, then retain_grad, then the node's pre-hooks (torch's order)."""
    if hooks.tensor or hooks.retain:
        grads = _call_tensor_pre_hooks(hooks, grads, create_graph)
    for hook in list(hooks.pre.values()):
        out = hook(tuple(grads))
        if out is not None:
            grads = list(_checked_tuple(hook, tuple(grads), out))
    return grads


def _call_post_hooks(hooks: NodeHooks, out: tuple, grads: list) -> tuple:
    """The node's post-hooks: ``hook(grad_inputs, grad_outputs)``; a result replaces
    ``grad_inputs``."""
    for hook in list(hooks.post.values()):
        res = hook(out, tuple(grads))
        if res is not None:
            out = _checked_tuple(hook, out, res)
    return out


def _run_accumulate(node: AccumulateGrad, g: Tensor, create_graph: bool, capture: dict,
                    captured: list, accumulate: bool,
                    listen: _listeners.Listener | None = None) -> None:
    """AccumulateGrad: the leaf's tensor hooks, the node's pre-hooks, ``.grad`` (or the
    captured gradient of ``autograd.grad``), post-accumulate hooks, the node's post-hooks.
    ``listen`` hears what lands (``gradient_accumulated``)."""
    t = node.variable
    if t._hooks:
        for hook in list(t._hooks.values()):
            out = hook(g)  # (held in ``out`` as well: see _TENSOR_REFS)
            g = _checked(hook, g, out)
    if g is None:
        return
    if g._data.shape != t._data.shape:
        g = sum_to(g, t._data.shape) if listen is None else _heard_sum_to(
            g, t._data.shape, listen)
    want = t._grad_dtype  # False (the leaf's dtype) unless grad_dtype was set
    if want is False:
        if g._data.dtype != t._data.dtype:
            if g._data.dtype.kind == "c" and t._data.dtype.kind != "c":
                g = g.real  # a real leaf's gradient is the real part (torch's convention)
            g = g.to(t.dtype)
    elif want is not None and g.dtype is not want:
        g = g.to(want)
    if listen is not None:
        listen.gradient_accumulated(node, g, accumulate)
    if not accumulate:
        slot = capture.get((node, 0)) if capture else None
        if slot is not None:
            captured[slot] = g
        return
    hooks = node._hooks
    if hooks is not None and hooks.pre:
        for hook in list(hooks.pre.values()):
            res = hook((g,))
            if res is not None:
                g = _checked_tuple(hook, (g,), res)[0]
    free = None if create_graph or t._grad is not None else _unshared(g, t)
    if free is not None:
        t._grad = Tensor._make(free)  # take the buffer: nothing else can see it
    else:
        _accumulate(t, g if create_graph else g.detach(), create_graph)
    if t._post_hooks:
        for hook in list(t._post_hooks.values()):
            res = hook(t)
            if res is not None:
                if isinstance(res, Tensor):
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
                raise TypeError(f"expected Variable, but hook returned '{type(res).__name__}'")
    if hooks is not None and hooks.post:
        for hook in list(hooks.post.values()):
            res = hook((), (g,))
            if res is not None:
                _checked_tuple(hook, (), res)


# References while _unshared checks an incoming gradient that no one else holds, counting
# getrefcount's own argument each time: the Tensor's are the engine's buffer list,
# _run_accumulate's local and _unshared's argument (4; a leaf hook's replacement is held by
# ``out`` in _run_accumulate instead of the buffer list, a sum_to or cast result by nothing
# more); the array's are the Tensor's ``_data`` slot and a local (3). The owner of a view adds
# the base Tensor's ``_data`` slot; that base Tensor is held by the view's ``_base`` and a
# local (3).
_TENSOR_REFS = 4
_ARRAY_REFS = 3


def _unshared(g: Tensor, t: Tensor) -> np.ndarray | None:
    """The buffer the first gradient of leaf ``t`` can become ``t.grad`` without a copy, or
    None. torch's AccumulateGrad steals the incoming gradient when nothing else can see it and
    it has the parameter's layout; so does this. No one may hold the Tensor or its array (a
    user's grad_tensors, a hook's capture, another input's gradient, a view); a view's owner
    (``(G^T A).t().t()`` is the gradient of ``W`` through ``W.t()``) may be held only by the
    view. A training step then allocates each weight gradient once instead of twice."""
    a = g._data
    if sys.getrefcount(g) > _TENSOR_REFS or sys.getrefcount(a) > _ARRAY_REFS:
        return None
    owner = a.base
    if owner is not None:
        refs = _ARRAY_REFS
        base_t = g._base
        if base_t is not None:  # a view Tensor: its base may hold nothing but the owner
            if sys.getrefcount(base_t) > 3 or base_t._data is not owner:
                return None
            refs += 1
        if type(owner) is not np.ndarray or sys.getrefcount(owner) > refs:
            return None
    if a.strides != t._data.strides or not a.flags.writeable:
        return None
    return a


def _check_nan(node: Node, out: tuple) -> None:
    """Anomaly mode's check of a node's gradients: torch's error on the first NaN."""
    for i, g in enumerate(out):
        if g is None or not (g.dtype.is_floating_point or g.dtype.is_complex):  # bfloat16 too
            continue
        if np.isnan(g._data).any():
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output."
            )


class _NanCheck(_listeners.Listener):
    """Anomaly mode with ``check_nan`` (``set_anomaly_enabled`` pushes it): every node's
    gradients checked for NaN as the node returns them."""

    def node_returned(self, node: Node, grads: tuple) -> None:
        _check_nan(node, grads)


NAN_CHECK = _NanCheck()
