"""DistributedSampler against torch: every replica's indices, for each option and epoch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n", [1, 7, 10, 16])
@pytest.mark.parametrize("options", [{}, {"shuffle": False}, {"drop_last": True},
                                     {"seed": 7}, {"shuffle": False, "drop_last": True}])
def test_indices_are_torchs(lib, n, options):
    for replicas in (1, 3, 4):
        for rank in range(replicas):
            ours = lib.utils.data.DistributedSampler(range(n), replicas, rank, **options)
            theirs = torch.utils.data.DistributedSampler(range(n), replicas, rank, **options)
            for epoch in (0, 1, 5):
                ours.set_epoch(epoch)
                theirs.set_epoch(epoch)
                assert list(ours) == list(theirs)
                assert len(ours) == len(theirs)


def test_bad_rank(compare):
    compare(lambda L: L.utils.data.DistributedSampler(range(4), num_replicas=2, rank=2))
    compare(lambda L: L.utils.data.DistributedSampler(range(4), num_replicas=2, rank=-1))
