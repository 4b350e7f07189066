"""The backward graph of a tensor, as a text tree and as a Graphviz picture.

``show.graph(loss)`` walks ``loss.grad_fn`` and its ``next_functions`` (the "vouchers" the
forward pass wrote, chained back to the leaves) and returns a :class:`GraphView`::

    print(show.graph(e))                 # the indented text tree
    show.graph(e).render("e.svg")        # the picture (.svg, .png, .pdf, .dot)
    show.graph(e)                        # in Jupyter: the picture, inline

Every node is shown with its name as torch prints it (``PowBackward0``), the shape and dtype
of the tensor it produced, and what it saved for backward (with the version each saved tensor
had, and its version now: a saved tensor changed in place since makes backward fail). A leaf's
``AccumulateGrad`` is where its gradient lands (``a.grad``); leaves are named by parameter
name when a module or a dict of names is given, otherwise by the caller's variable names.

Large graphs stay readable. ``max_depth`` stops the walk with an ellipsis node, and
``collapse`` draws repeated blocks once: the layers of a transformer, or the links of a long
chain, have the same structure, and are shown as one box marked ``×N``. How the blocks are
found (see ``_repeats``): the graph is cut at its *bottlenecks* (nodes every path from the
output to what lies below them goes through: a layer's output is one), the pieces between
consecutive bottlenecks get a structural signature, and runs of identical consecutive pieces
(of any period: a transformer layer is several pieces) become one block.

The picture needs the ``graphviz`` Python package and Graphviz's ``dot`` program
(``pip install tapegrad[viz]``; ``apt install graphviz`` or ``brew install graphviz``); the
text tree and the DOT source need neither.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .._dtype import ALL
from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad, Node, grad_accumulator
from .i18n import TEXTS, resolve_lang
from .i18n import t as _t

INSTALL_HINT = (
    "Drawing the graph needs Graphviz: the `graphviz` Python package "
    "(pip install tapegrad[viz]) and Graphviz's `dot` program (apt install graphviz on "
    "Debian/Ubuntu, brew install graphviz on macOS). The text tree (print(view), view.text()) "
    "and the DOT source (view.dot()) work without it."
)


class GraphvizMissing(RuntimeError):
    """The picture was asked for, but Graphviz (the Python package or ``dot``) is absent."""


# ---------------------------------------------------------------------------------------------
# Names: what the leaves (and the tensors a caller holds) are called
# ---------------------------------------------------------------------------------------------


def param_names(params: Any) -> dict[int, str]:
    """``id(tensor) -> name`` from a Module (its named_parameters), a dict name -> tensor, or
    an iterable of ``(name, tensor)`` pairs."""
    if params is None:
        return {}
    if hasattr(params, "named_parameters"):
        pairs: Iterable = params.named_parameters()
    elif isinstance(params, Mapping):
        pairs = params.items()
    else:
        pairs = params
    return {id(t): str(name) for name, t in pairs}


def frame_names(frame: Any) -> tuple[dict[int, str], dict[int, str]]:
    """Names from a caller's local variables: ``(leaf names by id(tensor), node names by
    id(grad_fn))``. A local module names its parameters ``var.param_name``."""
    leaves: dict[int, str] = {}
    nodes: dict[int, str] = {}
    if frame is None:
        return leaves, nodes
    for var, value in list(frame.f_locals.items()):
        if var.startswith("_"):
            continue
        if isinstance(value, Tensor):
            if value.grad_fn is not None:
                nodes.setdefault(id(value.grad_fn), var)
            elif value.requires_grad:
                leaves.setdefault(id(value), var)
        elif hasattr(value, "named_parameters") and callable(value.named_parameters):
            try:
                for pname, p in value.named_parameters():
                    leaves.setdefault(id(p), f"{var}.{pname}")
            except Exception:  # a look-alike that is no Module: not ours to name
                continue
    return leaves, nodes


def _dtype_name(num: int) -> str:
    for d in ALL:
        if d.np.num == num:
            return d.name
    return "?"


def _fmt_shape(shape: tuple) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


# ---------------------------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------------------------


class GNode:
    """One node of the view: the autograd node and what is shown about it."""

    __slots__ = ("node", "id", "name", "label", "out", "saved", "leaf", "edges", "parents",
                 "depth", "cut")

    def __init__(self, node: Node, index: int) -> None:
        self.node = node
        self.id = f"n{index}"
        self.name = node.name()
        if isinstance(node, AccumulateGrad):
            self.name = "AccumulateGrad"
        self.label = ""  # the tensor's or parameter's name, when known
        self.out: dict[int, tuple] = {}  # output_nr -> (shape, dtype name)
        self.saved: list[str] = []
        self.leaf = isinstance(node, AccumulateGrad)
        self.edges: list[tuple[int, GNode | None, int]] = []  # (input i, child, output_nr)
        self.parents: list[GNode] = []
        self.depth = 0
        self.cut = False  # below max_depth: children not shown


def _saved_description(node: Node) -> list[str]:
    """What ``node`` keeps for backward, one string per saved value."""
    out: list[str] = []
    saved = getattr(node, "_saved", ())
    if saved is None:
        return ["(freed by backward; retain_graph=True keeps it)"]
    versions = getattr(node, "_versions", ())
    if not isinstance(saved, (tuple, list)):
        return out
    which = getattr(getattr(node, "op", None), "save", None) or range(len(saved))
    for k, (t, pos) in enumerate(zip(saved, which, strict=False)):
        if isinstance(t, tuple) and len(t) == 4 and isinstance(t[0], Tensor):  # custom Function
            v = t[1]
            t = t[0]
        else:
            v = versions[k] if k < len(versions) else None
        if isinstance(t, Tensor):
            now = t._version_counter.value
            text = f"input {pos} {_fmt_shape(t.shape)} {t.dtype.name} v{v}"
            if v is not None and now != v:
                text += f" (now v{now}: changed in place, backward will fail)"
            out.append(text)
        elif t is not None and not hasattr(t, "unpack"):
            out.append(f"input {pos}={t!r}")
        elif t is not None:
            out.append("(packed by saved_tensors_hooks)")
    o = getattr(node, "_out", None)
    if o is not None and isinstance(o, tuple) and len(o) >= 3 and hasattr(o[0], "shape"):
        counter, v = o[1], o[2]
        text = f"result {_fmt_shape(o[0].shape)} v{v}"
        if counter.value != v:
            text += f" (now v{counter.value}: changed in place, backward will fail)"
        out.append(text)
    params = getattr(node, "params", None)
    if isinstance(params, dict):
        for k, value in params.items():
            if isinstance(value, (int, float, bool, str, tuple)) and value is not None:
                out.append(f"{k}={value!r}")
    return out


_IN_PLACE = re.compile(r" \(now v(\d+): changed in place, backward will fail\)")


def _saved_words(text: str, lang: str) -> str:
    """One saved-tensor description (written in English when the graph is read) in ``lang``."""
    if lang == "en":
        return text
    for key in ("graph.freed", "graph.packed"):
        if text == TEXTS[key][0]:
            return _t(key, lang)
    text = _IN_PLACE.sub(lambda m: _t("graph.in_place", lang, now=m.group(1)), text)
    m = re.match(r"input (\d+)(.*)", text, re.S)
    if m:
        return _t("graph.input", lang, pos=m.group(1)) + m.group(2)
    if text.startswith("result "):
        return _t("graph.result", lang) + text[6:]
    return text


def _roots(tensors: Any) -> list[tuple[Tensor, Node]]:
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    out = []
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"show.graph expects tensors, got {type(t).__name__}")
        if t.grad_fn is not None:
            out.append((t, t.grad_fn))
        elif t.requires_grad:
            out.append((t, grad_accumulator(t)))
        else:
            raise RuntimeError(
                "the tensor has no grad_fn and does not require grad: there is no graph to show "
                "(was it computed under torch.no_grad(), or from tensors without "
                "requires_grad=True?)")
    return out


class GraphView:
    """The graph of one or more tensors: ``str()`` / ``text()``, ``dot()``, ``svg()``,
    ``render(path)``; shown inline in Jupyter.

    ``edge_labels`` maps ``(node, input index)`` to a label drawn on that edge (the backward
    trace puts the gradient that crossed it there)."""

    def __init__(self, tensors: Any, params: Any = None, *, max_depth: int | None = None,
                 collapse: bool = True, names: tuple[dict, dict] | None = None,
                 edge_labels: Mapping[tuple[Node, int], str] | None = None,
                 title: str | None = None) -> None:
        roots = _roots(tensors)
        leaf_names, node_names = names if names is not None else ({}, {})
        leaf_names = {**leaf_names, **param_names(params)}
        self.max_depth = max_depth
        self.title = title
        self.edge_labels = dict(edge_labels or {})
        self.nodes: list[GNode] = []
        self.by_node: dict[Node, GNode] = {}
        self.roots: list[GNode] = []
        self.hidden = 0  # nodes below max_depth
        for t, node in roots:
            g = self._add(node)
            shape = (tuple(t.shape), t.dtype.name.replace("torch.", ""))
            g.out.setdefault(t._output_nr if t.grad_fn is not None else 0, shape)
            if id(t) in leaf_names:
                g.label = leaf_names[id(t)]
            if g not in self.roots:
                self.roots.append(g)
        self._walk(max_depth)
        for g in self.nodes:
            if g.leaf:
                var = g.node.variable  # type: ignore[attr-defined]
                g.label = g.label or leaf_names.get(id(var), "")
                g.out.setdefault(0, (tuple(var.shape), var.dtype.name.replace("torch.", "")))
            elif not g.label:
                g.label = node_names.get(id(g.node), "")
        # collapse: representative (shown) node for every node, and the repeated blocks
        self.blocks: list[dict] = []
        self.shown: dict[GNode, GNode] = {g: g for g in self.nodes}
        self.copy_of: dict[GNode, tuple[int, int]] = {}  # hidden node -> (block, copy)
        self._exit: dict[tuple[GNode, int], GNode] = {}
        self._block_at: dict[int, int] = {}  # first piece of a block -> block
        self.pieces: list[tuple[GNode | None, set]] = [
            (None, {g for g in self.nodes if not g.leaf})]
        _analyse(self, collapse)
        self._heads = {h for h, _ in self.pieces if h is not None}

    # -- building ---------------------------------------------------------------------------

    def _add(self, node: Node) -> GNode:
        g = self.by_node.get(node)
        if g is None:
            g = GNode(node, len(self.nodes))
            g.saved = _saved_description(node)
            self.by_node[node] = g
            self.nodes.append(g)
        return g

    def _walk(self, max_depth: int | None) -> None:
        """Breadth-first from the roots, so each node's depth is its shortest distance."""
        queue = list(self.roots)
        head = 0
        seen = set(queue)
        while head < len(queue):
            g = queue[head]
            head += 1
            edges = g.node.next_functions
            if max_depth is not None and g.depth >= max_depth and any(
                    c is not None for c, _ in edges):
                g.cut = True
                self.hidden += 1
                continue
            meta = getattr(g.node, "input_meta", None)
            for i, (child, nr) in enumerate(edges):
                if child is None:
                    g.edges.append((i, None, 0))
                    continue
                c = self._add(child)
                if meta is not None and i < len(meta) and meta[i] is not None:
                    c.out.setdefault(nr, (tuple(meta[i][0]), _dtype_name(meta[i][1])))
                g.edges.append((i, c, nr))
                c.parents.append(g)
                if c not in seen:
                    seen.add(c)
                    c.depth = g.depth + 1
                    queue.append(c)

    # -- text -------------------------------------------------------------------------------

    def _describe(self, g: GNode, lang: str = "en") -> str:
        text = g.name
        if g.leaf:
            text += f" → {g.label}.grad" if g.label else f" → {_t('graph.leaf', lang)}.grad"
        elif g.label:
            text += f" ({g.label})"
        outs = "  ".join(f"{_fmt_shape(s)} {d}" for _, (s, d) in sorted(g.out.items()))
        if outs:
            text += "  " + outs
        if g.saved and not g.leaf:
            label = _t("graph.saved", lang)  # no space after a full-width colon
            text += ("  " + label + ("" if label.endswith("：") else " ")
                     + ", ".join(_saved_words(x, lang) for x in g.saved))
        return text

    def text(self, lang: str | None = None) -> str:
        """The indented text tree, read top to bottom as backward runs: the graph is cut at its
        bottlenecks, each piece is printed as a tree, and ``↓`` leads to the next piece; a node
        reached again is referred to by its number (``#3``); a repeated block is printed once
        with its count. ``lang``: ``"en"`` or ``"zh"`` for its words (node names stay torch's);
        default ``TAPEGRAD_LANG``, else the locale (``i18n.resolve_lang``)."""
        lang = resolve_lang(lang)
        lines: list[str] = []
        if self.title:
            lines.append(self.title)
        printed: set[GNode] = set()
        shared = {g for g in self.nodes if len(g.parents) > 1}
        k = 0
        pieces = self.pieces
        while k < len(pieces):
            block = self._block_at.get(k)
            if block is not None:
                b = self.blocks[block]
                lines.append(_t("graph.block_start", lang, count=b["count"], size=b["size"]))
                for j in range(k, k + b["period"]):
                    self._text_piece(j, lines, printed, shared, "│ ", lang)
                lines.append(_t("graph.block_end", lang))
                k += b["period"] * b["count"]
                continue
            self._text_piece(k, lines, printed, shared, "", lang)
            k += 1
        if self.hidden:
            lines.append(_t("graph.cut", lang, depth=self.max_depth))
        return "\n".join(lines)

    def _text_piece(self, k: int, lines: list[str], printed: set, shared: set,
                    margin: str, lang: str) -> None:
        head, members = self.pieces[k]
        heads = [head] if head is not None else list(self.roots)
        for h in heads:
            self._text(h, margin, margin, lines, printed, shared, members, None, lang)

    def _edges(self, g: GNode) -> list[tuple[int, GNode | None, int]]:
        """``g``'s edges as shown: out of a collapsed block's shown copy, an edge into the next
        copy is drawn to where the last copy's edge goes."""
        return [(i, self._exit.get((g, i), c), nr) for i, c, nr in g.edges]

    def _text(self, g: GNode, first: str, rest: str, lines: list[str], printed: set,
              shared: set, members: set, edge: str | None, lang: str = "en") -> None:
        tag = f"#{g.id[1:]} " if g in shared else ""
        lead = f"{first}{edge + ' ' if edge else ''}"
        if g in printed:
            lines.append(f"{lead}{tag}{g.name} {_t('graph.shown_above', lang)}")
            return
        printed.add(g)
        lines.append(f"{lead}{tag}{self._describe(g, lang)}")
        if g.cut:
            lines.append(f"{rest}└─ {_t('graph.depth_reached', lang)}")
            return
        kids = self._edges(g)
        many = len(kids) > 1
        for k, (i, c, _nr) in enumerate(kids):
            last = k == len(kids) - 1
            branch, more = ("└─ ", "   ") if last else ("├─ ", "│  ")
            tagtext = f"[{i}]" if many else None
            lab = self.edge_labels.get((g.node, i))
            if lab:
                tagtext = (tagtext + " " if tagtext else "") + f"grad {lab}:"
            tagtext = tagtext + " " if tagtext else ""
            if c is None:
                lines.append(f"{rest}{branch}{tagtext}{_t('graph.no_edge', lang)}")
            elif c in members or (c.leaf and c not in self._heads):
                self._text(c, rest + branch, rest + more, lines, printed, shared, members,
                           tagtext.rstrip() or None, lang)
            else:  # the next piece, printed below
                ctag = f" #{c.id[1:]}" if c in shared else ""
                lines.append(f"{rest}{branch}{tagtext}↓ {c.name}{ctag}")

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return self.text()

    # -- DOT / SVG --------------------------------------------------------------------------

    def dot(self) -> str:
        """The graph as Graphviz DOT source: arrows point the way gradients flow (from the
        output towards the leaves); node ids are ``n<k>``, edge ids ``n<k>-<input>``."""
        hidden = {g for g in self.nodes if self.shown[g] is not g}
        out = ["digraph tapegrad {",
               '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, nodesep=0.25, '
               'ranksep=0.3];',
               '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", '
               'fontname="Helvetica", fontsize=10, height=0.2];',
               '  edge [fontname="Helvetica", fontsize=9, color="#555555"];']
        if self.title:
            out.append(f"  label={_q(self.title)}; labelloc=t;")
        in_block: dict[GNode, int] = {}
        for k, b in enumerate(self.blocks):
            for g in b["nodes"]:
                in_block[g] = k
        for k, b in enumerate(self.blocks):
            out.append(f"  subgraph cluster_rep{k} {{")
            out.append(f'    id="rep{k}"; style="dashed,rounded"; color="#7a52c7"; '
                       f'fontcolor="#7a52c7"; label={_q("×" + str(b["count"]))};')
            for g in b["nodes"]:
                out.append("    " + self._dot_node(g))
            out.append("  }")
        for g in self.nodes:
            if g in hidden or g in in_block:
                continue
            out.append("  " + self._dot_node(g))
        for r in self.roots:
            out.append(f'  out_{r.id} [label={_q(self._root_label(r))}, shape=plaintext, '
                       'style="", fillcolor=none];')
            out.append(f"  out_{r.id} -> {r.id} [style=dashed, arrowhead=none];")
        for g in self.nodes:
            if g in hidden:
                continue
            if g.cut:
                out.append(f'  {g.id}_more [label="…", shape=plaintext, style=""];')
                out.append(f"  {g.id} -> {g.id}_more [style=dotted];")
                continue
            for i, c, _nr in self._edges(g):
                if c is None:
                    continue
                attrs = [f'id="{g.id}-{i}"']
                lab = self.edge_labels.get((g.node, i))
                if lab:
                    attrs.append(f"label={_q(lab)}")
                elif len(g.edges) > 1:
                    attrs.append(f"taillabel={_q(str(i))}")
                out.append(f"  {g.id} -> {self.shown[c].id} [{', '.join(attrs)}];")
        out.append("}")
        return "\n".join(out) + "\n"

    def _root_label(self, r: GNode) -> str:
        return "output" if not r.label else r.label

    def _dot_node(self, g: GNode) -> str:
        lines = [g.name]
        if g.leaf:
            lines = [g.label or "(leaf)", "AccumulateGrad → .grad"]
        elif g.label:
            lines.append(f"({g.label})")
        for _, (s, d) in sorted(g.out.items()):
            lines.append(f"{_fmt_shape(s)} {d}")
        if g.saved and not g.leaf:
            lines.append("saved: " + ", ".join(g.saved[:3]) + (" …" if len(g.saved) > 3 else ""))
        color = "#cfe8ff" if g.leaf else ("#d9f2d0" if g in self.roots else "#ffffff")
        return (f"{g.id} [id={_q(g.id)}, label={_q(chr(10).join(lines))}, "
                f"fillcolor={_q(color)}, tooltip={_q(g.name)}];")

    def svg(self) -> str:
        """The picture as SVG text (needs Graphviz; see ``INSTALL_HINT``)."""
        return _pipe(self.dot(), "svg").decode("utf-8")

    def render(self, path: str | Path) -> Path:
        """Write the picture; the format follows the suffix: .svg, .png, .pdf or .dot."""
        path = Path(path)
        fmt = path.suffix.lower().lstrip(".")
        if fmt in ("dot", "gv"):
            path.write_text(self.dot(), encoding="utf-8")
        elif fmt in ("svg", "png", "pdf"):
            path.write_bytes(_pipe(self.dot(), fmt))
        else:
            raise ValueError(f"render: unknown picture format {path.suffix!r} "
                             "(use .svg, .png, .pdf or .dot)")
        return path

    def _repr_svg_(self) -> str | None:
        try:
            return self.svg()
        except GraphvizMissing:
            return None  # Jupyter falls back to the text tree

    def node_ids(self) -> dict[Node, str]:
        """The id of the shown element for every autograd node (a node inside a collapsed
        copy maps to its counterpart in the copy that is shown)."""
        return {g.node: self.shown[g].id for g in self.nodes}


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _pipe(source: str, fmt: str) -> bytes:
    try:
        import graphviz  # graphviz: optional (pip install graphviz), loaded on first use
    except ImportError:
        raise GraphvizMissing(INSTALL_HINT) from None
    try:
        return graphviz.Source(source).pipe(format=fmt)
    except graphviz.ExecutableNotFound:
        raise GraphvizMissing(INSTALL_HINT) from None


# ---------------------------------------------------------------------------------------------
# Repeated blocks
# ---------------------------------------------------------------------------------------------


def _analyse(view: GraphView, collapse: bool) -> None:
    """Cut the graph at its bottlenecks into pieces; with ``collapse``, find repeated blocks.

    1. Inner nodes (not AccumulateGrad) in topological order, from a virtual top above the
       roots; immediate dominators in one pass (in a DAG, a node's idom is the common
       dominator of its parents).
    2. A node is a bottleneck when everything reachable from it is dominated by it (nothing
       from above reaches below it except through it). The bottlenecks on the longest path
       from the top are totally ordered: they cut the graph into pieces, each node going to
       the piece of its nearest bottleneck dominator.
    3. A piece's signature: its nodes in a canonical walk, with names, shapes and edges (an
       edge out of the piece by the shape it carries).
    4. Runs of equal consecutive pieces (any period) are blocks; the first copy is shown, and
       its edges into the second copy are drawn to where the last copy's edges go.
    """
    # a leaf reached from several places (the input of a network) takes part, a parameter
    # (one AccumulateGrad edge) hangs off its piece
    inner = [g for g in view.nodes if not g.leaf or len(g.parents) > 1]
    n = len(inner)
    if n > 20_000:
        return
    index = {g: k + 1 for k, g in enumerate(inner)}  # 0: the virtual top
    kids: list[list[int]] = [[] for _ in range(n + 1)]
    parents: list[list[int]] = [[] for _ in range(n + 1)]
    for root in view.roots:
        if root in index:
            kids[0].append(index[root])
            parents[index[root]].append(0)
    for g in inner:
        for _, child, _ in g.edges:
            if child is not None and child in index:
                kids[index[g]].append(index[child])
                parents[index[child]].append(index[g])
    indeg = [len(p) for p in parents]
    order = [0]
    head = 0
    while head < len(order):
        v = order[head]
        head += 1
        for c in kids[v]:
            indeg[c] -= 1
            if indeg[c] == 0:
                order.append(c)
    if len(order) != n + 1:
        return
    pos = [0] * (n + 1)
    for k, v in enumerate(order):
        pos[v] = k
    idom = [0] * (n + 1)
    ddepth = [0] * (n + 1)
    for v in order[1:]:
        d = -1
        for p in parents[v]:
            if d < 0:
                d = p
                continue
            a, b = d, p
            while a != b:
                if ddepth[a] > ddepth[b] or (ddepth[a] == ddepth[b] and pos[a] > pos[b]):
                    a = idom[a]
                else:
                    b = idom[b]
            d = a
        idom[v] = d
        ddepth[v] = ddepth[d] + 1
    sub = [1] * (n + 1)
    for v in reversed(order[1:]):
        sub[idom[v]] += sub[v]
    desc = [0] * (n + 1)
    for v in reversed(order):
        m = 0
        for c in kids[v]:
            m |= desc[c] | (1 << c)
        desc[v] = m
    longest = [0] * (n + 1)
    nxt = [-1] * (n + 1)
    for v in reversed(order):
        for c in kids[v]:
            if longest[c] + 1 > longest[v]:
                longest[v], nxt[v] = longest[c] + 1, c
    spine = []
    v = 0
    while v >= 0:
        if desc[v].bit_count() == sub[v] - 1:
            spine.append(v)
        v = nxt[v]
    spine_set = set(spine)
    members: dict[int, list[int]] = {s: [] for s in spine}
    for v in order:
        u = v
        while u not in spine_set:
            u = idom[u]
        members[u].append(v)
    nodes_of: list[GNode] = [view.roots[0]] + inner  # [0] stands for the virtual top
    view.pieces = []
    for s in spine:
        mem = {nodes_of[v] for v in members[s] if v != 0}
        view.pieces.append((nodes_of[s] if s != 0 else None, mem))
    if len(view.pieces) > 1 and view.pieces[0][0] is None and not view.pieces[0][1]:
        view.pieces.pop(0)  # the virtual top alone: the single root is the first piece
        spine.pop(0)
    if not collapse:
        return
    def signature(s: int) -> tuple:
        if s == 0:
            return ("top",)
        local = {v: k for k, v in enumerate(members[s])}
        sig = []
        for v in members[s]:
            g = nodes_of[v]
            edges: list[tuple] = []
            for _, child, nr in g.edges:
                if child is None:
                    edges.append(("none",))
                elif index.get(child) in local:
                    edges.append(("in", local[index[child]], nr))
                else:  # out of the piece: a parameter, the next piece, or the input below
                    edges.append(("out", child.out.get(nr)))
            sig.append((g.name, tuple(sorted(g.out.items())), tuple(edges)))
        return tuple(sig)

    sigs = [signature(s) for s in spine]
    m = len(spine)
    k = 0
    while k < m:
        best = (0, 0)
        for p in range(1, min(200, (m - k) // 2) + 1):
            r = 1
            while k + (r + 1) * p <= m and sigs[k + r * p:k + (r + 1) * p] == sigs[k:k + p]:
                r += 1
            hidden = sum(len(members[spine[k + j]]) for j in range(p)) * (r - 1)
            if r >= 2 and hidden >= 4 and p * r > best[0] * best[1]:
                best = (p, r)
        p, r = best
        if not p or sigs[k] == ("top",):
            k += 1
            continue
        _collapse(view, [[nodes_of[v] for j in range(p) for v in members[spine[k + n * p + j]]]
                         for n in range(r)], k, p)
        k += p * r


def _collapse(view: GraphView, copies: list[list[GNode]], first_piece: int, period: int) -> None:
    """Keep ``copies[0]`` of a repeated block; map the other copies' nodes onto it."""
    block = len(view.blocks)
    r = len(copies)
    leaf_groups: list[list[GNode]] = []
    l0s: list[GNode] = []
    for c, copy in enumerate(copies):
        leaves = [lc for g in copy for _, lc, _ in g.edges
                  if lc is not None and lc.leaf and len(lc.parents) == 1]
        leaf_groups.append(leaves)
        if not c:
            l0s = leaves
        if c:
            for g, g0 in zip(copy, copies[0], strict=True):
                view.shown[g] = g0
                view.copy_of[g] = (block, c)
            if len(leaves) == len(leaf_groups[0]):
                for lc, l0 in zip(leaves, leaf_groups[0], strict=True):
                    view.shown[lc] = l0
                    view.copy_of[lc] = (block, c)
    for j, l0 in enumerate(leaf_groups[0]):
        group = [leaf_groups[c][j] for c in range(r) if len(leaf_groups[c]) == len(l0s)]
        l0.label = _merge_names([lc.label for lc in group])
    in_first = set(copies[0])

    for g0, gl in zip(copies[0], copies[-1], strict=True):
        for (i, child, _), (_, cl, _) in zip(g0.edges, gl.edges, strict=True):
            if child is not None and not child.leaf and child not in in_first and cl is not None:
                view._exit[(g0, i)] = cl
    view._block_at[first_piece] = block
    view.blocks.append({"heads": [copy[0] for copy in copies], "count": r,
                        "size": len(copies[0]), "period": period,
                        "nodes": copies[0] + leaf_groups[0]})


def _merge_names(names: list[str]) -> str:
    """``layers.3.w``, ``layers.2.w`` ... -> ``layers.{3,2,1,0}.w``; else the first."""
    if not names or not all(names):
        return names[0] if names else ""
    parts = [re.split(r"(\d+)", s) for s in names]
    if any(len(p) != len(parts[0]) for p in parts):
        return names[0]
    diff = [i for i in range(len(parts[0])) if len({p[i] for p in parts}) > 1]
    if len(diff) != 1:
        return names[0]
    i = diff[0]
    nums = [p[i] for p in parts]
    merged = list(parts[0])
    ints = sorted(int(x) for x in nums) if all(x.isdigit() for x in nums) else None
    if ints is not None and ints == list(range(ints[0], ints[0] + len(ints))) and len(ints) > 2:
        merged[i] = "{" + f"{ints[0]}..{ints[-1]}" + "}"
    else:
        merged[i] = "{" + ",".join(nums) + "}"
    return "".join(merged)


def graph(tensors: Any, params: Any = None, *, max_depth: int | None = None,
          collapse: bool = True) -> GraphView:
    """The backward graph of ``tensors`` (a tensor or a list of them) as a :class:`GraphView`.

    ``params``: a Module (its named_parameters name the leaves) or a dict name -> tensor;
    without it, leaves and results are named after the caller's local variables.
    ``max_depth``: stop that many edges below the output, with an ellipsis node.
    ``collapse``: draw repeated blocks (a transformer's layers) once, with their count.

    Example:
        >>> import tapegrad as torch
        >>> a = torch.tensor([2.0], requires_grad=True)
        >>> b = torch.tensor([3.0], requires_grad=True)
        >>> e = (a * b + 1) ** 2
        >>> from tapegrad import show
        >>> print(show.graph(e))  # doctest: +SKIP
    """
    names = frame_names(sys._getframe(1))
    return GraphView(tensors, params, max_depth=max_depth, collapse=collapse, names=names)
