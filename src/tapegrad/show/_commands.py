"""``tapegrad graph SCRIPT [ARGS...] [--out FILE]``: draw the graph of a script's first loss.

The script runs as ``tapegrad run`` runs it (``torch`` aliased to tapegrad), until it first
calls ``backward`` (``loss.backward()`` or ``torch.autograd.backward``): there the graph of
that loss is taken, with leaves named after the script's variables (``model.0.weight``), the
text tree is printed, the picture written, and the script is stopped before the backward
pass runs.

Options, before SCRIPT or as the last arguments: ``--out FILE`` (.svg, .png, .pdf or .dot;
default ``<script>.graph.svg``), ``--max-depth N``, ``--no-collapse``, ``--lang zh|en`` (the
words of the tree and the messages; default ``TAPEGRAD_LANG``, else the locale).
"""

from __future__ import annotations

import os
import runpy
import sys
from pathlib import Path
from typing import Any

from .i18n import resolve_lang, t


class _Stop(BaseException):
    """Raised out of the script at its first backward (a BaseException, so that the script's
    own ``except Exception`` does not catch it)."""


def _parse(argv: list[str]) -> tuple[dict, list[str]] | None:
    opts: dict[str, Any] = {"out": None, "max_depth": None, "collapse": True, "lang": None}
    args = list(argv)
    # trailing --out FILE (after the script's own arguments)
    if len(args) >= 3 and args[-2] == "--out":
        opts["out"] = args[-1]
        args = args[:-2]
    while args and args[0].startswith("--"):
        flag = args.pop(0)
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
    import tapegrad

    root = os.path.dirname(os.path.abspath(tapegrad.__file__))
    f: Any = sys._getframe(2)
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(root):
        f = f.f_back
    return f


def graph_command(argv: list[str]) -> int:
    """Run ``tapegrad graph`` with ``argv`` (the arguments after ``graph``); the exit code."""
    parsed = _parse(argv)
    if parsed is None:
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
        print(t("graphcmd.no_script", lang, script=script), file=sys.stderr)
        return 2
    out = Path(opts["out"] or (Path(script).stem + ".graph.svg"))

    from .. import autograd
    from .._cli import alias_torch
    from .graph import GraphView, GraphvizMissing, frame_names

    captured: dict[str, Any] = {}
    original = autograd.backward

    def first_backward(tensors: Any, *rest: Any, **kwargs: Any) -> None:
        frame = _caller_frame()
        captured["view"] = GraphView(tensors, max_depth=opts["max_depth"],
                                     collapse=opts["collapse"], names=frame_names(frame))
        raise _Stop

    saved_modules = {k: v for k, v in sys.modules.items() if k == "torch" or
                     k.startswith("torch.")}
    saved_argv, saved_path = sys.argv, list(sys.path)
    autograd.backward = first_backward  # type: ignore[assignment]
    try:
        alias_torch()
        sys.argv = [script, *args[1:]]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        try:
            runpy.run_path(script, run_name="__main__")
        except _Stop:
            pass
    finally:
        autograd.backward = original  # type: ignore[assignment]
        sys.argv = saved_argv
        sys.path[:] = saved_path
        for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
            del sys.modules[k]
        sys.modules.update(saved_modules)

    view = captured.get("view")
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
