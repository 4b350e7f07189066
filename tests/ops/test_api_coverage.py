"""The public API surface: every public name (function, class, constant, submodule) of the
namespaces of ``opinfo_harness.API_NAMESPACES`` (``torch``, ``torch.nn``, ``torch.autograd``,
``torch.optim``, ``torch.utils.data``, ``torch.linalg``, ... ``torch.return_types``) and every
public attribute of ``Tensor`` is implemented by tapegrad, with torch's kind and printing, or
out of scope (``opinfo_out_of_scope.txt``, with the reason), or on the TODO list
(``api_expected_missing.txt``, with the reason). Both lists are checked strictly: a name on the
TODO list that tapegrad has, or a line naming nothing torch has, fails.
"""

from __future__ import annotations

import fnmatch
import math
import re
import types

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


# build flags that describe the library, not the API: tapegrad has LAPACK and FFTs (NumPy's),
# neither MKL nor OpenMP (backends.mkl and backends.openmp say the same)
BUILD_FLAGS = {"torch.has_mkl", "torch.has_openmp"}
OBJECTS = {name: value for name, value in h.public_objects().items()
           if value[1] != "attribute" and not _out_of_scope(name)}


def _shown(value: object) -> str:
    """How a value prints, under torch's name, without addresses."""
    return re.sub(r" at 0x[0-9a-f]+", "", repr(value).replace("tapegrad", "torch"))


@pytest.mark.parametrize("prefix", [p for p in h.API_NAMESPACES if p != "Tensor."])
def test_public_names_are_torchs_kind(prefix: str) -> None:
    """Each public name tapegrad has is what torch's is: a function is callable, a class is a
    class that prints as torch's (its module and name), a module a module, a constant of the
    same type and value, an object (a dtype, a layout, a generator) of the same type that
    prints the same."""
    wrong = []
    for name, (theirs, kind) in OBJECTS.items():
        if not name.startswith(prefix) or "." in name[len(prefix):]:
            continue
        ours = h.ours(name)
        if ours is None:
            continue
        if kind == "function":
            ok = callable(ours)
        elif kind == "class":
            ok = isinstance(ours, type) and _shown(ours) == repr(theirs)
        elif kind == "module":
            ok = isinstance(ours, types.ModuleType)
        elif kind == "constant":
            ok = type(ours) is type(theirs) and (
                ours == theirs or name in BUILD_FLAGS
                or (isinstance(ours, float) and math.isnan(ours) and math.isnan(theirs)))
        else:
            ok = (type(ours).__name__ == type(theirs).__name__
                  and _shown(ours) == _shown(theirs))
        if not ok:
            wrong.append(f"{name} ({kind}): tapegrad {_shown(ours)[:80]}, torch "
                         f"{_shown(theirs)[:80]}")
    assert not wrong, "\n".join(wrong)
