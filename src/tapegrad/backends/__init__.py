"""``torch.backends``: the switches and availability checks of torch's backends, as a
CPU-only build answers them.

tapegrad computes with NumPy on the CPU, so every accelerator backend is unavailable
(``cudnn.is_available()``, ``mps.is_available()``, ``cuda.is_built()`` are False), and so are
the CPU libraries torch may be built with and tapegrad does not use (MKL, oneDNN alias mkldnn,
OpenMP), as in a torch built without them. The settable flags keep what a program sets, with
torch's type checks (``cudnn.benchmark = 1`` is torch's RuntimeError), so code that tunes
them runs unchanged; none of them changes tapegrad's results.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "nnpack", "openmp",
           "opt_einsum"]

_frozen = [False]


def flags_frozen() -> bool:
    return _frozen[0]


def disable_global_flags() -> None:
    _frozen[0] = True


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
    import sys

    sys.modules[module_name].__class__ = cls


def flag_context(state: dict, keys: tuple[str, ...], apply: Callable[[dict], None]) -> Any:
    """A context manager factory: set ``keys`` in ``state`` for a block, then restore them."""
    import contextlib

    @contextlib.contextmanager
    def manager(values: dict) -> Any:
        saved = {k: state[k] for k in keys}
        apply(values)
        try:
            yield
        finally:
            state.update(saved)

    return manager


from . import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, nnpack, openmp, opt_einsum  # noqa: E402
