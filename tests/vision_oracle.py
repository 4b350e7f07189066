"""Real torchvision 0.28 on the CPU build of torch 2.13: the oracle of tapegrad.vision's tests.

PyPI's torchvision 0.28.0 wheel is built for CUDA 13: its compiled operators (``_C.so``, with
``nms``, ``roi_align``, ...) and image codecs (``image.so``) are linked against
``libc10_cuda.so`` and ``libtorch_cuda.so``, which a CPU torch does not ship, so next to it
``import torchvision`` fails with ``operator torchvision::nms does not exist``. Only a handful
of CUDA symbols of c10/ATen are left undefined (``c10::cuda::device_count``,
``getCurrentCUDAStream``, ``CUDACachingAllocator::allocator``, ...), and only CUDA kernels reach
them. :func:`import_torchvision` therefore

1. lists the symbols the two libraries need that torch's own libraries do not define (``nm``),
2. compiles two tiny stand-in shared libraries with gcc, named as the missing ones (their
   ``SONAME`` is what the dynamic loader matches), defining each missing ``c10::cuda`` /
   ``at::cuda`` symbol as a function that aborts (none is ever called on the CPU),
3. loads them with ``RTLD_GLOBAL`` after ``import torch``, and then imports torchvision, whose
   operators and codecs then load and run on the CPU.

The libraries are built once per torchvision install, in a cache folder
(``$TAPEGRAD_TEST_CACHE``, else ``~/.cache/tapegrad-tests``). tests/vision/README.md has the
recipe step by step.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

TORCHVISION_VERSION = "0.28.0"

# the stand-in library each missing symbol goes into, by its mangled namespace prefix
_LIBRARIES = {
    "libc10_cuda.so": ("_ZN3c104cuda", "_ZNK3c104cuda"),
    "libtorch_cuda.so": ("_ZN2at4cuda", "_ZNK2at4cuda"),
}


def _cache_dir() -> Path:
    root = os.environ.get("TAPEGRAD_TEST_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "tapegrad-tests")
    return Path(root)


def _nm(path: Path, *flags: str) -> set[str]:
    out = subprocess.run(["nm", "-D", *flags, str(path)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def _missing_symbols(tv_dir: Path, torch_lib: Path) -> dict[str, list[str]]:
    needed: set[str] = set()
    for name in ("_C.so", "image.so"):
        if (tv_dir / name).exists():
            needed |= {s for s in _nm(tv_dir / name, "--undefined-only") if "@" not in s}
    defined: set[str] = set()
    for lib in torch_lib.glob("lib*.so*"):
        defined |= _nm(lib, "--defined-only")
    missing = sorted(needed - defined)
    return {lib: [s for s in missing if s.startswith(prefixes)]
            for lib, prefixes in _LIBRARIES.items()}


def _stub_source(symbols: list[str]) -> str:
    lines = ["/* stand-ins for CUDA symbols of c10/ATen; never called on a CPU */",
             "#include <stdlib.h>"]
    for i, sym in enumerate(symbols):
        if sym.startswith("_ZN") and sym.endswith("E"):  # a variable: no parameter list
            lines.append(f'void *stub_var_{i} __asm__("{sym}") = 0;')
        else:
            lines.append(f'void stub_fn_{i}(void) __asm__("{sym}");')
            lines.append(f"void stub_fn_{i}(void) {{ abort(); }}")
    return "\n".join(lines) + "\n"


def build_stubs() -> list[Path]:
    """Compile (once) the stand-in libraries for the installed torchvision; their paths."""
    import torch

    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            f"torchvision {TORCHVISION_VERSION} is not installed: the vision tests' oracle is the "
            f"real torchvision (pip install --no-deps torchvision=={TORCHVISION_VERSION}); see "
            "tests/vision/README.md")
    tv_dir = Path(spec.origin).parent
    torch_lib = Path(torch.__file__).parent / "lib"
    key = hashlib.sha256()
    for name in ("_C.so", "image.so"):
        if (tv_dir / name).exists():
            st = (tv_dir / name).stat()
            key.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
    key.update(str(torch_lib).encode())
    out_dir = _cache_dir() / f"torchvision-stubs-{key.hexdigest()[:16]}"
    paths = [out_dir / lib for lib in _LIBRARIES]
    if all(p.exists() for p in paths):
        return paths
    out_dir.mkdir(parents=True, exist_ok=True)
    for lib, symbols in _missing_symbols(tv_dir, torch_lib).items():
        src = out_dir / (lib + ".c")
        src.write_text(_stub_source(symbols))
        tmp = out_dir / (lib + f".{os.getpid()}.tmp")
        subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{lib}", "-o", str(tmp),
                        str(src)], check=True, capture_output=True)
        os.replace(tmp, out_dir / lib)
    return paths


def import_torchvision() -> ModuleType:
    """Real torchvision, imported next to the CPU torch (stand-in CUDA libraries loaded first)."""
    loaded = sys.modules.get("torchvision")
    if loaded is not None and loaded.__name__ == "torchvision":
        return loaded
    import torch  # noqa: F401  (its libraries must be loaded before the stand-ins)

    for path in build_stubs():
        ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    import torchvision

    if torchvision.__version__.split("+")[0] != TORCHVISION_VERSION:
        raise RuntimeError(f"the oracle is torchvision {TORCHVISION_VERSION}, "
                           f"found {torchvision.__version__}")
    return torchvision


if __name__ == "__main__":  # python tests/vision_oracle.py SCRIPT [ARGS]: run a program on it
    import runpy

    import_torchvision()
    sys.argv = sys.argv[1:]
    runpy.run_path(sys.argv[0], run_name="__main__")
