"""Every collective against torch's gloo backend, on 2 ranks (bit for bit on random floats)
and 3 ranks (on integer-valued data, whose sums do not depend on the order)."""

from __future__ import annotations

import pytest

pytest.importorskip("mpi4py")

import launch  # noqa: E402
from workers.common import same  # noqa: E402

_cache: dict = {}


def outcomes(lib: str, nproc: int, tmp_path_factory) -> list[dict]:
    key = (lib, nproc)
    if key not in _cache:
        out = tmp_path_factory.mktemp(f"{lib}{nproc}")
        if lib == "torch":
            runs = launch.run_torch("collectives.py", nproc, out)
            assert all(code == 0 for code, _, _ in runs), runs
        else:
            done = launch.run_tapegrad("collectives.py", nproc, out)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        _cache[key] = launch.results(out, nproc)
    return _cache[key]


@pytest.mark.parametrize("nproc", [2, 3])
def test_every_collective_matches_torch_gloo(nproc, tmp_path_factory) -> None:
    torch_ranks = outcomes("torch", nproc, tmp_path_factory)
    ours = outcomes("tapegrad", nproc, tmp_path_factory)
    problems = []
    for rank, (want, got) in enumerate(zip(torch_ranks, ours, strict=True)):
        assert want.keys() == got.keys()
        for name in want:
            if not same(want[name], got[name]):
                problems.append(f"rank {rank} {name}:\n  torch    {want[name]}\n"
                                f"  tapegrad {got[name]}")
    assert not problems, f"{len(problems)} differences\n" + "\n".join(problems[:40])
