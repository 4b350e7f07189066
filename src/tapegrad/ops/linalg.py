"""Matrix products: mm, bmm, mv, dot, addmm, and matmul (which picks one of them, as torch does).

``matmul`` follows torch's dispatch so that the printed nodes agree: 1-D @ 1-D is ``dot``,
2-D @ 2-D ``mm``, 2-D @ 1-D ``mv``, a batch folds into one ``mm``/``mv`` or ``bmm`` whose result
is reshaped back (``UnsafeViewBackward0``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _dtype, _out
from .._dtype import from_numpy_dtype
from .._tensor import Tensor, _wrap_dim
from . import _registry, low_precision
from ._lapack import conj as _conj
from ._registry import defop, scalar_type_name
from ._tangents import multilinear_tangent
from .elementwise import _broadcast_error
from .shape import _squeeze_matmul, _unsafe_view


def _dtype_check(a: np.ndarray, b: np.ndarray, what: str = "m1 and m2") -> None:
    if a.dtype != b.dtype:
        na = _registry.cpp_type_name(from_numpy_dtype(a.dtype))
        nb = _registry.cpp_type_name(from_numpy_dtype(b.dtype))
        raise RuntimeError(f"expected {what} to have the same dtype, but got: {na} != {nb}")


def _name(a: Any, cpp: bool = False) -> str:
    """The dtype of an array as torch's messages name it: c10's (Float) or C++'s (float)."""
    d = from_numpy_dtype(a.dtype)
    return _registry.cpp_type_name(d) if cpp else _registry.scalar_type_name(d)


def _self_and_mats_check(input: Any, a: np.ndarray, b: np.ndarray) -> None:
    """addmm's and addbmm's dtype errors: the added tensor first, then the two factors."""
    if isinstance(input, np.ndarray) and input.dtype != b.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_name(input)} "
                           f"and {_name(b)}")
    if a.dtype != b.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_name(a)} and "
                           f"{_name(b)}")


def _addmv_check(input: np.ndarray, mat: np.ndarray, vec: np.ndarray) -> None:
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if not input.dtype == mat.dtype == vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_name(input)}, {_name(mat)}, and {_name(vec)}")


@defop("mm", node="MmBackward0", save=(0, 1), save_if={0: 1, 1: 0})
def _mm(a: np.ndarray, b: np.ndarray, *, layout: Any = None) -> np.ndarray:
    if a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
            f"{b.shape[0]}x{b.shape[1]})"
        )
    _dtype_check(a, b)
    return _product(a, b)


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The matrix product of two checked 2-D arrays (long inner dimensions in pieces)."""
    if _registry._LOW and a.dtype.char in "eE":  # float16/bfloat16 arrays (backward's products)
        return low_precision.matmul(a, b)
    m, k = a.shape
    n = b.shape[1]
    if m <= _SMALL_MAX and n <= _SMALL_MAX and k <= _SMALL_MAX and m >= 2 and n >= 2 and (
            a.dtype == np.float32) and (k <= 3 or a.strides[1] != 4 or b.strides[0] != 4):
        return _small_sweep(a, b)
    if k >= _LONG_K and m * b.shape[1] <= _SMALL_RESULT and a.dtype.kind == "f":
        return _long_product(a, b)
    if 0 < k <= _TINY_K and m <= _TINY_MN and b.shape[1] <= _TINY_MN and (
        a.dtype == np.float32 and b.dtype == np.float32
    ):
        return _tiny_product(a, b)
    return np.matmul(a, b)


# torch's float32 product of tiny matrices (inner dimension up to 3, at most 8 x 8 results,
# any layout) adds the k products, each rounded, one after the other; OpenBLAS's kernels fuse
# the multiply-adds instead, and a third of such products differ in the last bit (a
# covariance's gradient, where the exact answer is 0, comes out as rounding noise of another
# size). Measured on random inputs: bit-exact for these shapes; beyond them torch's kernels
# block and vectorize in shape-dependent ways.
_TINY_K = 3
_TINY_MN = 8


def _tiny_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = a[:, :1] * b[:1, :]
    for i in range(1, a.shape[1]):
        out += a[:, i:i + 1] * b[i:i + 1, :]
    return out


# OpenBLAS computes a product with a small result and a long inner dimension (a linear layer
# after a flatten: (32 x 18432) @ (18432 x 10)) two to three times slower than the same product
# cut into 1024-long pieces, run as one batched product and summed (measured: 0.25 ms against
# 0.095 ms). Larger results gain nothing, so the split is kept to small ones.
_LONG_K = 4096
_SMALL_RESULT = 1024
_K_PIECE = 1024


def _long_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    m, k = a.shape
    n = b.shape[1]
    pieces = k // _K_PIECE
    step = k // pieces
    main = pieces * step
    out = np.matmul(a[:, :main].reshape(m, pieces, step).swapaxes(0, 1),
                    b[:main].reshape(pieces, step, n)).sum(0)
    if main < k:
        out += np.matmul(a[:, main:], b[main:])
    return out


def _transposed(x: Any) -> bool:
    """True for a matrix laid out transposed (``W.t()`` of a contiguous ``W``)."""
    return isinstance(x, Tensor) and x._data.ndim == 2 and x._data.flags.f_contiguous and (
        not x._data.flags.c_contiguous)


def _grad_like(transposed: bool, make: Any, make_t: Any) -> Tensor:
    """A matrix gradient in the layout of the input it belongs to: for a transposed input
    (``W.t()`` in ``x @ W.t()``) compute the transposed product and transpose it back, so the
    parameter's gradient comes out contiguous, as torch arranges it."""
    return make_t().t() if transposed else make()


def _broadcast(g: np.ndarray) -> bool:
    """True for an output gradient that is a broadcast (``x.sum()``'s has zero strides): the
    BLAS cannot read such a matrix, and NumPy would copy it for each of the two products, so
    the rules copy it once (measured at 1024x1024: 0.09 ms for the copy, 0.5 ms saved per
    product)."""
    return 0 in g.strides and g.size > 1


def _dense(grad: Tensor) -> Tensor:
    return grad.contiguous() if _broadcast(grad._data) else grad


@_mm.backward
def mm_backward(ctx: Any, grad: Tensor) -> tuple:  # d(AB) = (G B^T, A^T G)
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    ta, tb = ctx.params.get("layout", (False, False))
    grad = _dense(grad)
    ga = _grad_like(ta, lambda: grad.mm(b.t()), lambda: b.mm(grad.t())) if need_a else None
    gb = _grad_like(tb, lambda: a.t().mm(grad), lambda: grad.t().mm(a)) if need_b else None
    return ga, gb


@defop("addmm", node="AddmmBackward0", save=(1, 2), save_if={1: 2, 2: 1})
def _addmm(bias: np.ndarray, a: np.ndarray, b: np.ndarray, *, beta: Any = 1,
           alpha: Any = 1, layout: Any = None) -> np.ndarray:
    _self_and_mats_check(bias, a, b)
    out = _mm.forward(a, b)
    if alpha != 1:
        out *= alpha
    if beta == 0:
        return out
    out += bias if beta == 1 else bias * beta
    return out


@_addmm.backward
def addmm_backward(ctx: Any, grad: Tensor) -> tuple:
    # d(beta c + alpha AB) = (beta, alpha G B^T, alpha A^T G)
    a, b = ctx.saved
    need_c, need_a, need_b = ctx.needs_input_grad
    beta, alpha = ctx.params.get("beta", 1), ctx.params.get("alpha", 1)
    gc = (grad if beta == 1 else grad * beta) if need_c else None
    ta, tb = ctx.params.get("layout", (False, False))
    grad = _dense(grad)
    ga = gb = None
    if need_a:
        ga = _grad_like(ta, lambda: grad.mm(b.t()), lambda: b.mm(grad.t()))
        if alpha != 1:
            ga = ga * alpha
    if need_b:
        gb = _grad_like(tb, lambda: a.t().mm(grad), lambda: grad.t().mm(a))
        if alpha != 1:
            gb = gb * alpha
    return gc, ga, gb


@defop("bmm", node="BmmBackward0", save=(0, 1), save_if={0: 1, 1: 0})
def _bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b.shape[0] != a.shape[0] or b.shape[1] != a.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}]."
        )
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_name(a)} but found {_name(b)}")
    return np.matmul(a, b)


@_bmm.backward
def bmm_backward(ctx: Any, grad: Tensor) -> tuple:  # per batch: (G B^T, A^T G)
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    ga = grad.bmm(b.transpose(1, 2)) if need_a else None
    gb = a.transpose(1, 2).bmm(grad) if need_b else None
    return ga, gb


@defop("mv", node="MvBackward0", save=(0, 1), save_if={0: 1, 1: 0})
def _mv(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    if a.ndim != 2 or v.ndim != 1 or a.shape[1] != v.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec "
            f"({v.shape[0]})"
        )
    _addmv_check(v, a, v)  # torch's mv is addmv into a result of the vector's dtype
    if (a.dtype == np.float32 and a.strides[0] == 4 and a.shape[0] > 1
            and a.size <= _SWEEP_MAX):
        return _column_sweep(a, v)
    return np.matmul(a, v)


_SWEEP_MAX = 1 << 16  # beyond this the BLAS gemv's speed wins over torch's summation order


# torch's float32 product of small matrices (every side 2 to 7) adds the k terms one after the
# other, c = c + a[:, k] b[k, :] (rounded product, then rounded sum), except when the left
# matrix is row-major and the right column-major (``g @ B.t()``, the first gradient of mm) with
# k >= 4, which it sums in another order (not reproduced: NumPy's BLAS there). Measured against
# torch on every size in that box and every layout; larger products are MKL's blocked kernels.
_SMALL_MAX = 7


def _small_sweep(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` summed over k in order: NumPy reduces the outer axis of the (k, m, n)
    products one slice after the other."""
    return np.multiply(a.T[:, :, None], b[:, None, :]).sum(axis=0)


def _column_sweep(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A column-major float32 ``a @ v`` in torch's order: torch's gemv adds the columns one
    after the other, y = y + a[:, j] * v[j] (rounded product, then rounded sum), which is what
    NumPy's reduction over the outer axis of the C-ordered (n, m) products does."""
    return np.multiply(a.T, v[:, None]).sum(axis=0)


@_mv.backward
def mv_backward(ctx: Any, grad: Tensor) -> tuple:  # d(Av) = (g v^T, A^T g)
    a, v = ctx.saved
    need_a, need_v = ctx.needs_input_grad
    ga = grad.unsqueeze(1) * v.unsqueeze(0) if need_a else None
    gv = a.t().mv(grad) if need_v else None
    return ga, gv


@defop("dot", node="DotBackward0", save=(0, 1), save_if={0: 1, 1: 0})
def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{scalar_type_name(from_numpy_dtype(a.dtype))} and "
            f"{scalar_type_name(from_numpy_dtype(b.dtype))}"
        )
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
            f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
            "respectively"
        )
    return np.asarray(np.dot(a, b))


@_dot.backward
def dot_backward(ctx: Any, grad: Tensor) -> tuple:  # d(a.b) = (b, a)
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (grad * b if need_a else None), (grad * a if need_b else None)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if _transposed(input) or _transposed(mat2):
        return _mm(input, mat2, layout=(_transposed(input), _transposed(mat2)))
    return _mm(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    return _bmm(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    return _mv(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:
    return _dot(input, other)



@defop("vdot", node="VdotBackward0", save=(0, 1), save_if={0: 1, 1: 0})
def _vdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _dot.forward(np.conj(a) if a.dtype.kind == "c" else a, b)


@_vdot.backward
def vdot_backward(ctx: Any, grad: Tensor) -> tuple:  # d conj(a).b: conj(g) b for a, g a for b
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    ga = None
    if need_a:
        ga = b * (grad.conj_physical() if grad._data.dtype.kind == "c" else grad)
    return ga, (a * grad if need_b else None)


_vdot.holomorphic = False  # conj(a) is not holomorphic in a: the rule handles complex itself


def vdot(input: Tensor, other: Tensor) -> Tensor:
    """conj(input) . other of two 1-D tensors."""
    return _vdot(input, other)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``: one node (what nn.Linear records)."""
    layout = (_transposed(mat1), _transposed(mat2))
    if beta == 1 and alpha == 1:
        return _addmm(input, mat1, mat2, layout=layout) if any(layout) else _addmm(
            input, mat1, mat2)
    return _addmm(input, mat1, mat2, beta=beta, alpha=alpha, layout=layout)


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """Outer product: torch computes it as ``input[:, None] * vec2``."""
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return input.reshape(-1, 1) * vec2


ger = outer


def matmul(input: Any, other: Any) -> Tensor:
    """Matrix product with torch's broadcasting rules (see the module docstring)."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(
            f"matmul(): argument 'other' (position 1) must be Tensor, not "
            f"{type(other if isinstance(input, Tensor) else input).__name__}"
        )
    da, db = input.ndim, other.ndim
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return _dot(input, other)
    if da == 2 and db == 1:
        return _mv(input, other)
    if da == 1 and db == 2:
        return _squeeze_matmul(mm(input.unsqueeze(0), other), dims=(0,))
    if da == 2 and db == 2:
        return mm(input, other)
    if da >= 3 and db <= 2:
        # Fold the batch into the rows: one mm (or mv), then reshape back.
        batch = input.shape[:-1]
        folded = input.reshape(int(np.prod(batch)), input.shape[-1])  # (-1 fails for 0 rows)
        if db == 1:
            return _unsafe_view(_mv(folded, other), shape=tuple(batch))
        if folded.shape[1] != other.shape[0]:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({folded.shape[0]}x{folded.shape[1]} "
                f"and {other.shape[0]}x{other.shape[1]})"
            )
        return _unsafe_view(mm(folded, other), shape=tuple(batch) + (other.shape[-1],))
    if da <= 2 and db >= 3:
        # torch computes (other^T @ input^T)^T here.
        if da == 1:
            return matmul(other.mT, input)
        return matmul(other.mT, input.mT).mT.contiguous()
    # Both batched: broadcast the batch dims, fold them into one, bmm, reshape back.
    ba, bb = input.shape[:-2], other.shape[:-2]
    try:
        batch = tuple(np.broadcast_shapes(tuple(ba), tuple(bb)))
    except ValueError:
        raise _broadcast_error(np.empty(ba), np.empty(bb)) from None
    n, k = input.shape[-2:]
    k2, m = other.shape[-2:]
    if k != k2:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{int(np.prod(batch))}, {k}] but got: [{int(np.prod(batch))}, {k2}]."
        )
    nb = int(np.prod(batch))  # (a -1 fails for an empty batch)
    a3 = input.expand(batch + (n, k)).reshape(nb, n, k)
    b3 = other.expand(batch + (k, m)).reshape(nb, k, m)
    return _unsafe_view(_bmm(a3, b3), shape=batch + (n, m))


from .einsum import einsum  # noqa: E402, F401 - torch.einsum (ops/einsum.py)


def _tangent_rules() -> None:  # forward mode: each product is bilinear, d(ab) = da b + a db
    for op in (_mm, _bmm, _mv, _dot):
        op.jvp(multilinear_tangent(op))


_tangent_rules()


# ---------------------------------------------------------------------------------------------
# BLAS-style fused products: beta * input + alpha * (product), one node each, as torch records
# ---------------------------------------------------------------------------------------------

def _scaled(x: np.ndarray, factor: Any) -> np.ndarray:
    return x if factor == 1 else x * factor


def _fused(input: np.ndarray, prod: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    """beta * input + alpha * prod, where beta == 0 ignores input (nan and inf included)."""
    if prod.dtype.kind in "iu":  # integer results: torch casts the scalars (0.2 -> 0)
        beta, alpha = int(beta), int(alpha)
    out = _scaled(prod, alpha)
    if beta == 0:
        return np.broadcast_to(np.zeros((), out.dtype), out.shape) + out
    return np.asarray(_scaled(input, beta) + out, dtype=np.result_type(input, prod))


def _check_fused_args(name: str, input: Any, beta: Any, alpha: Any) -> None:
    """(torch accepts float scalars with integer tensors here, truncating them.)"""


def _beta_grad(grad: Tensor, beta: Any) -> Tensor:
    return grad if beta == 1 else grad * beta


@defop("addmv", node="AddmvBackward0", save=(1, 2), save_if={1: 2, 2: 1})
def _addmv(input: np.ndarray, mat: np.ndarray, vec: np.ndarray, *, beta: Any = 1,
           alpha: Any = 1) -> np.ndarray:
    _addmv_check(input, mat, vec)
    prod = _mv.forward(mat, vec)
    if input.ndim > 1 or (input.ndim == 1 and input.shape[0] not in (1, prod.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    return _fused(input, prod, beta, alpha)


@_addmv.backward
def addmv_backward(ctx: Any, grad: Tensor) -> tuple:  # (beta G, alpha g v^T, alpha A^T g)
    mat, vec = ctx.saved
    need_i, need_m, need_v = ctx.needs_input_grad
    beta, alpha = ctx.params.get("beta", 1), ctx.params.get("alpha", 1)
    gi = _beta_grad(grad, beta) if need_i else None
    gm = _beta_grad(grad.unsqueeze(1) * vec.unsqueeze(0), alpha) if need_m else None
    gv = _beta_grad(mat.t().mv(grad), alpha) if need_v else None
    return gi, gm, gv


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``."""
    _check_fused_args("addmv", input, beta, alpha)
    return _addmv(input, mat, vec, beta=beta, alpha=alpha)


@defop("addr", node="AddrBackward0", save=(1, 2), save_if={1: 2, 2: 1})
def _addr(input: np.ndarray, v1: np.ndarray, v2: np.ndarray, *, beta: Any = 1,
          alpha: Any = 1) -> np.ndarray:
    if v1.ndim != 1 or v2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {v1.ndim}-D"
                           if v1.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {v2.ndim}-D")
    prod = np.multiply.outer(v1, v2)
    if prod.dtype.kind == "b":
        if beta is False or beta == 0:
            return prod & bool(alpha)
        return (input & bool(beta)) | (prod & bool(alpha))
    return _fused(input, prod, beta, alpha)


@_addr.backward
def addr_backward(ctx: Any, grad: Tensor) -> tuple:  # (beta G, alpha G v2, alpha G^T v1)
    v1, v2 = ctx.saved
    need_i, need_1, need_2 = ctx.needs_input_grad
    beta, alpha = ctx.params.get("beta", 1), ctx.params.get("alpha", 1)
    gi = _beta_grad(grad, beta) if need_i else None
    g1 = _beta_grad(grad.mv(v2), alpha) if need_1 else None
    g2 = _beta_grad(grad.t().mv(v1), alpha) if need_2 else None
    return gi, g1, g2


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``."""
    if input._data.dtype.kind == "b" or vec1._data.dtype.kind == "b":
        if isinstance(beta, float) or isinstance(alpha, float):
            raise RuntimeError("Boolean beta only supported for Boolean results."
                               if isinstance(beta, float) else
                               "Boolean alpha only supported for Boolean results.")
    elif vec1._data.dtype.kind in "iu" and (isinstance(beta, float) or isinstance(alpha, float)):
        raise RuntimeError("For integral input tensors, argument beta must not be a floating "
                           "point number." if isinstance(beta, float) else
                           "For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    return _addr(input, vec1, vec2, beta=beta, alpha=alpha)


@defop("baddbmm", node="BaddbmmBackward0", save=(1, 2), save_if={1: 2, 2: 1})
def _baddbmm(input: np.ndarray, b1: np.ndarray, b2: np.ndarray, *, beta: Any = 1,
             alpha: Any = 1) -> np.ndarray:
    if input.dtype != b1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_name(input, True)}, "
                           f"batch1: {_name(b1, True)}, batch2: {_name(b2, True)}")
    prod = _bmm.forward(b1, b2)
    return _fused(np.broadcast_to(input, prod.shape), prod, beta, alpha)


def _batched_fused_grads(ctx: Any, grad: Tensor, per_batch: Callable[[int], Tensor]) -> tuple:
    """The gradients of ``beta * input + alpha * (batch1[b] @ batch2[b])``: (beta G,
    alpha G_b B2^T, alpha B1^T G_b), where ``G_b = per_batch(batches)`` is the output gradient
    that each batch's product received (batched, like B1 and B2)."""
    b1, b2 = ctx.saved
    need_i, need_1, need_2 = ctx.needs_input_grad
    beta, alpha = ctx.params.get("beta", 1), ctx.params.get("alpha", 1)
    gi = _beta_grad(grad, beta) if need_i else None
    g1 = g2 = None
    if need_1 or need_2:
        gb = per_batch((b1 if b1 is not None else b2).shape[0])
        g1 = _beta_grad(gb.bmm(b2.transpose(1, 2)), alpha) if need_1 else None
        g2 = _beta_grad(b1.transpose(1, 2).bmm(gb), alpha) if need_2 else None
    return gi, g1, g2


@_baddbmm.backward
def baddbmm_backward(ctx: Any, grad: Tensor) -> tuple:
    # the output is batched: each batch's product received its own slice of G
    return _batched_fused_grads(ctx, grad, lambda batches: grad)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
            alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    _check_fused_args("baddbmm", input, beta, alpha)
    return _baddbmm(input, batch1, batch2, beta=beta, alpha=alpha)


@defop("addbmm", node="AddbmmBackward0", save=(1, 2), save_if={1: 2, 2: 1})
def _addbmm(input: np.ndarray, b1: np.ndarray, b2: np.ndarray, *, beta: Any = 1,
            alpha: Any = 1) -> np.ndarray:
    _self_and_mats_check(input, b1, b2)
    if b1.ndim != 3 or b2.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if b1.ndim != 3 else
                           "batch2 must be a 3D tensor")
    shape = (b1.shape[1], b2.shape[2])
    if b1.dtype.kind in "iu":
        beta, alpha = int(beta), int(alpha)
    # as torch: out = beta * input + alpha * B1[0] B2[0], then out += alpha * B1[b] B2[b]
    out = np.zeros(shape, dtype=np.result_type(input, b1)) if beta == 0 else np.array(
        _scaled(np.broadcast_to(input, shape), beta), dtype=np.result_type(input, b1))
    if out.dtype == np.float32 and b1.shape[0] * b1.shape[2] <= 1024:
        # small float32 products: torch's kernel adds one rank-1 term at a time,
        # C += A[:, l] (alpha B[l, :]); the same order gives the same rounding
        for b in range(b1.shape[0]):
            for k in range(b1.shape[2]):
                out += b1[b, :, k:k + 1] * _scaled(b2[b, k:k + 1, :], alpha)
        return out
    for b in range(b1.shape[0]):
        out = out + _scaled(_mm.forward(b1[b], b2[b]), alpha)
    return out


@_addbmm.backward
def addbmm_backward(ctx: Any, grad: Tensor) -> tuple:
    # the batches' products were summed: each of them received the whole G
    return _batched_fused_grads(
        ctx, grad, lambda batches: grad.unsqueeze(0).expand(batches, *grad.shape))


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,
           alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``."""
    _check_fused_args("addbmm", input, beta, alpha)
    return _addbmm(input, batch1, batch2, beta=beta, alpha=alpha)


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Any = None) -> Tensor:
    """Contract ``dims`` (a count of a's last and b's first dimensions, or two lists) as torch
    does: permute, fold each side into a matrix, one ``mm``, and a view back. (``out`` is a
    positional parameter, as in torch: written through ``_out.write``.)"""
    if out is not None:
        _out.check("tensordot", out, (a, b))
    if isinstance(dims, Tensor):
        dims = dims.tolist() if dims.ndim else int(dims.item())
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(range(-dims, 0))  # as torch: a's last dims counted from the end
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError(f"both dimension lists should have same length, but got "
                           f"{len(da)} and {len(db)}")
    for x, y in zip(da, db, strict=True):  # (the message names the dims as given)
        sa, sb = a.shape[_wrap_dim(x, a.ndim)], b.shape[_wrap_dim(y, b.ndim)]
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{sa} in dim {x} and second has size {sb} in dim {y}")
    da = [d % a.ndim if a.ndim else d for d in da]
    db = [d % b.ndim if b.ndim else d for d in db]
    for x, y in zip(da, db, strict=True):  # a size-1 side broadcasts: sum the other side
        if b.shape[y] == 1 and a.shape[x] != 1:
            a = a.sum(x, keepdim=True, dtype=a.dtype)
        elif a.shape[x] == 1 and b.shape[y] != 1:
            b = b.sum(y, keepdim=True, dtype=b.dtype)
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    size = 1
    for d in da:
        size *= a.shape[d]
    rows = 1
    for d in fa:
        rows *= a.shape[d]
    cols = 1
    for d in fb:
        cols *= b.shape[d]
    pa = a.permute(fa + da).reshape(rows, size)
    pb = b.permute(db + fb).reshape(size, cols)
    res = mm(pa, pb).view([a.shape[d] for d in fa] + [b.shape[d] for d in fb])
    return res if out is None else _out.write("tensordot", out, res, (a, b))


def _dot_out(args: tuple, out: Any) -> None:
    """dot's and vdot's out rule: out has the inputs' dtype."""
    x = args[0]
    if isinstance(out, Tensor) and isinstance(x, Tensor) and out.dtype is not x.dtype:
        raise RuntimeError(f"result dtype {scalar_type_name(out.dtype)} does not match input "
                           f"dtype {scalar_type_name(x.dtype)}")


def _tensordot_out(args: tuple, out: Any) -> None:
    """tensordot's and inner's out rule: out has the result's dtype."""
    a, b = args[0], args[1]
    if isinstance(out, Tensor) and isinstance(a, Tensor) and isinstance(b, Tensor):
        want = _dtype.promote_types(a.dtype, b.dtype)
        if out.dtype is not want:
            raise RuntimeError(f"tensordot: Expected the output tensor to have dtype "
                               f"{scalar_type_name(want)}, but got an output tensor with dtype "
                               f"{scalar_type_name(out.dtype)}")


_out.rule("dot", "vdot", check=_dot_out)
_out.rule("tensordot", "inner", check=_tensordot_out)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sum over the last dimension of both (a scalar operand multiplies), through tensordot
    as in torch."""
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def conj(x: Tensor) -> Tensor:
    return _conj(x)


@defop("linalg_cross", node="LinalgCrossBackward0", save=(0, 1), save_if={0: 1, 1: 0})
def _cross(a: np.ndarray, b: np.ndarray, *, dim: int = -1) -> np.ndarray:
    shape = np.broadcast_shapes(a.shape, b.shape)
    return np.cross(np.broadcast_to(a, shape), np.broadcast_to(b, shape), axis=dim).astype(
        np.result_type(a, b))


@_cross.backward
def cross_backward(ctx: Any, grad: Tensor) -> tuple:  # d(a x b) = (conj(b) x g, g x conj(a))
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    dim = ctx.params.get("dim", -1)
    ga = _cross(conj(b), grad, dim=dim) if need_a else None
    gb = _cross(grad, conj(a), dim=dim) if need_b else None
    return ga, gb


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """``torch.linalg.cross``: the cross product of 3-vectors along ``dim`` (broadcast)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = max(input.ndim, 1)
    if not -nd <= dim < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dim})")
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    try:
        np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
    except ValueError:
        raise _broadcast_error(input._data, other._data) from None
    return _cross(input, other, dim=dim)


_CROSS_DIM_WARNED = [False]


def torch_cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``torch.cross``: ``linalg.cross`` whose dim defaults (deprecated) to the first dim of
    ``input`` of size 3."""
    if dim is None:
        if not _CROSS_DIM_WARNED[0]:  # torch warns once a process
            _CROSS_DIM_WARNED[0] = True
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                          "Please either pass the dim explicitly or simply use "
                          "torch.linalg.cross.\nThe default value of dim will change to agree "
                          "with that of linalg.cross in a future release.", UserWarning,
                          stacklevel=2)
        dim = next((i for i, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return cross(input, other, dim=dim)


_cross.holomorphic = False  # its rule conjugates for complex inputs itself: (conj(b) x g, ...)


def multi_dot(tensors: Any) -> Tensor:
    """``torch.linalg.multi_dot``: the chained product in the cheapest order (the first and
    last may be vectors), viewed to the result's shape as torch does."""
    ts = list(tensors)
    n = len(ts)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    if ts[0].ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{ts[0].ndim}D")
    if ts[-1].ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                           f"{ts[-1].ndim}D")
    for i in range(1, n - 1):
        if ts[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {ts[i].ndim}D")
    for i in range(1, n):
        if ts[i].dtype != ts[0].dtype:
            names = [_TYPE_NAMES.get(t._data.dtype.name, t._data.dtype.name)
                     for t in (ts[0], ts[i])]
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {names[0]} and tensor {i} {names[1]}")
    first_vec, last_vec = ts[0].ndim == 1, ts[-1].ndim == 1
    mats = list(ts)
    if first_vec:
        mats[0] = mats[0].unsqueeze(0)
    if last_vec:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].shape[-1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(ts[i].shape)} and {list(ts[i + 1].shape)} cannot be "
                               f"multiplied")
    if n == 2:
        res = mats[0].mm(mats[1])
    elif n == 3:
        a, b = mats[0].shape[0], mats[1].shape[0]
        c, d = mats[2].shape[0], mats[2].shape[1]
        if (a * c) * (b + d) > (b * d) * (a + c):
            res = mats[0].mm(mats[1].mm(mats[2]))
        else:
            res = mats[0].mm(mats[1]).mm(mats[2])
    else:
        res = _chain(mats, _chain_order(mats), 0, n - 1)
    shape = ([ts[0].shape[0]] if not first_vec else []) + (
        [ts[-1].shape[-1]] if not last_vec else [])
    return res.view(shape)


_TYPE_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
               "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
               "float16": "c10::Half", "bool": "bool", "complex64": "c10::complex<float>",
               "complex128": "c10::complex<double>"}


def _chain_order(mats: list) -> list:
    """The matrix-chain split points of the cheapest parenthesization (dynamic programming)."""
    n = len(mats)
    p = [mats[0].shape[0]] + [m.shape[1] for m in mats]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] < 0 or q < cost[i][j]:
                    cost[i][j] = q
                    split[i][j] = k
    return split


def _chain(mats: list, split: list, i: int, j: int) -> Tensor:
    if i == j:
        return mats[i]
    k = split[i][j]
    return _chain(mats, split, i, k).mm(_chain(mats, split, k + 1, j))

