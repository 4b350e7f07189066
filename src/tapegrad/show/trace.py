"""The backward trace: one backward pass, node by node, with the gradients it moved.

    with show.trace() as t:
        loss.backward()
    print(t.table())        # which node ran, in which order, what it received and sent
    t.records()             # the same as a list of dicts (JSON-able)
    t.graph().render("g.svg")   # the graph with every edge labelled by its gradient
    t.render("g.svg")           # the same

While a trace is active, ``engine.run_backward`` hands the pass to :meth:`Trace.run_backward`,
which is the engine's own loop (autograd/engine.py: discover, ready queue, hooks, rule,
reduce and cast, buffers, AccumulateGrad) with a recorder at each step: the node that popped
from the ready queue, the gradients in its buffer, the hooks that fired, what its rule sent
along each edge (after the engine reduced it to the input's shape), what AccumulateGrad added
into which leaf, and the time the node took. It calls the engine's helpers, so the numbers are
the engine's numbers; without a trace the engine runs its loop untouched (one ``is None``
check per backward call).

Gradients are summarized when recorded (shape, dtype, norm, the values of small tensors); the
arrays themselves are copied only with ``keep_grads=True``. A traced pass computes the same
numbers as an untraced one (where the engine would hand a gradient buffer over to ``.grad``
without a copy, the traced pass may copy it).
"""

from __future__ import annotations

import heapq
import math
import sys
import time
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import engine as _engine
from ..autograd import graph as _graph
from ..autograd.grad_mode import _state
from ..autograd.graph import AccumulateGrad, Node
from .graph import GraphView, frame_names, param_names
from .i18n import resolve_lang
from .i18n import t as _t
from .steps import hook_words, note_words, steps_table


def _hook_name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


class Grad:
    """A gradient as recorded: shape, dtype, norm, and the values of a small tensor."""

    __slots__ = ("shape", "dtype", "norm", "values", "array")

    def __init__(self, g: Tensor, small: int, keep: bool) -> None:
        a = g._data
        self.shape = tuple(a.shape)
        self.dtype = str(g.dtype).replace("torch.", "")
        if a.dtype.kind in "fc":
            self.norm = float(np.sqrt(np.sum(np.abs(a.astype(np.float64)) ** 2)))
        else:
            self.norm = float(np.sqrt(np.sum(a.astype(np.float64) ** 2)))
        self.values = _plain(a.tolist()) if a.size <= small else None
        self.array = np.array(a, copy=True) if keep else None

    def record(self) -> dict:
        return {"shape": list(self.shape), "dtype": self.dtype, "norm": self.norm,
                "values": self.values}

    def short(self) -> str:
        """``14``, ``[21, 68]``, or ``[64, 32] ‖g‖=0.0416``."""
        if self.values is not None:
            if len(self.shape) <= 1 and isinstance(self.values, list) and len(self.values) == 1:
                return _num(self.values[0])  # a one-element vector reads as its number
            return _nested(self.values, len(self.shape))
        return f"{list(self.shape)} ‖g‖={_num(self.norm)}"

    def single(self) -> float | None:
        if self.values is None:
            return None
        flat = np.asarray(self.values).reshape(-1)
        if flat.size != 1 or flat.dtype.kind not in "fiub":
            return None
        return float(flat[0])


def _plain(v: Any) -> Any:
    """Complex numbers as [re, im]: records stay JSON-able."""
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, complex):
        return [v.real, v.imag]
    return v


def _nested(v: Any, ndim: int) -> str:
    """Values as nested brackets, ``[[1, 2], [3, 4]]`` (a complex value is ``[re, im]``)."""
    if ndim == 0:
        return _num(v)
    return "[" + ", ".join(_nested(x, ndim - 1) for x in v) + "]"


def _num(v: Any) -> str:
    if isinstance(v, list):  # a complex value
        return f"{v[0]:.4g}{v[1]:+.4g}j"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return str(v)
    return f"{v:.4g}"


class Step:
    """One node's turn in the backward pass."""

    __slots__ = ("index", "pass_index", "node", "name", "received", "sent", "accumulated",
                 "hooks", "seconds", "note")

    def __init__(self, index: int, pass_index: int, node: Node) -> None:
        self.index = index
        self.pass_index = pass_index
        self.node = node
        self.name = "AccumulateGrad" if isinstance(node, AccumulateGrad) else node.name()
        self.received: list[Grad | None] = []
        # (input index, next node or None, output_nr, Grad or None)
        self.sent: list[tuple[int, Node | None, int, Grad | None]] = []
        self.accumulated: dict | None = None
        self.hooks: list[str] = []
        self.seconds = 0.0
        self.note = ""


class Trace:
    """A recorded backward pass (see the module docstring). Use ``show.trace()``."""

    def __init__(self, params: Any = None, *, small: int = 8, keep_grads: bool = False,
                 names: tuple[dict, dict] | None = None, lang: str | None = None) -> None:
        self.params = params
        self.lang = lang  # the table's language (None: resolved when printed)
        self.small = small
        self.keep_grads = keep_grads
        self.steps: list[Step] = []
        self.passes: list[list[Tensor]] = []  # the root tensors of each pass
        self._names = names or ({}, {})
        self._leaf_names = {**self._names[0], **param_names(params)}
        self._previous: Any = None
        self._views: dict[int, GraphView] = {}

    # -- the context manager ----------------------------------------------------------------

    def __enter__(self) -> Trace:
        self._previous = _engine._tracer
        _engine._tracer = self
        return self

    def __exit__(self, *exc: object) -> None:
        _engine._tracer = self._previous
        self._previous = None

    # -- the engine's loop, recorded --------------------------------------------------------

    def run_backward(self, tensors: Sequence[Tensor], grad_tensors: Sequence[Tensor | None],
                     retain_graph: bool, create_graph: bool,
                     inputs: Sequence[Tensor] | None = None, allow_unused: bool = True,
                     accumulate: bool = True) -> tuple | None:
        """``engine.run_backward``, step for step, recording each node (see there for the
        steps). A backward called from inside a hook runs untraced."""
        saved_tracer = _engine._tracer
        _engine._tracer = None
        try:
            return self._run(tensors, grad_tensors, retain_graph, create_graph, inputs,
                             accumulate)
        finally:
            _engine._tracer = saved_tracer

    def _run(self, tensors: Sequence[Tensor], grad_tensors: Sequence[Tensor | None],
             retain_graph: bool, create_graph: bool, inputs: Sequence[Tensor] | None,
             accumulate: bool) -> tuple | None:
        E = _engine
        pass_index = len(self.passes)
        self.passes.append(list(tensors))
        root_edges = [E._root_edge(t, i) for i, t in enumerate(tensors)]
        roots = [n for n, _ in root_edges]
        deps = E._discover(roots)

        capture: dict[tuple[Node, int], int] = {}
        needed: set | None = None
        if inputs is not None:
            for i, t in enumerate(inputs):
                key = (t.grad_fn, t._output_nr) if t.grad_fn is not None else (
                    E.grad_accumulator(t), 0)
                capture.setdefault(key, i)
            needed = E._needed(roots, {n for n, _ in capture})
        captured: list = [None] * (len(inputs) if inputs is not None else 0)

        buffers: dict[Node, list] = {}
        for (node, nr), g in zip(root_edges, grad_tensors, strict=True):
            E._add_to_buffer(buffers, node, nr, g)

        ready: list = []
        counter = 0
        for node in buffers:
            if deps.get(node, 0) == 0:
                ready.append((-node._seq, counter, node))
                counter += 1
        heapq.heapify(ready)
        push, pop = heapq.heappush, heapq.heappop
        anomaly = E._anomaly["enabled"]
        # as the engine: anomaly mode's NaN check, or a watcher of non-finite gradients
        check_nan = (anomaly and E._anomaly["check_nan"]) or E._anomaly.get("watch") is not None
        small, keep = self.small, self.keep_grads
        current: Node | None = None  # the node that runs (anomaly mode's report)

        prev_mode = _state.enabled
        _state.enabled = create_graph
        try:
            while ready:
                node = pop(ready)[2]
                current = node
                start = time.perf_counter()
                step = Step(len(self.steps), pass_index, node)
                self.steps.append(step)
                grads = buffers.pop(node, None)
                step.received = [None if g is None else Grad(g, small, keep)
                                 for g in (grads or ())]
                n0 = node._n0
                nexts = () if n0 < 0 else (node._e0, n0) + node._rest
                n_in = len(nexts) // 2
                if grads is None or (grads[0] is None and all(g is None for g in grads)):
                    out: tuple = (None,) * n_in
                    step.note = "no gradient reached it"
                else:
                    hooks = node._hooks
                    if hooks is not None:
                        step.hooks += _describe_pre_hooks(hooks, grads)
                        before = list(grads)
                        grads = E._call_pre_hooks(hooks, grads, create_graph)
                        if any(a is not b for a, b in zip(before, grads, strict=False)):
                            step.hooks.append("(a hook replaced the gradient)")
                            step.received = [None if g is None else Grad(g, small, keep)
                                             for g in grads]
                    if capture:
                        for nr in range(len(grads)):
                            slot = capture.get((node, nr))
                            if slot is not None and grads[nr] is not None and type(node) is not (
                                AccumulateGrad
                            ):
                                captured[slot] = grads[nr]
                                step.note = "captured for autograd.grad"
                    if type(node) is AccumulateGrad:
                        if needed is None or node in needed:
                            self._accumulate(step, node, grads[0], create_graph, capture,
                                             captured, accumulate)
                        else:
                            step.note = "not asked for (inputs=)"
                        step.seconds = time.perf_counter() - start
                        continue
                    if needed is not None and not any(
                        c is not None and c in needed for c in nexts[::2]
                    ):
                        step.note = "skipped: nothing asked for lies behind it"
                        step.seconds = time.perf_counter() - start
                        continue
                    out = node.apply(grads)
                    if type(out) is not tuple:
                        out = tuple(out) if isinstance(out, list) else (out,)
                    if hooks is not None and hooks.post:
                        for hook in list(hooks.post.values()):
                            step.hooks.append(f"post-hook {_hook_name(hook)}")
                            res = hook(out, tuple(grads))
                            if res is not None:
                                out = tuple(res)
                    if not retain_graph:
                        node.release()
                    if len(out) != n_in:
                        raise RuntimeError(
                            f"function {node.name()} returned an incorrect number of gradients "
                            f"(expected {n_in}, got {len(out)})"
                        )
                    if check_nan:
                        E._check_nan(node, out)
                meta = getattr(node, "input_meta", None)
                for i in range(n_in):
                    child = nexts[2 * i]
                    if child is None:
                        step.sent.append((i, None, 0, None))
                        continue
                    nr = nexts[2 * i + 1]
                    g = out[i]
                    if g is not None:
                        if meta is not None:
                            m = meta[i]
                            if m is not None and (
                                g._data.shape != m[0] or g._data.dtype.num != m[1]
                            ):
                                g = E._validate(node, i, g, m)
                        step.sent.append((i, child, nr, Grad(g, small, keep)))
                        buf = buffers.get(child)
                        if buf is None:
                            buffers[child] = [g] if nr == 0 else [None] * nr + [g]
                        else:
                            E._add_to_buffer(buffers, child, nr, g)
                    else:
                        step.sent.append((i, child, nr, None))
                    left = deps[child] - 1
                    deps[child] = left
                    if left == 0:
                        push(ready, (-child._seq, counter, child))
                        counter += 1
                out, g = (), None
                step.seconds = time.perf_counter() - start
        except Exception:
            messages = getattr(_graph, "forward_stack_messages", None)
            if anomaly and messages is not None and current is not None:
                import warnings  # anomaly mode: where the failing node was made

                for message in messages(current):
                    warnings.warn(message, UserWarning, stacklevel=4)
            raise
        finally:
            _state.enabled = prev_mode

        if inputs is None:
            return None
        return tuple(captured)

    def _accumulate(self, step: Step, node: AccumulateGrad, g: Tensor, create_graph: bool,
                    capture: dict, captured: list, accumulate: bool) -> None:
        """engine._run_accumulate, recording the leaf's hooks and what landed in .grad."""
        t = node.variable
        for hook in (t._hooks or {}).values():
            step.hooks.append(f"tensor hook {_hook_name(hook)}")
        for hook in (t._post_hooks or {}).values():
            step.hooks.append(f"post-accumulate hook {_hook_name(hook)}")
        # what lands: the leaf's hooks, then sum_to and cast, as _run_accumulate does them;
        # recomputed here on a copy-free path only for the record
        landed = g
        if t._hooks:
            for hook in list(t._hooks.values()):
                res = hook(landed)
                if res is not None:
                    landed = res
            hooks = t._hooks
            t._hooks = {}
            try:
                self._accumulate_plain(step, node, landed, create_graph, capture, captured,
                                       accumulate)
            finally:
                t._hooks = hooks
            return
        self._accumulate_plain(step, node, landed, create_graph, capture, captured, accumulate)

    def _accumulate_plain(self, step: Step, node: AccumulateGrad, g: Tensor,
                          create_graph: bool, capture: dict, captured: list,
                          accumulate: bool) -> None:
        t = node.variable
        small, keep = self.small, self.keep_grads
        shape = t._data.shape
        info_g = g if g._data.shape == shape else _engine.sum_to(g, shape)
        added = Grad(info_g, small, keep)
        fresh = t._grad is None
        del info_g
        _engine._run_accumulate(node, g, create_graph, capture, captured, accumulate)
        step.accumulated = {
            "leaf": self._leaf_name(t),
            "added": added,
            "grad": Grad(t._grad, small, keep) if accumulate and t._grad is not None else None,
            "fresh": fresh,
            "stored": accumulate,
        }
        if not accumulate:
            step.note = "captured for autograd.grad (not stored in .grad)"

    def _leaf_name(self, t: Tensor) -> str:
        name = self._leaf_names.get(id(t))
        if name:
            return name
        return f"leaf {list(t.shape)}"

    # -- reading it -------------------------------------------------------------------------

    def graph(self, pass_index: int = 0, *, max_depth: int | None = None,
              collapse: bool = True) -> GraphView:
        """The graph of a recorded pass, each edge labelled with the gradient that crossed it."""
        if not self.passes:
            raise RuntimeError("the trace recorded no backward pass")
        labels = {}
        for s in self.steps:
            if s.pass_index != pass_index:
                continue
            for i, child, _nr, info in s.sent:
                if child is not None and info is not None:
                    labels[(s.node, i)] = info.short()
        roots = [t for t in self.passes[pass_index]]
        return GraphView(roots, self.params, max_depth=max_depth, collapse=collapse,
                         names=self._names, edge_labels=labels)

    def render(self, path: Any, pass_index: int = 0) -> Any:
        """Draw the graph of a recorded pass, each edge labelled with its gradient, into
        ``path`` (.svg, .png, .pdf or .dot): ``t.graph().render(path)``. Returns the path."""
        return self.graph(pass_index).render(path)

    def _view(self, pass_index: int) -> GraphView:
        view = self._views.get(pass_index)
        if view is None:
            view = self.graph(pass_index)
            self._views[pass_index] = view
        return view

    def records(self) -> list[dict]:
        """One dict per step, in the order the engine ran them (JSON-able). ``id`` is the
        node's id in ``graph()``'s picture (``shown`` the element drawn for it, which differs
        for a node inside a collapsed repeated block)."""
        out: list[dict[str, Any]] = []
        for s in self.steps:
            view = self._view(s.pass_index)
            g = view.by_node.get(s.node)
            own = g.id if g is not None else None
            shown = view.shown[g].id if g is not None else None
            sent: list[dict[str, Any]] = []
            for i, child, nr, info in s.sent:
                if child is None:
                    sent.append({"input": i, "to": None, "to_id": None, "output_nr": nr,
                                 "grad": None})
                    continue
                cg = view.by_node.get(child)
                sent.append({"input": i, "to": _node_title(child, self),
                             "to_id": view.shown[cg].id if cg is not None else None,
                             "output_nr": nr, "grad": info.record() if info else None})
            acc = None
            if s.accumulated is not None:
                a = s.accumulated
                acc = {"leaf": a["leaf"], "added": a["added"].record(),
                       "grad": a["grad"].record() if a["grad"] is not None else None,
                       "fresh": a["fresh"], "stored": a["stored"]}
            rec: dict[str, Any] = {"pass": s.pass_index, "step": s.index, "node": s.name, "id": own,
                   "shown": shown, "received": [r.record() if r else None for r in s.received],
                   "sent": sent, "accumulated": acc, "hooks": list(s.hooks),
                   "time_us": round(s.seconds * 1e6, 1), "note": s.note}
            if g is not None and g in view.copy_of:
                block, copy = view.copy_of[g]
                rec["copy"] = {"block": block, "copy": copy,
                               "of": view.blocks[block]["count"]}
            out.append(rec)
        return out

    def table(self, lang: str | None = None) -> str:
        """The pass as a printable table: step, node, received, sent (or accumulated), time.

        ``lang``: ``"en"`` or ``"zh"``; default the ``lang`` given to ``show.trace()``, else
        ``TAPEGRAD_LANG``, else the locale (``i18n.resolve_lang``)."""
        lang = resolve_lang(lang or self.lang)
        head = tuple(_t(f"trace.col.{k}", lang)
                     for k in ("step", "node", "received", "time", "sent"))
        rows: list[tuple[str, str, str, str, str]] = []
        for s in self.steps:
            recv = ", ".join("-" if r is None else r.short() for r in s.received) or "-"
            lines = []
            r1 = s.received[0].single() if s.received and s.received[0] is not None else None
            for i, child, _nr, info in s.sent:
                target = _node_title(child, self) if child is not None else None
                many = len(s.sent) > 1
                prefix = f"[{i}] " if many else ""
                if child is None:
                    lines.append(prefix + _t("trace.no_edge", lang))
                elif info is None:
                    lines.append(f"{prefix}→ {target}: None")
                else:
                    text = f"{prefix}→ {target}: {info.short()}"
                    v = info.single()
                    if r1 is not None and v is not None and r1 != 0 and len(s.received) == 1:
                        text += f"  (= {_num(r1)} × {_num(v / r1)})"
                    lines.append(text)
            if s.accumulated is not None:
                a = s.accumulated
                if a["stored"]:
                    total = a["grad"].short() if a["grad"] is not None else "?"
                    op = "=" if a["fresh"] else "+="
                    lines.append(f"{a['leaf']}.grad {op} {a['added'].short()}"
                                 + ("" if a["fresh"] else f"  → {total}"))
                else:
                    lines.append(_t("trace.returned", lang, leaf=a["leaf"],
                                    grad=a["added"].short()))
            for h in s.hooks:
                lines.append(_t("trace.hook", lang, hook=hook_words(h, lang)))
            if s.note:
                note = note_words(s.note, lang)
                lines.append(note if lang == "zh" else f"({note})")
            lines = lines or [""]
            rows.append((str(s.index), s.name, _clip(recv, 40), _fmt_time(s.seconds), lines[0]))
            for extra in lines[1:]:
                rows.append(("", "", "", "", extra))
        widths = [max(_width(r[k]) for r in [head, *rows]) for k in range(4)]
        out = []
        for k, r in enumerate([head, *rows]):
            cells = [_pad(r[0], widths[0], True), _pad(r[1], widths[1]),
                     _pad(r[2], widths[2]), _pad(r[3], widths[3], True), r[4]]
            out.append("  ".join(cells).rstrip())
            if k == 0:
                out.append("  ".join("-" * w for w in widths) + "  " + "-" * _width(head[4]))
        return "\n".join(out)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return f"<tapegrad.show.Trace: {len(self.steps)} steps in {len(self.passes)} pass(es)>"

    def _repr_html_(self) -> str:
        """What Jupyter shows: the steps as a table (the first 200), and how to draw the
        picture."""
        import html


        lang = resolve_lang(self.lang)
        head = _t("trace.html_title", lang, steps=len(self.steps), passes=len(self.passes))
        hint = _t("trace.html_hint", lang)
        return (f'<div class="tg-trace"><p style="font-weight:bold;margin:0.3em 0">'
                f"{html.escape(head)}</p>{steps_table(self, lang, limit=200)}"
                f'<p style="font-size:0.85em;color:#555">{html.escape(hint)}</p></div>')


def _width(s: str) -> int:
    """Columns ``s`` takes in a terminal: CJK characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)


def _pad(s: str, n: int, right: bool = False) -> str:
    fill = " " * (n - _width(s))
    return fill + s if right else s + fill


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _fmt_time(seconds: float) -> str:
    us = seconds * 1e6
    return f"{us:.0f} µs" if us < 10_000 else f"{us / 1000:.1f} ms"


def _node_title(node: Node, tr: Trace) -> str:
    if isinstance(node, AccumulateGrad):
        return f"AccumulateGrad({tr._leaf_name(node.variable)})"
    return node.name()


def _describe_pre_hooks(hooks: Any, grads: list) -> list[str]:
    out = []
    for nr, tensor_hooks in hooks.tensor.items():
        if nr < len(grads) and grads[nr] is not None:
            out += [f"tensor hook {_hook_name(h)}" for h in tensor_hooks.values()]
    for nr in hooks.retain:
        if nr < len(grads) and grads[nr] is not None:
            out.append("retain_grad")
    out += [f"pre-hook {_hook_name(h)}" for h in hooks.pre.values()]
    return out


def trace(params: Any = None, *, small: int = 8, keep_grads: bool = False,
          lang: str | None = None) -> Trace:
    """Record the backward passes run inside the ``with`` block.

    ``params``: a Module or a dict name -> tensor, to name the leaves (the caller's local
    variables name the others). ``small``: tensors with at most this many elements are
    recorded with their values. ``keep_grads``: also keep a copy of every gradient (``Grad
    .array``), to compare or plot them later. ``lang``: the table's language, ``"en"`` or
    ``"zh"`` (default ``TAPEGRAD_LANG``, else the locale).

    Example:
        >>> import tapegrad as torch
        >>> a = torch.tensor([2.0], requires_grad=True)
        >>> b = torch.tensor([3.0], requires_grad=True)
        >>> e = (a * b + 1) ** 2
        >>> from tapegrad import show
        >>> with show.trace() as t:
        ...     e.backward()
        >>> print(t.table())  # doctest: +SKIP
    """
    names = frame_names(sys._getframe(1))
    if lang is not None:
        resolve_lang(lang)  # an unknown language fails here, not when printing
    return Trace(params, small=small, keep_grads=keep_grads, names=names, lang=lang)
