"""``torch._dynamo`` under ``import tapegrad as torch``: the names user code reaches for there
(``reset``, ``explain``, ``disable``, ``graph_break``, ``mark_dynamic``, ``config``, ``exc``),
backed by ``tapegrad.compiler``. tapegrad has no bytecode tracer; what each name means for a
capture of NumPy calls is in ``compiler/api.py``.
"""

from __future__ import annotations

from typing import Any

from ..compiler import explain as _explain
from ..compiler.api import (
    allow_in_graph,
    assume_constant_result,
    disable,
    graph_break,
    is_compiling,
    list_backends,
    mark_dynamic,
    mark_static,
    maybe_mark_dynamic,
    reset,
    set_stance,
)
from . import config, exc

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "exc", "explain",
           "graph_break", "is_compiling", "list_backends", "mark_dynamic", "mark_static",
           "maybe_mark_dynamic", "reset", "set_stance"]


def explain(f: Any, *extra_args: Any, **extra_kwargs: Any) -> Any:
    """``explain(f)(*args)``: one capture of ``f``'s call and its graph breaks (also the older
    ``explain(f, *args)``)."""
    if extra_args or extra_kwargs:
        return _explain(f)(*extra_args, **extra_kwargs)
    return _explain(f)
