"""Grouped matrix products (``torch.nn.functional.grouped_mm``): many small products of one
shape family in one call, the expert layers of a mixture-of-experts model.

``offs`` (int32, cumulative ends) cuts the jagged dimension of a 2-D operand into groups; a
3-D operand lists its groups along dim 0::

    a (M, K)    b (G, K, N)  offs over M   out (M, N):    out[s:e]    = a[s:e] @ b[g]
    a (G, M, K) b (K, N)     offs over N   out (M, N):    out[:, s:e] = a[g] @ b[:, s:e]
    a (M, K)    b (K, N)     offs over K   out (G, M, N): out[g]      = a[:, s:e] @ b[s:e]
    a (G, M, K) b (G, K, N)  no offs       out (G, M, N): out[g]      = a[g] @ b[g]

with ``s, e = offs[g-1], offs[g]`` (``s = 0`` for the first group). Rows or columns past
``offs[-1]`` belong to no group: they come out zero (torch leaves them uninitialised).

The gradients are grouped products again, of the transposed operands and the same ``offs``,
each case landing on another one of the four (for the first:
``da = grouped_mm(g, b^T)`` and ``db = grouped_mm(a^T, g)``, both over M), so the rule calls
the entry itself and ``create_graph`` differentiates it once more, as torch records
``GroupedMmBackward0`` under ``GroupedMmBackward0``.

torch runs it on the CPU for float32, bfloat16 and float16 (the low precisions multiply in
float32 here and round once at the end), and asks each operand to be laid out as the GPU
kernels need: one of its last two dims contiguous, the other's stride a multiple of 16 bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._registry import apply, defop

__all__ = ["grouped_mm"]

NAMES = ("grouped_mm",)

_KINDS = {"float32": "Float32", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
          "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
          "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}
_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16"}


def _bounds(offs: np.ndarray) -> list[tuple[int, int]]:
    ends = [int(v) for v in offs]
    return list(zip([0] + ends[:-1], ends, strict=True))


def _product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f" and a.dtype.itemsize >= 4:
        return np.matmul(a, b)
    return np.matmul(a.astype(np.float32), b.astype(np.float32))  # bfloat16/float16


@defop("grouped_mm", node="GroupedMmBackward0", save=(0, 1))
def _grouped(a: np.ndarray, b: np.ndarray, *, offs: Any) -> np.ndarray:
    dt = a.dtype
    if a.ndim == 3 and b.ndim == 3:
        return _product(a, b).astype(dt, copy=False)
    if a.ndim == 2 and b.ndim == 3:  # groups of rows
        out = np.zeros((a.shape[0], b.shape[2]), dtype=dt)
        for g, (s, e) in enumerate(_bounds(offs)):
            out[s:e] = _product(a[s:e], b[g])
        return out
    if a.ndim == 3:  # groups of columns
        out = np.zeros((a.shape[1], b.shape[1]), dtype=dt)
        for g, (s, e) in enumerate(_bounds(offs)):
            out[:, s:e] = _product(a[g], b[:, s:e])
        return out
    out = np.zeros((len(offs), a.shape[0], b.shape[1]), dtype=dt)  # groups of the inner dim
    for g, (s, e) in enumerate(_bounds(offs)):
        out[g] = _product(a[:, s:e], b[s:e])
    return out


@_grouped.backward
def grouped_backward(ctx: Any, grad: Tensor) -> tuple:  # da = g b^T, db = a^T g, group by group
    a, b = ctx.saved
    offs = ctx.params["offs"]
    need_a, need_b = ctx.needs_input_grad
    g = grad.contiguous()
    ga = apply(_grouped, g, b.transpose(-2, -1), offs=offs) if need_a else None
    gb = apply(_grouped, a.transpose(-2, -1), g, offs=offs) if need_b else None
    return ga, gb


def _check_layout(t: Tensor) -> None:
    """torch's grouped GEMM layout: row- or column-major, the other stride 16-byte aligned."""
    strides, sizes = t.stride(), tuple(t.shape)
    stride_m, stride_n = strides[-2], strides[-1]
    align = 16 // t.element_size()
    if stride_n == 1 and stride_m >= max(1, sizes[-1]):
        bad = stride_m % align != 0
    elif stride_m == 1 and stride_n >= max(1, sizes[-2]):
        bad = stride_n % align != 0
    else:
        raise RuntimeError(f"Invalid strides/sizes, got {list(strides)} for strides and "
                           f"{list(sizes)} for sizes")
    if bad:
        raise RuntimeError("strides should be multiple of 16 bytes")


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None,
               bias: Tensor | None = None, out_dtype: Any = None) -> Tensor:
    """grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None)

    Grouped matrix products: a 2-D operand is cut into groups by ``offs`` (int32 cumulative
    ends), a 3-D operand lists its groups along dim 0 (see the module docstring for the four
    cases). float32, bfloat16 or float16; ``bias`` is not supported (as in torch).

    Example:
        >>> import tapegrad as torch
        >>> a, b = torch.ones(6, 4), torch.ones(2, 4, 4)
        >>> offs = torch.tensor([2, 6], dtype=torch.int32)
        >>> torch.nn.functional.grouped_mm(a, b, offs=offs).shape
        torch.Size([6, 4])
    """
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        kind = t.dtype.name
        if kind not in ("float32", "bfloat16", "float16"):
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, "
                               f"got {_KINDS.get(kind, kind)}")
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if t.ndim not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    a2, b2 = mat_a.ndim == 2, mat_b.ndim == 2
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if not a2 and not b2 and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    _check_layout(mat_a)
    _check_layout(mat_b)
    if (offs is not None) != (a2 or b2):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None:
        if offs.ndim != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype.name != "int32":
            raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    groups = None if offs is None else offs._data.astype(np.int64)
    if groups is not None and not (a2 and b2):
        if len(groups) != (mat_b.shape[0] if a2 else mat_a.shape[0]):
            raise RuntimeError("matrix batch sizes have to match")
    if mat_a.dtype != mat_b.dtype:
        na, nb = _CPP[mat_a.dtype.name], _CPP[mat_b.dtype.name]
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {na} != {nb}")
    return apply(_grouped, mat_a, mat_b, offs=groups)
