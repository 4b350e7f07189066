"""Helpers shared by the linear-algebra op modules: torch's checks and messages, looping a
LAPACK routine over the leading (batch) dimensions, and ``torch.return_types`` tuples.

The op modules are ``factorizations`` (cholesky, qr, householder products, triangular solves),
``decompositions`` (svd, eigh, lu, ldl), ``solvers`` (det, inv, lstsq, pinv, the Cholesky
solves) and ``linalg`` (matrix products).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import return_types
from .._dtype import from_numpy_dtype
from ._registry import scalar_type_name


def check_square(name: str, a: Any, what: str = "A") -> None:
    """torch's errors for an input that is not a batch of square matrices."""
    shape = a.shape
    if len(shape) < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    if shape[-1] != shape[-2]:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are "
                           f"{shape[-2]} by {shape[-1]} matrices")


def check_matrix(name: str, a: Any, what: str = "A") -> None:
    if len(a.shape) < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def check_float(name: str, a: np.ndarray) -> None:
    """Linear algebra runs on floating (and complex) matrices only, as in torch."""
    if a.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{scalar_type_name(from_numpy_dtype(a.dtype))}")


def batch_error(name: str, info: np.ndarray, message: Callable[[int], str],
                error: type = RuntimeError) -> None:
    """Raise torch's error for the first non-zero LAPACK ``info`` (``(Batch element i): `` in
    front of the message for a batch)."""
    flat = info.reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size == 0:
        return
    i = int(bad[0])
    prefix = f"{name}: (Batch element {i}): " if info.ndim else f"{name}: "
    raise error(prefix + message(int(flat[i])))


def per_matrix(fn: Callable[[np.ndarray], tuple], a: np.ndarray, shapes: list[tuple],
               dtypes: list[Any]) -> tuple:
    """Run ``fn`` on each matrix of the batch ``a`` (..., m, n); ``fn`` returns a tuple whose
    k-th entry has shape ``shapes[k]`` (per matrix) and dtype ``dtypes[k]``. Returns the
    stacked results with the batch dimensions in front."""
    batch = a.shape[:-2]
    count = int(np.prod(batch)) if batch else 1
    flat = a.reshape((count,) + a.shape[-2:])
    outs = [np.zeros((count,) + s, dtype=d) for s, d in zip(shapes, dtypes, strict=True)]
    for i in range(count):
        res = fn(flat[i])
        for o, r in zip(outs, res, strict=True):
            o[i] = r
    return tuple(o.reshape(batch + s) for o, s in zip(outs, shapes, strict=True))


def scipy_linalg() -> Any:
    """``scipy.linalg`` (its ``lapack`` wrappers, ``expm``, ``lstsq``), imported on first use."""
    import scipy.linalg  # scipy: optional, loaded on first use (it takes a while to import)

    return scipy.linalg


_public_linalg: Any = None  # tapegrad.linalg, once it has loaded (register_public_linalg)


def public_linalg() -> Any:
    """``tapegrad.linalg``, for the ops made of its public functions (``qr``, ``svd``,
    ``svdvals``, ``inv``...): autocast swaps the code of those for code that casts
    (_autocast.py), so such an op must call them there, as torch's composites go through
    torch's dispatcher, not the raw functions in ops/. The module is a surface above the ops:
    it hands itself over with ``register_public_linalg`` when it loads (with ``import
    tapegrad``, before any op runs)."""
    return _public_linalg


def register_public_linalg(module: Any) -> None:
    """Hand over ``tapegrad.linalg`` (see ``public_linalg``)."""
    global _public_linalg
    _public_linalg = module


def getrf(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """LAPACK's LU with partial pivoting of one matrix: (LU, 1-based pivots, info)."""
    lapack = scipy_linalg().lapack

    rows, cols = m.shape
    k = min(rows, cols)
    if k == 0:
        return m.copy(), np.zeros(0, dtype=np.int32), 0
    fn = lapack.get_lapack_funcs("getrf", (m,))
    lu, piv, info = fn(m)
    return lu, (piv[:k] + 1).astype(np.int32), int(info)


def return_type(name: str, fields: str) -> Any:
    """The maker of a ``torch.return_types.<name>`` tuple from its fields (``return_types``)."""
    cls = getattr(return_types, name)
    if cls._names != tuple(fields.split()):
        raise ValueError(f"return_types.{name} has the fields {cls._names}, not {fields}")
    return cls.of


def eye_like(a: np.ndarray, n: int) -> np.ndarray:
    """Identity matrices (..., n, n) with ``a``'s batch dimensions and dtype."""
    return np.broadcast_to(np.eye(n, dtype=a.dtype), a.shape[:-2] + (n, n)).copy()


def conj(x: Any) -> Any:
    """The complex conjugate where torch's formulas take one (the identity on real tensors)."""
    return x.conj() if x._data.dtype.kind == "c" else x


def count(batch: tuple) -> int:
    """The number of matrices in a batch shape (reshape's -1 cannot infer it when they are
    empty)."""
    return int(np.prod(batch)) if batch else 1


_WARNED: set[str] = set()

DEPRECATED = {
    "cholesky": (
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
        "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = "
        "torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be replaced "
        "with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce equivalent results "
        "for all valid (symmetric positive definite) inputs.", 1765),
    "qr": (
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')", 2505),
    "lu": (
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex "
        "and will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, "
        "compute_pivots)\nshould be replaced with\nLU, pivots = torch.linalg.lu_factor(A, "
        "compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)"
        "\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, "
        "compute_pivots)", 2073),
    "lu_solve": (
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
        "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
        "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = torch.linalg.lu_solve("
        "LU, pivots, B)", 2230),
    "triangular_solve": (
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will "
        "be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B).", 2273),
}


def warn_deprecated(name: str) -> None:
    """torch's deprecation warning for an older linear-algebra name: once per process, as
    torch's TORCH_WARN_ONCE."""
    if name in _WARNED:
        return
    _WARNED.add(name)
    text, line = DEPRECATED[name]
    warnings.warn(f"{text} (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
                  f"BatchLinearAlgebra.cpp:{line}.)", UserWarning, stacklevel=3)
