"""``import torch`` as tapegrad: the import hook of ``tapegrad run`` and ``install_torch_alias()``.

Once installed, ``torch`` is ``tapegrad`` and ``torchvision`` is ``tapegrad.vision`` in
``sys.modules``, and an import system hook (a "meta path finder", the hook Python's import
system asks before looking on disk) answers every ``torch.<sub>`` and ``torchvision.<sub>``
import with the matching tapegrad module when it is first imported:

    import torch.nn.functional as F       ->  tapegrad.nn.functional
    from torchvision import transforms    ->  tapegrad.vision.transforms

Submodules are aliased on demand, so a script pays only for what it imports. A ``torch``
submodule with a part starting with ``_`` is private to tapegrad and is not aliased, but for
``torch._C`` and its submodules: the public classes name them as their home
(``torch._C.Generator``, as torch's do: ``_naming``), so pickles that name them must find them;
``tapegrad.vision``'s private modules are named as torchvision's (``transforms.v2._geometry``)
and are aliased. Installing the alias also names tapegrad's classes after their torch path
(``_naming``), those of modules loaded later too: while the alias is on, the hook loads each
``tapegrad.*`` module through ``_NamingLoader``. The aliased module keeps its own
name (``torch.nn.__name__ == "tapegrad.nn"``) and its own import spec, so tapegrad's relative
imports inside it work as before. The hook answers only while ``sys.modules["torch"]`` is
tapegrad: code that puts a real torch back gets real torch's submodules again.

Without the alias, ``import torch`` or ``import torchvision`` where neither is installed fails
as ever, but the message says what exists instead (``MissingHint``, a finder asked last, added
when tapegrad is imported): ``No module named 'torchvision'; tapegrad's torchvision is
tapegrad.vision: ...``. A probe (``importlib.util.find_spec``) still gets ``None``.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

from . import _naming

__all__ = ["ALIASES", "MissingHint", "install", "install_hints"]

# the public name a program imports -> the tapegrad package that stands for it
ALIASES = {"torch": "tapegrad", "torchvision": "tapegrad.vision"}


def _target(fullname: str) -> str | None:
    """The tapegrad module that ``fullname`` (``torch.nn``, ``torchvision.models``) stands for."""
    head, _, rest = fullname.partition(".")
    package = ALIASES.get(head)
    if package is None or not rest:
        return package
    parts = rest.split(".")
    if head == "torch" and parts[0] != "_C" and any(part.startswith("_") for part in parts):
        return None  # (torch._C and its submodules: where Generator & co. say they live)
    return f"{package}.{rest}"  # (torchvision's private modules are named as ours are)


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system an already imported tapegrad module under the alias name."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        # the import system gave the module the alias spec; its own spec (name "tapegrad.nn")
        # is what its relative imports and importlib.reload need
        module.__spec__ = self.spec


class _NamingLoader(importlib.abc.Loader):
    """Loads a tapegrad module as its own loader does, then names its classes after their torch
    path (``_naming.name_module``); anything else is asked of its own loader."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        _naming.name_module(module)

    def __getattr__(self, name: str) -> object:  # get_source, get_resource_reader, ...
        return getattr(self.loader, name)


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch.*`` / ``torchvision.*`` by importing the tapegrad module they stand for;
    a ``tapegrad.*`` module loaded under the alias gets its classes named (``_NamingLoader``)."""

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[override]
        if fullname.startswith("tapegrad."):
            return self._own_spec(fullname, path, target)
        name = _target(fullname)
        if name is None or getattr(sys.modules.get("torch"), "__name__", None) != "tapegrad":
            return None  # not ours, or the alias was undone (a real torch put back)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:  # no such tapegrad module: torch.<sub> does not exist here
                return None
            raise
        is_package = hasattr(module, "__path__")
        spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(module),
                                              is_package=is_package)
        if is_package:
            spec.submodule_search_locations = list(module.__path__)
        return spec


    @staticmethod
    def _own_spec(fullname: str, path: object, target: object) -> object:
        if getattr(sys.modules.get("torch"), "__name__", None) != "tapegrad":
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)  # type: ignore
        if spec is not None and spec.loader is not None and spec.origin is not None:
            spec.loader = _NamingLoader(spec.loader)
        return spec


_FINDER = _AliasFinder()

_HINTS = {
    "torch": "No module named 'torch'; tapegrad stands in for it: write `import tapegrad as "
             "torch` (then `tapegrad.nn`, not `torch.nn`, in imports), or make `import torch` "
             "load tapegrad with tapegrad.install_torch_alias() (a notebook, the REPL) or "
             "`tapegrad run script.py`",
    "torchvision": "No module named 'torchvision'; tapegrad's torchvision is tapegrad.vision: "
                   "write `import tapegrad.vision as torchvision`, or make `import torchvision` "
                   "load it with tapegrad.install_torch_alias() (a notebook, the REPL) or "
                   "`tapegrad run script.py`",
}


class MissingHint(importlib.abc.MetaPathFinder):
    """Asked last, so only where no ``torch`` / ``torchvision`` is installed: an import
    statement (or ``importlib.import_module``) of one of them fails with a
    ``ModuleNotFoundError`` that says what tapegrad has instead. Anything else, and a probe
    such as ``importlib.util.find_spec``, gets ``None``, as from any finder that has nothing."""

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[override]
        hint = _HINTS.get(fullname)
        if hint is None or not _importing():
            return None
        raise ModuleNotFoundError(hint, name=fullname)


def _importing() -> bool:
    """Whether the import system asks on behalf of an import (``_find_and_load``), not of
    ``importlib.util.find_spec``."""
    try:
        frame = sys._getframe(3)  # (here) <- MissingHint.find_spec <- _find_spec <- its caller
    except ValueError:
        return False
    return frame.f_code.co_name == "_find_and_load_unlocked"


_HINT_FINDER = MissingHint()


def install_hints() -> None:
    """Put ``MissingHint`` last in ``sys.meta_path`` (once)."""
    if _HINT_FINDER not in sys.meta_path:
        sys.meta_path.append(_HINT_FINDER)


def install() -> None:
    """Make ``torch`` and ``torchvision`` (and their submodules) import tapegrad from now on.

    A real torch or torchvision imported before is dropped from ``sys.modules`` first, so that
    no ``torch.<submodule>`` of another library is found later; the import hook goes first in
    ``sys.meta_path`` so that an installed real torch is never found on disk. Calling it again
    does nothing more.
    """
    for alias in ALIASES:
        for name in [n for n in sys.modules if n == alias or n.startswith(alias + ".")]:
            if not sys.modules[name].__name__.startswith("tapegrad"):
                del sys.modules[name]
    sys.modules["torch"] = sys.modules["tapegrad"]  # (loaded before any of its modules)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    _naming.set_package("torch")  # type(x) prints <class 'torch.Tensor'>
