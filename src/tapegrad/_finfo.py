"""``torch.finfo`` and ``torch.iinfo``: the numerical limits of a dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dtype
from ._naming import public


def _g(x: float) -> str:
    return f"{x:g}"


@public("")
class finfo:  # noqa: N801 - torch's name
    """Limits of a floating-point dtype: ``eps``, ``max``, ``min``, ``tiny``, ``resolution``...

    Example:
        >>> import tapegrad as torch
        >>> torch.finfo(torch.float32).eps
        1.1920928955078125e-07
    """

    def __init__(self, type: Any = None) -> None:  # noqa: A002 - torch's keyword
        d = _dtype.get_default_dtype() if type is None else type
        if not isinstance(d, _dtype.dtype) or not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        real = d.to_real()
        info = np.finfo(real.np)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = float(info.resolution)
        self.dtype = real.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, max={_g(self.max)}, "
                f"eps={_g(self.eps)}, smallest_normal={_g(self.smallest_normal)}, "
                f"tiny={_g(self.tiny)}, dtype={self.dtype})")

    __str__ = __repr__


@public("")
class iinfo:  # noqa: N801 - torch's name
    """Limits of an integer dtype: ``bits``, ``min``, ``max``."""

    def __init__(self, type: Any) -> None:  # noqa: A002 - torch's keyword
        if not isinstance(type, _dtype.dtype) or type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        np_t = np.dtype(np.uint8) if type.name == "bool" else type.np
        info = np.iinfo(np_t)
        self.bits = int(info.bits)
        self.min = int(info.min)
        self.max = int(info.max)
        self.dtype = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"

    __str__ = __repr__
