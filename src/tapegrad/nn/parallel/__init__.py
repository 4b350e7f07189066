"""``torch.nn.parallel``: ``DistributedDataParallel`` (one model per rank, gradients averaged
over MPI during backward) and ``DataParallel`` (on the CPU, the module itself)."""

from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
