"""Start the ranks of a worker script on real torch (gloo) or on tapegrad (our launcher).

A worker is a torch program (``workers/*.py``): under tapegrad it runs through ``tapegrad
run``'s alias, so ``import torch`` is tapegrad. Each rank pickles what it saw into
``OUT/rank<r>.pkl``; ``results()`` reads them back. Every run binds 127.0.0.1 only, has a
time limit, and leaves nothing running (the process group of a run is killed on timeout).
"""

from __future__ import annotations

import os
import pickle
import signal
import socket
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra: str) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), env.get("PYTHONPATH", "")])
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MASTER_ADDR="127.0.0.1")
    env.update(extra)
    return env


def _wait(procs: list[subprocess.Popen], timeout: float) -> list[tuple[int, str, str]]:
    out = []
    try:
        for p in procs:
            stdout, stderr = p.communicate(timeout=timeout)
            out.append((p.returncode, stdout, stderr))
    except subprocess.TimeoutExpired:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.communicate()
        raise
    return out


def run_torch(script: str, nproc: int, out: Path, args: list[str] = (),
              timeout: float = 120) -> list[tuple[int, str, str]]:
    """The ranks on real torch with gloo, one subprocess each (as torchrun starts them).

    torch's gloo teardown now and then aborts a rank as the process exits (SIGABRT, mostly with
    "terminate called without an active exception": a thread of its own still joinable when it
    is destroyed), on a loaded machine only. A rank that aborts after it saved what it saw
    (``OUT/rank<r>.pkl``), or with that message, failed in torch's exit, not in the values under
    test, so such a run is started again, up to three times in all; any other failure, or that
    abort three times, is returned as it is."""
    runs: list[tuple[int, str, str]] = []
    for _ in range(3):
        for r in range(nproc):
            (out / f"rank{r}.pkl").unlink(missing_ok=True)
        port = str(free_port())
        procs = [subprocess.Popen(
            [sys.executable, str(HERE / "workers" / script), str(out), *args],
            env=_env(RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(nproc), MASTER_PORT=port,
                     LOCAL_WORLD_SIZE=str(nproc), TAPEGRAD_TEST_LIB="torch"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
            for r in range(nproc)]
        runs = _wait(procs, timeout)
        if not any(_teardown_abort(code, err, out / f"rank{r}.pkl")
                   for r, (code, _, err) in enumerate(runs)):
            break
    return runs


_TEARDOWN_ABORT = "terminate called without an active exception"


def _teardown_abort(code: int, stderr: str, saved: Path) -> bool:
    return code != 0 and (_TEARDOWN_ABORT in stderr
                          or (code == -signal.SIGABRT and saved.exists()))


def launch(argv: list[str], timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    """``python -m tapegrad.distributed.run ARGV`` (our launcher), with a time limit."""
    p = subprocess.Popen([sys.executable, "-m", "tapegrad.distributed.run", *argv],
                         env=_env(TAPEGRAD_TEST_LIB="tapegrad", **env), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    [(code, stdout, stderr)] = _wait([p], timeout)
    return subprocess.CompletedProcess(argv, code, stdout, stderr)


def run_tapegrad(script: str, nproc: int, out: Path, args: list[str] = (),
                 timeout: float = 120) -> subprocess.CompletedProcess:
    return launch(["--nproc-per-node", str(nproc), str(HERE / "workers" / script), str(out),
                   *args], timeout=timeout)


def results(out: Path, nproc: int) -> list[dict]:
    ranks = []
    for r in range(nproc):
        with open(out / f"rank{r}.pkl", "rb") as f:
            ranks.append(pickle.load(f))
    return ranks
