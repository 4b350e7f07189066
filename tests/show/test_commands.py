"""``tapegrad graph SCRIPT``: the graph of the first loss a script calls backward on."""

from __future__ import annotations

import shutil
import sys

import pytest

from tapegrad.show._commands import graph_command

# seed000_2 (the tutorial's computation-graph example), as it runs
SEED000_2 = """
import torch

a = torch.tensor([2.0], requires_grad=True)
b = torch.tensor([3.0], requires_grad=True)
c = a * b
d = c + 1.0
e = d ** 2
e.backward()
print(f"de/da = {a.grad.item():.2f}")
"""


def _script(tmp_path, body: str):
    path = tmp_path / "train.py"
    path.write_text(body, encoding="utf-8")
    return path


TRAIN = """
import sys
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 3), nn.Sigmoid(), nn.Linear(3, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 4)
for step in range(3):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    try:
        loss.backward()
    except Exception:
        print("the script's own handler caught it")
    opt.step()
    print("stepped", sys.argv[1:])
"""


def test_graph_of_the_first_loss_and_the_script_stops(tmp_path, capsys):
    torch_before = sys.modules.get("torch")
    script = _script(tmp_path, TRAIN)
    out = tmp_path / "g.dot"
    assert graph_command([str(script), "--flag", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "stepped" not in text and "handler caught" not in text  # stopped at backward
    assert text.startswith("MeanBackward0 (loss)")
    assert "AccumulateGrad → model.0.weight.grad  [3, 4] float32" in text
    assert "SigmoidBackward0" in text
    assert out.read_text().startswith("digraph")
    assert sys.modules.get("torch") is torch_before  # the alias is undone


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_seed_program_to_svg(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    seed = tmp_path / "seed000_2_computation_graph.py"
    seed.write_text(SEED000_2, encoding="utf-8")
    assert graph_command([seed.name]) == 0
    text = capsys.readouterr().out
    assert "de/da" not in text  # backward never ran
    assert "PowBackward0 (e)" in text and "AccumulateGrad → a.grad" in text
    svg = (tmp_path / "seed000_2_computation_graph.graph.svg").read_text()
    assert "<svg" in svg and "PowBackward0" in svg


def test_without_dot_writes_the_dot_source_and_says_how_to_install(tmp_path, capsys,
                                                                   monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)
    script = _script(tmp_path, TRAIN)
    assert graph_command(["--out", str(tmp_path / "g.png"), str(script)]) == 1
    err = capsys.readouterr().err
    assert "apt install graphviz" in err
    assert (tmp_path / "g.dot").read_text().startswith("digraph")


def test_usage_and_scripts_without_backward(tmp_path, capsys):
    assert graph_command([]) == 2
    assert graph_command(["--bogus", "x.py"]) == 2
    assert graph_command([str(tmp_path / "missing.py")]) == 2
    script = _script(tmp_path, "import torch\nprint(torch.ones(2).sum())\n")
    assert graph_command([str(script)]) == 1
    assert "without calling backward" in capsys.readouterr().err
