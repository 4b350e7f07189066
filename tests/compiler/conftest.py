"""Fixtures shared by the compiler tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _keep_torchs_distribution_validation():
    """Real torch.compile (and torch._dynamo) turns off argument validation of
    torch.distributions for the whole process on import; the distribution tests that run later
    need it."""
    import torch as real_torch

    before = real_torch.distributions.Distribution._validate_args
    yield
    real_torch.distributions.Distribution.set_default_validate_args(before)
