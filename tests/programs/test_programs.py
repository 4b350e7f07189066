"""Real PyTorch programs, unchanged, print on tapegrad what they print on torch.

Each program in ``corpus/`` (tutorial and example scripts from public repositories; sources,
licenses and the few edits made to them are in ``SOURCES.md``) runs under ``tapegrad run`` and
its stdout is compared with ``expected/<name>.out``, recorded from real torch by
``regenerate.py``; ``program_outputs.py`` says how lines and numbers are compared. With
``--lib torch`` the programs run on torch itself, which checks the recorded expectations.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor

import pytest
import torchcompare
from program_outputs import WAITS_FOR, exit_mismatches, outcome, program_mismatches, programs


def _param(name: str):
    if name in WAITS_FOR and torchcompare.LIB_NAME == "tapegrad":  # (on torch, all pass)
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=WAITS_FOR[name]))
    return name


@pytest.fixture(scope="session")
def program_runs(request, lib_name, tmp_path_factory):
    """Each selected program's run, started at once, a few at a time (one per core, up to 4).

    A program is a process of its own that spends seconds to a minute training; running them
    side by side, while the tests below wait for their results in order, takes the corpus about
    half the time on two cores. Each run has its own empty directory and one BLAS thread.
    """
    names = [item.callspec.params["name"] for item in request.session.items
             if item.originalname == "test_program_prints_what_torch_prints"]
    pool = ThreadPoolExecutor(max_workers=max(1, min(4, os.cpu_count() or 1)))
    runs: dict[str, Future] = {name: pool.submit(outcome, name, lib_name,
                                                 tmp_path_factory.mktemp(name))
                               for name in names}
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("name", [_param(name) for name in programs()])
def test_program_prints_what_torch_prints(name, program_runs) -> None:
    result = program_runs[name].result()
    ending = exit_mismatches(name, result.returncode, result.stderr)
    assert not ending, "\n".join(ending)
    problems = program_mismatches(name, result.stdout)
    assert not problems, "\n".join(problems)
