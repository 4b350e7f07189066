"""Every overridable function and method of torch (``torch.overrides.get_testing_overrides()``)
takes, in tapegrad, the parameters torch's takes: names, order, kinds and defaults, as
``signature_oracle`` reads them from torch itself. Out-of-scope entries (sparse, quantized,
CUDA-only, distributed, private...) are the patterns of ``ops/opinfo_out_of_scope.txt``, each
with its reason; there is no list of known failures.

With ``--lib torch`` the test compares torch with itself (every entry's signature is read the
same way on both sides), which checks that the oracle reads every in-scope entry.
"""

from __future__ import annotations

import fnmatch
import inspect
import types
from typing import Any

import opinfo_harness as h
import pytest
import signature_oracle as so

SCOPE = {k: v for k, v in h.read_list(h.OUT_OF_SCOPE_FILE).items() if not k.startswith("opdb:")}


def _out_of_scope(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in SCOPE)


ENTRIES = {name: f for name, f in so.entries().items() if not _out_of_scope(name)}


def _ours(lib: Any, name: str) -> Any:
    obj = lib
    parts = name.split(".")
    if parts[0] == "Tensor":
        return inspect.getattr_static(lib.Tensor, parts[1], None)
    for part in parts[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _our_signature(obj: Any, method: bool) -> tuple:
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    sig = inspect.signature(obj)
    return so.from_inspect(sig, drop_first=method and not isinstance(obj, staticmethod))


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_signature(name: str, lib: Any, lib_name: str) -> None:
    f = ENTRIES[name]
    expected = so.expected(name, f)
    method = name.startswith("Tensor.")
    ours = _ours(lib, name)
    assert ours is not None, f"tapegrad has no {name}"
    if expected is None:  # a property: an attribute of every tensor, set by a descriptor
        assert hasattr(ours, "__get__") and not isinstance(ours, types.FunctionType), (
            f"{name} is a property in torch, {type(ours).__name__} in tapegrad")
        return
    if lib_name == "torch":
        got = expected.overloads[0] if expected.exact else None
        if got is None:
            return  # a built-in compared with itself: the oracle read it
    else:
        got = _our_signature(ours, method)
    problems = so.mismatches(expected, got, method=method)
    assert not problems, (
        f"{name}: tapegrad {so.format_signature(got)}; torch ({expected.source}) "
        + " | ".join(so.format_signature(o) for o in expected.overloads)
        + "\n  " + "\n  ".join(problems))


def test_every_entry_has_a_signature_source() -> None:
    """Each in-scope entry's signature is found (a Python signature, a stub or the parser)."""
    missing = []
    for name, f in ENTRIES.items():
        try:
            so.expected(name, f)
        except LookupError as e:
            missing.append(str(e))
    assert not missing, missing
