"""``TorchVersion``: the type of ``tapegrad.__version__``, a str that compares as a version.

Third-party code checks torch's version in every style: ``torch.__version__ >= "2.0"``,
``torch.__version__ < (2, 1)``, ``torch.__version__.split(".")``. torch's ``__version__`` is a
``str`` subclass whose ``<``, ``<=``, ``==``, ``>=`` and ``>`` compare versions (PEP 440) against
strings and tuples, falling back to plain string comparison when the other side is not a valid
version. tapegrad's is the same kind of object, holding the torch API version it implements with
a local label naming its own version: ``2.13.0+tapegrad0.1.0``.

The PEP 440 ordering, as a sort key (``_key``): epoch; release numbers without trailing zeros;
then a developmental release of a final version sorts before its pre-releases, pre-releases
(a < b < rc) before the final release, post-releases after it, ``.devN`` before the release it
leads to; a local label (``+...``) sorts after the same version without one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["InvalidVersion", "TorchVersion"]

_PATTERN_TEXT = (
    r"""^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$"""
)
_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}


@functools.cache
def _pattern() -> re.Pattern:
    """The PEP 440 pattern, compiled on first use (not on ``import tapegrad``)."""
    return re.compile(_PATTERN_TEXT, re.VERBOSE | re.IGNORECASE)


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


def _key(text: str) -> tuple:
    """The PEP 440 sort key of a version string (InvalidVersion if it is none)."""
    m = _pattern().match(text)
    if m is None:
        raise InvalidVersion(f"Invalid version: {text!r}")
    release = [int(p) for p in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    if m["pre"]:
        pre: tuple = (1, _PRE_RANK[m["pre_l"].lower()], int(m["pre_n"] or 0))
    elif m["dev"] and not m["post"]:
        pre = (0,)  # 1.0.dev0 sorts before 1.0a0
    else:
        pre = (2,)
    if m["post"]:
        post: tuple = (1, int(m["post_n1"] or m["post_n2"] or 0))
    else:
        post = (0,)
    dev: tuple = (0, int(m["dev_n"] or 0)) if m["dev"] else (1,)
    if m["local"]:
        parts = re.split(r"[-_.]", m["local"].lower())
        local: tuple = (1, tuple((1, int(p), "") if p.isdigit() else (0, 0, p) for p in parts))
    else:
        local = (0,)
    return (int(m["epoch"] or 0), tuple(release), pre, post, dev, local)


def _other_key(other: Any) -> tuple:
    if isinstance(other, str):
        return _key(other)
    if isinstance(other, Iterable):  # (2, 1) means "2.1"
        return _key(".".join(str(item) for item in other))
    raise InvalidVersion(other)


class TorchVersion(str):
    """A version string that compares with strings and tuples as versions.

    Example:
        >>> import tapegrad as torch
        >>> torch.__version__ >= "2.0", torch.__version__ < (3, 0)
        (True, True)
    """

    __slots__ = ()

    def _compare(self, other: Any, method: str) -> Any:
        try:
            a, b = _key(self), _other_key(other)
        except InvalidVersion:
            return getattr(str, method)(self, other)  # not versions: compare as strings
        return getattr(a, method)(b)

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, "__lt__")

    def __le__(self, other: Any) -> Any:
        return self._compare(other, "__le__")

    def __eq__(self, other: Any) -> Any:
        return self._compare(other, "__eq__")

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, "__ge__")

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, "__gt__")

    __hash__ = str.__hash__  # (``!=`` stays str's, as in torch)


TORCH_API_VERSION = "2.13.0"
TAPEGRAD_VERSION = "0.1.0"
__version__ = TorchVersion(f"{TORCH_API_VERSION}+tapegrad{TAPEGRAD_VERSION}")
