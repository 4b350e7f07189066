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

from .. import return_types
from .._naming import public
from .._tensor import Tensor
from ._lapack import scipy_linalg
from ._registry import defop
from .shape import cat

_TAYLOR_DTYPES = frozenset(map(np.dtype, (np.float32, np.float64, np.complex64, np.complex128)))


@public("._C")
class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: a matrix the algorithm cannot handle (e.g. singular)."""


def _check_square(name: str, a: np.ndarray) -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")


def _cholesky_np(a: np.ndarray, upper: bool) -> tuple[np.ndarray, np.ndarray]:
    """The factors and LAPACK-style info (0, or the order of the first failing minor)."""
    batch = a.shape[:-2]
    flat = a.reshape((int(np.prod(a.shape[:-2])),) + a.shape[-2:])
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
            raise _LinAlgError(f"linalg.cholesky: (Batch element {idx}): The factorization "
                               f"could not be completed because the input is not positive-"
                               f"definite (the leading minor of order {bad} is not "
                               f"positive-definite).")
        raise _LinAlgError(f"linalg.cholesky: The factorization could not be completed because "
                           f"the input is not positive-definite (the leading minor of order "
                           f"{bad} is not positive-definite).")
    return out


@_cholesky.backward
def cholesky_backward(ctx: Any, grad: Tensor) -> tuple:
    # dA = L^{-H} Phi L^{-1}, Phi = (X + tril(X,-1)^H) / 2
    (out,) = ctx.saved  # with X = tril(L^H G): torch's formula (Hermitian but for Im diag X)
    upper = ctx.params.get("upper", False)
    L = out.mH if upper else out
    g = grad.mH if upper else grad
    x = (L.mH @ g).tril()
    phi = 0.5 * (x + x.tril(-1).mH)
    left = solve_triangular(L.mH, phi, upper=True)  # L^{-H} Phi
    return (solve_triangular(L, left, upper=False, left=False),)  # (L^{-H} Phi) L^{-1}


def _solve_tri_np(a: np.ndarray, b: np.ndarray, upper: bool, left: bool,
                  unitriangular: bool) -> np.ndarray:
    lapack = scipy_linalg().lapack

    if not left:  # X A = B  <=>  A^T X^T = B^T
        return np.swapaxes(_solve_tri_np(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2),
                                         not upper, True, unitriangular), -1, -2)
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    count = int(np.prod(shape))  # (a -1 cannot be inferred for empty matrices)
    a_b = np.broadcast_to(a, shape + a.shape[-2:]).reshape((count,) + a.shape[-2:])
    b_b = np.broadcast_to(b, shape + b.shape[-2:]).reshape((count,) + b.shape[-2:])
    dt = np.result_type(a.dtype, b.dtype)
    out = np.zeros((a_b.shape[0],) + b.shape[-2:], dtype=dt)
    if out.size == 0:
        return out.reshape(shape + b.shape[-2:])
    # LAPACK's trtrs directly (scipy.linalg.solve_triangular's wrapper costs ~40 ms a call
    # here); a zero on the diagonal falls back to substitution, giving inf/nan as torch does
    trtrs = lapack.get_lapack_funcs("trtrs", (a_b[:1].astype(dt), b_b[:1].astype(dt)))
    with np.errstate(all="ignore"):
        for i in range(a_b.shape[0]):
            x, info = trtrs(a_b[i].astype(dt, copy=False), b_b[i].astype(dt, copy=False),
                            lower=int(not upper), unitdiag=int(unitriangular))
            out[i] = x if info == 0 else _substitute(a_b[i], b_b[i], upper, unitriangular)
    return out.reshape(shape + b.shape[-2:])


def _substitute(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool) -> np.ndarray:
    """Forward (back) substitution for a triangular ``a`` with a zero pivot (IEEE inf/nan)."""
    n = a.shape[-1]
    x = np.zeros(np.broadcast_shapes(a.shape[:-1] + (1,), b.shape), np.result_type(a, b))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        rest = slice(i + 1, n) if upper else slice(0, i)
        r = b[i] - a[i, rest] @ x[rest]
        x[i] = r if unit else r / a[i, i]
    return x


@defop("linalg_solve_triangular", node="LinalgSolveTriangularBackward0", save=(0,),
       save_output=True)
def _solve_triangular(a: np.ndarray, b: np.ndarray, *, upper: bool, left: bool = True,
                      unitriangular: bool = False) -> np.ndarray:
    return _solve_tri_np(a, b, upper, left, unitriangular)


@_solve_triangular.backward
def solve_triangular_backward(ctx: Any, grad: Tensor) -> tuple:
    # X = A^{-1}B: dB = A^{-H}G, dA = -dB X^H (A's part)
    a, x = ctx.saved
    p = ctx.params
    upper, left, unit = p["upper"], p.get("left", True), p.get("unitriangular", False)
    gb = solve_triangular(a.mH, grad, upper=not upper, left=left, unitriangular=unit)
    ga = None
    if ctx.needs_input_grad[0]:
        ga = -(gb @ x.mH) if left else -(x.mH @ gb)
        ga = ga.triu(1 if unit else 0) if upper else ga.tril(-1 if unit else 0)
    return (ga, gb)


# These rules are torch's complex formulas (conjugate transposes, mH): they take complex
# gradients as they are, without the registry's conj(rule(conj(grad))) (see _registry).
_cholesky.holomorphic = _solve_triangular.holomorphic = False


def cholesky(input: Tensor, *, upper: bool = False) -> Tensor:
    """``torch.linalg.cholesky``: L with A = L L^H (or U^H U with ``upper=True``)."""
    _check_square("linalg.cholesky", input._data)
    res = _cholesky(input, upper=upper)
    return res


def solve_triangular(input: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """``torch.linalg.solve_triangular``: X with A X = B (X A = B with ``left=False``)."""
    if input._data.ndim < 2 or B._data.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor "
                           f"{'A' if input._data.ndim < 2 else 'B'} must have at least 2 "
                           "dimensions.")
    res = _solve_triangular(input, B, upper=upper, left=left, unitriangular=unitriangular)
    return res


# ---------------------------------------------------------------------------------------------
# General solve, matrix exponential, QR and Householder products
# ---------------------------------------------------------------------------------------------

def _solve_np(a: np.ndarray, b: np.ndarray, left: bool) -> np.ndarray:
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return np.swapaxes(_solve_np(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), True),
                           -1, -2)
    try:
        if b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]):  # vector rhs
            return np.linalg.solve(a, b[..., None])[..., 0]
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        raise _LinAlgError("torch.linalg.solve: The solver failed because the input matrix "
                           "is singular.") from None


@defop("linalg_solve", node="LinalgSolveExBackward0", save=(0,), save_output=True)
def _solve(a: np.ndarray, b: np.ndarray, *, left: bool = True) -> np.ndarray:
    dt = np.result_type(a.dtype, b.dtype)
    return _solve_np(a.astype(dt, copy=False), b.astype(dt, copy=False), left)


@_solve.backward
def solve_backward(ctx: Any, grad: Tensor) -> tuple:  # X = A^{-1}B: dB = A^{-H}G, dA = -dB X^H
    a, x = ctx.saved
    left = ctx.params.get("left", True)
    gb = solve(a.mH, grad, left=left)
    ga = None
    if ctx.needs_input_grad[0]:
        if gb.ndim == a.ndim - 1:  # a vector right-hand side
            ga = -(gb.unsqueeze(-1) @ x.unsqueeze(-1).mH)
        else:
            ga = -(gb @ x.mH) if left else -(x.mH @ gb)
    return (ga, gb)


_solve.holomorphic = False  # a complex formula (see cholesky)


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``torch.linalg.solve``: X with A X = B (X A = B with ``left=False``)."""
    _check_square("linalg.solve", A._data)
    n = A.shape[-1]
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    rows, cols = (B.shape[-1], 1) if vector else tuple(B.shape[-2:])
    if (rows if left else cols) != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {rows}x{cols})")
    res = _solve(A, B, left=left)
    return res


@defop("linalg_matrix_exp", node="LinalgMatrixExpBackward0", save=(0,))
def _matrix_exp(a: np.ndarray) -> np.ndarray:
    n = a.shape[-1]
    if n == 0:
        return a.copy()
    if n == 1:
        return np.exp(a)
    if a.dtype in _TAYLOR_DTYPES:  # torch's Taylor scaling and squaring, in a's own precision
        # ops/matrix_exp_taylor.py: loaded on the first matrix_exp that takes this path
        from .matrix_exp_taylor import matrix_exp_taylor

        return matrix_exp_taylor(a)
    return np.asarray(scipy_linalg().expm(a), dtype=a.dtype)


@_matrix_exp.backward
def matrix_exp_backward(ctx: Any, grad: Tensor) -> tuple:
    # dA = upper-right block of exp([[A^H, G], [0, A^H]])
    (a,) = ctx.saved
    n = a.shape[-1]
    ah = a.mH
    zero = Tensor._make(np.zeros(a.shape, dtype=a._data.dtype))
    big = cat([cat([ah, grad], -1), cat([zero, ah], -1)], -2)
    return (matrix_exp(big)[..., :n, n:],)


_matrix_exp.holomorphic = False  # a complex formula (see cholesky)


def matrix_exp(input: Tensor) -> Tensor:
    """``torch.linalg.matrix_exp`` (and ``torch.matrix_exp``): e^A = sum A^k / k!."""
    _check_square("linalg.matrix_exp", input._data)
    return _matrix_exp(input)


def geqrf(input: Tensor) -> Any:
    """``torch.geqrf``: LAPACK's compact QR (R on and above the diagonal, the Householder
    vectors below it) and the reflectors' scalars tau. Not differentiable, as in torch."""
    lapack = scipy_linalg().lapack

    a = input._data
    if a.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    fn = lapack.get_lapack_funcs("geqrf", (a,))
    m, n = a.shape[-2:]
    flat = a.reshape((int(np.prod(a.shape[:-2])), m, n))
    qr = np.empty_like(flat)
    tau = np.empty((flat.shape[0], min(m, n)), dtype=a.dtype)
    if min(m, n):  # (LAPACK rejects empty matrices)
        for i, mat in enumerate(flat):
            qr[i], tau[i], _, _ = fn(mat)
    return geqrf_result(Tensor._make(qr.reshape(a.shape)),
                        Tensor._make(tau.reshape(a.shape[:-2] + (min(m, n),))))


def _householder_np(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    m, n = a.shape[-2:]
    dt = np.result_type(a.dtype, tau.dtype)
    q = np.broadcast_to(np.eye(m, n, dtype=dt), a.shape[:-2] + (m, n)).copy()
    for i in reversed(range(tau.shape[-1])):  # Q <- H_i Q, H_i = I - tau_i v_i v_i^H
        v = np.zeros(a.shape[:-2] + (m, 1), dtype=dt)
        v[..., i, 0] = 1
        v[..., i + 1:, 0] = a[..., i + 1:, i]
        t = tau[..., i, None, None]
        q = q - (t * v) @ (np.swapaxes(v, -1, -2).conj() @ q)
    return q


def _reflector(a: Tensor, i: int) -> Tensor:
    """v_i as a column (..., m, 1): zeros above row i, a 1 at row i, A's column i below."""
    dt = a._data.dtype
    head = Tensor._make(np.zeros(a.shape[:-2] + (i, 1), dtype=dt))
    one = Tensor._make(np.ones(a.shape[:-2] + (1, 1), dtype=dt))
    return cat([head, one, a[..., i + 1:, i:i + 1]], -2)


@defop("linalg_householder_product", node="LinalgHouseholderProductBackward0", save=(0, 1))
def _householder(a: np.ndarray, tau: np.ndarray) -> np.ndarray:
    return _householder_np(a, tau)


@_householder.backward
def householder_backward(ctx: Any, grad: Tensor) -> tuple:
    # Q_i = H_i Q_{i+1} = Q_{i+1} - t v (v^T Q_{i+1}), taken from the outermost reflector in:
    # dt = -v^T G Q_{i+1}^T v, dv = -t (G Q_{i+1}^T v + Q_{i+1} G^T v), G <- H_i^T G
    a, tau = ctx.saved
    if a._data.dtype.kind == "c" or tau._data.dtype.kind == "c":
        raise NotImplementedError("tapegrad: the derivative of linalg.householder_product is "
                                  "implemented for real inputs only")
    m, n = a.shape[-2], a.shape[-1]
    k = tau.shape[-1]
    dt = grad._data.dtype
    if k == 0:  # no reflectors: Q is the identity's first n columns, constant
        return (Tensor._make(np.zeros(a.shape, dtype=dt)),
                Tensor._make(np.zeros(tau.shape, dtype=dt)))
    vs = [_reflector(a, i) for i in range(k)]
    ts = [tau[..., i:i + 1].unsqueeze(-1) for i in range(k)]
    qs: list[Tensor] = [grad] * (k + 1)  # qs[i] = Q_i (recomputed, so create_graph sees A)
    qs[k] = Tensor._make(np.broadcast_to(np.eye(m, n, dtype=dt), a.shape[:-2] + (m, n)).copy())
    for i in reversed(range(k)):
        qs[i] = qs[i + 1] - (ts[i] * vs[i]) @ (vs[i].mT @ qs[i + 1])
    g = grad
    cols, dtaus = [], []
    for i in range(k):
        v, t, qn = vs[i], ts[i], qs[i + 1]
        qtv = qn.mT @ v
        gtv = g.mT @ v
        dtaus.append(-(v.mT @ g @ qtv).squeeze(-1))  # (..., 1)
        dv = -t * (g @ qtv + qn @ gtv)
        zeros = Tensor._make(np.zeros(a.shape[:-2] + (i + 1, 1), dtype=dt))
        cols.append(cat([zeros, dv[..., i + 1:, :]], -2))
        g = g - (t * v) @ (v.mT @ g)
    if k < n:
        cols.append(Tensor._make(np.zeros(a.shape[:-2] + (m, n - k), dtype=dt)))
    ga = cat(cols, -1) if ctx.needs_input_grad[0] else None
    gtau = cat(dtaus, -1) if ctx.needs_input_grad[1] else None
    return (ga, gtau)


def householder_product(input: Tensor, tau: Tensor) -> Tensor:
    """``torch.linalg.householder_product`` (``torch.orgqr``): the first n columns of
    H_1 ... H_k, where H_i = I - tau_i v_i v_i^H and v_i is column i of A below the diagonal,
    with a 1 on it."""
    if input.ndim < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 "
                           "dimensions.")
    m, n = input.shape[-2], input.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    k = tau.shape[-1]
    if k > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    q = _householder(input, tau)
    return q


def orgqr(input: Tensor, input2: Tensor) -> Tensor:
    """``torch.orgqr``: ``linalg.householder_product`` (torch names the reflectors' scalars
    ``input2`` here)."""
    return householder_product(input, input2)


@defop("linalg_qr", node="LinalgQrBackward0", save=(0,), outputs=2)
def _qr(a: np.ndarray, *, mode: str) -> tuple[np.ndarray, np.ndarray]:
    q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = np.zeros((0,), dtype=a.dtype)
    return q.astype(a.dtype, copy=False), r.astype(a.dtype, copy=False)


@_qr.backward
def qr_backward(ctx: Any, grads: list) -> tuple:
    # A = QR: see _qr_backward_tall; a wide A is split into a square part and the rest
    if ctx.params["mode"] == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    m, n = ctx.input_shapes[0][-2:]
    if ctx.params["mode"] == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    gq = grads[0]
    gr = grads[1] if len(grads) > 1 else None  # R unused: the engine passes Q's alone
    a = ctx.saved[0]
    q, r = qr(a)  # recomputed with ops, so create_graph sees how they depend on A
    if m >= n:
        return (_qr_backward_tall(q, r, gq, gr),)
    # wide A = Q [R1 R2] with X = A[:, :m] = Q R1 square and Y = A[:, m:] = Q R2:
    # dY = Q gR2, and X gets the square rule with gQ + Y gR2^H
    y = a[..., m:]
    gr1 = gr[..., :m] if gr is not None else None
    if gr is not None:
        gr2 = gr[..., m:]
        gq = y @ gr2.mH if gq is None else gq + y @ gr2.mH
        gy = q @ gr2
    else:
        gy = Tensor._make(np.zeros(y.shape, dtype=y._data.dtype))
    gx = _qr_backward_tall(q, r[..., :m], gq, gr1)
    return (cat([gx, gy], -1),)


def _qr_backward_tall(q: Tensor, r: Tensor, gq: Tensor | None, gr: Tensor | None) -> Tensor:
    # M = R gR^H - gQ^H Q, dA = (gQ + Q copyltu(M)) R^{-H}, where copyltu(M) is the Hermitian
    # matrix with M's lower triangle
    if gr is not None:
        mm = r @ gr.mH
        if gq is not None:
            mm = mm - gq.mH @ q
    else:
        assert gq is not None
        mm = -(gq.mH @ q)
    low = mm.tril(-1)
    sym = low + low.mH + (mm.tril() - low)  # the lower triangle mirrored, the diagonal once
    b = q @ sym
    if gq is not None:
        b = b + gq
    return solve_triangular(r.mH, b, upper=False, left=False)


_qr.holomorphic = False  # a complex formula (see cholesky)


def qr(A: Tensor, mode: str = "reduced") -> Any:
    """``torch.linalg.qr``: A = QR with Q orthonormal columns and R upper triangular
    (``mode``: 'reduced', 'complete', or 'r' for R alone with an empty Q)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    q, r = _qr(A, mode=mode)
    return linalg_qr(q, r)


linalg_qr = return_types.linalg_qr.of
geqrf_result = return_types.geqrf.of
