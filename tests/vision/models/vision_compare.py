"""Comparing tapegrad.vision with torchvision in one scenario: ``scenario(L, V)`` runs once on
(torch, torchvision) and once on (the library under test, its vision package); results,
exceptions and warnings must agree (tests/torchcompare.py), reprs read "torchvision" for
"torch.vision". Also a switch that stubs out the random draws of the initializers, for the
tests that look only at the shape of huge models."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torchcompare


def _unvision(obj: Any) -> Any:
    """A snapshot with tapegrad.vision's names (normalised to "torch.vision") as torchvision's."""
    if isinstance(obj, str):
        return obj.replace("torch.vision", "torchvision")
    if isinstance(obj, list):
        return [_unvision(v) for v in obj]
    if isinstance(obj, tuple) and type(obj) is tuple:
        return tuple(_unvision(v) for v in obj)
    if isinstance(obj, dict):
        return {k: _unvision(v) for k, v in obj.items()}
    if isinstance(obj, torchcompare.Raised):
        return torchcompare.Raised(obj.type, _unvision(obj.message))
    return obj


def compare_vision(scenario, lib, oracle, vision, tv, *, rtol=1e-6, atol=1e-8):
    """Run ``scenario(L, V)`` with (torch, torchvision) and (lib, vision); assert they agree."""

    def on(L):
        return scenario(L, tv if L is oracle and lib is not oracle else vision)

    expected = torchcompare.run_scenario(on, oracle)
    actual = torchcompare.run_scenario(on, lib)
    torchcompare.assert_same(_unvision(expected.result), _unvision(actual.result), "result",
                             rtol, atol)
    ew = _unvision(torchcompare._without_warn_once(expected.warnings))
    aw = _unvision(torchcompare._without_warn_once(actual.warnings))
    assert aw == ew, f"warnings differ:\n torch: {ew}\n   lib: {aw}"
    return expected


_DRAWS = ("uniform_", "normal_", "trunc_normal_", "kaiming_uniform_", "kaiming_normal_",
          "xavier_uniform_", "xavier_normal_")


@contextlib.contextmanager
def no_draws(*libs: Any) -> Iterator[None]:
    """Within the block, the initializers of ``libs`` (``nn.init.*`` and ``Tensor.uniform_`` /
    ``normal_``) leave their tensor as it is: a model is built without drawing a number.
    Used only where the initial values are not compared (the architecture of huge models)."""
    saved = []
    for L in libs:
        for name in _DRAWS:
            saved.append((L.nn.init, name, getattr(L.nn.init, name)))
            setattr(L.nn.init, name, lambda tensor, *a, **k: tensor)
        for name in ("uniform_", "normal_"):
            saved.append((L.Tensor, name, getattr(L.Tensor, name)))
            setattr(L.Tensor, name, lambda self, *a, **k: self)
    try:
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)
