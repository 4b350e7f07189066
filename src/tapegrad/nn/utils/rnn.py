"""Variable-length sequences for the recurrent layers: padding and packing.

    pad_sequence([a (3, *), b (2, *)])        -> (3, 2, *) with b's last row padded
    pack_padded_sequence(padded, [3, 2])      -> PackedSequence(data (5, *), batch_sizes [2, 2, 1])
    pad_packed_sequence(packed)               -> (padded, lengths)

A packed sequence stores the rows step by step: first every sequence's first element, then
every sequence still running its second, and so on (``batch_sizes[t]`` rows at step t, the
sequences sorted longest first). ``sorted_indices`` is the sort that put them in that order
(None when they came in sorted) and ``unsorted_indices`` its inverse. nn.RNN, nn.LSTM and
nn.GRU take a PackedSequence and return one, with their final states in the caller's order.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ... import _creation
from ..._tensor import Tensor
from ...ops import rnn as K
from .._packed_sequence import PackedSequence, PackedSequence_, invert_permutation  # noqa: F401

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


def _bind(optional: Any, fn: Any) -> Any:
    return None if optional is None else fn(optional)


def _lengths_array(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        return lengths._data.astype(np.int64).reshape(-1)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (T, B, *) (or (B, T, *) with batch_first) of sequences of the given
    lengths. With ``enforce_sorted=False`` the lengths may come in any order.

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.nn.utils.rnn import pack_padded_sequence
        >>> x = torch.tensor([[1, 2, 3], [4, 5, 0]])
        >>> pack_padded_sequence(x, [3, 2], batch_first=True).data
        tensor([1, 4, 2, 5, 3])
    """
    lens = _lengths_array(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = Tensor._make(order.astype(np.int64))
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    batch = input.size(0) if batch_first else input.size(1)
    if lens.size != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
            f"(batch_size={batch})")
    if lens.size and np.any(lens[1:] > lens[:-1]):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
            "sidestep this requirement if you do not need ONNX exportability.")
    if lens.size and lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0")
    steps = input.size(1) if batch_first else input.size(0)
    if lens.size and lens[0] > steps:
        # torch reads past the end here; a packed batch cannot hold more steps than it has
        raise RuntimeError(
            f"Expected the longest sequence's length ({int(lens[0])}) to be at most the "
            f"padded length ({steps})")
    batch_sizes = tuple(int(b) for b in (lens[None, :] > np.arange(int(lens[0]) if lens.size
                                                                   else 0)[:, None]).sum(1))
    data = K._pack_padded(input, batch_sizes=batch_sizes, batch_first=batch_first)
    return PackedSequence(data, Tensor._make(np.array(batch_sizes, dtype=np.int64)),
                          sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of ``pack_padded_sequence``: (padded batch, lengths), in the order the
    sequences had before packing; ``total_length`` pads to that many steps.

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.nn.utils.rnn import pack_sequence, pad_packed_sequence
        >>> p = pack_sequence([torch.tensor([1, 2, 3]), torch.tensor([4, 5])])
        >>> pad_packed_sequence(p, batch_first=True)
        (tensor([[1, 2, 3],
                [4, 5, 0]]), tensor([3, 2]))
    """
    batch_sizes = tuple(int(b) for b in sequence.batch_sizes.tolist())
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}")
        max_seq_length = total_length
    padded = K._pad_packed(sequence.data, batch_sizes=batch_sizes, batch_first=batch_first,
                           padding_value=padding_value, total_length=max_seq_length)
    sizes = np.array(batch_sizes, dtype=np.int64)
    batch = batch_sizes[0] if batch_sizes else 0
    lengths = (sizes[None, :] > np.arange(batch)[:, None]).sum(1).astype(np.int64)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted)
        lengths = lengths[unsorted._data]
    return padded, Tensor._make(lengths)


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of different lengths (L_i, *) into (T, B, *) (or (B, T, *)), padding
    each at its end (or start, ``padding_side="left"``) with ``padding_value``.

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.nn.utils.rnn import pad_sequence
        >>> pad_sequence([torch.tensor([1, 2, 3]), torch.tensor([4])], batch_first=True)
        tensor([[1, 2, 3],
                [4, 0, 0]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(
            "pad_sequence: Expected iterable for input sequences, but got arg of type: "
            f"{type(sequences)}")
    seqs = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(seqs[0].shape[1:])
    max_len = max(s.size(0) for s in seqs)
    shape = (len(seqs), max_len) + trailing if batch_first else (max_len, len(seqs)) + trailing
    out = _creation.full(shape, padding_value, dtype=seqs[0].dtype)
    for i, s in enumerate(seqs):
        n = s.size(0)
        steps = slice(0, n) if padding_side == "right" else slice(max_len - n, max_len)
        if batch_first:
            out[i, steps] = s
        else:
            out[steps, i] = s
    return out


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length.

    Example:
        >>> import tapegrad as torch
        >>> from tapegrad.nn.utils.rnn import unpad_sequence
        >>> unpad_sequence(torch.tensor([[1, 2], [3, 0]]), torch.tensor([2, 1]), True)
        [tensor([1, 2]), tensor([3])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    max_length = padded_sequences.shape[1]
    idx = _creation.arange(max_length)
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences (L_i, *): ``pack_padded_sequence(pad_sequence(seqs), lengths)``.
    """
    lengths = _creation.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
