"""nn.RNN, nn.GRU, nn.LSTM and the cells under CPU autocast (bfloat16 and float16) and in the
low types themselves, against torch 2.13: every output's dtype, values within the low type's
tolerance, gradients reaching the float32 parameters in float32 (or the low type's parameters
in the low type), with batch_first, bidirectional, two layers and packed sequences.

torch's padded LSTM under autocast runs oneDNN's fused layer in the low type, which needs
AVX512-BF16/AMX instructions (without them torch raises); tapegrad takes torch's reference path
there, so the padded LSTM cases run torch with ``torch.backends.mkldnn`` disabled, which makes
torch take that path too (see nn/modules/rnn_stepwise.py).
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
import test_rnn as rnn_tests  # (its build(): the same module on both libraries)

import tapegrad

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.usefixtures("torch_one_thread"),
              pytest.mark.filterwarnings("ignore:LSTM with projections:UserWarning",
                                         "ignore:TF32 acceleration:UserWarning")]

LOWS = ("bfloat16", "float16")
# torch.testing's default tolerances for the low types (rtol, atol)
TOL = {"bfloat16": (1.6e-2, 1e-5), "float16": (1e-3, 1e-5)}




def build(cls: str, *args, **kwargs):
    """The same float32 module on both libraries (torch's initial weights copied)."""
    return rnn_tests.build(cls, *args, dtype="float32", **kwargs)


def flat(out):
    if hasattr(out, "batch_sizes"):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in flat(o)]
    return [out]


def as64(t):
    """A tensor of either library as float64 NumPy."""
    return np.asarray(t.detach().double().numpy())


def dtype_name(t):
    return str(t.dtype).rsplit(".", 1)[-1]


def close(ours, theirs, low, what, scale=1.0):
    """Within the low type's tolerance: relative to each value, and (for sums of many rounded
    terms, like gradients) to ``scale`` times the largest magnitude."""
    rtol, atol = TOL[low]
    a, b = as64(ours), as64(theirs)
    assert a.shape == b.shape, what
    bound = atol + rtol * np.abs(b) + rtol * scale * np.abs(b).max(initial=0.0)
    bad = np.abs(a - b) > bound
    assert not bad.any(), f"{what}: {int(bad.sum())} of {a.size} differ, max {np.abs(a - b).max()}"


def both(theirs_fn, ours_fn, low, autocast, mkldnn_off=False):
    """Run each library's scenario (under autocast to ``low`` if asked)."""
    t_ctx = torch.autocast("cpu", dtype=getattr(torch, low)) if autocast else \
        contextlib.nullcontext()
    o_ctx = tapegrad.autocast("cpu", dtype=getattr(tapegrad, low)) if autocast else \
        contextlib.nullcontext()
    off = torch.backends.mkldnn.flags(enabled=False) if mkldnn_off else \
        contextlib.nullcontext()
    with off, t_ctx:
        t = theirs_fn()
    with o_ctx:
        o = ours_fn()
    return t, o


def compare(t_out, o_out, t_leaves, o_leaves, low, grad_dtype):
    """Outputs (dtype and values), then the gradients of a weighted sum of every output."""
    ts, os = flat(t_out), flat(o_out)
    assert [dtype_name(x) for x in os] == [dtype_name(x) for x in ts]
    for k, (o, t) in enumerate(zip(os, ts, strict=True)):
        close(o, t, low, f"output {k}")
    rng = np.random.default_rng(1)
    t_loss = o_loss = 0
    for o, t in zip(os, ts, strict=True):
        w = rng.standard_normal(tuple(t.shape)).astype(np.float32)
        t_loss = t_loss + (t.float() * torch.from_numpy(w)).sum()
        o_loss = o_loss + (o.float() * tapegrad.tensor(w)).sum()
    t_loss.backward()
    o_loss.backward()
    for k, (o, t) in enumerate(zip(o_leaves, t_leaves, strict=True)):
        assert dtype_name(o.grad) == dtype_name(t.grad) == grad_dtype, f"gradient {k}"
        close(o.grad, t.grad, low, f"gradient {k}", scale=1.0)


LAYERS = [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "batch_first": True}),
    ("GRU", {}), ("GRU", {"batch_first": True}),
    ("LSTM", {}), ("LSTM", {"proj_size": 3}),
    ("RNN", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
]


def _layer_case(cls, kw, low, autocast, packed, given_state):
    theirs, ours = build(cls, 4, 6, **kw)
    if not autocast:
        theirs.to(getattr(torch, low))
        ours.to(getattr(tapegrad, low))
    rng = np.random.default_rng(0)
    dtype = np.float32
    steps, batch = 5, 3
    shape = (batch, steps, 4) if kw.get("batch_first") else (steps, batch, 4)
    x = rng.standard_normal(shape).astype(dtype)
    tx = torch.tensor(x, requires_grad=True)
    ox = tapegrad.tensor(x, requires_grad=True)
    t_in, o_in = tx, ox
    if not autocast:
        t_in, o_in = tx.to(getattr(torch, low)), ox.to(getattr(tapegrad, low))
    dirs = 2 if kw.get("bidirectional") else 1
    n = kw.get("num_layers", 1) * dirs
    hid = kw.get("proj_size") or 6
    t_state = o_state = None
    leaves_t, leaves_o = [tx], [ox]
    if given_state:
        h = rng.standard_normal((n, batch, hid)).astype(dtype)
        c = rng.standard_normal((n, batch, 6)).astype(dtype)
        th, oh = torch.tensor(h, requires_grad=True), tapegrad.tensor(h, requires_grad=True)
        tc, oc = torch.tensor(c, requires_grad=True), tapegrad.tensor(c, requires_grad=True)
        conv_t = (lambda v: v) if autocast else (lambda v: v.to(getattr(torch, low)))
        conv_o = (lambda v: v) if autocast else (lambda v: v.to(getattr(tapegrad, low)))
        if cls == "LSTM":
            t_state, o_state = (conv_t(th), conv_t(tc)), (conv_o(oh), conv_o(oc))
            leaves_t += [th, tc]
            leaves_o += [oh, oc]
        else:
            t_state, o_state = conv_t(th), conv_o(oh)
            leaves_t.append(th)
            leaves_o.append(oh)
    if packed:
        lengths = [5, 2, 4]
        t_pack = torch.nn.utils.rnn.pack_padded_sequence(
            t_in, lengths, batch_first=kw.get("batch_first", False), enforce_sorted=False)
        o_pack = tapegrad.nn.utils.rnn.pack_padded_sequence(
            o_in, lengths, batch_first=kw.get("batch_first", False), enforce_sorted=False)
        t_run, o_run = (lambda: theirs(t_pack, t_state)), (lambda: ours(o_pack, o_state))
    else:
        t_run, o_run = (lambda: theirs(t_in, t_state)), (lambda: ours(o_in, o_state))
    t_out, o_out = both(t_run, o_run, low, autocast, mkldnn_off=cls == "LSTM")
    params_t = [p for _, p in theirs.named_parameters()]
    params_o = [p for _, p in ours.named_parameters()]
    grad_dtype = "float32" if autocast else low
    if not autocast:  # the inputs' leaves are float32, reached through a cast
        compare(t_out, o_out, params_t, params_o, low, grad_dtype)
        assert dtype_name(ox.grad) == dtype_name(tx.grad) == "float32"
        close(ox.grad, tx.grad, low, "input gradient", scale=1.0)
    else:
        compare(t_out, o_out, params_t + leaves_t, params_o + leaves_o, low, grad_dtype)


@pytest.mark.parametrize("low", LOWS)
@pytest.mark.parametrize("cls,kw", LAYERS, ids=[f"{c}-{'-'.join(k)}" for c, k in LAYERS])
def test_layer_under_autocast(cls, kw, low):
    _layer_case(cls, kw, low, autocast=True, packed=False, given_state=False)


@pytest.mark.parametrize("low", LOWS)
@pytest.mark.parametrize("cls,kw", [("RNN", {}), ("GRU", {"bidirectional": True}),
                                    ("LSTM", {"bidirectional": True}),
                                    ("LSTM", {"proj_size": 3, "batch_first": True})])
def test_packed_and_given_state_under_autocast(cls, kw, low):
    _layer_case(cls, kw, low, autocast=True, packed=True, given_state=True)


@pytest.mark.parametrize("low", LOWS)
@pytest.mark.parametrize("cls,kw", [("RNN", {"bidirectional": True}), ("GRU", {}),
                                    ("LSTM", {"num_layers": 2}), ("LSTM", {"proj_size": 3})])
@pytest.mark.parametrize("packed", [False, True])
def test_layer_in_the_low_type(cls, kw, low, packed):
    """``module.to(low)`` with an input of that type, no autocast."""
    _layer_case(cls, kw, low, autocast=False, packed=packed, given_state=True)


CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("GRUCell", {}),
         ("LSTMCell", {})]


@pytest.mark.parametrize("low", LOWS)
@pytest.mark.parametrize("autocast", [True, False])
@pytest.mark.parametrize("cls,kw", CELLS, ids=[c + "-".join(k) for c, k in CELLS])
def test_cell_loop(cls, kw, low, autocast):
    """Three steps of a cell, the state carried over (default zeros first), with gradients;
    under autocast or with the cell and input in the low type."""
    theirs, ours = build(cls, 4, 5, **kw)
    if not autocast:
        theirs.to(getattr(torch, low))
        ours.to(getattr(tapegrad, low))
    x = np.random.default_rng(0).standard_normal((3, 2, 4)).astype(np.float32)
    tx, ox = torch.tensor(x, requires_grad=True), tapegrad.tensor(x, requires_grad=True)

    def loop(module, xs, lib):
        if not autocast:
            xs = xs.to(getattr(lib, low))
        state, outs = None, []
        for t in range(3):
            state = module(xs[t], state)
            outs.append(state)
        return outs

    t_out, o_out = both(lambda: loop(theirs, tx, torch), lambda: loop(ours, ox, tapegrad), low,
                        autocast)
    grad_dtype = "float32" if autocast else low
    compare(t_out, o_out, list(theirs.parameters()), list(ours.parameters()), low, grad_dtype)
    if cls != "LSTMCell":
        assert o_out[-1].grad_fn.name() == t_out[-1].grad_fn.name()
    close(ox.grad, tx.grad, low, "input gradient", scale=1.0)


def test_autocast_skips_the_input_dtype_check_as_torch():
    """Under autocast a low-precision input meets float32 weights without torch's ValueError."""
    theirs, ours = build("GRU", 4, 5)
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    t_out, o_out = both(lambda: theirs(torch.tensor(x).bfloat16())[0],
                        lambda: ours(tapegrad.tensor(x).bfloat16())[0], "bfloat16", True)
    assert dtype_name(o_out) == dtype_name(t_out)
    close(o_out, t_out, "bfloat16", "output")
    with pytest.raises(ValueError, match=r"RNN input dtype \(torch.bfloat16\) does not match"):
        ours(tapegrad.tensor(x).bfloat16())


def test_float32_keeps_the_fused_layer():
    """Without autocast, float32 layers still run as one node per layer and direction."""
    _, ours = build("GRU", 4, 5)
    out, _ = ours(tapegrad.randn(3, 2, 4))
    assert out.grad_fn.name() == "GruLayerBackward0"
