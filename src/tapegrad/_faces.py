"""torch's functions whose parameters differ from the op they call: the same computation under
torch's names (``torch.dot(input, tensor)``, ``torch.swapaxes(input, axis0, axis1)``), with a
number where torch takes one positionally (``torch.subtract(input, other, alpha)``), or an
``out`` at torch's place (``torch.norm(input, p, dim, keepdim, out, dtype)``).

Each is a small function calling the op; ``tapegrad/__init__.py`` exports it under torch's
name. The methods' faces are in ``_methods.py``.
"""

from __future__ import annotations

from typing import Any

from . import _dtype, _out
from ._tensor import Tensor
from .ops import elementwise as ew
from .ops import linalg as la
from .ops import reduction as rd
from .ops import shape as sh
from .ops.decompositions import torch_lu


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    """The dot product of two 1-d tensors."""
    return la.dot(input, tensor)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``torch.softmax`` (``dim`` required, unlike ``nn.functional.softmax``)."""
    return rd.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:
    """``torch.log_softmax``."""
    return rd.log_softmax(input, dim, dtype)


def true_divide(input: Any, other: Any) -> Tensor:
    """``torch.true_divide``: ``div`` without a rounding mode."""
    return ew.div(input, other)


def subtract(input: Any, other: Any, alpha: Any = 1) -> Tensor:
    """``torch.subtract``: ``input - alpha * other`` (``alpha`` positional, as torch's number
    form takes it)."""
    return ew.sub(input, other, alpha=alpha)


def rsub(input: Any, other: Any, alpha: Any = 1) -> Tensor:
    """``torch.rsub``: ``other - alpha * input``."""
    return ew.rsub(input, other, alpha=alpha)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False,
         out: Any = None, dtype: Any = None) -> Tensor:
    """``torch.norm`` (deprecated in torch for ``torch.linalg``'s norms): the vector p-norm
    over ``dim``; its ``out`` is positional, before ``dtype``, as in torch."""
    if out is not None:
        _out.check("linalg_vector_norm", out, (input,))
    result = rd.norm(input, p, dim, keepdim, dtype)
    return result if out is None else _out.write("linalg_vector_norm", out, result, (input,))


def lu(A: Tensor, pivot: bool = True, get_infos: bool = False,  # noqa: N803 - torch's name
       out: Any = None) -> Any:
    """``torch.lu`` (deprecated in torch): ``linalg.lu_factor`` (and its info with
    ``get_infos``); ``out`` is a tuple of as many tensors."""
    if out is not None:
        _out.check("linalg_lu_factor_ex", out, (A,))
    result = torch_lu(A, pivot, get_infos)
    return result if out is None else _out.write("linalg_lu_factor_ex", out, result, (A,))


# -- the function forms that take one sequence (the methods take the ints as well: x.reshape(2,
# 3)), and torch's names for tensor_split's overloads

def reshape(input: Tensor, shape: Any) -> Tensor:
    """``input`` with the shape ``shape`` (a view when the layout allows)."""
    return sh.reshape(input, shape)


def permute(input: Tensor, dims: Any) -> Tensor:
    """A view of ``input`` with its dimensions in the order ``dims``."""
    return sh.permute(input, dims)


def flip(input: Tensor, dims: Any) -> Tensor:
    """``input`` reversed along ``dims``."""
    return sh.flip(input, dims)


def tensor_split(input: Tensor, sections: Any = None, dim: int = 0, *, indices: Any = None,
                 tensor_indices_or_sections: Any = None) -> tuple:
    """``sections`` near-equal pieces (an int), or the pieces between ``indices``."""
    for given in (indices, tensor_indices_or_sections):
        if given is not None:
            sections = given
    return sh.tensor_split(input, sections, dim)


# -- the products' out_dtype: float16/bfloat16 operands multiplied in (and into) float32

def _in_out_dtype(name: str, out_dtype: Any, *operands: Tensor) -> tuple:
    """The operands cast to ``out_dtype``, torch's only other choice (float32 for float16 or
    bfloat16 inputs), which the product then accumulates and returns in."""
    first = operands[0].dtype
    target = _dtype.to_dtype(out_dtype)
    if target is not first and not (target is _dtype.float32 and first.name in (
            "float16", "bfloat16")):
        raise RuntimeError("out_dtype must be the same as input dtype or fp32 for fp16/bf16 "
                           "inputs")
    return tuple(t.to(target) for t in operands)


def mm(input: Tensor, mat2: Tensor, out_dtype: Any = None) -> Tensor:
    """The matrix product of two 2-d tensors (``out_dtype``: float32 from float16/bfloat16)."""
    if out_dtype is None:
        return la.mm(input, mat2)
    return la.mm(*_in_out_dtype("mm", out_dtype, input, mat2))


def bmm(input: Tensor, mat2: Tensor, out_dtype: Any = None) -> Tensor:
    """The batched matrix product of two 3-d tensors."""
    if out_dtype is None:
        return la.bmm(input, mat2)
    return la.bmm(*_in_out_dtype("bmm", out_dtype, input, mat2))


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, out_dtype: Any = None, *,
          beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``."""
    if out_dtype is not None:
        input, mat1, mat2 = _in_out_dtype("addmm", out_dtype, input, mat1, mat2)
    return la.addmm(input, mat1, mat2, beta=beta, alpha=alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, out_dtype: Any = None, *,
            beta: Any = 1, alpha: Any = 1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    if out_dtype is not None:
        input, batch1, batch2 = _in_out_dtype("baddbmm", out_dtype, input, batch1, batch2)
    return la.baddbmm(input, batch1, batch2, beta=beta, alpha=alpha)
