"""Fixtures of the transform tests: ``ours`` (the package under test on ``lib``) and ``theirs``
(torchvision on real torch), as ``transform_helpers.Side`` objects."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import pytest
from cpu_kernels import VECTORIZED

# (appended: the helpers' name is unique, and the folder must not shadow other tests' modules)
sys.path.append(str(Path(__file__).resolve().parent))

import transform_helpers as H  # noqa: E402
from torch_values import TorchValues  # noqa: E402


@pytest.fixture(scope="session")
def ours(lib, vision) -> H.Side:
    return H.Side(lib, vision)


@pytest.fixture(scope="session")
def theirs(oracle, tv) -> H.Side:
    return H.Side(oracle, tv)


@pytest.fixture
def roundtrip():
    """A pickle round trip."""
    return lambda obj: pickle.loads(pickle.dumps(obj))


@pytest.fixture(autouse=True)
def _torch_values(ours, theirs, monkeypatch):
    """Under torch's scalar CPU kernels: the values whose last bits those kernels compute their
    own way (random draws with bounds, normal draws, ``linspace``, antialiased resampling,
    ``grid_sample``, ``a + alpha*b``) checked against torch's and replaced by them in the
    package under test (torch_values.py)."""
    if VECTORIZED or ours.L is theirs.L:
        yield
        return
    ours.torch_values = theirs.torch_values = TorchValues(theirs, ours, monkeypatch)
    yield
    ours.torch_values = theirs.torch_values = None
