"""Run every corpus program on tapegrad and print its status against torch's recorded output.

    python tests/programs/status.py            # all programs: PASS / FAIL / WAITS (for what)
    python tests/programs/status.py NAME ...   # only these, with the differences

Status ``WAITS`` is a program listed in ``program_outputs.WAITS_FOR`` (it needs a part of torch that
tapegrad does not have yet); the reason is printed next to it, and whether it passes anyway.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from program_outputs import WAITS_FOR, exit_mismatches, program_mismatches, programs, run


def main(argv: list[str]) -> int:
    names = argv or programs()
    verbose = bool(argv)
    counts: dict[str, int] = {}
    for name in names:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as cwd:
            proc = run(name, "tapegrad", Path(cwd))
        seconds = time.perf_counter() - start
        ending = exit_mismatches(name, proc.returncode, proc.stderr)
        problems = ending + program_mismatches(name, proc.stdout)
        ok = not problems
        status = "PASS" if ok else "FAIL"
        if name in WAITS_FOR:
            status = f"WAITS ({WAITS_FOR[name]}; {'passes already' if ok else 'fails'})"
        counts[status.split()[0]] = counts.get(status.split()[0], 0) + 1
        print(f"{status:6s} {name}  [{seconds:.1f} s]")
        if verbose and not ok:
            for problem in problems:
                print("    " + problem.replace("\n", "\n    "))
            if proc.returncode and not ending:
                print("    " + "\n    ".join(proc.stderr.strip().splitlines()[-6:]))
    print(", ".join(f"{count} {status.lower()}" for status, count in sorted(counts.items())))
    return 0 if counts.get("FAIL", 0) == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
