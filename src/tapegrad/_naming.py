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

The classes of ``tapegrad.vision`` sit where torchvision's do
(``tapegrad.vision.datasets.mnist``): under the alias each names the torchvision module of the
same path (``<class 'torchvision.datasets.mnist.FashionMNIST'>``), which the alias's import hook
resolves to the tapegrad module, so pickles find it. ``set_package`` renames the classes of the
modules loaded so far; the alias's import hook calls ``name_module`` for each one loaded later.
The other classes keep their module's own name (``tapegrad.nn.modules.linear.Linear``): an
aliased module keeps its ``__name__``, and code compares the two (d2l's training loop takes a
scheduler whose class's ``__module__`` is ``lr_scheduler.__name__`` for torch's).
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Callable
from types import ModuleType
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
    """Name every registered class's module under ``package`` (``"tapegrad"`` or ``"torch"``),
    and every class of a public tapegrad module loaded so far after its module's path there."""
    global _package
    _package = package
    for cls, path, name in _CLASSES:
        _name(cls, path, name)
    if package == "tapegrad":
        for cls, own in _RENAMED:
            cls.__module__ = own
        _RENAMED.clear()
        return
    for module in [m for n, m in sys.modules.items() if n.startswith("tapegrad.")]:
        name_module(module)


# the classes renamed after their module's torch path, with their own module's name
_RENAMED: list[tuple[type, str]] = []
# tapegrad's packages and the names they stand for under the alias (longest first)
_TORCH_PATHS = (("tapegrad.vision", "torchvision"),)


def torch_path(module_name: str) -> str | None:
    """The name its classes take under the alias for tapegrad module ``module_name``
    (``tapegrad.vision.datasets.mnist`` -> ``torchvision.datasets.mnist``), or None where they
    keep their own."""
    for own, alias in _TORCH_PATHS:
        if module_name == own or module_name.startswith(own + "."):
            rest = module_name[len(own):]
            if alias == "torch" and any(part.startswith("_") for part in rest.split(".")[1:]):
                return None  # (tapegrad.vision's private modules are named as torchvision's)
            return alias + rest
    return None


def name_module(module: ModuleType) -> None:
    """Under the alias, name the classes defined at the top of ``module`` (a tapegrad module)
    after its torch path."""
    if _package != "torch":
        return
    own = getattr(module, "__name__", "")
    alias = torch_path(own)
    if alias is None:
        return
    for value in list(vars(module).values()):
        if isinstance(value, type) and value.__module__ == own:
            _RENAMED.append((value, own))
            value.__module__ = alias


def package() -> str:
    """The package name classes are shown under now."""
    return _package


class CEnumType(enum.EnumMeta):
    """The type of an enum torch defines in C++ (``ProfilerActivity``, ``DeviceType``): the
    class prints as a class (``<class 'torch._C._profiler.ProfilerActivity'>``), not as
    Python's ``<enum 'ProfilerActivity'>``; its members print as Python's do, as torch's."""

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__qualname__}'>"


class NamedConstant:
    """A value torch keeps as a module attribute (``torch.strided``, ``torch.channels_last``):
    it prints as ``torch.<name>`` and pickles by name, so it loads back as that attribute."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return "torch." + self.name

    def __reduce__(self) -> str:  # pickled by name, as the module attribute it is
        return self.name
