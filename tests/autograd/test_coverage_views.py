"""The coverage list of torch's views share (see tests/autograd/coverage/views.tsv).

``coverage/test_view_ops.names`` lists every test function of torch's test/test_view_ops.py
(commit 9c491bc34c6ab131b18cf51db02636d65ffd3472) as ``Class.test_name``; ``coverage/views.tsv``
accounts for each of them and for the views share of test/test_autograd.py (commit
5c322af10e52e4d236104ceefd542f34e6dcf20a): the whole class TestAutogradInferenceMode and every
test of another class whose name matches ``VIEWS_SHARE``. One line per torch test:

    file.py::Class.test_name <TAB> ported <TAB> tests/autograd/test_x.py::test_y
    file.py::Class.test_name <TAB> out-of-scope <TAB> reason

The rest of test_autograd.py is the API share (coverage/api.tsv); coverage/test_autograd.names
lists all its test functions.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COVERAGE = Path(__file__).resolve().parent / "coverage"

VIEWS_SHARE = re.compile(
    r"view|inplace|in_place|inference|grad_mode|no_grad|enable_grad|set_grad|version|detach|"
    r"as_strided|copy_slices|rebase|base|dirty",
    re.IGNORECASE,
)
FILES = ("test_view_ops.py", "test_autograd.py")


def _rows() -> list[list[str]]:
    lines = (COVERAGE / "views.tsv").read_text().splitlines()
    return [line.split("\t") for line in lines if line.strip()]


def _accounted(file: str) -> set[str]:
    return {row[0].removeprefix(f"{file}::") for row in _rows() if row[0].startswith(f"{file}::")}


def _views_share(name: str) -> bool:
    cls, test = name.split(".", 1)
    return cls == "TestAutogradInferenceMode" or bool(VIEWS_SHARE.search(test))


def test_view_ops_names_file_is_sorted_and_unique():
    names = (COVERAGE / "test_view_ops.names").read_text().split()
    assert names == sorted(set(names))
    assert all(re.fullmatch(r"Test\w+\.test_\w+", n) for n in names)


def test_every_row_is_ported_to_an_existing_test_or_has_a_reason():
    rows = _rows()
    assert len({row[0] for row in rows}) == len(rows), "a torch test is listed twice"
    for row in rows:
        assert len(row) == 3, row
        name, status, what = row
        file, _, test = name.partition("::")
        assert file in FILES and re.fullmatch(r"Test\w+\.test_\w+", test), row
        if status == "out-of-scope":
            assert len(what) > 10, row
            continue
        assert status == "ported", row
        path, _, function = what.partition("::")
        source = ROOT / path
        assert path.startswith("tests/autograd/") and source.is_file(), row
        assert re.search(rf"^def {re.escape(function)}\(", source.read_text(), re.MULTILINE), row


def test_every_view_ops_name_is_accounted_for():
    names = set((COVERAGE / "test_view_ops.names").read_text().split())
    accounted = _accounted("test_view_ops.py")
    assert not names - accounted, f"not in views.tsv: {sorted(names - accounted)}"
    assert not accounted - names, f"not tests of test_view_ops.py: {sorted(accounted - names)}"


def test_the_autograd_rows_are_the_views_share():
    accounted = _accounted("test_autograd.py")
    outside = [n for n in accounted if not _views_share(n)]
    assert not outside, f"views.tsv accounts for the API share's tests: {outside}"
    names = set((COVERAGE / "test_autograd.names").read_text().split())
    share = {n for n in names if _views_share(n)}
    assert not share - accounted, f"not in views.tsv: {sorted(share - accounted)}"
    assert not accounted - names, f"not tests of test_autograd.py: {accounted - names}"
