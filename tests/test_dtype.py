"""bfloat16's NumPy type (ml_dtypes) is imported on first use, not with tapegrad."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tapegrad import _dtype

needs_ml_dtypes = pytest.mark.skipif(not _dtype.HAVE_BFLOAT16,
                                     reason="bfloat16 needs the optional ml_dtypes")


def _child(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip()


@needs_ml_dtypes
def test_import_leaves_ml_dtypes_unloaded_until_bfloat16_is_used() -> None:
    out = _child(
        "import sys, tapegrad as t\n"
        "print('ml_dtypes' in sys.modules, t.bfloat16, t.bfloat16.is_floating_point)\n"
        "x = t.tensor([1.5, -2.25]).bfloat16()\n"
        "print('ml_dtypes' in sys.modules, x.dtype, x)\n")
    assert out.splitlines() == [
        "False torch.bfloat16 True",
        "True torch.bfloat16 tensor([ 1.5000, -2.2500], dtype=torch.bfloat16)",
    ]


@needs_ml_dtypes
def test_an_ml_dtypes_array_before_tapegrad_needed_the_type() -> None:
    """A user's own bfloat16 array reaches tapegrad before anything in tapegrad asked for
    the type: it is still recognised as torch.bfloat16."""
    out = _child(
        "import ml_dtypes, numpy as np, tapegrad as t\n"
        "a = np.array([0.5, 3.0], dtype=ml_dtypes.bfloat16)\n"
        "print(t.from_numpy(a).dtype, t.tensor(a).dtype)\n")
    assert out == "torch.bfloat16 torch.bfloat16"


@needs_ml_dtypes
def test_random_bfloat16_before_the_type_was_loaded() -> None:
    """The RNG's first bfloat16 draw loads the type and gives torch's values."""
    torch = pytest.importorskip("torch")
    out = _child(
        "import sys, tapegrad as t\n"
        "t.manual_seed(0)\n"
        "x = t.rand(5, dtype=t.bfloat16)\n"
        "print(x.dtype, 'ml_dtypes' in sys.modules, x.float().tolist())\n")
    torch.manual_seed(0)
    want = torch.rand(5, dtype=torch.bfloat16).float().tolist()
    assert out == f"torch.bfloat16 True {want}"
