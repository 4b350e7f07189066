"""``torch.nn.parallel``: ``DistributedDataParallel`` (one model per rank, gradients averaged
over MPI during backward) and ``DataParallel`` (on the CPU, the module itself).

``DistributedDataParallel`` is imported on first use, with ``tapegrad.distributed``, so that
``import tapegrad`` does not load the distributed package."""

from typing import Any

from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


def __getattr__(name: str) -> Any:
    if name in ("DistributedDataParallel", "distributed"):
        import importlib  # importlib: here, keeping the package's namespace as torch's

        module = importlib.import_module(f"{__name__}.distributed")
        return module if name == "distributed" else module.DistributedDataParallel
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")
