"""The matrix exponential e^A by optimized Taylor polynomials and scaling and squaring.

This is the algorithm torch's CPU ``matrix_exp`` uses (Bader, Blanes and Casas, "Computing the
matrix exponential with an optimized Taylor polynomial approximation", Mathematics 7 (2019) 1174),
run in the input's own precision so that float32 results round the way torch's do:

* the 1-norm ||A||_1 (largest column sum of |a_ij|) picks the Taylor degree m in 1, 2, 4, 8, 12,
  18: the smallest whose threshold theta_m (one table for single, one for double precision)
  bounds the norm, so the truncation error stays below the unit roundoff;
* T_m(A) = sum_{k<=m} A^k / k! is evaluated with few matrix products: T_8 with 3, T_12 with 4,
  T_18 with 5, from I, A, A^2, A^3 (A^6) and linear combinations of them (the paper's tables);
* past theta_18, A is scaled by 2^-s with s = ceil(log2(||A||_1 / theta_18)) and T_18(A / 2^s)
  squared s times;
* a batch of more than one matrix always takes the T_18 route (each matrix its own s), as in torch.

Matrix products accumulate each entry in the order torch's CPU bmm does (see ``_mm``), so float32
results match torch's bit for bit where its kernels allow.
"""

from __future__ import annotations

import numpy as np

# theta_m for m = 1, 2, 4, 8, 12, 18: ||A||_1 up to which T_m(A) is exact to rounding.
_THETAS = {
    np.dtype(np.float32): (1.192092800768788e-07, 5.978858893805233e-04, 5.116619363445086e-02,
                           5.800524627688768e-01, 1.461661507209034e+00, 3.010066362817634e+00),
    np.dtype(np.float64): (2.220446049250313e-16, 2.580956802971767e-08, 3.397168839976962e-04,
                           4.991228871115323e-02, 2.996158913811580e-01, 1.090863719290036e+00),
}

# T_12(A) = B0 + (B1 + A6) A6 with A6 = B2 + B3 B3; row i gives B_i from (I, A, A^2, A^3).
_B12 = (
    (9.0198e-16, 0.46932117595418237389, -0.20099424927047284052, -0.04623946134063071740),
    (5.31597895759871264183, 1.19926790417132231573, 0.01179296240992997031,
     0.01108844528519167989),
    (0.18188869982170434744, 0.05502798439925399070, 0.09351590770535414968,
     0.00610700528898058230),
    (-2.0861320e-13, -0.13181061013830184015, -0.02027855540589259079,
     -0.00675951846863086359),
)

# T_18(A) = B1 + (B2 + A9) A9 with A9 = B3 + B0 B4; row i gives B_i from (I, A, A^2, A^3, A^6).
_B18 = (
    (0.0, -1.00365581030144618291e-01, -8.02924648241156932449e-03,
     -8.92138498045113862826e-04, 0.0),
    (0.0, 3.97849749499645077844e-01, 1.36783778460411720168e+00, 4.98289622525382669416e-01,
     -6.37898194594723280150e-04),
    (-1.09676396052962061844e+01, 1.68015813878906206114e+00, 5.71779846478865511061e-02,
     -6.98210122488052056106e-03, 3.34975017086070470649e-05),
    (-9.04316832390810593223e-02, -6.76404519071381882256e-02, 6.75961301770459654925e-02,
     2.95552570429315521194e-02, -1.39180257516060693404e-05),
    (0.0, 0.0, -9.23364619367118555360e-02, -1.69364939002081722752e-02,
     -1.40086798182036094347e-05),
)


def _t8_coefficients(real: type) -> tuple:
    """x1..x7 and y2 of T_8, computed in double from the single/double-rounded sqrt(177) and 2/3
    and then rounded to the working precision (as a compiler folds them).

    The paper's x7 is (89 - sqrt(177)) / (5040 x3^2); torch divides by x3 only, so its degree-8
    polynomial has 1/120 - 8.1e-4 for its x^5 coefficient (measured: torch's float64 e^x on
    diag(x) is T_8(x) - 8.2e-4 x^5 + ...). torch is the reference, so T_8 here is torch's.
    """
    r = np.dtype(real).type
    sqrt_177 = float(r(0.1330413469565007072504e+2))
    x3 = float(r(2.0 / 3.0))
    return tuple(r(v) for v in (
        x3 * ((1.0 + sqrt_177) / 88.0),                  # x1
        x3 * ((1.0 + sqrt_177) / 352.0),                 # x2
        x3,                                              # x3
        (-271.0 + 29.0 * sqrt_177) / (315.0 * x3),       # x4
        (-11.0 + 11.0 * sqrt_177) / (1260.0 * x3),       # x5
        (-99.0 + 11.0 * sqrt_177) / (5040.0 * x3),       # x6
        (89.0 - sqrt_177) / (5040.0 * x3),               # x7 (torch's; see above)
        (857.0 - 58.0 * sqrt_177) / 630.0,               # y2
    ))


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Batched a @ b of square matrices, summed the way torch's CPU bmm sums them.

    Below 400 multiply-adds (n <= 7) torch's own kernel, and up to n = 11 MKL, add the rounded
    products left to right; from n = 12 MKL's single-precision kernel fuses each multiply-add
    (one rounding per step), emulated exactly here by adding the float32 product, exact in
    double, in double and rounding once. Past n = 160, or for other dtypes, BLAS decides.
    """
    n = a.shape[-1]
    if n <= 11 or (n * n * n < 400):
        acc = a[..., :, 0:1] * b[..., 0:1, :]
        for k in range(1, n):
            acc = acc + a[..., :, k:k + 1] * b[..., k:k + 1, :]
        return acc
    if a.dtype != np.float32 or n > 160:
        return a @ b
    acc = (a[..., :, 0:1] * b[..., 0:1, :]).astype(np.float64)
    for k in range(1, n):
        acc = (acc + a[..., :, k:k + 1].astype(np.float64) * b[..., k:k + 1, :]).astype(
            np.float32).astype(np.float64)
    return acc.astype(np.float32)


def _combine(mats: list, coefs: tuple, real: type) -> np.ndarray:
    """sum_j c_j M_j, accumulated left to right with c_j rounded to the working precision."""
    r = np.dtype(real).type
    out = mats[0] * r(coefs[0])
    for m, c in zip(mats[1:], coefs[1:], strict=True):
        out = out + m * r(c)
    return out


def _powers(a: np.ndarray, count: int) -> list:
    """The first ``count`` of I, A, A^2, A^3, A^6."""
    eye = np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape)
    out = [eye, a]
    if count > 2:
        out.append(_mm(a, a))
    if count > 3:
        out.append(_mm(a, out[2]))
    if count > 4:
        out.append(_mm(out[3], out[3]))
    return out


def _taylor(a: np.ndarray, degree: int, real: type) -> np.ndarray:
    """T_degree(A) for a stack of matrices ``a`` (shape (batch, n, n))."""
    if degree == 1:  # I + A
        i, a1 = _powers(a, 2)
        return i + a1
    if degree == 2:  # I + A + A^2 / 2
        i, a1, a2 = _powers(a, 3)
        return (i + a1) + a2 / np.dtype(real).type(2.0)
    if degree == 4:  # I + A + A^2 (I/2 + A/6 + A^2/24)
        ps = _powers(a, 3)
        ps.append(_mm(ps[2], _combine(ps, (1 / 2.0, 1 / 6.0, 1 / 24.0), real)))
        return _combine(ps, (1.0, 1.0, 0.0, 1.0), real)
    if degree == 8:  # I + A + y2 A^2 + A8, A8 = (x3 A^2 + A4)(x4 I + x5 A + x6 A^2 + x7 A4)
        x1, x2, x3, x4, x5, x6, x7, y2 = _t8_coefficients(real)
        ps = _powers(a, 3)
        ps.append(_mm(ps[2], _combine(ps[1:3], (x1, x2), real)))  # A4 = A^2 (x1 A + x2 A^2)
        ps.append(_mm(_combine(ps[2:4], (x3, 1.0), real), _combine(ps, (x4, x5, x6, x7), real)))
        return _combine(ps, (1.0, 1.0, y2, 0.0, 1.0), real)
    if degree == 12:
        ps = _powers(a, 4)
        b0, b1, b2, b3 = (_combine(ps, row, real) for row in _B12)
        a6 = b2 + _mm(b3, b3)
        return b0 + _mm(b1 + a6, a6)
    ps = _powers(a, 5)  # degree 18
    b0, b1, b2, b3, b4 = (_combine(ps, row, real) for row in _B18)
    a9 = b3 + _mm(b0, b4)
    return b1 + _mm(b2 + a9, a9)


def _scale_square(a: np.ndarray, norm: np.ndarray, theta: np.floating, real: type) -> np.ndarray:
    """e^A = T_18(A / 2^s)^(2^s), s = max(0, ceil(log2(||A||_1 / theta_18))) per matrix."""
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.maximum(np.ceil(np.log2(norm / theta)), real(0))
    pow2s = np.power(real(2), s)
    out = _taylor(a / pow2s[:, None, None], 18, real)
    finite = np.isfinite(s)
    if not finite.all():  # no number of squarings is right for a NaN or infinite norm
        out[~finite] = np.nan
    steps = np.where(finite, s, 0).astype(np.int64)
    for k in range(int(steps.max(initial=0))):
        sel = steps > k
        out[sel] = _mm(out[sel], out[sel])
    return out


def matrix_exp_taylor(a: np.ndarray) -> np.ndarray:
    """e^A for float32/float64/complex64/complex128 stacks of square matrices (n >= 2)."""
    n = a.shape[-1]
    real = np.float32 if a.dtype in (np.float32, np.complex64) else np.float64
    thetas = [real(t) for t in _THETAS[np.dtype(real)]]
    a3 = np.ascontiguousarray(a).reshape(-1, n, n)
    norm = np.abs(a3).sum(-2).max(-1, initial=-np.inf) if n else np.zeros(len(a3), real)
    norm = norm.astype(real, copy=False)
    if len(a3) > 1:
        return _scale_square(a3, norm, thetas[5], real).reshape(a.shape)
    res = np.full(a3.shape, np.nan, dtype=a.dtype)
    lower = real(-1)
    for degree, upper in zip((1, 2, 4, 8, 12), thetas[:5], strict=True):
        sel = (lower < norm) & (norm <= upper)
        if sel.any():
            res[sel] = _taylor(a3[sel], degree, real)
        lower = upper
    sel = norm >= thetas[4]
    if sel.any():
        res[sel] = _scale_square(a3[sel], norm[sel], thetas[5], real)
    return res.reshape(a.shape)
