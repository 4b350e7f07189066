"""How much of torch's OpInfo database tapegrad passes: the progress measure of the op surface.

    PYTHONPATH=src python tests/ops/opinfo_report.py            # quick: first 2 samples
    PYTHONPATH=src python tests/ops/opinfo_report.py --full     # every sample, every dtype
    PYTHONPATH=src python tests/ops/opinfo_report.py -v 'linalg.*'   # reasons, some entries
    PYTHONPATH=src python tests/ops/opinfo_report.py --complex  # complex64/complex128 samples

Prints, over the in-scope entries (``opinfo_out_of_scope.txt`` set aside), how many pass every
sample at their dtypes (float64, float32, integer, bool) forward, first- and second-order
gradients and error inputs; how many fail; how many tapegrad lacks. ``--write-expected`` rewrites
``opinfo_expected_failures.txt`` from the run (keeping the reasons written by hand for entries
still failing), which is how the TODO list is kept true after ops land.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import opinfo_harness as h  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("patterns", nargs="*", help="only entries matching these shell patterns")
    p.add_argument("--full", action="store_true", help="every sample at every dtype")
    p.add_argument("--samples", type=int, default=h.QUICK_SAMPLES, help="quick mode: per dtype")
    p.add_argument("--complex", action="store_true",
                   help="the complex64/complex128 samples (entries that have them) instead")
    p.add_argument("-v", "--verbose", action="store_true", help="print each failure's reason")
    p.add_argument("--write-expected", action="store_true",
                   help="rewrite opinfo_expected_failures.txt from this run")
    a = p.parse_args(argv)
    if a.write_expected and a.patterns:
        p.error("--write-expected rewrites the whole list: run it without patterns")
    if a.complex and a.write_expected:
        p.error("--write-expected keeps the real-dtype verdicts: run it without --complex")
    h.COMPLEX = a.complex
    ops = h.in_scope_entries()
    if a.complex:
        ops = [op for op in ops if h.dtypes_for(op, a.full)]
    if a.patterns:
        ops = [op for op in ops if any(fnmatch.fnmatchcase(h.entry_id(op), pat)
                                       for pat in a.patterns)]
    start = time.perf_counter()
    verdicts = []
    for op in ops:
        v = h.run_entry(op, full=a.full, limit=None if a.full else a.samples)
        verdicts.append(v)
        if a.verbose and not v.passed:
            print(f"{v.status:8} {v.entry}: {v.failures[0] if v.failures else ''}")
    counts = {s: sum(v.status == s for v in verdicts) for s in ("pass", "fail", "missing")}
    n = len(verdicts)
    mode = "full" if a.full else f"quick ({a.samples} samples per dtype)"
    if a.complex:
        mode += ", complex dtypes (entries that have them)"
    print(f"op_db: {len(h.op_db())} entries, {n} in scope; mode {mode}; "
          f"{time.perf_counter() - start:.0f} s")
    for s in ("pass", "fail", "missing"):
        print(f"  {s:8} {counts[s]:4}  ({100 * counts[s] / max(n, 1):.1f}%)")
    if a.write_expected:
        old = h.read_list(h.EXPECTED_FAILURES_FILE)
        lines = [h.EXPECTED_FAILURES_HEADER]
        by_id = {h.entry_id(op): op for op in ops}
        for v in sorted(verdicts, key=lambda v: v.entry):
            if v.passed:
                continue
            reason = old.get(v.entry, "").removeprefix(h.FULL_SWEEP_TAG).strip()
            if not reason or (v.status == "missing") != reason.startswith("missing"):
                reason = ("missing: not implemented in tapegrad" if v.status == "missing"
                          else "fails: " + _short(v.failures[0]))
            if a.full and v.status == "fail" and h.run_entry(by_id[v.entry]).passed:
                reason = f"{h.FULL_SWEEP_TAG} {reason}"
            lines.append(f"{v.entry}  {reason}")
        h.EXPECTED_FAILURES_FILE.write_text("\n".join(lines) + "\n")
        print(f"wrote {h.EXPECTED_FAILURES_FILE.name}: {len(lines) - 1} entries")
    return 0


def _short(reason: str) -> str:
    return " ".join(reason.split())[:160]


if __name__ == "__main__":
    sys.exit(main())
