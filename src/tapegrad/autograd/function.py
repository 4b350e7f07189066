"""Custom differentiable functions: ``class MyFn(tapegrad.autograd.Function)``.

    class Square(Function):
        @staticmethod
        def forward(ctx, x):            # runs with grad mode off, on Tensors
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):        # one gradient per forward input (None for non-tensors)
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    y = Square.apply(x)                 # y.grad_fn is a SquareBackward node

The node is the ``ctx`` itself (as in torch), a ``Node`` like every other, so the engine has one
code path. ``Function.apply`` does what torch's does, step for step::

    apply(*args, **kwargs)
      forward(ctx, *args)  or  forward(*args) + setup_context(ctx, inputs, output)   no grad
      each tensor output:  marked non-differentiable (or an integer)  -> no history
                           marked dirty (an input changed in place)    -> its history is ctx
                           an input returned as is                     -> a view of it, history ctx
                           anything else                               -> history ctx
      save_for_backward's tensors are saved (version-checked; an output without a cycle)
      under a dual level: jvp(ctx, *tangents) gives the outputs' tangents

and ``backward`` gets one gradient per output (zeros where none arrived, unless
``ctx.set_materialize_grads(False)``) and must return one per input.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..ops import _registry, _views
from ..ops._registry import INFERENCE_SAVE_MESSAGE
from . import forward_ad, graph
from .grad_mode import _state, no_grad
from .graph import FREED_MESSAGE, Node, _Packed, edge, version_error

# Function transforms (tapegrad.func) that are running: a Function used inside one must define
# setup_context (and, under vmap, a vmap rule), as torch requires. func sets these.
TRANSFORMS: dict[str, int] = {"active": 0, "vmap": 0}

_DIFFERENTIABLE_KINDS = "fcV"  # float, complex, and bfloat16's void-typed storage


class FunctionCtx:
    """What ``forward``/``setup_context`` and ``backward`` receive as ``ctx``."""

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (or None) for ``backward``: read them as ``ctx.saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep ``tensors`` for ``jvp`` (read them as ``ctx.saved_tensors`` there)."""
        for t in tensors:
            if not (isinstance(t, Tensor) or t is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should save "
                    "non-tensors as attributes on ctx."
                )
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare the inputs ``forward`` changed in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs: Any) -> None:
        warnings.warn(
            "`mark_shared_storage` is deprecated. Tensors with shared storages are "
            "automatically tracked. Note that calls to `set_()` are not tracked",
            FutureWarning,
            stacklevel=2,
        )

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that get no gradient (their ``backward`` argument is zeros)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """False: ``backward`` gets None (not zeros) for outputs that got no gradient."""
        self.materialize_grads = value


_ContextMethodMixin = FunctionCtx


class BackwardCFunction(FunctionCtx, Node):
    """The grad_fn of a custom Function, named ``<Function>Backward``; it is also ``ctx``."""

    _forward_cls: Any = None
    _runs_without_grad = True  # backward runs (on zeros) even when no gradient arrived
    to_save: Any = None
    dirty_tensors: Any = None
    non_differentiable: Any = None
    saved_for_forward: Any = None
    _materialize = True
    _materialize_non_diff_grads = True
    _saved: list | tuple | None = ()
    _output_meta: list = []  # (shape, NumPy dtype) per output; None for a non-tensor output
    _tensor_positions: tuple = ()
    needs_input_grad: tuple = ()
    input_meta: tuple = ()

    def __init__(self) -> None:
        Node.__init__(self, ())

    # torch's ctx.materialize_grads can be set (to a bool) but not read
    @property
    def materialize_grads(self) -> bool:
        raise AttributeError(
            "attribute 'materialize_grads' of 'torch._C._FunctionBase' objects is not readable")

    @materialize_grads.setter
    def materialize_grads(self, value: bool) -> None:
        if not isinstance(value, bool):
            raise TypeError(
                "set_materialize_grads received an invalid combination of arguments - got (), "
                "but expected (bool)"
            )
        self._materialize = value

    @property
    def requires_grad(self) -> bool:
        return True

    def _num_outputs(self) -> int:
        return len(self._output_meta)

    @property
    def saved_tensors(self) -> tuple:
        """What ``save_for_backward`` kept, each checked against later in-place changes."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        out: list[Tensor | None] = []
        for entry in saved:
            if entry is None:
                out.append(None)
            elif isinstance(entry, _SavedOutput):
                out.append(entry.unpack(self))
            else:
                t, version, producer, nr = entry
                if isinstance(t, _Packed):  # saved under saved_tensors_hooks
                    out.append(t.restore(self, version))
                    continue
                if t._version_counter.value != version:
                    raise version_error(t, producer, nr, version)
                out.append(t)
        return tuple(out)

    @property
    def saved_variables(self) -> tuple:
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'",
                      DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def apply(self, grads: list) -> tuple:
        """The engine's call: materialize the gradients, run the user's backward, check what
        it returned (torch's rules), and hand on the gradients of the tensor inputs."""
        meta = self._output_meta
        grads = list(grads) + [None] * (len(meta) - len(grads))
        if self._materialize:
            for i, (g, m) in enumerate(zip(grads, meta, strict=False)):
                if g is None and m is not None and (
                    m[2] or self._materialize_non_diff_grads
                ):
                    grads[i] = Tensor._make(np.zeros(m[0], dtype=m[1]))
        result = self._backward_fn()(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self.needs_input_grad)
        if len(result) > n_args and all(r is None for r in result[n_args:]):
            result = result[:n_args]
        if len(result) != n_args:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n_args}, got {len(result)})"
            )
        positions = self._tensor_positions
        for i, r in enumerate(result):
            if r is None or isinstance(r, Tensor):
                if r is not None and i not in positions:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        "Variable"
                    )
                continue
            if i in positions:
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            raise RuntimeError(
                f"function {self.name()} returned a gradient different than None at position "
                f"{i + 1}, but the corresponding forward input was not a Variable"
            )
        return tuple(result[i] for i in positions)

    def _backward_fn(self) -> Callable:
        """The user's ``backward`` or ``vjp`` (defining both is torch's error)."""
        cls = self._forward_cls
        backward, vjp = cls.backward, cls.vjp
        if backward is not Function.backward and vjp is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                "You should only implement one of them."
            )
        return vjp if vjp is not Function.vjp else backward

    def release(self) -> None:
        if self._saved:
            self._saved = None


class _SavedOutput:
    """An output saved for backward, kept without the Tensor -> node -> Tensor cycle: its
    array, version counter and version, rebuilt (with the node as grad_fn) when unpacked."""

    __slots__ = ("data", "counter", "version", "output_nr")

    def __init__(self, t: Tensor, output_nr: int) -> None:
        self.data = t._data
        self.counter = t._version_counter
        self.version = self.counter.value
        self.output_nr = output_nr

    def unpack(self, node: Node) -> Tensor:
        t = Tensor._make(self.data, requires_grad=True)
        t._version_counter = self.counter
        if self.counter.value != self.version:
            raise version_error(t, node, self.output_nr, self.version)
        t._grad_fn = node
        t._output_nr = self.output_nr
        return t


_function_ids = itertools.count()


class FunctionMeta(type):
    """Gives every Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_cls._autograd_function_id = next(_function_ids)  # type: ignore[attr-defined]
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class _SingleLevelFunction(FunctionCtx, metaclass=FunctionMeta):
    """The static methods a Function overrides (torch's class of the same name)."""

    _backward_cls: Any

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )


class Function(_SingleLevelFunction):
    """Base class of user-defined differentiable operations (see the module docstring)."""

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and record the node (see the module docstring)."""
        has_setup = cls.setup_context is not _SingleLevelFunction.setup_context
        if has_setup:  # forward's defaults filled in: setup_context sees every input
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, {}
        if TRANSFORMS["active"]:
            _check_transform_support(cls, has_setup)
        return _apply(cls, args, kwargs, has_setup)

    @staticmethod
    def _compiled_autograd_key(ctx: Any) -> tuple:
        return (ctx._autograd_function_id,)


def _check_transform_support(cls: Any, has_setup: bool) -> None:
    """torch's errors for a Function used inside tapegrad.func transforms."""
    if not has_setup:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, "
            "jacrev, ...), it must override the setup_context staticmethod. For more details, "
            "please see https://pytorch.org/docs/main/notes/extending.func.html"
        )
    if TRANSFORMS["vmap"] and cls.vmap is Function.vmap and not cls.generate_vmap_rule:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
            "more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
        )


def _apply(cls: Any, args: tuple, kwargs: dict, has_setup: bool) -> Any:
    ctx = cls._backward_cls()
    positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
    ctx.needs_input_grad = needs
    executable = _state.enabled and any(needs)
    if executable:
        ctx.next_functions = tuple(edge(args[i]) for i in positions)
        ctx._tensor_positions = positions
        # what the engine checks each returned gradient against: its input's shape and dtype
        ctx.input_meta = tuple(
            (args[i]._data.shape, args[i]._data.dtype.num) if args[i]._requires_grad else None
            for i in positions)
    tangents = forward_ad._tangents(args) if _registry._SPECIAL else None
    with no_grad(), forward_ad._detour_off():  # the forward's own ops record nothing
        if has_setup:
            outputs = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, outputs)
        else:
            outputs = cls.forward(ctx, *args, **kwargs)
    single = not isinstance(outputs, tuple)
    raw = (outputs,) if single else outputs
    wrapped = _wrap_outputs(ctx, args, positions, raw, executable)
    if tangents is not None:
        _forward_mode(ctx, cls, args, raw, wrapped, tangents)
    if executable:
        _save(ctx)
    ctx.to_save = None
    ctx.non_differentiable = None
    ctx.dirty_tensors = None
    ctx.saved_for_forward = None
    return wrapped[0] if single else tuple(wrapped)


def _wrap_outputs(ctx: BackwardCFunction, args: tuple, positions: tuple, raw: tuple,
                  executable: bool) -> list:
    """Give each tensor output its history (torch's ``_wrap_outputs``)."""
    non_diff = ctx.non_differentiable or ()
    for t in non_diff:
        if not isinstance(t, Tensor):
            raise RuntimeError(
                "mark_non_differentiable only accepts variable arguments, but got ")
    dirty = ctx.dirty_tensors or ()
    for t in dirty:
        if not isinstance(t, Tensor):
            raise RuntimeError("mark_dirty can only accept variables, but argument ")
        t._version_counter.value += 1  # the in-place change forward made (torch bumps here)
    non_diff_ids = {id(t) for t in non_diff}
    dirty_ids = {id(t) for t in dirty}
    input_ids = {id(args[i]) for i in positions}
    out: list = []
    meta: list = []
    if not executable:  # no node: an input returned as is becomes a view of it, and so on
        out = list(_views.custom_function_outputs_unrecorded(raw, args, dirty))
    for nr, o in enumerate(raw if executable else ()):
        if not isinstance(o, Tensor):
            out.append(o)
            meta.append(None)
            continue
        is_input = id(o) in input_ids
        is_modified = id(o) in dirty_ids
        differentiable = id(o) not in non_diff_ids and o._data.dtype.kind in _DIFFERENTIABLE_KINDS
        meta.append((o._data.shape, o._data.dtype, differentiable))
        if is_input and not is_modified:  # an input returned as is: a view of it (torch)
            o = _views.view_as_self(o)
        if differentiable:
            if is_modified and o._base is None and o._grad_fn is None and o._requires_grad:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation.")
            # the view part (a dirty view's base gets CopySlices; creation metas) is the views
            # machinery's
            _views.set_custom_function_history(o, ctx, nr, is_input, is_modified, len(raw))
        out.append(o)
    if executable:
        _views.custom_function_multi_output_views(out)
    out_ids = {id(o) for o in raw if isinstance(o, Tensor)}
    if any(i not in out_ids for i in dirty_ids):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            "output. The inputs that are modified inplace must all be outputs of the Function."
        )
    if executable:
        ctx._output_meta = meta
    return out


def _save(ctx: BackwardCFunction) -> None:
    """Keep ``save_for_backward``'s tensors: inputs and intermediates as they are, outputs of
    this Function by value (no cycle through the node), all version-checked."""
    to_save = ctx.to_save or ()
    hooks = graph._saved_hooks[-1] if graph._saved_hooks else None
    saved: list = []
    for i, t in enumerate(to_save):
        if t is None:
            saved.append(None)
            continue
        if not isinstance(t, Tensor):
            raise TypeError(
                f"save_for_backward can only save variables, but argument {i} is of type "
                f"{type(t).__name__}"
            )
        if t._inference:
            raise RuntimeError(INFERENCE_SAVE_MESSAGE)
        if t.grad_fn is ctx and hooks is None:  # an output of this Function
            saved.append(_SavedOutput(t, t._output_nr))
            continue
        kept = t if hooks is None else _Packed(t, *hooks)
        saved.append((kept, t._version_counter.value, t.grad_fn, t._output_nr))
    ctx._saved = saved


def _forward_mode(ctx: BackwardCFunction, cls: Any, args: tuple, raw: tuple, wrapped: list,
                  tangents: list) -> None:
    """Under a dual level: ``jvp(ctx, *tangents)`` gives the outputs' tangents (torch's checks:
    one per output, None for a non-differentiable one, in place for a dirty input)."""
    saved_for_forward = ctx.saved_for_forward
    if saved_for_forward is not None:
        ctx._saved = [None if t is None else (t, t._version_counter.value, t.grad_fn,
                                              t._output_nr) for t in saved_for_forward]
    else:
        ctx._saved = []
    if ctx._materialize:  # a floating input without a tangent gets zeros (torch's)
        tangents = [
            _zeros_like(a) if t is None and isinstance(a, Tensor)
            and a._data.dtype.kind in _DIFFERENTIABLE_KINDS else t
            for a, t in zip(args, tangents, strict=True)]
    versions = [t._version_counter.value if t is not None else None for t in tangents]
    with forward_ad._detour_off():
        result = cls.jvp(ctx, *tangents)
    ctx._saved = ()
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) != len(raw):
        raise RuntimeError(
            f"Function's jvp returned an invalid number of forward gradients (expected "
            f"{len(raw)} but got {len(result)})"
        )
    non_diff = {id(t) for t in (ctx.non_differentiable or ())}
    dirty = {id(t) for t in (ctx.dirty_tensors or ())}
    inputs = {id(a): i for i, a in enumerate(args) if isinstance(a, Tensor)}
    for nr, (o, w, g) in enumerate(zip(raw, wrapped, result, strict=True)):
        if not isinstance(o, Tensor):
            continue
        differentiable = id(o) not in non_diff and o._data.dtype.kind in _DIFFERENTIABLE_KINDS
        if not differentiable:
            if g is not None:
                raise RuntimeError(
                    f"Function's jvp returned a gradient at position {nr}, but  the "
                    "corresponding forward output is not a differentiable Tensor.You should "
                    "return None at that position instead."
                )
            continue
        if g is None:
            continue
        if id(o) in dirty:
            i = inputs.get(id(o))
            if i is not None and tangents[i] is not None:
                if g._version_counter.value == versions[i]:
                    raise RuntimeError(
                        "An inplace custom Function is not modifying the forward mode "
                        "gradients inplace. If the forward is modifying an input inplace, then "
                        "the jvp function must modify the corresponding gradient inplace.")
                if g is not tangents[i]:
                    raise RuntimeError(
                        "An inplace custom Function is not returning the forward mode gradients "
                        "as-is. If the forward is modifying an input inplace, then the jvp "
                        "function must modify the gradient inplace and return it as-is.")
        else:  # a view of an input (or an input as is): the jvp returns a view of its tangent
            _views.check_custom_function_tangent_view(w, g, args, tangents)
        forward_ad._set_tangent(w, g)


def _zeros_like(t: Tensor) -> Tensor:
    return Tensor._make(np.zeros_like(t._data))


class InplaceFunction(Function):
    """A Function that may work in place (``inplace``): torch's legacy base class."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def once_differentiable(fn: Callable) -> Callable:
    """A custom ``backward`` that cannot itself be differentiated: it runs with grad mode off,
    and differentiating its result again raises torch's error."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args)
        if not _state.enabled:
            return outputs
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        err = _DelayedError.apply(*(None if o is None else o.detach().requires_grad_()
                                    for o in outs))
        return err

    return wrapper


class DelayedErrorNode(Node):
    """A node whose backward raises: what ``once_differentiable`` puts on its outputs."""

    __slots__ = ("message", "n_out")
    _cpp_name = "torch::autograd::Error"

    def __init__(self, message: str, inputs: tuple) -> None:
        super().__init__(tuple(edge(t) for t in inputs))
        self.message = message
        self.n_out = len(inputs)

    def _num_outputs(self) -> int:
        return self.n_out

    def apply(self, grads: list) -> tuple:
        raise RuntimeError(self.message)


DelayedErrorNode.__name__ = DelayedErrorNode.__qualname__ = "Error"


class _DelayedError:
    """``DelayedError(message)(*tensors)``: aliases of ``tensors`` whose backward raises."""

    @staticmethod
    def apply(*tensors: Any) -> tuple:
        node = DelayedErrorNode(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable", tensors)
        out: list[Tensor | None] = []
        for nr, t in enumerate(tensors):
            if t is None:
                out.append(None)
                continue
            alias = Tensor._make(t._data, requires_grad=True)
            alias._grad_fn = node
            alias._output_nr = nr
            out.append(alias)
        return tuple(out)


__all__ = ["BackwardCFunction", "Function", "FunctionCtx", "InplaceFunction",
           "once_differentiable"]
