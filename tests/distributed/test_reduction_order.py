"""How three ranks' float32 values are added, as docs/guide/distributed.md says: tapegrad (MPICH
on one machine) adds every element as (x0 + x1) + x2; torch's gloo adds in a ring, third i of
the tensor starting from rank i + 1. The two agree on the last third only."""

from __future__ import annotations

import pytest

pytest.importorskip("mpi4py")

import launch  # noqa: E402


def test_three_ranks_add_in_the_documented_orders(tmp_path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    done = launch.run_tapegrad("order.py", 3, ours)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = launch.run_torch("order.py", 3, theirs)
    assert all(code == 0 for code, _, _ in runs), runs
    for rank in range(3):
        assert launch.results(ours, 3)[rank]["orders"] == (
            "ok", ("list", [("list", ["(x0+x1)+x2"])] * 3))
        assert launch.results(theirs, 3)[rank]["orders"] == (
            "ok", ("list", [("list", ["(x1+x2)+x0"]), ("list", ["(x2+x0)+x1"]),
                            ("list", ["(x0+x1)+x2"])]))
