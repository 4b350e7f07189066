"""``LinearCrossEntropyOptions``: the chunking strategy torch's ``linear_cross_entropy`` takes
(the batch in pieces, so that the whole logits matrix is never made). tapegrad computes the
loss in one piece either way; the options are checked as torch checks them and kept."""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How torch's chunked ``linear_cross_entropy`` splits its work: ``batch_chunk_size``
    rows per chunk (or a ``chunking_method``: ``"aspect_ratio[:k]"``), the accumulation
    policy and dtype, and whether a second backward is allowed."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                  and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and getattr(self.acc_dtype, "name", None) not in (
                "float16", "bfloat16", "float32", "float64"):
            raise ValueError("acc_dtype must be one of {None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             "acc_dtype=None to let the op pick automatically.")
