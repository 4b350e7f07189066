"""``tapegrad doctor SCRIPT``: an unmodified PyTorch script (tests/show/scripts/deep_sigmoid.py, a
10-layer sigmoid MLP) runs on tapegrad with a Monitor on its optimizer; the report names the
vanishing gradient with the layer norms real torch computes, in English and in Chinese."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import runpy
import shutil
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
    autograd_backward = tapegrad.autograd.backward
    argv = list(sys.argv)
    code = doctor_command(["--out", str(tmp_path / "o"), "--lang", "en", str(script)])
    assert code == 3
    out, err = capsys.readouterr()
    assert out.startswith("tapegrad\n")
    assert "p0" not in out and "param_groups[0][0]" in out  # no module: the optimizer's names
    assert "the script exited with status 3" in err
    assert tapegrad.optim.Optimizer.__init__ is init and tapegrad.Tensor.backward is backward
    assert tapegrad.autograd.backward is autograd_backward  # the first step's trace is undone
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
    assert doctor_command(["--lang", "zh", str(tmp_path / "absent.py")]) == 2
    err = capsys.readouterr().err
    assert "无法打开文件" in err and len(err.splitlines()) == 1


def _browser_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install tapegrad[test])"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt install chromium)"
    return None


CHROMIUM = os.environ.get("TAPEGRAD_CHROMIUM", "/usr/bin/chromium")


def test_doctor_page_has_graph_trace_plot_and_report(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="the health plot needs matplotlib (tapegrad[viz])")
    code = doctor_command(["--lang", "en", "--out", str(tmp_path), str(SCRIPT), "2"])
    assert code == 0
    out = capsys.readouterr().out
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "<title>tapegrad doctor: deep_sigmoid.py</title>" in page
    # the health report as printed
    assert "<h2>Gradient health report</h2>" in page
    assert "vanishing gradients: the first layer&#x27;s gradient norm (0.weight: " in page
    assert "Gradient health report (step 2)" in out
    # the graph of the script's loss, as a picture, with the parameters' names
    graph = page[page.index('<section id="graph">'):page.index('<section id="trace">')]
    if shutil.which("dot") is not None:
        assert '<div id="picture"><svg' in graph and "MseLossBackward0" in graph
    assert "AccumulateGrad → 0.weight.grad" in graph
    # the first step's backward pass only: one row per node of one pass, 10 layers deep
    rows = re.findall(r"<tr data-node=\"[^\"]*\"><td>(\d+)</td><td>([^<]*)</td>", page)
    names = [name for _, name in rows]
    assert names[0] == "MseLossBackward0" and names.count("AddmmBackward0") == 10
    assert names.count("AccumulateGrad") == 20 and len(rows) == 50
    assert [int(k) for k, _ in rows] == list(range(50))
    # the plot
    figures = page[page.index('<section id="figures">'):]
    assert "<h3>Gradient norm per layer over training</h3>" in figures and "<svg" in figures


@pytest.mark.skipif(_browser_reason() is not None, reason=_browser_reason() or "")
def test_doctor_page_in_headless_chromium(tmp_path, capsys):
    pytest.importorskip("matplotlib", reason="the health plot needs matplotlib (tapegrad[viz])")
    from playwright.sync_api import sync_playwright

    assert doctor_command(["--lang", "zh", "--out", str(tmp_path), str(SCRIPT), "2"]) == 0
    capsys.readouterr()
    page_path = tmp_path / "report.html"
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(page_path.as_uri())
            assert page.text_content("#detail").startswith("步骤 0: MseLossBackward0")
            page.click("#next")
            assert page.get_attribute("#detail", "data-step") == "1"
            if shutil.which("dot") is not None:
                current = page.eval_on_selector_all("#picture g.tg-current",
                                                    "els => els.map(e => e.id)")
                assert current == [page.get_attribute("#steps tbody tr.current", "data-node")]
            assert "梯度消失" in page.text_content("#text0 .tg-diagnosis")
            assert page.locator("#figures svg").count() == 1
            assert errors == []
            assert all(u.startswith("file:") for u in requests)
        finally:
            browser.close()
