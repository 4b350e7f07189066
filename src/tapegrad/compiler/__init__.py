"""``tapegrad.compile``: capture a call once, then replay it as flat NumPy calls.

The pieces, in the order a call meets them:

* ``capture.py``: the first calls run eagerly while a recorder writes down every kernel call
  (forward kernels, the backward rules' ops, the engine's gradient sums and accumulations, the
  optimizer's step as one opaque call, the library's value checks such as a target's range),
  and notes graph breaks;
* ``program.py``: the recorded steps become one generated Python function, one NumPy-level call
  per line (``listing()`` prints it, ``dot()`` draws its data flow);
* ``guards.py``: what the capture assumed (shapes, dtypes, grad mode, module flags, parameters);
* ``replay.py``: the compiled callable, its cache of captures and the choice at each call;
* ``aot.py``: a call whose outputs need their graph (``model = torch.compile(model)`` in an
  eager training loop): its backward captured too, a forward and a backward program joined
  at replay by one ``CompiledFunctionBackward`` node.

``explain(fn)(*args)`` runs one capture and reports the graph breaks, like
``torch._dynamo.explain``. This package is also ``torch.compiler`` under ``import tapegrad as
torch``: ``set_stance``, ``reset``, ``disable``, ``is_compiling`` and the rest are in
``api.py``; ``tapegrad._dynamo`` has the same under torch's private names, with its ``config``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._compile import compile
from .._creation import as_tensor
from .._tensor import Tensor
from .api import (
    allow_in_graph,
    assume_constant_result,
    cudagraph_mark_step_begin,
    disable,
    get_default_backend,
    is_compiling,
    is_dynamo_compiling,
    is_exporting,
    list_backends,
    nested_compile_region,
    reset,
    set_default_backend,
    set_stance,
    substitute_in_graph,
)
from .capture import GraphBreak, Recorder, Unsupported, capturing, recording
from .guards import Rebinds, reachable
from .replay import CompiledFunction

__all__ = ["CompiledFunction", "ExplainOutput", "GraphBreak", "Unsupported", "allow_in_graph",
           "assume_constant_result", "capturing", "compile", "cudagraph_mark_step_begin",
           "disable", "explain", "get_default_backend", "is_compiling", "is_dynamo_compiling",
           "is_exporting", "list_backends", "nested_compile_region", "reset",
           "set_default_backend", "set_stance", "substitute_in_graph", "wrap_numpy"]


@dataclass
class ExplainOutput:
    """What one capture of a call found (``torch._dynamo.explain``'s summary, in brief)."""

    graph_count: int
    graph_break_count: int
    op_count: int
    break_reasons: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"Graph Count: {self.graph_count}",
                 f"Graph Break Count: {self.graph_break_count}",
                 f"Op Count: {self.op_count}"]
        if self.break_reasons:
            lines.append("Break Reasons:")
            lines += [f"  Break Reason {i + 1}: {r}" for i, r in enumerate(self.break_reasons)]
        return "\n".join(lines)


def explain(fn: Any) -> Any:
    """``explain(fn)(*args, **kwargs)``: run ``fn`` once while capturing; report the breaks.

    The call runs eagerly (its effects happen, as with ``torch._dynamo.explain``).
    """

    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        rec = Recorder(args, kwargs)
        spaces: list = []
        reachable(fn, spaces=spaces)
        rebinds = Rebinds(spaces)
        with recording(rec):
            fn(*args, **kwargs)
        rec.fullgraph = False
        rec.side_effects(rebinds.change())
        n_ops = sum(s.kind != "bind" for s in rec.steps)
        return ExplainOutput(1 if not rec.breaks else 0, len(rec.breaks), n_ops,
                             list(rec.breaks))

    return run


def wrap_numpy(fn: Any) -> Any:
    """``fn`` (a function of NumPy arrays) as a function of tensors: tensor arguments (also
    inside lists, tuples and dicts) are passed as arrays (``x.numpy()``), and arrays returned
    come back as tensors.

    Example:
        >>> import numpy as np
        >>> import tapegrad as torch
        >>> torch.compiler.wrap_numpy(lambda a: np.sum(a * a, axis=0))(torch.ones(2, 3))
        tensor([2., 2., 2.])
    """
    def convert(value: Any, kind: type, how: Any) -> Any:
        if isinstance(value, kind):
            return how(value)
        if isinstance(value, (list, tuple)):
            items = [convert(v, kind, how) for v in value]
            return type(value)(items) if type(value) in (list, tuple) else type(value)(*items)
        if isinstance(value, dict):
            return {k: convert(v, kind, how) for k, v in value.items()}
        return value

    @functools.wraps(fn)
    def wrap(*args: Any, **kwargs: Any) -> Any:
        args, kwargs = convert((args, kwargs), Tensor, lambda t: t.numpy())
        return convert(fn(*args, **kwargs), np.ndarray, as_tensor)

    return wrap
