"""``torch.einsum``: Einstein summation, composed of differentiable view, sum, mul and bmm ops
the way torch composes it, so its values come from BLAS and its graph ends in the node torch's
ends in.

    parse      each operand's labels (a-z, A-Z, one ``...`` each); the output's labels are given
               after ``->``, or are the ellipsis then the labels seen once, in alphabetical order
    align      every operand is permuted to one layout: output dims first, then the dims to
               sum out (contraction dims); a label repeated in an operand takes its diagonal,
               a label it lacks becomes a dim of size 1
    contract   left to right: a dim no later operand has is summed away first (``sum`` when
               only one of the pair has it); the pair is then one ``mul`` (nothing shared to
               sum) or one batched matrix product: permute both to (batch, free, summed) and
               (batch, summed, free), reshape, ``bmm``, view back and permute
    finish     one operand: ``sum`` over the contraction dims (SumBackward1) or its aligned
               view (PermuteBackward0); several: the contraction dims, now of size 1, dropped
               by ``view`` (ViewBackward0), or the last ``mul`` (MulBackward0)

The sublist form ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` is turned into an equation first.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor
from ._registry import scalar_type_name

_ELLIPSIS = -1


def _label(c: str) -> int:
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + 26


def _letter(k: int) -> str:
    return chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26)


def _is_label(c: str) -> bool:
    return c.isascii() and c.isalpha()


def _sublist_equation(args: tuple) -> tuple[str, list]:
    """``(a, [0, 1], b, [1, 2], [0, 2])`` -> ``("AB,BC->AC", [a, b])``."""

    def subscripts(sub: Any) -> str:
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < 52:
                out.append(_letter(s))
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the "
                                 "valid range [0, 52)")
        return "".join(out)

    operands = list(args[0::2][: len(args) // 2])
    terms = [subscripts(s) for s in args[1::2][: len(args) // 2]]
    eq = ",".join(terms)
    if len(args) % 2:
        eq += "->" + subscripts(args[-1])
    return eq, operands


def einsum(*args: Any) -> Tensor:
    """Einstein summation: ``einsum("ij,jk->ik", a, b)`` is ``a @ b``.

    Example:
        >>> import tapegrad as torch
        >>> a = torch.arange(6.).reshape(2, 3)
        >>> torch.einsum("ij,ij->i", a, a)
        tensor([ 5., 50.])
    """
    if args and isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    return _einsum(equation, operands)


def _parse_inputs(lhs: str, n_ops: int) -> list[list[int]]:
    labels: list[list[int]] = [[] for _ in range(n_ops)]
    op, has_ell, i = 0, False, 0
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if has_ell:
                raise RuntimeError(f"einsum(): found '.' for operand {op} for which an ellipsis "
                                   "was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {op} that is not part of "
                                   "any ellipsis")
            i += 2
            labels[op].append(_ELLIPSIS)
            has_ell = True
        elif c == ",":
            op += 1
            if op >= n_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            has_ell = False
        elif _is_label(c):
            labels[op].append(_label(c))
        else:
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               "string, subscripts must be in [a-zA-Z]")
        i += 1
    if op != n_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")
    return labels


def _einsum(equation: str, operands: list) -> Tensor:
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    n_ops = len(operands)
    op_labels = _parse_inputs(lhs, n_ops)

    count = [0] * 52
    ell_dims = 0
    for i, (x, labels) in enumerate(zip(operands, op_labels, strict=True)):
        n = sum(lab != _ELLIPSIS for lab in labels)
        has_ell = _ELLIPSIS in labels
        for lab in labels:
            if lab != _ELLIPSIS:
                count[lab] += 1
        if has_ell:
            ell_dims = max(ell_dims, x.ndim - n)
        if (n > x.ndim) if has_ell else (n != x.ndim):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n}) "
                + (f"is more than the number of dimensions ({x.ndim}) for operand {i}"
                   if has_ell else f"does not match the number of dimensions ({x.ndim}) for "
                   f"operand {i} and no ellipsis was given"))

    # every label's place in the aligned layout: output dims, then contraction dims
    where = [-1] * 52
    pos = ell_at = 0
    ell_out = False
    if arrow < 0:  # implicit output: the ellipsis, then the labels seen once
        pos, ell_out = ell_dims, True
        for lab in range(52):
            if count[lab] == 1:
                where[lab] = pos
                pos += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == " ":
                pass
            elif c == ".":
                if ell_out:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) "
                                       "was already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                       "ellipsis (...)")
                i += 2
                ell_at, pos, ell_out = pos, pos + ell_dims, True
            elif _is_label(c):
                lab = _label(c)
                if count[lab] == 0 or where[lab] != -1:
                    why = ("appears more than once in the output" if where[lab] != -1 else
                           "does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {c} {why}")
                where[lab] = pos
                pos += 1
            else:
                raise RuntimeError(f"einsum(): invalid subscript given at index "
                                   f"{len(lhs) + 2 + i} in the equation string, subscripts "
                                   "must be in [a-zA-Z]")
            i += 1
    n_out = pos
    if not ell_out:
        ell_at, pos = pos, pos + ell_dims
    for lab in range(52):
        if count[lab] and where[lab] == -1:
            where[lab] = pos
            pos += 1
    n_all = pos

    # align every operand to the layout (diagonals for repeated labels, size-1 dims for missing)
    label_size = [1] * 52
    ell_size = [1] * ell_dims
    nontrivial = [0] * n_all  # how many operands have each dim with a size other than 1
    ops = []
    for i, (x, labels) in enumerate(zip(operands, op_labels, strict=True)):
        perm = [-1] * n_all
        dim = 0
        for lab in labels:
            if lab == _ELLIPSIS:
                covered = x.ndim - (len(labels) - 1)
                for j in range(ell_dims - covered, ell_dims):
                    n = x.shape[dim]
                    if n != 1:
                        if ell_size[j] not in (1, n):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}"
                                f"has size {n} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_size[j]} for the respective "
                                "dimension")
                        ell_size[j] = n
                        nontrivial[ell_at + j] += 1
                    perm[ell_at + j] = dim
                    dim += 1
            elif perm[where[lab]] == -1:
                n = x.shape[dim]
                if n != 1:
                    if label_size[lab] not in (1, n):
                        raise RuntimeError(
                            f"einsum(): subscript {_letter(lab)} has size {n} for operand {i} "
                            "which does not broadcast with previously seen size "
                            f"{label_size[lab]}")
                    label_size[lab] = n
                    nontrivial[where[lab]] += 1
                perm[where[lab]] = dim
                dim += 1
            else:  # a repeated label: its diagonal, where the label was first seen
                prev = perm[where[lab]]
                if x.shape[dim] != x.shape[prev]:
                    raise RuntimeError(
                        f"einsum(): subscript {_letter(lab)} is repeated for operand {i} but "
                        f"the sizes don't match, {x.shape[dim]} != {x.shape[prev]}")
                x = x.diagonal(0, prev, dim).movedim(-1, prev)
        for k in range(n_all):
            if perm[k] == -1:
                x = x.unsqueeze(dim)
                perm[k] = dim
                dim += 1
        ops.append(x.permute(perm))

    # contract left to right
    while len(ops) > 1:
        a, b = ops[0], ops[1]
        sum_dims, a_only, b_only = [], [], []
        for d in range(n_out, n_all):
            if a.shape[d] != 1 and b.shape[d] != 1:
                nontrivial[d] -= 1
                if nontrivial[d] == 1:
                    sum_dims.append(d)
                    nontrivial[d] = 0
            elif nontrivial[d] == 1:
                if a.shape[d] != 1:
                    a_only.append(d)
                    nontrivial[d] = 0
                elif b.shape[d] != 1:
                    b_only.append(d)
                    nontrivial[d] = 0
        if a_only:
            a = a.sum(a_only, keepdim=True)
        if b_only:
            b = b.sum(b_only, keepdim=True)
        ops = [_sumproduct_pair(a, b, sum_dims)] + ops[2:]

    result = ops[0]
    if n_all > n_out:
        if n_ops > 1:
            return result.view(tuple(result.shape[:n_out]))
        return result.sum(list(range(n_out, n_all)))
    return result


def _sumproduct_pair(left: Tensor, right: Tensor, sum_dims: list) -> Tensor:
    """sum over ``sum_dims`` of left * right (aligned, broadcastable), the summed dims kept
    as size 1: one ``mul``, or one ``bmm`` between permutes and reshapes."""
    if not sum_dims:
        return left * right
    if left.dtype is not right.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(left.dtype)} but found "
                           f"{scalar_type_name(right.dtype)}")
    summed = set(sum_dims)
    both, lonly, ronly, ssum = [], [], [], []
    sizes = {"both": 1, "l": 1, "r": 1, "sum": 1}
    for i in range(left.ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sizes["sum"] *= left.shape[i]
            elif sl:
                left = left.sum(i, keepdim=True)
            elif sr:
                right = right.sum(i, keepdim=True)
            ssum.append(i)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            both.append(i)
            sizes["both"] *= left.shape[i]
        elif sl:
            lonly.append(i)
            sizes["l"] *= left.shape[i]
        else:
            ronly.append(i)
            sizes["r"] *= right.shape[i]
    # left: (both, left-only, summed); right: (both, summed, right-only)
    lperm = both + lonly + ssum + ronly
    rperm = both + ssum + ronly + lonly
    out_shape = ([left.shape[i] for i in both] + [left.shape[i] for i in lonly]
                 + [1] * len(ssum) + [right.shape[i] for i in ronly])
    operm = list(np.argsort(both + lonly + ssum + ronly))
    lmat = left.permute(lperm).reshape(sizes["both"], sizes["l"], sizes["sum"])
    rmat = right.permute(rperm).reshape(sizes["both"], sizes["sum"], sizes["r"])
    return lmat.bmm(rmat).view(out_shape).permute([int(k) for k in operm])
