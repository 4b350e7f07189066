"""Which of torch's CPU kernels the live torch runs in this test run, for the tests whose
expected bits depend on it.

torch picks its kernels when it starts: by the CPU's instruction sets, unless held back by
``ATEN_CPU_CAPABILITY`` (``avx2``, ``default``) or, for oneDNN, ``ONEDNN_MAX_CPU_ISA``.
tapegrad reproduces the vectorized kernels of an x86-64 build (AVX2 and AVX-512 compute the same
bits there: fused multiply-adds, avx_mathfun's log/sin/cos for float32 normal draws) and the
float32 computation of bfloat16 products. Where the live torch runs something else, tapegrad
cannot follow it, and the tests say so and check the bound documented in docs/float32.md
("Other CPU kernels") instead of the bits:

* ``VECTORIZED`` False (``ATEN_CPU_CAPABILITY=default``, or a CPU without AVX2): torch's scalar
  kernels round ``a + alpha*b``, ``a + value*t1*t2``, ``lerp`` and the random draws with bounds
  (``uniform_(a, b)``, ``normal_(mean, std)``) twice where the vectorized ones round once, draw
  float32 normal numbers through libm instead of avx_mathfun, and compute a few low-precision
  functions (rsqrt, gelu) a little differently;
* ``ONEDNN_BF16`` True (a CPU with AVX512-BF16 or AMX, oneDNN not held below them): torch runs
  bfloat16 convolutions (transposed ones) and GELU through oneDNN's native bfloat16 kernels,
  which round partial results to bfloat16.

``python -m pytest`` passes under each (tests/README.md says how to run them).
"""

from __future__ import annotations

import torch

CAPABILITY = torch.backends.cpu.get_cpu_capability()
VECTORIZED = CAPABILITY != "DEFAULT"
ONEDNN_BF16 = bool(torch.backends.mkldnn.is_available()
                   and torch.ops.mkldnn._is_mkldnn_bf16_supported())


def note() -> str:
    """The kernels this run's torch uses, for test messages."""
    return (f"torch's CPU capability {CAPABILITY}, oneDNN native bfloat16 "
            f"{'on' if ONEDNN_BF16 else 'off'}")


# Random draws under torch's scalar kernels (docs/float32.md, "Other CPU kernels"): draws with
# bounds, a mean or a scale are rounded twice (no fused multiply-add) and float32 normal draws
# go through libm's log/sin/cos instead of avx_mathfun's, so the last bits of a value differ;
# the number of draws, and so the generator's state, do not. A normal draw r*cos(theta) (and
# its partner r*sin(theta)) moves by up to about 4.5 eps*r (the two cosines differ by up to 4
# eps, measured over ten million draws; r is below 5.8 for float32's uniform draws), and the
# largest of the draws is at least r/sqrt(2) of the pair with the largest radius: within 8
# units in the last place of the largest value (a uniform draw's extra rounding: 2).
RANDOM_ULPS = 8


def assert_draws(actual, expected, what: str = "", ulps: int = RANDOM_ULPS,
                 precision=None) -> None:
    """Random values (or values computed elementwise from them) of tapegrad and of torch: bit for
    bit where torch runs the vectorized kernels tapegrad reproduces, else within ``ulps`` units
    in the last place of the largest value (``precision``: the dtype the draws were made in, if
    not the values'; integers and bools: always exactly)."""
    assert_kernel_bits(actual, expected, what, ulps, "the last bits of draws differ", precision)


# A few optimizer and averaging steps compound the extra roundings of torch's scalar kernels
STEP_ULPS = 16


def assert_kernel_bits(actual, expected, what: str = "", ulps: int = STEP_ULPS,
                       why: str = "one rounding more per fused multiply-add",
                       precision=None) -> None:
    """tapegrad's bits against torch's: equal where torch runs its vectorized kernels, else
    within ``ulps`` units in the last place of the largest value (integers: exactly)."""
    import numpy as np

    actual, expected = np.asarray(actual), np.asarray(expected)
    if VECTORIZED or actual.dtype.kind not in "fc" or expected.dtype.kind not in "fc":
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, what
    finite = np.isfinite(expected)
    scale = float(np.abs(expected[finite]).max(initial=0.0))
    atol = ulps * float(np.finfo(precision or expected.dtype).eps) * scale
    np.testing.assert_allclose(actual, expected, rtol=0, atol=atol,
                               err_msg=f"{what} ({note()}: {why})")


def assert_fused(actual, expected, products, what: str = "") -> None:
    """``a + x*y`` rounded once (tapegrad, and torch's vectorized kernels: a fused multiply-add)
    against torch's result: bit for bit, or, under torch's scalar kernels (which round ``x*y``
    before adding), within one unit in the last place of the result plus one of each product
    (``products``: their absolute values, summed where several were added)."""
    import numpy as np

    actual, expected = np.asarray(actual), np.asarray(expected)
    if VECTORIZED:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
        return
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, what
    eps = float(np.finfo(expected.dtype).eps)
    bound = np.spacing(np.abs(expected).astype(expected.dtype)) + eps * np.abs(products)
    diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    worst = np.unravel_index(int(np.argmax(diff - bound)), diff.shape) if diff.size else ()
    assert (diff <= bound).all(), (
        f"{what}: {actual[worst]!r} vs torch's {expected[worst]!r} ({note()}: one rounding more)")


# grid_sample's bilinear sampling under torch's scalar kernels: the position
# (g + 1)*size/2 - 0.5 and the four weighted terms rounded twice. A position below 32 moves by
# up to one unit in its last place (16 eps), which moves the value by up to that times the
# largest step between neighbouring pixels (at most the largest |input|), in each of the two
# coordinates, plus one rounding of each of the four terms: units of the largest |input|.
GRID_SAMPLE_ULPS = 2 * 16 + 4


def resample_terms(mode: str, size: int, out: int) -> int:
    """The most input pixels one output pixel of an antialiased resampling pass weighs (torch's
    scalar kernels round each weighted term before adding it): the kernel's support (1
    bilinear, 2 bicubic, 3 lanczos), widened by the downsampling factor, on each side."""
    import math

    support = {"bilinear": 1, "bicubic": 2, "lanczos": 3}[mode] * max(size / out, 1.0)
    return 2 * math.ceil(support) + 1
