"""``tapegrad run SCRIPT`` and ``python -m tapegrad run SCRIPT`` run PyTorch programs unchanged."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent(
    """
    import sys
    import torch
    import torch.nn as nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    loader = DataLoader(TensorDataset(torch.ones(4, 2), torch.zeros(4, 1)), batch_size=2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
    print(torch.__name__, sys.argv[1:], round(loss.item(), 6))
    """
)


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(PROGRAM)
    return path


def test_python_m_tapegrad_run(script) -> None:
    out = subprocess.run([sys.executable, "-m", "tapegrad", "run", str(script), "a", "b"],
                         capture_output=True, text=True, check=True).stdout
    expected = subprocess.run([sys.executable, str(script), "a", "b"], capture_output=True,
                              text=True, check=True).stdout  # the same program on real torch
    assert out.replace("tapegrad", "torch") == expected


@pytest.mark.skipif(shutil.which("tapegrad") is None, reason="console script not on PATH")
def test_console_script(script) -> None:
    out = subprocess.run(["tapegrad", "run", str(script)], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("tapegrad [] ")


def test_usage_without_a_script() -> None:
    proc = subprocess.run([sys.executable, "-m", "tapegrad"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "usage: tapegrad run SCRIPT" in proc.stderr
