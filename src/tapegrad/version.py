"""``torch.version``: the build's versions. tapegrad is torch 2.13's API on the CPU: no CUDA, no
ROCm (HIP), no XPU; ``tapegrad_version`` is tapegrad's own version."""

from __future__ import annotations

from .torch_version import TAPEGRAD_VERSION, TORCH_API_VERSION

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]

__version__ = f"{TORCH_API_VERSION}+tapegrad{TAPEGRAD_VERSION}"  # a plain str, as in torch
tapegrad_version = TAPEGRAD_VERSION
debug = False
cuda: str | None = None
git_version = "Unknown"  # torch's value for a build made outside a git checkout
hip: str | None = None
rocm: str | None = None
xpu: str | None = None
