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
    assert "Resuming at step 2 of 4" in capsys.readouterr().out
    assert len((out / "losses.csv").read_text().splitlines()) == 5


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


@pytest.mark.parametrize("argv", [["demo", "--help"], ["--help"]])
def test_help(argv, capsys) -> None:
    from tapegrad._cli import main as cli

    assert cli(argv) == 0
    assert "usage: tapegrad" in capsys.readouterr().out


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
        def __init__(self, model):
            calls["health"] = model
            grads = [p.grad for p in model.parameters()]
            calls["all_grads"] = all(g is not None for g in grads)

        def __str__(self):
            return "HEALTH REPORT"

        def plot(self, path):
            Path(path).write_bytes(b"plot")

    class Graph:
        def __init__(self, tensor, params=None):
            calls["graph"] = (tensor, params)

        def render(self, path):
            Path(path).write_text("<svg/>")

    show = types.ModuleType("tapegrad.show")
    show.health, show.graph = Health, Graph
    monkeypatch.setitem(sys.modules, "tapegrad.show", show)
    assert main(["--steps", "1", "--out", str(tmp_path), "--lang", "en", *FAST]) == 0
    stdout = capsys.readouterr().out
    assert "Gradient health:\nHEALTH REPORT" in stdout
    assert calls["all_grads"]
    tensor, params = calls["graph"]
    assert params is calls["health"].blocks[0] and tensor.grad_fn is not None
    assert (tmp_path / "gradient_health.png").read_bytes() == b"plot"
    assert (tmp_path / "attention_graph.svg").is_file()
    assert "gradient_health.png" in stdout and "attention_graph.svg" in stdout
