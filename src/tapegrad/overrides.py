"""The ``__torch_function__`` checks library code guards its functions with: ``has_torch_function``
(and its ``_unary``/``_variadic`` forms) and ``handle_torch_function``, as ``torch.overrides``
and ``torch.nn.functional`` export them.

The protocol: an object whose type defines ``__torch_function__`` takes over any function that
is written the guarded way::

    def f(x, y):
        if has_torch_function_variadic(x, y):          # one of them overrides?
            return handle_torch_function(f, (x, y), x, y)
        ...                                            # the plain computation

``handle_torch_function`` asks each overriding type in turn (subclasses before their bases),
``type(arg).__torch_function__(f, types, args, kwargs)``, and returns the first answer that is
not ``NotImplemented``.

tapegrad's own ``Tensor`` defines no ``__torch_function__`` and its functions call no handler:
for tapegrad tensors and plain Python values every check answers ``False``, which is what
torch answers for its exact ``Tensor`` and ``Parameter``. A user type (or a ``Tensor``
subclass) that defines the method is dispatched as torch would dispatch it, in code that
guards itself like ``f`` above. (torch's ``Tensor`` subclasses inherit a default
``__torch_function__`` and so count as overriding; tapegrad's do only when they define it.)
There are no torch function modes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["handle_torch_function", "has_torch_function", "has_torch_function_unary",
           "has_torch_function_variadic"]


def _overrides(obj: Any) -> bool:
    return getattr(type(obj), "__torch_function__", None) is not None


def _sequence(relevant_args: Any) -> Iterable:
    try:
        return iter(relevant_args)
    except TypeError:
        raise TypeError("expected a sequence") from None


def has_torch_function(relevant_args: Iterable[Any], /) -> bool:
    """True when an element of ``relevant_args`` has a type defining ``__torch_function__``.

    Example:
        >>> import tapegrad as torch
        >>> torch.overrides.has_torch_function((torch.ones(2), 3))
        False
    """
    return any(_overrides(a) for a in _sequence(relevant_args))


def has_torch_function_unary(obj: Any, /) -> bool:
    """``has_torch_function((obj,))`` without building the tuple."""
    return _overrides(obj)


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)`` without building the tuple."""
    return any(_overrides(a) for a in args)


def _overloaded_args(relevant_args: Iterable[Any]) -> list:
    """The overriding arguments, one per type, each subclass placed before its bases."""
    seen: set[type] = set()
    found: list = []
    for arg in relevant_args:
        t = type(arg)
        if t in seen or not _overrides(arg):
            continue
        seen.add(t)
        at = next((i for i, old in enumerate(found) if issubclass(t, type(old))), len(found))
        found.insert(at, arg)
    return found


def handle_torch_function(public_api: Callable, relevant_args: Iterable[Any], *args: Any,
                          **kwargs: Any) -> Any:
    """Call the ``__torch_function__`` of the overriding arguments of ``relevant_args`` in turn
    (subclasses first) with ``(public_api, types, args, kwargs)``; return the first result that
    is not ``NotImplemented``, or raise TypeError when every one declines."""
    overloaded = _overloaded_args(_sequence(relevant_args))
    types = tuple(type(a) for a in overloaded)
    for arg in overloaded:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")
