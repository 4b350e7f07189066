"""The stores and DistributedSampler, in one process, against torch's."""

from __future__ import annotations

from datetime import timedelta

import pytest


def store_story(dist, make):
    s = make(dist)
    out = [s.set("k", "v"), s.get("k"), s.add("c", 3), s.add("c", -1), s.get("c"),
           s.check(["k", "c"]), s.check(["nope"]), s.compare_set("z", "", "a"),
           s.compare_set("z", "x", "b"), s.compare_set("z", "a", "b"), s.get("z"),
           s.delete_key("k"), s.delete_key("k"), s.check(["k"])]
    s.multi_set(["m1", "m2"], ["1", b"2"])
    out.append(s.multi_get(["m1", "m2"]))
    s.append("m1", "x")
    out.append(s.get("m1"))
    s.wait(["m1"])
    s.set_timeout(timedelta(milliseconds=200))
    out.append(s.timeout)
    try:
        s.get("absent")
    except Exception as exc:  # noqa: BLE001
        out.append((type(exc).__name__, str(exc)))
    p = dist.PrefixStore("pre", s)
    p.set("a", "1")
    out += [p.get("a"), s.get("pre/a")]
    return out


STORES = {
    "hash": lambda dist, path=None: dist.HashStore(),
    "tcp": lambda dist, path=None: dist.TCPStore("127.0.0.1", 0, is_master=True,
                                                 wait_for_workers=False),
}


@pytest.mark.parametrize("kind", sorted(STORES))
def test_store_matches_torch(kind, lib, oracle) -> None:
    ours = store_story(lib.distributed, STORES[kind])
    theirs = store_story(oracle.distributed, STORES[kind])
    assert ours == theirs


def test_file_store_matches_torch(lib, oracle, tmp_path) -> None:
    ours = store_story(lib.distributed, lambda d: d.FileStore(str(tmp_path / "a"), 1))
    theirs = store_story(oracle.distributed, lambda d: d.FileStore(str(tmp_path / "b"), 1))
    assert ours == theirs


def test_file_store_is_shared_by_two_instances(lib, tmp_path) -> None:
    a = lib.distributed.FileStore(str(tmp_path / "s"), 2)
    b = lib.distributed.FileStore(str(tmp_path / "s"), 2)
    a.set("x", "1")
    assert b.get("x") == b"1"
    assert b.add("n", 2) == 2 and a.add("n", 1) == 3


@pytest.mark.parametrize("n", [10, 11, 3])
@pytest.mark.parametrize("replicas", [2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("shuffle", [True, False])
def test_distributed_sampler_gives_torch_indices(n, replicas, drop_last, shuffle, lib,
                                                 oracle) -> None:
    from torch.utils.data.distributed import DistributedSampler as Theirs

    Ours = lib.utils.data.distributed.DistributedSampler
    for rank in range(replicas):
        a = Ours(range(n), replicas, rank, shuffle=shuffle, seed=5, drop_last=drop_last)
        b = Theirs(range(n), replicas, rank, shuffle=shuffle, seed=5, drop_last=drop_last)
        for epoch in (0, 3):
            a.set_epoch(epoch)
            b.set_epoch(epoch)
            assert list(a) == list(b) and len(a) == len(b)


def test_distributed_sampler_bad_rank(lib, oracle) -> None:
    def err(L):
        with pytest.raises(ValueError) as info:
            L.utils.data.distributed.DistributedSampler(range(4), 2, 2)
        return str(info.value)

    assert err(lib) == err(oracle)


def test_data_parallel_is_the_module_on_cpu(lib, oracle) -> None:
    def story(L):
        m = L.nn.DataParallel(L.nn.Linear(3, 2))
        with L.no_grad():  # values of our own: the seeded initialisation's last bits depend on
            m.module.weight.copy_(L.tensor([[0.5, -0.25, 0.125], [1.0, 2.0, -3.0]]))  # the CPU
            m.module.bias.copy_(L.tensor([0.75, -1.5]))
        y = m(L.ones(1, 3))
        return list(m.state_dict()), m.device_ids, y.detach().numpy().tolist(), \
            type(m.module).__name__

    assert story(lib) == story(oracle)
