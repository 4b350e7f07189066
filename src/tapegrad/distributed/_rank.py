"""What runs in each rank that the launcher starts: torch's environment, labelled output, the
user's script, and the error report.

``mpiexec`` starts ``python -m tapegrad.distributed._rank [options] -- SCRIPT ARGS`` once per
local rank. Each one

1. reads its place in the job from the MPI launcher (``PMI_RANK`` for MPICH's hydra,
   ``OMPI_COMM_WORLD_RANK`` for Open MPI) and sets what torchrun sets: ``RANK``,
   ``LOCAL_RANK``, ``GROUP_RANK``, ``ROLE_RANK``...;
2. labels its output as torchrun's ``--tee`` does: each line of stdout and stderr starts with
   ``[default<local rank>]:`` (``_output.py``);
3. asks Linux for a short scheduler slice (``shorten_slice``: MPICH's waiting ranks get the
   CPU back sooner when they share it with other processes);
4. runs the script with ``tapegrad run``'s runner (``_script.py``: ``torch`` is tapegrad);
5. if the script failed, writes a one-line report for the launcher (which stops the other
   ranks and names the first failure) and, when MPI is running, calls ``MPI_Abort`` so the
   other ranks of the job end at once instead of waiting in a collective.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import runpy
import socket
import struct
import sys
import time
import traceback

from .._script import alias_torch, run_script
from ._output import label_output, silence_output


def _local_rank() -> int:
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MPI_LOCALRANKID"):
        if name in os.environ:
            return int(os.environ[name])
    return 0


# sched_setattr's number (Python has no wrapper for it, glibc has one from 2.41 only)
_SCHED_SETATTR = {"x86_64": 314, "aarch64": 274}
# a rank's scheduler slice: the shortest Linux grants
RANK_SLICE_NS = 100_000


def shorten_slice(ns: int = RANK_SLICE_NS) -> bool:
    """Ask Linux for a scheduler slice of ``ns`` for this thread and the threads and processes
    it starts (``sched_setattr``'s ``sched_runtime`` on a SCHED_OTHER task, Linux 6.12 and
    later; earlier kernels ignore it). Whether the request was made.

    MPICH waits for a peer by polling, with a ``sched_yield`` between polls, and on Linux's
    EEVDF scheduler (6.6 and later) a yield charges the yielding task the rest of its slice.
    With the default slice (it grows with the number of CPUs: 1.4 ms on 2) a rank that waits
    on a CPU shared with other processes falls a whole slice behind them at each yield and
    gets the CPU back late; with 0.1 ms it falls 0.1 ms behind. Its share of a shared CPU is
    the same, taken in shorter turns; a rank alone on its CPU is not affected. Measured on a
    2-CPU machine running other work (load 6 to 10), ``python -m benchmarks``' ratios to
    torch, medians of interleaved runs, default slice -> 0.1 ms: allreduce-1mb 1.15 -> 0.36
    (8 runs), ddp-step 1.41 -> 1.27 (6), allreduce-64mb 0.63 -> 0.59 (5).
    """
    number = _SCHED_SETATTR.get(os.uname().machine) if sys.platform == "linux" else None
    if number is None:
        return False
    policy = os.sched_getscheduler(0)
    if policy not in (os.SCHED_OTHER, os.SCHED_BATCH, os.SCHED_IDLE):
        return False  # a real-time rank keeps its policy
    # struct sched_attr, its first version (48 bytes): size, policy, flags, nice, priority,
    # runtime, deadline, period; the policy and nice value kept as they are
    attr = ctypes.create_string_buffer(struct.pack(
        "IIQiIQQQ", 48, policy, 0, os.getpriority(os.PRIO_PROCESS, 0), 0, ns, 0, 0), 48)
    libc = ctypes.CDLL(None, use_errno=True)
    return bool(libc.syscall(number, 0, attr, 0) == 0)


def report_failure(path: str | None, rank: int, local_rank: int, exitcode: int,
                   message: str) -> None:
    """Write the failure record the launcher reads (torchelastic's error file, in JSON)."""
    if not path:
        return
    record = {"rank": rank, "local_rank": local_rank, "exitcode": exitcode,
              "pid": os.getpid(), "host": socket.gethostname(), "time": time.time(),
              "message": message}
    with open(path, "w") as f:
        json.dump(record, f)


def _mpi_running() -> bool:
    MPI = sys.modules.get("mpi4py.MPI")
    return bool(MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tapegrad.distributed._rank")
    parser.add_argument("--node-rank", type=int, default=0)
    parser.add_argument("--nproc", type=int, required=True)
    parser.add_argument("--label", action="store_true")
    parser.add_argument("--show", default="", help="local ranks whose output is shown")
    parser.add_argument("--error-dir", default="")
    parser.add_argument("--module", action="store_true")
    parser.add_argument("--no-python", action="store_true")
    parser.add_argument("--no-alias", action="store_true")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    local = _local_rank()
    rank = args.node_rank * args.nproc + local
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(local), ROLE_RANK=str(rank),
                      GROUP_RANK=str(args.node_rank))
    error_file = os.path.join(args.error_dir, f"rank{rank}.json") if args.error_dir else None
    if error_file:
        os.environ["TORCHELASTIC_ERROR_FILE"] = error_file
    if args.show and str(local) not in args.show.split(","):
        silence_output()
    elif args.label:
        label_output(f"[default{local}]:")

    shorten_slice()
    if args.no_python:
        os.execvp(command[0], command)
    status, message = _run(command, args.module, alias=not args.no_alias)
    sys.stdout.flush()
    sys.stderr.flush()
    if status != 0:
        report_failure(error_file, rank, local, status, message)
        if _mpi_running():
            MPI = sys.modules["mpi4py.MPI"]
            if MPI.COMM_WORLD.Get_size() > 1:
                MPI.COMM_WORLD.Abort(status)
    return status


def _run(command: list[str], module: bool, alias: bool) -> tuple[int, str]:
    """Run the script (or ``-m`` module); its exit status and its error's last line."""
    errors: list[str] = []

    def remember(exc: BaseException) -> None:
        errors.append(traceback.format_exception_only(type(exc), exc)[-1].strip())

    if not module:
        status = run_script(command[0], command[1:], alias=alias, on_error=remember)
        return status, errors[-1] if errors else f"exit code {status}"
    if alias:
        alias_torch()
    sys.argv = list(command)
    try:
        runpy.run_module(command[0], run_name="__main__", alter_sys=True)
        return 0, ""
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        return code, f"SystemExit: {exc.code}"
    except BaseException as exc:  # noqa: BLE001 - reported as python reports it
        traceback.print_exc()
        return 1, traceback.format_exception_only(type(exc), exc)[-1].strip()


if __name__ == "__main__":
    sys.exit(main())
