"""``DistributedDataParallel``: one model per rank, gradients averaged during backward.

Each rank runs the same model on its own part of the batch. DDP keeps the copies equal:

* at construction, rank 0's parameters and buffers are broadcast to every rank;
* before each forward (``broadcast_buffers=True``), rank 0's buffers again (BatchNorm's
  running statistics);
* during backward, gradients are averaged over the ranks, in *buckets*. The parameters are
  grouped, in the reverse of ``module.parameters()`` (roughly the order in which backward
  reaches them), into flat buffers of about ``bucket_cap_mb`` (the first one 1 MiB). A hook
  runs after each parameter's ``.grad`` is accumulated (``register_post_accumulate_grad_hook``):
  it copies the gradient, times 1/world_size, into its bucket; when a bucket is full its
  allreduce (a nonblocking ``MPI_Iallreduce``) starts while backward goes on with the layers
  below. Buckets start in index order on every rank, as MPI needs. When the last bucket has
  started, the hook waits for them all and writes the averages into ``.grad``.

``no_sync()`` (or ``require_backward_grad_sync = False``) skips the averaging, so gradients
accumulate locally until the next synchronised backward. ``find_unused_parameters=True``
walks the output's graph after forward and marks the parameters it does not reach as ready,
so their buckets do not wait for gradients that never come. ``join()`` lets ranks with fewer
batches shadow the others' allreduces until all are done.

A sum of two float32 values has one result, so two ranks give torch's gloo results bit for
bit; the scaling is torch's (``grad * (1/world_size)`` while copying into the bucket, or
``bucket /= world_size`` when the gradient already is the bucket's view).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ... import distributed as dist
from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25


class _Bucket:
    """Parameters whose gradients are averaged by one allreduce of one flat buffer.

    ``params`` are (parameter, its index in ``module.parameters()``) pairs."""

    def __init__(self, params: list[tuple[Tensor, int]], dtype: np.dtype) -> None:
        self.params = [p for p, _ in params]
        self.indices = [i for _, i in params]
        sizes = [p._data.size for p in self.params]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist()
        self.buffer = np.zeros(self.offsets[-1], dtype=dtype)
        self.pending = len(self.params)
        self.request: Any = None

    def view(self, k: int) -> np.ndarray:
        p = self.params[k]
        return self.buffer[self.offsets[k]:self.offsets[k + 1]].reshape(p._data.shape)


class DistributedDataParallel(Module):
    """``DistributedDataParallel(module, device_ids=None, ..., process_group=None,
    bucket_cap_mb=None, find_unused_parameters=False, gradient_as_bucket_view=False,
    broadcast_buffers=True)``: ``module`` on every rank, gradients averaged in backward."""

    def __init__(self, module: Module, device_ids: list | None = None,
                 output_device: Any = None, dim: int = 0, broadcast_buffers: bool = True,
                 init_sync: bool = True, process_group: Any = None,
                 bucket_cap_mb: float | None = None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, delay_all_reduce_named_params: Any = None,
                 param_to_hook_all_reduce: Any = None, mixed_precision: Any = None,
                 device_mesh: Any = None, skip_all_reduce_unused_params: bool = False) -> None:
        super().__init__()
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 0 or output_device is not None:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work "
                "with single-device/multiple-device GPU modules or CPU modules, but got "
                f"device_ids {device_ids}, output_device {output_device}, and module "
                "parameters {device(type='cpu')}.")
        self.module = module
        self.process_group = process_group if process_group is not None else \
            dist.distributed_c10d._default()
        self._pg = dist.distributed_c10d._group(self.process_group)
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((bucket_cap_mb or _DEFAULT_BUCKET_MB) * 1024 * 1024)
        self._params = params
        self._world = self._pg.size()
        self._joined = False
        self._join_divide_by_initial = True
        self._active = self._pg.size()
        if init_sync:
            self._sync_states(list(module.parameters()) + list(module.buffers()))
        self._buckets = self._make_buckets(params, bucket_cap_mb is None)
        self._where = {id(p): (b, k) for b in self._buckets for k, p in enumerate(b.params)}
        self._hooks = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]
        self._reset_iteration()
        self._expect_hooks = False

    # -- construction ----------------------------------------------------------------------

    def _sync_states(self, tensors: list[Tensor], src: int = 0) -> None:
        """Group rank ``src``'s values of ``tensors``, broadcast to every rank (one buffer per
        dtype)."""
        by_dtype: dict[np.dtype, list[Tensor]] = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        for dtype, group in by_dtype.items():
            flat = np.concatenate([t._data.reshape(-1) for t in group]) if group else \
                np.zeros(0, dtype)
            holder = Tensor._make(flat)
            dist.broadcast(holder, src=self._pg.ranks[src], group=self.process_group)
            pos = 0
            for t in group:
                n = t._data.size
                t._data[...] = flat[pos:pos + n].reshape(t._data.shape)
                pos += n

    def _make_buckets(self, params: Sequence[Tensor], default_caps: bool) -> list[_Bucket]:
        buckets: list[_Bucket] = []
        current: dict[np.dtype, list] = {}
        sizes: dict[np.dtype, int] = {}
        cap_first = _FIRST_BUCKET_BYTES if default_caps else self.bucket_bytes_cap
        for index in reversed(range(len(params))):
            p = params[index]
            dtype = p._data.dtype
            current.setdefault(dtype, []).append((p, index))
            sizes[dtype] = sizes.get(dtype, 0) + p._data.nbytes
            cap = cap_first if not buckets else self.bucket_bytes_cap
            if sizes[dtype] >= cap:
                buckets.append(_Bucket(current.pop(dtype), dtype))
                sizes[dtype] = 0
        for dtype, rest in current.items():
            if rest:
                buckets.append(_Bucket(rest, dtype))
        return buckets

    # -- forward -----------------------------------------------------------------------------

    def _reset_iteration(self) -> None:
        for b in self._buckets:
            b.pending = len(b.params)
            b.request = None
        self._next_bucket = 0
        self._ready: set[int] = set()
        self._unused: list[Tensor] = []
        self._used = np.zeros(len(self._params), dtype=np.int32)
        self._marked_unused = False

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._expect_hooks and self._ready and self.require_backward_grad_sync:
            self._raise_unfinished()
        src = 0
        if self._joined:  # join(): say that this rank still trains (see join())
            self._active = self._allreduce_int(1, "SUM")
            if self.broadcast_buffers:
                src = self._allreduce_int(self._pg.rank(), "MAX")  # the last active rank
        if self.broadcast_buffers and self.require_forward_param_sync:
            buffers = list(self.module.buffers())
            if buffers:
                self._sync_states(buffers, src)
        output = self.module(*inputs, **kwargs)
        self._reset_iteration()
        self._expect_hooks = self.require_backward_grad_sync
        if self.find_unused_parameters and self.require_backward_grad_sync:
            reached = _reachable_leaves(output)
            self._unused = [p for p in self._params if id(p) not in reached]
        return output

    def _allreduce_int(self, value: int, op: str) -> int:
        MPI = dist._mpi.load()
        a = np.array([value], dtype=np.int64)
        self._pg.comm.Allreduce(MPI.IN_PLACE, a, getattr(MPI, op))
        return int(a[0])

    def _raise_unfinished(self) -> None:
        missing = [i for i, p in enumerate(self._params) if id(p) not in self._ready]
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new "
            "one. This error indicates that your module has parameters that were not used in "
            "producing loss. You can enable unused parameter detection by passing the keyword "
            "argument `find_unused_parameters=True` to `torch.nn.parallel."
            "DistributedDataParallel`, and by \nmaking sure all `forward` function outputs "
            "participate in calculating loss. \nIf you already have done the above, then the "
            "distributed data parallel module wasn't able to locate the output tensors in the "
            "return value of your module's `forward` function. Please include the loss "
            "function and the structure of the return value of `forward` of your module when "
            "reporting this issue (e.g. list, dict, iterable).\nParameter indices which did "
            f"not receive grad for rank {dist.get_rank()}: "
            + " ".join(map(str, missing)) + "\n In addition, you can set the environment "
            "variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out "
            "information about which particular parameters did not receive gradient on this "
            "rank as part of this error")

    # -- backward ----------------------------------------------------------------------------

    def _grad_ready(self, param: Tensor) -> None:
        """The hook after ``param.grad`` was accumulated: put it in its bucket."""
        if not self._expect_hooks:
            return
        if not self._marked_unused:
            self._marked_unused = True
            for p in self._unused:
                self._mark_ready(p, used=False)
        self._used[self._index(param)] = 1
        self._mark_ready(param, used=True)

    def _index(self, param: Tensor) -> int:
        b, k = self._where[id(param)]
        return b.indices[k]

    def _mark_ready(self, param: Tensor, used: bool) -> None:
        if id(param) in self._ready:
            raise RuntimeError(
                "Expected to mark a variable ready only once. This error is caused by one of "
                "the following reasons: 1) Use of a module parameter outside the `forward` "
                "function. 2) Reused parameters in multiple reentrant backward passes.")
        self._ready.add(id(param))
        bucket, k = self._where[id(param)]
        view = bucket.view(k)
        grad = param._grad
        scale = view.dtype.type(1.0 / self._divisor())
        if grad is None:
            view[...] = 0
        elif np.shares_memory(grad._data, view):
            np.divide(view, view.dtype.type(self._divisor()), out=view)
        else:
            np.multiply(grad._data, scale, out=view)
            if self.gradient_as_bucket_view:
                param._grad = Tensor._make(view)
        bucket.pending -= 1
        self._launch_ready_buckets()
        if self._next_bucket == len(self._buckets):
            self._finish()
        else:
            MPI = dist._mpi.load()
            pending = [b.request for b in self._buckets if b.request is not None]
            if pending:
                MPI.Request.Testall(pending)  # let MPI move the started buckets on

    def _divisor(self) -> int:
        if self._joined and not self._join_divide_by_initial:
            return self._active  # join(divide_by_initial_world_size=False)
        return self._world

    def _launch_ready_buckets(self) -> None:
        MPI = dist._mpi.load()
        while self._next_bucket < len(self._buckets) and \
                self._buckets[self._next_bucket].pending == 0:
            b = self._buckets[self._next_bucket]
            b.request = self._pg.comm.Iallreduce(
                MPI.IN_PLACE, [b.buffer, dist._mpi.datatype(b.buffer.dtype)],
                dist._mpi.reduce_op("SUM", b.buffer.dtype))
            self._next_bucket += 1

    def _finish(self) -> None:
        """Every bucket started: wait for them and write the averages into ``.grad``."""
        MPI = dist._mpi.load()
        pg = self._pg
        ticket = pg.watchdog.start("DistributedDataParallel gradient allreduce",
                                   pg.timeout.total_seconds())
        try:
            MPI.Request.Waitall([b.request for b in self._buckets])
            used = self._used
            if self.find_unused_parameters:
                used = used.copy()
                pg.comm.Allreduce(MPI.IN_PLACE, used, MPI.MAX)
        finally:
            pg.watchdog.done(ticket)
        for b in self._buckets:
            for k, p in enumerate(b.params):
                if not used[b.indices[k]]:
                    continue  # unused on every rank: .grad stays as it was
                view = b.view(k)
                if p._grad is None:
                    p._grad = Tensor._make(view if self.gradient_as_bucket_view
                                           else view.copy())
                elif not np.shares_memory(p._grad._data, view):
                    p._grad._data[...] = view
        self._expect_hooks = False
        self._ready.clear()

    # -- the user's switches ---------------------------------------------------------------

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes inside accumulate gradients locally, without averaging."""
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    @contextlib.contextmanager
    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False) -> Iterator[None]:
        """For ranks with different numbers of batches: a rank whose loop ended takes part in
        the others' gradient allreduces (with zeros) until every rank has ended."""
        if not enable:
            yield
            return
        MPI = dist._mpi.load()
        comm = self._pg.comm
        self._join_divide_by_initial = divide_by_initial_world_size
        self._joined = True
        error = None
        try:
            yield
        except BaseException as exc:  # noqa: BLE001 - re-raised after the others are told
            error = exc
        finally:
            self._joined = False
        # this rank is out of batches: shadow the others while any is still training
        rounds = 0
        while self._allreduce_int(0, "SUM") > 0:
            rounds += 1
            if throw_on_early_termination:
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
            if self.broadcast_buffers:
                src = self._allreduce_int(-1, "MAX")
                buffers = list(self.module.buffers())
                if buffers:
                    self._sync_states(buffers, src)
            for b in self._buckets:  # nonblocking, to match the others' Iallreduce
                b.buffer[...] = 0
                comm.Iallreduce(MPI.IN_PLACE, [b.buffer, dist._mpi.datatype(b.buffer.dtype)],
                                dist._mpi.reduce_op("SUM", b.buffer.dtype)).Wait()
            if self.find_unused_parameters:
                used = np.zeros(len(self._params), dtype=np.int32)
                comm.Allreduce(MPI.IN_PLACE, used, MPI.MAX)
        # the model of the highest rank among those that finished last is everyone's
        src = self._allreduce_int(self._pg.rank() if rounds == 0 else -1, "MAX")
        self._sync_states(list(self.module.parameters()) + list(self.module.buffers()), src)
        if error is not None:
            raise error

    def _set_static_graph(self) -> None:
        self.static_graph = True

    def register_comm_hook(self, state: Any, hook: Any) -> None:
        raise NotImplementedError("DistributedDataParallel.register_comm_hook: communication "
                                  "hooks are not supported by tapegrad's DDP")


def _reachable_leaves(output: Any) -> set[int]:
    """The ids of the leaves that the graphs of the tensors in ``output`` reach."""
    roots = []
    stack = [output]
    while stack:
        obj = stack.pop()
        if isinstance(obj, Tensor):
            if obj.grad_fn is not None:
                roots.append(obj.grad_fn)
        elif isinstance(obj, (list, tuple)):
            stack.extend(obj)
        elif isinstance(obj, dict):
            stack.extend(obj.values())
        elif hasattr(obj, "__dataclass_fields__"):
            stack.extend(getattr(obj, f) for f in obj.__dataclass_fields__)
    seen: set[int] = set()
    leaves: set[int] = set()
    while roots:
        node = roots.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            leaves.add(id(variable))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                roots.append(nxt)
    return leaves
