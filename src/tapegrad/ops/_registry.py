"""The op registry: every differentiable primitive is declared once, and ``apply`` is the one
place where a graph node is recorded.

An entry (``defop``) names the public op, the node torch prints for it, a NumPy forward and a
backward rule, side by side::

    @defop("exp", node="ExpBackward0", save_output=True)
    def exp(x):                      # forward: ndarrays (and Python values) in, ndarray out
        return np.exp(x)

    @exp.backward
    def exp_backward(ctx, grad):                # d/dx e^x = e^x
        (y,) = ctx.saved             # saved values come back as Tensors
        return (grad * y,)

Schema of an entry:

* ``forward(*inputs, **params)``: inputs are ndarrays where the caller passed Tensors, and
  Python numbers where it passed numbers; params are keyword-only, non-differentiable
  (``dim``, ``keepdim``, ...). It returns an ndarray, or a tuple of them for ``outputs > 1``.
* ``backward(ctx, grad)``: ``grad`` is the gradient of the output (a Tensor), or a list with one
  entry per output (``None`` for an output that got no gradient) when the op has several outputs.
  It returns one gradient per input, ``None`` where there is none. Rules are written with
  tapegrad's own ops, so when the engine runs them with grad mode on (``create_graph=True``) they
  record a graph of their own: higher derivatives come for free.
* ``ctx`` is the node: ``ctx.saved`` (the saved inputs listed in ``save``, then the output if
  ``save_output``), ``ctx.params``, ``ctx.needs_input_grad``, ``ctx.input_shapes``.
* Rules never reduce a broadcast gradient: the engine sums every gradient to its input's shape
  (``sum_to``) and casts it to its input's dtype.
* ``view=True``: the output shares memory (and the version counter) with input 0.
* A rule is written once, in Tensor terms, and named after its op (``mul_backward``). Where a
  first-order backward on the arrays themselves is worth it (the hot rules of a training step),
  it lives apart in ``ops/fast_paths.py`` (mul's and sum's beside their rules), registered by
  op name (``@fast_backward("mul")``):
  ``fast(ctx, saved, g)`` gets the saved values as arrays (a saved Python number, or None where
  a value was not saved, as it is) and the output's gradient as an array (a list, one array or
  None per output, for several outputs); it returns one array (or None) per input and reads
  only ``params``, ``needs_input_grad``, ``input_shapes`` and ``input_meta`` from ``ctx``.
  ``OpNode.apply`` runs it instead of the rule when grad mode is off (``create_graph=False``),
  and a compiled program (``tapegrad/compiler``) calls it directly, with no Tensor made around
  the arrays.
  It gives the rule's values (tests/ops/test_fast_paths.py).
* Complex gradients follow torch's convention: a tensor's gradient is the conjugate Wirtinger
  derivative, so a holomorphic op passes ``grad * conj(f'(z))`` back (``a * b`` gives ``a``
  ``grad * conj(b)``). A rule written for real numbers, ``grad * f'(x)``, extends to complex
  inputs as ``conj(rule(conj(grad)))``: ``OpNode.apply`` does that when the gradient is complex,
  so real rules need no change. The ops that are not holomorphic (abs, angle, real, imag,
  complex, polar, view_as_complex, sgn...) set ``entry.holomorphic = False`` and handle complex
  gradients in their own rule (ops/complex.py).

Ops without a gradient (argmax, sort's indices, comparisons, nonzero) are entries too,
declared with ``nondiff``: a forward only, whose outputs never get a node. They go through
the registry so that everything that listens to ``apply`` (a compiled function's capture)
hears them as well.

Data flow of ``apply(MUL, a, b)``::

    a.data, b.data ──forward──► out array ──► Tensor
                    │ grad mode on and a or b requires grad?
                    └─► MulBackward0(next_functions=(edge(a), edge(b)), saved a, b)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .. import (
    _announce,
    _numpy_warnings,  # noqa: F401  (NumPy's overflow warnings: silent, as in torch)
)
from .._alloc_errors import out_of_memory
from .._dtype import (  # noqa: F401  (cpp_type_name, scalar_type_name: re-exported)
    cpp_type_name,
    from_numpy_dtype,
    on_low_precision,
    scalar_type_name,
)
from .._tensor import Tensor, install_above
from ..autograd.grad_mode import _state
from ..autograd.graph import (
    FREED_MESSAGE,
    NO_EDGE,
    AccumulateGrad,
    Node,
    _anomaly,
    _sequence,
    grad_accumulator,
    remember_forward,
    version_error,
)
from ._views import CopySlices as CopySlices  # (here for forward_ad and older callers)
from ._views import bump_version, check_inplace, make_view, rebase_history, view_grad_fn
from ._views import provide as provide_view_ops
from ._views import view_positions as view_positions
from .low_precision import WIDENED, widened_forward, widened_rule

REGISTRY: dict[str, OpDef] = {}


class OpNode(Node):
    """The grad_fn of a registered op; one subclass per op, named as torch names it."""

    __slots__ = ("_saved", "_versions", "_out", "params", "input_meta")
    op: OpDef
    if TYPE_CHECKING:  # the slots' types, for type checkers
        _saved: tuple | None
        _versions: tuple
        _out: tuple | None
        params: dict
        input_meta: tuple

    @property
    def needs_input_grad(self) -> tuple:
        """One bool per input: does it want a gradient?"""
        return _needs_input_grad(self.input_meta)

    @property
    def saved(self) -> tuple:
        """The saved values as Tensors, after checking that none was changed in place."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        out = []
        for t, check in zip(saved, self._versions, strict=True):
            if check is not None:
                if t._version_counter.value != check:
                    # torch names the tensor's history as it is now (after the in-place op)
                    raise version_error(t, t.grad_fn, t._output_nr, check)
                if t._detached > self._seq and t._grad_fn is None:  # saved, then detach_()
                    raise RuntimeError(DETACHED_MESSAGE)
            out.append(t)
        if self._out is not None:
            data, counter, version = self._out[:3]
            if counter.value != version:
                dt = Tensor._make(data)
                dt._version_counter = counter
                raise version_error(dt, self, 0, version)
            t = Tensor._make(data, requires_grad=True)
            t._grad_fn = self
            t._version_counter = counter
            if len(self._out) > 3:  # the output's tangent, kept under forward-mode AD
                t._fw_grad = self._out[3]
            out.append(t)
        return tuple(out)

    def _num_outputs(self) -> int:
        return self.op.outputs

    @property
    def input_shapes(self) -> tuple:
        return _input_shapes(self.input_meta)

    def apply(self, grads: list) -> tuple:
        op = self.op
        if _LOW and op.widen and not _state.enabled:  # a low-precision backward kernel
            return widened_rule(self, grads)
        if op.outputs == 1:  # the common case, a real gradient, without a further call
            g = grads[0]
            if g._data.dtype.kind != "c":
                return op.node_rule(self, g)  # the rule, or its fast path (OpDef.node_rule)
        return self._apply(grads)

    def _apply(self, grads: list) -> tuple:
        op = self.op
        if op.outputs == 1:
            g = grads[0]
            if g._data.dtype.kind == "c" and op.holomorphic:
                return _conj_rule(self, g)
            return self._rule(g)
        if op.holomorphic and any(g is not None and g._data.dtype.kind == "c" for g in grads):
            return _conj_rule(self, grads)
        return self._rule(grads)

    def _rule(self, grad: Any) -> tuple:
        """The op's fast first-order path when grad mode is off and it has one, else its rule."""
        op = self.op
        if op.outputs == 1:
            return op.node_rule(self, grad)
        if op.fast_rule is None or _state.enabled:
            return op.rule(self, grad)
        return run_fast(op, self, self._saved_arrays(), grad)

    def _saved_arrays(self) -> list:
        """The saved values as a fast path takes them: arrays (a Python number or None as it
        is), with ``saved``'s checks; a value changed in place, or detached, goes through
        ``saved`` for its error. (No Tensor is made around the saved output.)"""
        saved = self._saved
        if not saved:
            if saved is None:
                raise RuntimeError(FREED_MESSAGE)
            if self._out is None:  # nothing saved (a view)
                return []
        arrays = []
        for t, check in zip(saved, self._versions, strict=True):
            if check is None:  # (not a Tensor)
                arrays.append(t)
            elif t._version_counter.value != check or t._detached > self._seq:
                return [x._data if isinstance(x, Tensor) else x for x in self.saved]
            else:
                arrays.append(t._data)
        out = self._out
        if out is not None:
            if out[1].value != out[2]:
                return [x._data if isinstance(x, Tensor) else x for x in self.saved]
            arrays.append(out[0])
        return arrays

    def _fast(self, grad: Any) -> tuple:
        """The op's fast path (ops/fast_paths.py) on this node's arrays, for one output's
        gradient; its arrays made Tensors (the commonest rules of a training step run here:
        the common cases are written out). With grad mode on, the rule: its ops record."""
        if _state.enabled:
            return self.op.rule(self, grad)
        out = self.op.fast_rule(self, self._saved_arrays(), grad._data)  # type: ignore[misc]
        n = len(out)
        if n == 1:
            (a,) = out
            return (None if a is None else Tensor._make(a),)
        if n == 2:
            a, b = out
            return (None if a is None else Tensor._make(a)), (
                None if b is None else Tensor._make(b))
        if n == 3:  # (addmm: a linear layer)
            a, b, c = out
            return (None if a is None else Tensor._make(a)), (
                None if b is None else Tensor._make(b)), (None if c is None else Tensor._make(c))
        return tuple([None if a is None else Tensor._make(a) for a in out])

    def release(self) -> None:
        if self._saved is not None and (self._saved or self._out is not None):
            self._saved = None
            self._out = None

    def __getattr__(self, name: str) -> Any:
        # torch exposes saved values as grad_fn._saved_self etc.; give the common ones.
        if name.startswith("_saved_"):
            saved = self.saved
            if name in ("_saved_self", "_saved_input") and saved:
                return saved[0]
            if name == "_saved_other" and len(saved) > 1:
                return saved[1]
            if name == "_saved_result" and self._out is not None:
                return saved[-1]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def run_fast(op: OpDef, ctx: Any, saved: Sequence, grad: Any) -> tuple:
    """``op``'s fast first-order path on the arrays: the saved values (Tensors, Python numbers
    or None) and ``grad`` (a Tensor, or a list of them for several outputs) in, Tensors out."""
    arrays = [t._data if isinstance(t, Tensor) else t for t in saved]
    g = grad._data if op.outputs == 1 else [None if x is None else x._data for x in grad]
    out = op.fast_rule(ctx, arrays, g)  # type: ignore[misc]  # (the callers checked it is set)
    return tuple([None if a is None else Tensor._make(a) for a in out])


def first_order(op: OpDef, ctx: Any, grad: Any) -> tuple:
    """``op``'s backward as ``OpNode.apply`` runs it on a real gradient, for a caller that holds
    a context rather than a node (a compiled program's replay): its fast path when grad mode is
    off and it has one, else its rule."""
    if op.fast_rule is None or _state.enabled:
        return op.rule(ctx, grad)
    return run_fast(op, ctx, ctx.saved, grad)


def _conj_grad(g: Tensor) -> Tensor:
    """ops/complex.py's ``conj_physical``, through its registry entry (that module imports this
    one): the conjugate of a complex tensor, a real one as it is."""
    return apply(REGISTRY["conj_physical"], g) if g._data.dtype.kind == "c" else g


def _conj_rule(node: OpNode, grad: Any) -> tuple:
    """A real rule applied to a complex gradient: ``conj(rule(conj(grad)))`` (module docstring)."""
    if isinstance(grad, list):
        grad = [None if g is None else _conj_grad(g) for g in grad]
    else:
        grad = _conj_grad(grad)
    out = node._rule(grad)
    return tuple(_conj_grad(g) if isinstance(g, Tensor) else g for g in out)


class OpDef:
    """One registry entry (see the module docstring)."""

    __slots__ = ("name", "node", "forward", "rule", "fast_rule", "node_rule", "save", "save_if",
                 "save_output", "view", "outputs", "node_cls", "tangent_rule", "holomorphic",
                 "widen", "differentiable", "dynamic_shape")
    if TYPE_CHECKING:
        # What OpNode.apply calls on a one-output node's real gradient: ``rule`` itself, or,
        # for an entry with a fast path, ``OpNode._fast`` (which runs ``rule`` while grad mode
        # is on). Kept up to date by __setattr__ whenever ``rule`` or ``fast_rule`` is set, so
        # that apply pays no test for the entries without a fast path (measured: 3 opcodes per
        # node, 2,500 of a 1,000-op deep-chain step).
        node_rule: Callable

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name == "rule" or name == "fast_rule":  # (see node_rule)
            fast = getattr(self, "fast_rule", None)  # (unset while __init__ sets ``rule``)
            object.__setattr__(self, "node_rule", self.rule if fast is None else OpNode._fast)

    def __init__(self, name: str, node: str, forward: Callable, save: Sequence[int],
                 save_output: bool, view: bool, outputs: int,
                 save_if: dict[int, int] | None = None) -> None:
        self.name = name
        self.node = node
        self.forward = forward
        self.rule: Callable = _missing_rule(node)
        self.fast_rule: Callable | None = None  # a first-order path on arrays (fast_backward)
        self.tangent_rule: Callable | None = None  # forward mode; None: derived from ``rule``
        self.save = tuple(save)
        self.save_if = save_if or {}
        self.save_output = save_output
        self.view = view
        self.outputs = outputs
        self.holomorphic = True  # complex gradients through conj(rule(conj(grad)))
        self.widen = name in WIDENED  # float16/bfloat16 inputs computed in float32
        self.differentiable = True  # False: a ``nondiff`` entry (no node, no gradient)
        self.dynamic_shape = False  # True: the output's shape depends on the input's values
        cpp = {"CopyBackwards": "torch::autograd::CopyBackwards"}.get(node)
        self.node_cls = cast("type[OpNode]",
                             type(node, (OpNode,), {"__slots__": (), "op": self, "_cpp_name": cpp}))

    def backward(self, rule: Callable) -> Callable:
        """Decorator: attach the backward rule to this entry."""
        self.rule = rule
        return rule

    def jvp(self, rule: Callable) -> Callable:
        """Decorator: attach a forward-mode (tangent) rule to this entry.

        ``rule(tangents, inputs, out, **params)`` gets one tangent per input (None where the
        input has none), the inputs and the output, and returns the output's tangent (a tuple
        for several outputs). Without one, ``autograd.forward_ad`` derives the tangent from
        the backward rule (see there).
        """
        self.tangent_rule = rule
        return rule

    if TYPE_CHECKING:  # calling an entry is apply(entry, ...), attached below

        def __call__(self, *inputs: Any, **params: Any) -> Any: ...

    def __repr__(self) -> str:
        return f"<op {self.name} -> {self.node}>"


def _missing_rule(node: str) -> Callable:
    def missing_backward(ctx: OpNode, grad: Any) -> tuple:
        raise RuntimeError(f"the derivative for '{node}' is not implemented.")

    return missing_backward


def fast_backward(*names: str) -> Callable[[Callable], Callable]:
    """Decorator: register a fast first-order path for the entries ``names`` (the module
    docstring; the paths themselves are in ops/fast_paths.py, mul's and sum's beside their
    rules)."""

    def register(fast: Callable) -> Callable:
        for name in names:
            REGISTRY[name].fast_rule = fast
        return fast

    return register


def defop(name: str, node: str, *, save: Sequence[int] | str = (), save_output: bool = False,
          view: bool = False, outputs: int = 1,
          save_if: dict[int, int] | None = None) -> Callable[[Callable], OpDef]:
    """Register ``forward`` under ``name``; attach the rule with ``@entry.backward``.

    ``save`` lists the input positions the rule needs ("all" for every input). ``save_if``
    ``{i: j}`` keeps input ``i`` only when input ``j`` needs a gradient (``a * b`` needs ``a``
    only for ``b``'s gradient); an input not kept is saved as None.
    """

    def register(forward: Callable) -> OpDef:
        if name in REGISTRY:
            raise ValueError(f"op {name!r} is registered twice")
        idx: Sequence[int] = range(8) if save == "all" else save  # type: ignore[assignment]
        op = OpDef(name, node, forward, idx, save_output, view, outputs, save_if)
        REGISTRY[name] = op
        return op

    return register


def _wrap(out: np.ndarray, inputs: tuple, op: OpDef, params: dict, index: int = 0) -> Tensor:
    """The Tensor around a view op's output: a view of its input (``_views.make_view``)."""
    return make_view(Tensor._make(out), inputs[0], op, params, index)


# Value checks: library functions that read arrays' values in Python outside any kernel (a
# target in range, which of two paths the values allow, an index array derived from a target).
# Each call is announced to the listener stack (``value_checked``): tapegrad.compile records it
# as a step of its program, so a replay repeats the check on the new values
# (compiler/capture.py). Listed here by module and name.
VALUE_CHECKS: list[tuple[str, str]] = []


def value_check(fn: Callable) -> Callable:
    """Mark a module-level function as a value check (see ``VALUE_CHECKS``): the function
    returned runs ``fn`` and, while something listens, announces the call and its result."""

    @functools.wraps(fn)
    def check(*args: Any) -> Any:
        out = fn(*args)
        if _announce.listener is not None:
            _announce.listener.value_checked(fn, args, out)
        return out

    VALUE_CHECKS.append((fn.__module__, fn.__name__))
    return check


# The listener stack's switch for ops (autograd/listeners.py: ``run_op``, ``run_op_``): True
# while something listens to every op; apply and apply_ then take the detour through
# autograd/forward_ad.py, which announces the op (their one check when it is off). It lives
# here, a global of the module whose hot path reads it. The listeners switch themselves on
# and off with ``detour``: forward-mode AD's dual level and the saved-tensor hooks
# (autograd/forward_ad.py), a compiled function's capture (compiler/capture.py) and the
# profiler (autograd/profiler.py). Code that must run ops plainly for a moment (the detour
# itself) does so inside ``detour_off()``.
_SPECIAL = False
_DETOURS: set[str] = set()


class _Detour:
    """Where ``apply``, ``apply_nondiff`` and ``apply_`` go while ``_SPECIAL`` is on: forward-mode
    AD's entry points (autograd/forward_ad.py, above the ops), which that module hands over with
    ``register_detour`` when it loads -- with ``import tapegrad``, before anything can switch
    the detour on."""

    apply: Callable[[Any, tuple, dict], Any]
    apply_: Callable[[Any, Tensor, tuple, dict], Tensor]


_detour = _Detour()


def register_detour(apply: Callable[[Any, tuple, dict], Any],
                    apply_: Callable[[Any, Tensor, tuple, dict], Tensor]) -> None:
    """Install the detour's entry points (autograd/forward_ad.py's ``special_apply``/``_``)."""
    _detour.apply = apply
    _detour.apply_ = apply_


def detour(listener: str, on: bool) -> None:
    """Switch ``listener``'s need of the detour on or off (see ``_SPECIAL``)."""
    global _SPECIAL
    if on:
        _DETOURS.add(listener)
    else:
        _DETOURS.discard(listener)
    _SPECIAL = bool(_DETOURS)


class detour_off:
    """Run ops plainly inside the block (no tangents, no saved-tensor hooks, no announcement):
    the detour's own work, which would otherwise come back to it."""

    def __enter__(self) -> None:
        global _SPECIAL
        self.prev = _SPECIAL
        _SPECIAL = False

    def __exit__(self, *exc: object) -> None:
        global _SPECIAL
        _SPECIAL = self.prev

# True once a float16 or bfloat16 tensor may exist (_dtype tells its listeners): widened ops
# then look at their inputs' dtypes (ops/low_precision.py).
_LOW = False


def _low_precision_seen() -> None:
    global _LOW
    _LOW = True


on_low_precision(_low_precision_seen)
# True once an inference tensor may require grad: apply then checks that a recorded op has a
# normal tensor among its inputs (an op on inference tensors alone records nothing, as in torch).
_INFERENCE_GRAD = False


def inference_requires_grad() -> None:
    """An inference tensor is being made to require grad (see ``_INFERENCE_GRAD``)."""
    global _INFERENCE_GRAD
    _INFERENCE_GRAD = True


install_above(inference_requires_grad=inference_requires_grad)  # (Tensor.requires_grad_)


def _all_inference(inputs: tuple) -> bool:
    return all(x._inference for x in inputs if isinstance(x, Tensor))


def apply(op: OpDef, *inputs: Any, **params: Any) -> Any:
    """Run ``op`` forward and, when grad mode needs it, record its node (the only place)."""
    if _SPECIAL:
        return _detour.apply(op, inputs, params)
    record = False
    arrays = []
    for x in inputs:
        if isinstance(x, Tensor):
            arrays.append(x._data)
            if x._requires_grad:
                record = True
            elif x._base is not None and x._base._requires_grad:  # a view of one that does
                record = True
        else:
            arrays.append(x)
    if record and _INFERENCE_GRAD and _all_inference(inputs):
        record = False
    try:  # (free in Python 3.11 when nothing is raised)
        if _LOW and op.widen:
            out = widened_forward(op, arrays, params)
        else:
            out = op.forward(*arrays, **params)
    except MemoryError as e:  # torch's allocator error, a RuntimeError
        raise out_of_memory(e) from None
    if record and not _state.enabled:  # the one grad-mode read of this op
        record = False
        if _state.inference:
            return _mark_inference(out, inputs, op, params)
    elif not record and _state.inference:
        return _mark_inference(out, inputs, op, params)
    if op.outputs == 1:
        result = (make_view(Tensor._make(out), inputs[0], op, params, 0) if op.view
                  else Tensor._make(out))
        if record:
            result._grad_fn = _record(op, inputs, params, result)
            result._requires_grad = True
        return result
    if op.view:
        results = tuple(_wrap(o, inputs, op, params, i) for i, o in enumerate(out))
    else:
        results = tuple(Tensor._make(o) for o in out)
    if record:
        node = _record(op, inputs, params, results[0] if op.save_output else None)
        for i, r in enumerate(results):
            if r._data.dtype.kind in "fcV":  # ("V": bfloat16)
                r._grad_fn = node
                r._output_nr = i
                r._requires_grad = True
    return results


# entry(a, b) is apply(entry, a, b): attached at import time, so mypy sees a method overwritten
OpDef.__call__ = apply  # type: ignore[method-assign,assignment]  # see the line above


# ---------------------------------------------------------------------------------------------
# Non-differentiable entries: argmax, sort's indices, comparisons, nonzero, unique...
#
# Their outputs are indices, masks or counts: no gradient flows through them, so no node is
# ever recorded. They are entries all the same so that the one place that runs kernels also
# runs theirs: a compiled function's capture hears every op through ``apply``'s detour
# (compiler/capture.py), and an index computed beside the registry would be frozen into the
# program as a constant.
# ---------------------------------------------------------------------------------------------

class NondiffDef(OpDef):
    """A registry entry without a backward rule (see ``nondiff``); calling it is
    ``apply_nondiff``."""

    __slots__ = ()

    if TYPE_CHECKING:

        def __call__(self, *inputs: Any, **params: Any) -> Any: ...


def nondiff(name: str, *, outputs: int = 1,
            dynamic_shape: bool = False) -> Callable[[Callable], NondiffDef]:
    """Register a forward that has no gradient (indices, masks, counts)::

        @nondiff("argmax")
        def _argmax(x, *, dim, keepdim):     # ndarrays in, ndarray(s) out
            return np.argmax(x, axis=dim, keepdims=keepdim)

    ``dynamic_shape``: the output's shape depends on the input's values (``nonzero``,
    ``unique``); a compiled program checks it at each replay (compiler/capture.py).
    """

    def register(forward: Callable) -> NondiffDef:
        if name in REGISTRY:
            raise ValueError(f"op {name!r} is registered twice")
        op = NondiffDef(name, "NotDifferentiable", forward, (), False, False, outputs)
        op.differentiable = False
        op.dynamic_shape = dynamic_shape
        op.widen = False
        REGISTRY[name] = op
        return op

    return register


def apply_nondiff(op: NondiffDef, *inputs: Any, **params: Any) -> Any:
    """Run a non-differentiable entry: its forward on the arrays, the outputs plain tensors
    (no node, no ``requires_grad``, whatever the inputs need). As lean as calling the forward
    directly: one flag read more."""
    if _SPECIAL:  # a capture or forward-mode AD is listening
        return _detour.apply(op, inputs, params)
    n = len(inputs)
    try:
        if n == 1:  # (one or two inputs without building a list: a third of the call's cost)
            a = inputs[0]
            out = op.forward(a._data if isinstance(a, Tensor) else a, **params)
        elif n == 2:
            a, b = inputs
            out = op.forward(a._data if isinstance(a, Tensor) else a,
                             b._data if isinstance(b, Tensor) else b, **params)
        else:
            out = op.forward(*[x._data if isinstance(x, Tensor) else x for x in inputs],
                             **params)
    except MemoryError as e:
        raise out_of_memory(e) from None
    if op.outputs == 1:
        return Tensor._make(out)
    return tuple([Tensor._make(o) for o in out])


NondiffDef.__call__ = apply_nondiff  # type: ignore[method-assign,assignment]


def _mark_inference(out: Any, inputs: tuple, op: OpDef, params: dict) -> Any:
    """An op's outputs inside inference mode: inference tensors, except the views of a normal
    tensor (views, made in inference mode, of a tensor with a version counter)."""
    outs = (out,) if op.outputs == 1 else out
    if op.view and not inputs[0]._inference:
        results = tuple(_wrap(o, inputs, op, params, i) for i, o in enumerate(outs))
    else:
        results = tuple(Tensor._make(o) for o in outs)
        for r in results:
            r._inference = True
    return results[0] if op.outputs == 1 else results


# Nodes share their input_meta tuples: a training step or a long chain records the same few
# (shape, dtype) combinations over and over, and a tuple of tuples per node is a GC container
# that Python's full collections keep walking (a 100,000-op chain spent a third of its forward
# in them). Bounded: cleared when it grows past _META_LIMIT distinct entries.
_META: dict = {}
_META_LIMIT = 4096


def _new_meta(meta: tuple) -> tuple:
    """Remember a metadata tuple not seen before (_record looks it up first)."""
    if len(_META) >= _META_LIMIT:
        _META.clear()
    _META[meta] = meta
    return meta


# What a rule asks about its node's inputs (``ctx.needs_input_grad``, ``ctx.input_shapes``)
# depends on the node's input_meta alone, and nodes share those tuples (above): each answer
# is worked out once per tuple, then looked up. (Measured: a generator per call cost 25
# opcodes a rule; 12,500 of a 1,000-op deep-chain step, 2,000 of a gpt step.)
@functools.lru_cache(maxsize=_META_LIMIT)
def _needs_input_grad(meta: tuple) -> tuple:
    return tuple(m is not None for m in meta)


@functools.lru_cache(maxsize=_META_LIMIT)
def _input_shapes(meta: tuple) -> tuple:
    return tuple(m[0] if m is not None else None for m in meta)


def _record(op: OpDef, inputs: Sequence[Any], params: dict, result: Tensor | None) -> OpNode:
    """Make the node: an edge and (shape, NumPy dtype) per input, and what the rule saves."""
    node = op.node_cls.__new__(op.node_cls)
    meta: list = []
    rest: list | None = None  # the edges after the first, flat
    for x in inputs:
        if isinstance(x, Tensor):
            # a view's grad_fn is made again if its base was changed in place since it was
            # set (_views.py; the version check inlined for speed)
            if x._base is None or x._vv == x._vc.value:  # type: ignore[union-attr]
                fn = x._grad_fn
            else:
                fn = view_grad_fn(x)
            if fn is not None:
                e, nr = fn, x._output_nr
                meta.append((x._data.shape, x._data.dtype.num))  # ints only: not a GC container
            elif x._requires_grad:
                e, nr = grad_accumulator(x), 0
                meta.append((x._data.shape, x._data.dtype.num))
            else:  # no gradient to send back (a view made under no_grad has none either)
                e, nr = None, 0
                meta.append(None)
        else:
            e, nr = None, 0
            meta.append(None)
        if rest is None:  # the first edge lives in the node's own slots (see graph.Node)
            node._e0, node._n0 = e, nr
            rest = []
        else:
            rest += (e, nr)
    if rest is None:
        node._e0, node._n0, node._rest = None, -1, ()
    else:  # the other edges: a shared constant for the common unary and tensor-scalar ops
        n = len(rest)
        node._rest = () if n == 0 else NO_EDGE if n == 2 and rest[0] is None else tuple(rest)
    node._seq = next(_sequence)
    node._hooks = None
    if _anomaly["enabled"]:  # autograd.detect_anomaly: keep the forward stack
        remember_forward(node)
    node.params = params
    key = tuple(meta)
    node.input_meta = _META.get(key) or _new_meta(key)
    if not op.save:
        node._saved = node._versions = ()
    else:
        saved: list[Any] = []
        versions: list[int | None] = []
        save_if = op.save_if
        for i in op.save:
            if i >= len(inputs):
                break
            x = inputs[i]
            j = save_if.get(i)
            if j is not None and meta[j] is None:  # only another input's gradient needs it
                x = None
            if isinstance(x, Tensor):
                if x._inference:
                    raise RuntimeError(INFERENCE_SAVE_MESSAGE)
                vc = x._vc  # a tensor without a counter yet is at version 0 (and needs none)
                versions.append(0 if vc is None else vc.value)
            else:  # a Python number (or None) input: kept as it is
                versions.append(None)
            saved.append(x)
        node._saved = tuple(saved)
        node._versions = tuple(versions)
    if op.save_output and result is not None:
        vc = result._version_counter
        node._out = (result._data, vc, vc.value)
    else:
        node._out = None
    return node


DETACHED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead"
)

INFERENCE_SAVE_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`."
)


# ---------------------------------------------------------------------------------------------
# In-place ops: the same forward, then the result is written into the target's memory.
#
#   target not a view:  target's history becomes the op's node (edge 0 = its old history)
#   target a view:      the base's history becomes CopySlices(base's old history, op node),
#                       and the view's becomes AsStridedBackward0(base)
# ---------------------------------------------------------------------------------------------

_OVERLAP_MESSAGE = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def check_no_overlap(target: Tensor) -> None:
    """torch's error for writing a tensor whose elements share memory (an expanded one)."""
    a = target._data
    if 0 in a.strides and a.size and any(st == 0 and n > 1 for n, st in zip(a.shape, a.strides,
                                                                            strict=True)):
        raise RuntimeError(_OVERLAP_MESSAGE)


def write_into(target: Tensor, out: np.ndarray, overlap_ok: bool = False) -> None:
    """Copy ``out`` into the target's memory, with torch's checks that the dtype can hold it and
    (unless ``overlap_ok``: fill_, zero_) that no two of the target's elements share memory."""
    if not overlap_ok:
        check_no_overlap(target)
    tdt = target._data.dtype
    if out.dtype != tdt:
        src, dst = from_numpy_dtype(out.dtype), target.dtype
        if src._rank > dst._rank:
            raise RuntimeError(
                f"result type {scalar_type_name(src)} can't be cast to the desired output type "
                f"{scalar_type_name(dst)}"
            )
    if out.shape != target._data.shape:
        raise RuntimeError(
            f"output with shape {list(target._data.shape)} doesn't match the broadcast shape "
            f"{list(np.broadcast_shapes(out.shape, target._data.shape))}"
        )
    np.copyto(target._data, out, casting="unsafe")


def apply_(op: OpDef, target: Tensor, *others: Any, **params: Any) -> Tensor:
    """Run ``op(target, *others)`` and write the result into ``target`` (``add_``, ``copy_``...)."""
    if _SPECIAL:
        return _detour.apply_(op, target, others, params)
    record = _state.enabled and (
        target.requires_grad or any(isinstance(x, Tensor) and x.requires_grad for x in others)
    )
    check_inplace(target, record)
    if not record:
        arrays = [x._data if isinstance(x, Tensor) else x for x in others]
        if _LOW and op.widen:
            out = widened_forward(op, [target._data, *arrays], params)
        else:
            out = op.forward(target._data, *arrays, **params)
        write_into(target, out, op.name in _OVERLAP_OK)
        bump_version(target)
        return target
    before = target
    if 0 in op.save:  # the rule needs the old value, which is about to be overwritten
        before = _snapshot(target)
    result = apply(op, before, *others, **params)
    write_into(target, result._data, op.name in _OVERLAP_OK)
    bump_version(target)
    node = result._grad_fn
    if op.save_output and target._base is None:
        counter = target._version_counter
        node._out = (target._data, counter, counter.value)
    # Edge 0 of the node points at the target's old history, taken from ``before``.
    rebase_history(target, node)
    return target


# the in-place ops torch lets write a tensor whose elements share memory (an expanded one)
_OVERLAP_OK = frozenset(("fill", "fill_tensor", "zero"))


def _snapshot(t: Tensor) -> Tensor:
    """A copy of ``t`` that keeps its place in the graph (same grad_fn / output_nr)."""
    fn = t.grad_fn
    s = Tensor._make(t._data.copy(), requires_grad=t._requires_grad or fn is not None)
    s._grad_fn = fn
    s._output_nr = t._output_nr
    if t._requires_grad and fn is None:
        s._accumulator = t._accumulator
    return s


provide_view_ops(apply=apply, record=_record)  # (ops/_views.py makes views again with them)

__all__ = ["REGISTRY", "OpDef", "OpNode", "NondiffDef", "defop", "nondiff", "fast_backward",
           "apply", "apply_", "apply_nondiff", "AccumulateGrad", "grad_accumulator"]
