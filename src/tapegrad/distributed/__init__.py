"""``torch.distributed`` on MPI: process groups, collectives, stores, and the launcher.

    import tapegrad as torch
    import tapegrad.distributed as dist
    dist.init_process_group("gloo")          # RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT
    t = torch.ones(3) * dist.get_rank()
    dist.all_reduce(t)                       # the sum over ranks, on every rank

Start the ranks with ``tapegrad run --nproc-per-node 2 train.py`` (or ``python -m
tapegrad.distributed.run``, torchrun's flags). The collectives run on MPI through mpi4py, the
``tapegrad[distributed]`` extra (``pip install mpi4py mpich``); it is imported when a process
group is made, so without it this package imports, ``is_available()`` is False and
``init_process_group`` says how to install it.

* ``distributed_c10d.py``: process groups, the collectives, ``Work``, ``ReduceOp``;
* ``_mpi.py``: mpi4py, MPI data types and reductions, the watchdog that ends a job whose
  collective outlives its timeout;
* ``_store.py``: ``TCPStore``, ``FileStore``, ``HashStore``, ``PrefixStore``;
* ``nn/functional.py``: collectives that autograd differentiates;
* ``run.py``, ``_rank.py``: the launcher and what runs in each rank.
"""

from __future__ import annotations

from . import _mpi
from ._errors import DistBackendError, DistError, DistNetworkError, DistStoreError
from ._store import FileStore, HashStore, PrefixStore, Store, TCPStore
from .distributed_c10d import (
    Backend,
    GroupMember,
    P2POp,
    ProcessGroup,
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_gather_object,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    batch_isend_irecv,
    broadcast,
    broadcast_object_list,
    default_pg_timeout,
    destroy_process_group,
    gather,
    gather_object,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    irecv,
    is_backend_available,
    is_gloo_available,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    is_torchelastic_launched,
    isend,
    monitored_barrier,
    new_group,
    recv,
    recv_object_list,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    scatter_object_list,
    send,
    send_object_list,
)


def is_available() -> bool:
    """True when the MPI the collectives run on (mpi4py) is installed."""
    return _mpi.available()


__all__ = [
    "Backend", "DistBackendError", "DistError", "DistNetworkError", "DistStoreError",
    "FileStore", "GroupMember", "HashStore", "P2POp", "PrefixStore", "ProcessGroup",
    "ReduceOp", "Store", "TCPStore", "Work", "all_gather", "all_gather_into_tensor",
    "all_gather_object", "all_reduce", "all_to_all", "all_to_all_single", "barrier",
    "batch_isend_irecv", "broadcast", "broadcast_object_list", "default_pg_timeout",
    "destroy_process_group", "gather", "gather_object", "get_backend", "get_global_rank",
    "get_group_rank", "get_process_group_ranks", "get_rank", "get_world_size", "group",
    "init_process_group", "irecv", "is_available", "is_backend_available",
    "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "isend", "monitored_barrier", "new_group", "recv",
    "recv_object_list", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
    "scatter_object_list", "send", "send_object_list",
]
