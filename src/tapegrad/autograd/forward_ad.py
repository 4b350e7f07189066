"""Forward-mode automatic differentiation: dual tensors that carry a tangent through every op.

Inside a ``dual_level``, ``make_dual(x, v)`` gives a tensor equal to ``x`` that carries the
tangent ``v``; every op applied to it computes, beside its value, the directional derivative of
its output in that direction (``J v``), and ``unpack_dual`` reads both back::

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, v)
        y = f(x)                                  # each op: out and out's tangent
        value, jvp = forward_ad.unpack_dual(y)    # f(primal), J_f(primal) @ v

Data flow of one op under a dual level (``ops/_registry.apply`` checks one flag and comes here)::

    apply(op, a, b) ──► special_apply ──► plain apply (value, node as usual)
                                     └─► any input with a tangent?
                                           op.tangent_rule(tangents, inputs, out)   written out
                                           or derived from the backward rule (below)
                                           ──► out._fw_grad

The tangent rule of an entry is written beside its backward rule (``@entry.jvp``) for the common
ops. Every other op gets its tangent from its backward rule by the double-vjp trick: the backward
rule computes ``u -> J^T u``, which is linear in ``u``, so differentiating ``<J^T u, v>`` with
respect to ``u`` gives ``J v``. Backward rules are written with tapegrad ops, so both steps are
ordinary reverse-mode passes, and a tangent computed either way has a graph of its own when
grad mode records (reverse-over-forward and forward-over-reverse compose).

Tangents live on the tensors (``_fw_grad``, in the instance dict: no slot, no cost to tensors
that never carry one); leaving the level drops them all. As in torch, only one level can be
open at a time. The flag that sends ``apply`` here (``_registry._SPECIAL``) is shared with the
saved-tensor hooks of ``autograd.graph``; both are process-wide rather than per thread.
"""

from __future__ import annotations

import re
import weakref
from typing import Any, NamedTuple

import numpy as np

from .._tensor import Tensor
from ..ops import _registry, indexing
from ..ops._tangents import zero_tangent as _zeros_like
from ..ops.shape import stack
from . import grad, graph, listeners
from .grad_mode import _state, enable_grad

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]


class _Levels:
    """The open dual level (None or 0) and the tensors given a tangent at it."""

    level: int | None = None
    tensors: list = []  # weak references
    compact_at = 1024


def _update_flag() -> None:
    """Switch ``apply``'s detour on when a dual level or a saved-tensor hook is active."""
    _registry.detour("forward_ad", _Levels.level is not None or graph._hooks_active())


graph.register_detour_update(_update_flag)  # (saved-tensor hooks switch the detour too)


def enter_dual_level() -> int:
    """Open a new dual level and return its index (``0``: one level at a time)."""
    if _Levels.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _Levels.level = 0
    _Levels.tensors = []
    _update_flag()
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the dual level: every tangent made at it is dropped."""
    if level is None:
        level = _Levels.level
    if level is None or level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if _Levels.level is None or level != _Levels.level:
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    for ref in _Levels.tensors:
        t = ref()
        if t is not None:
            t.__dict__.pop("_fw_grad", None)
    _Levels.tensors = []
    _Levels.level = None
    _update_flag()


class dual_level:
    """Context manager: forward-mode AD inside the block; tangents are dropped on exit.

    Example:
        >>> import tapegrad as torch
        >>> import tapegrad.autograd.forward_ad as fwAD
        >>> with fwAD.dual_level():
        ...     x = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 0.0]))
        ...     fwAD.unpack_dual(x * x).tangent
        tensor([2., 0.])
    """

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc: object) -> None:
        exit_dual_level()


class UnpackedDualTensor(NamedTuple):
    """What ``unpack_dual`` returns: the primal value and its tangent (None if it has none)."""

    primal: Tensor
    tangent: Tensor | None


def _set_tangent(t: Tensor, tangent: Tensor) -> None:
    if "_fw_grad" not in t.__dict__:
        refs = _Levels.tensors
        if len(refs) >= _Levels.compact_at:  # a long loop inside one level: drop dead refs
            refs[:] = [r for r in refs if r() is not None]
            _Levels.compact_at = max(1024, 2 * len(refs))
        refs.append(weakref.ref(t))
    t._fw_grad = tangent


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of ``tensor`` that carries ``tangent`` as its forward gradient."""
    if level is None:
        level = _Levels.level
    if level is None or _Levels.level is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    if level != _Levels.level:
        raise RuntimeError("Invalid level given to make_dual")
    if tensor._data.dtype.kind not in "fc":
        raise ValueError(
            f"Expected primal to be floating point or complex, but got: {tensor.dtype}"
        )
    if tangent._data.dtype.kind not in "fc":
        raise ValueError(
            f"Expected tangent to be floating point or complex, but got: {tangent.dtype}"
        )
    if tensor._fw_grad is not None:
        raise RuntimeError(
            "Making a dual Tensor based on a Tensor that already has a forward gradient at the "
            f"same level {level} is not supported."
        )
    if tangent._fw_grad is not None:
        raise RuntimeError(
            "Setting a forward grad that itself has a forward gradient at the same level"
            f"{level} is not supported."
        )
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    with _detour_off():
        dual = tensor.view_as(tensor)  # a view: the same values, the same history
        if tangent._data.dtype != tensor._data.dtype:
            tangent = tangent.to(tensor.dtype)
    dual._fw_root = True  # (no view for tangents: in-place on it leaves ``tensor``'s alone)
    _set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``(primal, tangent)``: a view of the value without tangent, and the tangent (or None)."""
    if _Levels.level is None or (level is not None and level != _Levels.level):
        return UnpackedDualTensor(tensor, None)
    tangent = tensor._fw_grad
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with _detour_off():
        primal = tensor.view_as(tensor)
    primal._fw_root = True  # (a view of the values only: its in-place ops keep the tangent)
    return UnpackedDualTensor(primal, tangent)


# Run ops plainly (no tangents, no saved-tensor hooks, no announcement) inside the block: the
# registry's own switch, off for the block (the name autograd code and the capture use).
_detour_off = _registry.detour_off


# ---------------------------------------------------------------------------------------------
# The detour of apply / apply_
# ---------------------------------------------------------------------------------------------


def _tangents(inputs: tuple) -> list | None:
    """One tangent per input (None where there is none), or None when no input has one."""
    if _Levels.level is None:
        return None
    found = False
    out = []
    for x in inputs:
        t = x._fw_grad if isinstance(x, Tensor) else None
        if t is not None:
            found = True
        out.append(t)
    return out if found else None


def special_apply(op: Any, inputs: tuple, params: dict) -> Any:
    """``apply`` while a dual level, a saved-tensor hook, the profiler or a capture is active:
    announced to the listeners (the profiler times it there, a compiled function's capture
    records it)."""
    listen = listeners.active
    if listen is not None:
        return listen.run_op(op, inputs, params, _special_apply)
    return _special_apply(op, inputs, params)


def _special_apply(op: Any, inputs: tuple, params: dict) -> Any:
    if not op.differentiable:  # indices, masks: no tangent, no node to pack
        with _detour_off():
            return op(*inputs, **params)
    with _detour_off():
        result = _registry.apply(op, *inputs, **params)
        outs = result if op.outputs != 1 else (result,)
        node = outs[0].grad_fn if outs else None
        tangents = _tangents(inputs)
        if tangents is not None:
            _propagate(op, inputs, tangents, params, result, outs)
        if graph._hooks_active() and isinstance(node, _registry.OpNode):
            graph._pack_node(node, outs[0] if op.save_output else None)
    return result


def special_apply_(op: Any, target: Tensor, others: tuple, params: dict) -> Tensor:
    """``apply_`` (in-place ops) while a dual level, a saved-tensor hook, a mutation hook, the
    profiler or a capture is active: announced to the listeners first."""
    listen = listeners.active
    if listen is not None:
        return listen.run_op_(op, target, others, params, _special_apply_)
    return _special_apply_(op, target, others, params)


_registry.register_detour(special_apply, special_apply_)  # the ops' detour (ops/_registry.py)


def _special_apply_(op: Any, target: Tensor, others: tuple, params: dict) -> Tensor:
    for hook in graph._mutation_hooks:  # allow_mutation_on_saved_tensors: copy what a graph
        hook(target)  # saved before this write changes it
    with _detour_off():
        before_fn = target.grad_fn
        inputs = (target,) + tuple(others)
        tangents = _tangents(inputs)
        new_tangent = None
        if tangents is not None:  # the tangent from the values before they are overwritten
            copy = _registry._snapshot(target)  # (keeps its place in the graph)
            value = _registry.apply(op, copy, *others, **params)
            new_tangent = _tangent_of(op, (copy,) + tuple(others), tangents, params, value,
                                      (value,))[0]
        base = target._fw_base if target._fw_base is not None else target._base
        if target._fw_root:  # (the base for tangents: none for a dual tensor itself)
            base = None
        positions = None
        if new_tangent is not None and base is not None:  # before the write moves the view
            positions = _registry.view_positions(base._data, target._data)
        _registry.apply_(op, target, *others, **params)
        if new_tangent is not None:
            old_tangent = target._fw_grad
            if (old_tangent is not None and old_tangent._data.flags.writeable
                    and old_tangent._data.dtype == new_tangent._data.dtype
                    and not old_tangent.requires_grad and not new_tangent.requires_grad
                    and not np.may_share_memory(old_tangent._data, new_tangent._data)):
                # an in-place op updates the tangent in place, as torch's (the tensor given to
                # make_dual sees it); a tangent with a graph (reverse over forward) is replaced
                np.copyto(old_tangent._data, np.broadcast_to(new_tangent._data,
                                                              old_tangent._data.shape))
                old_tangent._version_counter.value += 1
                new_tangent = old_tangent
            else:
                _set_tangent(target, new_tangent)
            node = target.grad_fn
            if isinstance(node, _registry.OpNode) and node._out is not None:
                node._out = node._out[:3] + (new_tangent,)  # the saved result's tangent
            if base is not None and positions is not None:
                # the base's tangent changes where the view covers it
                old = base._fw_grad if base._fw_grad is not None else _zeros_like(base)
                index = Tensor._make(positions)
                flat = indexing.put_flat(old.reshape(-1), index,
                                         new_tangent.expand(target.shape))
                _set_tangent(base, flat.reshape(base.shape))
        if graph._hooks_active():
            node = target.grad_fn
            if isinstance(node, _registry.CopySlices):
                node = node.fn
            if isinstance(node, _registry.OpNode) and node is not before_fn:
                graph._pack_node(node, target if op.save_output else None)
    return target


def _propagate(op: Any, inputs: tuple, tangents: list, params: dict, result: Any,
               outs: tuple) -> None:
    out_tangents = _tangent_of(op, inputs, tangents, params, result, outs)
    for o, t in zip(outs, out_tangents, strict=True):
        if t is None or not isinstance(o, Tensor) or o._data.dtype.kind not in "fc":
            continue
        if t._data.shape != o._data.shape:
            t = t.expand(o.shape)
        if t._data.dtype != o._data.dtype:
            t = t.to(o.dtype)
        _set_tangent(o, t)
    node = outs[0].grad_fn if outs else None
    if isinstance(node, _registry.OpNode) and node._out is not None:
        # the backward rule reads the saved output: rebuild it with its tangent
        node._out = node._out[:3] + (outs[0]._fw_grad,)


def _tangent_of(op: Any, inputs: tuple, tangents: list, params: dict, result: Any,
                outs: tuple) -> tuple:
    """The tangent of each output, by the op's tangent rule or from its backward rule."""
    for i, (x, t) in enumerate(zip(inputs, tangents, strict=True)):  # integer inputs: none
        if t is not None and x._data.dtype.kind not in "fc":
            tangents[i] = None
    if all(t is None for t in tangents):
        return (None,) * len(outs)
    if op.node_cls._cpp_name == "torch::autograd::NotImplemented":  # no derivative (torch's)
        name = {"ctc_loss_backward": "_ctc_loss_backward",
                "remainder_scalar_tensor": "remainder"}.get(op.name, op.name)
        raise NotImplementedError(
            f"Trying to use forward AD with aten::{name} that does not support it.")
    if op.tangent_rule is not None:
        tan = op.tangent_rule(tangents, inputs, result, **params)
        return tuple(tan) if op.outputs != 1 else (tan,)
    try:
        return _tangent_from_backward(op, inputs, tangents, params, outs)
    except NotImplementedError as e:  # a backward rule torch lacks: so does its forward mode
        if not str(e).startswith("the derivative for"):
            raise
        name = re.sub(r"Backward\d*$", "", op.node)  # torch names the aten op: IgammaBackward0
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()  # -> igamma
        raise NotImplementedError(
            f"Trying to use forward AD with {name} that does not support it because it has "
            "not been implemented yet.\nPlease file an issue to PyTorch at "
            "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so that "
            "we can prioritize its implementation or submit a PR adding the implementation to "
            "derivatives.yaml") from None


def _tangent_from_backward(op: Any, inputs: tuple, tangents: list, params: dict,
                           outs: tuple) -> tuple:
    """``J v`` from the backward rule: differentiate ``<J^T u, v>`` with respect to ``u``."""
    keep_graph = _state.enabled and any(
        isinstance(x, Tensor) and x._requires_grad for x in list(inputs) + list(tangents))
    # an input without a tangent takes no part (but one that requires grad stays as it is)
    with enable_grad():
        unique: dict[int, tuple[Tensor, Tensor]] = {}  # an input passed twice counts once
        xs = list(inputs)
        for i, (x, t) in enumerate(zip(inputs, tangents, strict=True)):
            if t is None:
                continue
            if id(x) not in unique:
                # a view of an input with history: the gradient is captured at the view, so it
                # holds this op's partial derivative only (not paths through other inputs), and
                # the tangent keeps its graph back to the input
                xs_i = x.view_as(x) if x._requires_grad else Tensor._make(x._data,
                                                                           requires_grad=True)
                unique[id(x)] = (xs_i, t)
            xs[i] = unique[id(x)][0]
        again = _registry.apply(op, *xs, **params)
        again_outs = again if op.outputs != 1 else (again,)
        diff = [k for k, o in enumerate(again_outs)
                if isinstance(o, Tensor) and o._requires_grad]
        if not diff:
            return tuple(_zeros_like(o) if isinstance(o, Tensor) and o._data.dtype.kind in "fc"
                         else None for o in outs)
        us = [Tensor._make(np.zeros(again_outs[k]._data.shape, again_outs[k]._data.dtype),
                           requires_grad=True) for k in diff]
        primals = [p for p, _ in unique.values()]
        vs = [v for _, v in unique.values()]
        gs = grad([again_outs[k] for k in diff], primals, us, create_graph=True,
                  allow_unused=True)
        pairs = [(g, v) for g, v in zip(gs, vs, strict=True) if g is not None]
        jv: Any
        if any(not g._requires_grad for g, _ in pairs):  # a rule not linear in tapegrad ops
            jv = _tangent_by_columns(again_outs, diff, primals, vs, keep_graph)
        elif pairs:
            jv = grad([g for g, _ in pairs], us, [v for _, v in pairs], create_graph=keep_graph,
                      allow_unused=True)
        else:
            jv = (None,) * len(us)
    result: list = [None] * len(outs)
    for k, j in zip(diff, jv, strict=True):
        j = _zeros_like(outs[k]) if j is None else j
        result[k] = j if keep_graph else j.detach()
    for k, o in enumerate(outs):
        if result[k] is None and isinstance(o, Tensor) and o._data.dtype.kind in "fc":
            result[k] = _zeros_like(o)
    return tuple(result)


def _tangent_by_columns(outs: tuple, diff: list, primals: list, vs: list,
                        keep_graph: bool) -> list:
    """``J v`` one output element at a time (for a backward rule that is not differentiable
    in its incoming gradient): ``(J v)_k = <J^T e_k, v>``."""
    result = []
    for k in diff:
        flat = outs[k].reshape(-1)
        values = []
        for m in range(flat.numel()):
            gs = grad(flat[m], primals, retain_graph=True, create_graph=keep_graph,
                      allow_unused=True)
            total = None
            for g, v in zip(gs, vs, strict=True):
                if g is not None:
                    term = (g * v).sum()
                    total = term if total is None else total + term
            values.append(total if total is not None else flat[m].detach() * 0)
        result.append(stack(values).reshape(outs[k].shape) if values else _zeros_like(outs[k]))
    return result
