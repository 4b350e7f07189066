"""``utils.data`` compared with torch: datasets, samplers, DataLoader batches and collation.

Shuffled loaders, random samplers and random_split are compared after the same
``manual_seed``: the index order must be torch's exactly, epoch after epoch, because the
seeds are drawn from the (bit-exact) default generator the way torch draws them.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from torchcompare import raised

Point = collections.namedtuple("Point", ["x", "y"])


def tensor_ds(L, n=10):
    x = L.arange(n * 3, dtype=L.float32).reshape(n, 3)
    y = L.arange(n) % 3
    return L.utils.data.TensorDataset(x, y)


def batches(loader):
    return [b for b in loader]


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (10, False),
                                                  (4, True), (16, False)])
@pytest.mark.parametrize("shuffle", [False, True])
def test_tensor_dataset_loader(compare, batch_size, drop_last, shuffle):
    def scenario(L):
        L.manual_seed(0)
        dl = L.utils.data.DataLoader(tensor_ds(L), batch_size=batch_size, shuffle=shuffle,
                                     drop_last=drop_last)
        return len(dl), batches(dl), batches(dl), L.rand(2)

    compare(scenario, rtol=0, atol=0)


def test_shuffle_with_generator_and_seeds(compare):
    def scenario(L):
        out = []
        for seed in (0, 1, 2024):
            g = L.Generator().manual_seed(seed)
            dl = L.utils.data.DataLoader(range(17), batch_size=5, shuffle=True, generator=g)
            out.append([b.tolist() for b in dl] + [b.tolist() for b in dl])
            L.manual_seed(seed)
            dl = L.utils.data.DataLoader(range(17), batch_size=5, shuffle=True)
            out.append([b.tolist() for b in dl])
        return out

    compare(scenario)


def test_random_sampler_variants(compare):
    def scenario(L):
        D = L.utils.data
        L.manual_seed(3)
        g = L.Generator().manual_seed(5)
        return [
            list(D.RandomSampler(range(7))),
            list(D.RandomSampler(range(7), num_samples=17)),
            list(D.RandomSampler(range(7), replacement=True, num_samples=40)),
            list(D.RandomSampler(range(7), generator=g)),
            list(D.SubsetRandomSampler([10, 20, 30, 40], generator=g)),
            list(D.SubsetRandomSampler([10, 20, 30, 40])),
            list(D.WeightedRandomSampler([0.1, 0.9, 0.4], 8, generator=g)),
            list(D.BatchSampler(D.SequentialSampler(range(7)), 3, False)),
            list(D.BatchSampler(range(7), 3, True)),
            len(D.BatchSampler(range(7), 3, False)), len(D.BatchSampler(range(7), 3, True)),
            raised(lambda: D.RandomSampler(range(3), replacement=1)),
            raised(lambda: D.RandomSampler(range(3), num_samples=0)),
            raised(lambda: D.BatchSampler(range(3), 0, False)),
            raised(lambda: D.BatchSampler(range(3), 2, 1)),
            raised(lambda: D.WeightedRandomSampler([[1.0]], 2)),
            L.rand(1),
        ]

    compare(scenario)


def test_random_split(compare):
    def scenario(L):
        D = L.utils.data
        L.manual_seed(0)
        a, b, c = D.random_split(range(20), [5, 7, 8])
        g = L.Generator().manual_seed(42)
        d, e = D.random_split(range(10), [0.3, 0.7], generator=g)
        f = D.random_split(range(11), [0.5, 0.25, 0.25])
        return ([list(s) for s in (a, b, c, d, e)], [s.indices for s in f],
                raised(lambda: D.random_split(range(5), [2, 2])),
                raised(lambda: D.random_split(range(5), [1.5, -0.5])))

    compare(scenario)


def test_random_split_zero_length_warns(compare):
    compare(lambda L: [list(s) for s in L.utils.data.random_split(
        range(2), [0.5, 0.5, 0.0], generator=L.Generator().manual_seed(1))])


def test_datasets(compare):
    def scenario(L):
        D = L.utils.data
        ds = tensor_ds(L, 4)
        cat = ds + tensor_ds(L, 3)
        sub = D.Subset(ds, [3, 1])
        stack = D.StackDataset(ds, range(4))
        kw = D.StackDataset(a=range(4), b=[10, 11, 12, 13])
        return [
            ds[2], len(ds), cat[5], cat[-1], len(cat), sub[0], len(sub), stack[1], kw[3],
            raised(lambda: D.TensorDataset(L.zeros(3), L.zeros(4))),
            raised(lambda: cat[-20]),
            raised(lambda: D.Dataset()[0]),
            raised(lambda: D.StackDataset(range(2), range(3))),
            raised(lambda: D.ConcatDataset([])),
        ]

    compare(scenario)


def test_iterable_dataset(compare):
    def scenario(L):
        D = L.utils.data

        class Stream(D.IterableDataset):
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                return iter(range(self.n))

            def __len__(self):
                return self.n

        return [
            batches(D.DataLoader(Stream(7), batch_size=3)),
            batches(D.DataLoader(Stream(7), batch_size=3, drop_last=True)),
            batches(D.DataLoader(Stream(3), batch_size=None)),
            len(D.DataLoader(Stream(7), batch_size=3)),
            [list(x) for x in [Stream(2) + Stream(3)]],
            raised(lambda: D.DataLoader(Stream(3), shuffle=True)),
        ]

    compare(scenario)


def test_loader_argument_errors(compare):
    def scenario(L):
        D = L.utils.data
        ds = range(5)
        bs = D.BatchSampler(range(5), 2, False)
        loader = D.DataLoader(ds)
        return [
            raised(lambda: D.DataLoader(ds, sampler=D.SequentialSampler(ds), shuffle=True)),
            raised(lambda: D.DataLoader(ds, batch_sampler=bs, batch_size=2)),
            raised(lambda: D.DataLoader(ds, batch_size=None, drop_last=True)),
            raised(lambda: D.DataLoader(ds, num_workers=-1)),
            raised(lambda: D.DataLoader(ds, prefetch_factor=2)),
            raised(lambda: D.DataLoader(ds, persistent_workers=True)),
            raised(lambda: setattr(loader, "batch_size", 3)),
            batches(D.DataLoader(ds, batch_sampler=bs)),
            batches(D.DataLoader(ds, batch_size=None)),
            batches(D.DataLoader(ds, sampler=[4, 0, 2], batch_size=2)),
            batches(D.DataLoader(ds, batch_size=2, collate_fn=lambda b: sum(b))),
        ]

    compare(scenario)


def test_default_collate(compare):
    def scenario(L):
        D = L.utils.data
        c = D.default_collate
        samples = [
            [1.5, 2.5],
            [1, 2, 3],
            [True, False],
            ["a", "b"],
            [b"x", b"y"],
            [np.float32(1.5), np.float32(2.0)],
            [np.int32(1), np.int32(4)],
            [np.float64(0.5), np.float64(1.0)],
            [np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16)],
            [np.ones((2, 2)), np.zeros((2, 2))],
            [L.tensor([1.0, 2.0]), L.tensor([3.0, 4.0])],
            [L.tensor(1), L.tensor(2)],
            [{"a": 1, "b": [L.ones(2), 2.0]}, {"a": 2, "b": [L.zeros(2), 3.0]}],
            [(1, "x", L.tensor(1.0)), (2, "y", L.tensor(2.0))],
            [Point(1, 2.0), Point(3, 4.0)],
            [collections.OrderedDict(z=1, a=2), collections.OrderedDict(z=3, a=4)],
        ]
        out = [c(s) for s in samples]
        out.append([type(c(s)).__name__ for s in samples])
        out.append(raised(lambda: c([object(), object()])))
        out.append(raised(lambda: c([[1, 2], [3]])))
        out.append(raised(lambda: c([np.array(["a"]), np.array(["b"])])))
        out.append(raised(lambda: c([L.zeros(2), L.zeros(3)])))
        return out

    compare(scenario)


def test_default_convert(compare):
    def scenario(L):
        conv = L.utils.data.default_convert
        return [conv(np.arange(3)), conv((np.float32(2), [np.ones(2)])), conv({"k": np.int64(4)}),
                conv("str"), conv(Point(np.zeros(1), 2)), conv(np.array(["s"]))]

    compare(scenario)


def test_loader_over_subset_of_tensor_dataset(compare):
    """The gather fast path for TensorDataset (and Subsets of it) gives torch's batches."""

    def scenario(L):
        L.manual_seed(11)
        ds = tensor_ds(L, 23)
        train, val = L.utils.data.random_split(ds, [0.75, 0.25])
        a = batches(L.utils.data.DataLoader(train, batch_size=4, shuffle=True))
        b = batches(L.utils.data.DataLoader(val, batch_size=4))
        return a, b

    compare(scenario, rtol=0, atol=0)


def test_tensor_dataset_requires_grad_batches_keep_the_graph(compare):
    def scenario(L):
        x = L.arange(6.0).reshape(3, 2).requires_grad_()
        dl = L.utils.data.DataLoader(L.utils.data.TensorDataset(x), batch_size=2)
        (b,) = next(iter(dl))
        b.sum().backward()
        return b, x.grad

    compare(scenario)


def test_index_errors_come_from_the_dataset(compare):
    def scenario(L):
        ds = tensor_ds(L, 3)
        return raised(lambda: batches(L.utils.data.DataLoader(ds, sampler=[0, 5], batch_size=2)))

    compare(scenario)


def test_getitems_is_used(compare):
    def scenario(L):
        D = L.utils.data

        class Batched(D.Dataset):
            calls = []

            def __len__(self):
                return 5

            def __getitem__(self, i):
                raise AssertionError("not used")

            def __getitems__(self, idx):
                self.calls.append(list(idx))
                return [float(i) for i in idx]

        ds = Batched()
        out = batches(D.DataLoader(ds, batch_size=2))
        return out, Batched.calls

    compare(scenario)


def test_loader_speed_is_reasonable(lib):
    """A 60k-sample TensorDataset epoch with batch 64 stays well under a second."""
    import time

    x = lib.zeros(60000, 20)
    y = lib.zeros(60000, dtype=lib.int64)
    dl = lib.utils.data.DataLoader(lib.utils.data.TensorDataset(x, y), batch_size=64,
                                   shuffle=True)
    start = time.perf_counter()
    n = sum(1 for _ in dl)
    assert n == 938
    assert time.perf_counter() - start < 5.0
