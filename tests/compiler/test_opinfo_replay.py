"""Every op of torch's OpInfo database, compiled: each replay equals eager execution bit for bit.

The property test of the compiler over the whole op surface. For every in-scope entry that
tapegrad passes (tests/ops/test_opinfo.py) and that differentiates at float32, the first two
samples become a small step: call the op, weight each differentiable output by a function of
its own values, ``backward``, return the outputs (under ``no_grad``: the forward alone). The
step is compiled and called four times (two captures, then two replays) on inputs whose float
values change a little from call to call (so a value the capture froze as a constant shows: an
argmax, a mask, a sort order), and an uncompiled twin runs on the same inputs: outputs, their
dtypes and every input's gradient must be identical, bit for bit, NaNs included. A step the
compiler gives back to eager code (a graph break, a path that changed) passes too: its results
are eager's.

``opinfo_replay_expected_failures.txt`` lists the entries that do not pass yet, each with its
reason (``name (no_grad)`` for the inference run); strictly: a listed entry that passes fails
its test, to be taken off the list.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

import opinfo_harness as h  # noqa: E402
import torch  # noqa: E402

import tapegrad  # noqa: E402

HERE = Path(__file__).resolve().parent
EXPECTED_FILE = HERE / "opinfo_replay_expected_failures.txt"
EXPECTED = h.read_list(EXPECTED_FILE)
OP_FAILURES = h.read_list(h.EXPECTED_FAILURES_FILE)

CALLS = 4  # two captures, two replays
SAMPLES = 2


def _entries() -> list:
    """In-scope entries that tapegrad passes and that differentiate at float32."""
    out = []
    for op in h.in_scope_entries():
        if h.entry_id(op) in OP_FAILURES or not op.supports_autograd:
            continue
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        out.append(op)
    return out


ENTRIES = _entries()


class _Slot:
    """Where the step's i-th tensor argument goes in a sample's structure."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


def _template(x, tensors: list):
    """The sample's structure with each tapegrad tensor replaced by a ``_Slot``."""
    if isinstance(x, tapegrad.Tensor):
        tensors.append(x)
        return _Slot(len(tensors) - 1)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_template(v, tensors) for v in x)
    if isinstance(x, dict):
        return {k: _template(v, tensors) for k, v in x.items()}
    return x


def _fill(x, ts: tuple):
    if isinstance(x, _Slot):
        return ts[x.i]
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_fill(v, ts) for v in x)
    if isinstance(x, dict):
        return {k: _fill(v, ts) for k, v in x.items()}
    return x


def _inputs(tensors: list, call: int) -> list:
    """Fresh leaf tensors for one call: float values moved by up to ``call`` percent (the
    same multipliers on both sides; signs, and so most ops' domains, are kept)."""
    out = []
    for j, t in enumerate(tensors):
        a = t._data
        if a.dtype.kind == "f" and a.size:
            u = np.random.default_rng(1000 * j + call).uniform(-1, 1, a.shape)
            a = (a * (1 + 0.01 * call * u)).astype(a.dtype)
        x = tapegrad.from_numpy(np.array(a, copy=True))
        if t.requires_grad:
            x.requires_grad_(True)
        out.append(x)
    return out


def _make_step(fn, template):
    def step(*ts):
        a, args, kwargs = _fill(template, ts)
        out = fn(a, *args, **kwargs)
        outs = [o for o in h.flatten(out) if isinstance(o, tapegrad.Tensor)]
        diff = [o for o in outs if o.requires_grad]
        if diff:
            loss = sum((o * o.detach().tanh()).sum() for o in diff)
            loss.backward()
        return [o.detach() for o in outs]

    return step


def _same(a, b, what: str) -> None:
    if a is None or b is None:
        assert a is None and b is None, f"{what}: one side is None"
        return
    x, y = a._data, b._data
    assert x.dtype == y.dtype and x.shape == y.shape, (
        f"{what}: {x.dtype}{x.shape} vs eager {y.dtype}{y.shape}")
    assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes(), (
        f"{what}: values differ from eager")


def _run(op, grad: bool = True) -> tuple[int, list[str]]:
    """Compile and compare every sample of ``op``, with grad mode on (forward and backward)
    or off (inference: forward only); (samples replayed, failures)."""
    fn = h.resolve(op)
    if fn is None:
        return 0, []
    failures: list[str] = []
    replayed = 0
    for k, s in enumerate(h.samples(op, torch.float32, SAMPLES)):
        try:
            conv = h.Converter()
            sample = (conv(s.input), conv(tuple(s.args)), conv(dict(s.kwargs)))
        except h.UnsupportedSample:
            continue
        tensors: list = []
        template = _template(sample, tensors)
        compiled = tapegrad.compile(_make_step(fn, template))
        eager_step = _make_step(fn, template)
        for call in range(CALLS):
            mine, twin = _inputs(tensors, call), _inputs(tensors, call)
            tapegrad.manual_seed(call)
            try:
                with tapegrad.set_grad_enabled(grad):
                    want = eager_step(*twin)
            except Exception as e:  # eager rejects these values: compiled must reject them too
                tapegrad.manual_seed(call)
                with pytest.raises(type(e)), tapegrad.set_grad_enabled(grad):
                    compiled(*mine)
                continue
            tapegrad.manual_seed(call)
            try:
                with tapegrad.set_grad_enabled(grad):
                    got = compiled(*mine)
                assert len(got) == len(want), "a different number of outputs"
                for i, (g, w) in enumerate(zip(got, want, strict=True)):
                    _same(g, w, f"output[{i}]")
                for i, (m, t) in enumerate(zip(mine, twin, strict=True)):
                    _same(m.grad, t.grad, f"grad of input {i}")
            except Exception as e:  # noqa: BLE001 - every failure is reported with its sample
                failures.append(f"sample {k}, call {call}: {type(e).__name__}: {e}"[:300])
                break
        entry = compiled.entries[0] if compiled.entries else None
        replayed += entry is not None and entry.program is not None
    return replayed, failures


@pytest.mark.parametrize("grad", [True, False], ids=["grad", "no_grad"])
@pytest.mark.parametrize("op", ENTRIES, ids=h.entry_id)
def test_compiled_op_replays_as_eager(op, grad) -> None:
    eid = h.entry_id(op)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, failures = _run(op, grad)
    listed = EXPECTED.get(eid if grad else f"{eid} (no_grad)")
    if listed is None:
        assert not failures, f"{eid}: " + "\n".join(failures)
    elif not failures:
        pytest.fail(f"{eid} is listed in {EXPECTED_FILE.name} ({listed}) but passes: take it "
                    "off the list", pytrace=False)
    else:
        pytest.xfail(f"{listed} | {failures[0]}")


def test_list_names_real_entries() -> None:
    ids = {h.entry_id(op) for op in ENTRIES}
    stale = sorted(e for e in EXPECTED if e.removesuffix(" (no_grad)") not in ids)
    assert not stale, f"not entries of this test: {stale}"
