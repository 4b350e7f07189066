"""Antialiased interpolation (ops/resample_aa.py): ``interpolate(..., antialias=True)`` for
bilinear, bicubic and lanczos, bit for bit torch's results in float32, float64 and uint8, its
gradients, and torch's errors for the unsupported combinations."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cpu_kernels import VECTORIZED, note, resample_terms

import tapegrad

RNG = np.random.default_rng(0)


def _cases(n: int):
    for _ in range(n):
        h, w = (int(v) for v in RNG.integers(1, 40, 2))
        c = int(RNG.choice([1, 3, 4, 5]))
        mode = str(RNG.choice(["bilinear", "bicubic", "lanczos"]))
        ac = False if mode == "lanczos" else bool(RNG.integers(0, 2))
        if RNG.integers(0, 2):
            kw = {"size": [int(v) for v in RNG.integers(1, 40, 2)]}
        else:
            sf = [float(np.round(v, 2)) for v in RNG.uniform(0.2, 3, 2)]
            kw = {"scale_factor": sf, "recompute_scale_factor": bool(RNG.integers(0, 2))}
            if min(int(np.floor(sf[0] * h)), int(np.floor(sf[1] * w))) < 1:
                continue
        yield (h, w, c), mode, ac, kw


@pytest.mark.parametrize("dtype", ["float32", "float64", "uint8"])
def test_matches_torch_bit_for_bit(dtype):
    for (h, w, c), mode, ac, kw in _cases(40):
        out_w = kw["size"][1] if "size" in kw else int(np.floor(kw["scale_factor"][1] * w))
        if out_w == 1 and (dtype != "uint8" or c > 4):
            # torch's separable kernel (float, or uint8 with more than 4 channels) reads the
            # first output row's weights for every row when the output is one pixel wide, so
            # that all rows come out equal: not reproduced
            continue
        if dtype == "uint8":
            x = RNG.integers(0, 256, (2, c, h, w), dtype=np.uint8)
        else:
            x = (RNG.random((2, c, h, w)) * 255).astype(dtype)
        expected = torch.nn.functional.interpolate(torch.from_numpy(x), mode=mode,
                                                   align_corners=ac, antialias=True, **kw)
        got = tapegrad.nn.functional.interpolate(tapegrad.tensor(x), mode=mode,
                                                 align_corners=ac, antialias=True, **kw)
        assert got.dtype.name == dtype
        what = f"{mode} align_corners={ac} {x.shape} {kw}"
        if VECTORIZED or dtype == "uint8":
            np.testing.assert_array_equal(got.numpy(), expected.numpy(), err_msg=what)
        else:
            # torch's scalar kernels round each weighted term before adding it (the vectorized
            # ones fuse them): one unit in the last place of the largest value per term, summed
            # over the terms of both passes
            out_h, out_w = expected.shape[2:]
            terms = sum(resample_terms(mode, size, out)
                        for size, out in ((h, out_h), (w, out_w)))
            atol = terms * float(np.finfo(dtype).eps) * float(np.abs(x).max())
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=0, atol=atol,
                                       err_msg=f"{what} ({note()}: one rounding more a term)")


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_gradients(mode):
    x = RNG.random((2, 3, 17, 23)).astype(np.float32)
    g = RNG.random((2, 3, 9, 30)).astype(np.float32)
    xt = torch.tensor(x, requires_grad=True)
    xg = tapegrad.tensor(x, requires_grad=True)
    yt = torch.nn.functional.interpolate(xt, size=(9, 30), mode=mode, antialias=True)
    yg = tapegrad.nn.functional.interpolate(xg, size=(9, 30), mode=mode, antialias=True)
    assert type(yg.grad_fn).__name__ == type(yt.grad_fn).__name__
    yt.backward(torch.from_numpy(g))
    yg.backward(tapegrad.tensor(g))
    np.testing.assert_allclose(xg.grad.numpy(), xt.grad.numpy(), rtol=1.3e-6, atol=1e-5)


def test_errors(compare):
    def case(x=None, **kw):
        def scenario(L):
            return L.nn.functional.interpolate(L.zeros(1, 1, 6, 6) if x is None else x(L),
                                               **kw)
        return scenario

    compare(case(size=(3, 3), mode="nearest", antialias=True))
    compare(case(x=lambda L: L.zeros(1, 1, 6), size=3, mode="linear", antialias=True))
    compare(case(size=(3, 3), mode="lanczos"))
    compare(case(size=(3, 3), mode="lanczos", antialias=True, align_corners=True))
    compare(case(x=lambda L: L.zeros(1, 6, 6), size=3, mode="lanczos"))
    compare(case(x=lambda L: L.zeros(1, 1, 6, 6, dtype=L.int32), size=(3, 3),
                 mode="bilinear", antialias=True))
    compare(case(x=lambda L: L.zeros(1, 1, 6, 6, dtype=L.float16), size=(3, 3),
                 mode="bicubic", antialias=True))
