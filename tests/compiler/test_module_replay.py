"""Every layer of the nn catalogue (tests/nn/test_modules.py), compiled as ``torch.compile(model)``
is used in an eager training loop: each call equals the eager module's, bit for bit.

Two copies of a layer start from the same seed. One is called eagerly, the other through
``torch.compile``; each call gets new inputs (the same values on both sides), a backward with
the same cotangent follows, and the outputs, every parameter's and input's gradient (summed
over the calls, as a training loop without ``zero_grad`` sums them) and every buffer (batch
norm's running statistics) must be the same bits. The first two calls capture, the later ones
replay the forward program and, at backward, its captured backward. The same again in
evaluation mode under ``no_grad``, where only the forward is replayed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "nn"))

from test_modules import LAYERS  # noqa: E402

import tapegrad as torch  # noqa: E402

RECURRENT = [
    ("LSTM", lambda L: L.nn.LSTM(4, 5, batch_first=True), [(2, 3, 4)]),
    ("GRU-2layer", lambda L: L.nn.GRU(4, 5, num_layers=2), [(3, 2, 4)]),
    ("RNN-bidirectional", lambda L: L.nn.RNN(4, 3, bidirectional=True), [(3, 2, 4)]),
    ("MultiheadAttention", lambda L: L.nn.MultiheadAttention(8, 2, batch_first=True),
     [(2, 3, 8), (2, 4, 8), (2, 4, 8)]),
]
CALLS = 5
# layers whose calls run eagerly, and why: the output is the input itself (a leaf, or made
# before the call); a cumulative average (momentum=None) reads the batch count into Python
EAGER = {("Identity", True), ("Identity", False), ("Dropout-eval", True),
         ("Dropout-eval", False), ("BatchNorm1d-3d", True)}


def _inputs(spec, call: int, grad: bool) -> list:
    rng = np.random.default_rng(100 + call)
    if spec == "idx":
        return [torch.tensor(rng.integers(0, 10, (2, 3)))]
    return [torch.tensor(rng.standard_normal(s).astype(np.float32), requires_grad=grad)
            for s in spec]


def _first(y):
    return y[0] if isinstance(y, tuple) else y


def _same(a, b, what: str) -> None:
    if a is None or b is None:
        assert a is None and b is None, what
        return
    x, y = a._data, b._data
    assert x.dtype == y.dtype and x.shape == y.shape, what
    assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes(), what


def _state(m) -> list:
    return ([p.grad for p in m.parameters()] + list(m.parameters())
            + [b for b in m.buffers()])


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval-no_grad"])
@pytest.mark.parametrize("name, ctor, spec", LAYERS + RECURRENT,
                         ids=[c[0] for c in LAYERS + RECURRENT])
def test_compiled_layer_calls_equal_eager(name, ctor, spec, train) -> None:
    torch.manual_seed(0)
    eager = ctor(torch)
    torch.manual_seed(0)
    compiled_module = ctor(torch)
    eager.train(train and eager.training)
    compiled_module.train(eager.training)
    c = torch.compile(compiled_module)
    for call in range(CALLS):
        a, b = _inputs(spec, call, train), _inputs(spec, call, train)
        if train:
            want, got = _first(eager(*a)), _first(c(*b))
            cot = torch.tensor(np.random.default_rng(call).standard_normal(
                tuple(want.shape)).astype(np.float32))
            want.backward(cot)
            got.backward(cot)
        else:
            with torch.no_grad():
                want, got = _first(eager(*a)), _first(c(*b))
        _same(got, want, f"call {call}: output")
        for i, (x, y) in enumerate(zip(b, a, strict=True)):
            _same(x.grad, y.grad, f"call {call}: grad of input {i}")
        for i, (x, y) in enumerate(zip(_state(compiled_module), _state(eager), strict=True)):
            _same(x, y, f"call {call}: parameter, gradient or buffer {i}")
    (entry,) = c.__dict__["_compiled"].entries
    if (name, train) in EAGER:
        assert entry.eager is not None
    else:
        assert entry.program is not None, entry.eager
