"""Distributed workloads: allreduce against torch's gloo, and a DDP step against torch's DDP.

Each runs on 2 ranks of this machine, in separate processes, so these workloads have their own
runner (``Workload.run``) instead of timing a step in this process: torch's ranks are started
as torchrun starts them (gloo on 127.0.0.1), tapegrad's under ``python -m
tapegrad.distributed.run --nproc-per-node 2`` (MPI); both run ``_distributed_rank.py``,
written once against torch's API. The reported number is the median over repeats of one
step's time on rank 0 (each repeat between two barriers).

=================  ============================================================================
allreduce-1mb      ``dist.all_reduce`` of 1 MiB of float32 (ms/op)
allreduce-64mb     ``dist.all_reduce`` of 64 MiB of float32 (ms/op)
ddp-step           a DDP step of the MLP workload's 784-256-256-10 model, 64 rows per rank
=================  ============================================================================
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from ._harness import Result, Side, Workload

RANK_SCRIPT = Path(__file__).resolve().parent / "_distributed_rank.py"
NPROC = 2


def _env(**extra: str) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MASTER_ADDR="127.0.0.1")
    src = Path(__file__).resolve().parents[1] / "src"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def _port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def _parse(stdout: str) -> dict:
    for line in stdout.splitlines():
        if "RESULT " in line:
            return json.loads(line.split("RESULT ", 1)[1])
    raise RuntimeError("no result line in:\n" + stdout[-2000:])


# torch's gloo teardown now and then aborts a rank as the process exits, on a loaded machine
# (a thread of its own still joinable when it is destroyed): torch's exit, not the timings, so
# such a run is started once more
_TEARDOWN_ABORT = "terminate called without an active exception"


def _run(lib: str, args: list[str], timeout: float = 600) -> dict:
    if lib == "torch":
        for attempt in range(2):
            port = _port()
            procs = [subprocess.Popen([sys.executable, str(RANK_SCRIPT), *args],
                                      env=_env(RANK=str(r), WORLD_SIZE=str(NPROC),
                                               LOCAL_RANK=str(r), MASTER_PORT=port),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for r in range(NPROC)]
            outs = [p.communicate(timeout=timeout) for p in procs]
            if not any(p.returncode for p in procs):
                return _parse(outs[0][0])
            if attempt or not any(_TEARDOWN_ABORT in err for _, err in outs):
                break
        raise RuntimeError(outs[0][1][-2000:] + outs[1][1][-2000:])
    done = subprocess.run([sys.executable, "-m", "tapegrad.distributed.run", "--nproc-per-node",
                           str(NPROC), str(RANK_SCRIPT), *args], env=_env(),
                          capture_output=True, text=True, timeout=timeout)
    if done.returncode:
        raise RuntimeError(done.stderr[-3000:])
    return _parse(done.stdout)


def _runner(kind: str) -> Callable:
    def run(w: Workload, quick: bool, libs: dict[str, ModuleType],
            log: Callable[[str], None]) -> Result:
        cfg = w.config(quick)
        res = Result(w.name, w.unit, w.describe(cfg), cfg, w.higher_is_better, {})
        args = [kind, str(cfg["size"]), str(cfg["iterations"]), str(cfg["repeats"])]
        for name in libs:
            log(f"  {name}: {NPROC} ranks")
            try:
                out = _run(name, args)
            except Exception as exc:  # noqa: BLE001 - reported in the table
                if name == "torch":
                    raise
                res.sides[name] = Side("error", str(exc).strip().splitlines()[-1][:200])
                continue
            per_step = [s / cfg["iterations"] for s in out["seconds"]]
            res.sides[name] = Side("ok", first_loss=out["first_loss"],
                                   seconds_per_step=statistics.median(per_step),
                                   repeat_seconds=per_step, steps_per_repeat=1,
                                   value=w.per_step(statistics.median(per_step), cfg),
                                   peak_bytes=out["peak"],
                                   peak_method="tracemalloc" if out["peak"] else "n/a")
        tg, th = res.sides.get("tapegrad"), res.sides.get("torch")
        res.ratio_of = "tapegrad/torch"
        if tg and th and tg.value and th.value:
            if tg.first_loss is not None and th.first_loss is not None:
                res.loss_rel_diff = abs(tg.first_loss - th.first_loss) / abs(th.first_loss)
            res.ratio = tg.value / th.value
            res.ratio_best = min(tg.repeat_seconds) / min(th.repeat_seconds)
        return res

    return run


def _ms(seconds: float, cfg: dict) -> float:
    return seconds * 1e3


def _allreduce(name: str, mib: int, quick_mib: float) -> Workload:
    def config(quick: bool) -> dict:
        size = int((quick_mib if quick else mib) * 2 ** 20)
        return {"size": size, "iterations": 1 if quick else max(2, 64 // mib * 4),
                "repeats": 1 if quick else 7}

    return Workload(
        name=name, unit="ms/op", requires=("distributed.all_reduce",), config=config,
        setup=lambda lib, cfg, bank: (lambda: None), per_step=_ms,
        describe=lambda cfg: f"all_reduce of {cfg['size'] / 2 ** 20:g} MiB float32, "
                             f"{NPROC} ranks (tapegrad: MPI; torch: gloo)",
        run=_runner("allreduce"))


ALLREDUCE_1MB = _allreduce("allreduce-1mb", 1, 1 / 16)
ALLREDUCE_64MB = _allreduce("allreduce-64mb", 64, 1 / 4)
DDP_STEP = Workload(
    name="ddp-step", unit="ms/step", requires=("nn.parallel.DistributedDataParallel",),
    config=lambda quick: {"size": 8 if quick else 64, "iterations": 1 if quick else 20,
                          "repeats": 1 if quick else 5},
    setup=lambda lib, cfg, bank: (lambda: None), per_step=_ms,
    describe=lambda cfg: f"DDP step, 784-256-256-10 MLP, batch {cfg['size']} per rank, "
                         f"{NPROC} ranks, SGD",
    run=_runner("ddp"))
