"""Fixtures of the torchvision tests: the oracle (real torchvision 0.28 on the CPU torch 2.13, see
tests/vision_oracle.py) and the package under test (``tapegrad.vision``, or the oracle itself
with ``--lib torch``, which checks the tests against torchvision)."""

from __future__ import annotations

import pytest
import vision_oracle


@pytest.fixture(scope="session")
def tv():
    """Real torchvision, the reference every result is compared with."""
    return vision_oracle.import_torchvision()


@pytest.fixture(scope="session")
def vision(lib_name, tv):
    """The torchvision under test, used exactly like ``torchvision``."""
    if lib_name == "torch":
        return tv
    import tapegrad.vision

    return tapegrad.vision
