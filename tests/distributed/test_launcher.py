"""The launcher: labelled output, torch's environment, exit codes, failures that end the job
in bounded time, and worlds made of several launchers or of ranks started one by one."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("mpi4py")

import launch  # noqa: E402

WORKERS = launch.HERE / "workers"


def run(mode: str, tmp_path, nproc: int = 2, timeout: float = 60):
    start = time.monotonic()
    done = launch.launch(["--nproc-per-node", str(nproc), str(WORKERS / "failing.py"),
                          str(tmp_path), mode], timeout=timeout)
    return done, time.monotonic() - start


def test_ranks_run_with_labelled_output_and_exit_0(tmp_path) -> None:
    done, _ = run("ok", tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "[default0]:rank 0 sum [2.0, 2.0]" in lines
    assert "[default1]:rank 1 sum [2.0, 2.0]" in lines
    assert "[default1]:rank 1 to stderr" in done.stderr.splitlines()


def test_a_rank_that_raises_stops_the_others(tmp_path) -> None:
    done, seconds = run("raise", tmp_path)
    assert done.returncode == 1
    assert seconds < 30
    assert "ZeroDivisionError: division by zero" in done.stderr
    assert "Root Cause (first observed failure)" in done.stderr
    assert "rank      : 1 (local_rank: 1)" in done.stderr
    assert "rank 0 sum" not in done.stdout


def test_a_rank_that_dies_stops_the_others(tmp_path) -> None:
    done, seconds = run("die", tmp_path)
    assert done.returncode == 1
    assert seconds < 30
    assert "FAILED" in done.stderr
    assert "rank 0 sum" not in done.stdout


def test_a_rank_that_never_joins_times_out(tmp_path) -> None:
    done, seconds = run("hang", tmp_path)
    assert done.returncode == 1
    assert seconds < 30  # the group's timeout is 3 s
    assert "[Rank 0] Watchdog caught collective operation timeout: all_reduce ran for " \
           "longer than its timeout of 3 s" in done.stderr


def test_a_rank_that_exits_before_init_stops_the_others(tmp_path) -> None:
    done, seconds = run("exit-early", tmp_path)
    assert done.returncode == 1
    assert seconds < 30
    assert "exitcode  : 3" in done.stderr


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_launcher_ends_every_rank(sig, tmp_path) -> None:
    job = subprocess.Popen([sys.executable, "-m", "tapegrad.distributed.run", "--nproc-per-node",
                            "2", str(WORKERS / "failing.py"), str(tmp_path), "sleep"],
                           env=launch._env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)
    try:
        ready = 0
        while ready < 2:  # both ranks are in their sleep
            line = job.stdout.readline()
            assert line, job.stderr.read()
            ready += "ready" in line
        start = time.monotonic()
        job.send_signal(sig)
        job.communicate(timeout=30)
        assert job.returncode != 0
        assert time.monotonic() - start < 30
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
    time.sleep(1)
    left = [pid for pid in os.listdir("/proc") if pid.isdigit() and str(tmp_path).encode()
            in _cmdline(pid)]
    assert not left


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def test_tapegrad_run_takes_the_launcher_options(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tapegrad", "run", "--nproc-per-node", "2",
         "--local-ranks-filter", "1", str(WORKERS / "failing.py"), str(tmp_path), "ok"],
        env=launch._env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["[default1]:rank 1 ready",
                                        "[default1]:rank 1 sum [2.0, 2.0]"]


def test_two_launchers_join_into_one_world(tmp_path) -> None:
    port = str(launch.free_port())
    procs = [subprocess.Popen(
        [sys.executable, "-m", "tapegrad.distributed.run", "--nnodes", "2", "--node-rank",
         str(node), "--nproc-per-node", "1", "--master-addr", "127.0.0.1", "--master-port",
         port, str(WORKERS / "joining.py"), str(tmp_path)], env=launch._env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        for node in (0, 1)]
    results = launch._wait(procs, 60)
    for code, _, stderr in results:
        assert code == 0, stderr
    assert "[default0]:rank 0/2 sum 3.0 ['r0', 'r1']" in results[0][1]
    assert "[default0]:rank 1/2 sum 3.0 ['r0', 'r1']" in results[1][1]


@pytest.mark.parametrize("method", ["tcp", "file"])
def test_ranks_started_one_by_one_meet_through_init_method(method, tmp_path) -> None:
    """Each rank under its own ``mpiexec -n 1`` (one MPI job each), as separately started
    processes are, with ``init_method`` and ``rank``/``world_size`` given."""
    from tapegrad.distributed.run import find_mpiexec

    url = f"tcp://127.0.0.1:{launch.free_port()}" if method == "tcp" else \
        f"file://{tmp_path / 'store'}"
    procs = [subprocess.Popen(
        [find_mpiexec(), "-n", "1", sys.executable, "-m", "tapegrad", "run",
         str(WORKERS / "joining.py"), str(tmp_path), url],
        env=launch._env(RANK=str(r), WORLD_SIZE="3"), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True) for r in range(3)]
    results = launch._wait(procs, 60)
    for r, (code, stdout, stderr) in enumerate(results):
        assert code == 0, stderr
        assert f"rank {r}/3 sum 6.0 ['r0', 'r1', 'r2']" in stdout


def test_without_mpi4py_is_available_is_false_and_init_says_how_to_install(tmp_path) -> None:
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import tapegrad.distributed as dist\n"
            "print(dist.is_available())\n"
            "try:\n    dist.init_process_group('gloo', init_method='tcp://127.0.0.1:1', "
            "rank=0, world_size=1)\nexcept RuntimeError as e:\n    print(e)\n")
    env = launch._env()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.stdout.splitlines() == [
        "False", "torch.distributed needs MPI: pip install 'tapegrad[distributed]' (or: pip "
        "install mpi4py mpich)"], done.stderr
    assert "mpi4py" not in os.environ.get("PYTHONPATH", "")


def _kernel() -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", os.uname().release)[:2])


_SCHED_GETATTR = {"x86_64": 315, "aarch64": 275}


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine not in _SCHED_GETATTR
                    or _kernel() < (6, 12), reason="a task's own slice: Linux 6.12 and later")
def test_ranks_run_with_a_short_scheduler_slice() -> None:
    """Each rank (and what it starts) asks Linux for a 0.1 ms slice (``_rank.shorten_slice``)."""
    code = ("import ctypes, struct; b = ctypes.create_string_buffer(56); "
            f"ctypes.CDLL(None).syscall({_SCHED_GETATTR[os.uname().machine]}, 0, b, 56, 0); "
            "print('slice', struct.unpack_from('Q', b, 24)[0])")
    done = launch.launch(["--nproc-per-node", "2", "--no-python", sys.executable, "-c", code],
                         timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ["[default0]:slice 100000",
                                                "[default1]:slice 100000"]
