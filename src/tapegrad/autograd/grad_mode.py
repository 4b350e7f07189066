"""Grad modes: whether ops record a graph, per thread, as in torch.

``_state`` (defined in _grad_state.py, below the Tensor, which reads it too) is a
``threading.local`` whose ``__init__`` runs once in every thread, so a new thread
starts with grad enabled whatever the thread that started it was doing (torch's documented
behaviour). ``ops._registry.apply`` reads ``_state.enabled`` once per op: it is True when ops
record, that is when grad mode is on and inference mode is off (inside inference mode nothing
records, even under ``enable_grad``). ``_state.grad_mode`` is what ``is_grad_enabled`` reports.

    no_grad()            grad_mode = False
    enable_grad()        grad_mode = True
    set_grad_enabled(m)  grad_mode = m, at once (a call), restored on exit (a block)
    inference_mode(m)    grad_mode = not m, inference = m: tensors made inside are inference
                         tensors; inference_mode(False) turns grad mode on, as torch's does

Each is a context manager and a decorator (of functions, methods and generators: the mode holds
while the generator's code runs, between its yields, and for ``send``, ``throw`` and ``close``);
``no_grad``, ``enable_grad`` and ``inference_mode`` also decorate without parentheses. The state
is restored on exit even after an error.
"""

from __future__ import annotations

import functools
import inspect
import sys
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from .._grad_state import _state as _state
from .._tensor import Tensor

F = TypeVar("F", bound=Callable[..., Any])




def _set(grad_mode: bool, inference: bool) -> None:
    _state.grad_mode = grad_mode
    _state.inference = inference
    _state.enabled = grad_mode and not inference


def is_grad_enabled() -> bool:
    """True when grad mode is on in this thread."""
    return _state.grad_mode


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()`` in this thread."""
    return _state.inference


def _wrap_generator(factory: Callable[[], Any], func: Callable) -> Callable:
    """A generator function whose body runs under the context ``factory()`` makes: entered for
    each step of the generator and left at each yield, so the caller keeps its own mode."""

    @functools.wraps(func)
    def generator_context(*args: Any, **kwargs: Any) -> Any:
        gen = func(*args, **kwargs)
        try:
            with factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with factory():
                        gen.close()
                    raise
                except BaseException:
                    with factory():
                        response = gen.throw(*sys.exc_info())
                else:
                    with factory():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator_context


class _DecoratorContextManager:
    """A context manager that also decorates functions, methods and generator functions."""

    def __call__(self, orig_func: F) -> F:
        if inspect.isclass(orig_func):
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.",
                FutureWarning,
                stacklevel=2,
            )
            cls = orig_func

            def func(*args: Any, **kwargs: Any) -> Any:
                return cls(*args, **kwargs)
        else:
            func = orig_func
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(self.clone, func)  # type: ignore[return-value]
        factory = self.clone

        @functools.wraps(func)
        def decorate_context(*args: Any, **kwargs: Any) -> Any:
            with factory():
                return func(*args, **kwargs)

        return decorate_context  # type: ignore[return-value]

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a decorator without parentheses: ``@torch.no_grad``."""

    def __new__(cls, orig_func: Any = None) -> Any:
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class _GradModeSwitch(_NoParamDecoratorContextManager):
    """``no_grad`` and ``enable_grad``: inside the block graph recording is ``_mode``; on leaving
    it, recording and the engine's flag are as they were."""

    _mode: bool

    def __init__(self) -> None:
        self.prev = False
        self.prev_enabled = True

    def __enter__(self) -> None:
        self.prev = _state.grad_mode
        self.prev_enabled = _state.enabled
        _set(self._mode, _state.inference)

    def __exit__(self, *exc: object) -> None:
        _set(self.prev, _state.inference)
        _state.enabled = self.prev_enabled  # as it was (the engine sets it for a backward)


class no_grad(_GradModeSwitch):
    """Context manager / decorator that turns graph recording off.

    Example:
        >>> import tapegrad as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    _mode = False


class enable_grad(_GradModeSwitch):
    """Context manager / decorator that turns graph recording on (inside ``no_grad``)."""

    _mode = True


def _check_bool(mode: Any, name: str) -> None:
    if not isinstance(mode, bool):
        raise TypeError(f"{name}(): argument 'enabled' (position 1) must be bool, not "
                        f"{type(mode).__name__}")


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off; takes effect at once, and as a context manager restores it."""

    def __init__(self, mode: bool) -> None:
        _check_bool(mode, "set_grad_enabled")
        self.prev = _state.grad_mode
        self.prev_enabled = _state.enabled
        self.mode = mode
        _set(mode, _state.inference)

    def __call__(self, func: F) -> F:  # as a decorator it must not change the mode now
        _set(self.prev, _state.inference)
        _state.enabled = self.prev_enabled
        return super().__call__(func)

    def __enter__(self) -> None:
        _set(self.mode, _state.inference)

    def __exit__(self, *exc: object) -> None:
        _set(self.prev, _state.inference)
        _state.enabled = self.prev_enabled

    def __str__(self) -> str:
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

    __repr__ = __str__

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors created inside are inference tensors: they never record a
    graph, keep no version counter, and may be changed in place only inside inference mode.
    ``inference_mode(False)`` turns inference mode off and grad mode on."""

    def __new__(cls, mode: Any = True) -> Any:
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used as @inference_mode: ``mode`` is the function

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode
        self._prev: list[tuple[bool, bool, bool]] = []

    def __enter__(self) -> None:
        self._prev.append((_state.grad_mode, _state.inference, _state.enabled))
        _set(not self.mode, bool(self.mode))

    def __exit__(self, *exc: object) -> None:
        _state.grad_mode, _state.inference, _state.enabled = self._prev.pop()

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)


def _enter_inference_mode(mode: bool) -> inference_mode:
    context = inference_mode(mode)
    context.__enter__()
    return context


def _exit_inference_mode(context: inference_mode) -> None:
    context.__exit__(None, None, None)


class set_multithreading_enabled(_DecoratorContextManager):
    """Whether the engine may run backward work on other threads (tapegrad's never does: the
    flag is kept, per thread, for code that reads it back)."""

    def __init__(self, mode: bool) -> None:
        self.prev = _state.multithreading
        _state.multithreading = bool(mode)
        self.mode = mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _state.multithreading = self.prev

    def clone(self) -> set_multithreading_enabled:
        return self.__class__(self.mode)


def is_multithreading_enabled() -> bool:
    return _state.multithreading


class _force_original_view_tracking(_DecoratorContextManager):
    """View replay on or off: with it on, views remember their view ops, and a view whose base
    was changed in place gets its original kind of node back (``ViewBackward0``...) instead of
    ``AsStridedBackward0``. Takes effect at once; as a context manager restores it."""

    def __init__(self, mode: bool) -> None:
        self.prev = _state.view_replay
        self.mode = mode
        _state.view_replay = bool(mode)

    def __call__(self, func: F) -> F:
        _state.view_replay = self.prev
        return super().__call__(func)

    def __enter__(self) -> None:
        _state.view_replay = bool(self.mode)

    def __exit__(self, *exc: object) -> None:
        _state.view_replay = self.prev

    def clone(self) -> _force_original_view_tracking:
        return self.__class__(self.mode)


def is_view_replay_enabled() -> bool:
    return _state.view_replay


class _unsafe_preserve_version_counter(_DecoratorContextManager):
    """The given tensors' version counters are put back, on exit, to where they were on entry
    (in-place changes inside go unnoticed by saved tensors: use with care)."""

    def __init__(self, tensors: Any) -> None:
        self.tensors = (tensors,) if isinstance(tensors, Tensor) else tensors
        if not isinstance(self.tensors, tuple):
            raise AssertionError("Expected tensors to be a tuple")
        self.prev_versions = tuple(t._version for t in self.tensors)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        for t, version in zip(self.tensors, self.prev_versions, strict=True):
            t._version_counter.value = version


# -- the gradient layout contract ------------------------------------------------------------
# A leaf's accumulated gradient takes the layout torch's contract asks for; the switch is kept
# (and read back) as torch keeps it, with nothing of the engine to change.

_engine_settings = {"grad_layout": True}


class enforce_grad_layout_policy(_DecoratorContextManager):  # noqa: N801 - torch's name
    """Whether accumulated gradients must take their parameter's strides (a context manager
    or decorator; on by default)."""

    def __init__(self, enable: bool = True) -> None:
        self.prev = _engine_settings["grad_layout"]
        _engine_settings["grad_layout"] = enable
        self.mode = enable

    def __call__(self, orig_func: Any) -> Any:
        _engine_settings["grad_layout"] = self.prev
        return super().__call__(orig_func)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _engine_settings["grad_layout"] = self.prev

    def clone(self) -> enforce_grad_layout_policy:
        return self.__class__(self.mode)
