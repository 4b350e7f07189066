"""tapegrad.autograd: ``backward``, ``grad``, custom ``Function``, grad modes, gradcheck.

``backward`` and ``grad`` check their arguments the way torch does and hand over to
``engine.run_backward``. ``backward``, which every ``loss.backward()`` calls, is defined in
``engine`` beside the pass it starts (with the checks ``grad`` shares), and exported here.

This package is two layers. Its core -- the graph (``graph``), the grad modes (``grad_mode``),
the backward engine (``engine``) and the entry points defined here -- sits below the ops: every
op module imports ``autograd.graph`` and ``autograd.grad_mode``, and importing any of them runs
this file first, so this file imports only the core (and what imports no op: ``gradcheck``,
``Variable``). The parts built on the ops -- custom ``Function`` (``function``, which makes
views through ops/_views.py), forward-mode AD (``forward_ad``, the registry's detour) and the
jacobian/hessian helpers (``functional``, which build on both) -- are loaded on first use
through the one table ``_LAZY`` and ``__getattr__`` below (PEP 562), as torchvision.datasets
loads its datasets: ``from tapegrad.autograd import Function`` and ``import
tapegrad.autograd.forward_ad as fwAD`` work as before (the package root imports
``functional`` once every layer has loaded). Moving the core into a
package of its own would have renamed ``tapegrad.autograd.graph`` and ``.engine``, which users,
the tests and the tools reach by those names.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping as Mapping  # (torch.autograd has it too)
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._naming import public
from .._tensor import Tensor, install_above
from . import engine, graph, listeners
from .engine import (  # the entry point backward, and the argument checks grad shares
    _as_tuple,
    _check_inputs,
    _check_run,
    _inputs_tuple,
    _make_grads,
    _tensor_or_tensors_to_tuple,
    backward,
)
from .grad_mode import _force_original_view_tracking as _force_original_view_tracking
from .grad_mode import _unsafe_preserve_version_counter as _unsafe_preserve_version_counter
from .grad_mode import (
    enable_grad,
    enforce_grad_layout_policy,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    is_view_replay_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .graph import GradientEdge, _anomaly

install_above(backward=backward)  # Tensor.backward: the engine's entry point


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> Any:
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned (``.grad`` is left alone).

    ``is_grads_batched``: the first dimension of each ``grad_outputs`` tensor is a batch of
    vectors, and each result gets that batch dimension in front. ``materialize_grads``: zeros
    instead of None for inputs the outputs do not depend on.

    Example:
        >>> import tapegrad as torch
        >>> x = torch.tensor(2.0, requires_grad=True)
        >>> torch.autograd.grad(x ** 3, x)
        (tensor(12.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
            "allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    outs = _as_tuple(outputs)
    ins = _inputs_tuple(inputs, "grad")
    if not ins:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "torch.autograd.backward.",
            FutureWarning,
            stacklevel=2,
        )
    gouts = _tensor_or_tensors_to_tuple(grad_outputs, len(outs))
    grad_list = _make_grads(outs, gouts, is_grads_batched=is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    _check_run(outs, grad_list)
    _check_inputs(ins, accumulate=False)
    result: tuple | None
    if is_grads_batched:
        result = _batched_grad(outs, grad_list, ins, retain_graph, create_graph)
    else:
        result = engine.run_backward(outs, grad_list, retain_graph, create_graph,
                                     inputs=ins, accumulate=False)
    assert result is not None
    final = []
    for i, (t, g) in enumerate(zip(ins, result, strict=True)):
        if g is None:
            if materialize_grads:
                if isinstance(t, GradientEdge):
                    raise RuntimeError(
                        "materialize_grads cannot be used when the given input is a "
                        "GradientEdge")
                g = Tensor._make(np.zeros(t._data.shape, dtype=t._data.dtype),
                                 requires_grad=create_graph)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        elif not create_graph:
            g = g.detach()
        final.append(g)
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), final, strict=True))
    return tuple(final)


def _batched_grad(outs: tuple, grad_list: list, ins: tuple, retain_graph: bool,
                  create_graph: bool) -> tuple:
    """``is_grads_batched``: one backward pass per vector of the batch, the results stacked.
    (torch vectorizes the passes with vmap; the values are the same.)"""
    sizes = {g._data.shape[0] for g in grad_list if g is not None}
    n = sizes.pop() if sizes else 1
    per_input: list[list] = [[] for _ in ins]
    for b in range(n):
        grads_b = [g[b] if g is not None else None for g in grad_list]
        keep = retain_graph or b < n - 1
        res = engine.run_backward(outs, grads_b, keep, create_graph, inputs=ins,
                                  accumulate=False)
        assert res is not None
        for j, g in enumerate(res):
            per_input[j].append(g)
    out: list[Tensor | None] = []
    for j, gs in enumerate(per_input):
        if all(g is None for g in gs):
            out.append(None)
            continue
        t = ins[j]
        shape = t._data.shape if isinstance(t, Tensor) else None
        gs = [g if g is not None else Tensor._make(np.zeros(shape, dtype=t._data.dtype))
              for g in gs]
        out.append(engine.stack(gs, 0))  # (the stack op, ops/shape.py)
    return tuple(out)


def _is_checkpoint_valid() -> bool:
    """False while a backward restricted to ``inputs`` (autograd.grad, backward(inputs=...))
    runs: reentrant checkpointing cannot work there (torch's engine check)."""
    task = graph.current_task()
    return task is None or task.needed is None


@public(".autograd.anomaly_mode")
class set_detect_anomaly:
    """Turn anomaly detection on or off, as a call or as a context manager.

    On, every graph node remembers the forward call that made it; a backward node that fails
    prints that traceback (a UserWarning) before the error, and with ``check_nan`` a NaN
    gradient raises ``Function 'LogBackward0' returned nan values in its 0th output.``

    Example:
        >>> x = torch.tensor([0.0], requires_grad=True)
        >>> with torch.autograd.set_detect_anomaly(True):
        ...     y = (x.sqrt() * 0).sum()  # backward: 0 * inf = nan
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = _anomaly["enabled"]
        self.prev_check_nan = _anomaly["check_nan"]
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


@public(".autograd.anomaly_mode")
class detect_anomaly:
    """Context manager: anomaly detection on inside the block (see ``set_detect_anomaly``).

    Like torch's, it is a context manager only, not a decorator.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = _anomaly["enabled"]
        self.check_nan = check_nan
        self.prev_check_nan = _anomaly["check_nan"]
        warnings.warn(
            "Anomaly Detection has been enabled. This mode will increase the runtime and should "
            "only be enabled for debugging.",
            UserWarning,
            stacklevel=2,
        )

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *exc: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    """``torch.set_anomaly_enabled``: the switch behind ``set_detect_anomaly``."""
    _anomaly["enabled"] = bool(enabled)
    _anomaly["check_nan"] = bool(check_nan)
    listeners.pop(engine.NAN_CHECK)  # (its NaN check is one of the engine's listeners)
    if enabled and check_nan:
        listeners.push(engine.NAN_CHECK)


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return _anomaly["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks gradients for NaN (``torch.is_anomaly_check_nan_enabled``)."""
    return _anomaly["check_nan"]


from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from .variable import Variable  # noqa: E402  (the legacy constructor)

__all__ = [
    "enforce_grad_layout_policy",
    "is_view_replay_enabled",
    "variable",
    "Function",
    "FunctionCtx",
    "GradcheckError",
    "Variable",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "forward_ad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "graph",
    "inference_mode",
    "is_grad_enabled",
    "is_multithreading_enabled",
    "is_inference_mode_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
    "set_multithreading_enabled",
    "Sequence",
]

from . import variable as _variable_module  # noqa: E402, F401  (the module, for pickles)


def variable(*args: Any, **kwargs: Any) -> Any:
    """Deprecated: ``torch.tensor(...)`` makes tensors (torch.autograd.variable is this
    function; the module of that name holds ``Variable``)."""
    raise RuntimeError("torch.autograd.variable(...) is deprecated, use torch.tensor(...) "
                       "instead")


# What is loaded on first use (the module docstring says why): a submodule, by its name (None),
# or a name, by the module that defines it (relative to this package).
_LAZY: dict[str, str | None] = {
    # above the ops: custom Function, forward-mode AD, and the jacobian/hessian helpers
    "function": None, "forward_ad": None, "functional": None,
    "Function": ".function", "FunctionCtx": ".function", "once_differentiable": ".function",
    # torch.autograd.profiler and what torch.autograd shows of it
    "profiler": None, "profiler_util": None, "anomaly_mode": None,
    "kineto_available": ".profiler", "DeviceType": ".profiler_util",
    "ProfilerActivity": "..profiler.profiler", "has_torch_function": "..overrides",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
    where = _LAZY[name]
    if where is None:
        return importlib.import_module(f"{__name__}.{name}")
    return getattr(importlib.import_module(where, __name__), name)
