"""Real PyTorch programs, unchanged, print on tapegrad what they print on torch.

Each program in ``corpus/`` (tutorial and example scripts from public repositories; sources,
licenses and the few edits made to them are in ``SOURCES.md``) runs under ``tapegrad run`` and
under the installed torch, in the same test, and the two outputs are compared
(``program_outputs.py`` says how lines and numbers are compared). The reference is the live
torch, not a recording: torch's numbers depend on the kernels it picks for this CPU
(tests/cpu_kernels.py; a few programs print other last digits with AVX-512, AVX2 or the scalar
kernels). ``expected/<name>.out`` is torch's output recorded by ``regenerate.py``, and
``expected/VERSIONS`` names the torch, the CPU and the kernels that recorded each: where this
run's torch uses those kernels, the test also checks that the recording is what torch prints
(``status.py`` reads the recordings, to be quick).
"""

from __future__ import annotations

import pytest
import torchcompare
from program_outputs import (
    WAITS_FOR,
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


@pytest.mark.parametrize("name", [_param(name) for name in programs()])
def test_program_prints_what_torch_prints(name, lib_name, tmp_path) -> None:
    reference = outcome(name, "torch", tmp_path / "torch")
    assert reference.returncode == 0, reference.stderr[-3000:]
    if recorded_kernels().get(name) == torch_kernels():
        stale = program_mismatches(name, reference.stdout)
        assert not stale, "expected/ is not what torch prints (regenerate.py):\n" + "\n".join(
            stale)
    result = outcome(name, lib_name, tmp_path / lib_name)
    assert result.returncode == 0, result.stderr[-3000:]
    problems = program_mismatches(name, result.stdout, reference.stdout)
    assert not problems, "\n".join(problems)
