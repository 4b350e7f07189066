"""The launcher: ``tapegrad run --nproc-per-node N script.py`` and ``python -m
tapegrad.distributed.run`` (torchrun's flags).

One launcher runs on each machine. It starts that machine's ranks as one MPI job::

    mpiexec -n N python -m tapegrad.distributed._rank --node-rank K ... -- script.py ARGS

with torchrun's environment (``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE``,
``LOCAL_WORLD_SIZE``, ``GROUP_WORLD_SIZE``, ``TORCHELASTIC_RUN_ID``...; each rank adds its own
``RANK`` and ``LOCAL_RANK``). With ``--nnodes M`` the launchers of the M machines start M jobs;
``init_process_group`` joins them through the store at ``MASTER_ADDR:MASTER_PORT``.

While the job runs the launcher watches it: a rank that fails writes a report; the launcher
then stops the job (SIGTERM to ``mpiexec``, which ends every rank) and prints torchrun's
summary of the failure. Ctrl-C and SIGTERM are passed to ``mpiexec``. The exit status is 0,
or 1 after a failure, as torchrun's.

``mpiexec`` is the one of the ``mpich`` wheel (found through the package), else the first on
``PATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from importlib import metadata

from ._mpi import INSTALL_HINT

__all__ = ["find_mpiexec", "get_args_parser", "main", "parse_args", "run"]


def find_mpiexec() -> str:
    """The path of MPI's launcher: the mpich wheel's, else ``mpiexec`` on ``PATH``."""
    try:
        for f in metadata.files("mpich") or []:
            if f.name == "mpiexec" and f.parent.name == "bin":
                path = os.path.realpath(str(f.locate()))
                if os.access(path, os.X_OK):
                    return path
    except Exception:  # noqa: BLE001 - no mpich wheel: look on PATH
        pass
    for directory in (os.path.dirname(sys.executable), os.path.join(sys.prefix, "bin")):
        path = os.path.join(directory, "mpiexec")
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError(f"mpiexec was not found. {INSTALL_HINT}")
    return found


def _both(parser: argparse.ArgumentParser, name: str, **kwargs: object) -> None:
    """An option spelled with dashes or underscores (``--nproc-per-node``, ``--nproc_per_node``),
    as torchrun accepts."""
    names = [f"--{name}"]
    if "-" in name:
        names.append("--" + name.replace("-", "_"))
    parser.add_argument(*names, **kwargs)  # type: ignore[arg-type]


def get_args_parser(prog: str = "python -m tapegrad.distributed.run") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Start the ranks of a distributed tapegrad program on this "
        "machine, as torchrun does (the ranks run as one MPI job).")
    _both(parser, "nnodes", default="1", help="number of machines, or MIN:MAX")
    _both(parser, "nproc-per-node", default="1",
          help="ranks on this machine: a number, 'cpu' or 'auto' (one per CPU)")
    _both(parser, "node-rank", type=int, default=0, help="this machine's index")
    _both(parser, "master-addr", default="127.0.0.1", help="the address of node 0")
    _both(parser, "master-port", type=int, default=None, help="a free port on node 0")
    _both(parser, "rdzv-backend", default="static")
    _both(parser, "rdzv-endpoint", default="", help="HOST[:PORT] of the store (node 0)")
    _both(parser, "rdzv-id", default="none")
    _both(parser, "rdzv-conf", default="")
    parser.add_argument("--standalone", action="store_true",
                        help="one machine, a free port on 127.0.0.1")
    _both(parser, "max-restarts", type=int, default=0)
    _both(parser, "monitor-interval", type=float, default=0.1)
    _both(parser, "start-method", default="spawn")
    parser.add_argument("--role", default="default")
    parser.add_argument("-m", "--module", action="store_true",
                        help="run the script as a module (python -m)")
    _both(parser, "no-python", action="store_true", help="run the script as a program")
    _both(parser, "run-path", action="store_true")
    _both(parser, "log-dir", default=None)
    parser.add_argument("-r", "--redirects", default="0")
    parser.add_argument("-t", "--tee", default="3",
                        help="accepted for torchrun; every rank's lines are labelled")
    _both(parser, "local-ranks-filter", default="",
          help="show only these local ranks' output (e.g. 0 or 0,2)")
    _both(parser, "local-addr", default=None)
    _both(parser, "logs-specs", default=None)
    parser.add_argument("training_script", help="the script each rank runs")
    parser.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return parser


def parse_args(argv: list[str] | None, prog: str | None = None) -> argparse.Namespace:
    parser = get_args_parser(prog) if prog else get_args_parser()
    return parser.parse_args(argv)


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _nproc(value: str) -> int:
    if value in ("auto", "cpu", "gpu", "xpu"):
        return os.cpu_count() or 1
    return int(value)


def _nnodes(value: str) -> int:
    low, _, high = value.partition(":")
    if high and int(high) != int(low):
        raise ValueError(f"--nnodes {value}: the ranks of an MPI job are fixed when it starts; "
                         f"give one number of machines")
    return int(low)


def run(args: argparse.Namespace) -> int:
    """Start this machine's ranks and wait for them; the exit status."""
    nproc, nnodes = _nproc(args.nproc_per_node), _nnodes(args.nnodes)
    addr, port = args.master_addr, args.master_port
    if args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.rpartition(":") if ":" in args.rdzv_endpoint else (
            args.rdzv_endpoint, "", "")
        addr, port = host or addr, int(p) if p else port
    if args.standalone:
        addr, nnodes, args.node_rank = "127.0.0.1", 1, 0
    if port is None:
        port = _free_port(addr) if nnodes == 1 else 29500
    if args.max_restarts:
        print("tapegrad.distributed.run: --max-restarts is not supported (an MPI job is not "
              "restarted); running once", file=sys.stderr)

    env = dict(os.environ)
    env.update(MASTER_ADDR=addr, MASTER_PORT=str(port), WORLD_SIZE=str(nnodes * nproc),
               LOCAL_WORLD_SIZE=str(nproc), GROUP_WORLD_SIZE=str(nnodes),
               ROLE_WORLD_SIZE=str(nnodes * nproc), ROLE_NAME=args.role,
               TORCHELASTIC_RUN_ID=args.rdzv_id, TORCHELASTIC_RESTART_COUNT="0",
               TORCHELASTIC_MAX_RESTARTS=str(args.max_restarts))
    if "OMP_NUM_THREADS" not in env and nproc > 1:
        print("\n*****************************************\nSetting OMP_NUM_THREADS environment "
              "variable for each process to be 1 in default, to avoid your system being "
              "overloaded, please further tune the variable for optimal performance in your "
              "application as needed. \n*****************************************",
              file=sys.stderr)
        env["OMP_NUM_THREADS"] = "1"
    errors = tempfile.mkdtemp(prefix="tapegrad-run-")
    command = [find_mpiexec(), "-n", str(nproc), sys.executable, "-m",
               "tapegrad.distributed._rank", "--node-rank", str(args.node_rank), "--nproc",
               str(nproc), "--error-dir", errors, "--label"]
    if args.local_ranks_filter:
        command += ["--show", args.local_ranks_filter]
    if args.module:
        command.append("--module")
    if args.no_python:
        command.append("--no-python")
    command += ["--", args.training_script, *args.training_script_args]
    try:
        status = _supervise(subprocess.Popen(command, env=env), errors,
                            args.monitor_interval)
        if status != 0:
            _print_failures(args.training_script, errors, status, nproc, args.node_rank)
            return 1
        return 0
    finally:
        shutil.rmtree(errors, ignore_errors=True)


def _supervise(job: subprocess.Popen, errors: str, interval: float) -> int:
    """Wait for ``job``; stop it once a rank reported a failure. Signals go to it."""

    def forward(signum: int, _frame: object) -> None:
        job.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        failed_at = None
        while job.poll() is None:
            time.sleep(interval)
            if failed_at is None and os.listdir(errors):
                failed_at = time.monotonic()
            if failed_at is not None and time.monotonic() - failed_at > 2.0:
                job.terminate()  # the failed rank did not end the job: end it
                try:
                    job.wait(10)
                except subprocess.TimeoutExpired:
                    job.kill()
        return job.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _print_failures(script: str, errors: str, status: int, nproc: int, node: int) -> None:
    """torchrun's summary of a failed run: the first failure, then the others."""
    records = []
    for name in os.listdir(errors):
        try:
            with open(os.path.join(errors, name)) as f:
                records.append(json.load(f))
        except (OSError, ValueError):
            continue
    records.sort(key=lambda r: r["time"])
    line = "=" * 56
    out = [line, f"{script} FAILED", "-" * 56]

    def block(i: int, r: dict) -> list[str]:
        when = datetime.fromtimestamp(r["time"]).strftime("%Y-%m-%d_%H:%M:%S")
        return [f"[{i}]:", f"  time      : {when}", f"  host      : {r['host']}",
                f"  rank      : {r['rank']} (local_rank: {r['local_rank']})",
                f"  exitcode  : {r['exitcode']} (pid: {r['pid']})",
                f"  error_file: {errors}/rank{r['rank']}.json",
                f"  traceback : {r['message']}"]

    if records:
        out.append("Failures:")
        others = [s for i, r in enumerate(records[1:], 1) for s in block(i, r)]
        out += others or ["  <NO_OTHER_FAILURES>"]
        out += ["-" * 56, "Root Cause (first observed failure):", *block(0, records[0])]
    else:
        out += ["Root Cause (first observed failure):",
                f"  a rank of node {node} ended abnormally (killed by a signal, or aborted by "
                f"MPI); mpiexec exited with status {status}"]
    out.append(line)
    print("\n".join(out), file=sys.stderr, flush=True)


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    return run(parse_args(argv, prog))


if __name__ == "__main__":
    sys.exit(main())
