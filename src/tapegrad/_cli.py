"""``tapegrad run SCRIPT [ARGS...]``: run a PyTorch program on tapegrad, unchanged.

``torch`` and ``torch.<submodule>`` are aliased to ``tapegrad`` and its submodules in
``sys.modules`` before the script starts, so ``import torch`` / ``import torch.nn as nn`` /
``from torch.utils.data import DataLoader`` load tapegrad.
"""

from __future__ import annotations

import importlib
import pkgutil
import runpy
import sys


def alias_torch() -> None:
    """Make ``import torch`` (and its submodules) import tapegrad.

    Every ``torch`` entry already in ``sys.modules`` (a real torch imported before) is dropped
    first, so that no ``torch.<submodule>`` of another library is found later.
    """
    import tapegrad

    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    sys.modules["torch"] = tapegrad
    for info in pkgutil.walk_packages(tapegrad.__path__, "tapegrad."):
        if info.name.endswith("__main__") or info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional part whose package is absent (utils.tensorboard)
            continue
        sys.modules["torch" + info.name[len("tapegrad"):]] = module


USAGE = "usage: tapegrad run SCRIPT [ARGS...]\n       python -m tapegrad run SCRIPT [ARGS...]"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2 or args[0] != "run":
        print(USAGE, file=sys.stderr)
        return 2
    script = args[1]
    alias_torch()
    sys.argv = [script, *args[2:]]
    sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(script)))
    runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
