"""The exceptions of ``torch.distributed`` (``DistError`` and its kinds)."""

from __future__ import annotations

__all__ = ["DistBackendError", "DistError", "DistNetworkError", "DistStoreError"]


class DistError(RuntimeError):
    """An error in the distributed library."""


class DistBackendError(DistError):
    """An error in a collective's backend (here MPI), a timeout included."""


class DistStoreError(DistError):
    """An error in a store: a key that did not come in time."""


class DistNetworkError(DistError):
    """A network error: a store that cannot be reached."""


for _cls in (DistError, DistBackendError, DistStoreError, DistNetworkError):
    _cls.__module__ = "torch.distributed"
