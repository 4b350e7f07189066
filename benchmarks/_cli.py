"""Command line of the benchmark suite: choose workloads, run them, print the table, write JSON.

    python -m benchmarks [--only NAME] [--json FILE] [--quick] [--no-torch] [--repeats N]
                         [--profile [N]] [--ops [N]]

Exit status: 0 when every workload ran (or its tapegrad side is reported ``missing``), 1 when a
tapegrad side failed with an error or its first-step loss disagreed with torch's.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

import tapegrad

from . import WORKLOADS
from ._harness import LOSS_RTOL, Result, environment, load_torch, run_workload


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks",
                                description="Time tapegrad against torch on the same workloads.")
    p.add_argument("--only", action="append", metavar="NAME",
                   help=f"run only these workloads (repeatable or comma-separated): "
                        f"{', '.join(WORKLOADS)}")
    p.add_argument("--json", metavar="FILE", help="write every number as JSON to FILE")
    p.add_argument("--quick", action="store_true",
                   help="small sizes, one repeat (the CI smoke test); no ratio is meaningful")
    p.add_argument("--no-torch", action="store_true", help="run the tapegrad side only")
    p.add_argument("--repeats", type=int, metavar="N", help="override the number of repeats")
    p.add_argument("--profile", nargs="?", const=15, type=int, metavar="N",
                   help="also print the top N (default 15) tapegrad functions by tottime")
    p.add_argument("--ops", nargs="?", const=15, type=int, metavar="N",
                   help="also print the N (default 15) tapegrad ops that take longest in a "
                        "step, forward kernel and backward rule apart")
    return p


def _num(v: float | None) -> str:
    if v is None:
        return "-"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def _mem(n: int | None) -> str:
    if n is None:
        return "n/a"
    for unit in ("B", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


NOISY = 1.3  # flag a side whose slowest repeat is this much slower than its fastest


def r_value(res: Result, seconds: float) -> float:
    """Seconds per step expressed in the workload's unit."""
    return WORKLOADS[res.workload].per_step(seconds, res.config)


def _cell(res: Result, lib: str) -> str:
    side = res.sides.get(lib)
    if side is None:
        return "skipped"
    if side.status == "ok":
        return _num(side.value)
    return side.status


def _table(results: list[Result]) -> str:
    head = ("workload", "unit", "tapegrad", "torch", "ratio", "best ratio", "compiled",
            "compiled ratio", "compiled best", "tapegrad mem", "torch mem")
    rows = []
    notes = []
    for r in results:
        tg, th = r.sides.get("tapegrad"), r.sides.get("torch")
        rows.append((r.workload, r.unit, _cell(r, "tapegrad"), _cell(r, "torch"),
                     "-" if r.ratio is None else f"{r.ratio:.2f}",
                     "-" if r.ratio_best is None else f"{r.ratio_best:.2f}",
                     "-" if r.compiled is None else _num(r.compiled),
                     "-" if r.compiled_ratio is None else f"{r.compiled_ratio:.2f}",
                     "-" if r.compiled_ratio_best is None else f"{r.compiled_ratio_best:.2f}",
                     _mem(tg.peak_bytes) if tg and tg.status == "ok" else "-",
                     _mem(th.peak_bytes) if th and th.status == "ok" else "-"))
        notes.append(f"  {r.workload}: {r.description}")
        if r.compiled_detail:
            notes.append(f"    compiled: {r.compiled_detail}")
        if r.matmul_share is not None:
            ops = ", ".join(WORKLOADS[r.workload].matmul_ops) if r.workload in WORKLOADS else ""
            notes.append(f"    tapegrad eager: {r.matmul_share:.0%} of the step inside the "
                         f"matrix products ({ops}: forward kernels and backward rules)")
        if r.baseline_label:
            notes.append(f"    {r.baseline_label} bare: {_num(r.baseline_value)} {r.unit}; "
                         f"ratio = {r.ratio_of} (higher is better)")
        for label, value in r.references.items():
            tg_value = tg.value if tg is not None and tg.status == "ok" else None
            against = "" if tg_value is None or not value else (
                f"; tapegrad/that = {tg_value / value:.2f}")
            notes.append(f"    {label}: {_num(value)} {r.unit}{against}")
        if r.loss_rel_diff is not None:
            rtol = WORKLOADS[r.workload].loss_rtol if r.workload in WORKLOADS else LOSS_RTOL
            notes.append(f"    first-step loss agrees: relative difference "
                         f"{r.loss_rel_diff:.2g} (<= {rtol:g})"
                         if tg.status == "ok" else "    LOSS MISMATCH: " + tg.detail)
        for lib, side in r.sides.items():
            if side.status in ("missing", "error"):
                notes.append(f"    {lib}: {side.status} {side.detail}")
            reps = side.repeat_seconds
            if len(reps) > 1 and max(reps) > NOISY * min(reps):
                notes.append(f"    noisy: {lib}'s repeats range {max(reps) / min(reps):.1f}x "
                             f"(min {_num(r_value(r, min(reps)))}, "
                             f"max {_num(r_value(r, max(reps)))} {r.unit})")
    widths = [max(len(str(row[i])) for row in (head, *rows)) for i in range(len(head))]
    lines = ["  ".join(f"{c:<{w}}" if i < 2 else f"{c:>{w}}"
                       for i, (c, w) in enumerate(zip(row, widths, strict=True)))
             for row in (head, *rows)]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([*lines, "", "notes:", *notes])


def _header(env: dict, quick: bool) -> str:
    torch_line = (f"torch {env['torch']}, torch.get_num_threads() = {env['torch_num_threads']}"
                  if env["torch"] else "torch: not installed (torch side skipped)")
    return "\n".join([
        f"tapegrad {env['tapegrad']} benchmarks ({'quick' if quick else 'full'} mode), "
        f"{env['time']}",
        f"machine: {env['platform']}; {env['cpu']}; {env['cpu_count']} CPUs "
        f"({env['cpu_affinity']} usable); {env['python']}",
        f"numpy {env['numpy']}, BLAS: {env['blas']}",
        torch_line,
        f"load average before the run: {env['load_average']} (other processes skew timings)",
        "times are medians over repeats (ratio = tapegrad/torch time: >1 means tapegrad is "
        "slower;",
        "  best ratio = the same from each side's fastest repeat, less sensitive to load;",
        "  compiled = tapegrad.compile(step), timed in the same rounds, and its ratios to torch);",
        "mem = peak bytes allocated during one step on top of what existed before it "
        "(tapegrad: tracemalloc,",
        "  Python objects + NumPy buffers; torch: its profiler, tensor storage only)",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    names = list(WORKLOADS)
    if args.only:
        names = [n.strip() for arg in args.only for n in arg.split(",") if n.strip()]
        unknown = [n for n in names if n not in WORKLOADS]
        if unknown:
            _parser().error(f"unknown workload {', '.join(unknown)}; "
                            f"choose from {', '.join(WORKLOADS)}")
    libs = {"tapegrad": tapegrad}
    torch = None if args.no_torch else load_torch()
    if torch is not None:
        libs["torch"] = torch
    env = environment(libs)
    print(_header(env, args.quick), flush=True)

    start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - start:6.1f}s] {msg}", file=sys.stderr, flush=True)

    results = []
    for name in names:
        log(f"{name} ...")
        results.append(run_workload(WORKLOADS[name], args.quick, libs, repeats=args.repeats,
                                    profile_lines=args.profile or 0, op_lines=args.ops or 0,
                                    log=log))
    log("done")
    print()
    print(_table(results))
    for r in results:
        prof = r.sides.get("tapegrad")
        if prof is not None and prof.profile:
            print(f"\ncProfile, tapegrad side of {r.workload} (top {args.profile} by tottime):")
            print(prof.profile)
        if prof is not None and prof.ops:
            print(f"\nops, tapegrad side of {r.workload} (ms per step, longest first):")
            print(prof.ops)

    if args.json:
        payload = {"mode": "quick" if args.quick else "full",
                   "argv": sys.argv[1:] if argv is None else list(argv),
                   "environment": env, "loss_rtol": LOSS_RTOL,
                   "results": [r.__dict__ | {"sides": {k: v.__dict__ for k, v in r.sides.items()}}
                               for r in results]}
        with open(args.json, "w") as f:
            json.dump(payload, f, indent=2, default=str)
    failed = [r.workload for r in results
              if any(s.status in ("error", "mismatch") for s in r.sides.values())]
    if failed:
        print(f"\nFAILED: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
