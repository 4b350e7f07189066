"""Every derivative in the op registry is named after its op (or its family of ops), so a
traceback, a profile or a search names the op: ``mul``'s backward rule is ``mul_backward``, its
tangent rule ``mul_jvp`` (docs/design.md)."""

from __future__ import annotations

import pathlib
import re

import tapegrad
from tapegrad.ops._registry import REGISTRY

SRC = pathlib.Path(tapegrad.__file__).parent


def _named(kind: str, suffix: str) -> list:
    import tapegrad.vision.ops  # noqa: F401  (torchvision's ops register on first import)

    x = tapegrad.ones(2, requires_grad=True)  # (a double backward makes a linking entry)
    tapegrad.autograd.grad(tapegrad.nn.functional.leaky_relu(x).sum(), x, create_graph=True)
    wrong = []
    for name, entry in REGISTRY.items():  # (the library's entries, not ones a test defined)
        fn = getattr(entry, kind, None)
        if fn is None or not fn.__module__.startswith("tapegrad"):
            continue
        if not fn.__name__.endswith(suffix):
            wrong.append(f"{name}: {kind} {fn.__name__}")
    return wrong


def test_backward_rules_are_named_after_their_ops():
    assert _named("rule", "_backward") == []
    assert _named("fast_rule", "_backward") == []


def test_tangent_rules_are_named_after_their_ops():
    assert _named("tangent_rule", "_jvp") == []


def test_no_rule_is_written_anonymously():
    # (a decorated ``def _(`` would register a rule no traceback can name)
    anonymous = re.compile(r"^\s*def _\(", re.M)
    found = [str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
             if anonymous.search(p.read_text(encoding="utf-8"))]
    assert found == []
