"""Fixtures of the transform tests: ``ours`` (the package under test on ``lib``) and ``theirs``
(torchvision on real torch), as ``transform_helpers.Side`` objects."""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import pytest

# (appended: the helpers' name is unique, and the folder must not shadow other tests' modules)
sys.path.append(str(Path(__file__).resolve().parent))

import transform_helpers as H  # noqa: E402


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
