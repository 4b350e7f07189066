"""``DataParallel`` as a torch without CUDA has it: the module itself, called directly.

torch's ``DataParallel`` splits a batch over GPUs. With no GPU (tapegrad computes on the CPU
only) torch keeps the module, no device ids, and its ``forward`` calls the module; the state
dict has the ``module.`` prefix. That is all there is here.
"""

from __future__ import annotations

from typing import Any

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """``DataParallel(module, device_ids=None, output_device=None, dim=0)``."""

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None,
                 dim: int = 0) -> None:
        super().__init__()
        self.module = module
        self.device_ids: list = []
        self.dim = dim
        self.output_device = None
        self.src_device_obj = None

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


def data_parallel(module: Module, inputs: Any, device_ids: Any = None,
                  output_device: Any = None, dim: int = 0,
                  module_kwargs: Any = None) -> Any:
    """``module(*inputs)``: with no GPU there is nothing to spread the batch over."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return module(*inputs, **(module_kwargs or {}))
