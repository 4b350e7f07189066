"""Run a corpus program and compare what it printed with what real torch printed.

A program from ``corpus/`` runs in a fresh interpreter, in an empty working directory (a program
may write a checkpoint; a textbook chapter finds its book's folders there, see ``books.py``),
with ``PYTHONHASHSEED=0`` (a tutorial that builds its vocabulary from a
``set`` of words depends on the string hash) and one BLAS/OpenMP thread. Under real torch it runs
as ``python PROGRAM`` (a chapter that imports torchvision as ``python tests/vision_oracle.py
PROGRAM``: real torchvision on the CPU torch); under tapegrad as ``python -m tapegrad run
PROGRAM``, unchanged.

A program that ends with an uncaught exception on torch (a textbook's own ``assert`` on the
loss it reaches after the full number of epochs, which a shortened run does not reach) must end
with the same exception on tapegrad: ``expected/<name>.exit`` holds torch's exit status and the
last line of its error output, compared as a printed line is.

Two outputs match when, after the masks below, they have the same lines, and each pair of lines
is the same text with numbers in the same places, each pair of numbers equal to a relative 1e-4:

* object addresses ``0x7f3a...`` read as ``0x?`` (``<AddBackward0 object at 0x...>``), and so
  does an object's ``id`` printed after ``id(...)`` (``id(Z): 140335343347792``: in CPython
  the address in decimal);
* the build label of a printed ``torch.__version__`` or ``torchvision.__version__`` (torch's
  ``2.13.0+cpu``, tapegrad's ``2.13.0+tapegrad0.1.0``; the oracle's torchvision is the CUDA
  wheel, ``0.28.0+cu130``) reads as ``2.13.0+<build>``: the version compares, the name of whose
  build it is does not;
* a number that is a wall-clock time (:data:`TIMED_NUMBER`: followed by a unit of time, ``12.3
  sec``, ``4 ms/step``, ``8512.3 examples/sec``, or after "time", "elapsed" or "took") is masked,
  and the rest of its line is compared as any other (a textbook's ``epoch 1, loss 2.3026, ...,
  time 4.1 sec`` still compares its loss);
* a float printed with ``d`` decimals (``0.0442``, ``1.2e-05``; not an integer, not torch's
  ``1.``) stands for an interval of width ``10**-d``: two values
  within a relative 1e-4 of each other can round to neighbours (``0.04425 -> 0.0442`` or
  ``0.0443``), so printed numbers that differ by at most one unit in their last printed digit
  also match. It comes from the printing, not the maths;
* the programs in :data:`ZERO_IN_EXACT_ARITHMETIC` print coefficients that are zero (or decay
  to zero) in exact arithmetic, so what they print is float32 rounding noise (``-6.7e-10`` on torch,
  ``-1.7e-10`` on tapegrad): there, numbers match within the absolute tolerance given with
  the reason;
* the programs in :data:`SMALL_BESIDE_LARGE` print values computed from much larger ones (a
  textbook's estimation error ``true_w - w``, the difference of two values that agree to a few
  digits; a fitted coefficient beside coefficients a thousand times larger), so the float32
  rounding of the large values, a unit or two in their last place, is the printed value's
  absolute error: there, numbers match within that, given with the reason. No other program
  has an absolute tolerance;
* the lines in :data:`NOT_COMPARED` print what no two runs share, torch's included (the
  contents of uninitialized memory, a wall-clock time printed as a bare number, the result of
  a training run that amplifies float32 rounding until torch's own kernels for other CPUs print
  other digits): they must be there, and are not compared.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import books

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
EXPECTED = HERE / "expected"

RTOL = 1e-4
ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
# A number that is a wall-clock time (it differs from run to run): one with a unit of time after
# it ("12.3 s", "4 ms/step", "2.1s", "35 it/s", "8512.3 examples/sec"), or one after "time",
# "elapsed" or "took".
_FLOAT = r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?"
TIMED_NUMBER = re.compile(
    rf"(?i)(?P<word>\b(?:time|elapsed|took)\b[\s:=]*){_FLOAT}"
    rf"|{_FLOAT}(?=\s*(?:s|sec|secs|seconds|ms|ms/step|it/s|examples/sec|sec/epoch)\b)"
)


BUILD_LABEL = re.compile(r"\b(2\.13\.0|0\.28\.0)\+[0-9A-Za-z.]+")
OBJECT_ID = re.compile(r"(\bid\([^()]*\)\W*)\d+")


def mask_times(line: str) -> str:
    """``line`` with each wall-clock time replaced by ``<time>``."""
    return TIMED_NUMBER.sub(lambda m: (m.group("word") or "") + "<time>", line)

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
    "d2lzh_custom_layer": (
        1e-7,
        "Y.mean() of a centered layer's output Y = X - X.mean() is 0; its 512 float32 values of "
        "size ~1 leave rounding noise of a few 1e-9 (0. on torch, -2.3e-09 on tapegrad)",
    ),
    "diveintodl_4_4_custom_layer": (
        1e-7,
        "y.mean().item() of a centered layer's output y = x - x.mean() is 0 (as in "
        "d2lzh_custom_layer: 0.0 on torch, -2.3e-09 on tapegrad)",
    ),
}

# program -> (absolute tolerance, which large values the printed small ones come from)
SMALL_BESIDE_LARGE: dict[str, tuple[float, str]] = {
    "d2lzh_linear_regression_scratch": (
        5e-7,
        "the estimation error true_w - w of a weight near -3.4, where a float32 unit in the last "
        "place is 2.4e-7: two units",
    ),
    "d2lzh_underfit_overfit": (
        1e-6,
        "the overfitted polynomial's coefficients of degree 4 to 19 (0 in the true model, ~1e-3 "
        "fitted to noise) come from sums with the coefficients 5, 1.2, -3.4 and 5.6, where a "
        "float32 unit in the last place is 4.8e-7: two units",
    ),
}

# program -> (line numbers, from 1, of its output that are not compared; why)
NOT_COMPARED: dict[str, tuple[tuple[int, ...], str]] = {
    "diveintodl_2_2_tensor": (
        (2, 3, 4, 5, 6),
        "print(torch.empty(5, 3)): the contents of uninitialized memory (tapegrad's is zeros)",
    ),
    "diveintodl_3_1_linear_regression": (
        (2, 3),
        "print(time() - start): two wall-clock times, in seconds, without a unit",
    ),
    "d2lzh_densenet": (
        (22,),
        "the loss and accuracies after an epoch of 5 steps at lr 0.1: float32 rounding grows "
        "100 to 500 times per step here (the gradients of the 48x48 and 24x24 layers are sums "
        "that cancel: torch's and tapegrad's are both 3e-4 to 5e-4 from the float64 ones), so "
        "torch prints other values under its own other kernels (loss 1.968, train acc 0.316, "
        "test acc 0.098 with ATEN_CPU_CAPABILITY=default, against 1.966, 0.317, 0.092); in "
        "float64 both libraries print loss 1.965 and agree to 1e-13 after the 5 steps",
    ),
    "d2lzh_resnet": (
        (30,),
        "the loss and accuracies after an epoch of 5 steps (as d2lzh_densenet's): torch prints "
        "loss 2.210, train acc 0.314, test acc 0.096 under ATEN_CPU_CAPABILITY=default, "
        "against 2.203, 0.315, 0.100 under AVX-512",
    ),
    "diveintodl_5_11_resnet": (
        (16,),
        "the loss and accuracies after an epoch of ResNet-18 training on 512 images (as "
        "d2lzh_resnet's): torch itself prints loss 2.4935, train acc 0.160 under "
        "ATEN_CPU_CAPABILITY=avx2, against 2.4931, 0.158 under AVX-512 (tapegrad: 2.4933, "
        "0.158); the lines before it, the network's shapes, are compared",
    ),
    "d2lzh_vgg": (
        (33,),
        "the training accuracy of an epoch of 5 steps counts argmax predictions: after the "
        "first steps' max-pool windows tie differently under float32 rounding, one image of "
        "the last batch sits 3.5e-4 from the decision boundary (its two largest logits, in "
        "float64) and float32 puts it on either side (torch +4.1e-4, tapegrad -2.1e-4): 57 "
        "or 56 of 640; in float64 both libraries agree to 1e-14 over the 5 steps",
    ),
}
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b")


# Programs that end, on torch, with an uncaught exception, and why: recorded in
# ``expected/<name>.exit`` and expected of tapegrad too (see the docstring)
_TRAIN_CH3 = ("d2l's train_ch3 asserts the loss and accuracy that the book's ten epochs on "
              "all 60,000 images reach; two epochs on a subset stop short of them")
ENDS_IN_ERROR: dict[str, str] = {
    "d2lzh_softmax_regression_scratch": _TRAIN_CH3,
    "d2lzh_softmax_regression_concise": _TRAIN_CH3,
    "d2lzh_mlp_scratch": _TRAIN_CH3,
    "d2lzh_mlp_concise": _TRAIN_CH3,
    "d2lzh_dropout": _TRAIN_CH3,
}


def programs() -> list[str]:
    """The corpus programs' names (file stems), sorted."""
    return sorted(path.stem for path in CORPUS.glob("*.py"))


def run(name: str, lib: str, cwd: Path, timeout: float = 900.0) -> subprocess.CompletedProcess:
    """Run program ``name`` on ``lib`` ('torch' or 'tapegrad') in ``cwd``; return the process."""
    script = str(CORPUS / f"{name}.py")
    env = dict(os.environ, PYTHONHASHSEED="0")
    if books.is_book(name):
        env.update(books.environment(cwd))
        cwd = books.prepare(name, cwd)
    # One BLAS/OpenMP thread for either library: on a small shared machine, idle BLAS threads
    # spinning for a core made a 1.5 s program take a minute. The numbers do not depend on it.
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if lib == "torch" and books.is_book(name):
        command = [sys.executable, str(HERE.parent / "vision_oracle.py"), script]
    elif lib == "torch":
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


def _mask_identities(text: str) -> str:
    """``text`` with object addresses, ``id()`` numbers and version build labels masked."""
    text = OBJECT_ID.sub(r"\1<id>", ADDRESS.sub("0x?", text))
    return BUILD_LABEL.sub(r"\1+<build>", text)


_SPACES = re.compile(r" +")


def mismatches(expected: str, got: str, limit: int = 5, atol: float = 0.0,
               skip: frozenset[int] = frozenset()) -> list[str]:
    """Human-readable differences between two outputs (empty when they match); the lines
    numbered in ``skip`` (from 1) are not compared."""
    want_lines = _mask_identities(expected).splitlines()
    got_lines = _mask_identities(got).splitlines()
    problems: list[str] = []
    if len(want_lines) != len(got_lines):
        problems.append(f"{len(want_lines)} lines expected, {len(got_lines)} printed")
    for number, (want, line) in enumerate(zip(want_lines, got_lines, strict=False), 1):
        want_text, want_numbers = _split(mask_times(want))
        got_text, got_numbers = _split(mask_times(line))
        if number in skip:
            continue
        same = want_text == got_text and len(want_numbers) == len(got_numbers)
        if not same and len(want_numbers) == len(got_numbers) and any(
                len(w) != len(g) for w, g in zip(want_numbers, got_numbers, strict=True)):
            # numbers printed with other digits pad their columns differently (NumPy aligns
            # an array's columns): then only the spaces may differ
            same = [_SPACES.sub(" ", t) for t in want_text] == [
                _SPACES.sub(" ", t) for t in got_text]
        if same:
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
    atol = (ZERO_IN_EXACT_ARITHMETIC.get(name) or SMALL_BESIDE_LARGE.get(name)
            or (0.0, ""))[0]
    if expected is None:
        expected = (EXPECTED / f"{name}.out").read_text()
    return mismatches(expected, got, atol=atol,
                      skip=frozenset(NOT_COMPARED.get(name, ((), ""))[0]))


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


def last_line(text: str) -> str:
    """The last non-empty line of a program's error output ('' when there is none)."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def expected_exit(name: str) -> tuple[int, str]:
    """Torch's exit status for program ``name`` and the last line of its error output."""
    path = EXPECTED / f"{name}.exit"
    if not path.exists():
        return 0, ""
    status, _, line = path.read_text().partition("\n")
    return int(status), line.rstrip("\n")


def exit_mismatches(name: str, returncode: int, stderr: str) -> list[str]:
    """How the program's ending differs from torch's (its status; its error's last line)."""
    status, line = expected_exit(name)
    if returncode != status:
        return [f"exit status {returncode}, torch's was {status}:\n{stderr[-3000:]}"]
    return mismatches(line, last_line(stderr)) if status else []


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
