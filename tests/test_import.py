"""What ``import tapegrad`` loads: the parts a program may never use wait for first use."""

from __future__ import annotations

import subprocess
import sys

# Loaded on first use (each costs milliseconds at every import): the standard library's
# multiprocessing, json and hashlib, numpy.random (tapegrad draws through its own mt19937, with
# NumPy's only for the twist), and tapegrad's own rarely used parts.
LAZY = ["multiprocessing", "json", "hashlib", "numpy.random", "tapegrad.compiler",
        "tapegrad.func", "tapegrad.serialization", "tapegrad.utils.data",
        "tapegrad.utils.safetensors", "tapegrad.optim.lr_scheduler", "tapegrad.ops.lobpcg",
        "tapegrad.show", "tapegrad.distributions", "scipy"]


def _loaded_after(code: str) -> set[str]:
    code += "\nimport sys\nprint(' '.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    return set(out.split())


def test_import_leaves_the_rarely_used_parts_unloaded():
    already = _loaded_after("import numpy")  # what the interpreter and NumPy load themselves
    loaded = _loaded_after("import tapegrad")
    assert [m for m in LAZY if m in loaded and m not in already] == []


def test_lazy_parts_load_on_first_use():
    code = ("import tapegrad as torch\n"
            "torch.manual_seed(0); x = torch.rand(2)\n"
            "assert torch.utils.data.DataLoader and torch.optim.lr_scheduler.StepLR\n"
            "assert torch.save and torch.load and torch.vmap and torch.func.grad\n"
            "assert torch.from_dlpack and torch.utils.safetensors")
    loaded = _loaded_after(code)
    for name in ["numpy.random", "tapegrad.utils.data", "tapegrad.optim.lr_scheduler",
                 "tapegrad.serialization", "tapegrad.func", "tapegrad.utils.safetensors"]:
        assert name in loaded, name
    # a DataLoader without workers needs no multiprocessing
    assert "multiprocessing" not in _loaded_after(
        "import tapegrad as torch\n"
        "list(torch.utils.data.DataLoader(torch.arange(4), batch_size=2))")


def test_relu_is_exact_on_its_first_call_of_each_dtype():
    import tapegrad as torch

    x = torch.tensor([-0.0, float("nan"), -1.0, 2.0, -float("inf")], dtype=torch.float64)
    y = torch.relu(x).numpy()
    assert [str(v) for v in y] == ["-0.0", "nan", "0.0", "2.0", "0.0"]
