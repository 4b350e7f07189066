"""Determinants, inverses and solvers: det, slogdet, inv, lstsq, pinv, the Cholesky solves and
the older ``triangular_solve``.

Forwards are LAPACK through NumPy/SciPy, batched over the leading dimensions; the backward
rules are torch's, written with tapegrad ops (second derivatives come from ``create_graph``):

* det:      dA = g det(A) A^{-H} (a solve), or through the SVD where A is singular:
            dA = U diag(g alpha prod_{j != i} s_j) V^H, alpha = det(U) det(V^H)
* slogdet:  dA = g_logabsdet A^{-H}
* inv:      dA = -A^{-H} G A^{-H}
* pinv:     torch's pinv_backward (the derivative of A^+ on matrices of constant rank)
* lstsq:    X = A^+ B: dA through pinv's rule with G B^H, dB = A^{+H} G
* cholesky_inverse / cholesky_solve / triangular_solve: see their rules.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .._tensor import Tensor
from . import low_precision as lp
from ._lapack import (
    batch_error,
    check_float,
    check_matrix,
    check_square,
    conj,
    getrf,
    per_matrix,
    return_type,
    scipy_linalg,
    warn_deprecated,
)
from ._lapack import count as _count
from ._registry import defop, scalar_type_name
from .decompositions import _lu_solve_one, _svd
from .factorizations import (
    _cholesky,
    _cholesky_np,
    _LinAlgError,
    _solve,
    _solve_np,
    _solve_tri_np,
    cholesky,
    solve,
)
from .linalg import _dtype_check
from .shape import cat, stack

linalg_slogdet = return_type("linalg_slogdet", "sign logabsdet")
slogdet_result = return_type("slogdet", "sign logabsdet")
linalg_inv_ex = return_type("linalg_inv_ex", "inverse info")
linalg_solve_ex = return_type("linalg_solve_ex", "result info")
linalg_cholesky_ex = return_type("linalg_cholesky_ex", "L info")
linalg_lstsq = return_type("linalg_lstsq", "solution residuals rank singular_values")
triangular_solve_result = return_type("triangular_solve", "solution cloned_coefficient")


def _eye(n: int, like: Tensor) -> Tensor:
    return Tensor._make(np.eye(n, dtype=like._data.dtype))


# ---------------------------------------------------------------------------------------------
# Determinants
# ---------------------------------------------------------------------------------------------

@defop("linalg_det", node="LinalgDetBackward0", save=(0,), save_output=True)
def _det(a: np.ndarray) -> np.ndarray:
    if a.shape[-1] == 0:
        return np.ones(a.shape[:-2], dtype=a.dtype)
    return np.asarray(np.linalg.det(a), dtype=a.dtype)


@_det.backward
def det_backward(ctx: Any, grad: Tensor) -> tuple:  # dA = g det A^{-H}; singular A: through the SVD
    a, d = ctx.saved
    if a.shape[-1] == 0:
        return (Tensor._make(np.zeros(a.shape, dtype=a._data.dtype)),)
    gd = (grad * conj(d)).unsqueeze(-1).unsqueeze(-2)
    if np.all(d._data != 0) and np.all(np.isfinite(np.linalg.cond(a._data))):
        return (solve(a.mH, gd * _eye(a.shape[-1], a)),)
    return (_det_singular(a, grad),)


def _det_singular(a: Tensor, grad: Tensor) -> Tensor:
    """dA = U diag(g alpha prod_{j != i} s_j) V^H with alpha = conj(det(U) det(V^H))."""
    u, s, vh = _svd(a, full_matrices=False)
    alpha = conj(_det(u) * _det(vh))
    n = s.shape[-1]
    others = [cat([s[..., :i], s[..., i + 1:]], -1).prod(-1) for i in range(n)]
    dd = stack(others, -1) * (grad * alpha).unsqueeze(-1)
    return (u * dd.unsqueeze(-2)) @ vh


def det(A: Tensor) -> Tensor:
    """``torch.linalg.det`` (``torch.det``): the determinant of each square matrix."""
    check_square("linalg.det", A._data)
    check_float("linalg.det", A._data)
    return _det(A)


def torch_det(input: Tensor) -> Tensor:
    return det(input)


@defop("linalg_slogdet", node="LinalgSlogdetBackward0", save=(0,), outputs=2)
def _slogdet(a: np.ndarray) -> tuple:
    if a.shape[-1] == 0:
        return np.ones(a.shape[:-2], a.dtype), np.zeros(a.shape[:-2], a.real.dtype)
    sign, logabs = np.linalg.slogdet(a)
    return np.asarray(sign, dtype=a.dtype), np.asarray(logabs, dtype=a.real.dtype)


@_slogdet.backward
def slogdet_backward(ctx: Any, grads: list) -> tuple:
    # dA = g_logabsdet A^{-H} (real: the sign is constant)
    (a,) = ctx.saved
    g = grads[1] if len(grads) > 1 else None
    if g is None:
        return (None,)
    gd = g.unsqueeze(-1).unsqueeze(-2).to(a.dtype)
    return (solve(a.mH, gd * _eye(a.shape[-1], a)),)


def slogdet(A: Tensor) -> Any:
    """``torch.linalg.slogdet``: (sign, log|det|) of each square matrix."""
    check_square("linalg.slogdet", A._data)
    check_float("linalg.slogdet", A._data)
    return linalg_slogdet(*_slogdet(A))


def torch_slogdet(input: Tensor) -> Any:
    """``torch.slogdet``: linalg.slogdet, as the ``torch.return_types.slogdet`` tuple."""
    check_square("linalg.slogdet", input._data)
    check_float("linalg.slogdet", input._data)
    return slogdet_result(*_slogdet(input))


def logdet(input: Tensor) -> Tensor:
    """``torch.logdet``: log det(A); nan where det(A) < 0, -inf where A is singular."""
    check_square("logdet", input._data)
    check_float("linalg.slogdet", input._data)
    sign, logabs = _slogdet(input)
    if input.is_complex():
        return logabs + sign.log()
    nan = Tensor._make(np.array(np.nan, dtype=logabs._data.dtype))
    return logabs.where(sign != -1, nan)


# ---------------------------------------------------------------------------------------------
# Inverse and solve
# ---------------------------------------------------------------------------------------------

def _inv_np(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The inverses and LAPACK's info per matrix (the index of a zero pivot of U, 1-based)."""
    n = a.shape[-1]
    if n == 0:
        return a.copy(), np.zeros(a.shape[:-2], dtype=np.int32)
    try:
        with np.errstate(all="ignore"):
            return _column_major(np.linalg.inv(a).astype(a.dtype)), np.zeros(a.shape[:-2],
                                                                              np.int32)
    except np.linalg.LinAlgError:
        pass

    def one(m: np.ndarray) -> tuple:
        lu_, piv, info = getrf(m)
        if info:
            return np.full((n, n), np.nan, dtype=a.dtype), info
        return _lu_solve_one(lu_, piv, np.eye(n, dtype=a.dtype), 0), 0

    return per_matrix(one, a, [(n, n), ()], [a.dtype, np.int32])


def _column_major(x: np.ndarray) -> np.ndarray:
    """Each matrix stored by columns, as LAPACK (and so torch) returns it."""
    return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)


@defop("linalg_inv_ex", node="LinalgInvExBackward0", save_output=True, outputs=2)
def _inv_ex(a: np.ndarray) -> tuple:
    return _inv_np(a)


@_inv_ex.backward
def inv_ex_backward(ctx: Any, grads: list) -> tuple:  # dA = -A^{-H} G A^{-H}
    (inv,) = ctx.saved
    g = grads[0]
    ih = inv.mH
    return (-(ih @ g @ ih),)


def inv_ex(A: Tensor, *, check_errors: bool = False) -> Any:
    """``torch.linalg.inv_ex``: the inverse and LAPACK's info (no error unless
    ``check_errors``)."""
    check_square("linalg.inv", A._data)  # (torch names the op it runs)
    check_float("linalg.inv_ex", A._data)
    inv_, info = _inv_ex(A)
    if check_errors:
        _inv_error("linalg.inv_ex", info._data)
    return linalg_inv_ex(inv_, info)


def _inv_error(name: str, info: np.ndarray) -> None:
    batch_error(name, info, lambda i: (
        f"The diagonal element {i} is zero, the inversion could not be completed because "
        f"the input matrix is singular."), _LinAlgError)


def inv(A: Tensor) -> Tensor:
    """``torch.linalg.inv`` (``torch.inverse``): the inverse of each square matrix."""
    check_square("linalg.inv", A._data)
    check_float("linalg.inv", A._data)
    inv_, info = _inv_ex(A)
    _inv_error("linalg.inv", info._data)
    return inv_


def inverse(input: Tensor) -> Tensor:
    return inv(input)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> Any:
    """``torch.linalg.solve_ex``: linalg.solve and LAPACK's info."""
    check_square("linalg.solve", A._data)
    a = A._data
    n = a.shape[-1]
    info = per_matrix(lambda m: (getrf(m)[2],), a, [()], [np.int32])[0]
    if info.any():
        if check_errors:
            batch_error("torch.linalg.solve_ex", info, lambda i: (
                "The solver failed because the input matrix is singular."), _LinAlgError)
        with np.errstate(all="ignore"):
            try:
                res = Tensor._make(_solve_np(a, B._data, left))
            except _LinAlgError:
                bshape = np.broadcast_shapes(a.shape[:-2], B._data.shape[:-2]) + B.shape[-2:]
                res = Tensor._make(np.full(bshape if B.ndim > 1 else (n,), np.nan, a.dtype))
    else:
        res = _solve(A, B, left=left)
    return linalg_solve_ex(res, Tensor._make(info))


def cholesky_ex(input: Tensor, *, upper: bool = False, check_errors: bool = False) -> Any:
    """``torch.linalg.cholesky_ex``: the Cholesky factor and LAPACK's info (the order of the
    first leading minor that is not positive-definite)."""
    check_square("linalg.cholesky", input._data)
    check_float("linalg.cholesky", input._data)
    if check_errors:
        factor = cholesky(input, upper=upper)
        info = np.zeros(input.shape[:-2], np.int32)
    else:
        fac, info = _cholesky_np(input._data, upper)
        if info.any():
            factor = Tensor._make(fac)
        else:
            factor = _cholesky(input, upper=upper)
    return linalg_cholesky_ex(factor, Tensor._make(info))


# ---------------------------------------------------------------------------------------------
# Pseudo-inverse and least squares
# ---------------------------------------------------------------------------------------------

def _tolerances(a: np.ndarray, atol: Any, rtol: Any) -> tuple[Any, Any]:
    """torch's defaults: rtol = eps * max(m, n) unless an atol > 0 is given alone."""
    if isinstance(atol, Tensor):
        atol = atol._data
    if isinstance(rtol, Tensor):
        rtol = rtol._data
    if rtol is None:
        eps = np.finfo(a.real.dtype).eps
        default = eps * max(a.shape[-2], a.shape[-1])
        rtol = default if atol is None or np.all(np.asarray(atol) <= 0) else 0.0
    return (0.0 if atol is None else atol), rtol


@defop("linalg_pinv", node="LinalgPinvBackward0", save=(0,), save_output=True)
def _pinv(a: np.ndarray, atol: Any = None, rtol: Any = None, *,
          hermitian: bool = False, low: Any = None) -> np.ndarray:
    m, n = a.shape[-2:]
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (n, m), dtype=a.dtype)
    atol, rtol = _tolerances(a, atol, rtol)
    with np.errstate(all="ignore"):
        if hermitian:
            w, v = np.linalg.eigh(a)
            aw = np.abs(w)
            tol = np.maximum(np.asarray(atol)[..., None], np.asarray(rtol)[..., None]
                             * aw.max(-1, keepdims=True))
            winv = np.where(aw > tol, 1 / w, 0).astype(w.dtype)
            if low is not None:
                return _pinv_product(v, winv, v, low)
            return ((v * winv[..., None, :]) @ np.swapaxes(v, -1, -2).conj()).astype(a.dtype)
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        tol = np.maximum(np.asarray(atol)[..., None], np.asarray(rtol)[..., None]
                         * s[..., :1])
        sinv = np.where(s > tol, 1 / s, 0).astype(s.dtype)
        if low is not None:
            return _pinv_product(np.swapaxes(vh, -1, -2), sinv, u, low)
        vs = np.swapaxes(vh, -1, -2).conj() * sinv[..., None, :]
        return (vs @ np.swapaxes(u, -1, -2).conj()).astype(a.dtype)


def _pinv_product(v: np.ndarray, sinv: np.ndarray, u: np.ndarray, low: np.dtype) -> np.ndarray:
    """pinv's last step under CPU autocast, as torch's: its factorization runs in float32
    (linalg_svd and linalg_eigh are on the float32 list; A is float32: torch's pinv takes no
    low-precision input), and the final product is a ``matmul`` on the low-precision list:
    (V S^-1) and U^H rounded to the low type, the product accumulated in float32 and rounded
    once."""
    vs = lp.cast(v * sinv[..., None, :], low)
    return lp.matmul(vs, lp.cast(np.ascontiguousarray(np.swapaxes(u, -1, -2)), low))


@_pinv.backward
def pinv_backward(ctx: Any, grad: Tensor) -> tuple:
    a, p = ctx.saved[0], ctx.saved[-1]
    # autocast's low-type pinv of a float32 A: torch's rule fails on its first product of the
    # two, (pinv side) @ A
    if p.dtype != a.dtype:
        if a.ndim > 2:  # (a bmm's message)
            raise RuntimeError(f"expected scalar type {scalar_type_name(p.dtype)} but found "
                               f"{scalar_type_name(a.dtype)}")
        _dtype_check(p._data, a._data)
    return (pinv_derivative(grad, p, a), None, None)


def pinv_derivative(grad: Tensor, p: Tensor, a: Tensor) -> Tensor:
    """torch's rule for A^+ (products arranged to keep the matrices small)."""
    m, n = a.shape[-2], a.shape[-1]
    ph, gh = p.mH, grad.mH
    if m <= n:
        k = gh @ p
        kph = k @ ph
        return -(p @ k).mH + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a)
    k = p @ gh
    phk = ph @ k
    return -(k @ p).mH + (gh - a @ k) @ p @ ph + phk - phk @ p @ a


def pinv(input: Tensor, rcond: Any = None, hermitian: bool = False, *, atol: Any = None,
         rtol: Any = None) -> Tensor:
    """``torch.linalg.pinv``: the Moore-Penrose pseudo-inverse, singular values below
    max(atol, rtol * s_max) treated as zero."""
    check_matrix("linalg.pinv", input._data)
    check_float("linalg.pinv", input._data)
    if rcond is not None:
        rtol = rcond
    if hermitian:
        check_square("linalg.pinv", input._data)
    low = _autocast_low(input._data)
    if low is not None:  # CPU autocast: torch's last product in the low type (_pinv_product)
        return _pinv(input, atol, rtol, hermitian=hermitian, low=low)
    return _pinv(input, atol, rtol, hermitian=hermitian)


def _autocast_low(a: np.ndarray) -> Any:
    """The NumPy dtype CPU autocast computes products in, for a float32 ``a`` while autocast
    is on in this thread; None otherwise."""
    ac = sys.modules.get("tapegrad._autocast")
    if ac is None or not ac._state.cpu or ac._state.excluded or a.dtype != np.float32:
        return None
    return ac._state.dtypes["cpu"].np


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: linalg.pinv with ``rtol=rcond``."""
    return pinv(input, rtol=rcond)


def matrix_rank(input: Tensor, tol: Any = None, hermitian: bool = False, *, atol: Any = None,
                rtol: Any = None) -> Tensor:
    """``torch.linalg.matrix_rank``: the number of singular values above
    max(atol, rtol * s_max)."""
    check_matrix("torch.linalg.matrix_rank", input._data, "input")
    check_float("linalg.matrix_rank", input._data)
    a = input._data
    if tol is not None:
        atol, rtol = tol, 0.0
    if a.size == 0:
        return Tensor._make(np.zeros(a.shape[:-2], np.int64))
    atol, rtol = _tolerances(a, atol, rtol)
    s = np.abs(np.linalg.eigvalsh(a)) if hermitian else np.linalg.svd(a, compute_uv=False)
    smax = s.max(-1)
    tol_ = np.maximum(np.asarray(atol), np.asarray(rtol) * smax)
    res = (s > np.asarray(tol_)[..., None]).sum(-1).astype(np.int64)
    return Tensor._make(np.asarray(res))


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_np(a: np.ndarray, b: np.ndarray, rcond: Any, driver: str) -> tuple:
    sp_lstsq = scipy_linalg().lstsq

    m, n = a.shape[-2:]
    k = b.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a_b = np.broadcast_to(a, shape + (m, n)).reshape((_count(shape), m, n))
    b_b = np.broadcast_to(b, shape + (m, k)).reshape((_count(shape), m, k))
    count = a_b.shape[0]
    x = np.zeros((count, n, k), dtype=a.dtype)
    ranks = np.zeros(count, dtype=np.int64)
    svals = np.zeros((count, min(m, n)), dtype=a.real.dtype)
    if rcond is None:
        rcond = np.finfo(a.real.dtype).eps * max(m, n)
    for i in range(count):
        if m == 0 or n == 0:
            continue
        if driver == "gels":
            x[i] = np.linalg.lstsq(a_b[i], b_b[i], rcond=None)[0]
            continue
        sol, _, rank, sv = sp_lstsq(a_b[i], b_b[i], cond=rcond, lapack_driver=driver,
                                    check_finite=False)
        x[i], ranks[i] = sol, rank
        if sv is not None and driver != "gelsy":
            svals[i] = sv
    x = x.reshape(shape + (n, k))
    full_rank = driver == "gels" or bool(np.all(ranks == n))
    if m > n and driver != "gelsy" and full_rank:
        r = np.einsum("...ij,...jk->...ik", a_b, x.reshape((_count(shape), n, k))) - b_b
        res = (np.abs(r) ** 2).sum(-2).reshape(shape + (k,)).astype(a.real.dtype)
    else:
        res = np.zeros((0,), a.real.dtype)
    rank_out = ranks.reshape(shape) if driver != "gels" else np.zeros((0,), np.int64)
    sv_out = (svals.reshape(shape + (min(m, n),)) if driver in ("gelsd", "gelss")
              else np.zeros((0,), a.real.dtype))
    return x, res, rank_out, sv_out


@defop("linalg_lstsq", node="LinalgLstsqBackward0", save=(0, 1), save_output=True, outputs=4)
def _lstsq(a: np.ndarray, b: np.ndarray, *, rcond: Any = None, driver: str = "gelsy",
           vector: bool = False) -> tuple:
    bb = b[..., None] if vector else b
    x, res, rank, sv = _lstsq_np(a, bb, rcond, driver)
    if vector:
        x = x[..., 0]
        res = res[..., 0] if res.size else res
    return x, res, rank, sv


@_lstsq.backward
def lstsq_backward(ctx: Any, grads: list) -> tuple:
    # X = A^+ B: dA = pinv_derivative(G B^H), dB = A^{+H} G
    # the residuals r_j = |A x_j - b_j|^2 (at the optimum): dA = 2 (R g_r) X^H, dB = -2 R g_r
    a, b, sol = ctx.saved
    gx = grads[0]
    gres = grads[1] if len(grads) > 1 else None
    if gres is not None and gres.numel() == 0:  # no residuals were computed
        gres = None
    if gx is None and gres is None:
        return (None, None)
    vector = ctx.params.get("vector", False)
    if vector:
        b, sol = b.unsqueeze(-1), sol.unsqueeze(-1)
        gx = gx.unsqueeze(-1) if gx is not None else None
        gres = gres.unsqueeze(-1) if gres is not None else None
    p = pinv(a)
    ga = gb = None
    if gx is not None:
        ga = pinv_derivative(gx @ b.mH, p, a) if ctx.needs_input_grad[0] else None
        gb = p.mH @ gx if ctx.needs_input_grad[1] else None
    if gres is not None:
        x = sol
        r = (a @ x - b) * gres.unsqueeze(-2)
        if ctx.needs_input_grad[0]:
            t = 2 * (r @ x.mH)
            ga = t if ga is None else ga + t
        if ctx.needs_input_grad[1]:
            ga_b = -2 * r
            gb = ga_b if gb is None else gb + ga_b
    if vector and gb is not None:
        gb = gb.squeeze(-1)
    return (ga, gb)


def lstsq(input: Tensor, b: Tensor, rcond: Any = None, *, driver: str | None = None) -> Any:
    """``torch.linalg.lstsq``: X minimizing ||A X - B||_F, with the residuals, rank and
    singular values where the LAPACK ``driver`` computes them (torch's CPU default gelsy)."""
    if input.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    check_float("linalg.lstsq", input._data)
    if b.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if input.dtype != b.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {input.dtype} and other's dtype "
                           f"{b.dtype}")
    if driver is None:
        driver = "gelsy"
    if driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    vector = b.ndim == 1 or (b.ndim == input.ndim - 1 and tuple(b.shape) == tuple(input.shape[:-1]))
    if not vector and (b.ndim < 2 or input.ndim - b.ndim > 1):
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    m = input.shape[-2]
    if (b.shape[-1] if vector else b.shape[-2]) != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size("
                           f"{-1 if vector else -2})")
    return linalg_lstsq(*_lstsq(input, b, rcond=rcond, driver=driver, vector=vector))


# ---------------------------------------------------------------------------------------------
# Cholesky-based inverse and solve, the older triangular_solve
# ---------------------------------------------------------------------------------------------

@defop("cholesky_inverse", node="CholeskyInverseBackward0", save=(0,), save_output=True)
def _cholesky_inverse(low: np.ndarray, *, upper: bool = False) -> np.ndarray:
    n = low.shape[-1]
    if n == 0:
        return low.copy()
    f = np.swapaxes(low, -1, -2).conj() if upper else low
    with np.errstate(all="ignore"):
        finv = _tri_inv(f)
        return (np.swapaxes(finv, -1, -2).conj() @ finv).astype(low.dtype)


def _tri_inv(low: np.ndarray) -> np.ndarray:
    eye = np.broadcast_to(np.eye(low.shape[-1], dtype=low.dtype), low.shape)
    return _solve_tri_np(low, eye, False, True, False)


@_cholesky_inverse.backward
def cholesky_inverse_backward(ctx: Any, grad: Tensor) -> tuple:
    # C = inv (G + G^H) inv; dL = -C L (-L C if upper)
    low, inv_ = ctx.saved
    c = inv_ @ ((grad + grad.mH) @ inv_)
    return (-(low @ c) if ctx.params.get("upper", False) else -(c @ low),)


@_cholesky_inverse.jvp
def cholesky_inverse_jvp(tangents: list, inputs: tuple, out: Tensor, upper: bool = False) -> Tensor:
    # d(L L^H)^{-1} = -X (dL L^H + L dL^H) X  (U^H U with ``upper``)
    dl, low = tangents[0], inputs[0]
    m = dl.mH @ low + low.mH @ dl if upper else dl @ low.mH + low @ dl.mH
    return -(out @ m @ out)


def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky_inverse``: A^{-1} from A's Cholesky factor (L, or U with ``upper``)."""
    check_square("cholesky_inverse", input._data, "input")
    return _cholesky_inverse(input, upper=upper)


@defop("cholesky_solve", node="CholeskySolveBackward0", save=(1,), save_output=True)
def _cholesky_solve(b: np.ndarray, low: np.ndarray, *, upper: bool = False) -> np.ndarray:
    if upper:  # A = U^H U
        y = _solve_tri_np(np.swapaxes(low, -1, -2).conj(), b, False, True, False)
        return _solve_tri_np(low, y, True, True, False)
    y = _solve_tri_np(low, b, False, True, False)
    return _solve_tri_np(np.swapaxes(low, -1, -2).conj(), y, True, True, False)


@_cholesky_solve.backward
def cholesky_solve_backward(ctx: Any, grad: Tensor) -> tuple:
    # dB = cholesky_solve(G, L); C = dB X^H + X dB^H; dL = -C L (-L C if upper)
    low, x = ctx.saved
    upper = ctx.params.get("upper", False)
    gb = cholesky_solve(grad, low, upper=upper)
    gl = None
    if ctx.needs_input_grad[1]:
        c = gb @ x.mH
        c = c + c.mH
        gl = -(low @ c) if upper else -(c @ low)
    return (gb, gl)


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky_solve``: X with A X = B, given A's Cholesky factor ``input2``."""
    if input.ndim < 2 or input2.ndim < 2:
        raise RuntimeError("b should have at least 2 dimensions, but has "
                           f"{input.ndim} dimensions instead" if input.ndim < 2 else
                           "u should have at least 2 dimensions, but has "
                           f"{input2.ndim} dimensions instead")
    if input.dtype != input2.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_tname(input)} and A of type {_tname(input2)} instead.")
    return _cholesky_solve(input, input2, upper=upper)


def _tname(t: Tensor) -> str:
    return scalar_type_name(t.dtype)


@defop("triangular_solve", node="TriangularSolveBackward0", save=(1,), save_output=True,
       outputs=2)
def _triangular_solve(b: np.ndarray, a: np.ndarray, *, upper: bool = True,
                      transpose: bool = False, unitriangular: bool = False) -> tuple:
    m = np.swapaxes(a, -1, -2) if transpose else a
    x = _solve_tri_np(m, b, upper != transpose, True, unitriangular)
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return x, np.broadcast_to(a, shape + a.shape[-2:]).copy()


@_triangular_solve.backward
def triangular_solve_backward(ctx: Any, grads: list) -> tuple:
    # dB = solve(op(A)^H, G); dA = -dB X^H (X dB^T when transposed), A's triangle; + gM
    a, x = ctx.saved
    gx, gm = (list(grads) + [None, None])[:2]
    p = ctx.params
    upper, transpose, unit = p.get("upper", True), p.get("transpose", False), p.get(
        "unitriangular", False)
    gb = ga = None
    if gx is not None:
        gb = triangular_solve(gx, conj(a), upper=upper, transpose=not transpose,
                              unitriangular=unit)[0]
        if ctx.needs_input_grad[1]:
            ga = -(conj(x) @ gb.mT) if transpose else -(gb @ x.mH)
            ga = ga.triu(int(unit)) if upper else ga.tril(-int(unit))
    if gm is not None and ctx.needs_input_grad[1]:
        ga = gm if ga is None else ga + gm
    return (gb, ga)


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Any:
    """``torch.triangular_solve`` (deprecated in torch): (X, a copy of A) with op(A) X = b."""
    warn_deprecated("triangular_solve")
    if input.ndim < 2 or A.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {input.ndim} dimensions instead" if input.ndim < 2 else
                           f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {A.ndim} dimensions instead")
    x, m = _triangular_solve(input, A, upper=upper, transpose=transpose,
                             unitriangular=unitriangular)
    return triangular_solve_result(x, m)


__all__ = ["cholesky_ex", "cholesky_inverse", "cholesky_solve", "det", "inv", "inv_ex",
           "inverse", "logdet", "lstsq", "matrix_rank", "pinv", "pinverse", "slogdet",
           "solve_ex", "triangular_solve"]
