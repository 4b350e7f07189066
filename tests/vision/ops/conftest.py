"""Fixtures of the ops tests: ``vcompare(scenario)`` runs ``scenario(L, V)`` on torch with
torchvision and on the library under test with its vision package (see
tests/vision/models/vision_compare.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "models"))

import vision_compare  # noqa: E402


@pytest.fixture(scope="session")
def vcompare(lib, oracle, vision, tv):
    def run(scenario, *, rtol=1e-6, atol=1e-8):
        return vision_compare.compare_vision(scenario, lib, oracle, vision, tv, rtol=rtol,
                                             atol=atol)

    return run


@pytest.fixture(scope="session")
def vinit(lib, oracle, vision, tv):
    """``vinit(build)``: the initial values of ``build(L, V)``'s modules after
    ``manual_seed(0)``, torch's draws (vision_compare.compare_initial_values)."""
    def run(build):
        vision_compare.compare_initial_values(build, lib, oracle, vision, tv)

    return run
