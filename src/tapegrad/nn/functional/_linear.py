"""``F.linear`` and ``F.bilinear``."""

from __future__ import annotations

from ... import _dtype
from ..._tensor import Tensor
from ...ops import linalg as la
from ...ops import shape as sh
from ._common import _scalar_name

# ---------------------------------------------------------------------------------------------
# Linear
# ---------------------------------------------------------------------------------------------

def _check_bias(bias: Tensor, rows: int, out: int, mat2: Tensor) -> None:
    if bias.dtype != mat2.dtype:
        raise RuntimeError(
            f"self and mat2 must have the same dtype, but got {_scalar_name(bias)} and "
            f"{_scalar_name(mat2)}"
        )
    target = (rows, out)
    shape = tuple(bias.shape)
    padded = (1,) * (2 - len(shape)) + shape
    for i in (1, 0):
        if padded[i] != 1 and padded[i] != target[i]:
            raise RuntimeError(
                f"The expanded size of the tensor ({target[i]}) must match the existing size "
                f"({padded[i]}) at non-singleton dimension {i}.  Target sizes: "
                f"[{rows}, {out}].  Tensor sizes: [{', '.join(str(s) for s in shape)}]"
            )


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``.

    A 2-D input with a bias is one ``addmm`` (AddmmBackward0); other contiguous inputs with a
    bias are flattened to 2-D around the same ``addmm`` (ViewBackward0 on both sides), as torch
    does; without a bias it is ``matmul(input, weight.t())``.

    Example:
        >>> import tapegrad as torch
        >>> import tapegrad.nn.functional as F
        >>> F.linear(torch.ones(2, 3), torch.ones(4, 3), torch.zeros(4)).shape
        torch.Size([2, 4])
    """
    if bias is not None and weight.ndim == 2 and input.ndim >= 1:
        wt = weight.t()
        if input.ndim == 2:
            if input.shape[1] == wt.shape[0]:
                _check_bias(bias, input.shape[0], wt.shape[1], wt)
            return la.addmm(bias, input, wt)
        if input._data.flags.c_contiguous and bias.ndim == 1:
            flat = sh.view(input, -1, input.shape[-1])
            if flat.shape[1] == wt.shape[0]:
                _check_bias(bias, flat.shape[0], wt.shape[1], wt)
            out = la.addmm(bias, flat, wt)
            return sh.view(out, tuple(input.shape[:-1]) + (weight.shape[0],))
    out = la.matmul(input, weight.t())
    if bias is not None:
        out = out + bias
    return out


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``y_k = x1^T W_k x2 + b_k`` over the last dims (leading dims are batch dims)."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(
            f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} "
            f"and {list(input2.shape[:-1])}"
        )
    lead = tuple(input1.shape[:-1])
    o, i1, i2 = weight.shape
    x1 = input1.reshape(-1, i1)
    x2 = input2.reshape(-1, i2)
    # (B, i1) @ (i1, o*i2) -> (B, o, i2), then contract with x2
    tmp = x1.matmul(weight.permute(1, 0, 2).reshape(i1, o * i2)).reshape(-1, o, i2)
    if tmp.dtype in (_dtype.float16, _dtype.bfloat16):
        # a 16-bit product (autocast): torch contracts with x2 in one more product, rounded once
        out = tmp.matmul(x2.unsqueeze(-1)).squeeze(-1).reshape(lead + (o,))
    else:
        prod = tmp * x2.unsqueeze(1)
        # an integer product keeps its dtype (sum would widen it to int64)
        keep = None if prod.is_floating_point() or prod.is_complex() else prod.dtype
        out = prod.sum(-1, dtype=keep).reshape(lead + (o,))
    if bias is not None:
        out = out + bias
    return out
