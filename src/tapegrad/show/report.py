"""The report page: one self-contained HTML file to step through a backward pass.

    with show.trace() as t:
        loss.backward()
    show.report.write_report("report.html", trace=t, figures={"gradient norms": svg})

The page holds everything inline (the SVG picture, the data, the script and the styles), so
it opens from a file with no network. It shows the graph, the trace as a table you step
through node by node (the Prev / Next buttons, or the arrow keys; the current node is
highlighted on the picture and the edges it sent gradients along), the details of the current
step (what it received, what it sent along each edge, what landed in which ``.grad``, the
hooks that fired, its time), and any figures (title -> SVG text: the health plots, say).
Clicking a node on the picture or a row of the table selects that step.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

from .graph import INSTALL_HINT, GraphView, GraphvizMissing
from .i18n import resolve_lang
from .steps import clean, page_text, step_view


def _strip_svg(svg: str) -> str:
    """An SVG document as an element to inline: no XML prolog, doctype or comments."""
    svg = re.sub(r"<\?xml[^>]*\?>", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>", "", svg, flags=re.S)
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    return svg.strip()


_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, "Noto Sans CJK SC",
       sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.note { color: #666; font-size: 0.9em; }
#picture { overflow: auto; max-height: 80vh; border: 1px solid #ddd; padding: 4px; }
#picture svg { max-width: none; height: auto; }
#picture g.node { cursor: pointer; }
#picture g.node.tg-current polygon, #picture g.node.tg-current path,
#picture g.node.tg-current ellipse { stroke: #d62728; stroke-width: 3px; }
#picture g.edge.tg-sent path { stroke: #d62728; stroke-width: 2.5px; }
#picture g.edge.tg-sent polygon { stroke: #d62728; fill: #d62728; }
#picture g.edge.tg-sent text { fill: #d62728; font-weight: bold; }
.controls { margin: 0.6em 0; } .controls button { font-size: 1em; padding: 0.2em 0.8em; }
#detail { background: #f7f7f9; border-left: 4px solid #d62728; padding: 0.5em 1em;
          margin: 0.6em 0; font-family: ui-monospace, Menlo, Consolas, monospace;
          white-space: pre-wrap; }
table#steps { border-collapse: collapse; font-family: ui-monospace, Menlo, Consolas,
              monospace; font-size: 0.85em; }
table#steps th, table#steps td { border-bottom: 1px solid #e3e3e3; padding: 2px 8px;
                                 text-align: left; vertical-align: top; }
table#steps tr.current td { background: #fde8e8; }
table#steps tbody tr { cursor: pointer; }
pre.tree { font-size: 0.8em; overflow: auto; }
pre.report { background: #f6f6f6; padding: 0.8em; white-space: pre-wrap;
             overflow-wrap: anywhere; }
#detail { overflow-wrap: anywhere; }
section.text { max-width: 100%; }
.figure { margin: 1em 0; } .figure svg { max-width: 100%; height: auto; }
"""

_JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("tg-data").textContent);
  var steps = data.steps;
  var rows = Array.prototype.slice.call(document.querySelectorAll("#steps tbody tr"));
  var picture = document.getElementById("picture");
  var detail = document.getElementById("detail");
  var pos = document.getElementById("pos");
  var current = -1;

  function byId(id) {
    if (!picture || !id) { return null; }
    var found = null;
    picture.querySelectorAll("g").forEach(function (g) { if (g.id === id) { found = g; } });
    return found;
  }
  function clear() {
    if (!picture) { return; }
    picture.querySelectorAll(".tg-current, .tg-sent").forEach(function (el) {
      el.classList.remove("tg-current");
      el.classList.remove("tg-sent");
    });
  }
  function select(k) {
    if (k < 0 || k >= steps.length) { return; }
    if (current >= 0) { rows[current].classList.remove("current"); }
    current = k;
    var s = steps[k];
    rows[k].classList.add("current");
    clear();
    var node = byId(s.id);
    if (node) {
      node.classList.add("tg-current");
      if (node.scrollIntoView) { node.scrollIntoView({block: "nearest", inline: "nearest"}); }
    }
    s.edges.forEach(function (id) {
      var e = byId(id);
      if (e) { e.classList.add("tg-sent"); }
    });
    var lines = [data.text.step + " " + s.step + ": " + s.node,
                 data.text.received + ": " + s.received];
    s.sent.forEach(function (line) { lines.push("  " + line); });
    if (s.hooks.length) { lines.push(data.text.hooks + ": " + s.hooks.join("; ")); }
    if (s.note) { lines.push(data.text.note + ": " + s.note); }
    lines.push(data.text.time + ": " + s.time);
    detail.textContent = lines.join("\n");
    detail.setAttribute("data-step", String(k));
    pos.textContent = data.text.position.replace("{step}", String(s.step))
      .replace("{pos}", String(k + 1)).replace("{n}", String(steps.length));
  }
  document.getElementById("prev").addEventListener("click", function () {
    select(current - 1);
  });
  document.getElementById("next").addEventListener("click", function () {
    select(current + 1);
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "ArrowRight" || ev.key === "j") { select(current + 1); ev.preventDefault(); }
    if (ev.key === "ArrowLeft" || ev.key === "k") { select(current - 1); ev.preventDefault(); }
  });
  rows.forEach(function (row, k) {
    row.addEventListener("click", function () { select(k); });
  });
  if (picture) {
    picture.querySelectorAll("g.node").forEach(function (g) {
      g.addEventListener("click", function () {
        for (var k = 0; k < steps.length; k++) {
          if (steps[k].id === g.id) { select(k); return; }
        }
      });
    });
  }
  if (steps.length) { select(0); }
})();
"""


def write_report(path: str | Path, *, graph: GraphView | None = None, trace: Any = None,
                 figures: dict[str, str] | None = None, title: str | None = None,
                 lang: str | None = None, text: dict[str, Any] | None = None) -> Path:
    """Write the report page to ``path`` and return it.

    ``graph``: a :class:`GraphView` (default: the trace's graph, edges labelled with their
    gradients). ``trace``: a :class:`~tapegrad.show.trace.Trace` to step through.
    ``figures``: title -> SVG text, shown below. ``text``: heading -> plain text, shown first
    in ``<pre>`` blocks whose lines wrap at the page's width, or -> a
    :class:`~tapegrad.show.health.HealthReport`, shown as its table and its diagnosis (whose
    sentences wrap). ``lang``: ``"en"`` or ``"zh"`` (default: ``TAPEGRAD_LANG``, else the
    locale; see ``i18n.resolve_lang``).

    The step counter above the details names the step as the table numbers it (the engine's
    order, from 0) and where it stands among the steps: ``step 0 (1 of 50)``.
    """
    lang = resolve_lang(lang)
    sections = text
    text = page_text(lang)
    if graph is None and trace is not None and trace.passes:
        graph = trace.graph()
    title = title or text["title"]
    parts = [f"<!DOCTYPE html>\n<html lang=\"{html.escape(lang)}\"><head><meta charset=\"utf-8\">",
             f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    for k, (heading, body) in enumerate((sections or {}).items()):
        inner = (body.html(heading=False) if hasattr(body, "html") and not isinstance(body, str)
                 else f"<pre class=\"report\">{html.escape(body)}</pre>")
        parts.append(f"<section class=\"text\" id=\"text{k}\"><h2>{html.escape(heading)}</h2>"
                     f"{inner}</section>")
    if graph is not None:
        parts.append(f"<section id=\"graph\"><h2>{html.escape(text['graph'])}</h2>")
        try:
            svg = _strip_svg(graph.svg())
            parts.append(f"<p class=\"note\">{html.escape(text['graph_note'])}</p>")
            parts.append(f"<div id=\"picture\">{svg}</div>")
        except GraphvizMissing:
            parts.append(f"<p class=\"note\">{html.escape(INSTALL_HINT)}</p>")
        parts.append(f"<details><summary>{html.escape(text['text_tree'])}</summary>"
                     f"<pre class=\"tree\">{html.escape(graph.text(lang=lang))}</pre></details>")
        parts.append("</section>")
    steps: list[dict] = []
    if trace is not None:
        steps = [step_view(clean(r), text, lang) for r in trace.records()]
    parts.append(f"<section id=\"trace\"><h2>{html.escape(text['trace'])}</h2>")
    if not steps:
        parts.append(f"<p class=\"note\">{html.escape(text['no_trace'])}</p>")
    parts.append(
        "<div class=\"controls\">"
        f"<button id=\"prev\" type=\"button\">{html.escape(text['prev'])}</button> "
        "<span id=\"pos\"></span> "
        f"<button id=\"next\" type=\"button\">{html.escape(text['next'])}</button> "
        f"<span class=\"note\">{html.escape(text['keys'])}</span></div>"
        "<div id=\"detail\"></div>")
    parts.append("<table id=\"steps\"><thead><tr>"
                 + "".join(f"<th>{html.escape(text[k])}</th>"
                           for k in ("step", "node", "received", "sent", "time"))
                 + "</tr></thead><tbody>")
    for s in steps:
        sent = "<br>".join(html.escape(x) for x in s["sent"])
        parts.append(f"<tr data-node=\"{html.escape(s['id'] or '')}\"><td>{s['step']}</td>"
                     f"<td>{html.escape(s['node'])}</td><td>{html.escape(s['received'])}</td>"
                     f"<td>{sent}</td><td>{html.escape(s['time'])}</td></tr>")
    parts.append("</tbody></table></section>")
    if figures:
        parts.append(f"<section id=\"figures\"><h2>{html.escape(text['figures'])}</h2>")
        for name, svg in figures.items():
            parts.append(f"<div class=\"figure\"><h3>{html.escape(name)}</h3>"
                         f"{_strip_svg(svg)}</div>")
        parts.append("</section>")
    payload = json.dumps({"steps": steps, "text": text}, ensure_ascii=False)
    payload = payload.replace("</", "<\\/")
    parts.append(f"<script type=\"application/json\" id=\"tg-data\">{payload}</script>")
    parts.append(f"<script>{_JS}</script></body></html>\n")
    path = Path(path)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
