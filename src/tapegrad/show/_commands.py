"""``tapegrad graph SCRIPT [ARGS...] [--out FILE]``: draw the graph of a script's first loss.

The script runs as ``tapegrad run`` runs it (``torch`` aliased to tapegrad), until it first
calls ``backward`` (``loss.backward()`` or ``torch.autograd.backward``): there the graph of
that loss is taken, with leaves named after the script's variables (``model.0.weight``), the
text tree is printed, the picture written, and the script is stopped before the backward
pass runs.

Options, before SCRIPT or as the last arguments: ``--out FILE`` (.svg, .png, .pdf or .dot;
default ``<script>.graph.svg``), ``--max-depth N``, ``--no-collapse``, ``--lang zh|en`` (the
words of the tree and the messages; default ``TAPEGRAD_LANG``, else the locale); ``-h`` or
``--help`` before SCRIPT prints the full help. A missing SCRIPT is one line and status 2 (as for
``python``); an error in the script prints its traceback from the script's own frame on, as
``python SCRIPT`` shows it, and the status is 1.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tapegrad

from .._script import alias_torch, exit_code, print_user_error
from ..autograd import listeners
from .graph import GraphView, GraphvizMissing, frame_names
from .i18n import resolve_lang, t


class _Stop(BaseException):
    """Raised out of the script at its first backward (a BaseException, so that the script's
    own ``except Exception`` does not catch it)."""


class _FirstBackward(listeners.Listener):
    """Heard while ``tapegrad graph`` runs the script: at its first ``autograd.backward``
    (``loss.backward()`` too), keeps the graph of what it was called on (``view``) and stops
    the script (``_Stop``) before the backward runs."""

    def __init__(self, max_depth: Any, collapse: Any) -> None:
        self.max_depth = max_depth
        self.collapse = collapse
        self.view: Any = None

    def run_autograd_backward(self, tensors: Any, run: Callable) -> Any:
        self.view = GraphView(tensors, max_depth=self.max_depth, collapse=self.collapse,
                              names=frame_names(_caller_frame()))
        raise _Stop


def help_parser() -> argparse.ArgumentParser:
    """The parser whose help ``tapegrad graph --help`` prints (the options are read by
    ``_parse``, which also takes ``--out FILE`` after the script's own arguments)."""
    parser = argparse.ArgumentParser(
        prog="tapegrad graph",
        usage="tapegrad graph [-h] [--out FILE] [--max-depth N] [--no-collapse] [--lang zh|en] "
              "SCRIPT [ARGS ...]\n       tapegrad graph SCRIPT [ARGS ...] [--out FILE]",
        description="Run a PyTorch script on tapegrad until it first calls backward(); print "
                    "the graph of that loss as a text tree, draw it, and stop the script "
                    "before the backward pass runs. Leaves are named after the script's "
                    "variables (model.0.weight).",
        epilog="The picture needs Graphviz's dot program (apt install graphviz, brew install "
               "graphviz); without it the DOT source is written instead.\n"
               "Exit status: 0 when the picture is written; 1 when the script ends without "
               "calling backward or fails; 2 for a usage error or a SCRIPT that cannot be "
               "opened.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", metavar="FILE",
                        help="the picture: .svg, .png, .pdf or .dot (default: "
                             "<script>.graph.svg); may also come last, after ARGS")
    parser.add_argument("--max-depth", metavar="N", type=int,
                        help="draw the graph down to N nodes below the loss")
    parser.add_argument("--no-collapse", action="store_true",
                        help="draw every copy of a repeated block (default: the first copy, "
                             "marked ×N)")
    parser.add_argument("--lang", metavar="zh|en",
                        help="language of the tree and the messages (default: $TAPEGRAD_LANG, "
                             "else the locale)")
    parser.add_argument("script", metavar="SCRIPT", help="the Python file to run")
    parser.add_argument("args", metavar="ARGS", nargs="*", help="the script's arguments")
    return parser


def _parse(argv: list[str]) -> tuple[dict, list[str]] | str | None:
    """(options, [SCRIPT, ARGS...]); "help" for -h/--help before SCRIPT; None: a usage error."""
    opts: dict[str, Any] = {"out": None, "max_depth": None, "collapse": True, "lang": None}
    args = list(argv)
    # trailing --out FILE (after the script's own arguments)
    if len(args) >= 3 and args[-2] == "--out":
        opts["out"] = args[-1]
        args = args[:-2]
    while args and args[0].startswith("-"):
        flag = args.pop(0)
        if flag in ("-h", "--help"):
            return "help"
        if flag == "--no-collapse":
            opts["collapse"] = False
        elif flag in ("--out", "--max-depth", "--lang") and args:
            value = args.pop(0)
            if flag == "--out":
                opts["out"] = value
            elif flag == "--lang":
                opts["lang"] = value
            else:
                try:
                    opts["max_depth"] = int(value)
                except ValueError:
                    return None
        else:
            return None
    if not args:
        return None
    return opts, args


def _caller_frame() -> Any:
    """The first frame outside tapegrad: where the script called backward."""
    root = os.path.dirname(os.path.abspath(tapegrad.__file__))
    f: Any = sys._getframe(2)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(root):
        f = f.f_back
    return f


def graph_command(argv: list[str]) -> int:
    """Run ``tapegrad graph`` with ``argv`` (the arguments after ``graph``); the exit code."""
    parsed = _parse(argv)
    if parsed == "help":
        help_parser().print_help()
        return 0
    if parsed is None or isinstance(parsed, str):
        print(t("graphcmd.usage", _lang_or_default(argv)), file=sys.stderr)
        return 2
    opts, args = parsed
    try:
        lang = resolve_lang(opts["lang"])
    except ValueError as e:
        print(f"tapegrad graph: {e}", file=sys.stderr)
        return 2
    script = args[0]
    if not os.path.isfile(script):
        print(t("cli.cant_open", lang, command="graph", script=script), file=sys.stderr)
        return 2
    out = Path(opts["out"] or (Path(script).stem + ".graph.svg"))

    first = _FirstBackward(opts["max_depth"], opts["collapse"])
    saved_modules = {k: v for k, v in sys.modules.items() if k == "torch" or
                     k.startswith("torch.")}
    saved_argv, saved_path = sys.argv, list(sys.path)
    listeners.push(first)
    try:
        alias_torch()
        sys.argv = [script, *args[1:]]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        try:
            runpy.run_path(script, run_name="__main__")
        except _Stop:
            pass
        except SystemExit as exc:  # the script ended itself before any backward
            if first.view is None:
                code = exit_code(exc)
                if code:
                    return code
        except KeyboardInterrupt as exc:
            print_user_error(exc, script)
            return 130
        except Exception as exc:  # noqa: BLE001 - the script's error, shown as python would
            print_user_error(exc, script)
            return 1
    finally:
        listeners.pop(first)
        sys.argv = saved_argv
        sys.path[:] = saved_path
        for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
            del sys.modules[k]
        sys.modules.update(saved_modules)

    view = first.view
    if view is None:
        print(t("graphcmd.no_backward", lang, script=script), file=sys.stderr)
        return 1
    print(view.text(lang=lang))
    try:
        view.render(out)
    except GraphvizMissing as e:
        dot = out.with_suffix(".dot")
        dot.write_text(view.dot(), encoding="utf-8")
        print(f"tapegrad graph: {e}\n" + t("graphcmd.dot_kept", lang, path=dot),
              file=sys.stderr)
        return 1
    print("\n" + t("graphcmd.wrote", lang, path=out))
    return 0


def _lang_or_default(argv: list[str]) -> str:
    """The language of the usage message: a valid ``--lang`` among ``argv``, else the default."""
    for i, word in enumerate(argv[:-1]):
        if word == "--lang" and argv[i + 1][:2] in ("zh", "en"):
            return argv[i + 1][:2]
    return resolve_lang(None) if os.environ.get("TAPEGRAD_LANG", "")[:2] in ("", "zh", "en") \
        else "en"
