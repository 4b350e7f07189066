"""The packed batch of sequences the recurrent layers take and return: ``PackedSequence``,
and the permutation inverse it is built with.

Users reach these as ``torch.nn.utils.rnn.PackedSequence`` and ``invert_permutation``;
``nn.utils.rnn`` re-exports them and holds the functions that pack and pad. They sit here,
below both ``nn.modules`` and ``nn.utils``, because ``nn.modules.rnn`` needs the class and
importing anything under ``nn.utils`` runs that package, whose parametrizations import
``nn.modules``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .. import _dtype as dt
from .._tensor import Tensor

# The classes keep the module path torch gives them, so their repr and pickles name it
_PUBLIC_MODULE = "tapegrad.nn.utils.rnn"


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


PackedSequence_.__module__ = _PUBLIC_MODULE  # (a NamedTuple's body takes only fields)


class PackedSequence(PackedSequence_):
    """The data and batch sizes of a packed batch of sequences (see ``nn.utils.rnn``).

    Made by ``pack_padded_sequence`` or ``pack_sequence``, never by hand.

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.nn.utils.rnn import pack_sequence
        >>> p = pack_sequence([torch.tensor([1, 2, 3]), torch.tensor([4, 5])])
        >>> p.data, p.batch_sizes
        (tensor([1, 4, 2, 5, 3]), tensor([2, 2, 1]))
    """

    __module__ = _PUBLIC_MODULE

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data[0], data[1]
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The same sequences with ``data.to(*args, **kwargs)`` (self when nothing changes)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cpu")

    def pin_memory(self) -> PackedSequence:
        return self

    def double(self) -> PackedSequence:
        return self.to(dtype=_dtype("float64"))

    def float(self) -> PackedSequence:
        return self.to(dtype=_dtype("float32"))

    def half(self) -> PackedSequence:
        return self.to(dtype=_dtype("float16"))

    def long(self) -> PackedSequence:
        return self.to(dtype=_dtype("int64"))

    def int(self) -> PackedSequence:
        return self.to(dtype=_dtype("int32"))

    def short(self) -> PackedSequence:
        return self.to(dtype=_dtype("int16"))

    def char(self) -> PackedSequence:
        return self.to(dtype=_dtype("int8"))

    def byte(self) -> PackedSequence:
        return self.to(dtype=_dtype("uint8"))

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def _dtype(name: str) -> Any:
    return getattr(dt, name)


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation: ``out[permutation[i]] = i``."""
    if permutation is None:
        return None
    p = permutation._data
    out = np.empty_like(p)
    out[p] = np.arange(p.size, dtype=p.dtype)
    return Tensor._make(out)
