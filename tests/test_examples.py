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


def _run(cmd: list, cwd: Path, **extra_env: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"), **extra_env)
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


# ---------------------------------------------------------------------------------------------
# The teaching examples (examples/NN_*.py): each runs in its quick mode, in this process (a
# subprocess per example would cost more than the examples themselves). "On torch" runs the
# same file with ``tapegrad`` bound to real torch in sys.modules, so ``import tapegrad as torch``
# gives torch: the lessons must print the same on both.

EXAMPLES = ROOT / "examples"
LESSONS = ["01_manual_vs_autograd", "02_graph_of_an_expression", "03_accumulation_and_zero_grad",
           "04_detach_kv_cache", "06_second_derivatives", "07_vanishing_gradients"]


@pytest.fixture
def quick(monkeypatch):
    """Quick mode, and one BLAS thread for both libraries: the examples' matrices are small and
    the test machine's cores are shared, where extra BLAS threads only contend."""
    import tapegrad

    monkeypatch.setenv("TAPEGRAD_EXAMPLES_QUICK", "1")
    threads = tapegrad.get_num_threads(), torch.get_num_threads()
    tapegrad.set_num_threads(1)
    torch.set_num_threads(1)
    yield
    tapegrad.set_num_threads(threads[0])
    torch.set_num_threads(threads[1])


def run_example(name: str, *args: str, on_torch: bool = False) -> str:
    import contextlib
    import io
    import runpy
    import warnings

    path = EXAMPLES / f"{name}.py"
    saved_argv, saved = sys.argv, sys.modules.get("tapegrad")
    out = io.StringIO()
    sys.argv = [str(path), *args]
    if on_torch:
        sys.modules["tapegrad"] = torch
    try:
        with contextlib.redirect_stdout(out), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # backward(create_graph=True)'s warning, on both
            runpy.run_path(str(path), run_name="__main__")
    finally:
        sys.argv = saved_argv
        if saved is not None:
            sys.modules["tapegrad"] = saved
    return out.getvalue()


def test_every_example_says_what_it_teaches() -> None:
    import ast

    for path in sorted(EXAMPLES.glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
        assert doc and ("What it teaches" in doc or "What it shows" in doc), path.name
        assert "python examples/" in doc or "tapegrad run examples/" in doc, path.name


def test_the_examples_readme_lists_every_example_with_its_run_time() -> None:
    """examples/README.md's table has one row per example program, each with a run time."""
    import re

    rows = re.findall(r"^\| `([^`]+\.py)` \| (.+?) \| (.+?) \|$",
                      (EXAMPLES / "README.md").read_text(encoding="utf-8"), re.M)
    assert sorted(name for name, _, _ in rows) == sorted(p.name for p in EXAMPLES.glob("*.py"))
    for name, _, took in rows:
        assert re.fullmatch(r"(about|under) \d+(\.\d+)? (s|min)", took), (name, took)


@pytest.mark.parametrize("name", LESSONS)
def test_lesson_prints_what_it_prints_on_torch(name, quick, tmp_path) -> None:
    ours = run_example(name, str(tmp_path))
    theirs = run_example(name, str(tmp_path), on_torch=True)
    # a picture of the graph is drawn only where tapegrad.show exists
    ours = "".join(line for line in ours.splitlines(True) if not line.startswith("picture:"))
    assert ours == theirs


def test_lesson_values(quick, tmp_path) -> None:
    assert "the same: True" in run_example("01_manual_vs_autograd")
    graph = run_example("02_graph_of_an_expression", str(tmp_path))
    assert "PowBackward0\n  AddBackward0\n    MulBackward0\n" in graph
    assert "de/da = 42.0" in graph and "de/db = 28.0" in graph
    acc = run_example("03_accumulation_and_zero_grad")
    assert "w.grad = -15.0000  (added up)" in acc and "equal: True" in acc
    detach = run_example("04_detach_kv_cache")
    assert "through the cache: None" in detach and "same memory: True" in detach
    second = run_example("06_second_derivatives")
    assert "d2y/dx2 = 12.0" in second and "x.grad = 24.0" in second
    assert "cleared first:  x.grad = 12.0" in second and "d3y/dx3 = 6.0" in second
    vanish = run_example("07_vanishing_gradients")
    sigmoid, relu = vanish.split("ReLU:")
    ratio = [float(part.split("first / last layer: ")[1].split()[0]) for part in (sigmoid, relu)]
    assert ratio[0] < 1e-5 and ratio[1] > 1e-2


@pytest.mark.parametrize("on_torch", [False, True])
def test_no_grad_and_inference_mode(quick, on_torch) -> None:
    out = run_example("05_no_grad_vs_inference_mode", on_torch=on_torch)
    assert "same numbers: True" in out
    assert "normal" in out and "ms per forward" in out
    assert "Inference tensors cannot be saved for backward" in out


def test_digits_cnn(quick, tmp_path) -> None:
    pytest.importorskip("sklearn", reason="the digits come with scikit-learn (examples extra)")
    out = run_example("08_digits_cnn", str(tmp_path))
    accuracy = float(out.split("test accuracy: ")[1].split("%")[0])
    assert accuracy > 80.0  # quick mode: 2 epochs; the full run's 98.3% is in the header
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "digits_confusion.png").read_bytes()[:4] == b"\x89PNG"


def test_gru_learns_the_adding_problem(quick) -> None:
    out = run_example("09_sequence_gru")
    last = [line for line in out.splitlines() if line.startswith("step")][-1]
    assert float(last.split("test MSE ")[1]) < 0.05  # guessing the mean: 0.167


def test_char_gpt_script(quick) -> None:
    out = run_example("10_char_gpt")
    losses = [float(line.split("loss ")[1].split()[0]) for line in out.splitlines()
              if line.startswith("step")]
    assert losses[-1] < losses[0] - 1.0
    assert "\nLOVE, n.  " in out  # the sample, after the prompt


def test_one_script_on_both_and_checkpoints_across(quick, tmp_path, monkeypatch) -> None:
    """The same file with --backend tapegrad and --backend torch: the same losses and
    predictions, and each library loads the other's checkpoint and predicts the same."""
    a, b = str(tmp_path / "a.pt"), str(tmp_path / "b.pt")
    name = "11_tapegrad_or_pytorch"
    ours = run_example(name, "--backend", "tapegrad", "--save", a)
    theirs = run_example(name, "--backend", "torch", "--save", b)
    assert ours.replace("a.pt", "b.pt") == theirs
    assert "step 50  loss" in ours
    assert tapegrad_loads(b) and torch.load(a, weights_only=True)["written_by"] == "tapegrad"
    loaded = run_example(name, "--load", b)  # the default backend: tapegrad
    assert loaded.startswith("tapegrad loaded a checkpoint written by torch (step 50)")
    monkeypatch.setenv("TAPEGRAD_EXAMPLE_BACKEND", "torch")
    loaded = run_example(name, "--load", a)
    assert loaded.startswith("torch loaded a checkpoint written by tapegrad (step 50)")


def tapegrad_loads(path: str) -> bool:
    import tapegrad

    return tapegrad.load(path, weights_only=True)["written_by"] == "torch"


def test_mixed_precision(quick, tmp_path) -> None:
    out = run_example("12_mixed_precision", str(tmp_path))
    assert "float16 overflow: at step 0 the gradient of 4.weight went past 65504" in out
    assert "the loss is inf or NaN from step 1 on" in out
    assert "GradScaler: skipped 17 step(s)" in out
    assert "32768 16384 8192" in out
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return
    assert (tmp_path / "mixed_precision.png").read_bytes()[:4] == b"\x89PNG"
