"""The backward trace: one backward pass, node by node, with the gradients it moved.

    with show.trace() as t:
        loss.backward()
    print(t.table())        # which node ran, in which order, what it received and sent
    t.records()             # the same as a list of dicts (JSON-able)
    t.graph().render("g.svg")   # the graph with every edge labelled by its gradient
    t.render("g.svg")           # the same

A trace is one of the engine's listeners (autograd/listeners.py): the engine runs its own
loop and announces each step, and the trace writes down what it hears: the node that popped
from the ready queue, the gradients in its buffer, the hooks that fired, what its rule sent
along each edge (after the engine reduced it to the input's shape), what AccumulateGrad added
into which leaf, and the time the node took (until the next node began). The numbers are the
engine's numbers. A backward run from inside a hook is not recorded; with traces nested, the
innermost one records.

Gradients are summarized when recorded (shape, dtype, norm, the values of small tensors); the
arrays themselves are copied only with ``keep_grads=True``. A traced pass computes the same
numbers as an untraced one.
"""

from __future__ import annotations

import html
import math
import sys
import time
import unicodedata
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd import listeners
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


class Trace(listeners.Listener):
    """A recorded backward pass (see the module docstring). Use ``show.trace()``."""

    capture_break = "tapegrad.show.trace is recording"

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
        self._views: dict[int, GraphView] = {}
        # while a pass runs: how deep in backward calls (a hook's backward is one more), whether
        # this pass is recorded, its index, the step of the node running and when it began,
        # the gradients before its pre-hooks, what AccumulateGrad landed
        self._depth = 0
        self._recording = False
        self._pass_index = 0
        self._step: Step | None = None
        self._started = 0.0
        self._before: list = []
        self._landed: tuple[Grad, bool, bool] | None = None

    # -- the context manager ----------------------------------------------------------------

    def __enter__(self) -> Trace:
        listeners.push(self)
        return self

    def __exit__(self, *exc: object) -> None:
        listeners.pop(self)

    # -- the engine's events, recorded ------------------------------------------------------

    def _hears(self) -> bool:
        """Whether the events now announced are recorded: those of an outermost pass (not a
        backward run from inside a hook), while no trace opened inside this one listens."""
        return self._depth == 1 and self._recording

    def _close_step(self) -> None:
        """The node that ran last is done: its time ends now."""
        if self._step is not None:
            self._step.seconds = time.perf_counter() - self._started
            self._step = None

    def backward_started(self, roots: Any, inputs: Any) -> None:
        self._depth += 1
        if self._depth == 1:
            traces = [x for x in listeners.stack() if isinstance(x, Trace)]
            self._recording = bool(traces) and traces[-1] is self  # the innermost trace
            if self._recording:
                self._pass_index = len(self.passes)
                self.passes.append(list(roots))

    def backward_finished(self) -> None:
        if self._hears():
            self._close_step()
        self._depth -= 1

    def node_started(self, node: Any, grads: list | None) -> None:
        if not self._hears():
            return
        self._close_step()
        self._started = time.perf_counter()
        step = Step(len(self.steps), self._pass_index, node)
        self.steps.append(step)
        self._step = step
        step.received = [None if g is None else Grad(g, self.small, self.keep_grads)
                         for g in (grads or ())]
        if grads is None or all(g is None for g in grads):
            step.note = "no gradient reached it"

    def pre_hooks(self, node: Any, hooks: Any, grads: list) -> None:
        if self._step is not None and self._hears():
            self._step.hooks += _describe_pre_hooks(hooks, grads)
            self._before = list(grads)  # (the hooks replace gradients in the list itself)

    def pre_hooks_ran(self, node: Any, grads: list) -> None:
        step = self._step
        if step is not None and self._hears() and any(
                a is not b for a, b in zip(self._before, grads, strict=False)):
            step.hooks.append("(a hook replaced the gradient)")
            step.received = [None if g is None else Grad(g, self.small, self.keep_grads)
                             for g in grads]

    def captured(self, node: Any) -> None:
        if self._step is not None and self._hears():
            self._step.note = "captured for autograd.grad"

    def node_skipped(self, node: Any) -> None:
        if self._step is not None and self._hears():
            self._step.note = "skipped: nothing asked for lies behind it"

    def post_hooks(self, node: Any, hooks: Any) -> None:
        if self._step is not None and self._hears():
            self._step.hooks += [f"post-hook {_hook_name(hook)}" for hook in hooks.post.values()]

    def gradient_sent(self, node: Any, i: int, child: Any, nr: int, grad: Any) -> None:
        if self._step is not None and self._hears():
            info = None if grad is None else Grad(grad, self.small, self.keep_grads)
            self._step.sent.append((i, child, nr, info))

    def run_accumulate(self, node: Any, run: Callable, *args: Any) -> Any:
        """AccumulateGrad: the hooks it will call, then what landed in which leaf (heard
        from ``gradient_accumulated``) and the leaf's ``.grad`` after it."""
        step = self._step
        if step is None or not self._hears():
            return run(*args)
        t = node.variable
        if node._hooks is not None:
            step.hooks += _describe_pre_hooks(node._hooks, [args[1]])
        for hook in (t._hooks or {}).values():
            step.hooks.append(f"tensor hook {_hook_name(hook)}")
        for hook in (t._post_hooks or {}).values():
            step.hooks.append(f"post-accumulate hook {_hook_name(hook)}")
        self._landed = None
        out = run(*args)
        if self._landed is not None:
            added, fresh, stored = self._landed
            step.accumulated = {
                "leaf": self._leaf_name(t),
                "added": added,
                "grad": Grad(t._grad, self.small, self.keep_grads)
                if stored and t._grad is not None else None,
                "fresh": fresh,
                "stored": stored,
            }
            if not stored:
                step.note = "captured for autograd.grad (not stored in .grad)"
        return out

    def gradient_accumulated(self, node: Any, grad: Any, stored: bool) -> None:
        if self._step is not None and self._hears():
            self._landed = (Grad(grad, self.small, self.keep_grads),
                            node.variable._grad is None, stored)

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
