"""The ``tapegrad`` command line: ``tapegrad run``, ``tapegrad demo`` and the commands that plug in.

``tapegrad COMMAND [ARGS...]`` (or ``python -m tapegrad COMMAND [ARGS...]``). Each command is one
line of ``COMMANDS``: its name, a one-line summary for ``tapegrad --help``, and where its function
lives as ``"module:function"``. The function takes the arguments after the command's name and
returns the exit status; it is imported only when the command runs, so a command whose module is
not installed says so instead of breaking the others.

``tapegrad run SCRIPT [ARGS...]`` runs a PyTorch program on tapegrad, unchanged: ``torch`` and
``torch.<submodule>`` are aliased to ``tapegrad`` and its submodules (``torchvision`` to
``tapegrad.vision``) before the script starts, so ``import torch`` / ``import torch.nn as nn`` /
``from torch.utils.data import DataLoader`` load tapegrad. The script sees
``sys.argv == [SCRIPT, ARGS...]``: everything after SCRIPT is its own, even ``--help``. The exit
status is the one ``python SCRIPT`` would give: 0, the code of a ``SystemExit`` it raises, 1 after
an uncaught exception (whose traceback starts at the script's own frame, not at this module's or
runpy's), 130 after Ctrl-C; a script that cannot be opened is a usage error (2), as for ``python``,
with one line that ``tapegrad graph`` and ``tapegrad doctor`` word the same way
(``cant_open``). The running itself is ``_script.run_script``, which the launcher's ranks use too.

``tapegrad help [COMMAND]`` is ``tapegrad --help`` (``tapegrad COMMAND --help``); ``-V`` is
``--version``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ._script import exit_code, run_script
from .torch_version import TAPEGRAD_VERSION, TORCH_API_VERSION

__all__ = ["COMMANDS", "main"]


def run_command(argv: Sequence[str]) -> int:
    """``tapegrad run [-h] SCRIPT [ARGS...]``."""
    parser = argparse.ArgumentParser(
        prog="tapegrad run",
        description="Run a PyTorch program on tapegrad, unchanged: `import torch` in the script "
                    "(and every `torch.<submodule>`) imports tapegrad.",
        epilog="Everything after SCRIPT goes to the script untouched, --help included.\n"
               "Exit status: the script's own (0, its sys.exit code, 1 after an uncaught "
               "error, 130 after Ctrl-C); 2 when SCRIPT cannot be opened.\n\n"
               "Several ranks: tapegrad run --nproc-per-node N [torchrun's options] SCRIPT "
               "(see python -m tapegrad.distributed.run --help).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("script", metavar="SCRIPT", help="the Python file to run")
    parser.add_argument("args", metavar="ARGS", nargs="*",
                        help="arguments for the script (its sys.argv[1:])")
    argv = list(argv)
    if argv and argv[0].startswith("-") and argv[0] not in ("-", "--", "-h", "--help"):
        # torchrun's options (--nproc-per-node...): the launcher starts the ranks
        from .distributed.run import main as launch

        return launch(argv, prog="tapegrad run")
    # Options are ours only before SCRIPT: the first argument that is not an option (or the
    # first one after "--") is the script, and everything after it belongs to the script.
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-":
        i += 1
        if argv[i - 1] == "--":
            break
    own, rest = [a for a in argv[:i] if a != "--"], argv[i:]
    if not rest:
        if "-h" in own or "--help" in own:
            parser.print_help()
            return 0
        parser.error("the following arguments are required: SCRIPT")
    parser.parse_args([*own, "--", rest[0]])  # -h prints help; a bad option is an error (2)
    return run_script(rest[0], rest[1:])


# ---------------------------------------------------------------------------------------------
# the command table


class Command(NamedTuple):
    summary: str
    target: str | Callable[[Sequence[str]], int]  # "module:function", imported when run


COMMANDS: dict[str, Command] = {
    "run": Command("run a PyTorch script on tapegrad, unchanged", run_command),
    "demo": Command("train a small GPT on a bundled text (about a minute, no network)",
                    "tapegrad.demo:demo_command"),
    "graph": Command("draw the graph of the first loss a script calls backward() on",
                     "tapegrad.show._commands:graph_command"),
    "doctor": Command("run a training script with the gradient health monitor, then report",
                      "tapegrad.show.doctor:doctor_command"),
    "precision": Command("train one small model in float32, float16, float16 + GradScaler and "
                         "bfloat16, side by side", "tapegrad.show.precision:precision_command"),
    "help": Command("show this help, or a command's: tapegrad help COMMAND",
                    lambda argv: help_command(argv)),
}


def help_command(argv: Sequence[str]) -> int:
    """``tapegrad help [COMMAND]``: the help of tapegrad, or of one command (its --help)."""
    if not argv:
        _parser().print_help()
        return 0
    if argv[0] not in COMMANDS or argv[0] == "help":
        if argv[0] == "help":
            _parser().print_help()
            return 0
        print(f"tapegrad help: no command {argv[0]!r} (commands: "
              f"{', '.join(n for n in COMMANDS if n != 'help')})", file=sys.stderr)
        return 2
    return main([argv[0], "--help"])


def _load(name: str, target: str) -> Callable[[Sequence[str]], int] | None:
    module_name, _, func = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing == "tapegrad" or missing.startswith("tapegrad."):
            if not (module_name == missing or module_name.startswith(missing + ".")):
                raise  # a tapegrad module the command imports is missing: a real error
            print(f"tapegrad {name}: this command is not available in this installation "
                  f"({module_name} is not installed)", file=sys.stderr)
        else:  # a third-party package the command needs
            print(f"tapegrad {name}: this command needs the Python package {missing!r}, which "
                  f"is not installed", file=sys.stderr)
        return None
    return getattr(module, func)  # type: ignore[no-any-return]


def _version() -> str:
    return f"tapegrad {TAPEGRAD_VERSION} (PyTorch {TORCH_API_VERSION} API)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tapegrad",
        description="PyTorch's autograd and training in plain Python on NumPy. "
                    "`import tapegrad as torch`, or run a PyTorch script as it is.",
        epilog="examples:\n"
               "  tapegrad demo                 train a small GPT, write pictures to "
               "~/.cache/tapegrad/demo/\n"
               "  tapegrad run train.py --lr 3e-4\n"
               "  tapegrad COMMAND --help       help on one command (or: tapegrad help COMMAND)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-V", "--version", action="version", version=_version(),
                        help="print tapegrad's version and the PyTorch API it follows")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND")
    for name, command in COMMANDS.items():
        sub.add_parser(name, help=command.summary, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``tapegrad COMMAND [ARGS...]``; returns the exit status.

    With no arguments it prints the help and exits 0: a newcomer typing ``tapegrad`` asked what
    it can do, which is not an error (as for ``pip``). An unknown command or option is a usage
    error: argparse's message and status 2.
    """
    args = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    if not args:
        parser.print_help()
        return 0
    command = COMMANDS.get(args[0])
    if command is None:
        try:
            parser.parse_args(args)  # --help, --version, or an error: all end here
        except SystemExit as exc:
            return exit_code(exc)
        parser.print_help()
        return 0
    func = command.target
    if isinstance(func, str):
        loaded = _load(args[0], func)
        if loaded is None:
            return 1
        func = loaded
    try:
        return int(func(args[1:]) or 0)
    except SystemExit as exc:  # a command's own argparse: --help (0) or a usage error (2)
        return exit_code(exc)
    except KeyboardInterrupt:  # Ctrl-C in a command (the user's script has its own handling)
        print(f"\ntapegrad {args[0]}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
