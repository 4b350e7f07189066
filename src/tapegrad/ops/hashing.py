"""``torch.hash_tensor``: a 64-bit fingerprint of a tensor's values, whole or along dims.

Each element is widened to its 64-bit type (floating point to float64, integers and bools to
int64), its bits are read as a uint64, and the bits are XOR-reduced::

    hash = bits(e_0) ^ bits(e_1) ^ ...        (uint64; mode 0, the only one torch has)

Equal values hash equally whatever their dtype's width (1.5 as float32 or float64), and the
hash has no gradient.

Example:
    >>> import tapegrad as torch
    >>> torch.hash_tensor(torch.tensor([1.0, 2.0, 3.0]))
    tensor(4609434218613702656, dtype=torch.uint64)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ._registry import scalar_type_name


def _bits(x: np.ndarray) -> np.ndarray:
    """Each element widened to 64 bits, its bits as uint64."""
    if x.dtype.kind == "c":
        raise NotImplementedError(
            f'"xor_sum_cpu" not implemented for \'{scalar_type_name(Tensor._make(x).dtype)}\'')
    wide = np.float64 if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else np.int64
    return np.asarray(x, dtype=wide).view(np.uint64)


def hash_tensor(input: Tensor, dim: Any = None, *, keepdim: bool = False, mode: int = 0
                ) -> Tensor:
    """The XOR of the 64-bit patterns of ``input``'s elements, over ``dim`` (all dims when
    ``dim`` is empty or None); a uint64 tensor."""
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    x = input._data
    ndim = x.ndim
    if dim is None:
        dim = ()
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    axes: list[int] = []
    for d in dims:
        a = _wrap_dim(d, ndim)
        if a in axes:
            raise RuntimeError(f"dim {a} appears multiple times in the list of dims")
        axes.append(a)
    if not axes:
        if x.size == 0:
            raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        axes = list(range(ndim))
    for a in axes:
        if ndim and x.shape[a] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {a} to have non-zero size.")
    bits = _bits(x)
    if ndim == 0:
        return Tensor._make(bits.copy())
    out = np.bitwise_xor.reduce(bits, axis=tuple(axes), keepdims=bool(keepdim))  # type: ignore[call-overload]
    return Tensor._make(np.asarray(out, dtype=np.uint64))


METHODS = {"hash_tensor": hash_tensor}

__all__ = ["hash_tensor"]
