"""sort/argsort with stable=False: equal elements in the order torch's CPU sort leaves them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import tapegrad


@pytest.mark.parametrize("dtype", [torch.int8, torch.bool, torch.int64, torch.float32])
@pytest.mark.parametrize(("shape", "dim"), [((17,), 0), ((300,), 0), ((6, 40), 1),
                                            ((40, 3), 0)])
@pytest.mark.parametrize("descending", [False, True])
def test_unstable_sort_tie_order(dtype: torch.dtype, shape: tuple, dim: int,
                                 descending: bool) -> None:
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 4, shape, generator=g).to(dtype)
    if dtype.is_floating_point:
        x[x == 3] = float("nan")  # NaNs tie with each other
    ours = tapegrad.from_numpy(x.numpy())
    theirs = torch.sort(x, dim=dim, descending=descending)
    mine = tapegrad.sort(ours, dim=dim, descending=descending)
    np.testing.assert_array_equal(mine.indices.numpy(), theirs.indices.numpy())
    np.testing.assert_array_equal(mine.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(
        tapegrad.argsort(ours, dim=dim, descending=descending).numpy(),
        torch.argsort(x, dim=dim, descending=descending).numpy())


def test_stable_sort_keeps_original_order() -> None:
    x = torch.tensor([1, 0, 1, 0] * 10, dtype=torch.int8)
    mine = tapegrad.sort(tapegrad.from_numpy(x.numpy()), stable=True).indices.numpy()
    np.testing.assert_array_equal(mine, torch.sort(x, stable=True).indices.numpy())


def test_unstable_sort_rows_with_and_without_ties() -> None:
    g = torch.Generator().manual_seed(5)
    distinct = torch.stack([torch.randperm(30, generator=g) for _ in range(3)])
    tied = torch.randint(0, 3, (3, 30), generator=g)
    x = torch.cat([distinct, tied]).to(torch.float64)
    mine = tapegrad.sort(tapegrad.from_numpy(x.numpy()), dim=1, descending=True)
    np.testing.assert_array_equal(mine.indices.numpy(),
                                  torch.sort(x, dim=1, descending=True).indices.numpy())


@pytest.mark.parametrize(("dtype", "descending"), [(torch.int8, False), (torch.int8, True),
                                                   (torch.float32, False)])
def test_long_1d_sort(dtype: torch.dtype, descending: bool) -> None:
    # 32768 elements and more: torch radix-sorts ascending integers (stable), and introsorts
    # the rest as it does shorter rows
    x = torch.randint(0, 3, (32768,), generator=torch.Generator().manual_seed(7)).to(dtype)
    mine = tapegrad.sort(tapegrad.from_numpy(x.numpy()), descending=descending).indices
    np.testing.assert_array_equal(mine.numpy(),
                                  torch.sort(x, descending=descending).indices.numpy())
