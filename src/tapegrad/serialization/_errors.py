"""The errors ``tapegrad.load`` raises for a file it cannot read.

All are RuntimeErrors, as torch's own reader raises for a broken archive, so code written for
torch's errors catches them; the subclasses say what went wrong.
"""

from __future__ import annotations

__all__ = [
    "CheckpointError",
    "NotACheckpointError",
    "TruncatedCheckpointError",
    "CorruptCheckpointError",
    "UnsupportedCheckpointError",
]


class CheckpointError(RuntimeError):
    """A file could not be loaded as a checkpoint (the message says why)."""


class NotACheckpointError(CheckpointError):
    """The file is something else: text, random bytes, a NumPy file."""


class TruncatedCheckpointError(CheckpointError):
    """The file ends before the checkpoint does (an interrupted copy or write)."""


class CorruptCheckpointError(CheckpointError):
    """The bytes do not match their checksum, or the file's structure contradicts itself."""


class UnsupportedCheckpointError(CheckpointError):
    """A valid file holding something tapegrad cannot represent (a newer format version, a
    dtype tapegrad lacks, a quantized or sparse tensor, a TorchScript archive)."""
