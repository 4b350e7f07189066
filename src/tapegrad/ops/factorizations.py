"""Matrix factorizations and triangular solves: ``cholesky`` and ``solve_triangular``.

Both work on batches of matrices (leading dimensions). The forwards call LAPACK through NumPy
(and SciPy's triangular solver, imported on first use); the backward rules are torch's:

* Cholesky A = L L^T: Phi(L^T G) is the lower triangle with the diagonal halved, and
  dA = L^{-T} Phi(L^T G) L^{-1}, symmetrized.
* X = A^{-1} B with A triangular: dB = A^{-T} G, dA = -dB X^T restricted to A's triangle.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._registry import defop


def _check_square(name: str, a: np.ndarray) -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")


def _cholesky_np(a: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
    """The factors and LAPACK-style info (0, or the order of the first failing minor)."""
    batch = a.shape[:-2]
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.zeros_like(flat)
    info = np.zeros(flat.shape[0], dtype=np.int32)
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            for k in range(1, m.shape[-1] + 1):  # find the first minor that is not p.d.
                try:
                    np.linalg.cholesky(m[:k, :k])
                except np.linalg.LinAlgError:
                    info[i] = k
                    break
    out = out.reshape(a.shape)
    if upper:
        out = np.swapaxes(out, -1, -2).conj()
    return out, info.reshape(batch)


@defop("linalg_cholesky", node="LinalgCholeskyExBackward0", save_output=True)
def _cholesky(a: np.ndarray, *, upper: bool = False) -> np.ndarray:
    out, info = _cholesky_np(a, upper)
    if info.any():
        bad = int(info.reshape(-1)[np.flatnonzero(info.reshape(-1))[0]])
        if info.ndim:
            idx = int(np.flatnonzero(info.reshape(-1))[0])
            raise RuntimeError(f"linalg.cholesky: (Batch element {idx}): The factorization "
                               f"could not be completed because the input is not positive-"
                               f"definite (the leading minor of order {bad} is not "
                               f"positive-definite).")
        raise RuntimeError(f"linalg.cholesky: The factorization could not be completed because "
                           f"the input is not positive-definite (the leading minor of order "
                           f"{bad} is not positive-definite).")
    return out


@_cholesky.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # dA = L^{-H} Phi(L^H G) L^{-1}, symmetrized
    (out,) = ctx.saved
    upper = ctx.params.get("upper", False)
    L = out.mH if upper else out
    g = grad.mH if upper else grad
    phi = (L.mH @ g).tril()
    n = phi.shape[-1]
    half = Tensor._make(np.where(np.eye(n, dtype=bool), 0.5, 1.0).astype(phi._data.dtype))
    phi = phi * half
    left = solve_triangular(L.mH, phi, upper=True)  # L^{-H} Phi
    ga = solve_triangular(L.mH, left.mH, upper=True).mH  # (L^{-H} (L^{-H} Phi)^H)^H
    return (0.5 * (ga + ga.mH),)


def _solve_tri_np(a: np.ndarray, b: np.ndarray, upper: bool, left: bool,
                  unitriangular: bool) -> np.ndarray:
    from scipy.linalg import solve_triangular as st  # lazily: SciPy takes a while to import

    if not left:  # X A = B  <=>  A^T X^T = B^T
        return np.swapaxes(_solve_tri_np(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2),
                                         not upper, True, unitriangular), -1, -2)
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a_b = np.broadcast_to(a, shape + a.shape[-2:]).reshape((-1,) + a.shape[-2:])
    b_b = np.broadcast_to(b, shape + b.shape[-2:]).reshape((-1,) + b.shape[-2:])
    dt = np.result_type(a.dtype, b.dtype)
    out = np.empty((a_b.shape[0],) + b.shape[-2:], dtype=dt)
    with np.errstate(all="ignore"):
        for i in range(a_b.shape[0]):
            out[i] = st(a_b[i], b_b[i], lower=not upper, unit_diagonal=unitriangular,
                        check_finite=False)
    return out.reshape(shape + b.shape[-2:])


@defop("linalg_solve_triangular", node="LinalgSolveTriangularBackward0", save=(0,),
       save_output=True)
def _solve_triangular(a: np.ndarray, b: np.ndarray, *, upper: bool, left: bool = True,
                      unitriangular: bool = False) -> np.ndarray:
    return _solve_tri_np(a, b, upper, left, unitriangular)


@_solve_triangular.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # X = A^{-1}B: dB = A^{-H}G, dA = -dB X^H (A's part)
    a, x = ctx.saved
    p = ctx.params
    upper, left, unit = p["upper"], p.get("left", True), p.get("unitriangular", False)
    gb = solve_triangular(a.mH, grad, upper=not upper, left=left, unitriangular=unit)
    ga = None
    if ctx.needs_input_grad[0]:
        ga = -(gb @ x.mH) if left else -(x.mH @ gb)
        ga = ga.triu(1 if unit else 0) if upper else ga.tril(-1 if unit else 0)
    return (ga, gb)


def cholesky(input: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor:
    """``torch.linalg.cholesky``: L with A = L L^H (or U^H U with ``upper=True``)."""
    _check_square("linalg.cholesky", input._data)
    res = _cholesky(input, upper=upper)
    if out is not None:
        out.copy_(res)
        return out
    return res


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out: Tensor | None = None) -> Tensor:
    """``torch.linalg.solve_triangular``: X with A X = B (X A = B with ``left=False``)."""
    if A._data.ndim < 2 or B._data.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor "
                           f"{'A' if A._data.ndim < 2 else 'B'} must have at least 2 "
                           "dimensions.")
    res = _solve_triangular(A, B, upper=upper, left=left, unitriangular=unitriangular)
    if out is not None:
        out.copy_(res)
        return out
    return res
