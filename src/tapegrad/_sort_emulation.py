"""torch's CPU sort and selection algorithms, replayed where equal values make their order matter.

A sort or a selection of distinct values has one answer, which NumPy gives. With ties (or NaNs)
the indices torch returns depend on the algorithm that moved them, so sort, topk, kthvalue and
mode (``ops/sorting.py``), multinomial without replacement (``_random.py``, the top k of
``p / q``) and the pruning methods (``nn/utils/prune.py``, the k smallest) replay torch's:

* ``sort(stable=False)``, mode: the C++ standard library's (libstdc++'s) ``std::sort``:
  introsort, heap sort past its depth limit, a final insertion sort;
* topk: ``std::partial_sort`` when ``64 k <= n``, otherwise ``std::nth_element`` (introselect,
  heap select past its depth limit) and then ``std::sort`` of the first ``k - 1``;
* kthvalue: torch's own median-of-three quickselect.

Every algorithm here works in place on a row given as a list of ``(value, index)`` pairs and
compares values alone (``comp(a, b)``: "a goes before b"), so the indices end where torch's do.
The module imports nothing of tapegrad's: it sits below every layer that uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "StdAlgorithms",
    "greater_nan_largest",
    "less_nan_largest",
    "quickselect",
    "topk_positions",
    "value_index_pairs",
]


def value_index_pairs(values: np.ndarray) -> list:
    """A 1-d row as the list of ``(value, position)`` pairs the algorithms move."""
    return list(zip(values.tolist(), range(len(values)), strict=True))


def greater_nan_largest(a: Any, b: Any) -> bool:
    """a > b with NaN the largest."""
    return (a != a and b == b) or a > b


def less_nan_largest(a: Any, b: Any) -> bool:
    """a < b with NaN the largest."""
    return (a == a and b != b) or a < b


def quickselect(row: list, k: int) -> None:
    """Put the k-th smallest (0-based) of ``row`` at ``row[k]`` (torch's kthvalue)."""
    lo, hi = 0, len(row) - 1

    def gt(i: int, j: int) -> bool:
        return greater_nan_largest(row[i][0], row[j][0])

    def swap(i: int, j: int) -> None:
        row[i], row[j] = row[j], row[i]

    while True:
        if hi <= lo:
            return
        if hi == lo + 1:
            if gt(lo, hi):
                swap(lo, hi)
            return
        swap(lo + (hi - lo) // 2, lo + 1)
        if gt(lo + 1, hi):
            swap(lo + 1, hi)
        if gt(lo, hi):
            swap(lo, hi)
        if gt(lo + 1, lo):
            swap(lo + 1, lo)
        i, j = lo + 1, hi
        piv = row[lo][0]
        while True:
            i += 1
            while greater_nan_largest(piv, row[i][0]):
                i += 1
            j -= 1
            while greater_nan_largest(row[j][0], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1


class StdAlgorithms:
    """The standard library's selection and sorting on ``a[first:last]`` with ``comp``."""

    def __init__(self, a: list, comp: Callable[[Any, Any], bool]) -> None:
        self.a, self.comp = a, comp

    def c(self, x: Any, y: Any) -> bool:
        return self.comp(x[0], y[0])

    def insertion_sort(self, first: int, last: int) -> None:
        a = self.a
        for i in range(first + 1, last):
            val = a[i]
            if self.c(val, a[first]):
                a[first + 1:i + 1] = a[first:i]
                a[first] = val
            else:
                j = i
                while self.c(val, a[j - 1]):
                    a[j] = a[j - 1]
                    j -= 1
                a[j] = val

    def move_median_to_first(self, result: int, x: int, y: int, z: int) -> None:
        a, c = self.a, self.c
        if c(a[x], a[y]):
            m = y if c(a[y], a[z]) else z if c(a[x], a[z]) else x
        elif c(a[x], a[z]):
            m = x
        elif c(a[y], a[z]):
            m = z
        else:
            m = y
        a[result], a[m] = a[m], a[result]

    def partition_pivot(self, first: int, last: int) -> int:
        a, c = self.a, self.c
        self.move_median_to_first(first, first + 1, first + (last - first) // 2, last - 1)
        lo, hi, pivot = first + 1, last, a[first]
        while True:
            while c(a[lo], pivot):
                lo += 1
            hi -= 1
            while c(pivot, a[hi]):
                hi -= 1
            if not lo < hi:
                return lo
            a[lo], a[hi] = a[hi], a[lo]
            lo += 1

    def adjust_heap(self, first: int, hole: int, n: int, value: Any) -> None:
        a, c = self.a, self.c
        top = second = hole
        while second < (n - 1) // 2:
            second = 2 * (second + 1)
            if c(a[first + second], a[first + second - 1]):
                second -= 1
            a[first + hole] = a[first + second]
            hole = second
        if n % 2 == 0 and second == (n - 2) // 2:
            second = 2 * (second + 1)
            a[first + hole] = a[first + second - 1]
            hole = second - 1
        parent = (hole - 1) // 2
        while hole > top and c(a[first + parent], value):
            a[first + hole] = a[first + parent]
            hole = parent
            parent = (hole - 1) // 2
        a[first + hole] = value

    def make_heap(self, first: int, last: int) -> None:
        n = last - first
        if n < 2:
            return
        for parent in range((n - 2) // 2, -1, -1):
            self.adjust_heap(first, parent, n, self.a[first + parent])

    def pop_heap(self, first: int, last: int, result: int) -> None:
        a = self.a
        value = a[result]
        a[result] = a[first]
        self.adjust_heap(first, 0, last - first, value)

    def heap_select(self, first: int, middle: int, last: int) -> None:
        self.make_heap(first, middle)
        for i in range(middle, last):
            if self.c(self.a[i], self.a[first]):
                self.pop_heap(first, middle, i)

    def partial_sort(self, first: int, middle: int, last: int) -> None:
        self.heap_select(first, middle, last)
        while middle - first > 1:
            middle -= 1
            self.pop_heap(first, middle, middle)

    def nth_element(self, first: int, nth: int, last: int) -> None:
        if first == last or nth == last:
            return
        depth = 2 * ((last - first).bit_length() - 1)
        while last - first > 3:
            if depth == 0:
                self.heap_select(first, nth + 1, last)
                self.a[first], self.a[nth] = self.a[nth], self.a[first]
                return
            depth -= 1
            cut = self.partition_pivot(first, last)
            if cut <= nth:
                first = cut
            else:
                last = cut
        self.insertion_sort(first, last)

    def sort(self, first: int, last: int) -> None:
        if last - first > 1:
            self.introsort_loop(first, last, 2 * ((last - first).bit_length() - 1))
            self.insertion_sort(first, last)  # the final pass (guarded and unguarded alike)

    def introsort_loop(self, first: int, last: int, depth: int) -> None:
        while last - first > 16:
            if depth == 0:
                self.partial_sort(first, last, last)
                return
            depth -= 1
            cut = self.partition_pivot(first, last)
            self.introsort_loop(cut, last, depth)
            last = cut


def topk_positions(values: np.ndarray, k: int, largest: bool, sorted: bool) -> list:
    """torch's CPU topk of one row: the positions of its k picks, in torch's order."""
    row = value_index_pairs(values)
    std = StdAlgorithms(row, greater_nan_largest if largest else less_nan_largest)
    n = len(row)
    if k * 64 <= n:
        std.partial_sort(0, k, n)
    else:
        std.nth_element(0, k - 1, n)
        if sorted:
            std.sort(0, k - 1)
    return [i for _, i in row[:k]]
