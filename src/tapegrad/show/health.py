"""The gradient health check: per-layer gradient numbers and a diagnosis in words.

The seed chapters call the per-layer gradient-norm table "the first instrument" for a training
that does not learn. ``health`` builds that table for a model (or any named parameters) right
after ``loss.backward()``, and reads it::

    model, loss.backward()
        │
        ▼
    health(model)  ──►  one ParamStats per parameter:
        │                 gradient norm, weight norm, update/weight ratio, largest |grad|,
        │                 share of exact zeros, NaN / Inf counts
        ▼
    diagnose(rows, context)  ──►  Findings: vanishing (first layer vs last, with the ratio),
                                   exploding, NaN/Inf (first parameter, the op), no gradient
                                   (and why), dead ReLU units, zero_grad never called

What a single look at the parameters cannot tell (why a parameter got no gradient, which units
of a ReLU were dead over the batch, whether gradients piled up across steps, where a NaN was
born) comes from a ``Context``: a ``Monitor`` fills one while it watches training, ``health``
fills what it can from ``loss=`` (the graph) and ``inputs=`` (a forward pass with hooks).

Thresholds are class attributes of ``Thresholds``: a first/last gradient ratio of 100 (two
orders of magnitude) is vanishing, 10 is worth a note; a gradient norm above 1e4 or a ratio the
other way of 100 is exploding; one step changing a weight by more than 10% of its norm is large;
every gradient norm below 1e-6 means the training has stalled.
"""

from __future__ import annotations

import html as _html
import io
import math
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.graph import AccumulateGrad
from .i18n import resolve_lang, t
from .watch import ForwardWatch, ModuleCall


class Thresholds:
    """Where the diagnosis draws its lines (change them on the class to taste)."""

    vanishing_ratio = 100.0  # last layer's grad norm / first layer's: two orders of magnitude
    shrinking_ratio = 10.0  # one order: a note, not yet vanishing
    exploding_ratio = 100.0  # first layer's / last layer's
    exploding_norm = 1e4  # any gradient norm above this
    stalled_norm = 1e-6  # every gradient norm below this: the loss is flat, nothing moves
    large_update = 0.1  # one step changed a weight by more than 10% of its norm
    dead_share_warning = 0.25  # share of dead ReLU units that makes it a warning


@dataclass
class ParamStats:
    """The health numbers of one parameter (None where there is no gradient)."""

    name: str
    shape: tuple[int, ...]
    requires_grad: bool
    grad_norm: float | None
    weight_norm: float
    update_ratio: float | None
    update_source: str | None  # "step": measured over the last step; "lr": lr * grad / weight
    max_abs: float | None
    zero_frac: float | None
    nan: int
    inf: int
    weight_nan: int
    weight_inf: int


@dataclass
class Finding:
    """One statement of the diagnosis: its kind, how bad, about which parameter, the numbers
    behind it, and the sentence (in the report's language)."""

    kind: str
    severity: str  # "error", "warning", "info" or "ok"
    parameter: str | None
    numbers: dict[str, Any]
    text: str

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Context:
    """What the diagnosis knows beyond the parameters themselves (all optional)."""

    graph_params: set[int] | None = None  # ids of the leaves in the loss's graph
    modules: dict[str, ModuleCall] | None = None  # module name -> its last call (hooks on)
    updates: dict[str, float] = field(default_factory=dict)  # name -> norm of the last step
    stale: dict[str, tuple[int, float, float]] = field(default_factory=dict)
    nan_origin: dict[str, Any] | None = None  # {"phase": "forward"/"backward"/"input", ...}
    step: int | None = None


# ---------------------------------------------------------------------------------------------
# The numbers


def named_parameters_of(obj: Any) -> list[tuple[str, Tensor]]:
    """(name, parameter) pairs from a Module, a dict, pairs, or bare tensors (named p0, p1...)."""
    if hasattr(obj, "named_parameters"):
        return list(obj.named_parameters())
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items()]
    out: list[tuple[str, Tensor]] = []
    for i, item in enumerate(obj if isinstance(obj, Iterable) else [obj]):
        if isinstance(item, Tensor):
            out.append((f"p{i}", item))
        else:
            name, p = item
            out.append((str(name), p))
    return out


def _norm(a: np.ndarray) -> float:
    """The 2-norm, summed in float64 (of the magnitudes, for complex values)."""
    if a.dtype.kind == "c":
        a = np.abs(a)
    return float(np.sqrt(np.sum(np.square(a, dtype=np.float64))))


def param_stats(name: str, p: Tensor, update: float | None = None,
                lr: float | None = None) -> ParamStats:
    """The numbers of one parameter; ``update`` is the norm of its last step's change."""
    w = np.asarray(p._data)
    finite_w = np.isfinite(w)
    weight_nan = int(np.isnan(w).sum())
    weight_inf = int((~finite_w).sum()) - weight_nan
    weight_norm = _norm(np.where(finite_w, w, 0)) if weight_nan or weight_inf else _norm(w)
    g = p._grad
    grad_norm = max_abs = zero_frac = ratio = None
    source = None
    nan = inf = 0
    if g is not None:
        a = np.asarray(g._data)
        finite = np.isfinite(a)
        nan = int(np.isnan(a).sum())
        inf = int((~finite).sum()) - nan
        grad_norm = _norm(a) if not (nan or inf) else float("nan") if nan else float("inf")
        clean = a if not (nan or inf) else np.where(finite, a, 0)
        max_abs = float(np.abs(clean).max()) if clean.size else 0.0
        zero_frac = float(np.count_nonzero(a == 0) / a.size) if a.size else 0.0
        if update is not None:
            ratio, source = (update / weight_norm if weight_norm else None), "step"
        elif lr is not None and weight_norm:
            ratio, source = lr * grad_norm / weight_norm, "lr"
    elif update is not None and weight_norm:
        ratio, source = update / weight_norm, "step"
    return ParamStats(name, tuple(w.shape), bool(p._requires_grad), grad_norm, weight_norm,
                      ratio, source, max_abs, zero_frac, nan, inf, weight_nan, weight_inf)


def _lr_of(optimizer: Any) -> dict[int, float]:
    lrs: dict[int, float] = {}
    if optimizer is None:
        return lrs
    for group in optimizer.param_groups:
        lr = group.get("lr")
        if isinstance(lr, Tensor):
            lr = lr.item()
        if lr is not None:
            for p in group["params"]:
                lrs[id(p)] = float(lr)
    return lrs


# ---------------------------------------------------------------------------------------------
# Formatting


def fmt(x: float | None) -> str:
    """A number for the table: 6 decimals in the everyday range (as the seed chapters round),
    scientific notation outside it."""
    if x is None:
        return "-"
    if x != x:
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e4:
        return f"{x:.6f}"
    return f"{x:.3e}"


def update_lost(r: ParamStats) -> bool:
    """The last step left the weights exactly as they were though their gradient was not zero:
    the change it computed was too small to show in the weights' dtype (float32 keeps about 7
    significant digits: adding less than half a unit in the last place of a weight leaves it
    unchanged), or the step skipped them."""
    return (r.update_source == "step" and r.update_ratio == 0.0 and bool(r.grad_norm)
            and r.weight_norm > 0)


def _ratio_text(r: float) -> str:
    return f"{r:,.0f}" if r >= 100 else f"{r:.2f}"


def _share(x: float) -> str:
    return f"{100 * x:.1f}%"


# ---------------------------------------------------------------------------------------------
# The diagnosis


def graph_leaves(root: Any) -> set[int]:
    """ids of the leaf tensors whose AccumulateGrad is reachable from the node ``root``."""
    seen: set[int] = set()
    leaves: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaves.add(id(node.variable))
            continue
        for child, _ in node.next_functions:
            if child is not None:
                stack.append(child)
    return leaves


def forward_nonfinite_origin(root: Any) -> dict[str, Any] | None:
    """Where a NaN/Inf first shows in a graph's saved forward values: the earliest node whose
    output is non-finite, or "input" when a leaf or a constant already held it. Needs the saved
    values, so call it before backward frees them."""
    best: tuple[int, str] | None = None
    from_input = False
    seen: set[int] = set()
    stack = [root]

    def bad(a: Any) -> bool:
        a = np.asarray(a)
        return a.dtype.kind in "fc" and not np.isfinite(a).all()

    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        out = getattr(node, "_out", None)
        if out is not None and bad(out[0]) and (best is None or node._seq < best[0]):
            best = (node._seq, node.name())
        saved = getattr(node, "_saved", None)
        for x in saved if isinstance(saved, (tuple, list)) else ():
            if isinstance(x, Tensor) and bad(x._data):
                producer = x.grad_fn
                if producer is None:
                    from_input = True
                elif best is None or producer._seq < best[0]:
                    best = (producer._seq, producer.name())
        for child, _ in getattr(node, "next_functions", ()):
            if child is not None:
                stack.append(child)
    if best is not None:
        return {"phase": "forward", "op": best[1]}
    if from_input:
        return {"phase": "input"}
    return None


def diagnose(rows: list[ParamStats], ctx: Context, lang: str,
             params: dict[str, Tensor] | None = None) -> list[Finding]:
    """The findings, most serious first."""
    found: list[Finding] = []
    active = [r for r in rows if r.requires_grad]
    with_grad = [r for r in active if r.grad_norm is not None]

    # NaN / Inf: the first parameter (in the model's order), and where it was born
    bad = [r for r in with_grad if r.nan or r.inf]
    if bad:
        r = bad[0]
        what = t("words.nan_inf" if r.nan and r.inf else "words.nan" if r.nan else "words.inf",
                 lang)
        text = t("finding.nan", lang, what=what, name=r.name, count=r.nan + r.inf)
        origin = ctx.nan_origin or {}
        if origin.get("phase") == "backward":
            where = origin.get("where")
            text += t("finding.nan_backward_op", lang, op=origin["op"],
                      where=t("finding.nan_where", lang, where=where) if where else "")
        elif origin.get("phase") == "forward":
            text += t("finding.nan_forward_op", lang, op=origin["op"])
        elif origin.get("phase") == "input":
            text += t("finding.nan_input", lang)
        found.append(Finding("nan", "error", r.name,
                             {"nan": r.nan, "inf": r.inf, "op": origin.get("op"),
                              "phase": origin.get("phase"), "parameters": [b.name for b in bad]},
                             text))
    for r in active:
        if r.weight_nan or r.weight_inf:
            what = t("words.nan_inf" if r.weight_nan and r.weight_inf
                     else "words.nan" if r.weight_nan else "words.inf", lang)
            found.append(Finding("nan_weights", "error", r.name,
                                 {"nan": r.weight_nan, "inf": r.weight_inf},
                                 t("finding.nan_weights", lang, what=what, name=r.name,
                                   count=r.weight_nan + r.weight_inf)))
            break

    # gradients that piled up because zero_grad was never called
    if ctx.stale:
        name, (steps, g0, g1) = next(iter(ctx.stale.items()))
        found.append(Finding("accumulating", "warning", name,
                             {"steps": steps, "first": g0, "last": g1,
                              "parameters": list(ctx.stale)},
                             t("finding.accumulating", lang, steps=steps, name=name,
                               first=fmt(g0), last=fmt(g1))))

    # vanishing / exploding: the first weight matrix against the last one (or, where a later
    # layer's gradient is larger than the last one's, against that one: a converged output
    # layer must not hide a gradient that fades towards the input)
    finite = [r for r in with_grad if not (r.nan or r.inf)]
    layers = [r for r in finite if len(r.shape) >= 2] or finite
    largest = max((r.grad_norm or 0.0 for r in finite), default=0.0)
    if finite and 0 < largest < Thresholds.stalled_norm:
        found.append(Finding("stalled", "warning", None, {"largest": largest},
                             t("finding.stalled", lang, largest=fmt(largest),
                               limit=fmt(Thresholds.stalled_norm))))
    elif len(layers) >= 2 and not bad:
        first = layers[0]
        last = max(layers[1:], key=lambda r: r.grad_norm or 0.0)
        if (last.grad_norm or 0.0) <= (layers[-1].grad_norm or 0.0):
            last = layers[-1]
        nums = {"first": first.grad_norm, "last": last.grad_norm,
                "first_name": first.name, "last_name": last.name}
        fields = {"first_name": first.name, "last_name": last.name,
                  "first": fmt(first.grad_norm), "last": fmt(last.grad_norm),
                  "which": t("words.last_layer" if last is layers[-1] else "words.largest_layer",
                             lang)}
        fg, lg = first.grad_norm or 0.0, last.grad_norm or 0.0
        if fg > 0 and lg > 0:
            ratio = lg / fg
            nums["ratio"] = ratio
            if ratio >= Thresholds.vanishing_ratio:
                orders = int(math.floor(math.log10(ratio)))
                found.append(Finding("vanishing", "warning", first.name, {**nums,
                                     "orders": orders},
                                     t("finding.vanishing", lang, ratio_text=_ratio_text(ratio),
                                       orders=orders, **fields)))
            elif 1 / ratio >= Thresholds.exploding_ratio and last is layers[-1]:
                orders = int(math.floor(math.log10(1 / ratio)))
                found.append(Finding("exploding", "warning", first.name,
                                     {**nums, "orders": orders},
                                     t("finding.exploding_depth", lang,
                                       ratio_text=_ratio_text(1 / ratio), orders=orders,
                                       **fields)))
            elif ratio >= Thresholds.shrinking_ratio:
                found.append(Finding("shrinking", "info", first.name, nums,
                                     t("finding.shrinking", lang,
                                       ratio_text=_ratio_text(ratio), **fields)))
            else:
                factor = max(ratio, 1 / ratio)
                nums["factor"] = factor
                found.append(Finding("depth_ok", "ok", first.name, nums,
                                     t("finding.depth_ok", lang,
                                       ratio_text=_ratio_text(factor), **fields)))
    if not any(f.kind == "exploding" for f in found):
        for r in finite:
            if r.grad_norm is not None and r.grad_norm > Thresholds.exploding_norm:
                found.append(Finding("exploding", "warning", r.name, {"norm": r.grad_norm},
                                     t("finding.exploding_norm", lang, name=r.name,
                                       norm=fmt(r.grad_norm),
                                       limit=fmt(Thresholds.exploding_norm))))
                break
    for r in layers:  # biases start near zero: their ratio says little
        if r.update_source == "step" and r.update_ratio is not None and (
            r.update_ratio > Thresholds.large_update
        ):
            found.append(Finding("large_update", "warning", r.name, {"ratio": r.update_ratio},
                                 t("finding.large_update", lang, name=r.name,
                                   ratio=_share(r.update_ratio),
                                   limit=_share(Thresholds.large_update))))
            break

    # dead ReLU units
    for module, call in (ctx.modules or {}).items():
        if call.dead:
            share = call.dead / (call.units or 1)
            found.append(Finding(
                "dead_relu", "warning" if share >= Thresholds.dead_share_warning else "info",
                module, {"dead": call.dead, "units": call.units, "share": share},
                t("finding.dead_relu", lang, module=module, dead=call.dead, total=call.units,
                  share=_share(share))))

    # parameters without a gradient, and why
    if active and not with_grad:
        found.append(Finding("no_grads_at_all", "warning", None, {},
                             t("finding.no_grads_at_all", lang)))
    else:
        for r in active:
            if r.grad_norm is None:
                kind, module = _why_no_grad(r.name, ctx, params)
                found.append(Finding("no_grad", "warning", r.name,
                                     {"reason": kind, "module": module},
                                     t("finding.no_grad", lang, name=r.name,
                                       why=t("why." + kind, lang, module=module))))
    for r in finite:
        if r.zero_frac == 1.0 and r.max_abs == 0.0:
            found.append(Finding("zero_gradient", "warning", r.name, {},
                                 t("finding.zero_grad_values", lang, name=r.name)))
    frozen = [r.name for r in rows if not r.requires_grad]
    if frozen:
        found.append(Finding("frozen", "info", None, {"parameters": frozen},
                             t("finding.frozen", lang, count=len(frozen),
                               names=", ".join(frozen[:8]) + (" ..." if len(frozen) > 8 else ""))))

    if not any(f.severity in ("error", "warning") for f in found) and with_grad:
        found.append(Finding("healthy", "ok", None, {}, t("finding.healthy", lang)))
    order = {"error": 0, "warning": 1, "info": 2, "ok": 3}
    found.sort(key=lambda f: order[f.severity])
    return found


def _why_no_grad(name: str, ctx: Context, params: dict[str, Tensor] | None) -> tuple[str, str]:
    """One of cleared / not_called / no_grad / detached / unused_output / not_in_graph /
    unknown, and the parameter's module."""
    module = name.rpartition(".")[0]
    if ctx.graph_params is not None and params is not None and id(params[name]) in (
        ctx.graph_params
    ):
        return "cleared", module  # on the loss's path: its gradient was set to None since
    if ctx.modules is not None:
        call = ctx.modules.get(module)
        if call is None:
            return "not_called", module
        if not call.grad_enabled:
            return "no_grad", module
        if call.detached:
            return "detached", module
        if ctx.graph_params is None or params is None or id(params[name]) not in (
            ctx.graph_params
        ):
            return "unused_output", module
    if ctx.graph_params is not None and params is not None and id(params[name]) not in (
        ctx.graph_params
    ):
        return "not_in_graph", module
    return "unknown", module


# ---------------------------------------------------------------------------------------------
# The report


class HealthReport:
    """The table and the diagnosis of one health check. ``str(report)`` prints both."""

    def __init__(self, rows: list[ParamStats], findings: list[Finding], lang: str,
                 step: int | None = None) -> None:
        self.rows = rows
        self.findings = findings
        self.lang = lang
        self.step = step

    def __getitem__(self, name: str) -> ParamStats:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(name)

    def diagnosis(self) -> list[Finding]:
        """The findings, most serious first."""
        return list(self.findings)

    def kinds(self) -> list[str]:
        return [f.kind for f in self.findings]

    def _cells(self) -> tuple[list[str], list[list[str]], list[str]]:
        """The table's head, its rows as text, and the notes under it."""
        lang = self.lang
        head = [t(k, lang) for k in ("col.parameter", "col.shape", "col.grad_norm",
                                     "col.weight_norm", "col.update_ratio", "col.max_abs",
                                     "col.zeros", "col.nan", "col.inf")]
        body = []
        lost = False
        for r in self.rows:
            if not r.requires_grad:
                grad = t("cell.frozen", lang)
            elif r.grad_norm is None:
                grad = t("cell.no_grad", lang)
            else:
                grad = fmt(r.grad_norm)
            ratio = fmt(r.update_ratio)
            if update_lost(r):
                ratio = t("cell.update_lost", lang)
                lost = True
            body.append([r.name, str(tuple(r.shape)), grad, fmt(r.weight_norm), ratio,
                         fmt(r.max_abs), "-" if r.zero_frac is None else _share(r.zero_frac),
                         str(r.nan), str(r.inf)])
        notes = []
        sources = {r.update_source for r in self.rows if r.update_source}
        if "lr" in sources:
            notes.append(t("health.ratio_note", lang, how=t("health.ratio_lr", lang)))
        if lost:
            notes.append(t("health.lost_note", lang, lost=t("cell.update_lost", lang)))
        return head, body, notes

    def table(self) -> str:
        """The per-parameter table as text."""
        head, body, notes = self._cells()
        widths = [max(_width(row[i]) for row in [head, *body]) for i in range(len(head))]
        lines = ["  ".join(_pad(c, w, i) for i, (c, w) in enumerate(zip(row, widths,
                                                                           strict=True)))
                 .rstrip() for row in [head, *body]]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines + notes)

    def title(self) -> str:
        """``Gradient health report (step N)``, in the report's language."""
        return (t("health.title_step", self.lang, step=self.step) if self.step is not None
                else t("health.title", self.lang))

    def html(self, *, heading: bool = True) -> str:
        """The report as an HTML fragment (the report page and Jupyter show it): the table
        (scrolls sideways where it is wider than the page) and the diagnosis, whose sentences
        wrap. Styled inline, so it needs no style sheet."""
        def esc(x: str) -> str:
            return _html.escape(x)

        head, body, notes = self._cells()
        right = ' style="text-align:right;padding:1px 8px;white-space:nowrap"'
        left = ' style="text-align:left;padding:1px 8px;white-space:nowrap"'
        rows = ["<tr>" + "".join(f"<th{left if i < 2 else right}>{esc(c)}</th>"
                                 for i, c in enumerate(head)) + "</tr>"]
        for row in body:
            rows.append("<tr>" + "".join(f"<td{left if i < 2 else right}>{esc(c)}</td>"
                                         for i, c in enumerate(row)) + "</tr>")
        colors = {"error": "#b00020", "warning": "#b35900", "info": "#1f5fa8", "ok": "#2e7d32"}
        items = "".join(
            f'<li class="tg-finding tg-{f.severity}" style="margin:0.3em 0">'
            f'<b style="color:{colors.get(f.severity, "#222")}">'
            f"[{esc(t('severity.' + f.severity, self.lang))}]</b> {esc(f.text)}</li>"
            for f in self.findings)
        parts = ['<div class="tg-health" style="max-width:100%">']
        if heading:
            parts.append(f'<p class="tg-health-title" style="font-weight:bold;margin:0.3em 0">'
                         f"{esc(self.title())}</p>")
        parts.append('<div class="tg-health-table" style="overflow-x:auto;max-width:100%">'
                     '<table style="border-collapse:collapse;font-family:ui-monospace,Menlo,'
                     'Consolas,monospace;font-size:0.85em">' + "".join(rows) + "</table></div>")
        for note in notes:
            parts.append(f'<p class="tg-health-note" style="font-size:0.85em;color:#555;'
                         f'margin:0.3em 0;overflow-wrap:anywhere">{esc(note)}</p>')
        parts.append('<div class="tg-diagnosis" style="background:#fff7e6;border-left:4px solid '
                     '#e69500;padding:0.4em 1em;margin:0.6em 0;white-space:normal;'
                     'overflow-wrap:anywhere;max-width:100%;box-sizing:border-box">'
                     f'<p style="font-weight:bold;margin:0.2em 0">'
                     f"{esc(t('health.diagnosis', self.lang))}</p>"
                     f'<ul style="margin:0.2em 0;padding-left:1.2em">{items}</ul></div></div>')
        return "".join(parts)

    def _repr_html_(self) -> str:
        return self.html()

    def __str__(self) -> str:
        out = [self.title(), "", self.table(), "", t("health.diagnosis", self.lang)]
        for f in self.findings:
            out.append(f"  [{t('severity.' + f.severity, self.lang)}] {f.text}")
        return "\n".join(out)

    __repr__ = __str__

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "lang": self.lang,
                "parameters": [asdict(r) for r in self.rows],
                "diagnosis": [f.to_dict() for f in self.findings]}

    def plot(self, path: str | None = None) -> Any:
        """A bar chart of gradient norm per parameter (log scale), with the weight norms, at
        this report's one step (``plot_grad_norms`` draws them over many steps); returns the
        matplotlib Figure (and writes it to ``path`` if given). Needs matplotlib
        (``pip install 'tapegrad[viz]'``)."""
        # matplotlib: optional (pip install 'tapegrad[viz]'), loaded on first use
        from matplotlib.figure import Figure

        lang = plot_lang(self.lang)
        rows = [r for r in self.rows if r.grad_norm is not None and np.isfinite(r.grad_norm)]
        fig = Figure(figsize=(max(5.0, 0.6 * len(rows) + 2), 3.6))
        ax = fig.add_subplot()
        x = np.arange(len(rows))
        ax.bar(x - 0.2, [max(r.grad_norm or 0.0, 1e-30) for r in rows], 0.4,
               label=t("col.grad_norm", lang))
        ax.bar(x + 0.2, [max(r.weight_norm, 1e-30) for r in rows], 0.4,
               label=t("report.weight_norm", lang), alpha=0.5)
        ax.set_yscale("log")
        ax.set_xticks(x, [r.name for r in rows], rotation=45, ha="right", fontsize=8)
        ax.set_ylabel(t("report.norm_axis", lang))
        ax.set_title(t("report.plot_title", lang) + (
            "" if self.step is None else " " + t("report.at_step", lang, step=self.step)))
        ax.legend(fontsize=8)
        _cjk_font(fig, lang)
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
        return fig

    def svg(self) -> str:
        """The plot as SVG text (for an HTML page)."""
        buf = io.StringIO()
        self.plot().savefig(buf, format="svg")
        return buf.getvalue()


def _width(s: str) -> int:
    """Display width: CJK characters take two columns."""
    return sum(2 if ord(ch) > 0x2E80 else 1 for ch in s)


def _pad(s: str, w: int, i: int) -> str:
    gap = " " * (w - _width(s))
    return s + gap if i < 2 else gap + s


_CJK_NAMES = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Source Han Sans SC", "WenQuanYi Zen Hei",
              "WenQuanYi Micro Hei", "SimHei", "Microsoft YaHei", "PingFang SC", "Heiti SC")
_cjk: list[str | None] = []  # the family found, looked up once


def cjk_family() -> str | None:
    """A font family with Chinese glyphs for plots, or None. Looks in matplotlib's fonts, then
    adds the system's CJK font files (fonts-noto-cjk, fonts-wqy-*) that its cache missed."""
    if _cjk:
        return _cjk[0]
    # matplotlib: optional (pip install 'tapegrad[viz]'), loaded on first use
    from matplotlib import font_manager

    found = None

    def known() -> str | None:
        names = {f.name for f in font_manager.fontManager.ttflist}
        return next((n for n in _CJK_NAMES if n in names), None)

    found = known()
    if found is None:
        files = [f for f in font_manager.findSystemFonts()
                 if any(k in os.path.basename(f).lower() for k in ("cjk", "wqy", "simhei"))]
        files.sort(key=lambda f: ("Regular" not in f, "Sans" not in f, f))
        for path in files[:4]:
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):
                continue
        found = known()
    _cjk.append(found)
    return found


def plot_lang(lang: str) -> str:
    """The language of a plot's labels: Chinese only where a font can draw it."""
    return "zh" if lang == "zh" and cjk_family() is not None else "en"


def _cjk_font(fig: Any, lang: str) -> None:
    """Set the CJK font family on every text of a Chinese figure."""
    if lang != "zh":
        return
    family = cjk_family()
    if family is not None:
        for text in fig.findobj(lambda o: hasattr(o, "set_fontfamily")):
            text.set_fontfamily(family)


def plot_grad_norms(history: list[dict[str, Any]], names: list[str], path: Any = None, *,
                    lang: str | None = None, title: str | None = None) -> Any:
    """Gradient norm per layer over training steps, one line per name (log scale), with the
    step on the x axis: the plot of ``Monitor.plot`` and ``tapegrad doctor`` (and the demo's).

    ``history``: one entry per step, ``{"step": int, "params": {name: {"grad_norm": float or
    None}}}`` (``Monitor.history``'s form). Returns the matplotlib Figure, written to ``path``
    if given. Needs matplotlib (``pip install 'tapegrad[viz]'``).
    """
    # matplotlib: optional (pip install 'tapegrad[viz]'), loaded on first use
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator  # matplotlib: optional, loaded on first use

    lang = plot_lang(resolve_lang(lang))
    fig = Figure(figsize=(8.0, 4.0))
    ax = fig.add_subplot()
    for name in names:
        steps, norms = [], []
        for h in history:
            g = h["params"].get(name, {}).get("grad_norm")
            if g is not None and np.isfinite(g) and g > 0:
                steps.append(h["step"])
                norms.append(g)
        if norms:  # ten colours, then the same ten dashed, then dotted
            k = len(ax.lines)
            ax.plot(steps, norms, marker="o" if len(norms) < 30 else None, markersize=3,
                    label=name, color=f"C{k % 10}", linestyle=("-", "--", ":")[k // 10 % 3])
    ax.set_yscale("log")
    ax.set_xlabel(t("monitor.step", lang))
    ax.set_ylabel(t("monitor.grad_norm", lang))
    ax.set_title(title or (t("monitor.plot_title", lang) if history
                           else t("monitor.no_steps", lang)))
    if history:
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5),
                  ncol=2 if len(names) > 12 else 1)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(True, which="major", alpha=0.3)
    _cjk_font(fig, lang)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    return fig


# ---------------------------------------------------------------------------------------------
# The entry point


def health(model_or_named_params: Any, *, optimizer: Any = None, lang: str | None = None,
           inputs: Any = None, loss: Tensor | None = None) -> HealthReport:
    """Check the gradients of a model (or of named parameters) after ``loss.backward()``.

    Args:
        model_or_named_params: an ``nn.Module``, a dict name -> parameter, (name, parameter)
            pairs, or parameters.
        optimizer: its learning rates give the update/weight ratio (``lr * |grad| / |w|``)
            where no observed step gives the real one.
        lang: "en" or "zh" (default: ``TAPEGRAD_LANG``, then the locale).
        inputs: run the model on these once (with hooks, nothing else changes) to find dead
            ReLU units and which modules ran under no_grad or were not called.
        loss: the loss backward ran on: its graph tells which parameters are on its path.

    Example:
        >>> model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Sigmoid(),
        ...                             torch.nn.Linear(3, 1))
        >>> model(torch.randn(8, 4)).pow(2).mean().backward()
        >>> report = torch.show.health(model)
        >>> report["0.weight"].grad_norm > 0
        True
    """
    lang = resolve_lang(lang)
    named = named_parameters_of(model_or_named_params)
    ctx = Context()
    if loss is not None and loss.grad_fn is not None:
        ctx.graph_params = graph_leaves(loss.grad_fn)
        origin = forward_nonfinite_origin(loss.grad_fn)
        if origin is not None:
            ctx.nan_origin = origin
    if inputs is not None and hasattr(model_or_named_params, "named_modules"):
        watch = ForwardWatch(model_or_named_params)
        try:
            model_or_named_params(*inputs) if isinstance(inputs, tuple) else (
                model_or_named_params(inputs))
        finally:
            watch.detach()
        ctx.modules = watch.calls
    return build_report(named, ctx, lang, optimizer=optimizer)


def build_report(named: list[tuple[str, Tensor]], ctx: Context, lang: str,
                 optimizer: Any = None) -> HealthReport:
    """The report from parameters and what is known about them."""
    lrs = _lr_of(optimizer)
    rows = [param_stats(name, p, ctx.updates.get(name), lrs.get(id(p))) for name, p in named]
    findings = diagnose(rows, ctx, lang, dict(named))
    return HealthReport(rows, findings, lang, ctx.step)


__all__ = ["Context", "Finding", "HealthReport", "ParamStats", "Thresholds", "build_report",
           "diagnose", "health", "param_stats", "plot_grad_norms"]

