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
code path; saved tensors are version-checked like the registry's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._tensor import Tensor
from ..ops import _views
from . import graph
from .grad_mode import _state, no_grad
from .graph import FREED_MESSAGE, Node, _Packed, edge, version_error


class FunctionCtx:
    """What ``forward`` and ``backward`` receive as ``ctx`` (mixed into the node class)."""

    def save_for_backward(self, *tensors: Any) -> None:
        self._to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        self._saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        self._dirty = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        self._non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = value


class BackwardCFunction(FunctionCtx, Node):
    """The grad_fn of a custom Function (named ``<Function>Backward``)."""

    _fn_cls: Any = None
    if TYPE_CHECKING:  # set by Function.apply after forward: (shape, NumPy dtype) per output
        _output_meta: list[tuple[tuple[int, ...], Any]]

    def __init__(self) -> None:
        Node.__init__(self, ())
        self._to_save: tuple = ()
        self._saved: list | None = None
        self._materialize = True
        self._dirty: tuple = ()
        self._non_differentiable: tuple = ()
        self.needs_input_grad: tuple = ()
        self.input_meta: tuple = ()
        self._tensor_positions: list[int] = []

    @property
    def saved_tensors(self) -> tuple:
        if self._saved is None:
            raise RuntimeError(FREED_MESSAGE)
        out: list[Tensor | None] = []
        for entry in self._saved:
            if entry is None:
                out.append(None)
                continue
            t, version, producer, nr = entry
            if isinstance(t, _Packed):  # saved under saved_tensors_hooks
                out.append(t.restore(self, version))
                continue
            if t._version_counter.value != version:
                raise version_error(t, producer, nr, version)
            out.append(t)
        return tuple(out)

    saved_variables = saved_tensors

    def apply(self, grads: list) -> tuple:
        # the engine's buffer stops at the last output that got a gradient: one per output
        grads = list(grads) + [None] * (len(self._output_meta) - len(grads))
        if self._materialize:
            grads = [
                g if g is not None else Tensor._make(np.zeros(shape, dtype=dtype))
                for g, (shape, dtype) in zip(grads, self._output_meta, strict=False)
            ]
        result = self._fn_cls.backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_args = len(self.needs_input_grad)
        if len(result) < n_args or any(r is not None for r in result[n_args:]):
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected "
                f"{n_args}, got {len(result)})"
            )
        return tuple(result[i] for i in self._tensor_positions)

    def release(self) -> None:
        if self._saved:
            self._saved = None


class FunctionMeta(type):
    """Gives every Function subclass its own node class, named ``<Name>Backward``."""

    def __init__(cls, name: str, bases: tuple, attrs: dict) -> None:
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_fn_cls": cls})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of user-defined differentiable operations (see the module docstring)."""

    _backward_cls: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        import warnings

        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        ctx = cls._backward_cls()
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        record = _state.enabled and any(args[i].requires_grad for i in positions)
        # the inputs' edges as they are before forward (which may change them in place)
        edges = tuple(edge(args[i]) for i in positions) if record else ()
        has_setup = "setup_context" in cls.__dict__ or any(
            "setup_context" in b.__dict__ for b in cls.__mro__[1:-1] if b is not Function
        )
        with no_grad():
            if has_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)  # type: ignore[attr-defined]
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        for t in ctx._dirty:  # marked dirty: changed in place (their version moves on)
            _views.bump_version(t)
        if not record:
            outs = _views.custom_function_outputs_unrecorded(outs, args, ctx._dirty)
            return outs[0] if single else outs
        ctx.next_functions = edges
        ctx._tensor_positions = positions
        ctx.needs_input_grad = tuple(
            isinstance(a, Tensor) and a._requires_grad for a in args
        )
        ctx.input_meta = tuple(
            (args[i]._data.shape, args[i]._data.dtype.num) if args[i]._requires_grad else None
            for i in positions
        )
        non_diff = {id(t) for t in ctx._non_differentiable}
        dirty = {id(t) for t in ctx._dirty}
        new_outs = []
        meta: list[tuple[tuple[int, ...], Any]] = []
        for nr, o in enumerate(outs):
            if not isinstance(o, Tensor):
                new_outs.append(o)
                meta.append(((), np.float32))
                continue
            meta.append((o._data.shape, o._data.dtype))
            marked = id(o) in non_diff  # before a returned input is replaced by its view
            is_dirty = id(o) in dirty
            is_input = any(o is args[i] for i in positions)
            if is_input and not is_dirty:  # an input returned as is: a view of it (torch)
                o = _views.view_as_self(o)
            if marked or not (o._data.dtype.kind in "fc" or o.is_floating_point()):  # bfloat16
                new_outs.append(o)
                continue
            _views.set_custom_function_history(o, ctx, nr, is_input, is_dirty, len(outs))
            new_outs.append(o)
        _views.custom_function_multi_output_views(new_outs)
        ctx._output_meta = meta
        saved: list[tuple[Any, int, Any, int] | None] = []
        hooks = graph._saved_hooks[-1] if graph._saved_hooks else None
        for t in ctx._to_save:
            if t is None:
                saved.append(None)
            elif t._inference:
                from ..ops._registry import INFERENCE_SAVE_MESSAGE

                raise RuntimeError(INFERENCE_SAVE_MESSAGE)
            else:
                kept = t if hooks is None else _Packed(t, *hooks)
                saved.append((kept, t._version_counter.value, t.grad_fn, t._output_nr))
        ctx._saved = saved
        ctx._to_save = ()
        return new_outs[0] if single else tuple(new_outs)

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError("forward-mode AD is not supported by tapegrad")


class InplaceFunction(Function):
    """A Function that may work in place (``inplace``): torch's legacy base class."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


def once_differentiable(fn: Callable) -> Callable:
    """Run a custom backward with grad mode off (it cannot itself be differentiated)."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any) -> Any:
        with no_grad():
            return fn(ctx, *args)

    return wrapper
