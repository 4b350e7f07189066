"""The coverage list of torch's test_autograd.py, API share (see tests/autograd/README.md).

``coverage/test_autograd.names`` lists every test function of torch's test/test_autograd.py
(and of the test classes it imports); ``coverage/api.tsv`` accounts for the API share: every
name outside the views share (class TestAutogradInferenceMode and the names matching
``VIEWS_SHARE``), each ported to a test here or out of scope with a reason.
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


def _names() -> list[str]:
    return (COVERAGE / "test_autograd.names").read_text().split()


def _rows() -> list[list[str]]:
    lines = (COVERAGE / "api.tsv").read_text().splitlines()
    return [line.split("\t") for line in lines if line.strip()]


def _api_share(name: str) -> bool:
    cls, test = name.split(".", 1)
    return cls != "TestAutogradInferenceMode" and not VIEWS_SHARE.search(test)


def test_names_file_is_sorted_and_unique():
    names = _names()
    assert names == sorted(set(names))
    assert all(re.fullmatch(r"Test\w+\.test_\w+", n) for n in names)


def test_every_api_share_name_is_accounted_for():
    accounted = {row[0].removeprefix("test_autograd.py::") for row in _rows()}
    missing = [n for n in _names() if _api_share(n) and n not in accounted]
    assert not missing, f"not in api.tsv: {missing}"
    names = set(_names())
    unknown = [n for n in accounted if n not in names]
    assert not unknown, f"api.tsv names tests torch does not have: {unknown}"
    outside = [n for n in accounted if not _api_share(n)]
    assert not outside, f"api.tsv accounts for the views share's tests: {outside}"


def test_every_row_is_ported_to_an_existing_test_or_has_a_reason():
    rows = _rows()
    assert len({row[0] for row in rows}) == len(rows), "a torch test is listed twice"
    for row in rows:
        assert len(row) == 3, row
        name, status, what = row
        assert name.startswith("test_autograd.py::"), row
        if status == "out-of-scope":
            assert len(what) > 10, row
            continue
        assert status == "ported", row
        path, _, test = what.partition("::")
        source = ROOT / path
        assert source.is_file(), row
        assert re.search(rf"^def {re.escape(test)}\(", source.read_text(), re.MULTILINE), row
