"""torch.compile's ``dynamic=``, ``mode=`` and ``fullgraph=`` in tapegrad: checked as torch
checks them, and what each does (``tapegrad/_compile.py``): every mode captures each new shape,
``fullgraph=True`` makes a graph break torch's ``Unsupported`` error."""

from __future__ import annotations

import warnings

import pytest
from torchcompare import raised

import tapegrad as torch
from tapegrad import nn
from tapegrad.compiler import Unsupported


def test_dynamic_and_mode_checked_as_torch(compare):
    def f(x):
        return x + 1

    def scenario(L):
        with warnings.catch_warnings():  # torch's first inductor import warns (once)
            warnings.simplefilter("ignore", DeprecationWarning)
            return checks(L)

    def checks(L):
        m = L.nn.Linear(2, 2)
        out = [raised(lambda d=d: L.compile(f, dynamic=d, backend="eager")) for d in ("yes", 1, 0)]
        out += [raised(lambda: m.compile(mode="bogus")),
                raised(lambda: m.compile(dynamic="no")),
                callable(L.compile(dynamic=2))]  # (the decorator form checks later)
        for d in (None, False, True):
            out.append(L.compile(f, dynamic=d, backend="eager")(L.ones(2)))
            m.compile(dynamic=d, mode="reduce-overhead", backend="eager")
            out.append(m(L.ones(2)).shape)
        return out

    compare(scenario)


@pytest.mark.parametrize("dynamic", [None, False, True])
def test_every_dynamic_mode_recaptures_a_new_shape(dynamic):
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(4, 3), nn.Tanh())
    c = torch.compile(m, dynamic=dynamic, mode="max-autotune")
    for batch in (2, 5, 3):
        for _ in range(3):
            x = torch.randn(batch, 4)
            y = c(x)
            assert torch.equal(y, m(x))
            y.sum().backward()
    entries = c.__dict__["_compiled"].entries
    assert [e.key[2][0] for e in entries] == [(2, 4), (5, 4), (3, 4)]
    assert all(e.program is not None and e.backward is not None for e in entries)
    assert c.__dict__["_compiled"].recompiles == 2


def test_fullgraph_graph_break_raises_unsupported():
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            h = self.lin(x)
            return h if h.sum().item() > 0 else -h

    m = Branchy()
    with pytest.raises(Unsupported, match="Tensor.item"):
        torch.compile(m, fullgraph=True)(torch.randn(2, 3))
    assert issubclass(Unsupported, RuntimeError) and Unsupported.__name__ == "Unsupported"
    m.compile(fullgraph=True)
    with pytest.raises(Unsupported):
        m(torch.randn(2, 3))
    m.compile()  # without fullgraph: the break runs eagerly
    x = torch.randn(2, 3)
    assert torch.equal(m(x), m._call_impl(x))
    m.compile(disable=True)
    assert m._compiled_call_impl is None
