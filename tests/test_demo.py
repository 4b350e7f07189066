"""``tapegrad demo``: it trains, writes its folder, stops cleanly on Ctrl-C, and a resumed run has
exactly the losses of an uninterrupted one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import tapegrad
from tapegrad.demo import main
from tapegrad.demo import train as T

ROOT = Path(__file__).resolve().parent.parent
FAST = ["--no-progress", "--sample-chars", "20"]


def _small(text: str, steps: int) -> T.Settings:
    return T.Settings(text=text, steps=steps, batch_size=4, block_size=16, n_embd=32, n_head=2,
                      warmup=3)


def _stop_at(step_to_stop: int):
    def callback(step: int, loss: float) -> None:
        if step == step_to_stop:
            raise KeyboardInterrupt  # what Ctrl-C does, between two steps
    return callback


def test_resume_continues_with_the_losses_of_an_uninterrupted_run(tmp_path) -> None:
    text = str(T.BUNDLED_TEXTS["en"])
    whole = T.train(_small(text, 8), tmp_path / "whole", show_progress=False)
    assert not whole.interrupted and whole.step == 8 and len(whole.losses) == 8

    first = T.train(_small(text, 8), tmp_path / "split", show_progress=False,
                    callback=_stop_at(4))
    assert first.interrupted and first.step == 4
    assert first.losses == whole.losses[:4]
    # steps=0: the checkpoint's own total (8), so its learning-rate schedule is unchanged
    rest = T.train(_small(text, 0), tmp_path / "split", resume=True, show_progress=False)
    assert not rest.interrupted and rest.step == 8
    assert rest.losses == whole.losses  # bit for bit: weights, moments, schedule, data, RNG
    for name, p in whole.model.state_dict().items():
        assert tapegrad.equal(p, rest.model.state_dict()[name]), name


def test_loss_falls(tmp_path) -> None:
    result = T.train(_small(str(T.BUNDLED_TEXTS["en"]), 40), tmp_path, show_progress=False)
    assert sum(result.losses[-5:]) / 5 < result.losses[0] - 0.5


def test_demo_writes_its_folder(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    assert main(["--steps", "3", "--out", str(out), "--lang", "en", *FAST]) == 0
    stdout = capsys.readouterr().out
    assert "The Devil's Dictionary" in stdout and "Trained 3 steps" in stdout
    assert "Sampled text:" in stdout
    rows = (out / "losses.csv").read_text().splitlines()
    assert rows[0] == "step,loss" and len(rows) == 4
    sample = (out / "sample.txt").read_text(encoding="utf-8")
    assert sample.startswith("LOVE, n.  ") and len(sample) == len("LOVE, n.  ") + 20 + 1
    assert (out / "checkpoint.pt").is_file()
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "losses.csv" in stdout
    else:
        assert (out / "loss_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ckpt = tapegrad.load(out / "checkpoint.pt", weights_only=True)
    assert ckpt["step"] == 3 and len(ckpt["losses"]) == 3


def test_interrupted_demo_still_writes_everything_and_resumes(tmp_path, capsys) -> None:
    out = tmp_path / "out"
    code = main(["--steps", "4", "--out", str(out), "--lang", "en", *FAST],
                callback=_stop_at(2))
    assert code == 130
    stdout = capsys.readouterr().out
    assert "Stopped at step 2 of 4" in stdout
    assert len((out / "losses.csv").read_text().splitlines()) == 3
    assert (out / "sample.txt").is_file()
    assert main(["--resume", "--out", str(out), "--lang", "en", *FAST]) == 0
    stdout = capsys.readouterr().out
    assert "Resuming at step 2 of 4" in stdout
    # this run's steps, not the checkpoint's
    assert "Trained 2 steps in this run (steps 3-4 of 4) in " in stdout
    assert len((out / "losses.csv").read_text().splitlines()) == 5


def test_summary_names_what_it_compares(tmp_path, capsys) -> None:
    """The loss of step 1 against the mean of the last steps, each named by its step numbers,
    with the last step's own loss: the numbers are those of losses.csv."""
    from tapegrad.demo import MESSAGES, loss_summary

    out = tmp_path / "out"
    assert main(["--steps", "10", "--out", str(out), "--lang", "en", *FAST]) == 0
    stdout = capsys.readouterr().out
    losses = [float(r.split(",")[1]) for r in (out / "losses.csv").read_text().splitlines()[1:]]
    assert len(losses) == 10
    assert "Trained 10 steps in " in stdout
    assert (f"Loss: {losses[0]:.3f} at step 1 -> {(losses[8] + losses[9]) / 2:.3f}, the mean of "
            f"steps 9-10 (step 10 alone: {losses[9]:.3f}).") in stdout
    en = MESSAGES["en"]
    assert loss_summary([3.0], en) == "Loss at step 1: 3.000."
    assert loss_summary([3.0, 2.0, 1.0], en) == "Loss: 3.000 at step 1 -> 1.000 at step 3."
    many = [float(k) for k in range(100, 0, -1)]  # 100 steps: the mean of the last 20
    assert loss_summary(many, en) == ("Loss: 100.000 at step 1 -> 10.500, the mean of steps "
                                      "81-100 (step 100 alone: 1.000).")
    assert loss_summary(many, MESSAGES["zh"]) == ("损失：第 1 步 100.000 -> 第 81-100 步的平均 "
                                                  "10.500（仅第 100 步：1.000）。")


def test_default_folder_is_not_the_current_one(tmp_path, capsys, monkeypatch) -> None:
    """Without --out the demo writes into tapegrad/demo in the user's cache folder, says so
    first, and leaves the current folder as it was."""
    from tapegrad.demo import default_out

    cwd, cache = tmp_path / "repo", tmp_path / "cache"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    assert default_out() == cache / "tapegrad" / "demo"
    assert main(["--steps", "1", "--lang", "en", *FAST]) == 0
    stdout = capsys.readouterr().out
    assert list(cwd.iterdir()) == []
    assert f"Writing to {cache / 'tapegrad' / 'demo'} (--out DIR writes elsewhere)." in stdout
    assert f"Written to {cache / 'tapegrad' / 'demo'}/:" in stdout
    assert (cache / "tapegrad" / "demo" / "checkpoint.pt").is_file()
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_out() == Path.home() / ".cache" / "tapegrad" / "demo"


def test_chinese_messages_and_text(tmp_path, capsys) -> None:
    assert main(["--steps", "1", "--out", str(tmp_path), "--lang", "zh", *FAST]) == 0
    stdout = capsys.readouterr().out
    assert "唐诗三百首" in stdout and "训练 1 步" in stdout and "模型生成的文本" in stdout
    assert (tmp_path / "sample.txt").read_text(encoding="utf-8").startswith("《")


def test_own_text(tmp_path, capsys) -> None:
    text = tmp_path / "mine.txt"
    text.write_text("to be or not to be, that is the question. " * 20, encoding="utf-8")
    assert main(["--steps", "2", "--out", str(tmp_path / "o"), "--text", str(text),
                 "--lang", "en", *FAST]) == 0
    assert "mine.txt" in capsys.readouterr().out
    assert main(["--text", str(tmp_path / "absent.txt"), "--out", str(tmp_path)]) == 2


def test_errors(tmp_path, capsys) -> None:
    assert main(["--device", "cuda", "--out", str(tmp_path)]) == 2
    assert "Torch not compiled with CUDA enabled" in capsys.readouterr().err
    assert main(["--resume", "--out", str(tmp_path / "none"), "--lang", "en"]) == 2
    assert "no checkpoint to resume from" in capsys.readouterr().err


def test_ctrl_c_in_a_real_process(tmp_path) -> None:
    """SIGINT stops the run after the step in progress; the folder is written; status 130."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "tapegrad", "demo", "--steps", "100000",
                             "--out", str(tmp_path), "--lang", "en", "--sample-chars", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    intro = proc.stdout.readline()  # printed when the model is built, before the first step
    assert "100000 steps" in intro
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Stopped at step" in stdout and "Traceback" not in stderr
    assert "steps/s" in stderr or "step/s" in stderr  # the progress bar
    assert (tmp_path / "checkpoint.pt").is_file() and (tmp_path / "sample.txt").is_file()


def test_first_lines_say_what_the_pictures_need(tmp_path, capsys, monkeypatch) -> None:
    """Without Graphviz's dot (or matplotlib) the demo's first lines say what to install for
    which picture; with both, no such line."""
    import importlib.util
    import shutil

    import tapegrad.demo as demo

    have_plots = importlib.util.find_spec("matplotlib") is not None
    have_dot = shutil.which("dot") is not None
    assert main(["--steps", "1", "--out", str(tmp_path), "--lang", "en", *FAST]) == 0
    head = capsys.readouterr().out.splitlines()[:4]
    assert any(line.startswith("Not installed: matplotlib") for line in head) != have_plots
    assert any(line.startswith("Not installed: Graphviz") for line in head) != have_dot
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert main(["--steps", "1", "--out", str(tmp_path / "b"), "--lang", "en", *FAST]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("Writing to ")
    assert lines[2] == ("Not installed: matplotlib, for loss_curve.png and gradient_health.png "
                        "(pip install matplotlib, or the [viz] extra).")
    assert lines[3] == ("Not installed: Graphviz's dot program, for attention_graph.svg "
                        "(apt install graphviz, or brew install graphviz).")
    assert "Not installed" in demo.MESSAGES["en"]["need_dot"]
    assert "未安装" in demo.MESSAGES["zh"]["need_dot"]


def test_second_ctrl_c_quits_at_once(tmp_path) -> None:
    """Two SIGINTs: the first asks the run to stop after its step (and says so), the second
    quits at once: status 130 within seconds, no traceback, and nothing written after it."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "tapegrad", "demo", "--steps", "100000",
                             "--out", str(tmp_path), "--lang", "en", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        assert "100000 steps" in proc.stdout.readline()
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        second = time.perf_counter()
        stdout, stderr = proc.communicate(timeout=60)
        quit_after = time.perf_counter() - second
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    assert proc.returncode == 130, stderr
    assert quit_after < 3.0, quit_after  # not after sampling, the health check and the plots
    assert "Ctrl-C again quits at once" in stderr
    assert stderr.rstrip().endswith("tapegrad demo: quit at once (Ctrl-C).")
    assert "Traceback" not in stderr
    assert "Sampled text" not in stdout and not (tmp_path / "sample.txt").exists()
    assert not (tmp_path / "checkpoint.pt.partial").exists()


@pytest.mark.parametrize("argv", [["demo", "--help"], ["--help"]])
def test_help(argv, capsys) -> None:
    from tapegrad._cli import main as cli

    assert cli(argv) == 0
    assert "usage: tapegrad" in capsys.readouterr().out


def test_gradient_health_plot_is_the_doctors(tmp_path, capsys) -> None:
    """gradient_health.png is tapegrad.show's per-layer plot over the steps (the one tapegrad
    doctor draws): labelled axes, one line per weight matrix named in the legend, the steps on
    the x axis, at a readable size; the health report printed names its step."""
    pytest.importorskip("matplotlib")
    from PIL import Image

    from tapegrad import show

    out = tmp_path / "out"
    assert main(["--steps", "6", "--out", str(out), "--lang", "en", *FAST]) == 0
    stdout = capsys.readouterr().out
    assert "Gradient health report (step 6)" in stdout
    assert Image.open(out / "gradient_health.png").size == (800, 400)
    result = T.train(_small(str(T.BUNDLED_TEXTS["en"]), 3), tmp_path / "small",
                     show_progress=False)
    assert result.grad_names == [n for n, p in result.model.named_parameters() if p.dim() >= 2]
    assert [len(row) for row in result.grad_norms] == [len(result.grad_names)] * 3
    fig = show.plot_grad_norms(result.grad_history(), result.grad_names, lang="en")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "step" and ax.get_ylabel() == "gradient norm (log scale)"
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == result.grad_names
    assert [list(line.get_xdata()) for line in ax.lines][0] == [1, 2, 3]
    styles = {(line.get_color(), line.get_linestyle()) for line in ax.lines}
    assert len(styles) == len(ax.lines)  # no two layers drawn alike


def test_built_in_progress_bar(capsys) -> None:
    """The bar used when tqdm is not installed: step, loss, steps/s and the time left."""
    from tapegrad.demo.progress import _Bar

    bar = _Bar(10, 4, "training")
    for loss in (2.5, 2.25):
        bar.update(loss)
    bar.close()
    err = capsys.readouterr().err
    last = err.rstrip("\n").split("\r")[-1]
    assert last.startswith("training: [")
    assert " 6/10  loss 2.250  " in last and "steps/s  ETA " in last
    assert err.endswith("\n")


def test_health_report_and_graph_when_tapegrad_show_is_installed(tmp_path, capsys,
                                                                 monkeypatch) -> None:
    """With ``tapegrad.show`` present the demo prints the health report, writes its plot and
    renders the graph of the first attention block (a stand-in module records the calls)."""
    import types

    calls = {}

    class Health:
        def __init__(self, model, lang=None):
            calls["health"] = model
            grads = [p.grad for p in model.parameters()]
            calls["all_grads"] = all(g is not None for g in grads)

        def __str__(self):
            return "HEALTH REPORT"

    def plot_grad_norms(history, names, path, lang=None, title=None):
        calls["plot"] = (history, names, title)
        Path(path).write_bytes(b"plot")

    class Graph:
        def __init__(self, tensor, params=None):
            calls["graph"] = (tensor, params)

        def render(self, path):
            Path(path).write_text("<svg/>")

    show = types.ModuleType("tapegrad.show")
    show.health, show.graph, show.plot_grad_norms = Health, Graph, plot_grad_norms
    monkeypatch.setitem(sys.modules, "tapegrad.show", show)
    assert main(["--steps", "1", "--out", str(tmp_path), "--lang", "en", *FAST]) == 0
    stdout = capsys.readouterr().out
    assert "Gradient health:\nHEALTH REPORT" in stdout
    assert calls["all_grads"]
    tensor, params = calls["graph"]
    assert params is calls["health"].blocks[0] and tensor.grad_fn is not None
    assert (tmp_path / "gradient_health.png").read_bytes() == b"plot"
    history, names, title = calls["plot"]  # gradient norm per layer over the steps trained
    assert [h["step"] for h in history] == [1]
    assert names == [n for n, p in calls["health"].named_parameters() if p.dim() >= 2]
    assert set(history[0]["params"]) == set(names)
    assert title == "Gradient norm per layer over training (before clipping)"
    assert (tmp_path / "attention_graph.svg").is_file()
    assert "gradient_health.png" in stdout and "attention_graph.svg" in stdout
