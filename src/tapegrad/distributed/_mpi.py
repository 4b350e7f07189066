"""MPI through mpi4py: its import, the data types and reductions, and the watchdog.

Everything that touches mpi4py goes through this module, which imports it only when a
process group is made (``load()``), so ``import tapegrad.distributed`` costs nothing on a
machine without it.

* ``datatype(array)``: the MPI type that moves an array's elements. float16 and bfloat16 have
  none in the MPI standard: they move as 2-byte opaque elements.
* ``reduce_op(op, dtype)``: MPI's built-in reduction where it has one (float32, float64,
  integers, bool as bytes: ``MPI.SUM``...), else an MPI operation defined here on NumPy
  arrays (float16, bfloat16), computing as torch's gloo backend does (each element in its own
  dtype).
* ``Watchdog``: every collective is registered with a deadline (the group's timeout). A
  collective blocks inside MPI, where no Python exception can reach it; if it is still running
  at its deadline, the watchdog thread prints which collective on which rank timed out and
  calls ``MPI_Abort``, which ends every rank of the job. A rank never hangs past the timeout.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import sys
import threading
import time
from typing import Any

import numpy as np

from ._output import write_last_words

INSTALL_HINT = ("torch.distributed needs MPI: pip install 'tapegrad[distributed]' "
                "(or: pip install mpi4py mpich)")

_MPI: Any = None


def available() -> bool:
    """True when mpi4py can be imported (without importing it)."""
    return importlib.util.find_spec("mpi4py") is not None


def load() -> Any:
    """``mpi4py.MPI``, imported (and MPI initialised) on first call."""
    global _MPI
    if _MPI is None:
        try:
            import mpi4py  # mpi4py: optional, loaded (and MPI started) on first use
        except ImportError:
            raise RuntimeError(INSTALL_HINT) from None
        if "mpi4py.MPI" not in sys.modules:
            # the watchdog may call MPI_Abort while the main thread waits inside MPI
            mpi4py.rc.thread_level = "multiple"
        from mpi4py import MPI  # mpi4py.MPI: after the thread level is set

        _MPI = MPI
    return _MPI


def loaded() -> Any:
    """``mpi4py.MPI`` if it was imported already, else None (nothing is imported)."""
    return _MPI if _MPI is not None else sys.modules.get("mpi4py.MPI")


# ---------------------------------------------------------------------------------------------
# data types and reductions

_TYPE_NAMES = {
    "float32": "FLOAT", "float64": "DOUBLE", "int8": "INT8_T", "int16": "INT16_T",
    "int32": "INT32_T", "int64": "INT64_T", "uint8": "UINT8_T", "uint16": "UINT16_T",
    "uint32": "UINT32_T", "uint64": "UINT64_T",
    # bool moves and reduces as bytes, as gloo's does: SUM of two True bytes is a byte 2,
    # which a bool tensor holds (and reads as True)
    "bool": "UINT8_T",
    "complex64": "C_FLOAT_COMPLEX", "complex128": "C_DOUBLE_COMPLEX",
}
_cache: dict[Any, Any] = {}


def datatype(dtype: np.dtype) -> Any:
    """The MPI datatype of one element of ``dtype``."""
    key = ("type", dtype)
    if key not in _cache:
        MPI = load()
        name = _TYPE_NAMES.get(dtype.name)
        if name is not None:
            _cache[key] = getattr(MPI, name)
        else:  # float16, bfloat16: opaque elements of their size
            t = MPI.BYTE.Create_contiguous(dtype.itemsize)
            t.Commit()
            _cache[key] = t
    return _cache[key]


# The reductions MPI has built in, by torch's op name; they apply to these NumPy kinds.
_BUILTIN = {"SUM": "SUM", "PRODUCT": "PROD", "MIN": "MIN", "MAX": "MAX", "BAND": "BAND",
            "BOR": "BOR", "BXOR": "BXOR", "AVG": "SUM"}


def _numpy_reduction(name: str, dtype: np.dtype) -> Any:
    """``f(a, b) -> a op b`` on NumPy arrays of ``dtype``, as gloo computes it."""
    return {"SUM": np.add, "AVG": np.add, "PRODUCT": np.multiply, "MIN": np.minimum,
            "MAX": np.maximum, "BAND": np.bitwise_and, "BOR": np.bitwise_or,
            "BXOR": np.bitwise_xor}[name]


def reduce_op(name: str, dtype: np.dtype) -> Any:
    """The MPI operation that reduces arrays of ``dtype`` by torch's ``ReduceOp`` ``name``."""
    key = ("op", name, dtype)
    if key in _cache:
        return _cache[key]
    MPI = load()
    native = dtype.kind in "iufb" and dtype.name in _TYPE_NAMES or (
        dtype.kind == "c" and name in ("SUM", "AVG"))
    if native:
        op = getattr(MPI, _BUILTIN[name])
    else:
        fn = _numpy_reduction(name, dtype)

        def apply(inbuf: Any, inoutbuf: Any, _type: Any) -> None:
            a = np.frombuffer(inbuf, dtype=dtype)
            b = np.frombuffer(inoutbuf, dtype=dtype)
            fn(a, b, out=b)

        op = MPI.Op.Create(apply, commute=True)
    _cache[key] = op
    return op


# ---------------------------------------------------------------------------------------------
# the watchdog


class Watchdog:
    """Aborts the MPI job when a registered collective outlives its deadline.

    ``start`` and ``done`` run around every collective, so they take no lock: a ticket comes
    from ``itertools.count`` and the pending collectives are a dict, whose single operations
    (and ``list(d.values())``) are atomic under the interpreter lock.
    """

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self._pending: dict[int, tuple[float, str, float]] = {}
        self._tickets = itertools.count(1)
        self._thread: threading.Thread | None = None

    def start(self, what: str, timeout: float) -> int:
        """Register a collective; returns the ticket ``done`` takes."""
        ticket = next(self._tickets)
        self._pending[ticket] = (time.monotonic() + timeout, what, timeout)
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="tapegrad MPI watchdog",
                                            daemon=True)
            self._thread.start()
        return ticket

    def done(self, ticket: int) -> None:
        self._pending.pop(ticket, None)

    def _watch(self) -> None:
        while True:
            time.sleep(0.05)
            now = time.monotonic()
            late = [v for v in list(self._pending.values()) if v[0] <= now]
            if late:
                _, what, timeout = min(late)
                abort(f"[Rank {self.rank}] Watchdog caught collective operation timeout: "
                      f"{what} ran for longer than its timeout of {timeout:g} s (a rank that "
                      f"never joined it, or one that died); aborting every rank.", code=1)


def abort(message: str, code: int = 1) -> None:
    """Print ``message`` and end every rank of the MPI job (``MPI_Abort``)."""
    write_last_words(message)
    MPI = loaded()
    if MPI is not None and MPI.Is_initialized() and not MPI.Is_finalized():
        MPI.COMM_WORLD.Abort(code)
    os._exit(code)
