"""The malloc tuning done at import (tapegrad/_allocator.py): on, and the opt-out works."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _glibc() -> bool:
    from tapegrad._allocator import on_glibc

    return on_glibc()


def _tuned_in_child(env_value: str | None) -> str:
    env = dict(os.environ)
    env.pop("TAPEGRAD_MALLOC_TUNING", None)
    if env_value is not None:
        env["TAPEGRAD_MALLOC_TUNING"] = env_value
    code = "import tapegrad; print(tapegrad._allocator.tuned)"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True).stdout.strip()


@pytest.mark.skipif(not _glibc(), reason="the tuning applies to glibc's malloc only")
def test_import_tunes_glibc_malloc():
    assert _tuned_in_child(None) == "True"


def test_opt_out_leaves_malloc_alone():
    assert _tuned_in_child("0") == "False"


_STEPS = (
    "import resource, sys, numpy as np\n"
    "if sys.argv[1] == '1': import tapegrad\n"
    "def step():  # four 2 MiB buffers, freed together, as a training step frees activations\n"
    "    bufs = [np.ones(1 << 19, np.float32) for _ in range(4)]\n"
    "    return sum(float(b[-1]) for b in bufs)\n"
    "step(); step()\n"
    "f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
    "for _ in range(10): step()\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)\n"
)


def _faults(import_tapegrad: bool) -> int:
    env = dict(os.environ)
    env.pop("TAPEGRAD_MALLOC_TUNING", None)
    out = subprocess.run([sys.executable, "-c", _STEPS, "1" if import_tapegrad else "0"],
                         env=env, capture_output=True, text=True, check=True).stdout
    return int(out.strip())


@pytest.mark.skipif(not _glibc(), reason="the tuning applies to glibc's malloc only")
def test_freed_buffers_come_back_without_page_faults():
    """The point of the tuning: steps that free and reallocate the same buffers do not
    page-fault them back in. Without it, glibc trims the freed 8 MiB from its heap every step
    (10 steps: about 20,000 faults); the baseline run checks that this still happens here."""
    baseline = _faults(import_tapegrad=False)
    assert baseline > 10_000
    assert _faults(import_tapegrad=True) < 100
