"""``tapegrad doctor SCRIPT [ARGS...]``: run a PyTorch training script and examine its gradients.

    tapegrad doctor [--out DIR] [--lang zh|en] train.py --epochs 3
      1. ``import torch`` loads tapegrad (as ``tapegrad run`` does); the script is not changed;
      2. every optimizer the script creates gets a ``Monitor`` (the doctor listens to the
         listener stack of autograd/listeners.py for the run: ``Optimizer.__init__`` announces
         each optimizer; the model is the module in the creating frame that holds its
         parameters);
      3. progress on stderr while it runs: the step and the loss backward was last called on;
      4. afterwards: the health report (table + diagnosis) on stdout, and in DIR (default
         ``tapegrad-doctor``) the plot of gradient norm per layer over the steps
         (``health.png``), the numbers (``health.json``) and a report page (``report.html``):
         the health report, the graph of the script's loss, the backward trace of its first
         step (only that one backward is traced, the others run untouched) and the plots.

The exit status is the script's (1 after an uncaught error, whose traceback starts at the
script's own frame, as ``python SCRIPT`` shows it); 2 for a usage error or a SCRIPT that cannot
be opened (one line, as for ``python``). ``-h`` / ``--help`` before SCRIPT prints the full help.
"""

from __future__ import annotations

import argparse
import html
import importlib
import inspect
import io
import json
import os
import runpy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._script import alias_torch, print_user_error
from ..autograd import listeners
from ..nn.modules.module import Module
from ._commands import _caller_frame
from .graph import frame_names
from .health import HealthReport
from .i18n import resolve_lang, t
from .monitor import Monitor
from .trace import Trace


class _Progress:
    """Step lines on stderr: every step up to 10, every 10th to 100, every 100th after."""

    def __init__(self, lang: str, label: str) -> None:
        self.lang = lang
        self.label = label
        self.last: tuple[int, float | None] | None = None
        self.shown = 0

    def __call__(self, step: int, loss: float | None) -> None:
        self.last = (step, loss)
        every = 1 if step <= 10 else 10 if step <= 100 else 100
        if step % every == 0:
            self.show(step, loss)

    def show(self, step: int, loss: float | None) -> None:
        self.shown = step
        text = (t("doctor.progress", self.lang, step=step) if loss is None
                else t("doctor.progress_loss", self.lang, step=step, loss=f"{loss:.6g}"))
        print(self.label + text, file=sys.stderr, flush=True)

    def finish(self) -> None:
        if self.last is not None and self.last[0] != self.shown:
            self.show(*self.last)


def _find_model(params: list[Any]) -> Any:
    """The module, in a frame of the script that is creating the optimizer, holding the most
    of its parameters (the model), or None."""
    wanted = {id(p) for p in params}
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    best, best_hits = None, 0
    frame = inspect.currentframe()
    while frame is not None:
        if not frame.f_code.co_filename.startswith(package):
            for value in list(frame.f_locals.values()):
                if isinstance(value, Module):
                    hits = sum(1 for p in value.parameters() if id(p) in wanted)
                    if hits > best_hits:
                        best, best_hits = value, hits
            if best is not None:
                break
        frame = frame.f_back
    return best


def _named_from_optimizer(optimizer: Any) -> list[tuple[str, Any]]:
    return [(f"param_groups[{g}][{i}]", p) for g, group in enumerate(optimizer.param_groups)
            for i, p in enumerate(group["params"])]


def _minimal_page(path: Path, title: str, reports: list[str], figures: dict[str, str]) -> None:
    body = [f"<h1>{html.escape(title)}</h1>"]
    for text in reports:
        body.append(f"<pre>{html.escape(text)}</pre>")
    for name, svg in figures.items():
        body.append(f"<h2>{html.escape(name)}</h2>")
        body.append(svg[svg.find("<svg"):] if "<svg" in svg else svg)
    page = ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>"
            f"{html.escape(title)}</title><style>body{{font-family:sans-serif;margin:2em}}"
            "pre{background:#f6f6f6;padding:1em;overflow-x:auto}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")
    path.write_text(page, encoding="utf-8")


def help_parser() -> argparse.ArgumentParser:
    """The parser whose help ``tapegrad doctor --help`` prints (``_parse`` reads the options)."""
    parser = argparse.ArgumentParser(
        prog="tapegrad doctor",
        usage="tapegrad doctor [-h] [--out DIR] [--lang zh|en] SCRIPT [ARGS ...]",
        description="Run a PyTorch training script on tapegrad, unchanged, with the gradient "
                    "health monitor on every optimizer it creates; then print the health "
                    "report (a table per layer and a diagnosis in words) and write the plot "
                    "of gradient norm per layer over the steps, the numbers and a report page.",
        epilog="Written into DIR: health.png (needs matplotlib), health.json and report.html "
               "(the report, the graph of the loss, the backward pass of the first step, "
               "the plot).\n"
               "Exit status: the script's (1 after an uncaught error); 2 for a usage error or "
               "a SCRIPT that cannot be opened.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", metavar="DIR",
                        help="where to write the results (default: ./tapegrad-doctor)")
    parser.add_argument("--lang", metavar="zh|en",
                        help="language of the report (default: $TAPEGRAD_LANG, else the locale)")
    parser.add_argument("script", metavar="SCRIPT", help="the training script to run")
    parser.add_argument("args", metavar="ARGS", nargs="*", help="the script's arguments")
    return parser


def _parse(argv: list[str]) -> tuple[dict[str, str], list[str]] | str | None:
    """(options, [SCRIPT, ARGS...]); "help" for -h/--help before SCRIPT; None: a usage error."""
    opts: dict[str, str] = {}
    args = list(argv)
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-h", "--help"):
            return "help"
        name, _, value = flag.partition("=")
        if name not in ("--out", "--lang"):
            return None
        if not value:
            if not args:
                return None
            value = args.pop(0)
        opts[name[2:]] = value
    if not args:
        return None
    return opts, args


class _Doctor(listeners.Listener):
    """What the doctor hears of the script while it runs: each optimizer it creates (a
    ``Monitor`` watches it) and its first ``autograd.backward`` (``loss.backward()`` too),
    which runs inside a trace (the report page's step); the following ones run untouched."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.monitors: list[tuple[Any, Monitor, _Progress]] = []
        self.traced: list[Trace] = []
        self.backward_seen = False

    def optimizer_created(self, optimizer: Any) -> None:
        all_params = [p for group in optimizer.param_groups for p in group["params"]]
        model = _find_model(all_params)
        index = len(self.monitors) + 1
        progress = _Progress(self.lang, "" if index == 1 else f"[{index}]")
        target = model if model is not None else _named_from_optimizer(optimizer)
        monitor = Monitor(target, optimizer, lang=self.lang, on_step=progress)
        self.monitors.append((optimizer, monitor, progress))

    def run_autograd_backward(self, tensors: Any, run: Callable) -> Any:
        if self.backward_seen:
            return run()
        self.backward_seen = True
        params = dict(self.monitors[0][1].named) if self.monitors else None
        tr = Trace(params, names=frame_names(_caller_frame()), lang=self.lang)
        with tr:
            out = run()
        self.traced.append(tr)
        return out


def doctor_command(argv: list[str]) -> int:
    """Run ``tapegrad doctor`` with ``argv`` (the words after ``doctor``); the exit status."""
    parsed = _parse(argv)
    if parsed == "help":
        help_parser().print_help()
        return 0
    if parsed is None or isinstance(parsed, str):
        print(t("doctor.usage", resolve_lang(_lang_in(argv))), file=sys.stderr)
        return 2
    opts, args = parsed
    try:
        lang = resolve_lang(opts.get("lang"))
    except ValueError as e:
        print(f"tapegrad doctor: {e}", file=sys.stderr)
        return 2
    out_dir = Path(opts.get("out", "tapegrad-doctor"))
    script = args[0]
    if not os.path.isfile(script):
        print(t("cli.cant_open", lang, command="doctor", script=script), file=sys.stderr)
        return 2

    saved_modules = {n: m for n, m in sys.modules.items() if n == "torch" or
                     n.startswith("torch.")}
    saved_argv, saved_path = sys.argv, list(sys.path)
    doctor = _Doctor(lang)

    print(t("doctor.running", lang, script=script), file=sys.stderr, flush=True)
    code = 0
    listeners.push(doctor)
    try:
        alias_torch()
        sys.argv = list(args)
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except BaseException as e:  # noqa: BLE001  (the script's error: report it, keep the findings)
        print_user_error(e, script)
        print(t("doctor.error", lang, error=f"{type(e).__name__}: {e}"), file=sys.stderr)
        code = 130 if isinstance(e, KeyboardInterrupt) else 1
    finally:
        listeners.pop(doctor)
        for _, monitor, progress in doctor.monitors:
            monitor.detach()
            progress.finish()
        sys.argv, sys.path[:] = saved_argv, saved_path
        for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
            del sys.modules[name]
        sys.modules.update(saved_modules)

    _write_results(doctor.monitors, out_dir, script, lang,
                   doctor.traced[0] if doctor.traced else None)
    if code:
        print(t("doctor.exit", lang, code=code), file=sys.stderr)
    return code


def _lang_in(argv: list[str]) -> str | None:
    for i, word in enumerate(argv):
        if word == "--lang" and i + 1 < len(argv):
            return argv[i + 1] if argv[i + 1][:2] in ("zh", "en") else None
        if word.startswith("--lang="):
            value = word.partition("=")[2]
            return value if value[:2] in ("zh", "en") else None
    return None


def _write_results(monitors: list[tuple[Any, Monitor, _Progress]], out_dir: Path, script: str,
                   lang: str, trace: Any = None) -> None:
    if not monitors:
        print(t("doctor.no_optimizer", lang))
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    texts: list[str] = []
    reports: list[HealthReport] = []
    figures: dict[str, str] = {}
    for index, (optimizer, monitor, _) in enumerate(monitors, 1):
        report = monitor.report(lang)
        reports.append(report)
        text = str(report)
        if len(monitors) > 1:
            text = t("doctor.optimizer", lang, index=index, name=type(optimizer).__name__) + (
                "\n" + text)
        texts.append(text)
        print()
        print(text)
    suffix = [""] if len(monitors) == 1 else [f"-{i}" for i in range(1, len(monitors) + 1)]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(t("doctor.no_plot", lang), file=sys.stderr)
    else:
        for (_, monitor, _), end in zip(monitors, suffix, strict=True):
            png = out_dir / f"health{end}.png"
            fig = monitor.plot(str(png), lang=lang)
            print(t("doctor.wrote", lang, path=png))
            title = t("monitor.plot_title", lang) + (f" {end[1:]}" if end else "")
            buf = io.StringIO()
            fig.savefig(buf, format="svg")
            figures[title] = buf.getvalue()
    data = [{"optimizer": type(o).__name__, "history": m.history, "report": r.to_dict()}
            for (o, m, _), r in zip(monitors, reports, strict=True)]
    json_path = out_dir / "health.json"
    json_path.write_text(json.dumps(data, ensure_ascii=False, default=_plain, indent=1),
                         encoding="utf-8")
    print(t("doctor.wrote", lang, path=json_path))
    page = out_dir / "report.html"
    try:  # the report page, where tapegrad.show.report exists
        report_page: Any = importlib.import_module(__package__ + ".report")
    except ImportError:
        report_page = None
    title = t("doctor.page_title", lang, script=os.path.basename(script))
    if report_page is not None and hasattr(report_page, "write_report"):
        heading = t("health.title", lang)
        sections: dict[str, Any] = {
            heading if len(reports) == 1 else f"{heading}: " + t(
                "doctor.optimizer", lang, index=k, name=type(o).__name__): report
            for k, ((o, _, _), report) in enumerate(zip(monitors, reports, strict=True), 1)}
        report_page.write_report(str(page), trace=trace, figures=figures, title=title,
                                 lang=lang, text=sections)
    else:
        _minimal_page(page, title, texts, figures)
    print(t("doctor.wrote", lang, path=page))


def _plain(x: Any) -> Any:
    if isinstance(x, tuple):
        return list(x)
    if hasattr(x, "item"):
        return x.item()
    return str(x)


__all__ = ["doctor_command"]
