"""Values and gradients at the boundaries of the elementwise ops, against the live torch.

Random samples rarely land on a kink or a zero, where the formulas of a derivative meet their
special cases: hardswish's gradient at exactly -3 and 3, atan2's at (0, 0), pow's at a zero base
and a zero exponent, an integer remainder by zero, gcd of the most negative integer. This test
drives every unary and binary ufunc entry of torch's OpInfo database (and the other elementwise
entries in ``EXTRA``) through torch and tapegrad with its arguments placed on such points:

* its first samples give the call (which arguments are tensors, the numbers and keywords);
* every tensor argument of the sample's dtype becomes a 1-D tensor, together covering every
  combination of the boundary values (``FLOAT_POINTS``: 0, -0, +-1, +-3, 6, +-0.5, +-2, and the
  sample's own numbers and their negatives: a threshold, clamp's bounds, a shrink's lambda), or,
  for integer dtypes, the type's extremes (``int_points``);
* a 0-d version of the call (every tensor argument one boundary value) checks the 0-d code
  paths (NumPy returns scalars where a kernel expects arrays);
* the outputs must agree (``opinfo_harness.run_sample``: values, dtypes, shapes, first-order
  gradients and, at float64, second-order ones), or both must raise the same exception type with
  the same first line.

``KNOWN`` lists what does not agree, each with its reason (strict: a listed case that passes
fails the test). ``SKIP_INT_EXTREMES`` lists the entries whose integer extremes torch cannot
run (a division fault kills the process, or a loop runs 2^31 times).
"""

from __future__ import annotations

import itertools
import math
import warnings

import opinfo_harness as h
import pytest
import torch
from torch.testing._internal.opinfo.core import SampleInput

FLOAT_POINTS = [0.0, -0.0, 1.0, -1.0, 3.0, -3.0, 6.0, 0.5, -0.5, 2.0, -2.0]
SAMPLES = 3  # distinct calls per entry and dtype
DTYPES = (torch.float64, torch.float32, torch.int64, torch.int32, torch.int8, torch.uint8,
          torch.bool)

# elementwise entries that are not UnaryUfuncInfo / BinaryUfuncInfo
EXTRA = {"nn.functional.hardswish", "clamp", "nn.functional.leaky_relu", "nn.functional.gelu",
         "xlogy", "lerp", "addcmul", "addcdiv", "where", "float_power", "nn.functional.glu",
         "nn.functional.softplus", "nn.functional.silu", "nn.functional.mish"}

# (entry, dtype name) -> why tapegrad's result differs there
KNOWN = {
    ("special.bessel_j1", "int32"): "float32 Bessel functions at |x| ~ 2^31 (an int32 extreme "
    "converted to float32): torch's float32 kernel reduces the argument in float32, tapegrad "
    "computes in float64 and rounds (docs/float32.md, transcendental functions)",
    ("special.bessel_y0", "int32"): "as bessel_j1: float32 argument reduction at |x| ~ 2^31",
    ("special.airy_ai", "int32"): "as bessel_j1: torch's float32 Airy function at x ~ -2^31 "
    "evaluates its asymptotic wave in float32",
    ("special.airy_ai", "int64"): "as int32: the phase 2/3 |x|^(3/2) of the wave at x ~ -2^63, "
    "in float32",
}

# entries whose integer extremes torch itself cannot take
SKIP_INT_EXTREMES = {
    "div.trunc_rounding": "torch's trunc division of the most negative integer by -1 is a "
    "hardware division fault (SIGFPE): the process dies",
    "lcm": "torch's lcm divides by the gcd, which is -1 for the most negative integer and its "
    "neighbours: SIGFPE",
    **{f"special.{name}": "torch's recurrence runs n steps: n ~ 2^31 takes minutes" for name in (
        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
        "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
        "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w")},
}


def int_points(dtype: torch.dtype) -> list:
    if dtype == torch.bool:
        return [False, True]
    info = torch.iinfo(dtype)
    points = [0, 1, -1, 2, -2, 3, info.min, info.max, info.min + 1, info.max - 1]
    return [p for p in dict.fromkeys(points) if info.min <= p <= info.max]


def _numbers(s: SampleInput) -> list:
    """The finite numbers among the sample's arguments, and their negatives."""
    out: list = []

    def walk(x):
        if isinstance(x, bool):
            return
        if isinstance(x, (int, float)) and math.isfinite(x):
            out.extend([float(x), -float(x)])
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)

    walk(s.args)
    walk(s.kwargs)
    return out


def _points(s: SampleInput, dtype: torch.dtype) -> list:
    if dtype.is_floating_point:
        return list(dict.fromkeys(FLOAT_POINTS + _numbers(s)))
    return int_points(dtype)


def _tensor_slots(s: SampleInput, dtype: torch.dtype) -> list:
    slots = [("input", None)] if isinstance(s.input, torch.Tensor) else []
    slots += [("arg", i) for i, a in enumerate(s.args)
              if isinstance(a, torch.Tensor) and a.dtype == dtype]
    return slots


def _rebuilt(s: SampleInput, slots: list, columns: list) -> SampleInput:
    inp, args = s.input, list(s.args)
    for (kind, i), col in zip(slots, columns, strict=True):
        orig = s.input if kind == "input" else args[i]
        t = torch.tensor(col, dtype=orig.dtype).requires_grad_(orig.requires_grad)
        if kind == "input":
            inp = t
        else:
            args[i] = t
    return SampleInput(inp, args=tuple(args), kwargs=dict(s.kwargs),
                       output_process_fn_grad=s.output_process_fn_grad)


def grid(s: SampleInput, dtype: torch.dtype) -> SampleInput | None:
    """Every tensor argument a 1-D tensor; together every combination of the points."""
    slots = _tensor_slots(s, dtype)
    if not slots or len(slots) > 3:
        return None
    combos = list(itertools.product(_points(s, dtype), repeat=len(slots)))
    return _rebuilt(s, slots, [list(c) for c in zip(*combos, strict=True)])


def zero_d(s: SampleInput, dtype: torch.dtype) -> SampleInput | None:
    """Every tensor argument 0-d (the first combination of points that is not all zeros)."""
    slots = _tensor_slots(s, dtype)
    if not slots or len(slots) > 3:
        return None
    points = _points(s, dtype)
    value = points[2] if len(points) > 2 else points[-1]  # 1 (1.0, or True)
    return _rebuilt(s, slots, [value] * len(slots))


def _first_line(e: BaseException) -> str:
    return (str(e).splitlines() or [""])[0].replace("tapegrad", "torch")


def check(op, fn, s: SampleInput, dtype: torch.dtype) -> str | None:
    """None when torch and tapegrad agree on ``s``, else what differs."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            op.op(s.input, *s.args, **s.kwargs)
        except Exception as theirs:  # noqa: BLE001 - torch's exception is the expectation
            conv = h.Converter()
            try:
                fn(conv(s.input), *conv(tuple(s.args)), **conv(dict(s.kwargs)))
            except Exception as ours:  # noqa: BLE001
                if (type(ours).__name__, _first_line(ours)) == (
                        type(theirs).__name__, _first_line(theirs)):
                    return None
                return (f"torch raises {type(theirs).__name__}: {_first_line(theirs)}; "
                        f"tapegrad {type(ours).__name__}: {_first_line(ours)}")
            return f"torch raises {type(theirs).__name__}: {_first_line(theirs)}; tapegrad not"
    try:
        h.run_sample(op, fn, s, dtype, gradgrad=True)
    except h.UnsupportedSample:
        return None
    except Exception as e:  # noqa: BLE001 - any difference or tapegrad error is a verdict
        return f"{type(e).__name__}: {str(e)[:400]}"
    return None


def _entries() -> list:
    return [op for op in h.in_scope_entries()
            if type(op).__name__ in ("UnaryUfuncInfo", "BinaryUfuncInfo") or op.name in EXTRA]


ENTRIES = _entries()


def _failures(op, dtype: torch.dtype) -> list[str]:
    fn = h.resolve(op)
    if fn is None or dtype not in op.supported_dtypes("cpu"):
        return []
    if not (dtype.is_floating_point or dtype == torch.bool) and (
            h.entry_id(op) in SKIP_INT_EXTREMES):
        return []
    try:
        samples = h.samples(op, dtype, None)
    except Exception:  # noqa: BLE001 - torch's generator failing is torch's problem
        return []
    failures, seen = [], set()
    for n, s in enumerate(samples):
        call = grid(s, dtype)
        if call is None:
            continue
        key = (len(_tensor_slots(s, dtype)), repr([a for a in s.args
                                                   if not isinstance(a, torch.Tensor)]),
               repr(sorted(s.kwargs.items())))
        if key in seen:
            continue
        seen.add(key)
        for kind, variant in (("grid", call), ("0-d", zero_d(s, dtype))):
            why = check(op, fn, variant, dtype)
            if why:
                failures.append(f"sample {n} ({kind}): {why}")
        if len(seen) >= SAMPLES:
            break
    return failures


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).rsplit(".", 1)[-1])
@pytest.mark.parametrize("op", ENTRIES, ids=h.entry_id)
def test_boundary_values(op, dtype) -> None:
    name = str(dtype).rsplit(".", 1)[-1]
    failures = _failures(op, dtype)
    known = KNOWN.get((h.entry_id(op), name))
    if known:
        assert failures, f"listed in KNOWN ({known}) but passes: take it off the list"
        pytest.xfail(known)
    assert not failures, "\n".join(failures[:4])


def test_known_names_real_entries() -> None:
    ids = {h.entry_id(op) for op in ENTRIES}
    assert not {e for e, _ in KNOWN} - ids
    assert not set(SKIP_INT_EXTREMES) - ids
