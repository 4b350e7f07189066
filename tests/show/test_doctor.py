"""``tapegrad doctor SCRIPT``: an unmodified PyTorch script (tests/show/scripts/deep_sigmoid.py, a
10-layer sigmoid MLP) runs on tapegrad with a Monitor on its optimizer; the report names the
vanishing gradient with the layer norms real torch computes, in English and in Chinese."""

from __future__ import annotations

import contextlib
import io
import json
import os
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import tapegrad
from tapegrad.show.doctor import doctor_command
from tapegrad.show.health import fmt

SCRIPT = Path(__file__).parent / "scripts" / "deep_sigmoid.py"
SRC = Path(tapegrad.__file__).resolve().parent.parent


def torch_norms(steps: int) -> tuple[float, float]:
    """The first and last layer's gradient norms real torch computes for the script (run here,
    where ``import torch`` is real torch)."""
    argv = sys.argv
    sys.argv = [str(SCRIPT), str(steps)]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            model = runpy.run_path(str(SCRIPT), run_name="__main__")["model"]
    finally:
        sys.argv = argv
    assert isinstance(model, torch.nn.Module)
    return model[0].weight.grad.norm().item(), model[18].weight.grad.norm().item()


def norms_in(report: dict) -> tuple[float, float]:
    f = report["diagnosis"][0]
    assert f["kind"] == "vanishing"
    return f["numbers"]["first"], f["numbers"]["last"]


def test_doctor_in_english(tmp_path):
    # as a command: a fresh interpreter, the way a user runs it
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from tapegrad.show.doctor import doctor_command; "
         "sys.exit(doctor_command(sys.argv[1:]))", "--out", str(tmp_path / "out"),
         "--lang", "en", str(SCRIPT), "5"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    assert proc.returncode == 0, proc.stderr
    out, err = proc.stdout, proc.stderr
    # the script's own output comes first, unchanged
    assert out.startswith("first layer grad norm")
    data = json.loads((tmp_path / "out" / "health.json").read_text())
    first, last = norms_in(data[0]["report"])
    t_first, t_last = torch_norms(5)
    assert first == pytest.approx(t_first, rel=1e-4) and last == pytest.approx(t_last, rel=1e-5)
    assert last / first > 1e6
    assert "vanishing gradients: the first layer's gradient norm " in out
    assert f"(0.weight: {fmt(first)})" in out and f"(18.weight: {fmt(last)})" in out
    assert f"{last / first:,.0f} times smaller" in out
    assert "Gradient health report (step 5)" in out
    assert "  step 5  loss " in err and "running" in err
    assert len(data[0]["history"]) == 5
    page = (tmp_path / "out" / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") or "<html" in page
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "out" / "health.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in page


def test_doctor_in_chinese(tmp_path, capsys):
    code = doctor_command(["--lang", "zh", "--out", str(tmp_path), str(SCRIPT), "3"])
    assert code == 0
    out, err = capsys.readouterr()
    first, last = norms_in(json.loads((tmp_path / "health.json").read_text())[0]["report"])
    t_first, t_last = torch_norms(3)
    assert first == pytest.approx(t_first, rel=1e-4) and last == pytest.approx(t_last, rel=1e-5)
    assert "梯度体检报告（第 3 步）" in out
    assert "梯度消失：第一层的梯度范数（0.weight：" in out
    assert f"（0.weight：{fmt(first)}）" in out and f"（18.weight：{fmt(last)}）" in out
    assert "个数量级" in out
    assert "第 3 步  loss" in err and "正在用 tapegrad 运行" in err


def test_doctor_restores_what_it_changed(tmp_path, capsys):
    script = tmp_path / "fails.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        w = torch.ones(2, requires_grad=True)
        opt = torch.optim.SGD([w], lr=0.1)
        (w * w).sum().backward()
        opt.step()
        print(torch.__name__)
        sys.exit(3)
    """))
    init = tapegrad.optim.Optimizer.__init__
    backward = tapegrad.Tensor.backward
    argv = list(sys.argv)
    code = doctor_command(["--out", str(tmp_path / "o"), "--lang", "en", str(script)])
    assert code == 3
    out, err = capsys.readouterr()
    assert out.startswith("tapegrad\n")
    assert "p0" not in out and "param_groups[0][0]" in out  # no module: the optimizer's names
    assert "the script exited with status 3" in err
    assert tapegrad.optim.Optimizer.__init__ is init and tapegrad.Tensor.backward is backward
    assert sys.modules["torch"] is torch and sys.argv == argv


def test_doctor_error_and_usage(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TAPEGRAD_LANG", "en")
    script = tmp_path / "boom.py"
    script.write_text("raise ValueError('boom')\n")
    assert doctor_command(["--out", str(tmp_path), str(script)]) == 1
    out, err = capsys.readouterr()
    assert "ValueError: boom" in err
    assert "the script created no optimizer" in out
    assert doctor_command([]) == 2
    assert "usage: tapegrad doctor" in capsys.readouterr().err
    assert doctor_command(["--lang", "zh"]) == 2
    assert "用法：tapegrad doctor" in capsys.readouterr().err
