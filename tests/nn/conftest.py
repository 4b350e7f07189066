"""Fixtures shared by the nn tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def torch_one_thread():
    """torch on one thread for a module's tests: its oneDNN RNN threads crawl on a busy
    machine (10x)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
