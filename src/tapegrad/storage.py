"""``torch.storage``: the storage classes (defined in ``_storage``), where torch's say they live."""

from __future__ import annotations

from ._storage import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
