"""``torch.testing``: checking results in tests.

``assert_close`` compares two (nested) results within tolerances and says in torch's words
what differs; ``make_tensor`` makes test inputs of any shape and dtype; ``assert_allclose`` is
the deprecated older comparison (looser tolerances, NaNs equal, dtypes need not match).
"""

from __future__ import annotations

import warnings
from typing import Any

from .._creation import tensor
from .._tensor import Tensor
from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]

# assert_allclose's own tolerances (rtol, atol); other dtypes compare exactly
_ALLCLOSE_PRECISIONS = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5),
                        "float64": (1e-5, 1e-8)}


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None,
                    atol: float | None = None, equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated: ``assert_close`` with NaNs equal, dtypes free to differ (``expected``
    made in ``actual``'s dtype when it is no tensor) and tolerances of float16 1e-3/1e-3,
    float32 1e-4/1e-5, float64 1e-5/1e-8."""
    __tracebackhide__ = True
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_PRECISIONS.get(t.dtype.name, (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
