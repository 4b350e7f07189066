"""Record what real torch prints for each corpus program: ``expected/<name>.out``.

    python tests/programs/regenerate.py              # every program
    python tests/programs/regenerate.py NAME ...     # only these

Each program runs under real torch exactly as the test runs it (see ``program_outputs.run``);
a program that fails on torch is an error, not an expectation, unless it is listed in
``program_outputs.ENDS_IN_ERROR`` with its reason: then ``expected/<name>.exit`` records torch's
exit status and the last line of its error output. ``expected/VERSIONS`` records
the torch, NumPy and Python that produced the files, and for each file the CPU and the kernels
torch used (its capability, oneDNN's bfloat16: tests/cpu_kernels.py), which its numbers depend
on; the files not re-recorded keep their lines.
"""

from __future__ import annotations

import platform
import sys
import tempfile
from pathlib import Path

from program_outputs import (
    ENDS_IN_ERROR,
    EXPECTED,
    cpu_description,
    last_line,
    programs,
    run,
    torch_kernels,
)


def main(argv: list[str]) -> int:
    import numpy
    import torch

    names = argv or programs()
    EXPECTED.mkdir(exist_ok=True)
    recorded = {}
    versions = EXPECTED / "VERSIONS"
    if versions.exists():
        for line in versions.read_text().splitlines():
            name, sep, rest = line.partition(".out  ")
            if sep:
                recorded[name] = rest
    failed = []
    for name in names:
        with tempfile.TemporaryDirectory() as cwd:
            proc = run(name, "torch", Path(cwd))
        exit_file = EXPECTED / f"{name}.exit"
        if proc.returncode != 0 and name not in ENDS_IN_ERROR:
            failed.append(name)
            print(f"FAILED on torch: {name}\n{proc.stderr[-2000:]}", file=sys.stderr)
            continue
        if proc.returncode != 0:
            exit_file.write_text(f"{proc.returncode}\n{last_line(proc.stderr)}\n")
        elif exit_file.exists():
            exit_file.unlink()
        (EXPECTED / f"{name}.out").write_text(proc.stdout)
        recorded[name] = f"{cpu_description()}; {torch_kernels()}"
        print(f"wrote expected/{name}.out ({len(proc.stdout.splitlines())} lines)")
    versions.write_text(
        f"torch {torch.__version__}\nnumpy {numpy.__version__}\n"
        f"python {platform.python_version()}\n"
        "# each file: the CPU and torch's kernels that recorded it\n"
        + "".join(f"{name}.out  {recorded[name]}\n" for name in sorted(recorded))
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
