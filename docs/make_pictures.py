"""Make the pictures and text outputs of ``tapegrad.show`` that the README shows.

    PYTHONPATH=src python docs/make_pictures.py

Writes, under docs/img/: the graph of the seed chapter's ``e = (a*b + 1)**2`` as a text tree
and a picture, its backward trace as a table and as the picture with every edge labelled by
the gradient that crossed it, and the graph of a 4-layer transformer encoder with its layers
collapsed into one block; the tree and the table also in Chinese (``*_zh.txt``); and what
``tapegrad doctor tests/show/scripts/deep_sigmoid.py 5`` prints on a 10-layer sigmoid MLP, in
English and with ``--lang zh`` (``doctor_deep_sigmoid.txt``, ``doctor_deep_sigmoid_zh.txt``).
Needs Graphviz (``pip install tapegrad[viz]``, ``apt install graphviz``) and matplotlib.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import tapegrad as torch
from tapegrad import nn, show

OUT = Path(__file__).resolve().parent / "img"
ROOT = OUT.parent.parent
DEEP_SIGMOID = Path("tests") / "show" / "scripts" / "deep_sigmoid.py"


def seed000_2() -> None:
    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    c = a * b
    d = c + 1.0
    e = d ** 2
    view = show.graph(e)
    (OUT / "seed000_2_graph.txt").write_text(view.text(lang="en") + "\n", encoding="utf-8")
    (OUT / "seed000_2_graph_zh.txt").write_text(view.text(lang="zh") + "\n", encoding="utf-8")
    view.render(OUT / "seed000_2_graph.png")
    with show.trace() as t:
        e.backward()
    (OUT / "seed000_2_trace.txt").write_text(t.table(lang="en") + "\n", encoding="utf-8")
    (OUT / "seed000_2_trace_zh.txt").write_text(t.table(lang="zh") + "\n", encoding="utf-8")
    t.graph().render(OUT / "trace_graph.png")


def transformer() -> None:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)
    x = torch.randn(2, 5, 16, requires_grad=True)
    loss = model(x).pow(2).mean()
    view = show.graph(loss, model)
    (OUT / "transformer_graph.txt").write_text(view.text(lang="en") + "\n", encoding="utf-8")
    view.render(OUT / "transformer_graph.png")


def doctor() -> None:
    """``tapegrad doctor`` on the deep sigmoid network, as a user runs it (a fresh interpreter,
    the report page written to a scratch folder): its progress (stderr), then the script's
    output and the report (stdout)."""
    code = ("import sys; from tapegrad.show.doctor import doctor_command; "
            "sys.exit(doctor_command(sys.argv[1:]))")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    env.pop("TAPEGRAD_LANG", None)
    for lang, name in (("en", "doctor_deep_sigmoid.txt"), ("zh", "doctor_deep_sigmoid_zh.txt")):
        with tempfile.TemporaryDirectory() as scratch:
            script = ROOT / DEEP_SIGMOID
            done = subprocess.run(
                [sys.executable, "-c", code, "--lang", lang, str(script), "5"],
                capture_output=True, text=True, env=env, cwd=scratch, check=True)
        command = f"$ tapegrad doctor{' --lang zh' if lang == 'zh' else ''} {DEEP_SIGMOID} 5"
        text = command + "\n" + done.stderr.replace(str(script), str(DEEP_SIGMOID)) + done.stdout
        (OUT / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    seed000_2()
    transformer()
    doctor()
    for path in sorted(OUT.glob("seed000_2_*")) + [OUT / "trace_graph.png"] + sorted(
            OUT.glob("transformer_*")) + sorted(OUT.glob("doctor_*")):
        print(path.relative_to(ROOT))
