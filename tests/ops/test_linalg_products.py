"""The matrix products of ops/linalg.py against real torch: the dtype errors of mm, bmm, mv and
the fused products (each names the dtypes as torch's kernel does: c10's Float, C++'s float), and
tensordot's size error, which names the dims as torch counts them."""

from __future__ import annotations

import itertools
import warnings

import pytest

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "complex64"]

PRODUCTS = {  # (factor a, factor b, added tensor c): only mm, bmm and mv have no c
    "mm": lambda L, a, b, c: L.mm(L.ones(2, 2, dtype=a), L.ones(2, 2, dtype=b)),
    "bmm": lambda L, a, b, c: L.bmm(L.ones(2, 2, 2, dtype=a), L.ones(2, 2, 2, dtype=b)),
    "mv": lambda L, a, b, c: L.mv(L.ones(2, 2, dtype=a), L.ones(2, dtype=b)),
    "addmv": lambda L, a, b, c: L.addmv(L.ones(2, dtype=c), L.ones(2, 2, dtype=a),
                                        L.ones(2, dtype=b)),
    "addmm": lambda L, a, b, c: L.addmm(L.ones(2, 2, dtype=c), L.ones(2, 2, dtype=a),
                                        L.ones(2, 2, dtype=b)),
    "baddbmm": lambda L, a, b, c: L.baddbmm(L.ones(2, 2, 2, dtype=c), L.ones(2, 2, 2, dtype=a),
                                            L.ones(2, 2, 2, dtype=b)),
    "addbmm": lambda L, a, b, c: L.addbmm(L.ones(2, 2, dtype=c), L.ones(2, 2, 2, dtype=a),
                                          L.ones(2, 2, 2, dtype=b)),
}


def _outcome(L, fn, a, b, c):
    try:
        with warnings.catch_warnings():  # (torch's complex -> real warning of baddbmm's self)
            warnings.simplefilter("ignore")
            fn(L, getattr(L, a), getattr(L, b), getattr(L, c))
    except Exception as e:  # noqa: BLE001 (compared below)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_dtype_mismatch_errors_match_torch(lib, oracle, name):
    # every pair of factor dtypes (low precision with integer and complex included) and, for
    # the fused products, every dtype of the added tensor; one test per product keeps it fast
    fn = PRODUCTS[name]
    added = DTYPES if name.startswith(("add", "badd")) else ["float32"]
    checked = 0
    for a, b, c in itertools.product(DTYPES, DTYPES, added):
        if a == b == c or (a == b and len(added) == 1):
            continue
        want = _outcome(oracle, fn, a, b, c)
        assert want is not None  # torch refuses every mix
        assert _outcome(lib, fn, a, b, c) == want, (a, b, c)
        checked += 1
    assert checked >= 30


@pytest.mark.parametrize("sa, sb, dims", [
    ((2, 3), (4, 5), 1),
    ((2, 3, 4), (3, 5, 6), 2),
    ((2, 3), (4, 5), ([1], [0])),
    ((2, 3), (4, 5), ([-1], [-2])),
    ((2, 3, 4), (4, 5), ([-1, 1], [0, 1])),
    ((2, 3), (3,), ([1], [5])),
])
def test_tensordot_size_error_names_dims_as_torch(compare, sa, sb, dims):
    compare(lambda L: L.tensordot(L.ones(sa), L.ones(sb), dims=dims))
