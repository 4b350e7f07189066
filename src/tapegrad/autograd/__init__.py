"""tapegrad.autograd: ``backward``, ``grad``, custom ``Function``, grad modes, gradcheck.

``backward`` and ``grad`` check their arguments the way torch does and hand over to
``engine.run_backward``.

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
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._naming import public
from .._tensor import _WARNED_ONCE, Size, Tensor, install_above
from . import engine, graph, listeners
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

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    return tuple(x)


def _make_grads(outputs: tuple, grads: tuple, is_grads_batched: bool = False) -> list:
    """torch's ``_make_grads``: ones for implicit scalar gradients, shape and dtype checks for
    the given ones (an extra gradient past the last output is ignored, as torch's zip does)."""
    out: list[Tensor | None] = []
    for i, (t, g) in enumerate(zip(outputs, grads, strict=False)):
        if isinstance(t, GradientEdge):
            meta = graph.edge_metadata(t.node, t.output_nr)
            if meta is None:
                raise RuntimeError(
                    "tapegrad knows the shape of a GradientEdge's output only for edges made "
                    "by get_gradient_edge()"
                )
            shape, dtype = meta
        elif isinstance(t, Tensor):
            shape, dtype = tuple(t._data.shape), t.dtype
        else:
            raise AssertionError("Expected output to be a torch.Tensor")
        if isinstance(g, Tensor):
            first = g[0] if is_grads_batched else g
            if tuple(first._data.shape) != shape:
                j = grads.index(g)
                if is_grads_batched:
                    shown = Size(first._data.shape[1:])  # (what torch reports)
                    raise RuntimeError(
                        "If `is_grads_batched=True`, we interpret the first dimension of each "
                        "grad_output as the batch dimension. The sizes of the remaining "
                        "dimensions are expected to match the shape of corresponding output, "
                        f"but a mismatch was detected: grad_output[{j}] has a shape of "
                        f"{shown} and output[{i}] has a shape of "
                        f"{Size(shape)}. If you only want some tensors in `grad_output` to be "
                        "considered batched, consider using vmap."
                    )
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{j}] has a shape of {Size(first._data.shape)}"
                    f" and output[{i}] has a shape of {Size(shape)}."
                )
            if dtype.is_complex != g.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{grads.index(g)}] has a dtype "
                    f"of {g.dtype} and output[{i}] has a dtype of {dtype}."
                )
            out.append(g)
        elif g is None:
            if isinstance(t, GradientEdge) or t._requires_grad:
                if not all(s == 1 for s in shape):
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not dtype.is_floating_point:
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but got "
                        f"{dtype}"
                    )
                out.append(Tensor._make(np.ones(shape, dtype=dtype.np)))
            else:
                out.append(None)
        else:
            raise TypeError(
                f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return out


def _check_run(tensors: tuple, grads: list) -> None:
    """The engine's own argument checks (torch's run_backward, in C++)."""
    if len(tensors) != len(grads):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    for i, (t, g) in enumerate(zip(tensors, grads, strict=True)):
        if isinstance(t, Tensor) and not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None and (not isinstance(t, Tensor) or t._requires_grad):
            raise RuntimeError(
                f"element {i} of gradients tuple is None, but the corresponding Tensor requires "
                "grad")


def _check_inputs(inputs: tuple, accumulate: bool) -> None:
    for t in inputs:
        if isinstance(t, GradientEdge):
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError("all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        if accumulate:
            t.retain_grad()  # backward(inputs=[non-leaf]) fills its .grad, as torch's does
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")


def _inputs_tuple(inputs: Any, where: str) -> tuple:
    if isinstance(inputs, (Tensor, GradientEdge)):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{where}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    return tuple(inputs)


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad`` (only into
    ``inputs``' with ``inputs`` given; a non-leaf input retains its gradient).

    Example:
        >>> import tapegrad as torch
        >>> x = torch.tensor(3.0, requires_grad=True)
        >>> torch.autograd.backward(x * x)
        >>> x.grad
        tensor(6.)
    """
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError(
                "`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                "`backward()`. Please only use `grad_tensors`."
            )
    inputs_tuple = () if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and not inputs_tuple:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _as_tuple(tensors) if tensors is not None else (None,)
    if create_graph and not _WARNED_ONCE.get("create_graph"):
        _WARNED_ONCE["create_graph"] = True  # torch's TORCH_WARN_ONCE: once per process
        warnings.warn(CREATE_GRAPH_WARNING, UserWarning, stacklevel=3)
    grads = _tensor_or_tensors_to_tuple(grad_tensors, len(outputs))
    grad_list = _make_grads(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    _check_run(outputs, grad_list)
    _check_inputs(inputs_tuple, accumulate=True)
    engine.run_backward(outputs, grad_list, retain_graph, create_graph,
                        inputs=inputs_tuple if inputs is not None else None, accumulate=True)


install_above(backward=backward)  # Tensor.backward


def _tensor_or_tensors_to_tuple(x: Any, length: int) -> tuple:
    if x is None:
        return (None,) * length
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


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
    from ..ops.shape import stack  # upward: the stack op (ops layer) joins the passes' results

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
        out.append(stack(gs, 0))
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
