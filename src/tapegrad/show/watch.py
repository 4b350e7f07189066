"""What the health check watches while a forward and a backward run: the forward hooks on every
module (``ForwardWatch``: which modules ran, under no_grad or not, dead ReLU units) and the
listening to ``Tensor.backward`` / ``Tensor.detach``.

``health(model, inputs=...)`` runs one forward under a ``ForwardWatch``; the ``Monitor``
(``monitor.py``) keeps one attached over training and listens to every backward too. Both
watchers are told through :func:`listen`: while at least one is attached, a listener on
autograd/listeners.py's stack hears what ``Tensor.backward`` and ``Tensor.detach`` announce
and tells them; with none, it is off the stack and nothing is paid.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import listeners as autograd_listeners
from ..autograd.grad_mode import is_grad_enabled
from ..nn.modules.activation import ReLU, ReLU6

__all__ = ["ForwardWatch", "ModuleCall", "listen", "unlisten"]


@dataclass
class ModuleCall:
    """What a forward hook saw of one module in the last forward pass."""

    grad_enabled: bool
    output_node: Any = None  # weakref to the output's grad_fn, or None
    dead: int | None = None  # ReLU modules: units that were zero for the whole batch
    units: int | None = None
    detached: bool = False  # the output was .detach()ed afterwards



# ---------------------------------------------------------------------------------------------
# Tensor.backward / Tensor.detach, heard while something listens

_LISTENERS: list[Any] = []  # attached ForwardWatch and Monitor objects


class _NonFinite(autograd_listeners.Listener):
    """The engine's listener during a watched backward: tells the watchers of each node that
    returned a NaN or infinite gradient (its first such output)."""

    def __init__(self, watchers: list) -> None:
        self.watchers = watchers

    def node_returned(self, node: Any, grads: tuple) -> None:
        for i, g in enumerate(grads):
            if g is None or not (g.dtype.is_floating_point or g.dtype.is_complex):
                continue
            if not np.isfinite(g._data).all():
                for obj in self.watchers:
                    obj._on_nonfinite(node, i)
                return


class _Watch(autograd_listeners.Listener):
    """On the listener stack while a watcher is attached: tells them of each
    ``Tensor.backward`` (and, during it, of non-finite gradients) and each ``Tensor.detach``."""

    def run_backward(self, tensor: Tensor, run: Callable) -> Any:
        watchers = list(_LISTENERS)
        for obj in watchers:
            obj._before_backward(tensor)
        with autograd_listeners.listening(_NonFinite(watchers)):
            run()
        for obj in watchers:
            obj._after_backward(tensor)

    def detaching(self, tensor: Tensor) -> None:
        node = tensor.grad_fn
        if node is not None:
            for obj in _LISTENERS:
                obj._on_detach(node)


WATCH = _Watch()


def listen(obj: Any) -> None:
    """Tell ``obj`` (a ForwardWatch or a Monitor) of every backward, detach and non-finite
    gradient from now on; the first one attached pushes ``WATCH`` on the listener stack."""
    if not _LISTENERS:
        autograd_listeners.push(WATCH)
    _LISTENERS.append(obj)


def unlisten(obj: Any) -> None:
    """Stop telling ``obj``; the last one gone takes ``WATCH`` off the stack."""
    if obj in _LISTENERS:
        _LISTENERS.remove(obj)
        if not _LISTENERS:
            autograd_listeners.pop(WATCH)


# ---------------------------------------------------------------------------------------------
# Forward hooks


def _dead_units(out: np.ndarray) -> tuple[int, int]:
    """(units that were zero for every sample of the batch, units). Units are the features of
    a (N, F) or (N, L, F) output and the channels of a (N, C, H, W) one."""
    if out.ndim <= 1:
        alive = out != 0
    elif out.ndim in (4, 5):
        alive = np.any(out != 0, axis=tuple(i for i in range(out.ndim) if i != 1))
    else:
        alive = np.any(out != 0, axis=tuple(range(out.ndim - 1)))
    return int(alive.size - np.count_nonzero(alive)), int(alive.size)


class ForwardWatch:
    """Forward hooks on every module of a model: for each, whether it ran, with grad mode on or
    off, its output's grad_fn (weakly), and for ReLU modules the units dead over the batch."""

    def __init__(self, model: Any) -> None:
        self.calls: dict[str, ModuleCall] = {}
        self.last_calls: dict[str, ModuleCall] = {}
        self._by_node: dict[int, ModuleCall] = {}  # id(output's grad_fn) -> its module's call
        self._handles = []
        self._relu = (ReLU, ReLU6)
        for name, module in model.named_modules():
            self._handles.append(module.register_forward_hook(self._hook_for(name)))
        listen(self)

    def _hook_for(self, name: str) -> Callable:
        relu = self._relu

        def hook(module: Any, args: Any, output: Any) -> None:
            grad = is_grad_enabled()
            prev = self.calls.get(name)
            call = ModuleCall(grad_enabled=grad or (prev is not None and prev.grad_enabled))
            if isinstance(output, Tensor):
                if output.grad_fn is not None:
                    call.output_node = weakref.ref(output.grad_fn)
                    if len(self._by_node) > 100_000:  # forwards without a backward between
                        self._by_node.clear()
                    self._by_node[id(output.grad_fn)] = call
                if isinstance(module, relu):
                    call.dead, call.units = _dead_units(np.asarray(output._data))
            self.calls[name] = call

        return hook

    def snapshot(self) -> None:
        """The forward that just ended becomes ``last_calls``; the next one starts empty."""
        if self.calls:
            self.last_calls = self.calls
            self.calls = {}
            self._by_node = {}

    def _before_backward(self, loss: Tensor) -> None:
        pass

    def _after_backward(self, loss: Tensor) -> None:
        pass

    def _on_nonfinite(self, node: Any, i: int) -> None:
        pass

    def _on_detach(self, node: Any) -> None:
        call = self._by_node.get(id(node))
        if call is not None and call.output_node is not None and call.output_node() is node:
            call.detached = True

    def detach(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []
        unlisten(self)
