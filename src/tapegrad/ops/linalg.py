"""Matrix products: mm, bmm, mv, dot, addmm, and matmul (which picks one of them, as torch does).

``matmul`` follows torch's dispatch so that the printed nodes agree: 1-D @ 1-D is ``dot``,
2-D @ 2-D ``mm``, 2-D @ 1-D ``mv``, a batch folds into one ``mm``/``mv`` or ``bmm`` whose result
is reshaped back (``UnsafeViewBackward0``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ..autograd.grad_mode import _state
from ._registry import defop
from .reduction import _fast_sum
from .shape import _unsafe_view


def _dtype_check(a: np.ndarray, b: np.ndarray, what: str = "m1 and m2") -> None:
    if a.dtype != b.dtype:
        from .._dtype import from_numpy_dtype

        na = from_numpy_dtype(a.dtype).name.replace("float32", "float").replace("float64",
                                                                                 "double")
        nb = from_numpy_dtype(b.dtype).name.replace("float32", "float").replace("float64",
                                                                                "double")
        raise RuntimeError(f"expected {what} to have the same dtype, but got: {na} != {nb}")


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
    m, k = a.shape
    if k >= _LONG_K and m * b.shape[1] <= _SMALL_RESULT and a.dtype.kind == "f":
        return _long_product(a, b)
    return np.matmul(a, b)


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


def _mm_grads(g: np.ndarray, a: Any, b: Any, layout: tuple, need_a: bool,
              need_b: bool) -> tuple:
    """First order, on the arrays: G B^T and A^T G, each in its input's layout (as
    _grad_like does with ops; this runs twice per linear layer on every step)."""
    if _broadcast(g):
        g = np.ascontiguousarray(g)
    ta, tb = layout
    ga = gb = None
    if need_a:
        B = b._data
        ga = Tensor._make(_product(B, g.T).T if ta else _product(g, B.T))
    if need_b:
        A = a._data
        gb = Tensor._make(_product(g.T, A).T if tb else _product(A.T, g))
    return ga, gb


@_mm.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d(AB) = (G B^T, A^T G)
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    ta, tb = ctx.params.get("layout", (False, False))
    if not _state.enabled:
        return _mm_grads(grad._data, a, b, (ta, tb), need_a, need_b)
    grad = _dense(grad)
    ga = _grad_like(ta, lambda: grad.mm(b.t()), lambda: b.mm(grad.t())) if need_a else None
    gb = _grad_like(tb, lambda: a.t().mm(grad), lambda: grad.t().mm(a)) if need_b else None
    return ga, gb


@defop("addmm", node="AddmmBackward0", save=(1, 2), save_if={1: 2, 2: 1})
def _addmm(bias: np.ndarray, a: np.ndarray, b: np.ndarray, *, beta: Any = 1,
           alpha: Any = 1, layout: Any = None) -> np.ndarray:
    out = _mm.forward(a, b)
    if alpha != 1:
        out *= alpha
    if beta == 0:
        return out
    out += bias if beta == 1 else bias * beta
    return out


@_addmm.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d(beta c + alpha AB) = (beta, alpha G B^T, alpha A^T G)
    a, b = ctx.saved
    need_c, need_a, need_b = ctx.needs_input_grad
    beta, alpha = ctx.params.get("beta", 1), ctx.params.get("alpha", 1)
    gc = (grad if beta == 1 else grad * beta) if need_c else None
    ta, tb = ctx.params.get("layout", (False, False))
    if not _state.enabled and alpha == 1:
        g = grad._data
        if gc is grad and g.ndim == 2 and ctx.input_shapes[0] == g.shape[1:] and (
                g.dtype.kind == "f" and g.itemsize >= 4):
            # a linear layer's bias: its gradient summed over the batch here, as the engine's
            # broadcast reduction would, without the trip through it (~5 us a layer)
            gc = Tensor._make(_fast_sum(g, (0,), False))
        return (gc,) + _mm_grads(g, a, b, (ta, tb), need_a, need_b)
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
    _dtype_check(a, b, "scalar type")
    return np.matmul(a, b)


@_bmm.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # per batch: (G B^T, A^T G)
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
    _dtype_check(a, v)
    return np.matmul(a, v)


@_mv.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d(Av) = (g v^T, A^T g)
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
        from .._dtype import from_numpy_dtype
        from ._registry import scalar_type_name

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
def _(ctx: Any, grad: Tensor) -> tuple:  # d(a.b) = (b, a)
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


inner = dot


@defop("vdot", node="VdotBackward0", save=(0, 1), save_if={0: 1, 1: 0})
def _vdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return _dot.forward(np.conj(a) if a.dtype.kind == "c" else a, b)


@_vdot.backward
def _(ctx: Any, grad: Tensor) -> tuple:  # d conj(a).b: conj(g) b for a, g a for b
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
        from .shape import _squeeze_matmul

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
        from .elementwise import _broadcast_error

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


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation, built from differentiable permute/reshape/mul/sum (no fused node)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs = eq
        letters = [c for c in lhs.replace(",", "")]
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    terms = lhs.split(",")
    all_letters = sorted(set("".join(terms)))
    sizes: dict = {}
    aligned = []
    for term, op in zip(terms, operands, strict=True):
        for c, s in zip(term, op.shape, strict=True):
            sizes[c] = max(sizes.get(c, 1), s)
        x = op
        # diagonal for repeated letters within a term
        while len(set(term)) != len(term):
            c = next(ch for ch in term if term.count(ch) > 1)
            i, j = term.index(c), term.index(c, term.index(c) + 1)
            n = x.shape[i]
            eye = Tensor._make(np.eye(n, dtype=bool))
            shape = [1] * x.ndim
            shape[i], shape[j] = n, n
            x = (x * eye.reshape(shape)).sum(j)
            term = term[:j] + term[j + 1:]
        order = [term.index(c) for c in all_letters if c in term]
        x = x.permute(order) if order != list(range(len(order))) else x
        shape = [x.shape[[c for c in all_letters if c in term].index(c)] if c in term else 1
                 for c in all_letters]
        aligned.append(x.reshape(shape))
    out = aligned[0]
    for x in aligned[1:]:
        out = out * x
    reduce_dims = tuple(i for i, c in enumerate(all_letters) if c not in rhs)
    if reduce_dims:
        out = out.sum(dim=reduce_dims)
    kept = [c for c in all_letters if c in rhs]
    perm = [kept.index(c) for c in rhs]
    return out.permute(perm) if perm != list(range(len(perm))) else out


def _tangent_rules() -> None:  # forward mode: each product is bilinear, d(ab) = da b + a db
    from ..autograd.forward_ad import multilinear_tangent

    for op in (_mm, _bmm, _mv, _dot):
        op.jvp(multilinear_tangent(op))


_tangent_rules()
