"""The helpers ``torch.backends``' modules build their settable flags with: a checked bool
property, a module class swap that makes those properties work on a module, and a context
manager factory that sets flags for a block.

They sit in their own module below ``tapegrad.backends`` so that ``cudnn`` and ``mkldnn`` can
import them without importing the package that imports them.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable
from typing import Any


def bool_flag(state: dict, key: str, setter: str) -> property:
    """A module property for a bool flag kept in ``state``, checked as torch checks it."""

    def get(self: Any) -> Any:
        return state[key]

    def set_(self: Any, value: Any) -> None:
        if not isinstance(value, bool):
            raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
        state[key] = value

    return property(get, set_)


def become(module_name: str, cls: type[types.ModuleType]) -> None:
    """Give a module a class with properties, so ``torch.backends.cudnn.benchmark = True``
    runs a setter (the way torch makes its backend modules)."""
    sys.modules[module_name].__class__ = cls


def flag_context(state: dict, keys: tuple[str, ...], apply: Callable[[dict], None]) -> Any:
    """A context manager factory: set ``keys`` in ``state`` for a block, then restore them."""
    @contextlib.contextmanager
    def manager(values: dict) -> Any:
        saved = {k: state[k] for k in keys}
        apply(values)
        try:
            yield
        finally:
            state.update(saved)

    return manager
