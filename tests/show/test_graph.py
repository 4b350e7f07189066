"""show.graph: the text tree and the DOT source hold every node and edge of real graphs
(checked against next_functions); repeated blocks collapse; pictures render with Graphviz, and
without it the message says how to install it."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _graphs  # noqa: E402

import tapegrad as torch  # noqa: E402
from tapegrad import show  # noqa: E402

GRAPHS = {"seed000_2": _graphs.seed000_2, "mlp": _graphs.mlp, "transformer": _graphs.transformer}

def _graphviz_available() -> bool:
    try:
        import graphviz  # noqa: F401
    except ImportError:
        return False
    return shutil.which("dot") is not None


needs_graphviz = pytest.mark.skipif(
    not _graphviz_available(),
    reason="the graphviz Python package or Graphviz's dot program is absent")


def _full_lines(text: str) -> list[str]:
    """The lines that describe a node (not references, not missing edges)."""
    out = []
    for line in text.splitlines():
        body = re.sub(r"^[│├└─ ]*", "", line)
        body = re.sub(r"^\[\d+\] ", "", body)
        body = re.sub(r"^#\d+ ", "", body)
        if (not body or body.startswith(("↓", "(no gradient", "┌", "…", "(end"))
                or "(shown above)" in body):
            continue
        out.append(body)
    return out


@pytest.mark.parametrize("name", list(GRAPHS))
def test_text_tree_has_every_node_and_edge(name):
    out, _ = GRAPHS[name]()
    nodes, edges = _graphs.walk(out.grad_fn)
    view = show.graph(out, collapse=False)
    text = view.text()
    full = _full_lines(text)
    assert len(full) == len(nodes)  # each node described exactly once
    names = sorted("AccumulateGrad" if n.name().endswith("AccumulateGrad") else n.name()
                   for n in nodes)
    assert sorted(line.split()[0] for line in full) == names
    # one branch line per edge, None edges included
    branches = [ln for ln in text.splitlines() if re.search(r"[├└]─ ", ln)]
    assert len(branches) == len(edges)
    assert {view.by_node[n].node for n in nodes} == set(nodes)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_dot_has_every_node_and_edge(name):
    out, _ = GRAPHS[name]()
    nodes, edges = _graphs.walk(out.grad_fn)
    view = show.graph(out, collapse=False)
    dot = view.dot()
    for n in nodes:
        g = view.by_node[n]
        label = "AccumulateGrad" if n.name().endswith("AccumulateGrad") else n.name()
        assert re.search(rf'^  {g.id} \[id="{g.id}", label="[^"]*{label}', dot, re.M), label
    drawn = re.findall(r"^  (n\d+) -> (n\d+) \[id=\"(n\d+)-(\d+)\"", dot, re.M)
    expected = {(view.by_node[n].id, view.by_node[c].id, view.by_node[n].id, str(i))
                for n, i, c, _ in edges if c is not None}
    assert set(drawn) == expected
    assert len(drawn) == len(expected)


def test_seed_tree_names_shapes_and_saved_versions():
    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    c = a * b
    d = c + 1.0
    e = d ** 2
    text = show.graph(e).text()
    lines = text.splitlines()
    assert lines[0].startswith("PowBackward0 (e)  [1] float32  saved: input 0 [1] float32 v0")
    assert "exponent=2" in lines[0]
    assert "AccumulateGrad → a.grad  [1] float32" in text
    assert "AccumulateGrad → b.grad  [1] float32" in text
    assert "MulBackward0 (c)" in text and "AddBackward0 (d)" in text
    # a saved tensor changed in place is flagged with its version now
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * y
    y.add_(1)
    assert "v0 (now v1: changed in place, backward will fail)" in show.graph(z).text()


def test_params_name_leaves_by_parameter_name():
    loss, model = _graphs.mlp()
    view = show.graph(loss, model)
    labels = {g.label for g in view.nodes if g.leaf}
    assert labels == {name for name, _ in model.named_parameters()}
    view = show.graph(loss, {"W": model[0].weight})
    assert "AccumulateGrad → W.grad" in view.text()


def test_collapse_transformer_four_layers():
    loss, model = _graphs.transformer(4)
    full = show.graph(loss, model, collapse=False)
    view = show.graph(loss, model)
    assert len(view.blocks) == 1
    block = view.blocks[0]
    assert block["count"] == 4
    hidden = [g for g in view.nodes if view.shown[g] is not g]
    inner = [g for g in view.nodes if not g.leaf]
    assert len(hidden) == 3 * block["size"] + 3 * sum(1 for g in block["nodes"] if g.leaf)
    for g in hidden:  # each hidden node stands for its counterpart in the copy shown
        assert view.shown[g].name == g.name and view.shown[g].out == g.out
    assert len(inner) == len(full.nodes) - sum(1 for g in full.nodes if g.leaf)
    text = view.text()
    assert "×4 repeated block" in text
    assert "layers.{0..3}.linear1.weight" in text
    assert len(_full_lines(text)) == len(view.nodes) - len(hidden)
    dot = view.dot()
    assert 'label="×4"' in dot
    for g in hidden:
        assert f"  {g.id} [" not in dot
    # the layers below the block are reached: the input x is drawn, below the block
    assert "AccumulateGrad → (leaf).grad  [2, 3, 8] float32" in text


def test_collapse_long_chain_and_not_two_sigmoids():
    x = torch.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(50):
        y = y * 1.01
    view = show.graph(y)
    assert [b["count"] for b in view.blocks] == [50]
    assert len(view.text().splitlines()) < 10
    # seed003_3's two sigmoids stay two boxes: collapsing would hide what the chapter shows
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Sigmoid(), torch.nn.Sigmoid(),
                                torch.nn.Linear(3, 2))
    view = show.graph(model(torch.randn(2, 4)).sum(), model)
    assert view.blocks == []
    assert sum(ln.startswith("SigmoidBackward0") for ln in _full_lines(view.text())) == 2


def test_max_depth_caps_with_an_ellipsis():
    loss, model = _graphs.mlp()
    view = show.graph(loss, model, max_depth=2)
    assert max(g.depth for g in view.nodes) == 2
    assert "… (max_depth reached)" in view.text()
    assert "[label=\"…\"" in view.dot()


def test_graph_of_a_leaf_and_of_nothing():
    w = torch.ones(2, requires_grad=True)
    assert "AccumulateGrad → w.grad" in show.graph(w).text()
    with pytest.raises(RuntimeError, match="no graph to show"):
        show.graph(torch.ones(2))


@needs_graphviz
def test_render_svg_png_pdf_dot(tmp_path):
    e, _ = _graphs.seed000_2()
    view = show.graph(e)
    svg = view.svg()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and 'id="n0"' in svg
    assert view._repr_svg_() == svg
    png = view.render(tmp_path / "g.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 1000
    assert view.render(tmp_path / "g.pdf").read_bytes()[:4] == b"%PDF"
    assert (view.render(tmp_path / "g.svg").read_text()).count("<svg") == 1
    assert view.render(tmp_path / "g.dot").read_text() == view.dot()
    with pytest.raises(ValueError, match="unknown picture format"):
        view.render(tmp_path / "g.gif")


def test_without_graphviz_the_message_says_how_to_install(monkeypatch, tmp_path):
    e, _ = _graphs.seed000_2()
    view = show.graph(e)
    monkeypatch.setitem(sys.modules, "graphviz", None)  # the Python package is absent
    with pytest.raises(show.GraphvizMissing) as info:
        view.svg()
    msg = str(info.value)
    assert "pip install tapegrad[viz]" in msg and "apt install graphviz" in msg
    assert "brew install graphviz" in msg
    assert view._repr_svg_() is None
    assert "PowBackward0" in view.text() and view.dot().startswith("digraph")
    view.render(tmp_path / "g.dot")  # DOT needs no Graphviz


def test_without_dot_program_the_message_says_how_to_install(monkeypatch):
    graphviz = pytest.importorskip("graphviz", reason="the graphviz Python package is absent")
    e, _ = _graphs.seed000_2()

    def no_dot(*args, **kwargs):
        raise graphviz.ExecutableNotFound(("dot", "-Tsvg"))

    monkeypatch.setattr(graphviz.Source, "pipe", no_dot)
    with pytest.raises(show.GraphvizMissing, match=r"apt install graphviz"):
        show.graph(e).render("never-written.png")
    assert not Path("never-written.png").exists()


def test_text_tree_in_chinese(monkeypatch):
    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    e = (a * b + 1.0) ** 2
    view = show.graph(e)
    zh = view.text(lang="zh")
    first = zh.splitlines()[0]
    assert first.startswith("PowBackward0 (e)  [1] float32  保存：输入 0 [1] float32 v0")
    assert "AccumulateGrad → a.grad  [1] float32" in zh  # node names and .grad stay torch's
    assert "（无梯度：常量或 requires_grad=False）" in zh
    assert "saved" not in zh and "no gradient" not in zh
    # the same tree, line for line, as the English one
    assert len(zh.splitlines()) == len(view.text(lang="en").splitlines())
    monkeypatch.setenv("TAPEGRAD_LANG", "zh")
    assert view.text() == zh and str(view) == zh
    assert view.text(lang="en").startswith("PowBackward0 (e)  [1] float32  saved: input 0")
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    z = y * y
    y.add_(1)
    assert "v0（现为 v1：已被原地修改，反向传播会失败）" in show.graph(z).text()
    capped = show.graph(_graphs.mlp()[0], max_depth=2).text(lang="zh")
    assert "…（已达 max_depth）" in capped and "（max_depth=2：" in capped
