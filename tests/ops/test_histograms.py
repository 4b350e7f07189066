"""histogramdd beyond torch's OpInfo samples: bins as a list of counts or of edge tensors, and
the argument parser's errors for a list that mixes them (ops/histograms.py)."""

from __future__ import annotations

import pytest


def test_histogramdd_bins_forms(compare):
    def scenario(L):
        x = L.tensor([[0.1, 0.9], [0.5, 0.2], [0.7, 0.7], [0.3, 0.4], [0.95, 0.05]])
        a = L.histogramdd(x, bins=[2, 3])
        b = L.histogramdd(x, bins=(L.tensor([0.0, 0.5, 1.0]), L.tensor([0.0, 0.25, 1.0])),
                          weight=L.tensor([1.0, 2.0, 0.5, 1.0, 3.0]), density=True)
        return a.hist, a.bin_edges, b.hist, b.bin_edges

    compare(scenario)


@pytest.mark.parametrize("bins", [
    "int_then_float", "int_then_str", "tensor_then_float", "bool_first", "int_then_tensor",
])
def test_histogramdd_mixed_bins_list_errors(compare, bins):
    def scenario(L):
        edges = L.tensor([0.0, 1.0])
        given = {"int_then_float": [2, 2.5], "int_then_str": [2, "a"],
                 "tensor_then_float": [edges, 2.5], "bool_first": [True, 2],
                 "int_then_tensor": (2, edges)}[bins]
        return L.histogramdd(L.ones(3, 2), bins=given)

    compare(scenario)
