"""Make the pictures and text outputs of ``tapegrad.show`` that the README shows.

    PYTHONPATH=src python docs/make_pictures.py

Writes, under docs/img/: the graph of the seed chapter's ``e = (a*b + 1)**2`` as a text tree
and a picture, its backward trace as a table and as the picture with every edge labelled by
the gradient that crossed it, and the graph of a 4-layer transformer encoder with its layers
collapsed into one block. Needs Graphviz (``pip install tapegrad[viz]``, ``apt install
graphviz``).
"""

from __future__ import annotations

from pathlib import Path

import tapegrad as torch
from tapegrad import nn, show

OUT = Path(__file__).resolve().parent / "img"


def seed000_2() -> None:
    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    c = a * b
    d = c + 1.0
    e = d ** 2
    view = show.graph(e)
    (OUT / "seed000_2_graph.txt").write_text(view.text() + "\n", encoding="utf-8")
    view.render(OUT / "seed000_2_graph.png")
    with show.trace() as t:
        e.backward()
    (OUT / "seed000_2_trace.txt").write_text(t.table() + "\n", encoding="utf-8")
    t.graph().render(OUT / "trace_graph.png")


def transformer() -> None:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                       batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=4, enable_nested_tensor=False)
    x = torch.randn(2, 5, 16, requires_grad=True)
    loss = model(x).pow(2).mean()
    view = show.graph(loss, model)
    (OUT / "transformer_graph.txt").write_text(view.text() + "\n", encoding="utf-8")
    view.render(OUT / "transformer_graph.png")


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    seed000_2()
    transformer()
    for path in sorted(OUT.glob("seed000_2_*")) + [OUT / "trace_graph.png"] + sorted(
            OUT.glob("transformer_*")):
        print(path.relative_to(OUT.parent.parent))
