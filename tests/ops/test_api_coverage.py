"""The public API surface: every public function of ``torch``, ``torch.nn.functional``,
``torch.linalg``, ``torch.special``, ``torch.fft`` and ``torch.compiler`` and every public
attribute of ``Tensor`` is implemented by tapegrad, or out of scope
(``opinfo_out_of_scope.txt``, with the reason), or on the TODO list
(``api_expected_missing.txt``, with the reason). Both lists are checked strictly: a name on the
TODO list that tapegrad has, or a line naming nothing torch has, fails.
"""

from __future__ import annotations

import fnmatch

import opinfo_harness as h
import pytest

API = h.public_api()
MISSING = h.read_list(h.API_EXPECTED_MISSING_FILE)
SCOPE = {k: v for k, v in h.read_list(h.OUT_OF_SCOPE_FILE).items() if not k.startswith("opdb:")}


def _out_of_scope(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in SCOPE)


@pytest.mark.parametrize("prefix", list(h.API_NAMESPACES))
def test_every_public_name_is_covered(prefix: str) -> None:
    names = [n for n in API if n.startswith(prefix) and "." not in n[len(prefix):]]
    absent = sorted(n for n in names if not API[n] and not _out_of_scope(n) and n not in MISSING)
    assert not absent, (f"{len(absent)} public names are neither implemented nor listed "
                        f"(api_expected_missing.txt / opinfo_out_of_scope.txt): {absent}")


def test_expected_missing_is_true() -> None:
    """Nothing on the TODO list is implemented, out of scope, or unknown to torch."""
    landed = sorted(n for n in MISSING if API.get(n))
    assert not landed, f"implemented now: take them off api_expected_missing.txt: {landed}"
    unknown = sorted(n for n in MISSING if n not in API)
    assert not unknown, f"not public torch names: {unknown}"
    both = sorted(n for n in MISSING if _out_of_scope(n))
    assert not both, f"listed as missing and as out of scope: {both}"


def test_out_of_scope_patterns_match() -> None:
    """Each pattern excludes something: a public name, or an entry of the signature test
    (tests/test_signatures.py: torch's overridable functions and methods)."""
    import signature_oracle

    names = set(API) | set(signature_oracle.entries())
    unused = [p for p in SCOPE if not any(fnmatch.fnmatchcase(n, p) for n in names)]
    assert not unused, f"out-of-scope patterns matching no public name: {unused}"
