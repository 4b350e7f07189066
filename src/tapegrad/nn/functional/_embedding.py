"""Sparse functions: ``embedding``, ``embedding_bag`` and ``one_hot``."""

from __future__ import annotations

import math

import numpy as np

from ..._dtype import LEGACY_NAMES
from ..._tensor import Tensor
from ...ops import _registry
from ...ops import embedding as K
from ...ops._registry import nondiff, value_check


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input`` (EmbeddingBackward0); the row at
    ``padding_idx`` gets no gradient."""
    if padding_idx is not None:
        if padding_idx > 0 and padding_idx >= weight.shape[0]:
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = input._data
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got torch.{LEGACY_NAMES.get(input.dtype.name, 'Tensor')} "
            "instead (while checking arguments for embedding)"
        )
    _check_indices(idx, weight.shape[0])
    if max_norm is not None:
        _embedding_renorm(weight, idx, max_norm, norm_type)
    return K._embedding(weight, indices=idx.astype(np.int64, copy=False),
                        padding_idx=padding_idx, scale_grad_by_freq=scale_grad_by_freq)


@value_check
def _check_indices(idx: np.ndarray, n: int) -> None:
    """Every index in [0, num_embeddings)."""
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")


def _embedding_renorm(weight: Tensor, idx: np.ndarray, max_norm: float, norm_type: float
                      ) -> None:
    """Rescale, in place and without grad, the looked-up rows whose ``norm_type``-norm exceeds
    max_norm: ``row *= max_norm / (norm + 1e-7)`` (torch.embedding_renorm_; an in-place op on
    the weight, whose version it bumps whether or not a row changed)."""
    rows = np.unique(idx)
    w = weight._data
    a = np.abs(w[rows])  # the norm in the weight's dtype, the scale in float64, as torch
    p = float(norm_type)
    if p == math.inf:
        norms = a.max(axis=1, initial=0)
    elif p == -math.inf:
        norms = a.min(axis=1, initial=math.inf)
    elif p == 0:
        norms = (a != 0).sum(axis=1)
    elif p == 2:
        norms = np.sqrt(np.sum(a * a, axis=1))
    else:
        with np.errstate(divide="ignore", over="ignore"):
            norms = np.sum(a ** p, axis=1) ** (1.0 / p)
    norms = norms.astype(np.float64)
    big = norms > max_norm
    if big.any():
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
        w[rows[big]] *= scale[:, None]
    weight._version_counter.value += 1


@value_check
def _one_hot_classes(x: np.ndarray, num_classes: int) -> int:
    """The number of classes (``-1``: the largest class + 1), after checking that every class
    lies in range. Read from the values, so a compiled program runs it again at each replay."""
    if num_classes == -1:
        if x.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(x.max()) + 1
    if x.size and x.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes < 0 or (x.size and x.max() >= num_classes):
        raise RuntimeError("Class values must be smaller than num_classes.")
    return num_classes


@nondiff("one_hot")
def _one_hot(x: np.ndarray, *, num_classes: int) -> np.ndarray:
    return (x[..., None] == np.arange(num_classes)).astype(np.int64)


def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim (``num_classes=-1``: max + 1)."""
    if input._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    n = _one_hot_classes(input._data, num_classes)
    if _registry._SPECIAL:  # a capture listens: through the registry (``nondiff``)
        return _one_hot(input, num_classes=n)
    return Tensor._make(_one_hot.forward(input._data, num_classes=n))  # without the detour


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of embedding rows (EmbeddingBagBackward0)."""
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.ndim != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}"
        )
    idx = input._data.astype(np.int64)
    psw = per_sample_weights
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        starts = np.arange(0, idx.size, idx.shape[1]) if idx.shape[1] else np.zeros(
            idx.shape[0], dtype=np.int64)
        include_last_offset = False
        idx = idx.reshape(-1)
        if psw is not None:
            psw = psw.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        starts = offsets._data.astype(np.int64)
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}"
        )
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm(weight, idx, max_norm, norm_type)
    if psw is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub."
        )
    n_bags = len(starts) - 1 if include_last_offset else len(starts)
    ends = np.append(starts[1:], idx.size) if not include_last_offset else starts[1:]
    starts = starts[:n_bags]
    summed = None
    if include_last_offset and n_bags and ends[n_bags - 1] < idx.size:
        # indices after the last offset: torch's kernels put them in the last bag, except its
        # fast path (float32/half weights, no padding_idx) for sum, which leaves them out, and
        # for mean, which leaves them out of the sum but divides by their number too
        fast = (weight.dtype.name in ("float32", "float16", "bfloat16")
                and padding_idx is None and weight._data.strides[1] == weight.element_size())
        if not (fast and mode == "sum"):
            if fast and mode == "mean":
                summed = np.arange(idx.size) < ends[n_bags - 1]
            ends = np.append(ends[:n_bags - 1], idx.size)
    counts = np.maximum(ends[:n_bags] - starts, 0)
    segment = np.repeat(np.arange(n_bags), counts)
    if len(segment) < idx.size:  # indices after the last bag's end belong to no bag
        idx = idx[:len(segment)]
        if psw is not None:
            psw = psw[:len(segment)]
    if padding_idx is not None and padding_idx < 0:
        padding_idx = weight.shape[0] + padding_idx
    keep = idx != padding_idx if padding_idx is not None else np.ones(idx.size, dtype=bool)
    return K._embedding_bag(weight, psw, indices=idx, segment=segment, keep=keep,
                            n_bags=n_bags, mode=modes[mode],
                            scale_grad_by_freq=scale_grad_by_freq, _cache={}, summed=summed)
