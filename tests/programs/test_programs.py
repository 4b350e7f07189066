"""Real PyTorch programs, unchanged, print on tapegrad what they print on torch.

Each program in ``corpus/`` (tutorial and example scripts from public repositories, and the
chapters of two Chinese textbooks; sources, licenses and the few edits made to them are in
``SOURCES.md``) runs under ``tapegrad run``, and its output is compared with torch's
(``program_outputs.py`` says how lines and numbers are compared). A program that ends in an
error on torch (``program_outputs.ENDS_IN_ERROR``) must end in the same error here.

torch's numbers depend on the kernels it picks for this CPU (tests/cpu_kernels.py; a few
programs print other last digits with AVX-512, AVX2 or the scalar kernels).
``expected/<name>.out`` is torch's output recorded by ``regenerate.py``, and
``expected/VERSIONS`` names the CPU and the kernels that recorded each. Where this run's torch
uses those kernels, the recording is torch's output here and is the reference; where it uses
others, the program also runs on the installed torch, in the same test, and that live output is
the reference (the recording is then checked by nothing: ``regenerate.py`` re-records it).
With ``--lib torch`` every program runs on torch and must print its recording.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
import torchcompare
from program_outputs import (
    WAITS_FOR,
    Outcome,
    exit_mismatches,
    outcome,
    program_mismatches,
    programs,
    recorded_kernels,
    torch_kernels,
)


def _param(name: str):
    if name in WAITS_FOR and torchcompare.LIB_NAME == "tapegrad":  # (on torch, all pass)
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=WAITS_FOR[name]))
    return name


def _runs(name: str, lib: str, cwd: Path) -> tuple[Outcome | None, Outcome]:
    """The program on the installed torch where its recording is not this torch's output
    (else None), and on ``lib``."""
    live = None
    if lib != "torch" and recorded_kernels().get(name) != torch_kernels():
        live = outcome(name, "torch", cwd / "torch")
    return live, outcome(name, lib, cwd / lib)


@pytest.fixture(scope="session")
def program_runs(request, lib_name, tmp_path_factory):
    """Each selected program's runs, started at once, a few at a time (one per core, up to 4).

    A program is a process of its own that spends seconds to a minute training; running them
    side by side, while the tests below wait for their results in order, takes the corpus about
    half the time on two cores. Each run has its own empty directory and one BLAS thread.
    """
    names = [item.callspec.params["name"] for item in request.session.items
             if item.originalname == "test_program_prints_what_torch_prints"]
    pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
    runs: dict[str, Future] = {name: pool.submit(_runs, name, lib_name,
                                                 tmp_path_factory.mktemp(name))
                               for name in names}
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("name", [_param(name) for name in programs()])
def test_program_prints_what_torch_prints(name, program_runs) -> None:
    live, result = program_runs[name].result()
    reference = None
    if live is not None:
        ending = exit_mismatches(name, live.returncode, live.stderr)
        assert not ending, "torch here: " + "\n".join(ending)
        reference = live.stdout
    ending = exit_mismatches(name, result.returncode, result.stderr)
    assert not ending, "\n".join(ending)
    problems = program_mismatches(name, result.stdout, reference)
    assert not problems, "\n".join(problems)
