"""``torch.return_types``: the named tuples that functions of several results return.

    >>> import tapegrad as torch
    >>> r = torch.max(torch.tensor([[1, 5], [7, 2]]), dim=1)
    >>> r.values, r.indices            # or unpacked: values, indices = r
    (tensor([5, 7]), tensor([1, 0]))

Each is a tuple with one read-only attribute per field, made as torch makes its own (a
"structseq"): ``max((values, indices))`` takes one sequence, ``len`` is the number of fields,
and the repr names every field on its own line::

    torch.return_types.max(
    values=tensor([5, 7]),
    indices=tensor([1, 0]))

A function given ``out=`` returns the ``<name>_out`` type of the same fields (``_out.py``).
"""

from __future__ import annotations

from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ._naming import public

__all__ = ["all_return_types"]


class _StructSeq(tuple):
    """A tuple with named fields, as a C ``PyStructSequence`` of torch's."""

    __slots__ = ()
    n_fields = n_sequence_fields = 0
    n_unnamed_fields = 0
    _names: tuple[str, ...] = ()

    def __new__(cls, sequence: Any, dict: Any = None) -> Any:  # noqa: A002 - structseq's name
        try:
            items = tuple(sequence)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        if len(items) != cls.n_fields:
            raise TypeError(f"{cls.__module__}.{cls.__name__}() takes a {cls.n_fields}-sequence "
                            f"({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __repr__(self) -> str:
        body = ",\n".join(f"{name}={value!r}" for name, value in zip(
            self._names, self, strict=True))
        return f"{type(self).__module__}.{type(self).__name__}(\n{body})"

    def __reduce__(self) -> tuple:
        return type(self), (tuple(self), {})

    @classmethod
    def of(cls, *values: Any) -> Any:
        """The tuple of ``values``, one per field (tapegrad's functions make theirs so)."""
        return tuple.__new__(cls, values)


def _make(name: str, fields: str) -> type:
    names = tuple(fields.split())
    body: dict[str, Any] = {"__slots__": (), "_names": names, "n_fields": len(names),
                            "n_sequence_fields": len(names), "__module__": __name__}
    for i, field in enumerate(names):
        body[field] = property(itemgetter(i), doc=f"field {i}: {field}")
    return public(".return_types")(type(name, (_StructSeq,), body))  # (torch.<...> aliased)


_FIELDS = (
    ("aminmax", "min max"),
    ("cummax", "values indices"),
    ("cummin", "values indices"),
    ("frexp", "mantissa exponent"),
    ("geqrf", "a tau"),
    ("histogram", "hist bin_edges"),
    ("histogramdd", "hist bin_edges"),
    ("kthvalue", "values indices"),
    ("linalg_cholesky_ex", "L info"),
    ("linalg_eig", "eigenvalues eigenvectors"),
    ("linalg_eigh", "eigenvalues eigenvectors"),
    ("linalg_inv_ex", "inverse info"),
    ("linalg_ldl_factor", "LD pivots"),
    ("linalg_ldl_factor_ex", "LD pivots info"),
    ("linalg_lstsq", "solution residuals rank singular_values"),
    ("linalg_lu", "P L U"),
    ("linalg_lu_factor", "LU pivots"),
    ("linalg_lu_factor_ex", "LU pivots info"),
    ("linalg_qr", "Q R"),
    ("linalg_slogdet", "sign logabsdet"),
    ("linalg_solve_ex", "result info"),
    ("linalg_svd", "U S Vh"),
    ("lu_unpack", "P L U"),
    ("max", "values indices"),
    ("median", "values indices"),
    ("min", "values indices"),
    ("mode", "values indices"),
    ("nanmedian", "values indices"),
    ("qr", "Q R"),
    ("slogdet", "sign logabsdet"),
    ("sort", "values indices"),
    ("svd", "U S V"),
    ("topk", "values indices"),
    ("triangular_solve", "solution cloned_coefficient"),
)

# torch's order: each type, then its _out type (histogramdd has none)
all_return_types: list[type] = []
_OUT: dict[type, type] = {}
for _name, _fields in _FIELDS:
    _cls = _make(_name, _fields)
    globals()[_name] = _cls
    all_return_types.append(_cls)
    if _name != "histogramdd":
        _out_cls = _make(_name + "_out", _fields)
        globals()[_name + "_out"] = _out_cls
        all_return_types.append(_out_cls)
        _OUT[_cls] = _out_cls
del _name, _fields, _cls, _out_cls


def out_type(cls: type) -> type | None:
    """The ``<name>_out`` type of a return type (what a function given ``out=`` returns)."""
    return _OUT.get(cls)


if TYPE_CHECKING:  # the types made above, by name
    aminmax: type[_StructSeq]
    cummax: type[_StructSeq]
    cummin: type[_StructSeq]
    frexp: type[_StructSeq]
    geqrf: type[_StructSeq]
    histogram: type[_StructSeq]
    histogramdd: type[_StructSeq]
    kthvalue: type[_StructSeq]
    linalg_cholesky_ex: type[_StructSeq]
    linalg_eig: type[_StructSeq]
    linalg_eigh: type[_StructSeq]
    linalg_inv_ex: type[_StructSeq]
    linalg_ldl_factor: type[_StructSeq]
    linalg_ldl_factor_ex: type[_StructSeq]
    linalg_lstsq: type[_StructSeq]
    linalg_lu: type[_StructSeq]
    linalg_lu_factor: type[_StructSeq]
    linalg_lu_factor_ex: type[_StructSeq]
    linalg_qr: type[_StructSeq]
    linalg_slogdet: type[_StructSeq]
    linalg_solve_ex: type[_StructSeq]
    linalg_svd: type[_StructSeq]
    lu_unpack: type[_StructSeq]
    max: type[_StructSeq]
    median: type[_StructSeq]
    min: type[_StructSeq]
    mode: type[_StructSeq]
    nanmedian: type[_StructSeq]
    qr: type[_StructSeq]
    slogdet: type[_StructSeq]
    sort: type[_StructSeq]
    svd: type[_StructSeq]
    topk: type[_StructSeq]
    triangular_solve: type[_StructSeq]
