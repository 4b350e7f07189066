"""Lazy modules: layers that learn their input size at their first call.

``nn.LazyLinear(10)`` has no ``in_features``: its weight is an ``UninitializedParameter``
until the first ``forward``, when a forward pre-hook calls ``initialize_parameters(input)``
(``in_features = input.shape[-1]``), gives the parameters their shapes, initializes them as
the layer always does (so after the same seed, the same values as ``nn.Linear(in, 10)``
made at that moment), and makes the module the layer it stands for (``cls_to_become``:
``Linear``). A state dict with shapes loads into a lazy module too (the parameters take the
shapes loaded).
"""

from __future__ import annotations

import itertools
from typing import Any

from ...autograd.grad_mode import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """The mixin of lazy modules (see the module docstring); a subclass defines
    ``initialize_parameters(*args)`` and ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(  # type: ignore[attr-defined]
            self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(  # type: ignore[attr-defined]
            self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():  # type: ignore[attr-defined]
            if param is not None:
                destination[prefix + name] = (param if is_lazy(param) or keep_vars
                                              else param.detach())
        for name, buf in self._buffers.items():  # type: ignore[attr-defined]
            if buf is not None and name not in self._non_persistent_buffers_set:  # type: ignore[attr-defined]
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict: dict, prefix: str, local_metadata: dict,
                        strict: bool, missing_keys: list, unexpected_keys: list,
                        error_msgs: list) -> None:
        """Before loading: an uninitialized parameter takes the shape of the one loaded."""
        for name, param in itertools.chain(self._parameters.items(),  # type: ignore[attr-defined]
                                           self._buffers.items()):  # type: ignore[attr-defined]
            key = prefix + name
            if key in state_dict and param is not None and is_lazy(param):
                loaded = state_dict[key]
                if not is_lazy(loaded):
                    with no_grad():
                        param.materialize(loaded.shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Give the parameters their shapes from the first call's arguments."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer has no shape yet."""
        return any(is_lazy(p) for p in itertools.chain(
            self._parameters.values(), self._buffers.values()))  # type: ignore[attr-defined]

    def _infer_parameters(self, module: Any, args: tuple, kwargs: dict | None = None) -> None:
        """The forward pre-hook: initialize, then become the layer and drop the hooks."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully "  # type: ignore[attr-defined]
                               "initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> Any:
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")
