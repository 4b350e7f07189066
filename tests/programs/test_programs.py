"""Real PyTorch programs, unchanged, print on tapegrad what they print on torch.

Each program in ``corpus/`` (tutorial and example scripts from public repositories; sources,
licenses and the few edits made to them are in ``SOURCES.md``) runs under ``tapegrad run`` and
its stdout is compared with ``expected/<name>.out``, recorded from real torch by
``regenerate.py``; ``program_outputs.py`` says how lines and numbers are compared. With
``--lib torch`` the programs run on torch itself, which checks the recorded expectations.
"""

from __future__ import annotations

import pytest
import torchcompare
from program_outputs import WAITS_FOR, exit_mismatches, outcome, program_mismatches, programs


def _param(name: str):
    if name in WAITS_FOR and torchcompare.LIB_NAME == "tapegrad":  # (on torch, all pass)
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=WAITS_FOR[name]))
    return name


@pytest.mark.parametrize("name", [_param(name) for name in programs()])
def test_program_prints_what_torch_prints(name, lib_name, tmp_path) -> None:
    result = outcome(name, lib_name, tmp_path)
    ending = exit_mismatches(name, result.returncode, result.stderr)
    assert not ending, "\n".join(ending)
    problems = program_mismatches(name, result.stdout)
    assert not problems, "\n".join(problems)
