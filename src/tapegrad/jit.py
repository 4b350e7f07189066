"""``torch.jit``: ``script`` and ``trace`` give a module or function that runs the same code.

tapegrad has no TorchScript compiler: it runs Python eagerly, which is what TorchScript's
result computes. ``script(module)`` returns a ``RecursiveScriptModule`` and ``trace(module,
inputs)`` a ``TopLevelTracedModule``: the same module object underneath (its parameters,
buffers, submodules and training flag are shared, ``state_dict`` has the same keys) printed as
torch prints them; for a function they return a ``ScriptFunction`` calling it. Like torch 2.13
they warn (``DeprecationWarning``) that ``torch.compile`` replaces them.

TorchScript archives: ``save(m, f)`` (``m.save(f)``) writes, for a scripted or traced module
built from ``nn.Sequential`` and torch's standard layers (``Linear``, ``Conv2d``,
``BatchNorm1d``/``2d``, ``MaxPool2d``, ``AvgPool2d``, ``ReLU``, ``Sigmoid``, ``Tanh``,
``Softmax``, ``Flatten``, ``Dropout``, ``Identity``), the archive real ``torch.jit.load`` runs
with the same results; ``load(f)`` reads such archives (torch's scripted ones or tapegrad's)
back into a scripted module. Other modules raise ``NotImplementedError`` naming them: their
forward would need a TorchScript compiler (``_jit_archive.py``).
"""

from __future__ import annotations

import functools
import os
import typing
import warnings
from collections.abc import Callable
from typing import Any

from . import _jit_archive
from .nn.modules.module import Module

__all__ = [
    "Final", "RecursiveScriptModule", "ScriptFunction", "ScriptModule", "TopLevelTracedModule",
    "TracedModule", "annotate", "export", "ignore", "interface", "is_scripting", "is_tracing",
    "load", "save", "script", "trace", "unused",
]

Final = typing.Final


def _deprecated(name: str) -> None:
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please switch to `torch.compile` or "
                  "`torch.export`.", DeprecationWarning, stacklevel=3)


class ScriptModule(Module):
    """The base class of scripted and traced modules."""

    def save(self, f: Any, _extra_files: Any = None) -> None:
        """``m.save(f)``, torch's ``torch.jit.save(m, f)``: a TorchScript archive (``save``)."""
        save(self, f, _extra_files)


def _names(module: Module, top: str, child: str) -> str:
    """torch's repr of a scripted/traced module: each level with its ``original_name``."""
    name = type(module).__name__ if not isinstance(module, ScriptModule) else (
        module.original_name)
    if not module._modules:
        return f"{top or name}(original_name={name})"
    lines = [f"{top or name}(", f"  original_name={name}"]
    for key, sub in module._modules.items():
        text = _names(sub, child, child) if sub is not None else "None"
        lines.append(f"  ({key}): " + text.replace("\n", "\n  "))
    return "\n".join(lines + [")"])


class _Rewrapped:
    """What the two classes ``_rewrap`` gives a module share: its ``original_name`` and torch's
    repr, which names each level ``_top_name`` / ``_child_name`` (empty: the module's own)."""

    _top_name: str
    _child_name: str

    @property
    def original_name(self) -> str:
        return self._original_name  # type: ignore[attr-defined]  # set by _rewrap

    def __repr__(self) -> str:
        return _names(self, self._top_name, self._child_name)  # type: ignore[arg-type]


class RecursiveScriptModule(_Rewrapped, ScriptModule):
    """What ``torch.jit.script(module)`` returns (here: the module itself, under this class)."""

    _top_name = "RecursiveScriptModule"
    _child_name = "RecursiveScriptModule"


class TracedModule(ScriptModule):
    """What ``torch.jit.trace(module, ...)`` returns, under its subclass TopLevelTracedModule."""


class TopLevelTracedModule(_Rewrapped, TracedModule):
    _top_name = ""
    _child_name = ""


def _rewrap(module: Module, kind: type) -> Module:
    """The same module (one shared ``__dict__``) seen through a class deriving from ``kind``
    and the module's own class, so every method and attribute still works."""
    original = type(module)
    cls = type(kind.__name__, (kind, original), {"_original_name": original.__name__,
                                                 "_original_class": original,
                                                 "__module__": kind.__module__})
    wrapped: Module = object.__new__(cls)
    object.__setattr__(wrapped, "__dict__", module.__dict__)
    return wrapped


class ScriptFunction:
    """What ``script``/``trace`` of a function return: a callable running that function."""

    def __init__(self, fn: Callable) -> None:
        self._fn = fn
        self.name = getattr(fn, "__name__", "fn")
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<torch.jit.ScriptFunction object at {hex(id(self))}>"


def script(obj: Any, optimize: Any = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """``torch.jit.script``: a ``RecursiveScriptModule`` or ``ScriptFunction`` running ``obj``.

    Example:
        >>> import tapegrad as torch
        >>> m = torch.jit.script(torch.nn.Linear(2, 2))
        >>> m
        RecursiveScriptModule(original_name=Linear)
    """
    _deprecated("script")
    if isinstance(obj, ScriptModule | ScriptFunction):
        return obj
    if isinstance(obj, Module):
        return _rewrap(obj, RecursiveScriptModule)
    if isinstance(obj, type) or not callable(obj):
        return obj  # classes and other objects: nothing to compile here
    return ScriptFunction(obj)


def trace(func: Any, example_inputs: Any = None, optimize: Any = None, check_trace: bool = True,
          check_inputs: Any = None, check_tolerance: float = 1e-5, strict: bool = True,
          _force_outplace: bool = False, _module_class: Any = None,
          _compilation_unit: Any = None, example_kwarg_inputs: Any = None,
          _store_inputs: bool = True) -> Any:
    """``torch.jit.trace``: runs ``func`` once on the example inputs (as torch does) and returns
    a ``TopLevelTracedModule`` (a module) or a ``ScriptFunction`` (a function) running it."""
    _deprecated("trace")
    args = example_inputs if isinstance(example_inputs, tuple) else (
        () if example_inputs is None else (example_inputs,))
    kwargs = example_kwarg_inputs or {}
    if isinstance(func, Module):
        _deprecated("trace_method")
        _deprecated("trace_method")
        func(*args, **kwargs)
        return _rewrap(func, TopLevelTracedModule)
    _deprecated("trace")
    func(*args, **kwargs)
    return ScriptFunction(func)


def is_scripting() -> bool:
    return False


def is_tracing() -> bool:
    return False


def _decorator(fn: Any = None, **_: Any) -> Any:
    if fn is None or not callable(fn):
        return lambda f: f
    return fn


ignore = unused = export = interface = _decorator


def annotate(the_type: Any, the_value: Any) -> Any:
    return the_value


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """``torch.jit.save``: write the scripted or traced module ``m`` to ``f`` (a path or a
    binary file) as a TorchScript archive that ``torch.jit.load`` reads.

    Raises:
        AttributeError: ``m`` is not a scripted or traced module (as torch).
        NotImplementedError: ``m`` holds a module other than ``nn.Sequential`` and the
            standard layers listed in this module's docstring (named in the message).
    """
    if not isinstance(m, ScriptModule):
        method = "save" if isinstance(f, (str, bytes, os.PathLike)) else "save_to_buffer"
        raise AttributeError(f"'{type(m).__name__}' object has no attribute '{method}'")
    _jit_archive.save(m, f, _extra_files)


def load(f: Any, map_location: Any = None, _extra_files: Any = None) -> Any:
    """``torch.jit.load``: the scripted module a TorchScript archive holds (one written by
    :func:`save` or by torch for the supported modules), its state restored bit for bit.
    ``_extra_files`` (a dict of names) is filled with the archive's extra files' bytes."""
    return _rewrap(_jit_archive.load(f, map_location, _extra_files), RecursiveScriptModule)
