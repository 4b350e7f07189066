"""Every derivative in the op registry is named after its op (or its family of ops), so a
traceback, a profile or a search names the op: ``mul``'s backward rule is ``mul_backward``, its
tangent rule ``mul_jvp`` (docs/design.md)."""

from __future__ import annotations

import pathlib
import re

import tapegrad  # noqa: F401  (registers every op)
from tapegrad.ops._registry import REGISTRY

SRC = pathlib.Path(tapegrad.__file__).parent


def _named(kind: str, suffix: str) -> list:
    wrong = []
    for name, entry in REGISTRY.items():
        fn = getattr(entry, kind, None)
        if fn is not None and not fn.__name__.endswith(suffix):
            wrong.append(f"{name}: {kind} {fn.__name__}")
    return wrong


def test_backward_rules_are_named_after_their_ops():
    assert _named("rule", "_backward") == []
    assert _named("array_rule", "_backward") == []


def test_tangent_rules_are_named_after_their_ops():
    assert _named("tangent_rule", "_jvp") == []


def test_no_rule_is_written_anonymously():
    # (a decorated ``def _(`` would register a rule no traceback can name)
    anonymous = re.compile(r"^\s*def _\(", re.M)
    found = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
             if anonymous.search(p.read_text(encoding="utf-8"))]
    assert found == []
