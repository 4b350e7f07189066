"""Grad modes: whether ops record a graph, per thread, as in torch.

``_state`` is a ``threading.local`` whose ``__init__`` runs once in every thread, so a new thread
starts with grad enabled whatever the thread that started it was doing (torch's documented
behaviour). ``ops._registry.apply`` reads ``_state.enabled`` once per op: it is True when ops
record, that is when grad mode is on and inference mode is off (inside inference mode nothing
records, even under ``enable_grad``). ``_state.grad_mode`` is what ``is_grad_enabled`` reports.

    no_grad()            enabled = False
    enable_grad()        enabled = True
    set_grad_enabled(m)  enabled = m
    inference_mode(m)    enabled = not m, inference = m: tensors made inside are inference tensors

Each is a context manager and a decorator; the state is restored on exit even after an error.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _GradState(threading.local):
    def __init__(self) -> None:
        self.grad_mode = True
        self.inference = False
        self.enabled = True  # grad_mode and not inference: what apply() reads


_state = _GradState()


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


class _DecoratorContextManager:
    """A context manager that also decorates functions (and generator functions)."""

    def __call__(self, func: F) -> F:
        if inspect.isclass(func):
            raise RuntimeError("Decorating classes is not supported")
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    try:
                        with self.clone():
                            response = gen.send(request)
                    except StopIteration as stop:
                        return stop.value

            return gen_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError


class no_grad(_DecoratorContextManager):
    """Context manager / decorator that turns graph recording off.

    Example:
        >>> import tapegrad as torch
        >>> x = torch.ones(2, requires_grad=True)
        >>> with torch.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.grad_mode
        self.prev_enabled = _state.enabled
        _set(False, _state.inference)

    def __exit__(self, *exc: object) -> None:
        _set(self.prev, _state.inference)
        _state.enabled = self.prev_enabled  # as it was (the engine sets it for a backward)


class enable_grad(_DecoratorContextManager):
    """Context manager / decorator that turns graph recording on (inside ``no_grad``)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.grad_mode
        self.prev_enabled = _state.enabled
        _set(True, _state.inference)

    def __exit__(self, *exc: object) -> None:
        _set(self.prev, _state.inference)
        _state.enabled = self.prev_enabled  # as it was (the engine sets it for a backward)


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode on or off; takes effect at once, and as a context manager restores it."""

    def __init__(self, mode: bool) -> None:
        self.prev = _state.grad_mode
        self.mode = bool(mode)
        _set(self.mode, _state.inference)

    def __call__(self, func: F) -> F:  # as a decorator it must not change the mode now
        _set(self.prev, _state.inference)
        return super().__call__(func)

    def __enter__(self) -> None:
        _set(self.mode, _state.inference)

    def __exit__(self, *exc: object) -> None:
        _set(self.prev, _state.inference)

    def clone(self) -> set_grad_enabled:
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, and tensors created inside are inference tensors (see torch's docs)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self.prev: tuple[bool, bool] = (True, False)

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):  # used as @inference_mode
            return cls()(mode)
        return super().__new__(cls)

    def __enter__(self) -> None:
        self.prev = (_state.grad_mode, _state.inference)
        if self.mode:
            _set(False, True)
        else:
            _set(_state.grad_mode, False)

    def __exit__(self, *exc: object) -> None:
        _set(*self.prev)

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)


# -- the gradient layout contract ------------------------------------------------------------
# A leaf's accumulated gradient takes the layout torch's contract asks for; the switch is kept
# (and read back) as torch keeps it, with nothing of the engine to change.

_engine_settings = {"grad_layout": True}


def is_view_replay_enabled() -> bool:
    """Whether views are replayed rather than rebuilt with as_strided (off, as in torch)."""
    return False


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
