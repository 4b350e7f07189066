"""What every worker shares: record values and errors by name, and save them per rank."""

from __future__ import annotations

import os
import pickle
import sys
import traceback

import numpy as np

RECORD: dict = {}


def plain(value):
    """Tensors as NumPy arrays (with their dtype's name), containers element by element."""
    if hasattr(value, "detach") and hasattr(value, "dtype"):
        t = value.detach()
        return ("tensor", str(t.dtype).replace("tapegrad", "torch"),
                t.float().numpy() if "bfloat16" in str(t.dtype) else t.numpy().copy())
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def record(name: str, fn) -> None:
    """Run ``fn()``; keep its value, or its exception's type and message."""
    try:
        RECORD[name] = ("ok", plain(fn()))
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        RECORD[name] = ("error", type(exc).__name__, str(exc).split("\n")[0])
        if os.environ.get("WORKER_DEBUG"):
            traceback.print_exc()


def save(out: str, rank: int) -> None:
    with open(os.path.join(out, f"rank{rank}.pkl"), "wb") as f:
        pickle.dump(RECORD, f)


def same(a, b) -> bool:
    """Equal, arrays bit for bit (NaN included)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and a.tobytes() == b.tobytes())
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


out_dir = sys.argv[1] if len(sys.argv) > 1 else "."
