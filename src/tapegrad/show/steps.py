"""A backward trace's steps in words: what the report page and a notebook show for each step
(the gradients received and sent, the leaf accumulated, the hooks and notes in the reader's
language), and the steps as an HTML table. Below both ``trace`` and ``report``, which share it."""

from __future__ import annotations

import html
import math
from typing import Any

from .i18n import TEXTS, resolve_lang, t

_NOTES = {TEXTS[k][0]: k for k in ("trace.note.no_gradient", "trace.note.captured",
                                   "trace.note.not_asked", "trace.note.skipped")}
_HOOK_WORDS = ("post-accumulate hook", "tensor hook", "post-hook", "pre-hook")


def note_words(note: str, lang: str) -> str:
    """A step's note (recorded in English) in ``lang``."""
    key = _NOTES.get(note)
    return note if key is None or lang == "en" else t(key, lang)


def hook_words(hook: str, lang: str) -> str:
    """``tensor hook scale`` in ``lang``; the hook's own name stays."""
    if lang == "en":
        return hook
    if hook == TEXTS["trace.hook_replaced"][0]:
        return t("trace.hook_replaced", lang)
    for words in _HOOK_WORDS:
        if hook.startswith(words + " "):
            key = "trace." + words.replace("-", "_").replace(" ", "_")
            return t(key, lang) + hook[len(words):]
    return hook



def page_text(lang: str) -> dict[str, str]:
    """The page's words in ``lang`` (the ``page.*`` texts of i18n), unfilled templates."""
    k = 1 if lang == "zh" else 0
    return {key[5:]: pair[k] for key, pair in TEXTS.items() if key.startswith("page.")}


def clean(value: Any) -> Any:
    """NaN and infinities as strings: JSON.parse accepts no bare NaN."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, list):
        return [clean(v) for v in value]
    if isinstance(value, dict):
        return {k: clean(v) for k, v in value.items()}
    return value


def _num(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, float) for x in v):
        return f"{v[0]:.4g}{v[1]:+.4g}j"
    return f"{v:.4g}"


def _grad_text(g: dict | None) -> str:
    if g is None:
        return "None"
    if g.get("values") is not None:
        if len(g["shape"]) <= 1 and len(_flatten(g["values"])) == 1:
            return _num(_flatten(g["values"])[0])
        return _nested(g["values"], len(g["shape"]))
    return f"{g['shape']} ‖g‖={_num(g['norm'])}"


def _nested(v: Any, ndim: int) -> str:
    if ndim == 0:
        return _num(v)
    return "[" + ", ".join(_nested(x, ndim - 1) for x in v) + "]"


def _flatten(v: Any) -> list:
    if not isinstance(v, list):
        return [v]
    out: list = []
    for x in v:
        out += _flatten(x)
    return out


def step_view(rec: dict, text: dict, lang: str = "en") -> dict:
    """What the page shows for one step: display strings, and the ids to highlight."""
    sent = []
    for e in rec["sent"]:
        if e["to"] is None:
            sent.append(f"[{e['input']}] {text['no_grad']}")
        else:
            sent.append(f"[{e['input']}] → {e['to']}: {_grad_text(e['grad'])}")
    acc = rec.get("accumulated")
    if acc is not None:
        if acc["stored"]:
            op = "=" if acc["fresh"] else "+="
            line = f"{acc['leaf']}.grad {op} {_grad_text(acc['added'])}"
            if not acc["fresh"] and acc["grad"] is not None:
                line += f"  → {_grad_text(acc['grad'])}"
        else:
            line = f"{acc['leaf']}: {_grad_text(acc['added'])} (autograd.grad)"
        sent.append(line)
    note = note_words(rec.get("note") or "", lang)
    if "copy" in rec:
        extra = text["copy"].format(copy=rec["copy"]["copy"] + 1, of=rec["copy"]["of"])
        note = f"{note}; {extra}" if note else extra
    return {
        "step": rec["step"], "node": rec["node"], "id": rec["shown"],
        "received": ", ".join(_grad_text(r) for r in rec["received"]) or "-",
        "sent": sent,
        "edges": [f"{rec['shown']}-{e['input']}" for e in rec["sent"]
                  if e["to"] is not None and e["grad"] is not None],
        "hooks": [hook_words(h, lang) for h in rec["hooks"]],
        "time": f"{rec['time_us']:.0f} µs", "note": note,
    }


def steps_table(trace: Any, lang: str | None = None, *, limit: int | None = None) -> str:
    """The trace's steps as an HTML table (the report page's, without its script): step,
    node, received, sent along each edge / accumulated, time. ``limit``: at most that many
    rows, and a last row that says how many more there are."""
    lang = resolve_lang(lang)
    text = page_text(lang)
    steps = [step_view(clean(r), text, lang) for r in trace.records()]
    cell = ' style="text-align:left;vertical-align:top;padding:1px 8px"'
    rows = ["<tr>" + "".join(f"<th{cell}>{html.escape(text[k])}</th>"
                             for k in ("step", "node", "received", "sent", "time")) + "</tr>"]
    for s in steps[:limit]:
        sent = "<br>".join(html.escape(x) for x in s["sent"])
        rows.append(f"<tr><td{cell}>{s['step']}</td><td{cell}>{html.escape(s['node'])}</td>"
                    f"<td{cell}>{html.escape(s['received'])}</td><td{cell}>{sent}</td>"
                    f"<td{cell}>{html.escape(s['time'])}</td></tr>")
    if limit is not None and len(steps) > limit:
        more = text["more_steps"].format(count=len(steps) - limit)
        rows.append(f"<tr><td colspan=\"5\"{cell}>{html.escape(more)}</td></tr>")
    return ("<div style=\"overflow-x:auto;max-width:100%\"><table class=\"tg-steps\" "
            "style=\"border-collapse:collapse;font-family:ui-monospace,Menlo,Consolas,"
            "monospace;font-size:0.85em\">" + "".join(rows) + "</table></div>")
