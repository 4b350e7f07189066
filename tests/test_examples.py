"""The example programs run unchanged on tapegrad (``tapegrad run``) and print what they
print on real torch; the training example's checkpoint loads into real torch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "train_loader_tensorboard_checkpoint.py"


def _run(cmd: list, cwd: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_training_example_matches_torch_and_its_checkpoint_loads_in_torch(tmp_path):
    torch_dir, tg_dir = tmp_path / "torch", tmp_path / "tapegrad"
    torch_dir.mkdir()
    tg_dir.mkdir()
    expected = _run([sys.executable, str(EXAMPLE), str(torch_dir)], tmp_path)
    got = _run([sys.executable, "-m", "tapegrad", "run", str(EXAMPLE), str(tg_dir)], tmp_path)
    assert got == expected
    assert "device: cpu" in got

    # tapegrad's checkpoint, read by real torch under weights_only=True
    ours = torch.load(tg_dir / "checkpoint.pt", weights_only=True)
    theirs = torch.load(torch_dir / "checkpoint.pt", weights_only=True)
    assert ours["epoch"] == theirs["epoch"] == 4
    assert list(ours["model"]) == list(theirs["model"])
    model = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 2))
    model.load_state_dict(ours["model"])  # strict
    reference = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(),
                                    torch.nn.Linear(32, 2))
    reference.load_state_dict(theirs["model"])
    x = torch.randn(8, 10)
    np.testing.assert_allclose(model(x).detach().numpy(), reference(x).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    opt.load_state_dict(ours["optimizer"])
    assert ours["optimizer"]["param_groups"] == theirs["optimizer"]["param_groups"]

    # the TensorBoard event files hold the same scalars
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    scalars = []
    for d in (torch_dir, tg_dir):
        acc = ea.EventAccumulator(str(d / "runs"))
        acc.Reload()
        scalars.append({tag: [(e.step, e.value) for e in acc.Scalars(tag)]
                        for tag in acc.Tags()["scalars"]})
    assert scalars[1].keys() == scalars[0].keys() == {"train/loss", "train/accuracy"}
    for tag in scalars[0]:
        steps_t, vals_t = zip(*scalars[0][tag], strict=True)
        steps_g, vals_g = zip(*scalars[1][tag], strict=True)
        assert steps_g == steps_t
        np.testing.assert_allclose(vals_g, vals_t, rtol=1e-5)
