"""uint8 bilinear/bicubic interpolation (ops/resample_uint8.py): bit for bit torch's fixed-point
results, over random sizes, scales, align_corners and channel counts."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cpu_kernels import VECTORIZED

import tapegrad

RNG = np.random.default_rng(0)


def _cases(n: int):
    for _ in range(n):
        h, w = (int(v) for v in RNG.integers(1, 30, 2))
        c = int(RNG.choice([1, 3, 4, 5]))
        mode = str(RNG.choice(["bilinear", "bicubic"]))
        ac = bool(RNG.integers(0, 2))
        if RNG.integers(0, 2):
            kw = {"size": [int(v) for v in RNG.integers(1, 30, 2)]}
            out_w = kw["size"][1]
        else:
            sf = [float(np.round(v, 2)) for v in RNG.uniform(0.3, 3, 2)]
            kw = {"scale_factor": sf, "recompute_scale_factor": bool(RNG.integers(0, 2))}
            if min(int(np.floor(sf[0] * h)), int(np.floor(sf[1] * w))) < 1:
                continue
            out_w = int(np.floor(sf[1] * w))
        if (c > 4 or not VECTORIZED) and out_w == 1:
            # torch's generic uint8 kernel (more than 4 channels, or every count under its
            # scalar kernels: tests/cpu_kernels.py) reads the first output row's weights for a
            # whole column when the output is one pixel wide: not reproduced
            continue
        x = RNG.integers(0, 256, (2, c, h, w), dtype=np.uint8)
        yield x, mode, ac, kw


@pytest.mark.parametrize("seed", range(3))
def test_uint8_matches_torch_bit_for_bit(seed):
    for x, mode, ac, kw in _cases(60):
        expected = torch.nn.functional.interpolate(torch.from_numpy(x), mode=mode,
                                                   align_corners=ac, **kw)
        got = tapegrad.nn.functional.interpolate(tapegrad.tensor(x), mode=mode,
                                                 align_corners=ac, **kw)
        assert got.dtype == tapegrad.uint8
        np.testing.assert_array_equal(got.numpy(), expected.numpy(),
                                      err_msg=f"{mode} align_corners={ac} {x.shape} {kw}")


def test_large_downscale_and_noncontiguous():
    x = RNG.integers(0, 256, (2, 3, 270, 270), dtype=np.uint8)
    xt = torch.from_numpy(x).transpose(-1, -2)
    xg = tapegrad.tensor(x).transpose(-1, -2)
    for mode in ("bilinear", "bicubic"):
        for ac in (False, True):
            expected = torch.nn.functional.interpolate(xt, size=(130, 130), mode=mode,
                                                       align_corners=ac)
            got = tapegrad.nn.functional.interpolate(xg, size=(130, 130), mode=mode,
                                                     align_corners=ac)
            np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_upsample_bilinear_uint8():
    x = RNG.integers(0, 256, (2, 3, 4, 4), dtype=np.uint8)
    with pytest.warns(UserWarning):  # deprecated, in both
        expected = torch.nn.functional.upsample_bilinear(torch.from_numpy(x), scale_factor=1.7)
    with pytest.warns(UserWarning):
        got = tapegrad.nn.functional.upsample_bilinear(tapegrad.tensor(x), scale_factor=1.7)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
