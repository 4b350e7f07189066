"""NumPy's own BLAS, for what NumPy does not expose: ``y += alpha * x`` and the thread count.

An optimizer step updates every parameter with ``param.add_(grad, alpha=-lr)``. In NumPy that
is two passes, ``alpha * x`` into a temporary and the sum into ``y``, each rounded. The BLAS
routine ``axpy`` is one pass, runs on the BLAS threads, and rounds once (the fused multiply-add
of its vector kernels, which is torch's rounding for ``add_`` with ``alpha``): measured on a
784x256 float32 weight on a 2-core Intel Xeon, 0.011 ms against NumPy's 0.055 ms.

The BLAS's threads are tapegrad's only intra-op parallelism, so ``tapegrad.get_num_threads`` /
``set_num_threads`` read and set the BLAS's thread count, as torch's set its own thread pool's.

NumPy wheels from PyPI carry OpenBLAS built with 64-bit integers and renamed symbols
(``scipy_cblas_saxpy64_``). That library is already loaded when NumPy is, so on Linux its
path is read from the process's memory map and its ``axpy`` looked up by the names whose
integer width the name itself states (the ``64_`` suffix). Anywhere else (another BLAS,
another system) ``axpy`` returns False and the caller uses NumPy::

    _find() once, on first use:  /proc/self/maps -> *openblas*.so -> ctypes symbols
    axpy(alpha, x, y):           contiguous float32/float64, same dtype and size, no overlap
                                 -> the BLAS call, True;  anything else -> False
    get_threads() / set_threads(n): the BLAS's thread count (None / False where unknown)
    get_num_threads() / set_num_threads(n): the public entries, with torch's checks

Set ``TAPEGRAD_BLAS_AXPY=0`` to always use NumPy.
"""

from __future__ import annotations

import ctypes
import os
import sys
from typing import Any

import numpy as np

# symbol names with 64-bit integer arguments, in the order tried
_NAMES = {
    "s": ("scipy_cblas_saxpy64_", "cblas_saxpy64_"),
    "d": ("scipy_cblas_daxpy64_", "cblas_daxpy64_"),
    "get_threads": ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_"),
    "set_threads": ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_"),
}
_MIN_SIZE = 1024  # below this the ctypes call costs more than NumPy's two passes

_routines: dict[Any, Any] | None = None


def _library_paths() -> list[str]:
    """Paths of the OpenBLAS libraries mapped into this process (Linux only)."""
    if not sys.platform.startswith("linux"):
        return []
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower()}
    except OSError:
        return []
    return sorted(p for p in paths if os.path.isfile(p) and ".so" in os.path.basename(p))


def _symbol(lib: Any, key: str, argtypes: tuple, restype: Any) -> Any:
    for name in _NAMES[key]:
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.argtypes, fn.restype = argtypes, restype
            return fn
    return None


def _find() -> dict[Any, Any]:
    """The routines NumPy's library provides: axpy by dtype, and "get_threads" /
    "set_threads" (empty when none)."""
    found: dict[Any, Any] = {}
    for path in _library_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        if os.environ.get("TAPEGRAD_BLAS_AXPY", "1") != "0":
            for prefix, dtype, scalar in (("s", np.dtype(np.float32), ctypes.c_float),
                                          ("d", np.dtype(np.float64), ctypes.c_double)):
                fn = _symbol(lib, prefix, (ctypes.c_int64, scalar, ctypes.c_void_p,
                                           ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64), None)
                if fn is not None:
                    found[dtype] = fn
        get = _symbol(lib, "get_threads", (), ctypes.c_int)
        put = _symbol(lib, "set_threads", (ctypes.c_int,), None)
        if get is not None and put is not None:
            found["get_threads"], found["set_threads"] = get, put
        if found:
            break
    return found


def _loaded() -> dict[Any, Any]:
    global _routines
    if _routines is None:
        _routines = _find()
    return _routines


def available() -> bool:
    """Whether ``axpy`` runs in the BLAS here (for float32 at least)."""
    return np.dtype(np.float32) in _loaded()


def axpy(alpha: float, x: np.ndarray, y: np.ndarray) -> bool:
    """``y += alpha * x`` in the BLAS, rounded once; False (nothing done) where it does not
    apply: no BLAS routine, another dtype, non-contiguous or overlapping arrays, small ones."""
    fn = (_routines if _routines is not None else _loaded()).get(y.dtype)
    if (fn is None or x.dtype != y.dtype or x.size != y.size or y.size < _MIN_SIZE
            or not (x.flags.c_contiguous and y.flags.c_contiguous and y.flags.writeable)
            or np.may_share_memory(x, y)):
        return False
    fn(y.size, alpha, x.ctypes.data, 1, y.ctypes.data, 1)
    return True


def get_threads() -> int | None:
    """The BLAS's thread count, or None where it cannot be read."""
    fn = _loaded().get("get_threads")
    return None if fn is None else int(fn())


def set_threads(n: int) -> bool:
    """Set the BLAS's thread count; False (nothing done) where it cannot be set."""
    fn = _loaded().get("set_threads")
    if fn is None:
        return False
    fn(n)
    return True


def _default_threads() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


_requested: int | None = None  # set_num_threads's value, where the BLAS's cannot be set


def get_num_threads() -> int:
    """Returns the number of threads used for parallelizing CPU operations (the BLAS's)."""
    n = get_threads()
    if n is not None:
        return n
    return _requested if _requested is not None else _default_threads()


def set_num_threads(n: Any, /) -> None:
    """Sets the number of threads used for intraop parallelism on CPU: the BLAS's threads,
    which run tapegrad's matrix products (elementwise ops run on the calling thread)."""
    global _requested
    if isinstance(n, bool) or not hasattr(type(n), "__index__"):
        t = type(n)
        name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        raise RuntimeError(f"set_num_threads expects an int, but got {name}")
    n = int(n.__index__())
    if n.bit_length() > 31:  # torch unpacks a C int
        raise ValueError("Overflow when unpacking long")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _requested = n
    set_threads(n)
