"""``DataLoader(num_workers > 0)`` compared with torch: real worker processes.

Each scenario runs on torch and on tapegrad with the same seeds: the batches, their order, what
each worker sees (``get_worker_info``, its seeds, the random numbers it draws) and the main
process's random stream afterwards must be torch's. Workers are forked (Linux's default, as in
torch), so a scenario starts several processes; the datasets are tiny to keep that fast. Every
loader that could wait on a worker has a ``timeout`` or ends by itself.
"""

from __future__ import annotations

import importlib
import os
import pickle
import random
import time

import numpy as np
import pytest
from torchcompare import Raised, raised


class Probe:
    """A map-style dataset whose items say what the worker saw: its info, its seeds, and one
    draw from each random generator (tapegrad/torch, Python's, NumPy's)."""

    def __init__(self, lib, n=6):
        self.lib = lib
        self.n = n
        self.offset = 0

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        L = self.lib
        info = L.utils.data.get_worker_info()
        return {
            "i": i + self.offset,
            "id": -1 if info is None else info.id,
            "num_workers": 0 if info is None else info.num_workers,
            "seed": 0 if info is None else info.seed,
            "initial_seed": L.initial_seed(),
            "torch_rand": L.rand(2),
            "py_random": random.random(),
            "np_random": float(np.random.rand()),
            "same_dataset": info is None or info.dataset is self,
        }


class Stream:
    """An iterable dataset over ``range(n)``, sharded between workers when ``shard``."""

    def __init__(self, lib, n, shard):
        self.lib, self.n, self.shard = lib, n, shard

    def __iter__(self):
        info = self.lib.utils.data.get_worker_info()
        if self.shard and info is not None:
            return iter(range(info.id, self.n, info.num_workers))
        return iter(range(self.n))


def stream(L, n, shard=False):
    cls = type("Stream", (Stream, L.utils.data.IterableDataset), {})
    return cls(L, n, shard)


def tensor_ds(L, n=11):
    return L.utils.data.TensorDataset(L.arange(n * 2, dtype=L.float32).reshape(n, 2),
                                      L.arange(n))


def lists(loader):
    return [[t.tolist() for t in b] if isinstance(b, list) else b.tolist() for b in loader]


@pytest.mark.parametrize("num_workers", [0, 1, 2])
def test_map_style_batches_and_rng_stream(compare, num_workers):
    def scenario(L):
        D = L.utils.data
        out = []
        L.manual_seed(7)
        g = L.Generator().manual_seed(3)
        for kwargs in ({"shuffle": True, "generator": g}, {"shuffle": True},
                       {"shuffle": False, "drop_last": True}):
            dl = D.DataLoader(tensor_ds(L), batch_size=3, num_workers=num_workers, **kwargs)
            out.append(lists(dl))
            out.append(lists(dl))  # a second epoch draws new seeds
        out.append(L.rand(3))  # the main stream after the passes
        out.append(lists(D.DataLoader(range(7), batch_size=None, num_workers=num_workers)))
        out.append(lists(D.DataLoader(range(7), batch_size=2, num_workers=num_workers,
                                      collate_fn=lambda b: L.tensor(b).sum())))
        return out

    compare(scenario, rtol=0, atol=0)


@pytest.mark.parametrize("num_workers", [1, 2])
def test_worker_info_seeds_and_random_draws(compare, num_workers):
    def scenario(L):
        D = L.utils.data
        L.manual_seed(11)
        out = [D.get_worker_info()]
        dl = D.DataLoader(Probe(L), batch_size=2, num_workers=num_workers)
        out.append(list(dl))
        g = L.Generator().manual_seed(5)
        dl = D.DataLoader(Probe(L), batch_size=None, num_workers=num_workers, generator=g)
        out.append(list(dl))
        out.append(L.rand(2))
        return out

    compare(scenario, rtol=0, atol=0)


def test_worker_init_fn_and_worker_info_object(compare):
    def scenario(L):
        D = L.utils.data

        def init(worker_id):
            info = D.get_worker_info()
            info.dataset.offset = 100 * (worker_id + 1)
            random.seed(worker_id)  # reseeding in init_fn is visible to the dataset

        L.manual_seed(0)
        dl = D.DataLoader(Probe(L, 5), batch_size=2, num_workers=2, worker_init_fn=init)
        return list(dl)

    compare(scenario, rtol=0, atol=0)


def test_worker_info_repr_and_frozen(lib_name):
    from torch.utils.data._utils.worker import WorkerInfo as TorchWorkerInfo

    from tapegrad.utils.data._worker import WorkerInfo

    for info_cls in (TorchWorkerInfo, WorkerInfo):
        info = info_cls(id=1, num_workers=2, seed=3, dataset=None)
        assert repr(info) == ("WorkerInfo(id=1, num_workers=2, seed=3, dataset=None, rng=None, "
                              "worker_method='multiprocessing')")
        with pytest.raises(AttributeError):
            info.id = 4


@pytest.mark.parametrize("num_workers", [1, 2])
def test_iterable_dataset_with_and_without_sharding(compare, num_workers):
    def scenario(L):
        D = L.utils.data
        L.manual_seed(1)
        return [
            lists(D.DataLoader(stream(L, 7), batch_size=2, num_workers=num_workers)),
            lists(D.DataLoader(stream(L, 7, True), batch_size=2, num_workers=num_workers)),
            lists(D.DataLoader(stream(L, 9, True), batch_size=2, num_workers=num_workers,
                               drop_last=True)),
            lists(D.DataLoader(stream(L, 5, True), batch_size=None, num_workers=num_workers)),
            lists(D.DataLoader(stream(L, 1, True), batch_size=3, num_workers=num_workers)),
            L.rand(2),
        ]

    compare(scenario, rtol=0, atol=0)


def test_iterable_length_warning_names_workers(compare):
    def scenario(L):
        D = L.utils.data
        cls = type("Sized", (Stream, D.IterableDataset), {"__len__": lambda self: 2})
        ds = cls(L, 4, False)
        dl = D.DataLoader(ds, batch_size=None, num_workers=1)
        n = len(dl)
        return n, lists(dl)

    compare(scenario, rtol=0, atol=0)


def test_out_of_order_delivery_gives_every_batch(compare):
    def scenario(L):
        D = L.utils.data
        L.manual_seed(2)
        dl = D.DataLoader(range(10), batch_size=3, shuffle=True, num_workers=2, in_order=False,
                          prefetch_factor=1)
        return sorted(lists(dl)), L.rand(2)

    compare(scenario, rtol=0, atol=0)


def test_persistent_workers_over_two_epochs(compare):
    def scenario(L):
        D = L.utils.data

        class Pids(D.Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                return os.getpid(), i, L.rand(1).item()

        L.manual_seed(4)
        dl = D.DataLoader(Pids(), batch_size=None, shuffle=True, num_workers=2,
                          persistent_workers=True)
        first = list(dl)
        it = iter(dl)
        second = list(it)
        third = list(dl)
        it = iter(dl)
        partial = [next(it)]  # leave an epoch early: its pending batches are dropped
        fourth = list(dl)
        pids = {p for p, _, _ in first}
        same_workers = pids == {p for p, _, _ in second} == {p for p, _, _ in third} == \
            {p for p, _, _ in fourth}
        strip = [[(i, r) for _, i, r in epoch] for epoch in (first, second, third, partial,
                                                             fourth)]
        iterable = D.DataLoader(stream(L, 5, True), batch_size=2, num_workers=2,
                                persistent_workers=True)
        return (same_workers, len(pids), os.getpid() not in pids, strip, iter(dl) is it,
                lists(iterable), lists(iterable), L.rand(2))

    compare(scenario, rtol=0, atol=0)


def drain(loader):
    """Every batch of one pass; the workers are stopped even when a batch raises (torch's
    iterator, caught in the exception's reference cycle, would otherwise wait 5 s on them)."""
    it = iter(loader)
    try:
        return list(it)
    finally:
        it._shutdown_workers()


def first(loader):
    """The first batch of a pass, as ``drain`` (workers stopped however it ends)."""
    it = iter(loader)
    try:
        return next(it)
    finally:
        it._shutdown_workers()


def first_and_last_lines(fn):
    """An exception as (type, its first line, the original exception's line)."""
    result = raised(fn)
    if not isinstance(result, Raised):
        return result
    lines = result.message.splitlines()
    return result.name, lines[0], lines[1] if len(lines) > 1 else None, lines[-1]


class Failing:
    def __init__(self, lib, exc):
        self.lib, self.exc = lib, exc

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            raise self.exc
        return i


class TwoArgError(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


def test_worker_exceptions_are_reraised_with_their_traceback(compare):
    def scenario(L):
        D = L.utils.data

        def load(exc, **kwargs):
            return first_and_last_lines(
                lambda: drain(D.DataLoader(Failing(L, exc), num_workers=2, **kwargs)))

        def bad_init(worker_id):
            raise RuntimeError(f"init failed in {worker_id}")

        return [
            load(ValueError("bad item")),
            load(KeyError("missing")),
            load(TwoArgError(1, 2)),
            load(IndexError("out of range"), batch_size=2),
            first_and_last_lines(lambda: drain(D.DataLoader(range(4), num_workers=1,
                                                            worker_init_fn=bad_init))),
        ]

    compare(scenario)


def test_keyerror_message_keeps_its_line_breaks(lib):
    D = lib.utils.data
    with pytest.raises(KeyError) as info:
        drain(D.DataLoader(Failing(lib, KeyError("k")), num_workers=1))
    assert str(info.value).startswith("Caught KeyError in DataLoader worker process 0.\n")
    assert "Traceback (most recent call last):" in str(info.value)
    assert "__getitem__" in str(info.value)  # the worker's frames are in the message


# torch's iterator that fails its prefetch_factor check is finalized half-built, and its __del__
# raises an AttributeError that Python reports as unraisable; tapegrad's does not.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_argument_errors_and_warnings(compare):
    def scenario(L):
        D = L.utils.data
        ds = range(4)
        return [
            raised(lambda: D.DataLoader(ds, prefetch_factor=2)),
            raised(lambda: D.DataLoader(ds, num_workers=1, prefetch_factor=-1)),
            raised(lambda: D.DataLoader(ds, persistent_workers=True)),
            raised(lambda: D.DataLoader(ds, multiprocessing_context="fork")),
            raised(lambda: D.DataLoader(ds, num_workers=1, multiprocessing_context="thread")),
            raised(lambda: D.DataLoader(ds, num_workers=1, multiprocessing_context=3)),
            raised(lambda: D.DataLoader(ds, num_workers=1, timeout=-1)),
            raised(lambda: iter(D.DataLoader(ds, timeout=1))),
            raised(lambda: iter(D.DataLoader(ds, num_workers=1, prefetch_factor=0))),
            D.DataLoader(ds, num_workers=2).prefetch_factor,
            type(D.DataLoader(ds, num_workers=1, multiprocessing_context="spawn")
                 .multiprocessing_context).__name__,
            lists(D.DataLoader(ds, batch_size=2, num_workers=1, pin_memory=True)),
            lists(D.DataLoader(ds, batch_size=2, num_workers=1, timeout=5, prefetch_factor=1)),
        ]

    compare(scenario)


def test_too_many_workers_warns(compare):
    def scenario(L):
        n = len(os.sched_getaffinity(0)) + 1
        dl = L.utils.data.DataLoader(range(3), num_workers=n)
        return len(dl)

    compare(scenario)


class Slow:
    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(0.5)
        return i


class Dying:
    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 2

    def __getitem__(self, i):
        os._exit(3)


def test_timeout_and_a_dead_worker(compare):
    def scenario(L):
        D = L.utils.data
        slow = first_and_last_lines(
            lambda: first(D.DataLoader(Slow(L), num_workers=1, timeout=0.05)))
        dead = raised(lambda: first(D.DataLoader(Dying(L), num_workers=1, timeout=2)))
        return slow, dead.name, dead.message.split("(pid(s)")[0], "exited unexpectedly" in \
            dead.message

    compare(scenario)


def test_workers_end_on_break_and_on_deletion(lib):
    D = lib.utils.data
    dl = D.DataLoader(tensor_ds(lib, 40), batch_size=2, num_workers=2)
    it = iter(dl)
    next(it)
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    del it  # the iterator goes: its workers are asked to exit
    for w in workers:
        w.join(5)
        assert not w.is_alive()
    # a pass run to its end shuts its workers down by itself
    it = iter(dl)
    assert len(list(it)) == 20
    assert not any(w.is_alive() for w in it._workers)
    # persistent workers live until the loader goes
    dl = D.DataLoader(range(4), num_workers=2, persistent_workers=True)
    assert len(list(dl)) == 4
    workers = list(dl._iterator._workers)
    assert all(w.is_alive() for w in workers)
    del dl
    for w in workers:
        w.join(5)
        assert not w.is_alive()


def test_spawn_context_gives_the_same_batches(lib):
    D = lib.utils.data
    lib.manual_seed(0)
    expected = lists(D.DataLoader(tensor_ds(lib), batch_size=4, shuffle=True))
    lib.manual_seed(0)
    dl = D.DataLoader(tensor_ds(lib), batch_size=4, shuffle=True, num_workers=1,
                      multiprocessing_context="spawn", timeout=60)
    assert lists(dl) == expected


def test_unpicklable_batch_is_an_error_not_a_hang(lib, lib_name):
    if lib_name != "tapegrad":
        pytest.skip("torch waits forever on a batch its worker cannot pickle")
    D = lib.utils.data
    dl = D.DataLoader(range(2), batch_size=None, num_workers=1, timeout=20,
                      collate_fn=lambda x: (lambda: x))
    with pytest.raises(Exception, match="Caught .*Error in DataLoader worker process 0"):
        first(dl)


def test_tensors_cross_processes_by_pickling(compare):
    def scenario(L):
        from multiprocessing.reduction import ForkingPickler

        if L.__name__ == "tapegrad":  # its reducer is registered once a DataLoader starts workers
            importlib.import_module("tapegrad.utils.data._queues")
        x = L.arange(12.0, dtype=L.float64).reshape(3, 4)
        view = x.t()[1:]
        leaf = L.ones(2, requires_grad=True)
        back = [pickle.loads(ForkingPickler.dumps(t)) for t in (x, view, leaf,
                                                                L.tensor([1, 2], dtype=L.int16))]
        return back, [t.requires_grad for t in back], raised(ForkingPickler.dumps, leaf * 2)

    compare(scenario, rtol=0, atol=0)


def test_tensor_pickling_for_workers_copies_once(lib, lib_name):
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's pickling cost")
    from multiprocessing.reduction import ForkingPickler

    importlib.import_module("tapegrad.utils.data._queues")  # registers the Tensor reducer
    x = lib.zeros(256, 1024)
    payload = ForkingPickler.dumps(x)
    assert len(payload) < x.numel() * 4 + 1000  # the elements once, and little else
    view = x[::2]
    assert len(ForkingPickler.dumps(view)) < view.numel() * 4 + 1000


def test_numpy_seed_of_each_worker_is_torchs(lib, lib_name):
    if lib_name != "tapegrad":
        pytest.skip("tapegrad's internal helper against torch's")
    from torch.utils.data._utils.worker import _generate_state

    from tapegrad.utils.data._worker import _numpy_seed

    for base in (0, 1, 2**32 - 1, 2**32, 6602931244009092803, 2**63 - 1):
        for worker in (0, 1, 7):
            assert _numpy_seed(base, worker) == _generate_state(base, worker)


def test_get_worker_info_in_main_process_is_none(compare):
    compare(lambda L: L.utils.data.get_worker_info())
