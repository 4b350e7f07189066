"""CPU autocast over torch's OpInfo samples: every op's output dtypes (and values, within the
output dtype's tolerance) under ``autocast("cpu", bfloat16 | float16)``, against torch 2.13.

Two sweeps per entry, on its first float32 samples (``opinfo_harness.samples``):

* float32 inputs: the ops on the low-precision list (and those that reach one inside, like
  ``einsum`` or ``cov``) give the low type, the others float32;
* the same inputs in the low type: the ops on the float32 list (and those that reach one) give
  float32. Where torch's autocast changes nothing for a sample, tapegrad's must not either.

And the lists themselves: tapegrad's ``TORCH_AUTOCAST_CPU`` names exactly the aten ops that
torch 2.13 registers an ``AutocastCPU`` kernel for, each with the policy torch applies.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import opinfo_harness as h
import pytest
import torch
from cpu_kernels import ONEDNN_BF16, note

import tapegrad
from tapegrad import _autocast_lists as lists

LOW = (torch.bfloat16, torch.float16)
SAMPLES = 2  # per entry (the quick OpInfo sweep's count: its cached samples are reused)
# torch.testing.assert_close's default tolerances for the output's dtype
TOLERANCE = {torch.bfloat16: (1.6e-2, 1e-5), torch.float16: (1e-3, 1e-5),
             torch.float32: (1.3e-6, 1e-5), torch.float64: (1e-7, 1e-7)}


# Entries where tapegrad's low-precision kernels or compositions (not autocast) differ from
# torch's; strict: each fails the test once fixed, so the list only shrinks.
KNOWN_DIFFERENCES: dict[str, str] = {}


def _entries() -> list:
    failing = h.read_list(h.EXPECTED_FAILURES_FILE)
    out = []
    for op in h.in_scope_entries():
        eid = h.entry_id(op)
        if eid in failing or torch.float32 not in op.supported_dtypes("cpu"):
            continue
        reason = KNOWN_DIFFERENCES.get(eid)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        out.append(pytest.param(op, id=eid, marks=marks))
    return out


def _to_low(x: Any, low: torch.dtype) -> Any:
    if isinstance(x, torch.Tensor) and x.dtype == torch.float32:
        return x.detach().to(low)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_to_low(v, low) for v in x)
    if isinstance(x, dict):
        return {k: _to_low(v, low) for k, v in x.items()}
    return x


def _dtypes(out: Any) -> list:
    return [str(t.dtype).rsplit(".", 1)[-1] if isinstance(t, (torch.Tensor, tapegrad.Tensor))
            else None for t in h.flatten(out)]


def _run_torch(op: Any, s: Any, low: torch.dtype | None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if low is None:
            return op.op(s.input, *s.args, **s.kwargs)
        with torch.autocast("cpu", dtype=low):
            return op.op(s.input, *s.args, **s.kwargs)


def _tg_to_low(x: Any, low: Any) -> Any:
    if isinstance(x, tapegrad.Tensor) and x.dtype is tapegrad.float32:
        return x.detach().to(low)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_tg_to_low(v, low) for v in x)
    if isinstance(x, dict):
        return {k: _tg_to_low(v, low) for k, v in x.items()}
    return x


def _run_ours(fn: Any, s: Any, low: torch.dtype | None, low_inputs: torch.dtype | None) -> Any:
    """``fn`` on the sample's float32 inputs (cast to ``low_inputs`` if given: NumPy cannot
    take torch's bfloat16 tensors directly), under autocast to ``low`` if given."""
    conv = h.Converter()
    args = (conv(s.input), conv(tuple(s.args)), conv(dict(s.kwargs)))
    if low_inputs is not None:
        args = _tg_to_low(args, h.dtype_to_tg(low_inputs))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if low is None:
            return fn(args[0], *args[1], **args[2])
        with tapegrad.autocast("cpu", dtype=h.dtype_to_tg(low)):
            return fn(args[0], *args[1], **args[2])


def _compare_values(ours: Any, theirs: Any, what: str) -> None:
    for i, (o, t) in enumerate(zip(h.flatten(ours), h.flatten(theirs), strict=True)):
        if not isinstance(t, torch.Tensor) or not t.dtype.is_floating_point:
            continue
        rtol, atol = TOLERANCE[t.dtype]
        mine = torch.from_numpy(np.asarray(h.tg_numpy(o), dtype=np.float64))
        torch.testing.assert_close(mine, t.detach().double(), rtol=rtol, atol=atol,
                                   equal_nan=True, msg=lambda m, i=i: f"{what}[{i}]: {m}")


# oneDNN's native bfloat16 kernels (AVX512-BF16, AMX) compute transposed convolutions rounding
# partial sums to bfloat16: within one bfloat16 rounding (2^-7 here, as tests/ops/
# test_low_precision.py) of the sum of |terms| of each output, not the float32 rounding of
# tapegrad's products (docs/float32.md, "Other CPU kernels"; tests/cpu_kernels.py)
ONEDNN_BF16_PRODUCTS = {"nn.functional.conv_transpose1d", "nn.functional.conv_transpose2d",
                        "nn.functional.conv_transpose3d"}


def _within_onednn_rounding(op: Any, s32: Any, ours: Any, theirs: Any) -> None:
    def magnitude(x: Any) -> Any:
        if isinstance(x, torch.Tensor) and x.dtype.is_floating_point:
            return x.detach().double().abs()
        return x

    terms = op.op(magnitude(s32.input), *[magnitude(a) for a in s32.args],
                  **{k: magnitude(v) for k, v in s32.kwargs.items()})
    mine = np.asarray(h.tg_numpy(h.flatten(ours)[0]), dtype=np.float64)
    want = h.flatten(theirs)[0].detach().double().numpy()
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64) * 2.0**16  # bfloat16's
    bound = ulp + terms.numpy() * 2.0**-7
    assert (np.abs(mine - want) <= bound).all(), f"beyond oneDNN's bfloat16 rounding ({note()})"


def _check_sample(op: Any, fn: Any, s32: Any, low: torch.dtype, low_inputs: bool) -> None:
    s = s32
    cast_to = low if low_inputs else None
    if low_inputs:
        s = type(s)(_to_low(s.input, low), args=_to_low(tuple(s.args), low),
                    kwargs=_to_low(dict(s.kwargs), low))
    try:
        theirs = _run_torch(op, s, low)
    except Exception:  # torch rejects this sample under autocast: nothing to compare
        return
    if low_inputs:
        try:
            plain = _run_torch(op, s, None)
        except Exception:
            plain = None
        if plain is not None and _dtypes(plain) == _dtypes(theirs):
            # autocast changes nothing here in torch; in tapegrad it must not either
            try:
                ours_plain = _run_ours(fn, s32, None, cast_to)
            except (h.UnsupportedSample, Exception):
                return
            ours = _run_ours(fn, s32, low, cast_to)
            assert _dtypes(ours) == _dtypes(ours_plain), (
                f"autocast changed the dtypes {_dtypes(ours_plain)} to {_dtypes(ours)}")
            return
    try:
        ours = _run_ours(fn, s32, low, cast_to)
    except h.UnsupportedSample:
        return
    assert _dtypes(ours) == _dtypes(theirs), f"dtypes {_dtypes(ours)}, torch {_dtypes(theirs)}"
    if op.name not in h.UNSPECIFIED_VALUES and op.name not in h.GAUGE_DEPENDENT:
        if ONEDNN_BF16 and low is torch.bfloat16 and op.name in ONEDNN_BF16_PRODUCTS:
            _within_onednn_rounding(op, s32, ours, theirs)
            return
        _compare_values(ours, theirs, "output")


@pytest.mark.parametrize("op", _entries())
def test_autocast_dtypes(op: Any) -> None:
    fn = h.resolve(op)
    if fn is None:
        pytest.skip("tapegrad has no callable for this entry")
    batch = h.samples(op, torch.float32, SAMPLES)
    for low in LOW:
        for low_inputs in (False, True):
            # float16 takes the first sample only: the lists do not depend on the low type
            for n, s in enumerate(batch if low is torch.bfloat16 else batch[:1]):
                try:
                    _check_sample(op, fn, s, low, low_inputs)
                except AssertionError as e:
                    where = "low-precision" if low_inputs else "float32"
                    raise AssertionError(f"{h._name(low)} autocast, {where} inputs, sample {n} "
                                         f"({h._describe(s)}): {e}") from None


def test_lists_match_torch_dispatcher() -> None:
    """The aten ops with an AutocastCPU kernel in torch 2.13 are exactly the listed ones."""
    # (aten's only: torchvision, once imported, registers autocast kernels for its own ops)
    names = [n for n in torch._C._dispatch_get_all_op_names() if n.startswith("aten::")]
    registered = {n.split("::", 1)[1].split(".", 1)[0] for n in names
                  if torch._C._dispatch_has_kernel_for_dispatch_key(n, "AutocastCPU")}
    assert registered == set(lists.TORCH_AUTOCAST_CPU)


@pytest.mark.parametrize("aten, policy", [
    ("mm", lists.LOWER), ("linear", lists.LOWER), ("conv2d", lists.LOWER),
    ("scaled_dot_product_attention", lists.LOWER), ("prelu", lists.LOWER),
    ("cat", lists.PROMOTE), ("stack", lists.PROMOTE), ("index_copy", lists.PROMOTE),
    ("prod", lists.FP32), ("trace", lists.FP32), ("mse_loss", lists.FP32),
    ("cross_entropy_loss", lists.FP32), ("fft_fft", lists.FP32), ("linalg_inv", lists.FP32),
    ("cholesky", lists.FP32), ("cdist", lists.FP32), ("polar", lists.FP32),
])
def test_policy_is_torchs(aten: str, policy: str) -> None:
    """A sample of the lists' classification, checked on torch itself."""
    assert lists.TORCH_AUTOCAST_CPU[aten] == policy
    a32 = torch.randn(3, 3) + 3 * torch.eye(3)
    calls = {
        "mm": lambda a: torch.mm(a, a), "linear": lambda a: torch.nn.functional.linear(a, a),
        "conv2d": lambda a: torch.conv2d(a[None, None], a[None, None]),
        "scaled_dot_product_attention": lambda a: torch.nn.functional.scaled_dot_product_attention(
            a[None], a[None], a[None]),
        "prelu": lambda a: torch.prelu(a, a[0, :1]), "cat": lambda a: torch.cat([a, a]),
        "stack": lambda a: torch.stack([a, a]), "index_copy": lambda a: a.index_copy(
            0, torch.tensor([0]), a[:1]),
        "prod": torch.prod, "trace": torch.trace,
        "mse_loss": lambda a: torch.nn.functional.mse_loss(a, a),
        "cross_entropy_loss": lambda a: torch.nn.functional.cross_entropy(a, a.softmax(1)),
        "fft_fft": lambda a: torch.fft.fft(a).real, "linalg_inv": torch.linalg.inv,
        "cholesky": lambda a: torch.cholesky(a @ a.T), "cdist": lambda a: torch.cdist(a, a),
        "polar": lambda a: torch.polar(a.abs(), a).real,
    }
    with torch.autocast("cpu", dtype=torch.bfloat16):
        from_float = calls[aten](a32).dtype
        from_low = calls[aten](a32.bfloat16()).dtype
    expected = {lists.LOWER: (torch.bfloat16, torch.bfloat16),
                lists.FP32: (torch.float32, torch.float32),
                lists.PROMOTE: (torch.float32, torch.bfloat16)}[policy]
    assert (from_float, from_low) == expected


@pytest.mark.parametrize("low", LOW)
@pytest.mark.parametrize("shape,hermitian", [((5, 3), False), ((3, 6), False),
                                             ((2, 5, 3), False), ((2, 4, 4), True)])
def test_pinv_rounds_its_factors_as_torch(low, shape, hermitian):
    """torch's pinv under autocast: the SVD (eigh) in float32, then ``matmul`` of V S^-1 and
    U^H on the low-precision list (both rounded, the product rounded once): bit for bit, one
    LinalgPinvBackward0 node, and torch's error from its backward rule."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(np.float32)
    if hermitian:
        a = a @ np.swapaxes(a, -1, -2)
    theirs_in = torch.tensor(a, requires_grad=True)
    ours_in = tapegrad.tensor(a, requires_grad=True)
    with torch.autocast("cpu", dtype=low):
        theirs = torch.linalg.pinv(theirs_in, hermitian=hermitian)
    with tapegrad.autocast("cpu", dtype=h.dtype_to_tg(low)):
        ours = tapegrad.linalg.pinv(ours_in, hermitian=hermitian)
    assert _dtypes(ours) == _dtypes(theirs)
    assert ours.grad_fn.name() == theirs.grad_fn.name() == "LinalgPinvBackward0"
    np.testing.assert_array_equal(ours.float().detach().numpy(), theirs.float().detach().numpy())
    with pytest.raises(RuntimeError) as theirs_error:
        theirs.float().sum().backward()
    with pytest.raises(RuntimeError) as ours_error:
        ours.float().sum().backward()
    assert str(ours_error.value) == str(theirs_error.value)
