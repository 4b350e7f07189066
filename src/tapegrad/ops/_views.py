"""Views and in-place ops: torch's view tracking, written out.

A view op (view, reshape, t, transpose, select, slice, narrow, unbind, split, real, ...) returns
a tensor over its input's memory. Autograd keeps, on each view ``v``::

    v._base      the tensor whose memory it views: the root, never itself a view
    v._vc        the base's version counter (shared: an in-place op on any of them bumps it)
    v._vv        the counter's value when v's grad_fn was last set
    v._creation  how it was made (torch's CreationMeta), when not DEFAULT: NO_GRAD_MODE,
                 INFERENCE_MODE, MULTI_OUTPUT_NODE (unbind, split, chunk), IN_CUSTOM_FUNCTION;
                 it decides which in-place ops the view allows (``check_inplace``)
    v._replay    how to make ``v`` again from its base, one (op, params, output) per view op,
                 or None: then ``as_strided`` with v's geometry does (torch's default). Kept
                 with view replay on (``torch.autograd._force_original_view_tracking(True)``),
                 and always for the views that change the dtype (view_as_real, real, imag,
                 view_as_complex) and the views of those, as torch keeps its view functions

An in-place op on a view, when it is recorded (``rebase_history``)::

    base.grad_fn = CopySlices(base's old history, the op's node)
    v.grad_fn    = AsStridedBackward0 -> base (regenerated at once)

Every in-place change bumps the shared counter, so every other view of the base finds its
``_vv`` stale on its next ``grad_fn`` access and regenerates its grad_fn the same way
(``view_grad_fn``): its history now runs through the base's new one. A view made in no_grad or
inference mode, an output of a function that returns several views, or a view a custom Function
returned may not be modified in place when that would be recorded; torch's errors say why
(``handle_view_on_rebase``).

A view's ``requires_grad`` is its own, or its base's: a view taken under ``no_grad`` of a tensor
that requires grad reports ``requires_grad=True`` and is a leaf with no gradient edge (an op on it
records a node, and the gradient stops there), as in torch.
"""

from __future__ import annotations

import warnings
from typing import Any, cast

import numpy as np

from .._tensor import Tensor, install_above
from ..autograd.grad_mode import _set, _state, no_grad
from ..autograd.graph import FREED_MESSAGE, Node, edge

# ---------------------------------------------------------------------------------------------
# The ops that make a view again
# ---------------------------------------------------------------------------------------------
# Making a view again (its grad_fn after an in-place change, reverse_view, CopySlices) runs ops
# of the modules that import this one: ops/_registry.py (apply, _record), ops/shape.py
# (as_strided) and ops/complex.py (view_as_real, view_as_complex). Each hands them to this
# table when it loads (``provide``), as the Tensor's hooks are installed (``install_above``).
_OPS: dict[str, Any] = {}
_PROVIDED = frozenset(("apply", "record", "as_strided", "as_strided_entry", "as_strided_positions",
                       "view_as_real", "view_as_real_entry", "view_as_complex"))


def provide(**ops: Any) -> None:
    """Hand this module ops by the names it uses (``provide(apply=apply)``); an ``_entry`` is a
    registry entry (an ``OpDef``), the others are functions on tensors."""
    for name, op in ops.items():
        if name not in _PROVIDED:
            raise TypeError(f"views use no op named {name!r}")
        _OPS[name] = op


# torch's CreationMeta, by the name its messages use
DEFAULT = 0
IN_CUSTOM_FUNCTION = 1
MULTI_OUTPUT_NODE = 2
NO_GRAD_MODE = 3
INFERENCE_MODE = 4


def propagate_creation(previous: int, new: int) -> int:
    """The creation meta of a view of a view: an inference-mode origin sticks, else the newest
    non-default one."""
    if new == DEFAULT:
        return previous
    return previous if previous == INFERENCE_MODE else new


def make_view(t: Tensor, src: Tensor, op: Any, params: dict, index: int) -> Tensor:
    """Make ``t`` (just computed by view op ``op`` on ``src``) a view of ``src``'s base."""
    if src._inference:  # a view of an inference tensor is an inference tensor, not a view
        t._inference = True
        return t
    vc = src._vc
    if vc is None:
        vc = src._version_counter  # (made on first use)
    t._vc = vc
    if vc.value:  # (0 is the class default: a view of a tensor never changed needs no __dict__)
        t._vv = vc.value
    if _state.enabled:
        new = DEFAULT if op.outputs == 1 else MULTI_OUTPUT_NODE
    else:
        new = INFERENCE_MODE if _state.inference else NO_GRAD_MODE
    base = src._base
    if base is None:  # (the common case: a view of a tensor that is no view)
        t._base = src
        if new:
            t._creation = new
        if _state.view_replay or op.name in _DTYPE_VIEWS:
            t._replay = _replay_steps(t, op, params, index)
        return t
    t._base = base
    creation = propagate_creation(src._creation, new)
    if creation:
        t._creation = creation
    if src._fw_root:  # forward-mode AD: the tangents' base is the dual tensor
        t._fw_base = src
    elif src._fw_base is not None:
        t._fw_base = src._fw_base
    if _state.view_replay or op.name in _DTYPE_VIEWS:
        t._replay = (*replay_chain(src), *_replay_steps(t, op, params, index))
    elif src._replay is not None:  # a view of a replayed view
        t._replay = (*src._replay, geometry_step(t))
    return t


def _replay_steps(t: Tensor, op: Any, params: dict, index: int) -> tuple:
    """The replay steps that make ``t`` from the input of its view op ``op``."""
    if op.name in _DTYPE_VIEWS and op.name != "view_as_real" and op.name != "view_as_complex":
        return ((_OPS["view_as_real_entry"], {}, 0), geometry_step(t))  # real, imag
    return ((op, params, index),)


# the view ops that change the dtype: as_strided cannot make their views again
_DTYPE_VIEWS = frozenset(("view_as_real", "view_as_complex", "real", "imag"))


def geometry_step(t: Tensor) -> tuple:
    """A replay step that makes ``t`` with as_strided: its sizes, strides and offset."""
    base = cast(Tensor, t._base)
    offset = t.storage_offset() - base.storage_offset()  # (relative to the base's start)
    return (None, (tuple(t._data.shape), t.stride(), offset), 0)


def replay_chain(t: Tensor) -> tuple:
    """How to make ``t`` from its base: its recorded view ops, or else one as_strided step with
    its geometry (torch fills the gaps of a chain without view functions the same way)."""
    if t._base is None:
        return ()
    replay = t._replay
    if replay is not None:
        return replay
    return (geometry_step(t),)


# ---------------------------------------------------------------------------------------------
# A view's grad_fn, regenerated when the base or another view was modified in place
# ---------------------------------------------------------------------------------------------

def view_grad_fn(v: Tensor) -> Any:
    """``v.grad_fn`` for a view: its node, or a fresh one through the base's history when the
    shared version counter moved since it was set (torch's VariableHooks::grad_fn)."""
    fn = v._grad_fn
    if v._vv == v._vc.value:  # type: ignore[union-attr]  # (a view always has a counter)
        return fn
    base = cast(Tensor, v._base)
    if fn is None and not base._requires_grad:
        return None
    handle_view_on_rebase(v, indirect=True)
    replay = v._replay
    if replay is not None:
        new = _replayed_grad_fn(base, replay)
    else:
        new = _as_strided_node(base, v)
    old_nr = v._output_nr
    v._grad_fn = new
    v._output_nr = 0
    v._requires_grad = True
    v._vv = v._vc.value  # type: ignore[union-attr]
    if v._retains_grad:
        move_retain_hook(fn, old_nr, new, 0)
    return new


install_above(view_grad_fn=view_grad_fn)  # Tensor.grad_fn of a view

def _as_strided_node(base: Tensor, v: Tensor) -> Node:
    """An AsStridedBackward0 node from ``base``'s history to the view ``v`` (not computed: only
    its node is needed)."""
    record, as_strided_entry = _OPS["record"], _OPS["as_strided_entry"]
    as_real = base._data.dtype.kind == "c" and v._data.dtype.kind != "c"
    if not as_real:
        positions = view_positions(base._data, v._data)
        return record(as_strided_entry, (base,), {"positions": positions}, None)
    # a real view (x.real, x.imag) of a complex base: positions among its (real, imag) pairs
    pairs = Tensor._make(base._data.view(base._data.real.dtype).reshape(base._data.shape + (2,)))
    if base._requires_grad:
        pairs._grad_fn = record(_OPS["view_as_real_entry"], (base,), {}, None)
        pairs._requires_grad = True
    positions = view_positions(pairs._data, v._data)
    return record(as_strided_entry, (pairs,), {"positions": positions}, None)


def _replayed_grad_fn(base: Tensor, replay: tuple) -> Any:
    """The grad_fn of the view ops replayed on ``base`` with grad mode on."""
    prev = (_state.grad_mode, _state.inference, _state.enabled)
    _set(True, False)
    try:
        out = replay_view(base, replay)
    finally:
        _state.grad_mode, _state.inference, _state.enabled = prev
    return out._grad_fn


def replay_view(base: Tensor, replay: tuple) -> Tensor:
    """Make the view again: its view ops, in order, on ``base``."""
    apply = _OPS["apply"]
    out = base
    for op, params, index in replay:
        if op is None:  # a step recorded as its geometry (size, stride, offset)
            out = _OPS["as_strided"](out, *params)
            continue
        res = apply(op, out, **params)
        out = res[index] if op.outputs != 1 else res
    return out


def reverse_view(view: Tensor, new_view: Tensor) -> Tensor:
    """A tensor with the geometry of ``view``'s base, viewing the memory ``new_view`` lies in,
    placed as the base is around the view (torch's ``_rev_view_func_unsafe``, which exists
    only for views made with view replay on)."""
    if view._replay is None:
        raise RuntimeError("No _rev_view_func() found")
    as_strided = _OPS["as_strided"]
    base = cast(Tensor, view._base)
    shift = new_view.storage_offset() - view.storage_offset()  # (in the view's elements)
    if base._data.dtype.kind == "c" and new_view._data.dtype.kind != "c":  # view_as_real's
        pairs = as_strided(new_view, tuple(base._data.shape) + (2,),
                           tuple(2 * st for st in base.stride()) + (1,),
                           shift + 2 * base.storage_offset())
        return _OPS["view_as_complex"](pairs)
    if base._data.dtype.kind != "c" and new_view._data.dtype.kind == "c":  # view_as_complex's
        return as_strided(_OPS["view_as_real"](new_view), tuple(base._data.shape), base.stride(),
                          2 * shift + base.storage_offset())
    return as_strided(new_view, tuple(base._data.shape), base.stride(),
                      shift + base.storage_offset())


def view_positions(base: np.ndarray, view: np.ndarray) -> np.ndarray:
    """For each element of ``view``, its flat (C-order) index in ``base``."""
    isz = base.itemsize
    start = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    pos = np.full(view.shape, start // isz, dtype=np.int64)
    for axis, (n, st) in enumerate(zip(view.shape, view.strides, strict=True)):
        shape = [1] * view.ndim
        shape[axis] = n
        pos = pos + (np.arange(n, dtype=np.int64) * (st // isz)).reshape(shape)
    if base.flags.c_contiguous:
        return pos
    bpos = np.zeros(base.shape, dtype=np.int64)
    for axis, (n, st) in enumerate(zip(base.shape, base.strides, strict=True)):
        shape = [1] * base.ndim
        shape[axis] = n
        bpos = bpos + (np.arange(n, dtype=np.int64) * (st // isz)).reshape(shape)
    flat = bpos.reshape(-1)
    order = np.argsort(flat, kind="stable")
    return order[np.searchsorted(flat[order], pos)]


def move_retain_hook(old: Any, old_nr: int, new: Node, new_nr: int) -> None:
    """``retain_grad`` follows a tensor to its new grad_fn (its other hooks stay behind, on the
    node they were registered on, as in torch)."""
    if old is None or old._hooks is None:
        return
    ref = old._hooks.retain.pop(old_nr, None)
    if ref is not None:
        new._hook_state().retain[new_nr] = ref


# ---------------------------------------------------------------------------------------------
# The checks before an in-place op, and the history after it
# ---------------------------------------------------------------------------------------------

_SUFFIX = {
    MULTI_OUTPUT_NODE: (
        " This view is the output of a function that returns multiple views. Such functions do "
        "not allow the output views to be modified inplace. You should replace the inplace "
        "operation by an out-of-place one."
    ),
    NO_GRAD_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "no_grad block (if you don't want the inplace to be tracked) or both outside (if you "
        "want the inplace to be tracked)."
    ),
    INFERENCE_MODE: (
        " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
        "clarify your code by moving both the view and the inplace either both inside the "
        "inference_mode block (if you don't want the inplace to be tracked) or both outside "
        "(if you want the inplace to be tracked)."
    ),
    IN_CUSTOM_FUNCTION: (
        " This view was created inside a custom Function (or because an input was returned "
        "as-is) and the autograd logic to handle view+inplace would override the custom "
        "backward associated with the custom Function, leading to incorrect gradients. This "
        "behavior is forbidden. You can fix this by cloning the output of the custom Function."
    ),
}


def node_label(fn: Any) -> str:
    """A node's name as torch's view messages print it: ``UnbindBackward0`` -> ``Unbind``."""
    name = fn.name()
    cut = name.rfind("Backward")
    if cut > 0 and (name[cut + 8:].isdigit() or cut + 8 == len(name)):
        return name[:cut]
    return name


def handle_view_on_rebase(v: Tensor, indirect: bool = False) -> None:
    """torch's error for an in-place change of a view its creation does not allow (``indirect``:
    the base or another view of it was changed, and ``v.grad_fn`` was asked for)."""
    creation = v._creation
    if creation == DEFAULT:
        return
    fn = v._grad_fn
    what = "its base or another view of its base has been" if indirect else "is being"
    if creation in (INFERENCE_MODE, NO_GRAD_MODE) or fn is None:
        if fn is not None:
            prefix = (f"Output {v._output_nr} of {node_label(fn)} is a view of a view which was "
                      "created in")
        else:
            prefix = "A view was created in"
        if creation == INFERENCE_MODE:
            msg = f"{prefix} inference mode and {what} modified inplace in normal mode."
        else:
            msg = f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled."
    else:
        msg = f"Output {v._output_nr} of {node_label(fn)} is a view and {what} modified inplace."
    raise RuntimeError(msg + _SUFFIX[creation])


INFERENCE_INPLACE_MESSAGE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details."
)


def check_inplace(target: Tensor, record: bool) -> None:
    """torch's errors for an in-place op that will be recorded, raised before anything is
    written (``record``: grad mode is on and the target or another input requires grad)."""
    if not record:
        return
    if target._base is not None:
        handle_view_on_rebase(target)
        if target.requires_grad and target._base._grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Variable that requires grad is being used in an in-place "
                "operation."
            )
    elif target._requires_grad and target._grad_fn is None:
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )


def bump_version(t: Tensor) -> None:
    """After an in-place write: the version counter moves on (an inference tensor has none, and
    may only be written inside inference mode; torch checks that only now, after the write)."""
    if t._inference:
        if not _state.inference:
            raise RuntimeError(INFERENCE_INPLACE_MESSAGE)
        return
    t._version_counter.value += 1


def rebase_history(target: Tensor, node: Any, output_nr: int = 0) -> None:
    """Make ``node`` (whose first input is ``target``'s old value) ``target``'s history: its
    grad_fn if it is no view; else the base's history becomes CopySlices(base's old history,
    node), and the view's grad_fn is regenerated through it (torch's rebase_history)."""
    base = target._base
    if base is None:
        old, old_nr = target._grad_fn, target._output_nr
        target._grad_fn = node
        target._output_nr = output_nr
        target._requires_grad = True
        if target._retains_grad:
            move_retain_hook(old, old_nr, node, output_nr)
        return
    copy_slices = CopySlices(base, target, node)
    old = base._grad_fn
    if target.requires_grad and base._retains_grad:
        move_retain_hook(old, base._output_nr, copy_slices, 0)
    base._grad_fn = copy_slices
    base._output_nr = 0
    base._requires_grad = True
    target._vv = -1  # (stale whatever its version: a grad_fn read since the write is old)
    view_grad_fn(target)  # the view's own history, through the base's new one


def set_gradient_edge(t: Tensor, node: Any, output_nr: int = 0) -> None:
    """``t`` is output ``output_nr`` of ``node`` from now on (a view's grad_fn then stands for
    its current version)."""
    t._grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True
    if t._base is not None:
        t._vv = t._vc.value  # type: ignore[union-attr]


def view_as_self(t: Tensor) -> Tensor:
    """A view of ``t`` with no history of its own (what a custom Function returns for an input
    it returns as is, so that the output can get the Function's node)."""
    with no_grad():
        return t.view_as(t)


_NOT_AN_INPUT = ("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors "
                 "that have been mutated should be passed to ctx.mark_dirty().")

_DIRTY_VIEW_OF_SEVERAL = (
    "If your Function modifies inplace an input that is a view of another Tensor, your Function "
    "cannot return more than one Tensor. This is not supported by the current autograd engine. "
    "You should either make sure the input is not a view (using .clone() for example) or make "
    "your Function only return one Tensor (potentially splitting it into two Functions: one "
    "doing the inplace that returns a single Tensor and a second one that does the other "
    "operations). You can ask on the forum https://discuss.pytorch.org/ if you need help to do "
    "this change."
)


def set_custom_function_history(out: Tensor, node: Any, output_nr: int, is_input: bool,
                                dirty: bool, n_outputs: int = 1) -> None:
    """A custom Function's output gets its node: an input it marked dirty through
    ``rebase_history`` (a view's base then gets CopySlices; the view must be one that may be
    modified in place, and the Function's only output), any other output directly. A view it
    returns may not be modified in place later (IN_CUSTOM_FUNCTION)."""
    if dirty:
        if not is_input:
            if out._base is not None:
                raise RuntimeError(_NOT_AN_INPUT)
            warnings.warn(_NOT_AN_INPUT, UserWarning, stacklevel=4)
        if out._base is not None:
            if n_outputs > 1:
                raise RuntimeError(_DIRTY_VIEW_OF_SEVERAL)
            check_inplace(out, True)
        rebase_history(out, node, output_nr)
    else:
        set_gradient_edge(out, node, output_nr)
    if out._base is not None and not (is_input and dirty):
        out._creation = IN_CUSTOM_FUNCTION


def custom_function_multi_output_views(outs: list) -> None:
    """Views among several differentiable outputs of a custom Function may not be modified in
    place later (MULTI_OUTPUT_NODE), as the outputs of unbind or split may not."""
    diff = [o for o in outs if isinstance(o, Tensor) and o._grad_fn is not None]
    if len(diff) > 1:
        for o in outs:
            if isinstance(o, Tensor) and o._base is not None:
                o._creation = MULTI_OUTPUT_NODE


def custom_function_outputs_unrecorded(outs: tuple, args: tuple, dirty: tuple) -> tuple:
    """A custom Function's outputs when it records no node: an input returned as is becomes a
    view of it (or, if it requires grad, its detach()); a view returned may not be modified in
    place later (IN_CUSTOM_FUNCTION), as torch's Functions do."""
    new = []
    for o in outs:
        if isinstance(o, Tensor):
            is_input = any(o is a for a in args)
            is_dirty = any(o is d for d in dirty)
            if not o.requires_grad:
                if is_input and not is_dirty:
                    o = view_as_self(o)
            elif is_input:
                o = o.detach()
            elif o._base is None:
                o.detach_()
            if o._base is not None and not (is_input and is_dirty):
                o._creation = IN_CUSTOM_FUNCTION
        new.append(o)
    return tuple(new)


def forward_view_base(t: Tensor) -> Tensor | None:
    """The base of ``t`` as a view for forward-mode AD: a dual tensor for views of it, none for
    the dual tensor itself (make_dual's view carries its own tangent)."""
    if t._fw_root:
        return None
    return t._fw_base if t._fw_base is not None else t._base


def check_custom_function_tangent_view(out: Tensor, grad: Tensor, args: tuple,
                                       tangents: list) -> None:
    """A custom Function's output that is a view of an input (an input returned as is is one):
    its jvp must give a view of that input's tangent (of the same base, if that tangent is a
    view itself) -- torch's checks in _process_forward_mode_AD."""
    base = forward_view_base(out)
    if base is None:
        return
    for a, given in zip(args, tangents, strict=True):
        if not isinstance(a, Tensor) or given is None:
            continue
        a_base = forward_view_base(a)
        if (a if a_base is None else a_base) is not base:
            continue
        if grad._base is None:
            raise RuntimeError(
                "A custom Function's forward is returning a view (or an input as-is) but the jvp "
                "is not returning a view.")
        if given._base is not None:
            if grad._base is not given._base:
                raise RuntimeError(
                    "A custom Function is returning a view but the jvp is not returning a view "
                    "of the same base as the given grad input.")
        elif grad._base is not given:
            raise RuntimeError(
                "A custom Function is returning a view but the jvp is not returning a view of "
                "the given grad input.")
        return


class CopySlices(Node):
    """The base's history after an in-place op on one of its views.

    ``fn`` is the in-place op's node, recorded as if the op ran out of place on the view's
    values. Backward: the region of the base the view covers gets ``fn``'s gradient for its
    first input (none at all if ``fn`` gives none), the rest of the base passes the incoming
    gradient through; ``fn``'s other inputs get theirs along this node's other edges.
    """

    __slots__ = ("fn", "positions", "replay", "base_shape", "input_meta", "as_real")
    _cpp_name = "torch::autograd::CopySlices"

    def __init__(self, base: Tensor, view: Tensor, fn: Any) -> None:
        super().__init__((edge(base),) + tuple(fn.next_functions[1:]))
        # the view's region: its recorded view ops when kept (as torch's view function, which
        # an in-place view op on the view does not update), else its positions in the base
        self.replay = view._replay
        # a real view (x.real, x.imag) of a complex base: positions among its (real, imag) pairs
        self.as_real = base._data.dtype.kind == "c" and view._data.dtype.kind != "c"
        if self.replay is not None:
            self.positions = None
        elif self.as_real:
            pairs = base._data.view(base._data.real.dtype).reshape(base._data.shape + (2,))
            self.positions = view_positions(pairs, view._data)
        else:
            self.positions = view_positions(base._data, view._data)
        self.fn = fn
        self.base_shape = base._data.shape
        base_meta = (base._data.shape, base._data.dtype.num) if base._requires_grad else None
        self.input_meta = (base_meta,) + tuple(getattr(fn, "input_meta", ())[1:])

    def apply(self, grads: list) -> tuple:
        # torch's steps, as tapegrad ops (so that a create_graph backward records them too):
        # the incoming gradient copied into a fresh tensor shaped as the base, the view's
        # region of it handed to ``fn``, and ``fn``'s result copied back over that region
        fn = self.fn
        if fn is None:
            raise RuntimeError(FREED_MESSAGE)
        grad = grads[0]
        result = Tensor._make(np.zeros(self.base_shape, dtype=grad._data.dtype))
        result.copy_(grad)
        if self.replay is not None:
            grad_slice = replay_view(result, self.replay)
        else:
            region = _OPS["view_as_real"](result) if self.as_real else result
            grad_slice = _OPS["as_strided_positions"](region, cast(np.ndarray, self.positions))
        fn_grads = fn.apply([grad_slice.clone()])
        if not isinstance(fn_grads, tuple):
            fn_grads = tuple(fn_grads) if isinstance(fn_grads, list) else (fn_grads,)
        if fn_grads[0] is None:  # the op gave its input no gradient: neither does the base
            return (None,) + tuple(fn_grads[1:])
        grad_slice.copy_(fn_grads[0])
        return (result,) + tuple(fn_grads[1:])

    def release(self) -> None:
        self.fn = None  # (torch drops its node: a second backward raises)


__all__ = ["DEFAULT", "IN_CUSTOM_FUNCTION", "MULTI_OUTPUT_NODE", "NO_GRAD_MODE",
           "INFERENCE_MODE", "CopySlices", "make_view", "view_grad_fn", "check_inplace",
           "rebase_history", "bump_version", "handle_view_on_rebase", "view_positions"]
