"""``torch.backends``: the switches and availability checks of torch's backends, as a
CPU-only build answers them.

tapegrad computes with NumPy on the CPU, so every accelerator backend is unavailable
(``cudnn.is_available()``, ``mps.is_available()``, ``cuda.is_built()`` are False), and so are
the CPU libraries torch may be built with and tapegrad does not use (MKL, oneDNN alias mkldnn,
OpenMP), as in a torch built without them. The settable flags keep what a program sets, with
torch's type checks (``cudnn.benchmark = 1`` is torch's RuntimeError), so code that tunes
them runs unchanged; none of them changes tapegrad's results.
"""

from __future__ import annotations

# The backend modules, and the helpers they build their flags with (still reachable here).
from . import cpu, cuda, cudnn, mha, mkl, mkldnn, mps, nnpack, openmp, opt_einsum
from ._flag_helpers import become, bool_flag, flag_context  # noqa: F401

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "nnpack", "openmp",
           "opt_einsum"]

_frozen = [False]


def flags_frozen() -> bool:
    return _frozen[0]


def disable_global_flags() -> None:
    _frozen[0] = True

