"""The module a public class names as its home: ``tapegrad`` normally, ``torch`` under the torch
alias, so that ``type(x)`` prints as a user of either name expects::

    >>> import tapegrad
    >>> type(tapegrad.zeros(1))
    <class 'tapegrad.Tensor'>
    >>> tapegrad.install_torch_alias()      # what ``tapegrad run`` does for a script
    >>> import torch
    >>> type(torch.zeros(1))
    <class 'torch.Tensor'>

torch's classes live in private modules but name a public one (``torch.Tensor`` is defined in
``torch._tensor``, ``torch.Generator`` says ``torch._C``); each class below says the place
torch's says, under the package name in use. The name is what ``pickle`` stores for a class or
for a value reduced by name (a dtype), and every such place exists in tapegrad, so pickles
load under either name.

A class registers itself with ``public`` next to its definition; the package name changes only
through ``set_package`` (``tapegrad`` at import, ``torch`` from ``install_torch_alias``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T", bound=type)

_CLASSES: list[tuple[type, str, str]] = []  # (class, path under the package, class name)
_package = "tapegrad"


def public(path: str, name: str | None = None) -> Callable[[T], T]:
    """Class decorator: the class names ``<package><path>`` as its module (``path`` is ``""``
    for the package itself, or ``".nn.parameter"``), and ``name`` (default: its own) as its
    name."""

    def register(cls: T) -> T:
        _CLASSES.append((cls, path, name or cls.__name__))
        _name(cls, path, name or cls.__name__)
        return cls

    return register


def _name(cls: type, path: str, name: str) -> None:
    cls.__module__ = _package + path
    cls.__name__ = cls.__qualname__ = name


def set_package(package: str) -> None:
    """Name every registered class's module under ``package`` (``"tapegrad"`` or ``"torch"``)."""
    global _package
    _package = package
    for cls, path, name in _CLASSES:
        _name(cls, path, name)


def package() -> str:
    """The package name classes are shown under now."""
    return _package


class CEnumType(enum.EnumMeta):
    """The type of an enum torch defines in C++ (``ProfilerActivity``, ``DeviceType``): the
    class prints as a class (``<class 'torch._C._profiler.ProfilerActivity'>``), not as
    Python's ``<enum 'ProfilerActivity'>``; its members print as Python's do, as torch's."""

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"
