"""Fixtures of the torchvision tests: the oracle (real torchvision 0.28 on the CPU torch 2.13, see
tests/vision_oracle.py) and the package under test (``tapegrad.vision``, or the oracle itself
with ``--lib torch``, which checks the tests against torchvision)."""

from __future__ import annotations

import pytest
import vision_oracle
from cpu_kernels import VECTORIZED


@pytest.fixture(scope="session")
def tv():
    """Real torchvision, the reference every result is compared with."""
    torchvision = vision_oracle.import_torchvision()
    if VECTORIZED:
        yield torchvision
        return
    with pytest.MonkeyPatch.context() as m:
        _native_uint8_resize(m)
        yield torchvision


def _native_uint8_resize(m: pytest.MonkeyPatch) -> None:
    """torchvision's v2 ``resize`` resizes a uint8 image natively (bilinear, in torch's integer
    arithmetic) where torch's CPU capability is AVX2 or AVX-512 (or the CPU an ARM one), and
    through float32 and back elsewhere, as under torch's scalar kernels
    (``ATEN_CPU_CAPABILITY=default``), where the two paths' integers differ by one in a pixel of
    five. tapegrad.vision takes the native path on every CPU; so does the oracle here, asked as
    on a vectorized CPU (torch's scalar uint8 kernel computes the vectorized one's integers)."""
    import torch
    from torchvision.transforms.v2.functional import _geometry

    native = _geometry._do_native_uint8_resize_on_cpu

    def as_vectorized(interpolation):
        with pytest.MonkeyPatch.context() as cpu:
            cpu.setattr(torch.backends.cpu, "get_cpu_capability", lambda: "AVX2")
            return native(interpolation)

    m.setattr(_geometry, "_do_native_uint8_resize_on_cpu", as_vectorized)


@pytest.fixture(scope="session")
def vision(lib_name, tv):
    """The torchvision under test, used exactly like ``torchvision``."""
    if lib_name == "torch":
        return tv
    import tapegrad.vision

    return tapegrad.vision
