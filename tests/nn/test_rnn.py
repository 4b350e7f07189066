"""nn.RNN, nn.LSTM, nn.GRU and the cells against torch: same weights (copied), same inputs;
outputs, final states and every gradient, for each option; parameter names, shapes and the
seeded initialisation bit for bit; torch's error messages; second derivatives."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from cpu_kernels import VECTORIZED, assert_draws

import tapegrad

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.usefixtures("torch_one_thread"),
              pytest.mark.filterwarnings("ignore:LSTM with projections:UserWarning")]



TOL = {"float64": dict(rtol=1e-10, atol=1e-12), "float32": dict(rtol=2e-5, atol=2e-6)}


def build(cls: str, *args, dtype="float64", seed=0, **kwargs):
    """The same layer on both libraries, torch's initial weights copied into tapegrad's."""
    torch.manual_seed(seed)
    theirs = getattr(torch.nn, cls)(*args, **kwargs).to(getattr(torch, dtype))
    ours = getattr(tapegrad.nn, cls)(*args, **kwargs).to(getattr(tapegrad, dtype))
    with tapegrad.no_grad():
        for (n1, p1), (n2, p2) in zip(theirs.named_parameters(), ours.named_parameters(),
                                      strict=True):
            assert n1 == n2
            p2.copy_(tapegrad.tensor(p1.detach().numpy()))
    return theirs, ours


def pair(array, requires_grad=True):
    """A torch tensor and a tapegrad tensor with the same values."""
    a = torch.tensor(array, requires_grad=requires_grad)
    b = tapegrad.tensor(array, requires_grad=requires_grad)
    return a, b


def flat(out):
    """The tensors of a layer's result, in order ((out, h) or (out, (h, c)); PackedSequence)."""
    if isinstance(out, (tuple, list)) and not hasattr(out, "batch_sizes"):
        return [t for o in out for t in flat(o)]
    if hasattr(out, "batch_sizes"):
        return [out.data]
    return [out]


def check(theirs_out, ours_out, dtype):
    t, o = flat(theirs_out), flat(ours_out)
    assert len(t) == len(o)
    for a, b in zip(t, o, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), **TOL[dtype])
    return t, o


def backward_both(t, o, rng):
    """Backpropagate the same random weighting of every output on both libraries."""
    loss_t = 0
    loss_o = 0
    for a, b in zip(t, o, strict=True):
        w = rng.standard_normal(tuple(a.shape)).astype(a.detach().numpy().dtype)
        loss_t = loss_t + (a * torch.tensor(w)).sum()
        loss_o = loss_o + (b * tapegrad.tensor(w)).sum()
    loss_t.backward()
    loss_o.backward()


def check_grads(theirs, ours, leaves, dtype):
    for (n1, p1), (_, p2) in zip(theirs.named_parameters(), ours.named_parameters(),
                                  strict=True):
        np.testing.assert_allclose(p2.grad.numpy(), p1.grad.numpy(), err_msg=n1, **TOL[dtype])
    for a, b in leaves:
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), **TOL[dtype])


def states(rng, cls, layers, dirs, batch, hidden, proj, dtype, unbatched=False):
    """Initial states for both libraries: a pair for h (and one for c with an LSTM)."""
    lead = (layers * dirs,) if unbatched else (layers * dirs, batch)
    h = pair(rng.standard_normal(lead + (proj or hidden,)).astype(dtype))
    if cls != "LSTM":
        return [h], h[0], h[1]
    c = pair(rng.standard_normal(lead + (hidden,)).astype(dtype))
    return [h, c], (h[0], c[0]), (h[1], c[1])


LAYER_CASES = [
    (cls, layers, bi, proj, bias, bf)
    for cls, layers, bi, proj, bias, bf in itertools.product(
        ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"], [1, 2], [False, True], [0, 2], [True, False],
        [False, True])
    if not (proj and cls != "LSTM")
]


def make(cls, *args, **kwargs):
    if cls.startswith("RNN_"):
        kwargs["nonlinearity"] = cls[4:].lower()
        cls = "RNN"
    return build(cls, *args, **kwargs)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("cls,layers,bi,proj,bias,bf", LAYER_CASES)
def test_layer_matches_torch(cls, layers, bi, proj, bias, bf, dtype):
    kw = dict(num_layers=layers, bidirectional=bi, bias=bias, batch_first=bf)
    if proj:
        kw["proj_size"] = proj
    theirs, ours = make(cls, 3, 4, dtype=dtype, **kw)
    rng = np.random.default_rng(layers * 16 + bi * 8 + proj + bias * 2 + bf)
    x = rng.standard_normal((2, 5, 3) if bf else (5, 2, 3)).astype(dtype)
    xt, xo = pair(x)
    leaves, st, so = states(rng, cls[:4].rstrip("_"), layers, 2 if bi else 1, 2, 4, proj, dtype)
    t, o = check(theirs(xt, st), ours(xo, so), dtype)
    backward_both(t, o, rng)
    check_grads(theirs, ours, [(xt, xo)] + leaves, dtype)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN_TANH"])
def test_default_state_and_only_some_outputs(cls):
    theirs, ours = make(cls, 3, 4, num_layers=2)
    rng = np.random.default_rng(1)
    xt, xo = pair(rng.standard_normal((4, 2, 3)))
    rt, ro = theirs(xt), ours(xo)
    check(rt, ro, "float64")
    # a gradient through the final state only (the output gets none)
    ht = rt[1][0] if cls == "LSTM" else rt[1]
    ho = ro[1][0] if cls == "LSTM" else ro[1]
    ht.sum().backward()
    ho.sum().backward()
    check_grads(theirs, ours, [(xt, xo)], "float64")


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN_TANH"])
@pytest.mark.parametrize("bf", [False, True])
def test_unbatched(cls, bf):
    theirs, ours = make(cls, 3, 4, num_layers=2, bidirectional=True, batch_first=bf)
    rng = np.random.default_rng(2)
    xt, xo = pair(rng.standard_normal((5, 3)))
    check(theirs(xt), ours(xo), "float64")
    leaves, st, so = states(rng, cls[:4].rstrip("_"), 2, 2, 1, 4, 0, "float64", unbatched=True)
    t, o = check(theirs(xt, st), ours(xo, so), "float64")
    assert tuple(o[1].shape) == (4, 4)
    backward_both(t, o, rng)
    check_grads(theirs, ours, [(xt, xo)] + leaves, "float64")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN_TANH"])
@pytest.mark.parametrize("bi", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_input(cls, bi, enforce_sorted, dtype):
    P1, P2 = torch.nn.utils.rnn, tapegrad.nn.utils.rnn
    kw = dict(num_layers=2, bidirectional=bi)
    if cls == "LSTM" and bi:
        kw["proj_size"] = 3
    theirs, ours = make(cls, 3, 4, dtype=dtype, **kw)
    rng = np.random.default_rng(3)
    lengths = [5, 4, 4, 2] if enforce_sorted else [2, 5, 4, 4]
    xt, xo = pair(rng.standard_normal((5, 4, 3)).astype(dtype))
    pt = P1.pack_padded_sequence(xt, lengths, enforce_sorted=enforce_sorted)
    po = P2.pack_padded_sequence(xo, lengths, enforce_sorted=enforce_sorted)
    leaves, st, so = states(rng, cls[:4].rstrip("_"), 2, 2 if bi else 1, 4, 4,
                            kw.get("proj_size", 0), dtype)
    rt, ro = theirs(pt, st), ours(po, so)
    assert type(ro[0]) is P2.PackedSequence
    np.testing.assert_array_equal(ro[0].batch_sizes.numpy(), rt[0].batch_sizes.numpy())
    for a, b in ((rt[0].sorted_indices, ro[0].sorted_indices),
                 (rt[0].unsorted_indices, ro[0].unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(b.numpy(), a.numpy())
    t, o = check(rt, ro, dtype)
    pad_t, len_t = P1.pad_packed_sequence(rt[0], batch_first=True, total_length=6)
    pad_o, len_o = P2.pad_packed_sequence(ro[0], batch_first=True, total_length=6)
    np.testing.assert_array_equal(len_o.numpy(), len_t.numpy())
    np.testing.assert_allclose(pad_o.detach().numpy(), pad_t.detach().numpy(), **TOL[dtype])
    backward_both(t + [pad_t], o + [pad_o], rng)
    check_grads(theirs, ours, [(xt, xo)] + leaves, dtype)


CELL_CASES = [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}),
              ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {"bias": False}),
              ("GRUCell", {"bias": False}), ("RNNCell", {"bias": False})]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("cls,kw", CELL_CASES)
def test_cell_loop_matches_torch(cls, kw, dtype):
    theirs, ours = build(cls, 3, 4, dtype=dtype, **kw)
    rng = np.random.default_rng(4)
    xt, xo = pair(rng.standard_normal((6, 2, 3)).astype(dtype))
    ht, ho = pair(rng.standard_normal((2, 4)).astype(dtype))
    st = (ht, ht * 0.5) if cls == "LSTMCell" else ht
    so = (ho, ho * 0.5) if cls == "LSTMCell" else ho
    outs_t, outs_o = [], []
    for i in range(6):
        st, so = theirs(xt[i], st), ours(xo[i], so)
        outs_t += flat(st)
        outs_o += flat(so)
    t, o = check(outs_t, outs_o, dtype)
    backward_both(t, o, rng)
    check_grads(theirs, ours, [(xt, xo), (ht, ho)], dtype)
    # unbatched, without a state
    check(theirs(xt[0, 0]), ours(xo[0, 0]), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN_TANH"])
@pytest.mark.parametrize("bi", [False, True])
def test_dropout_between_layers_draws_as_torch(cls, bi, dtype):
    theirs, ours = make(cls, 3, 4, num_layers=3, dropout=0.4, bidirectional=bi, dtype=dtype)
    rng = np.random.default_rng(5)
    xt, xo = pair(rng.standard_normal((5, 2, 3)).astype(dtype))
    torch.manual_seed(7)
    tapegrad.manual_seed(7)
    t, o = check(theirs(xt), ours(xo), dtype)
    backward_both(t, o, rng)
    check_grads(theirs, ours, [(xt, xo)], dtype)
    assert torch.rand(1).item() == tapegrad.rand(1).item()  # the generators stay in step
    theirs.eval()
    ours.eval()
    check(theirs(xt), ours(xo), dtype)


INIT_CASES = [("LSTM", dict(num_layers=2, bidirectional=True, proj_size=3)),
              ("LSTM", dict(bias=False, proj_size=2)),
              ("GRU", dict(num_layers=2, bias=False, batch_first=True)),
              ("RNN", dict(nonlinearity="relu", dropout=0.5, num_layers=2)),
              ("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {"bias": False}),
              ("RNNCell", {"nonlinearity": "relu"})]


@pytest.mark.parametrize("cls,kw", INIT_CASES)
def test_parameters_init_and_repr_as_torch(cls, kw):
    torch.manual_seed(3)
    a = getattr(torch.nn, cls)(5, 6, **kw)
    tapegrad.manual_seed(3)
    b = getattr(tapegrad.nn, cls)(5, 6, **kw)
    assert [(n, tuple(p.shape)) for n, p in b.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in a.named_parameters()]
    for (n, p), (_, q) in zip(a.named_parameters(), b.named_parameters(), strict=True):
        assert q.dtype == tapegrad.float32
        assert_draws(q.detach().numpy(), p.detach().numpy(), n)  # (tests/cpu_kernels.py)
    assert repr(b) == repr(a)
    if not cls.endswith("Cell"):
        assert b._flat_weights_names == a._flat_weights_names
        assert [[tuple(w.shape) for w in ws] for ws in b.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in a.all_weights]
        assert all(w is getattr(b, n) for w, n in zip(b._flat_weights, b._flat_weights_names,
                                                      strict=True))
        b.flatten_parameters()
        assert torch.rand(1).item() == tapegrad.rand(1).item()


def test_flat_weights_follow_assignment_and_dtype_changes():
    m = tapegrad.nn.LSTM(3, 4)
    new = tapegrad.nn.Parameter(tapegrad.zeros(16, 3))
    m.weight_ih_l0 = new
    assert m._flat_weights[0] is new
    m.double()
    assert all(w.dtype == tapegrad.float64 for w in m._flat_weights)
    out, _ = m(tapegrad.randn(2, 1, 3, dtype=tapegrad.float64))
    assert out.dtype == tapegrad.float64


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e)
    return None


def both(scenario):
    a, b = raised(lambda: scenario(torch)), raised(lambda: scenario(tapegrad))
    assert a is not None
    assert b == a


ERRORS = [
    lambda L: L.nn.LSTM(3, 4)(L.randn(5, 2, 4)),
    lambda L: L.nn.LSTM(3, 4)(L.randn(5, 2, 3), (L.randn(1, 3, 4), L.randn(1, 2, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.randn(5, 2, 3), (L.randn(1, 2, 4), L.randn(1, 3, 4))),
    lambda L: L.nn.LSTM(3, 4, proj_size=2)(L.randn(5, 2, 3), (L.randn(1, 2, 4),
                                                              L.randn(1, 2, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.randn(5, 2, 3, 1)),
    lambda L: L.nn.LSTM(3, 4)(L.randn(5, 2, 3), (L.randn(2, 4), L.randn(2, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.randn(5, 3), (L.randn(1, 2, 4), L.randn(1, 2, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.randn(5, 2, 3, dtype=L.float64)),
    lambda L: L.nn.GRU(3, 4)(L.randn(5, 2, 3), L.randn(2, 2, 4)),
    lambda L: L.nn.GRU(3, 4)(L.randn(5, 2, 3), L.randn(2, 4)),
    lambda L: L.nn.GRU(3, 4)(L.randn(5, 3), L.randn(1, 2, 4)),
    lambda L: L.nn.GRU(3, 4)(L.randn(5)),
    lambda L: L.nn.RNN(3, 4)(L.randn(5)),
    lambda L: L.nn.RNN(3, 4)(L.randn(5, 2, 3), L.randn(1, 3, 4)),
    lambda L: L.nn.RNN(3, 4, proj_size=2),
    lambda L: L.nn.GRU(3, 4, proj_size=2),
    lambda L: L.nn.LSTM(3, 4, proj_size=4),
    lambda L: L.nn.LSTM(3, 4, proj_size=-1),
    lambda L: L.nn.LSTM(3, 4, dropout=2),
    lambda L: L.nn.LSTM(3, 4, dropout=True),
    lambda L: L.nn.LSTM(3, 4, bias=1),
    lambda L: L.nn.LSTM(3, 4, batch_first=None),
    lambda L: L.nn.LSTM(3.0, 4),
    lambda L: L.nn.LSTM(0, 4),
    lambda L: L.nn.LSTM(3, 0),
    lambda L: L.nn.LSTM(3, 4, num_layers=0),
    lambda L: L.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda L: L.nn.LSTMCell(3, 4)(L.randn(2, 5)),
    lambda L: L.nn.LSTMCell(3, 4)(L.randn(2, 3), (L.randn(2, 5), L.randn(2, 4))),
    lambda L: L.nn.LSTMCell(3, 4)(L.randn(2, 3), (L.randn(2, 4), L.randn(2, 5))),
    lambda L: L.nn.LSTMCell(3, 4)(L.randn(2, 3), (L.randn(3, 4), L.randn(3, 4))),
    lambda L: L.nn.LSTMCell(3, 4)(L.randn(2, 3), (L.randn(2, 4), L.randn(3, 4))),
    lambda L: L.nn.LSTMCell(3, 4)(L.randn(2, 2, 3)),
    lambda L: L.nn.LSTMCell(3, 4)(L.randn(2, 3), (L.randn(1, 2, 4), L.randn(2, 4))),
    lambda L: L.nn.GRUCell(3, 4)(L.randn(2, 3), L.randn(3, 4)),
    lambda L: L.nn.GRUCell(3, 4)(L.randn(2, 3), L.randn(2, 5)),
    lambda L: L.nn.GRUCell(3, 4)(L.randn(3), L.randn(2, 4)),
    lambda L: L.nn.GRUCell(3, 4)(L.randn(2, 3), L.randn(4)),
    lambda L: L.nn.GRUCell(3, 4)(L.randn(2, 3), L.randn(1, 2, 4)),
    lambda L: L.nn.RNNCell(3, 4)(L.randn(1, 2, 3)),
    lambda L: L.nn.GRU(3, 4)(L.randn(5, 2, 3), L.randn(1, 2, 4, dtype=L.float64)),
    lambda L: L.nn.GRU(3, 4)(L.randn(0, 2, 3)),
    lambda L: L.nn.GRUCell(3, 4)(L.randn(2, 3), L.randn(2, 4, dtype=L.float64)),
    lambda L: L.nn.LSTMCell(3, 4)(L.randn(2, 3, dtype=L.float64)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    with pytest.warns(None) if False else _quiet():
        both(ERRORS[k])


class _quiet:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("ignore")

    def __exit__(self, *exc):
        self._w.__exit__(*exc)


def test_dropout_with_one_layer_warns_as_torch():
    with pytest.warns(UserWarning) as theirs:
        torch.nn.LSTM(3, 4, dropout=0.5)
    with pytest.warns(UserWarning) as ours:
        tapegrad.nn.LSTM(3, 4, dropout=0.5)
    assert str(ours[0].message) == str(theirs[0].message)


def test_node_names():
    lstm = tapegrad.nn.LSTM(3, 4)
    x = tapegrad.randn(5, 2, 3, requires_grad=True)
    out, (h, c) = lstm(x)
    assert type(out.grad_fn).__name__ == "MkldnnRnnLayerBackward0"  # torch's, float32 LSTM
    assert type(h.grad_fn).__name__ == "StackBackward0"
    out, _ = tapegrad.nn.GRU(3, 4, bidirectional=True)(x)
    assert type(out.grad_fn).__name__ == "CatBackward0"


# (bidirectional LSTM and GRU layers: test_double_backward_matches_torch, much faster)
SECOND_ORDER = [("LSTM", dict(proj_size=1)), ("LSTM", {}), ("GRU", {}),
                ("RNN", dict(bidirectional=True)), ("RNN", dict(nonlinearity="relu"))]


@pytest.mark.parametrize("cls,kw", SECOND_ORDER)
def test_second_derivatives(cls, kw):
    """gradgradcheck through a small layer (float64), padded and packed: the input, the
    initial state and the recurrent weight."""
    from tapegrad.autograd import gradgradcheck

    tapegrad.manual_seed(0)
    m = getattr(tapegrad.nn, cls)(2, 2, **kw).double()
    w_hh = m.weight_hh_l0
    x = tapegrad.randn(2, 1, 2, dtype=tapegrad.float64, requires_grad=True)
    dirs = 2 if kw.get("bidirectional") else 1
    h0 = tapegrad.randn(dirs, 1, kw.get("proj_size", 2), dtype=tapegrad.float64,
                        requires_grad=True)

    def padded(x, h0, w):
        state = (h0, tapegrad.ones(dirs, 1, 2, dtype=h0.dtype)) if cls == "LSTM" else h0
        return tuple(flat(m(x, state)))

    def packed(x):
        p = tapegrad.nn.utils.rnn.pack_padded_sequence(x, [1, 2], enforce_sorted=False)
        return tuple(flat(m(p)))

    assert gradgradcheck(padded, (x, h0, w_hh))
    if kw.get("bidirectional") or kw.get("proj_size"):  # the packed paths, both directions
        xp = tapegrad.randn(2, 2, 2, dtype=tapegrad.float64, requires_grad=True)
        assert gradgradcheck(packed, (xp,))


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_double_backward_matches_torch(cls):
    """The gradient of a gradient's norm, against torch (float64: no oneDNN)."""
    theirs, ours = build(cls, 3, 4, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(6)
    xt, xo = pair(rng.standard_normal((4, 2, 3)))
    results = []
    for L, m, x in ((torch, theirs, xt), (tapegrad, ours, xo)):
        out, h = m(x)
        loss = (out * out).sum() + (h[0] if cls == "LSTM" else h).sum()
        (gx,) = L.autograd.grad(loss, (x,), create_graph=True)
        (gx * gx).sum().backward()
        results.append([x.grad.numpy()] + [p.grad.numpy() for p in m.parameters()])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-11)


def test_no_grad_records_nothing():
    m = tapegrad.nn.GRU(3, 4)
    with tapegrad.no_grad():
        out, h = m(tapegrad.randn(5, 2, 3))
    assert out.grad_fn is None and not out.requires_grad and h.grad_fn is None


TEXT = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was "
    "the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it "
    "was the season of Light, it was the season of Darkness, it was the spring of hope, it was "
    "the winter of despair, we had everything before us, we had nothing before us."
)


def char_lm(L, vocab):
    """embedding -> LSTM -> linear: a character-level language model."""

    class CharLM(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = L.nn.Embedding(vocab, 12)
            self.lstm = L.nn.LSTM(12, 24, batch_first=True)
            self.head = L.nn.Linear(24, vocab)

        def forward(self, x):
            out, _ = self.lstm(self.embed(x))
            return self.head(out)

    return CharLM()


def test_char_lstm_language_model_trains_like_torch():
    """200 Adam steps (float32) on the same batches of TEXT from the same initial weights:
    every step's loss within 1e-4 of torch's."""
    chars = sorted(set(TEXT))
    ids = np.array([chars.index(ch) for ch in TEXT], dtype=np.int64)
    rng = np.random.default_rng(0)
    seq, batch = 16, 8
    starts = rng.integers(0, len(ids) - seq - 1, size=(200, batch))
    windows = [np.stack([ids[s:s + seq + 1] for s in row]) for row in starts]
    torch.manual_seed(0)
    theirs = char_lm(torch, len(chars))
    tapegrad.manual_seed(0)
    ours = char_lm(tapegrad, len(chars))
    for (n, p), (_, q) in zip(theirs.named_parameters(), ours.named_parameters(), strict=True):
        assert_draws(q.detach().numpy(), p.detach().numpy(), n)
    if not VECTORIZED:  # the draws' last bits differ (tests/cpu_kernels.py): train from torch's
        ours.load_state_dict({k: tapegrad.tensor(v.numpy())
                              for k, v in theirs.state_dict().items()})
    curves = [_train_chars(L, model, windows, len(chars))
              for L, model in ((torch, theirs), (tapegrad, ours))]
    diff = np.abs(curves[1] - curves[0])
    assert curves[0][-1] < curves[0][0] - 1.0  # it learns
    assert diff.max() < 1e-4, f"max per-step difference {diff.max():.3g}"


def _train_chars(L, model, windows, vocab):
    opt = L.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for w in windows:
        x, y = L.tensor(w[:, :-1]), L.tensor(w[:, 1:])
        logits = model(x)
        loss = L.nn.functional.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return np.array(losses)



def test_every_rnn_entry_is_exercised():
    """Each registry entry of ops/rnn.py is reached by a layer, forward or create_graph."""
    from tapegrad.ops import rnn as rnn_ops
    from tapegrad.ops._registry import REGISTRY

    x = tapegrad.randn(3, 2, 2, dtype=tapegrad.float64, requires_grad=True)
    seen = set()
    for cls, kw in (("LSTM", {}), ("GRU", {}), ("RNN", {}), ("RNN", {"nonlinearity": "relu"})):
        m = getattr(tapegrad.nn, cls)(2, 2, **kw).double()
        packed = tapegrad.nn.utils.rnn.pack_padded_sequence(x, [2, 1])
        out, _ = m(packed)
        padded, _ = tapegrad.nn.utils.rnn.pad_packed_sequence(out)
        seen.add(type(out.data.grad_fn).__name__)
        seen.add(type(padded.grad_fn).__name__)
        seen.add(type(packed.data.grad_fn).__name__)
    missing = [n for n in rnn_ops.NAMES if REGISTRY[n].node not in seen]
    assert not missing


def test_output_changed_in_place_before_backward_raises():
    m = tapegrad.nn.LSTM(3, 4)
    out, _ = m(tapegrad.randn(5, 2, 3))
    loss = out.sum()
    with tapegrad.no_grad():
        out.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_backward_twice_with_retain_graph(cls):
    """The second backward recomputes the gates the first one took from the forward."""
    m = getattr(tapegrad.nn, cls)(3, 4, bidirectional=True)
    x = tapegrad.randn(5, 2, 3, requires_grad=True)
    out, _ = m(x)
    loss = (out * out).sum()
    loss.backward(retain_graph=True)
    first = [x.grad.clone()] + [p.grad.clone() for p in m.parameters()]
    loss.backward()
    for a, b in zip(first, [x.grad] + [p.grad for p in m.parameters()], strict=True):
        np.testing.assert_allclose(b.numpy(), 2 * a.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cls", ["GRU", "LSTMCell"])
def test_float64_init_as_torch(cls):
    torch.manual_seed(1)
    a = getattr(torch.nn, cls)(3, 5, dtype=torch.float64)
    tapegrad.manual_seed(1)
    b = getattr(tapegrad.nn, cls)(3, 5, dtype=tapegrad.float64)
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert q.dtype == tapegrad.float64
        assert_draws(q.detach().numpy(), p.detach().numpy())
