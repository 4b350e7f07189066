"""``torch.layout``: how a tensor's elements are laid out in memory.

tapegrad's tensors are dense and strided (``x.layout`` is ``torch.strided``); the other layouts
torch names (sparse, jagged) exist as values, for code that compares with them or passes them
on, and no tensor has them.

    >>> import tapegrad as torch
    >>> torch.zeros(2).layout
    torch.strided
"""

from __future__ import annotations

from ._naming import NamedConstant, public


@public("")
class layout(NamedConstant):  # noqa: N801 - torch's name
    """A memory layout, printed as ``torch.strided``."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")
_mkldnn = layout("_mkldnn")

LAYOUTS = {lay.name: lay for lay in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr,
                                     sparse_bsc, jagged, _mkldnn)}
