"""The check that a reduction over no elements has a dim to reduce: ``max``, ``amin``, ``mode``,
``kthvalue``, ... raise torch's error when the input is empty there.

It sits below ``reduction`` and ``sorting`` so that both can use it without importing each other.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _empty_check(x: np.ndarray, name: str, dim: Any = None) -> None:
    if x.size == 0 and (dim is None or x.shape[dim] == 0):
        if dim is None:
            raise RuntimeError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        raise IndexError(
            f"{name}(): Expected reduction dim {dim} to have non-zero size."
        )
