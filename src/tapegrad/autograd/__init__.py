"""tapegrad.autograd: ``backward``, ``grad``, custom ``Function``, grad modes, gradcheck.

``backward`` and ``grad`` check their arguments the way torch does and hand over to
``engine.run_backward``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._tensor import _WARNED_ONCE, Tensor
from . import engine, graph
from .grad_mode import _force_original_view_tracking as _force_original_view_tracking
from .grad_mode import _unsafe_preserve_version_counter as _unsafe_preserve_version_counter
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    is_view_replay_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .graph import _anomaly

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _make_grads(outputs: tuple, grads: tuple, is_grads_batched: bool = False) -> list:
    """Fill in implicit gradients (ones for scalar outputs) and check the given ones."""
    if len(grads) != len(outputs):
        raise RuntimeError(
            f"grad requires one grad_output per output, but got {len(grads)} grad_outputs and "
            f"{len(outputs)} outputs"
        ) if grads else RuntimeError("grad_outputs mismatch")
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads, strict=True)):
        if g is None:
            if t._requires_grad and t._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t._requires_grad and t._data.dtype.kind == "c":
                raise RuntimeError(
                    "grad can be implicitly created only for real scalar outputs but got "
                    f"torch.{t.dtype.name}"
                )
            g = Tensor._make(np.ones(t._data.shape, dtype=t._data.dtype))
        elif not isinstance(g, Tensor):
            g = Tensor._make(np.asarray(g, dtype=t._data.dtype))
        elif g._data.shape != t._data.shape:
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {t.shape}."
            )
        out.append(g)
    return out


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    grad_variables: Any = None,
    inputs: Any = None,
) -> None:
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad``.

    Example:
        >>> import tapegrad as torch
        >>> x = torch.tensor(3.0, requires_grad=True)
        >>> torch.autograd.backward(x * x)
        >>> x.grad
        tensor(6.)
    """
    if create_graph and not _WARNED_ONCE.get("create_graph"):
        _WARNED_ONCE["create_graph"] = True  # torch's TORCH_WARN_ONCE: once per process
        warnings.warn(CREATE_GRAPH_WARNING, UserWarning, stacklevel=3)
    outputs = _as_tuple(tensors)
    if grad_tensors is None:
        grads: tuple = (None,) * len(outputs)
    else:
        grads = _as_tuple(grad_tensors) if not isinstance(grad_tensors, Tensor) else (
            grad_tensors,)
    if retain_graph is None:
        retain_graph = create_graph
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    grad_list = _make_grads(outputs, grads)
    input_list = None
    if inputs is not None:
        input_list = list(_as_tuple(inputs))
        if not input_list:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        for t in input_list:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    captured = engine.run_backward(outputs, grad_list, retain_graph, create_graph,
                                   inputs=input_list, accumulate=True)
    if input_list is not None and captured is not None:
        for t, g in zip(input_list, captured, strict=True):
            if t.grad_fn is not None and g is not None:  # non-leaf inputs get .grad too
                if t._grad is None:
                    t._grad = g if create_graph else Tensor._make(np.array(g._data, copy=True))
                else:
                    t._grad = t._grad + g


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
) -> tuple:
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned (``.grad`` is left alone).

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
    ins = _as_tuple(inputs)
    if grad_outputs is None:
        gouts: tuple = (None,) * len(outs)
    else:
        gouts = (grad_outputs,) if isinstance(grad_outputs, Tensor) else _as_tuple(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    for t in ins:
        if not isinstance(t, Tensor):
            raise TypeError(f"grad(): inputs must be Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    for i, t in enumerate(outs):
        if not t._requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
    grad_list = _make_grads(outs, gouts)
    result = engine.run_backward(outs, grad_list, retain_graph, create_graph, inputs=list(ins),
                                 accumulate=False)
    assert result is not None
    final = []
    for i, (t, g) in enumerate(zip(ins, result, strict=True)):
        if g is None:
            if materialize_grads:
                g = Tensor._make(np.zeros(t._data.shape, dtype=t._data.dtype))
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
        elif not create_graph:
            g = g.detach()
        final.append(g)
    return tuple(final)


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


def is_anomaly_enabled() -> bool:
    """Whether anomaly detection is on (``torch.is_anomaly_enabled``)."""
    return _anomaly["enabled"]


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode checks gradients for NaN (``torch.is_anomaly_check_nan_enabled``)."""
    return _anomaly["check_nan"]


from .._legacy import Variable  # noqa: E402  (the legacy constructor, see _legacy.py)
from . import forward_ad, functional  # noqa: E402
from .function import Function, FunctionCtx, once_differentiable  # noqa: E402
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402

__all__ = [
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
    "is_inference_mode_enabled",
    "is_multithreading_enabled",
    "is_view_replay_enabled",
    "no_grad",
    "once_differentiable",
    "set_detect_anomaly",
    "set_grad_enabled",
    "set_multithreading_enabled",
    "Sequence",
]
