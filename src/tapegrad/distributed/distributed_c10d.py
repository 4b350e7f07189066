"""``torch.distributed``'s functions: process groups and the collectives, run on MPI.

A *process group* is a set of ranks that run collectives together. The default group (all
ranks) is made by ``init_process_group``; ``new_group`` makes others. Each group here is an MPI
communicator (``ProcessGroup.comm``); a collective is one MPI call on the arrays of the tensors
it was given:

    all_reduce(t, op)          ->  comm.Allreduce(IN_PLACE, t's array, MPI op)
    broadcast(t, src)          ->  comm.Bcast(t's array, root=src's rank in the group)
    all_gather(out_list, t)    ->  comm.Allgather(t's array, one buffer), split into out_list
    ...

``async_op=True`` starts the nonblocking form of the same call (``Iallreduce``...) and returns
a ``Work``; ``work.wait()`` completes it. Every call is watched: one that runs past the group's
timeout ends the job with a message that names it (``_mpi.Watchdog``).

How the ranks find each other (``init_process_group``):

1. the rendezvous (``init_method``: ``env://``, ``tcp://host:port``, ``file://path``, or a
   ``store``) gives a Store, this process's rank and the world size, as in torch;
2. if this process's MPI job (``mpiexec``, which ``tapegrad run --nproc-per-node`` starts)
   holds the whole world, its communicator is used, ordered by rank;
3. otherwise the world is several MPI jobs (one launcher per machine): they meet through the
   store and join with ``MPI_Comm_accept`` / ``MPI_Comm_connect`` into one communicator.

The store only carries these few keys; every tensor goes through MPI.
"""

from __future__ import annotations

import enum
import os
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qs, urlparse

import numpy as np

from .._tensor import Tensor
from . import _mpi
from ._errors import DistBackendError
from ._store import FileStore, Store, TCPStore

__all__ = [
    "Backend", "GroupMember", "P2POp", "ProcessGroup", "ReduceOp", "Work", "all_gather",
    "all_gather_into_tensor", "all_gather_object", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
    "default_pg_timeout", "destroy_process_group", "gather", "gather_object", "get_backend",
    "get_global_rank", "get_group_rank", "get_process_group_ranks", "get_rank",
    "get_world_size", "group", "init_process_group", "irecv", "is_backend_available",
    "is_gloo_available", "is_initialized", "is_mpi_available", "is_nccl_available",
    "is_torchelastic_launched", "isend", "monitored_barrier", "new_group", "recv",
    "recv_object_list", "reduce", "reduce_scatter", "reduce_scatter_tensor", "scatter",
    "scatter_object_list", "send", "send_object_list",
]

default_pg_timeout = timedelta(minutes=30)


# ---------------------------------------------------------------------------------------------
# names: ReduceOp, Backend


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"

    def __format__(self, spec: str) -> str:
        return str(self)


class _ReduceOpMeta(type):
    def __getattr__(cls, name: str) -> Any:
        if name in RedOpType.__members__:
            return RedOpType[name]
        raise AttributeError(name)


class ReduceOp(metaclass=_ReduceOpMeta):
    """How a reduction combines the ranks' values: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``,
    ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR`` (each a ``ReduceOp.RedOpType``)."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED

    def __init__(self, op: Any) -> None:
        if not isinstance(op, RedOpType):
            raise TypeError("__init__(): incompatible constructor arguments. The following "
                            "argument types are supported:\n    1. torch._C._distributed_c10d."
                            "ReduceOp(arg0: c10d::ReduceOp::RedOpType)\n")
        self.op = op

    def __eq__(self, other: Any) -> bool:
        return _red_op(other) == self.op if isinstance(other, (ReduceOp, RedOpType)) else False

    def __hash__(self) -> int:
        return hash(self.op)


ReduceOp.__module__ = "torch.distributed"


def _red_op(op: Any) -> RedOpType:
    if type(op) is RedOpType:  # ReduceOp.SUM... (the common case, first)
        return op
    if isinstance(op, ReduceOp):
        return op.op
    if isinstance(op, RedOpType):
        return op
    raise TypeError("(): incompatible function arguments. The following argument types are "
                    f"supported:\n    1. (self: ReduceOp, arg0: RedOpType)\n\nInvoked with: "
                    f"{op!r}")


class Backend(str):
    """A backend's name: ``Backend("GLOO") == "gloo"``. Every name runs on MPI here."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL}

    def __new__(cls, name: str) -> Backend:
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return str.__new__(cls, value)


def is_mpi_available() -> bool:
    return _mpi.available()


def is_gloo_available() -> bool:
    """The ``gloo`` backend's name is accepted (its collectives run on MPI)."""
    return _mpi.available()


def is_nccl_available() -> bool:
    return False


def is_backend_available(backend: str) -> bool:
    return str(backend).lower() in ("gloo", "mpi") and _mpi.available()


def is_torchelastic_launched() -> bool:
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


# ---------------------------------------------------------------------------------------------
# process groups


class ProcessGroup:
    """A group of ranks and the MPI communicator they share.

    ``ranks`` are the global ranks of the members, in group-rank order; ``rank()`` is this
    process's rank in the group, ``size()`` their number.
    """

    def __init__(self, comm: Any, ranks: list[int], backend: str, timeout: timedelta,
                 name: str) -> None:
        self.comm = comm
        self.ranks = ranks
        self._rank = comm.Get_rank()
        self._size = comm.Get_size()
        self._backend = backend
        self.timeout = timeout
        self.group_name = name
        self.watchdog = _mpi.Watchdog(ranks[self._rank])

    @property
    def timeout(self) -> timedelta:
        return self._timeout

    @timeout.setter
    def timeout(self, value: timedelta) -> None:
        self._timeout = value
        self._timeout_s = value.total_seconds()  # what the watchdog takes, once

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return self._backend

    def _run(self, what: str, call: str, args: tuple, finish: Callable[[], None] | None,
             async_op: bool, **kwargs: Any) -> Work | None:
        """Run MPI's ``call`` (blocking) or start its nonblocking form (``async_op``)."""
        if async_op:
            request = getattr(self.comm, "I" + call.lower())(*args, **kwargs)
            return Work(self, what, [request], finish)
        ticket = self.watchdog.start(what, self._timeout_s)
        try:
            getattr(self.comm, call)(*args, **kwargs)
        finally:
            self.watchdog.done(ticket)
        if finish is not None:
            finish()
        return None

    def __repr__(self) -> str:
        return f"<torch.distributed.distributed_c10d.ProcessGroup object at {hex(id(self))}>"


ProcessGroup.__module__ = "torch.distributed.distributed_c10d"


class _GroupMemberMeta(type):
    @property
    def WORLD(cls) -> ProcessGroup | None:
        return _state.default_pg


class GroupMember(metaclass=_GroupMemberMeta):
    """``GroupMember.WORLD`` is the default group; ``NON_GROUP_MEMBER`` is what ``new_group``
    returns to a rank that is not in the new group."""

    NON_GROUP_MEMBER = -100


class group(metaclass=_GroupMemberMeta):
    """``torch.distributed.group.WORLD``: the default process group."""


class _State:
    def __init__(self) -> None:
        self.default_pg: ProcessGroup | None = None
        self.store: Store | None = None
        self.groups: dict[Any, ProcessGroup] = {}
        self.group_count = 0


_state = _State()


class Work:
    """A collective started with ``async_op=True``: ``wait()`` completes it."""

    def __init__(self, pg: ProcessGroup, what: str, requests: list,
                 finish: Callable[[], None] | None, result: list | None = None) -> None:
        self._pg = pg
        self._what = what
        self._requests = requests
        self._finish = finish
        self._done = False
        self._result = result or []
        self._status: Any = None

    def _complete(self) -> None:
        self._done = True
        if self._finish is not None:
            self._finish()

    def is_completed(self) -> bool:
        if not self._done and _mpi.load().Request.Testall(self._requests):
            self._complete()
        return self._done

    def is_success(self) -> bool:
        return self.is_completed()

    def exception(self) -> None:
        return None

    def wait(self, timeout: timedelta | None = None) -> bool:
        if not self._done:
            seconds = (timeout or self._pg.timeout).total_seconds()
            ticket = self._pg.watchdog.start(self._what, seconds)
            try:
                MPI = _mpi.load()
                if len(self._requests) == 1:
                    self._status = MPI.Status()
                    self._requests[0].Wait(self._status)
                else:
                    MPI.Request.Waitall(self._requests)
            finally:
                self._pg.watchdog.done(ticket)
            self._complete()
        return True

    def synchronize(self) -> None:
        self.wait()

    def source_rank(self) -> int:
        self.wait()
        return self._pg.ranks[self._status.Get_source()]

    def result(self) -> list:
        self.wait()
        return self._result

    def get_future(self) -> _Future:
        return _Future(self)


class _Future:
    """What ``Work.get_future()`` returns: ``wait()`` and ``value()`` give the work's tensors."""

    def __init__(self, work: Work) -> None:
        self._work = work

    def wait(self) -> list:
        return self._work.result()

    def value(self) -> list:
        return self._work.result()

    def done(self) -> bool:
        return self._work.is_completed()


Work.__module__ = "torch.distributed.distributed_c10d"


# ---------------------------------------------------------------------------------------------
# init_process_group and the rendezvous


def _env(name: str, method: str) -> str:
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using {method} rendezvous: "
                         f"environment variable {name} expected, but not set")
    return value


def _rendezvous(init_method: str, rank: int, world_size: int,
                timeout: timedelta) -> tuple[Store, int, int]:
    """The store, rank and world size that ``init_method`` names (torch's rendezvous)."""
    url = urlparse(init_method)
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    rank = int(query.get("rank", rank))
    world_size = int(query.get("world_size", world_size))
    if url.scheme == "env":
        method = "env://"
        if rank == -1:
            rank = int(_env("RANK", method))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE", method))
        addr, port = _env("MASTER_ADDR", method), int(_env("MASTER_PORT", method))
        store: Store = TCPStore(addr, port, world_size, rank == 0, timeout,
                                wait_for_workers=False)
    elif url.scheme == "tcp":
        for name, value in (("rank", rank), ("world size", world_size)):
            if value == -1:
                raise ValueError(f"Error initializing torch.distributed using tcp:// "
                                 f"rendezvous: {name} parameter missing")
        store = TCPStore(url.hostname or "127.0.0.1", url.port or 0, world_size, rank == 0,
                         timeout, wait_for_workers=False)
    elif url.scheme == "file":
        for name, value in (("rank", rank), ("world size", world_size)):
            if value == -1:
                raise ValueError(f"Error initializing torch.distributed using file:// "
                                 f"rendezvous: {name} parameter missing")
        store = FileStore(url.path, world_size)
    else:
        raise RuntimeError(f"No rendezvous handler for {url.scheme}://")
    store.set_timeout(timeout)
    return store, rank, world_size


def _world_comm(store: Store, rank: int, world_size: int, timeout: timedelta) -> Any:
    """An MPI communicator of the whole world, ordered so that its ranks are torch's."""
    MPI = _mpi.load()
    world = MPI.COMM_WORLD
    n = world.Get_size()
    if n > world_size:
        raise ValueError(f"this MPI job has {n} processes, more than world_size={world_size}")
    if n == world_size:
        ranks = world.allgather(rank)
        if sorted(ranks) != list(range(world_size)):
            raise ValueError(f"the processes of this MPI job have ranks {ranks}, not "
                             f"0..{world_size - 1} once each")
        return world.Split(0, rank)
    return _join(MPI, store, world, rank, world_size, timeout)


def _join(MPI: Any, store: Store, world: Any, rank: int, world_size: int,
          timeout: timedelta) -> Any:
    """Join several MPI jobs into one communicator through the store.

    Each job (one launcher's ranks) publishes an id under every rank it holds. The job of rank
    0 opens an MPI port and accepts the others one at a time, in the order of their lowest
    rank; a job connects when the store says it is its turn. Every accept merges the two sides
    into one communicator, which then accepts the next job.
    """
    prefix = "tapegrad/mpi/"
    job = world.bcast(uuid.uuid4().hex if world.Get_rank() == 0 else None)
    store.set(f"{prefix}job/{rank}", job)
    keys = [f"{prefix}job/{r}" for r in range(world_size)]
    store.wait(keys, timeout)
    order: list[str] = []
    for value in store.multi_get(keys):
        if value.decode() not in order:
            order.append(value.decode())
    mine = order.index(job)
    try:
        if mine == 0:
            port = MPI.Open_port() if world.Get_rank() == 0 else ""
            if world.Get_rank() == 0:
                store.set(f"{prefix}port", port)
            comm = world
            for k in range(1, len(order)):
                if comm.Get_rank() == 0:
                    store.set(f"{prefix}turn/{k}", b"1")
                comm = comm.Accept(port, root=0).Merge(high=False)
            if world.Get_rank() == 0:
                MPI.Close_port(port)
        else:
            store.wait([f"{prefix}turn/{mine}"], timeout)
            port = store.get(f"{prefix}port").decode()
            comm = world.Connect(port, root=0).Merge(high=True)
            for _ in range(mine + 1, len(order)):
                comm = comm.Accept("", root=0).Merge(high=False)
    except MPI.Exception as exc:
        raise DistBackendError(
            f"[Rank {rank}] could not join the other ranks' MPI jobs ({exc.Get_error_string()}"
            f"). Ranks started one by one outside an MPI launcher cannot connect with this "
            f"MPI; start them with `tapegrad run --nproc-per-node N` (one per machine) or "
            f"under `mpiexec`.") from None
    return comm.Split(0, rank)


def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store: Store | None = None, group_name: str = "",
                       pg_options: Any = None, device_id: Any = None) -> None:
    """Make the default process group: meet the other ranks, then build the MPI communicator.

    ``backend`` may be ``"gloo"``, ``"mpi"`` or None (every one runs on MPI). The rendezvous is
    torch's: ``init_method`` ``env://`` (the default: ``RANK``, ``WORLD_SIZE``,
    ``MASTER_ADDR``, ``MASTER_PORT``), ``tcp://host:port``, ``file://path``, or a ``store``
    with ``rank`` and ``world_size``.
    """
    if _state.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if not _mpi.available():
        raise RuntimeError(_mpi.INSTALL_HINT)
    name = str(Backend(backend)) if backend is not None else "gloo"
    if name not in ("gloo", "mpi", "cpu:gloo", "cpu:gloo,cuda:nccl"):
        raise RuntimeError(f"Distributed package doesn't have {name.upper()} built in"
                           if name in ("nccl", "ucc", "xccl") else f"Invalid backend: '{name}'")
    timeout = timeout or default_pg_timeout
    # MPI first: MPI_Init waits for every rank of the job while holding Python's lock, and
    # rank 0's store server (a thread) must be able to answer the others after that
    _mpi.load()
    if store is not None:
        if init_method is not None:
            raise AssertionError("Cannot specify both init_method and store.")
        if rank < 0 or world_size <= 0:
            raise AssertionError("world_size must be positive if using store" if rank >= 0
                                 else "rank must be non-negative if using store")
    else:
        store, rank, world_size = _rendezvous(init_method or "env://", rank, world_size,
                                              timeout)
    comm = _world_comm(store, rank, world_size, timeout)
    pg = ProcessGroup(comm, list(range(world_size)), name, timeout, group_name or "0")
    _state.default_pg = pg
    _state.store = store
    _state.groups = {pg: pg}
    _state.group_count = 1


def is_initialized() -> bool:
    return _state.default_pg is not None


def _default() -> ProcessGroup:
    if _state.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return _state.default_pg


def _group(group: Any) -> ProcessGroup:
    if group is None or group is GroupMember.WORLD:
        return _default()
    if isinstance(group, ProcessGroup):
        _default()
        return group
    raise TypeError(f"group should be a ProcessGroup, got {type(group).__name__}")


def _not_member(group: Any) -> bool:
    return group is GroupMember.NON_GROUP_MEMBER


def _warn_not_in_group(op: str, stacklevel: int = 3) -> None:
    warnings.warn(f"Running {op} on global rank {get_rank()} which does not belong to the "
                  f"given group.", stacklevel=stacklevel)


def _member_group(group: Any, op: str) -> ProcessGroup | None:
    """The process group collective ``op`` runs on, or None (after torch's warning, which
    names the caller's line) when this rank is outside ``group``: the caller then returns."""
    if _not_member(group):
        _warn_not_in_group(op, stacklevel=4)
        return None
    return _group(group)


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Free ``group``'s communicator; with no group, every group and the default one."""
    if _not_member(group):
        return
    if group is None or group is _state.default_pg:
        _default()
        for pg in list(_state.groups):
            _free(pg)
        store = _state.store
        server = getattr(store, "_server", None)
        if server is not None:
            server.shutdown()
            server.server_close()
        if isinstance(store, FileStore):
            store.close()
        _state.__init__()  # type: ignore[misc]
        return
    _free(group)
    _state.groups.pop(group, None)


def _free(pg: ProcessGroup) -> None:
    MPI = _mpi.loaded()
    if MPI is not None and not MPI.Is_finalized() and pg.comm != MPI.COMM_NULL:
        pg.comm.Free()


def get_rank(group: ProcessGroup | None = None) -> int:
    if _not_member(group):
        return -1
    pg = _group(group)
    return pg.ranks[pg.rank()] if group is None else pg.rank()


def get_world_size(group: ProcessGroup | None = None) -> int:
    if _not_member(group):
        return -1
    return _group(group).size()


def get_backend(group: ProcessGroup | None = None) -> Backend:
    if _not_member(group):
        raise ValueError("Invalid process group specified")
    return Backend(_group(group).name())


def get_process_group_ranks(group: ProcessGroup | None) -> list[int]:
    return list(_group(group).ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    pg = _group(group)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg.ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    pg = _group(group)
    if global_rank not in pg.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg.ranks.index(global_rank)


def new_group(ranks: Sequence[int] | None = None, timeout: timedelta | None = None,
              backend: str | None = None, pg_options: Any = None,
              use_local_synchronization: bool = False, group_desc: str | None = None,
              device_id: Any = None) -> Any:
    """A group of ``ranks`` (all ranks when None). Every rank of the world calls it; a rank
    outside ``ranks`` gets ``GroupMember.NON_GROUP_MEMBER``."""
    world = _default()
    members = sorted(range(world.size()) if ranks is None else set(int(r) for r in ranks))
    for r in members:
        if not 0 <= r < world.size():
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    MPI = _mpi.load()
    me = world.ranks[world.rank()]
    comm = world.comm.Split(0 if me in members else MPI.UNDEFINED, me)
    name = str(_state.group_count)
    _state.group_count += 1
    if me not in members:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(comm, members, str(Backend(backend)) if backend else world.name(),
                      timeout or world.timeout, name)
    _state.groups[pg] = pg
    return pg


# ---------------------------------------------------------------------------------------------
# tensors as MPI buffers


def _check_tensor(t: Any, name: str) -> None:
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")


def _check_tensor_list(ts: Any, name: str) -> None:
    if not (isinstance(ts, list) and all(isinstance(t, Tensor) for t in ts)):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor]\n             but got {type(ts)} instead.")


def _buf(a: np.ndarray) -> list:
    # MPI counts the elements (per rank, for the gathering calls) from the array's size
    return [a, _mpi.datatype(a.dtype)]


class _Inplace:
    """The array a collective writes into for tensor ``t``: its own memory when contiguous,
    else a contiguous copy that ``back()`` writes into the tensor."""

    def __init__(self, t: Tensor) -> None:
        self.t = t
        data = t._data
        self.direct = data.flags.c_contiguous and data.flags.writeable
        self.a = data if self.direct else np.ascontiguousarray(data)

    def back(self) -> None:
        if not self.direct:
            self.t._data[...] = self.a.reshape(self.t._data.shape)
        self.t._version_counter.value += 1


def _contiguous(t: Tensor) -> np.ndarray:
    return np.ascontiguousarray(t._data)


_LEGACY_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                 "int32": "Int", "int64": "Long"}


def _check_op(op: RedOpType, dtype: np.dtype, what: str) -> None:
    if dtype.kind == "c" and op not in (RedOpType.SUM, RedOpType.AVG):
        raise ValueError(f"{what} does not support {op} on complex tensors")
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype.kind in "fcV":
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op == RedOpType.AVG and dtype.kind in "biu":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_LEGACY_NAMES[dtype.name]}")
    if op in (RedOpType.PREMUL_SUM, RedOpType.UNUSED):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with Gloo")


def _avg(a: np.ndarray, n: int) -> None:
    # torch divides the sum by the group's size, in the tensor's dtype (a complex one as its
    # real and imaginary parts)
    if a.dtype.kind == "c":
        a = a.view(a.real.dtype)
    np.divide(a, a.dtype.type(n), out=a)


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, name: str,
          default_zero: bool = False, op: str = "") -> int:
    """The group rank of a ``src``/``dst`` given as a global rank or as ``group_src``."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {name} and group_{name}")
    if group_rank is not None:
        r = group_rank
    elif rank is not None:
        if rank not in pg.ranks:
            if pg is _state.default_pg:
                raise RuntimeError(f"ProcessGroupGloo::{op}: invalid root rank: {rank}")
            raise ValueError(f"Global rank {rank} is not part of group {pg}")
        r = pg.ranks.index(rank)
    elif default_zero:
        r = 0
    else:
        raise ValueError(f"Must specify {name} or group_{name}")
    if not 0 <= r < pg.size():
        raise RuntimeError(f"ProcessGroupGloo::{op}: invalid root rank: {r}")
    return r


# ---------------------------------------------------------------------------------------------
# the collectives


# [op][dtype] -> (MPI datatype, MPI op), for the pairs _check_op accepted (a list indexed by
# the op: an enum member as a dict key hashes in Python)
_REDUCTIONS: list[dict[np.dtype, tuple[Any, Any]]] = [{} for _ in RedOpType]


def _reduction(red: RedOpType, dtype: np.dtype, what: str) -> tuple[Any, Any]:
    """The MPI datatype and operation that reduce ``dtype`` by ``red`` (checked once)."""
    specs = _REDUCTIONS[red]
    spec = specs.get(dtype)
    if spec is None:
        _check_op(red, dtype, what)
        spec = specs[dtype] = (_mpi.datatype(dtype), _mpi.reduce_op(red.name, dtype))
    return spec


def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: Any = None,
               async_op: bool = False) -> Work | None:
    """Reduce ``tensor`` over the group, in place on every rank."""
    _check_tensor(tensor, "tensor")
    pg = _member_group(group, "all_reduce")
    if pg is None:
        return None
    red = _red_op(op)
    data = tensor._data
    mpi_type, mpi_op = _reduction(red, data.dtype, "all_reduce")
    MPI = _mpi.load()
    if not async_op and red != RedOpType.AVG and data.flags.c_contiguous and \
            data.flags.writeable:
        # the common case, one MPI call on the tensor's own memory: no copy, no Work
        ticket = pg.watchdog.start("all_reduce", pg._timeout_s)
        try:
            pg.comm.Allreduce(MPI.IN_PLACE, [data, mpi_type], mpi_op)
        finally:
            pg.watchdog.done(ticket)
        tensor._version_counter.value += 1
        return None
    buf = _Inplace(tensor)

    def finish() -> None:
        if red == RedOpType.AVG:
            _avg(buf.a, pg.size())
        buf.back()

    return pg._run("all_reduce", "Allreduce", (MPI.IN_PLACE, [buf.a, mpi_type], mpi_op),
                   finish, async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: Any = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """Copy ``tensor`` of rank ``src`` into ``tensor`` of every rank."""
    _check_tensor(tensor, "tensor")
    pg = _member_group(group, "broadcast")
    if pg is None:
        return None
    root = _root(pg, src, group_src, "src", op="broadcast")
    buf = _Inplace(tensor)
    return pg._run("broadcast", "Bcast", (_buf(buf.a),), buf.back, async_op, root=root)


def reduce(tensor: Tensor, dst: int | None = None, op: Any = ReduceOp.SUM, group: Any = None,
           async_op: bool = False, group_dst: int | None = None) -> Work | None:
    """Reduce ``tensor`` over the group into rank ``dst``'s ``tensor``."""
    _check_tensor(tensor, "tensor")
    pg = _member_group(group, "reduce")
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "dst", op="reduce")
    red = _red_op(op)
    _check_op(red, tensor._data.dtype, "reduce")
    buf = _Inplace(tensor)
    MPI = _mpi.load()
    is_root = pg.rank() == root
    send = MPI.IN_PLACE if is_root else _buf(buf.a)

    def finish() -> None:
        if is_root:
            if red == RedOpType.AVG:
                _avg(buf.a, pg.size())
            buf.back()

    return pg._run("reduce", "Reduce",
                   (send, _buf(buf.a) if is_root else None,
                    _mpi.reduce_op(red.name, buf.a.dtype)), finish, async_op, root=root)


def _dims(shape: tuple) -> str:
    return "(" + ", ".join(map(str, shape)) + ")"


def _gathered(pg: ProcessGroup, t: Tensor) -> np.ndarray:
    return np.empty((pg.size(), *t._data.shape), dtype=t._data.dtype)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: Any = None,
               async_op: bool = False) -> Work | None:
    """``tensor_list[i]`` = rank i's ``tensor``, on every rank."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    pg = _member_group(group, "all_gather")
    if pg is None:
        return None
    if len(tensor_list) != pg.size():
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index "
                           f"0 (expected length {pg.size()}, got {len(tensor_list)})")
    for t in tensor_list:
        if t._data.dtype != tensor._data.dtype:
            raise RuntimeError("ProcessGroupGloo::allgather: invalid tensor type at index 0 "
                               f"(expected {tensor.dtype}, got {t.dtype})")
        if t._data.size != tensor._data.size:
            raise RuntimeError("ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                               f"(expected {tensor._data.size}, got {t._data.size})")
    src = _contiguous(tensor)
    out = _gathered(pg, tensor)

    def finish() -> None:
        for t, part in zip(tensor_list, out, strict=True):
            t._data[...] = part.reshape(t._data.shape)
            t._version_counter.value += 1

    return pg._run("all_gather", "Allgather", (_buf(src), _buf(out)), finish, async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group: Any = None,
                           async_op: bool = False) -> Work | None:
    """Every rank's ``input_tensor``, concatenated (or stacked) into ``output_tensor``."""
    _check_tensor(input_tensor, "input_tensor")
    _check_tensor(output_tensor, "output_tensor")
    pg = _member_group(group, "all_gather_into_tensor")
    if pg is None:
        return None
    if output_tensor._data.dtype != input_tensor._data.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    shape_in = input_tensor._data.shape
    shape_out = output_tensor._data.shape
    rows = shape_in[0] if shape_in else 1
    if shape_out != (rows * pg.size(), *shape_in[1:]):  # the inputs concatenated on dim 0
        chunk = (shape_out[0] // pg.size(), *shape_out[1:]) if shape_out else ()
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                           f"(expected {_dims(shape_in)}, got {_dims(chunk)})")
    buf = _Inplace(output_tensor)
    return pg._run("all_gather_into_tensor", "Allgather",
                   (_buf(_contiguous(input_tensor)), _buf(buf.a)), buf.back, async_op)


def _optional_tensor_list(ts: list[Tensor] | None, name: str) -> list[Tensor]:
    """``gather_list`` / ``scatter_list`` checked, or ``[]`` when not given."""
    if ts is None:
        return []
    _check_tensor_list(ts, name)
    return ts


def _check_root_list(is_root: bool, ts: list[Tensor], name: str, side: str) -> bool:
    """torch's check that only the root rank (``side``: destination or source) passes the list
    of a gather or scatter; returns ``is_root``."""
    if is_root and not ts:
        raise ValueError(f"Argument ``{name}`` must be specified on {side} rank.")
    if not is_root and ts:
        raise ValueError(f"Argument ``{name}`` must NOT be specified on non-{side} ranks.")
    return is_root


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: Any = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """Every rank's ``tensor`` into ``gather_list`` on rank ``dst``."""
    _check_tensor(tensor, "tensor")
    gather_list = _optional_tensor_list(gather_list, "gather_list")
    pg = _member_group(group, "gather")
    if pg is None:
        return None
    root = _root(pg, dst, group_dst, "dst", default_zero=True, op="gather")
    is_root = _check_root_list(pg.rank() == root, gather_list, "gather_list", "destination")
    out = _gathered(pg, tensor) if is_root else None

    def finish() -> None:
        if is_root:
            for t, part in zip(gather_list, out, strict=True):  # type: ignore[arg-type]
                t._data[...] = part.reshape(t._data.shape)

    return pg._run("gather", "Gather",
                   (_buf(_contiguous(tensor)), _buf(out) if out is not None else None), finish,
                   async_op, root=root)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: Any = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """``tensor`` = rank ``src``'s ``scatter_list[rank]``."""
    _check_tensor(tensor, "tensor")
    scatter_list = _optional_tensor_list(scatter_list, "scatter_list")
    pg = _member_group(group, "scatter")
    if pg is None:
        return None
    root = _root(pg, src, group_src, "src", default_zero=True, op="scatter")
    is_root = _check_root_list(pg.rank() == root, scatter_list, "scatter_list", "source")
    send = np.stack([_contiguous(t).reshape(tensor._data.shape) for t in scatter_list]) \
        if is_root else None
    buf = _Inplace(tensor)
    return pg._run("scatter", "Scatter",
                   (_buf(send) if send is not None else None, _buf(buf.a)),
                   buf.back, async_op, root=root)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: Any = ReduceOp.SUM,
                   group: Any = None, async_op: bool = False) -> Work | None:
    """``output`` = the reduction over ranks of their ``input_list[rank]``."""
    _check_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    pg = _member_group(group, "reduce_scatter")
    if pg is None:
        return None
    red = _red_op(op)
    _check_op(red, output._data.dtype, "reduce_scatter")
    send = np.concatenate([_contiguous(t).reshape(-1) for t in input_list])
    return _reduce_scatter(pg, red, send, output, async_op, "reduce_scatter")


def _reduce_scatter(pg: ProcessGroup, red: RedOpType, send: np.ndarray, output: Tensor,
                    async_op: bool, what: str) -> Work | None:
    buf = _Inplace(output)

    def finish() -> None:
        if red == RedOpType.AVG:
            _avg(buf.a, pg.size())
        buf.back()

    return pg._run(what, "Reduce_scatter_block",
                   (_buf(send), _buf(buf.a), _mpi.reduce_op(red.name, send.dtype)), finish,
                   async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM,
                          group: Any = None, async_op: bool = False) -> Work | None:
    """``output`` = the reduction over ranks of their ``input``'s ``rank``-th block."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _member_group(group, "reduce_scatter_tensor")
    if pg is None:
        return None
    red = _red_op(op)
    _check_op(red, output._data.dtype, "reduce_scatter_tensor")
    if input._data.size != output._data.size * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    return _reduce_scatter(pg, red, _contiguous(input).reshape(-1), output, async_op,
                           "reduce_scatter_tensor")


def all_to_all(output_tensor_list: list[Tensor], input_tensor_list: list[Tensor],
               group: Any = None, async_op: bool = False) -> Work | None:
    """``output_tensor_list[i]`` = rank i's ``input_tensor_list[rank]``."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    pg = _member_group(group, "all_to_all")
    if pg is None:
        return None
    expected = input_tensor_list[0]._data.shape
    for ts in (input_tensor_list, output_tensor_list):
        for i, t in enumerate(ts):
            if t._data.shape != expected:
                raise RuntimeError(f"ProcessGroupGloo::alltoall: invalid tensor size at index "
                                   f"{i} (expected {_dims(expected)}, got "
                                   f"{_dims(t._data.shape)})")
    send = np.concatenate([_contiguous(t).reshape(-1) for t in input_tensor_list])
    send_counts = [t._data.size for t in input_tensor_list]
    recv_counts = [t._data.size for t in output_tensor_list]
    dtype = output_tensor_list[0]._data.dtype
    recv = np.empty(sum(recv_counts), dtype=dtype)

    def finish() -> None:
        pos = 0
        for t, n in zip(output_tensor_list, recv_counts, strict=True):
            t._data[...] = recv[pos:pos + n].reshape(t._data.shape)
            pos += n

    return pg._run("all_to_all", "Alltoallv", (_vbuf(send, send_counts),
                                               _vbuf(recv, recv_counts)), finish, async_op)


def _vbuf(a: np.ndarray, counts: list[int]) -> list:
    displs = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(int).tolist()
    return [a, (list(counts), displs), _mpi.datatype(a.dtype)]


def all_to_all_single(output: Tensor, input: Tensor,
                      output_split_sizes: list[int] | None = None,
                      input_split_sizes: list[int] | None = None, group: Any = None,
                      async_op: bool = False) -> Work | None:
    """Split ``input`` along dim 0 (in ``input_split_sizes``, else equally), send part i to
    rank i, and concatenate what arrives into ``output``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    pg = _member_group(group, "all_to_all_single")
    if pg is None:
        return None
    n = pg.size()
    row_in = int(np.prod(input._data.shape[1:], dtype=np.int64))
    row_out = int(np.prod(output._data.shape[1:], dtype=np.int64))
    in_rows = input_split_sizes or [input._data.shape[0] // n] * n
    out_rows = output_split_sizes or [output._data.shape[0] // n] * n
    buf = _Inplace(output)
    return pg._run("all_to_all_single", "Alltoallv",
                   (_vbuf(_contiguous(input).reshape(-1), [r * row_in for r in in_rows]),
                    _vbuf(buf.a.reshape(-1), [r * row_out for r in out_rows])),
                   buf.back, async_op)


def barrier(group: Any = None, async_op: bool = False,
            device_ids: list[int] | None = None) -> Work | None:
    """Return once every rank of the group has called it."""
    pg = _member_group(group, "barrier")
    if pg is None:
        return None
    return pg._run("barrier", "Barrier", (), None, async_op)


def monitored_barrier(group: Any = None, timeout: timedelta | None = None,
                      wait_all_ranks: bool = False) -> None:
    """A barrier that rank 0 watches: a rank that does not arrive within ``timeout`` is named
    in the error raised on rank 0 (all such ranks with ``wait_all_ranks``)."""
    pg = _member_group(group, "monitored_barrier")
    if pg is None:
        return
    seconds = (timeout or pg.timeout).total_seconds()
    tag = 0x7A61
    token = np.zeros(1, dtype=np.int64)
    if pg.rank() != 0:
        pg.comm.Send(token, dest=0, tag=tag)
        pg._run("monitored_barrier", "Recv", (token,), None, False, source=0, tag=tag + 1)
        return
    requests = {r: pg.comm.Irecv(np.zeros(1, dtype=np.int64), source=r, tag=tag)
                for r in range(1, pg.size())}
    deadline = time.monotonic() + seconds
    while requests and time.monotonic() < deadline:
        for r in [r for r, req in requests.items() if req.Test()]:
            del requests[r]
        time.sleep(0.001)
    if requests:
        late = sorted(pg.ranks[r] for r in requests)
        ms = int(seconds * 1000)
        if wait_all_ranks:
            raise RuntimeError(f"[Rank 0]: Ranks {', '.join(map(str, late))} failed to pass "
                               f"monitoredBarrier in {ms} ms")
        raise RuntimeError(f"[Rank 0]: Rank {late[0]} failed to pass monitoredBarrier in "
                           f"{ms} ms")
    for r in range(1, pg.size()):
        pg.comm.Send(token, dest=r, tag=tag + 1)


# ---------------------------------------------------------------------------------------------
# point to point


def _peer(pg: ProcessGroup, rank: int | None, group_rank: int | None, name: str) -> int:
    if rank is None and group_rank is None:
        raise ValueError(f"Must specify {name} or group_{name}")
    return _root(pg, rank, group_rank, name)


def send(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send ``tensor`` to rank ``dst`` (blocking)."""
    _check_tensor(tensor, "tensor")
    pg = _member_group(group, "send")
    if pg is None:
        return
    peer = _peer(pg, dst, group_dst, "dst")
    if peer == pg.rank():
        raise ValueError("Invalid destination rank: destination rank should not be the same "
                         "as the rank of the current process.")
    pg._run("send", "Send", (_buf(_contiguous(tensor)),), None, False, dest=peer, tag=tag)


def recv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into ``tensor`` from rank ``src`` (any rank when None); returns the sender."""
    _check_tensor(tensor, "tensor")
    pg = _member_group(group, "recv")
    if pg is None:
        return -1
    MPI = _mpi.load()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else \
        _peer(pg, src, group_src, "src")
    buf = _Inplace(tensor)
    status = MPI.Status()
    pg._run("recv", "Recv", (_buf(buf.a),), buf.back, False, source=peer, tag=tag,
            status=status)
    return pg.ranks[status.Get_source()]  # the sender's global rank, as torch's


def isend(tensor: Tensor, dst: int | None = None, group: Any = None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Start sending ``tensor`` to ``dst``; returns a ``Work``."""
    _check_tensor(tensor, "tensor")
    pg = _member_group(group, "isend")
    if pg is None:
        return None
    data = _contiguous(tensor)
    return pg._run("isend", "Send", (_buf(data),), None, True,
                   dest=_peer(pg, dst, group_dst, "dst"), tag=tag)


def irecv(tensor: Tensor, src: int | None = None, group: Any = None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Start receiving into ``tensor`` from ``src`` (any rank when None)."""
    _check_tensor(tensor, "tensor")
    pg = _member_group(group, "irecv")
    if pg is None:
        return None
    MPI = _mpi.load()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else \
        _peer(pg, src, group_src, "src")
    buf = _Inplace(tensor)
    return pg._run("irecv", "Recv", (_buf(buf.a),), buf.back, True, source=peer, tag=tag)


class P2POp:
    """One send or receive for ``batch_isend_irecv``: ``P2POp(dist.isend, tensor, peer)``."""

    def __init__(self, op: Callable, tensor: Tensor, peer: int | None = None,
                 group: Any = None, tag: int = 0, group_peer: int | None = None) -> None:
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type ``torch.distributed."
                             "isend`` or ``torch.distributed.irecv``.")
        _check_tensor(tensor, "tensor")
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
        self.group_peer = group_peer


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Start every send and receive of the list; returns their ``Work``s."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    works = []
    for p in p2p_op_list:
        if p.op is isend:
            w = isend(p.tensor, p.peer, p.group, p.tag, group_dst=p.group_peer)
        else:
            w = irecv(p.tensor, p.peer, p.group, p.tag, group_src=p.group_peer)
        if w is not None:
            works.append(w)
    return works


# ---------------------------------------------------------------------------------------------
# Python objects (pickled, as torch does)


def all_gather_object(object_list: list, obj: Any, group: Any = None) -> None:
    """``object_list[i]`` = rank i's ``obj``."""
    pg = _member_group(group, "all_gather_object")
    if pg is None:
        return
    gathered = _objects(pg, "all_gather_object", "allgather", obj)
    object_list[:len(gathered)] = gathered


def _objects(pg: ProcessGroup, what: str, call: str, *args: Any, **kwargs: Any) -> Any:
    ticket = pg.watchdog.start(what, pg.timeout.total_seconds())
    try:
        return getattr(pg.comm, call)(*args, **kwargs)
    finally:
        pg.watchdog.done(ticket)


def gather_object(obj: Any, object_gather_list: list | None = None, dst: int | None = None,
                  group: Any = None, group_dst: int | None = None) -> None:
    """Every rank's ``obj`` into ``object_gather_list`` on rank ``dst``."""
    pg = _member_group(group, "gather_object")
    if pg is None:
        return
    root = _root(pg, dst, group_dst, "dst", default_zero=True)
    gathered = _objects(pg, "gather_object", "gather", obj, root=root)
    if pg.rank() == root:
        if object_gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        object_gather_list[:len(gathered)] = gathered


def broadcast_object_list(object_list: list, src: int | None = None, group: Any = None,
                          device: Any = None, group_src: int | None = None) -> None:
    """``object_list`` of rank ``src`` replaces every rank's, element by element."""
    pg = _member_group(group, "broadcast_object_list")
    if pg is None:
        return
    root = _root(pg, src, group_src, "src", default_zero=True)
    values = _objects(pg, "broadcast_object_list", "bcast",
                      list(object_list) if pg.rank() == root else None, root=root)
    object_list[:] = values[:len(object_list)] if pg.rank() != root else object_list


def scatter_object_list(scatter_object_output_list: list, scatter_object_input_list: list |
                        None = None, src: int | None = None, group: Any = None,
                        group_src: int | None = None) -> None:
    """``scatter_object_output_list[0]`` = rank ``src``'s ``scatter_object_input_list[rank]``."""
    if _not_member(group):
        _warn_not_in_group("scatter_object_list")
        return
    if not isinstance(scatter_object_output_list, list) or len(
            scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    pg = _group(group)
    root = _root(pg, src, group_src, "src", default_zero=True)
    items = list(scatter_object_input_list or []) if pg.rank() == root else None
    scatter_object_output_list[0] = _objects(pg, "scatter_object_list", "scatter", items,
                                             root=root)


def send_object_list(object_list: list, dst: int | None = None, group: Any = None,
                     device: Any = None, group_dst: int | None = None) -> None:
    pg = _group(group)
    _objects(pg, "send_object_list", "send", list(object_list),
             dest=_peer(pg, dst, group_dst, "dst"), tag=0x7A62)


def recv_object_list(object_list: list, src: int | None = None, group: Any = None,
                     device: Any = None, group_src: int | None = None) -> int:
    pg = _group(group)
    MPI = _mpi.load()
    status = MPI.Status()
    peer = MPI.ANY_SOURCE if src is None and group_src is None else \
        _peer(pg, src, group_src, "src")
    values = _objects(pg, "recv_object_list", "recv", source=peer, tag=0x7A62, status=status)
    object_list[:] = values[:len(object_list)]
    return pg.ranks[status.Get_source()]


def _get_default_store() -> Store:
    _default()
    assert _state.store is not None
    return _state.store


def _get_default_group() -> ProcessGroup:
    return _default()


