"""Turn a textbook chapter into the script a reader runs: its PyTorch code cells, in order.

The textbook programs of the corpus (``d2lzh_*`` from d2l-ai/d2l-zh, ``diveintodl_*`` from
ShusenTang/Dive-into-DL-PyTorch; SOURCES.md) were made by this script from the chapter as
published, then committed unchanged before any edit:

* a d2l-zh chapter is Markdown: its code cells are the ```` ```{.python .input} ```` blocks, and
  a block belongs to PyTorch when its first line is a ``#@tab`` line naming ``pytorch`` or
  ``all`` (an untagged block is MXNet's, d2lbook's default);
* a Dive-into-DL chapter is a Jupyter notebook: its code cells, in order.

A reader sees what a notebook displays, so the script prints it too: when a cell ends with an
expression (not silenced by a trailing ``;``), the script prints its value's ``repr`` unless it
is ``None``, as Jupyter does. IPython's ``%`` magics (``%matplotlib inline``, ``%time``) are not
Python: their lines (a ``%`` or ``!`` in the first column) become comments.

    python tests/programs/extract_book.py CHAPTER.md|CHAPTER.ipynb > corpus/NAME.py
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

_FENCE = re.compile(r"^```\{\.python \.input[^}]*\}\s*$")
_TAB = re.compile(r"^#@tab\s+(.*)$")


def markdown_cells(text: str) -> list[str]:
    """The PyTorch code cells of a d2l-zh chapter."""
    cells: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if _FENCE.match(lines[i]):
            j = i + 1
            while not lines[j].startswith("```"):
                j += 1
            body = lines[i + 1:j]
            tab = _TAB.match(body[0].strip()) if body else None
            tabs = {t.strip() for t in tab.group(1).split(",")} if tab else {"mxnet"}
            if "pytorch" in tabs or "all" in tabs:
                cells.append("\n".join(body[1:] if tab else body))
            i = j + 1
        else:
            i += 1
    return cells


def notebook_cells(text: str) -> list[str]:
    """The code cells of a Jupyter notebook."""
    notebook = json.loads(text)
    return ["".join(cell["source"]) for cell in notebook["cells"]
            if cell["cell_type"] == "code"]


def _uncomment_magics(cell: str) -> str:
    return "\n".join("# " + line if line.startswith(("%", "!")) else line
                     for line in cell.splitlines())


def script_of_cell(cell: str) -> str:
    """One cell as script lines, its displayed value printed as Jupyter displays it."""
    cell = _uncomment_magics(cell).rstrip()
    if not cell.strip():
        return ""
    tree = ast.parse(cell)
    if not tree.body or not isinstance(tree.body[-1], ast.Expr) or cell.endswith(";"):
        return cell
    last = tree.body[-1]
    lines = cell.splitlines()
    head = "\n".join(lines[:last.lineno - 1])
    expr = "\n".join(lines[last.lineno - 1:])
    shown = (f"_cell_value = {expr.strip()}\n"
             "if _cell_value is not None:\n    print(repr(_cell_value))")
    return (head + "\n" if head else "") + shown


def extract(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    cells = notebook_cells(text) if path.suffix == ".ipynb" else markdown_cells(text)
    parts = [script_of_cell(cell) for cell in cells]
    return "\n\n".join(part for part in parts if part) + "\n"


if __name__ == "__main__":
    sys.stdout.write(extract(Path(sys.argv[1])))
