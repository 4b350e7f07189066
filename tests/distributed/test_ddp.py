"""DistributedDataParallel and DistributedSampler against torch's DDP on gloo.

``workers/ddp.py`` trains with each option; on 2 ranks every recorded value (parameters,
gradients, buffers, errors) must be torch's bit for bit, and the 20-step training must match
one process that sees the whole batch, to float32 rounding. On 3 ranks the gradients' sums
depend on the order of three additions (MPI's and gloo's differ), so values are compared to
float32 rounding there; errors, keys and buffers exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import launch  # noqa: E402
from cpu_kernels import STEP_ULPS, VECTORIZED  # noqa: E402
from workers.common import same  # noqa: E402

_cache: dict = {}


def outcomes(lib: str, nproc: int, tmp_path_factory) -> list[dict]:
    key = (lib, nproc)
    if key not in _cache:
        out = tmp_path_factory.mktemp(f"ddp-{lib}{nproc}")
        if lib == "torch":
            runs = launch.run_torch("ddp.py", nproc, out)
            assert all(code == 0 for code, _, _ in runs), runs
        else:
            done = launch.run_tapegrad("ddp.py", nproc, out)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        _cache[key] = launch.results(out, nproc)
    return _cache[key]


def close(a, b) -> bool:
    """Equal, arrays to float32 rounding (a relative 1e-6)."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.allclose(a, b, rtol=1e-6,
                                                                        atol=1e-7)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return a == b


def within_steps(a, b) -> bool:
    """Equal but for the extra roundings of torch's scalar kernels (``ATEN_CPU_CAPABILITY=default``:
    SGD's ``a + alpha*b`` rounded twice): float arrays within ``STEP_ULPS`` units in the last
    place of their largest value (docs/float32.md, "Other CPU kernels")."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype.kind == "f":
        scale = float(np.abs(b).max(initial=0.0))
        return a.dtype == b.dtype and a.shape == b.shape and bool(
            (np.abs(a - b) <= STEP_ULPS * np.finfo(b.dtype).eps * scale).all())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(within_steps(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(within_steps(a[k], b[k]) for k in a)
    return same(a, b)


@pytest.mark.parametrize("nproc", [2, 3])
def test_ddp_options_match_torch(nproc, tmp_path_factory) -> None:
    want_ranks = outcomes("torch", nproc, tmp_path_factory)
    got_ranks = outcomes("tapegrad", nproc, tmp_path_factory)
    equal = same if nproc == 2 else close
    problems = []
    for rank, (want, got) in enumerate(zip(want_ranks, got_ranks, strict=True)):
        assert want.keys() == got.keys()
        for name in want:
            # the one-process reference is tapegrad's and torch's own arithmetic, not DDP's:
            # their reductions of four rows may round differently, so to float32 rounding
            check = close if name.startswith("one process") else equal
            if not VECTORIZED and not check(want[name], got[name]):
                check = within_steps
            if not check(want[name], got[name]):
                problems.append(f"rank {rank} {name}:\n  torch    {want[name]}\n"
                                f"  tapegrad {got[name]}")
    assert not problems, "\n".join(problems[:20])


def test_ddp_matches_one_process_with_the_whole_batch(tmp_path_factory) -> None:
    for ranks in (outcomes("tapegrad", 2, tmp_path_factory),):
        status, trained = ranks[0]["train 20 steps"]
        status1, single = ranks[0]["one process whole batch"]
        assert status == status1 == "ok"
        for name in ("w1", "w2"):
            a, b = trained[f"module.{name}"][2], single[name][2]
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)
        # and every rank holds the same parameters
        for other in ranks[1:]:
            assert same(other["train 20 steps"][1]["module.w1"],
                        trained["module.w1"])
