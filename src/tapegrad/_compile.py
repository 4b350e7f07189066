"""``torch.compile``: the user-facing entry; the work is done by ``tapegrad.compiler``.

``compile(model)`` wraps a module in an ``OptimizedModule`` (its ``_orig_mod`` is the model:
parameters are shared and ``state_dict`` keys gain the ``_orig_mod.`` prefix, as in torch) and a
function in a ``compiler.CompiledFunction``; ``@compile`` and ``compile(mode=..., fullgraph=...)``
give a decorator; ``Module.compile(...)`` compiles a module in place with the same arguments.
The arguments are checked as torch checks them (an unknown ``mode`` or ``backend``, a
``dynamic`` that is not a bool or None fail the same way). Calls are captured and replayed as
flat NumPy calls (see ``compiler/__init__.py``). What each argument does here:

* ``fullgraph=True``: a graph break raises ``Unsupported`` (torch's
  ``torch._dynamo.exc.Unsupported``, a ``RuntimeError``) instead of running the call eagerly;
* ``dynamic``: a replay's kernels are specialized to the shapes they were captured with, so in
  every mode a call with new input shapes is captured anew (a recompile, up to
  ``torch._dynamo.config.recompile_limit`` signatures, then eagerly). ``False`` is torch's meaning
  exactly (every shape its own program, no dim marked dynamic); ``None`` (torch's automatic
  dynamic) and ``True`` (dims dynamic from the start) are accepted and behave as ``False``;
* ``mode``, ``backend``, ``options``: checked, then ignored (there is one way to replay);
* ``disable=True``: the model itself, uncompiled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .nn.modules.module import Module, _register_compile_in_place

MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
BACKENDS = ("inductor", "eager", "aot_eager", "aot_eager_decomp_partition", "cudagraphs",
            "openxla", "tvm", "onnxrt")


class InvalidBackend(RuntimeError):
    """``torch._dynamo.exc.InvalidBackend``: an unknown ``backend=`` name."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Invalid backend: '{name}', see `torch._dynamo.list_backends()` for "
                         "available backends.")


def _compiled_function(fn: Any, **options: Any) -> Any:
    """``tapegrad.compiler.CompiledFunction(fn, **options)``: calls of ``fn`` captured and
    replayed."""
    # upward, loaded on first use: tapegrad.compiler sits on the package (import tapegrad stays
    # fast without it)
    from .compiler import CompiledFunction

    return CompiledFunction(fn, **options)


class OptimizedModule(Module):
    """A compiled module: calls of ``_orig_mod`` captured and replayed."""

    def __init__(self, mod: Module, fullgraph: bool = False, dynamic: bool | None = None,
                 backend: Any = "inductor") -> None:
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_compiled"] = _compiled_function(mod, fullgraph=fullgraph, module=mod,
                                                        dynamic=dynamic, backend=backend)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.__dict__["_compiled"](*args, **kwargs)

    def listing(self) -> str:
        """The NumPy-call listing of the captured programs (``CompiledFunction.listing``)."""
        return str(self.__dict__["_compiled"].listing())

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)


def compile(model: Callable | None = None, *, fullgraph: bool = False, dynamic: bool | None = None,
            backend: str | Callable | None = None, mode: str | None = None,
            options: dict | None = None, name: str | None = None, disable: bool = False,
            recompile_limit: int | None = None, isolate_recompiles: bool = False,
            shapes_spec: Any = None) -> Any:
    """``torch.compile``: the model (module or function), to run eagerly with the same results.

    Example:
        >>> import tapegrad as torch
        >>> @torch.compile(mode="max-autotune")
        ... def f(x):
        ...     return x * 2
        >>> f(torch.ones(2))
        tensor([2., 2.])
    """
    if backend is None:  # (torch's default: "inductor"; name, recompile_limit,
        backend = "inductor"  # isolate_recompiles and shapes_spec tune its caches: ignored)
    if model is None:
        def decorate(fn: Callable) -> Any:
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)

        return decorate
    check_arguments(dynamic, backend, mode, options)
    if disable:
        return model
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is provided.")
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph, dynamic, backend)
    if isinstance(model, type):
        return model
    return _compiled_function(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend)


def _compile_in_place(module: Module, *args: Any, **kwargs: Any) -> None:
    """``module.compile(*args, **kwargs)``: torch.compile's argument checks, then the module's
    calls compiled in place (``disable=True`` takes a compilation back out)."""
    # (tapegrad.compiler is imported on first use, so import tapegrad stays fast)
    from .compiler import CompiledFunction

    compile(lambda: None, *args, **kwargs)  # torch.compile's argument checks
    if kwargs.get("disable", False):
        module._compiled_call_impl = None
        return
    module._compiled_call_impl = CompiledFunction(module._call_impl,
                                                  fullgraph=kwargs.get("fullgraph", False),
                                                  module=module,
                                                  dynamic=kwargs.get("dynamic"),
                                                  backend=kwargs.get("backend", "inductor"))


_register_compile_in_place(_compile_in_place)


def check_arguments(dynamic: Any, backend: Any, mode: Any, options: Any) -> None:
    """torch.compile's checks of its arguments, with its exception types and messages."""
    if dynamic is not None and type(dynamic) is not bool:
        raise AssertionError(f"Expected enable to be a bool, got {type(dynamic)}")
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same "
            "time."
        )
    if isinstance(backend, str):
        if backend not in BACKENDS:
            raise InvalidBackend(backend)
        if backend == "inductor" and mode is not None and mode not in MODES:
            raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(MODES)}")
