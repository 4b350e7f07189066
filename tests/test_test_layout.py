"""The test tree itself: pytest imports each test module by its file name alone (the folders
have no ``__init__.py``), so two test files with one name make the whole run stop at
collection."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_test_file_names_are_unique() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        if "corpus" not in path.parts:
            where[path.name].append(str(path.relative_to(TESTS)))
    assert {name: paths for name, paths in where.items() if len(paths) > 1} == {}
