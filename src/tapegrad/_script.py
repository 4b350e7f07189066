"""Running a user's PyTorch program as ``python SCRIPT`` would, ``torch`` being tapegrad.

``run_script`` is what ``tapegrad run SCRIPT`` does (``_cli.py``), and what each rank that the
launcher starts does with the user's script (``distributed/_rank.py``): ``torch`` and
``torchvision`` aliased to tapegrad first (``alias_torch``, through ``_torch_alias.py``), the
script run as ``__main__`` with its own ``sys.argv``, and python's exit status back.
``tapegrad graph`` and ``tapegrad doctor`` (``show/``) run a script their own way and report
its end as these do: ``print_user_error`` prints a traceback from the script's own first frame
on, ``exit_code`` is the status of a ``SystemExit``. ``cant_open`` is the one line for a script
that is not there.
"""

from __future__ import annotations

import os
import runpy
import sys
import traceback
from collections.abc import Callable, Sequence
from types import TracebackType

from ._torch_alias import install

__all__ = ["alias_torch", "cant_open", "exit_code", "print_user_error", "run_script"]


def alias_torch() -> None:
    """Make ``import torch`` and ``import torchvision`` (and their submodules) import tapegrad.

    A real torch imported before is dropped from ``sys.modules`` first (``_torch_alias.py``).
    """
    install()


def _user_traceback(tb: TracebackType | None, script: str) -> TracebackType | None:
    """The part of ``tb`` that starts at the first frame of ``script`` (our frames dropped).

    ``None`` when no frame is the script's (a syntax error found while compiling it: the error
    itself names the file and line)."""
    while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != script:
        tb = tb.tb_next
    return tb


def print_user_error(exc: BaseException, script: str) -> None:
    """Print the traceback of an exception a user's script raised, as ``python script.py``
    would: from the script's own first frame on (the CLI's frames, runpy's and the
    commands' are dropped)."""
    exc.__traceback__ = _user_traceback(exc.__traceback__, os.path.abspath(script))
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    sys.stderr.flush()


def cant_open(command: str, path: str) -> str:
    """The one line ``tapegrad run``/``graph``/``doctor`` print for a script that is not there
    (python's own wording; the status is 2, as ``python missing.py`` gives)."""
    return f"tapegrad {command}: can't open file {path!r}: [Errno 2] No such file or directory"


def exit_code(exc: SystemExit) -> int:
    """The process status ``python`` gives for ``raise SystemExit(code)``."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"): printed, status 1
    return 1


def run_script(path: str, argv: Sequence[str] = (), *, alias: bool = True,
               on_error: Callable[[BaseException], None] | None = None) -> int:
    """Run the Python program at ``path`` as ``__main__`` with ``sys.argv == [path, *argv]``.

    ``torch`` is aliased to tapegrad first (``alias=False`` skips it). Returns the exit status:
    0 when the script ends, the code of its ``SystemExit``, 1 after an uncaught exception (its
    traceback, printed to stderr, starts at the script's own code), 130 after Ctrl-C, 2 when the
    file cannot be opened (a one-line message). ``sys.argv`` and ``sys.path`` are restored after.
    ``on_error(exc)`` is called with an uncaught exception before it is printed (the launcher's
    ranks report it).
    """
    script = os.path.abspath(path)
    if not os.path.exists(script):
        print(cant_open("run", path), file=sys.stderr)
        return 2
    if alias:
        alias_torch()
    saved_argv, saved_path = sys.argv, list(sys.path)
    sys.argv = [path, *argv]
    sys.path.insert(0, script if os.path.isdir(script) else os.path.dirname(script))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        return exit_code(exc)
    except KeyboardInterrupt as exc:
        if on_error is not None:
            on_error(exc)
        print_user_error(exc, script)
        return 130  # 128 + SIGINT, the status a shell reports for a program stopped by Ctrl-C
    except BaseException as exc:  # noqa: BLE001 - the user's error, reported as python would
        if on_error is not None:
            on_error(exc)
        print_user_error(exc, script)
        return 1
    finally:
        sys.argv = saved_argv
        sys.path[:] = saved_path
    return 0
