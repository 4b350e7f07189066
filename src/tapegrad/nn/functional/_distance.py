"""Distance functions: ``cosine_similarity``, ``pairwise_distance`` and ``pdist``."""

from __future__ import annotations

from ..._tensor import Tensor, _wrap_dim
from ...autograd.grad_mode import no_grad
from ...ops import nn_common as C
from ...ops import reduction as rd
from ...ops.distance import pdist as _pdist
from ._common import _broadcast_pair


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1/|x1| * x2/|x2|) along ``dim``, each norm clamped at eps."""
    a, b = _broadcast_pair(x1, x2)
    d = _wrap_dim(dim, a.ndim)
    na = rd.norm(a, 2, d, True).clone()
    nb = rd.norm(b, 2, d, True).clone()
    with no_grad():  # torch clamps the norms without recording it
        na.clamp_(min=eps)
        nb.clamp_(min=eps)
    return ((a / na) * (b / nb)).sum(d)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim (NormBackward1)."""
    d = x1 - x2 + eps
    dims = (d.ndim - 1,) if d.ndim else ()  # (a 0-d difference: its own absolute value)
    return C._norm_dim(d, ord=float(p), dim=dims, keepdim=keepdim)


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distance between every pair of rows i < j (PdistBackward0; ops/distance.py)."""
    return _pdist(input, p)
