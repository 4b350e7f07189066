"""Run a corpus program and compare what it printed with what real torch printed.

A program from ``corpus/`` runs in a fresh interpreter, in an empty working directory (a program
may write a checkpoint), with ``PYTHONHASHSEED=0`` (a tutorial that builds its vocabulary from a
``set`` of words depends on the string hash) and one BLAS/OpenMP thread. Under real torch it runs
as ``python PROGRAM``; under tapegrad as ``python -m tapegrad run PROGRAM``, unchanged.

Two outputs match when, after the masks below, they have the same lines, and each pair of lines
is the same text with numbers in the same places, each pair of numbers equal to a relative 1e-4:

* object addresses ``0x7f3a...`` read as ``0x?`` (``<AddBackward0 object at 0x...>``);
* in a timing line (one matching :data:`TIMING_LINE`), every number is masked;
* a float printed with ``d`` decimals (``0.0442``, ``1.2e-05``; not an integer, not torch's
  ``1.``) stands for an interval of width ``10**-d``: two values
  within a relative 1e-4 of each other can round to neighbours (``0.04425 -> 0.0442`` or
  ``0.0443``), so printed numbers that differ by at most one unit in their last printed digit
  also match. It comes from the printing, not the maths;
* the programs in :data:`ZERO_IN_EXACT_ARITHMETIC` print coefficients that are zero (or decay
  to zero) in exact arithmetic, so what they print is float32 rounding noise (``-6.7e-10`` on torch,
  ``-1.7e-10`` on tapegrad): there, numbers match within the absolute tolerance given with
  the reason. No other program has an absolute tolerance.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
EXPECTED = HERE / "expected"

RTOL = 1e-4
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
# A line that reports wall-clock time (its numbers differ from run to run): a number with a unit
# of time after it ("12.3 s", "4 ms/step", "2.1s", "35 it/s"), or "time", "elapsed" or "took"
# before a number. None of the current programs prints one.
TIMING_LINE = re.compile(
    r"(?i)\d\s*(s|sec|secs|seconds|ms|ms/step|it/s)\b|\b(time|elapsed|took)\b.*\d"
)

# Programs that need a part of torch being built elsewhere: each fails today where it first
# reaches a missing piece named here (test_programs marks them xfail, strict).
WAITS_FOR: dict[str, str] = {}


# program -> (absolute tolerance, why the printed value is zero in exact arithmetic)
ZERO_IN_EXACT_ARITHMETIC: dict[str, tuple[float, str]] = {
    "tutorials_polynomial_custom_function": (
        1e-8,
        "a and c start at 0 and their gradients are sums of odd functions of x over a grid "
        "symmetric about 0 (y = sin x is odd, P3 is odd): they stay 0; the printed a and c "
        "(~1e-10) are rounding noise",
    ),
    "tutorials_polynomial_optim": (
        2e-5,
        "the even part of the fit (bias and x^2 weight) is decoupled from the odd target "
        "sin x on a symmetric grid and decays to 0; RMSprop leaves it at float32 noise by "
        "iteration 1200, which the last line prints: ~1e-8 on torch's vectorized kernels, "
        "up to 6e-6 on its scalar ones (ATEN_CPU_CAPABILITY=default) and on tapegrad, of "
        "either sign (so up to 1.2e-5 apart)",
    ),
}
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b")


def programs() -> list[str]:
    """The corpus programs' names (file stems), sorted."""
    return sorted(path.stem for path in CORPUS.glob("*.py"))


def run(name: str, lib: str, cwd: Path, timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run program ``name`` on ``lib`` ('torch' or 'tapegrad') in ``cwd``; return the process."""
    script = str(CORPUS / f"{name}.py")
    env = dict(os.environ, PYTHONHASHSEED="0")
    # One BLAS/OpenMP thread for either library: on a small shared machine, idle BLAS threads
    # spinning for a core made a 1.5 s program take a minute. The numbers do not depend on it.
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if lib == "torch":
        command = [sys.executable, script]
    else:
        import tapegrad

        package_parent = str(Path(tapegrad.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join([package_parent, env.get("PYTHONPATH", "")])
        command = [sys.executable, "-m", "tapegrad", "run", script]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _last_digit(token: str) -> float | None:
    """The value of one unit in a printed float's last digit (None for integers, ``1.``, ...).

    ``0.0442`` -> 1e-4, ``1.2345e-05`` -> 1e-9. Integers and torch's ``1.`` (an integral value,
    printed without decimals) are exact, not rounded: they get no such allowance.
    """
    mantissa, _, exponent = token.lower().partition("e")
    if "." not in mantissa or mantissa.endswith("."):
        return None
    decimals = len(mantissa.split(".")[1])
    return 10.0 ** (int(exponent or 0) - decimals)


def numbers_match(expected: str, got: str, atol: float = 0.0) -> bool:
    """Whether two printed numbers agree to a relative 1e-4 (or one unit in the last digit)."""
    a, b = float(expected), float(got)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if a == b:
        return True
    if math.isinf(a) or math.isinf(b):
        return False
    if abs(a - b) <= RTOL * max(abs(a), abs(b)) or abs(a - b) <= atol:
        return True
    unit = _last_digit(expected)
    return unit is not None and unit == _last_digit(got) and abs(a - b) <= 1.000001 * unit


def _split(line: str) -> tuple[list[str], list[str]]:
    """A line's text around its numbers, and the numbers."""
    return NUMBER.split(line), NUMBER.findall(line)


def mismatches(expected: str, got: str, limit: int = 5, atol: float = 0.0) -> list[str]:
    """Human-readable differences between two outputs (empty when they match)."""
    want_lines = ADDRESS.sub("0x?", expected).splitlines()
    got_lines = ADDRESS.sub("0x?", got).splitlines()
    problems: list[str] = []
    if len(want_lines) != len(got_lines):
        problems.append(f"{len(want_lines)} lines expected, {len(got_lines)} printed")
    for number, (want, line) in enumerate(zip(want_lines, got_lines, strict=False), 1):
        want_text, want_numbers = _split(want)
        got_text, got_numbers = _split(line)
        same = want_text == got_text and len(want_numbers) == len(got_numbers)
        if same and not TIMING_LINE.search(want):
            pairs = zip(want_numbers, got_numbers, strict=True)
            same = all(numbers_match(w, g, atol) for w, g in pairs)
        if not same:
            problems.append(f"line {number}:\n  torch:    {want}\n  tapegrad: {line}")
        if len(problems) >= limit:
            break
    return problems


def program_mismatches(name: str, got: str, expected: str | None = None) -> list[str]:
    """How program ``name``'s output ``got`` differs from torch's (``expected``, by default the
    recorded one) (empty: none)."""
    atol = ZERO_IN_EXACT_ARITHMETIC.get(name, (0.0, ""))[0]
    if expected is None:
        expected = (EXPECTED / f"{name}.out").read_text()
    return mismatches(expected, got, atol=atol)


# ---------------------------------------------------------------------------------------------
# Which CPU and kernels recorded each expected output (expected/VERSIONS)
# ---------------------------------------------------------------------------------------------

def torch_kernels() -> str:
    """The kernels the installed torch picks here (its CPU capability, and whether oneDNN runs
    bfloat16 natively): what its output depends on beyond its version (tests/cpu_kernels.py)."""
    import torch

    onednn = torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported()
    return (f"capability {torch.backends.cpu.get_cpu_capability()}, oneDNN bfloat16 "
            f"{'on' if onednn else 'off'}")


def cpu_description() -> str:
    """This machine's CPU model and its bfloat16 instruction sets (from /proc/cpuinfo)."""
    import platform

    model = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            lines = info.read().splitlines()
        model = next(line.split(":", 1)[1].strip() for line in lines
                     if line.startswith("model name"))
        flags = next(line.split(":", 1)[1].split() for line in lines
                     if line.startswith("flags"))
        bf16 = sorted(f for f in flags if "bf16" in f or f.startswith("amx"))
    except (OSError, StopIteration):
        bf16 = []
    return f"{model} [{', '.join(bf16) or 'no bfloat16 instructions'}]"


def recorded_kernels() -> dict[str, str]:
    """program -> the kernels that recorded its expected output (expected/VERSIONS lines
    ``NAME.out  CPU; KERNELS``)."""
    out = {}
    for line in (EXPECTED / "VERSIONS").read_text().splitlines():
        name, sep, rest = line.partition(".out  ")
        if sep:
            out[name] = rest.rpartition("; ")[2]
    return out


@dataclass(frozen=True)
class Outcome:
    """What a program printed on one library, and whether it finished."""

    stdout: str
    stderr: str
    returncode: int


def outcome(name: str, lib: str, cwd: Path) -> Outcome:
    cwd.mkdir(parents=True, exist_ok=True)
    proc = run(name, lib, cwd)
    return Outcome(proc.stdout, proc.stderr, proc.returncode)
