"""NumPy's floating-point warnings, silenced inside tapegrad as torch never prints them.

NumPy reports an overflow, an underflow, a division by zero or an invalid operation
(``RuntimeWarning: overflow encountered in multiply``) after a ufunc that produced one; torch's
kernels never do: float16 overflowing to inf, ``0/0`` giving NaN and ``log(0)`` giving -inf are
silent. tapegrad therefore ignores these warnings, but only where tapegrad's own code raised them:

    warnings filter: RuntimeWarning, message "<kind> encountered in ...", module "tapegrad.*"

The filter is matched only when NumPy actually warns (the rare case), so it costs no op
anything, unlike ``np.errstate`` around each op (a context manager per call). It leaves NumPy's
error state alone (``np.seterr`` would change it for the user's own NumPy code too), and a
warning from the user's own NumPy code still shows: its module is not tapegrad's.
"""

from __future__ import annotations

import warnings

MESSAGE = r"(overflow|underflow|divide by zero|invalid value) encountered in "


def install() -> None:
    """Add the filter (once; ``warnings.filterwarnings`` drops an identical earlier entry)."""
    warnings.filterwarnings("ignore", message=MESSAGE, category=RuntimeWarning,
                            module=r"tapegrad(\.|$)")


install()
