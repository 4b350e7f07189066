"""``tapegrad graph SCRIPT``: the graph of the first loss a script calls backward on.

``graph_command`` runs in a fresh interpreter for each test: like ``tapegrad run``, it imports
every tapegrad submodule under ``torch.*``, which would change what later tests in this
process see (the op registry).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tapegrad

SRC = str(Path(tapegrad.__file__).resolve().parents[1])
RUNNER = """
import sys
if sys.argv[1] == "no-graphviz":
    sys.modules["graphviz"] = None
from tapegrad.show._commands import graph_command
before = sys.modules.get("torch")
code = graph_command(sys.argv[2:])
assert sys.modules.get("torch") is before, "the torch alias was not undone"
sys.exit(code)
"""


def graph_command(argv, *, graphviz=True, cwd=None):
    """Call graph_command(argv) in a fresh interpreter: (exit code, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", RUNNER, "ok" if graphviz else "no-graphviz",
                           *map(str, argv)], capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=120)
    return done.returncode, done.stdout, done.stderr

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


def test_graph_of_the_first_loss_and_the_script_stops(tmp_path):
    script = _script(tmp_path, TRAIN)
    out = tmp_path / "g.dot"
    code, text, err = graph_command([script, "--flag", "--out", out])
    assert code == 0, err
    assert "stepped" not in text and "handler caught" not in text  # stopped at backward
    assert text.startswith("MeanBackward0 (loss)")
    assert "AccumulateGrad → model.0.weight.grad  [3, 4] float32" in text
    assert "SigmoidBackward0" in text
    assert out.read_text().startswith("digraph")


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_seed_program_to_svg(tmp_path):
    seed = tmp_path / "seed000_2_computation_graph.py"
    seed.write_text(SEED000_2, encoding="utf-8")
    code, text, err = graph_command([seed.name], cwd=tmp_path)
    assert code == 0, err
    assert "de/da" not in text  # backward never ran
    assert "PowBackward0 (e)" in text and "AccumulateGrad → a.grad" in text
    svg = (tmp_path / "seed000_2_computation_graph.graph.svg").read_text()
    assert "<svg" in svg and "PowBackward0" in svg


def test_without_graphviz_writes_the_dot_source_and_says_how_to_install(tmp_path):
    script = _script(tmp_path, TRAIN)
    code, text, err = graph_command(["--out", tmp_path / "g.png", script], graphviz=False)
    assert code == 1
    assert "MeanBackward0 (loss)" in text  # the text tree is still printed
    assert "apt install graphviz" in err
    assert (tmp_path / "g.dot").read_text().startswith("digraph")


def test_usage_and_scripts_without_backward(tmp_path, capsys):
    from tapegrad.show import _commands  # bad arguments stop before the torch alias

    assert _commands.graph_command([]) == 2
    assert _commands.graph_command(["--bogus", "x.py"]) == 2
    assert capsys.readouterr().err.startswith("usage: tapegrad graph")
    assert _commands.graph_command(["--max-depth", "two", "x.py"]) == 2
    assert capsys.readouterr().err.startswith("usage: tapegrad graph")
    assert _commands.graph_command([str(tmp_path / "missing.py")]) == 2
    assert capsys.readouterr().err == (f"tapegrad graph: can't open file "
                                       f"{str(tmp_path / 'missing.py')!r}: [Errno 2] No such "
                                       "file or directory\n")
    script = _script(tmp_path, "import torch\nprint(torch.ones(2).sum())\n")
    code, text, err = graph_command([script])
    assert code == 1 and "tensor(2.)" in text
    assert "without calling backward" in err


def test_graph_command_in_chinese(tmp_path):
    script = _script(tmp_path, TRAIN)
    out = tmp_path / "g.dot"
    code, text, err = graph_command(["--lang", "zh", "--out", out, script])
    assert code == 0, err
    assert text.startswith("MeanBackward0 (loss)")
    assert "保存：" in text and "saved" not in text
    assert f"已写入 {out}" in text
    code, _, err = graph_command(["--lang", "zh", "--bogus", script])
    assert code == 2 and err.startswith("用法：tapegrad graph")
    code, _, err = graph_command(["--lang", "zh", str(tmp_path / "missing.py")])
    assert code == 2 and "无法打开文件" in err and len(err.splitlines()) == 1
    code, _, err = graph_command(["--lang", "fr", script])
    assert code == 2 and "unknown language 'fr'" in err
