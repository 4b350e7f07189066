"""``torch.nn.utils.weight_norm``: the older, hook-based weight normalization.

``module.weight`` becomes ``weight_g`` (magnitude) and ``weight_v`` (direction) parameters and
a plain attribute ``weight = g v / ||v||`` recomputed by a forward pre-hook. Deprecated in
torch in favour of ``nn.utils.parametrizations.weight_norm`` (which warns nothing and keeps
``module.weight`` a property).
"""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

from ...ops.weight_norm import _weight_norm, norm_except_dim
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g``, ``<name>_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: int | None) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: int | None) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


T_module = TypeVar("T_module", bound=Module)


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """w = g v / ||v|| with g = ``<name>_g`` and v = ``<name>_v`` parameters (the norm over
    every dimension but ``dim``; over all with ``dim=None``)."""
    WeightNorm.apply(module, name, dim)
    return module


def _remove_norm_hook(module: Module, hook_type: Any, name: str) -> bool:
    """Undo the reparametrization of ``module.<name>`` by the forward pre-hook of ``hook_type``
    (WeightNorm, SpectralNorm) and drop the hook; False when there is none."""
    hooks: dict[int, Any] = module._forward_pre_hooks
    for k, hook in hooks.items():
        if isinstance(hook, hook_type) and hook.name == name:
            hook.remove(module)
            del hooks[k]
            return True
    return False


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Fold ``<name>_g`` and ``<name>_v`` back into one parameter ``<name>``."""
    if _remove_norm_hook(module, WeightNorm, name):
        return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
