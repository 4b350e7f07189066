"""nn.Module and the layers, compared with torch.

* reprs and state_dict keys, character for character, for every layer and for nested models;
* default initialisation after the same ``manual_seed``: bit-equal to torch's;
* forward and backward with torch's weights copied across (float64 to 1e-10, float32 to 1e-5),
  and the grad_fn node names;
* the Module machinery: registration by assignment, torch's errors, traversal order,
  load_state_dict (incompatible keys, error messages), train/eval, zero_grad, dtype
  conversion, hooks (order and arguments), containers, Parameter.
"""

from __future__ import annotations

import copy
import math
from collections import OrderedDict

import numpy as np
import pytest
from cpu_kernels import assert_draws
from torchcompare import normalize_text, raised, to_numpy

# --------------------------------------------------------------------------------------------
# Layer catalogue: (id, constructor(L), input shapes, input kind)
# --------------------------------------------------------------------------------------------

LAYERS = [
    ("Linear", lambda L: L.nn.Linear(5, 3), [(4, 5)]),
    ("Linear-3d", lambda L: L.nn.Linear(5, 3), [(2, 4, 5)]),
    ("Linear-nobias", lambda L: L.nn.Linear(5, 3, bias=False), [(4, 5)]),
    ("Bilinear", lambda L: L.nn.Bilinear(3, 4, 2), [(5, 3), (5, 4)]),
    ("Identity", lambda L: L.nn.Identity(3, foo=1), [(2, 3)]),
    ("Conv1d", lambda L: L.nn.Conv1d(3, 4, 3), [(2, 3, 9)]),
    ("Conv1d-stride-pad", lambda L: L.nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2),
     [(2, 4, 9)]),
    ("Conv2d", lambda L: L.nn.Conv2d(3, 4, 3), [(2, 3, 7, 6)]),
    ("Conv2d-full", lambda L: L.nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2),
                                          dilation=(1, 2), groups=2, bias=False),
     [(2, 4, 8, 7)]),
    ("Conv2d-same", lambda L: L.nn.Conv2d(2, 3, 4, padding="same", dilation=2), [(1, 2, 9, 9)]),
    ("Conv2d-valid", lambda L: L.nn.Conv2d(2, 3, 3, padding="valid"), [(1, 2, 6, 6)]),
    ("Conv2d-reflect", lambda L: L.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
     [(1, 2, 5, 5)]),
    ("ConvTranspose2d", lambda L: L.nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1,
                                                       output_padding=1), [(1, 3, 4, 4)]),
    ("MaxPool2d", lambda L: L.nn.MaxPool2d(2), [(2, 3, 6, 6)]),
    ("MaxPool2d-full", lambda L: L.nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True),
     [(2, 3, 7, 7)]),
    ("MaxPool1d", lambda L: L.nn.MaxPool1d(3, stride=2), [(2, 3, 9)]),
    ("AvgPool2d", lambda L: L.nn.AvgPool2d(2), [(2, 3, 6, 6)]),
    ("AvgPool2d-pad", lambda L: L.nn.AvgPool2d(3, stride=2, padding=1,
                                               count_include_pad=False), [(2, 3, 7, 7)]),
    ("AvgPool1d", lambda L: L.nn.AvgPool1d(3, stride=2), [(2, 3, 9)]),
    ("AdaptiveAvgPool2d", lambda L: L.nn.AdaptiveAvgPool2d((2, 3)), [(2, 3, 7, 8)]),
    ("AdaptiveAvgPool2d-1", lambda L: L.nn.AdaptiveAvgPool2d(1), [(2, 3, 5, 5)]),
    ("AdaptiveMaxPool2d", lambda L: L.nn.AdaptiveMaxPool2d(2), [(2, 3, 5, 5)]),
    ("AdaptiveMaxPool3d", lambda L: L.nn.AdaptiveMaxPool3d((2, 3, 2)), [(2, 3, 5, 5, 4)]),
    ("LayerNorm", lambda L: L.nn.LayerNorm(5), [(3, 4, 5)]),
    ("LayerNorm-2d", lambda L: L.nn.LayerNorm([4, 5], eps=1e-3), [(3, 4, 5)]),
    ("LayerNorm-noaffine", lambda L: L.nn.LayerNorm(5, elementwise_affine=False), [(3, 5)]),
    ("LayerNorm-nobias", lambda L: L.nn.LayerNorm(5, bias=False), [(3, 5)]),
    ("RMSNorm", lambda L: L.nn.RMSNorm(5), [(3, 5)]),
    ("RMSNorm-eps", lambda L: L.nn.RMSNorm([2, 5], eps=1e-4), [(3, 2, 5)]),
    ("GroupNorm", lambda L: L.nn.GroupNorm(2, 4), [(3, 4, 5)]),
    ("BatchNorm1d", lambda L: L.nn.BatchNorm1d(4), [(6, 4)]),
    ("BatchNorm1d-3d", lambda L: L.nn.BatchNorm1d(4, momentum=None), [(6, 4, 3)]),
    ("BatchNorm2d", lambda L: L.nn.BatchNorm2d(3), [(4, 3, 5, 5)]),
    ("BatchNorm2d-noaffine", lambda L: L.nn.BatchNorm2d(3, affine=False, eps=1e-3),
     [(4, 3, 2, 2)]),
    ("BatchNorm2d-nostats", lambda L: L.nn.BatchNorm2d(3, track_running_stats=False),
     [(4, 3, 2, 2)]),
    ("InstanceNorm2d", lambda L: L.nn.InstanceNorm2d(3), [(2, 3, 4, 4)]),
    ("Embedding", lambda L: L.nn.Embedding(10, 4), "idx"),
    ("Embedding-pad", lambda L: L.nn.Embedding(10, 4, padding_idx=2), "idx"),
    ("Embedding-negpad", lambda L: L.nn.Embedding(10, 4, padding_idx=-1), "idx"),
    ("Flatten", lambda L: L.nn.Flatten(), [(2, 3, 4)]),
    ("Flatten-dims", lambda L: L.nn.Flatten(0, 1), [(2, 3, 4)]),
    ("Unflatten", lambda L: L.nn.Unflatten(1, (3, 4)), [(2, 12)]),
    ("Dropout-eval", lambda L: L.nn.Dropout(0.3).eval(), [(3, 4)]),
    ("ReLU", lambda L: L.nn.ReLU(), [(3, 4)]),
    ("LeakyReLU", lambda L: L.nn.LeakyReLU(0.2), [(3, 4)]),
    ("Sigmoid", lambda L: L.nn.Sigmoid(), [(3, 4)]),
    ("Tanh", lambda L: L.nn.Tanh(), [(3, 4)]),
    ("GELU", lambda L: L.nn.GELU(), [(3, 4)]),
    ("GELU-tanh", lambda L: L.nn.GELU(approximate="tanh"), [(3, 4)]),
    ("SiLU", lambda L: L.nn.SiLU(), [(3, 4)]),
    ("Softplus", lambda L: L.nn.Softplus(beta=2.0, threshold=10.0), [(3, 4)]),
    ("ELU", lambda L: L.nn.ELU(alpha=0.5), [(3, 4)]),
    ("Softmax", lambda L: L.nn.Softmax(dim=1), [(3, 4)]),
    ("LogSoftmax", lambda L: L.nn.LogSoftmax(dim=-1), [(3, 4)]),
    ("Softmin", lambda L: L.nn.Softmin(dim=0), [(3, 4)]),
    ("Hardtanh", lambda L: L.nn.Hardtanh(-0.5, 0.5), [(3, 4)]),
    ("ReLU6", lambda L: L.nn.ReLU6(), [(3, 4)]),
    ("Mish", lambda L: L.nn.Mish(), [(3, 4)]),
    ("Hardswish", lambda L: L.nn.Hardswish(), [(3, 4)]),
    ("Hardsigmoid", lambda L: L.nn.Hardsigmoid(), [(3, 4)]),
    ("PReLU", lambda L: L.nn.PReLU(), [(3, 4)]),
    ("PReLU-channels", lambda L: L.nn.PReLU(4, init=0.1), [(3, 4, 2)]),
    ("SELU", lambda L: L.nn.SELU(), [(3, 4)]),
    ("LogSigmoid", lambda L: L.nn.LogSigmoid(), [(3, 4)]),
    ("ZeroPad2d", lambda L: L.nn.ZeroPad2d((1, 0, 2, 1)), [(1, 2, 3, 3)]),
    ("ConstantPad1d", lambda L: L.nn.ConstantPad1d(2, 3.5), [(2, 3, 4)]),
    ("ReflectionPad2d", lambda L: L.nn.ReflectionPad2d(1), [(1, 2, 3, 4)]),
    ("ReplicationPad1d", lambda L: L.nn.ReplicationPad1d((2, 1)), [(2, 3, 4)]),
    ("CircularPad2d", lambda L: L.nn.CircularPad2d(1), [(1, 2, 3, 3)]),
    ("PixelShuffle", lambda L: L.nn.PixelShuffle(2), [(1, 8, 2, 3)]),
    ("PixelUnshuffle", lambda L: L.nn.PixelUnshuffle(2), [(1, 2, 4, 6)]),
    ("Upsample-nearest", lambda L: L.nn.Upsample(scale_factor=2), [(1, 2, 3, 3)]),
    ("Upsample-bilinear", lambda L: L.nn.Upsample(size=(5, 4), mode="bilinear"),
     [(1, 2, 3, 3)]),
    ("UpsamplingBilinear2d", lambda L: L.nn.UpsamplingBilinear2d(scale_factor=2),
     [(1, 1, 2, 3)]),
    ("TransformerEncoderLayer", lambda L: L.nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, dropout=0.0), [(5, 3, 8)]),
    ("TransformerEncoderLayer-normfirst-gelu", lambda L: L.nn.TransformerEncoderLayer(
        8, 4, dim_feedforward=12, dropout=0.0, activation="gelu", norm_first=True,
        batch_first=True), [(3, 5, 8)]),
    ("TransformerEncoder", lambda L: L.nn.TransformerEncoder(L.nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, dropout=0.0, batch_first=True), 2, norm=L.nn.LayerNorm(8)),
     [(3, 5, 8)]),
]

REPR_ONLY = [
    lambda L: L.nn.ReLU(inplace=True),
    lambda L: L.nn.LeakyReLU(inplace=True),
    lambda L: L.nn.ELU(inplace=True),
    lambda L: L.nn.Hardtanh(inplace=True),
    lambda L: L.nn.ReLU6(inplace=True),
    lambda L: L.nn.SiLU(inplace=True),
    lambda L: L.nn.Softmax(),
    lambda L: L.nn.Threshold(0.1, 20.0),
    lambda L: L.nn.CELU(),
    lambda L: L.nn.GLU(),
    lambda L: L.nn.Hardshrink(),
    lambda L: L.nn.Softshrink(0.3),
    lambda L: L.nn.Softsign(),
    lambda L: L.nn.Tanhshrink(),
    lambda L: L.nn.RReLU(),
    lambda L: L.nn.Softmax2d(),
    lambda L: L.nn.Dropout(),
    lambda L: L.nn.Dropout(0.25, inplace=True),
    lambda L: L.nn.Dropout1d(0.1),
    lambda L: L.nn.Dropout2d(),
    lambda L: L.nn.Dropout3d(),
    lambda L: L.nn.AlphaDropout(0.2),
    lambda L: L.nn.Conv3d(2, 4, 3, stride=2, padding_mode="circular", padding=1),
    lambda L: L.nn.ConvTranspose1d(2, 4, 3, dilation=2),
    lambda L: L.nn.MaxPool3d(2),
    lambda L: L.nn.AvgPool3d(2, divisor_override=3),
    lambda L: L.nn.MaxUnpool2d(2),
    lambda L: L.nn.LPPool2d(2, 3),
    lambda L: L.nn.AdaptiveAvgPool1d(3),
    lambda L: L.nn.AdaptiveMaxPool1d(3),
    lambda L: L.nn.BatchNorm3d(3, bias=False),
    lambda L: L.nn.InstanceNorm1d(3, affine=True),
    lambda L: L.nn.GroupNorm(2, 4, affine=False),
    lambda L: L.nn.LocalResponseNorm(2),
    lambda L: L.nn.Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.0,
                             scale_grad_by_freq=True, sparse=True),
    lambda L: L.nn.EmbeddingBag(10, 3),
    lambda L: L.nn.EmbeddingBag(10, 3, mode="sum", max_norm=2.0, padding_idx=1),
    lambda L: L.nn.PairwiseDistance(),
    lambda L: L.nn.CosineSimilarity(),
    lambda L: L.nn.MultiheadAttention(8, 2),
    lambda L: L.nn.MultiheadAttention(8, 2, kdim=3, vdim=5, bias=False, add_bias_kv=True),
    lambda L: L.nn.MSELoss(),
    lambda L: L.nn.L1Loss(reduction="sum"),
    lambda L: L.nn.CrossEntropyLoss(label_smoothing=0.1),
    lambda L: L.nn.NLLLoss(),
    lambda L: L.nn.BCELoss(),
    lambda L: L.nn.BCEWithLogitsLoss(),
    lambda L: L.nn.KLDivLoss(reduction="batchmean"),
    lambda L: L.nn.SmoothL1Loss(beta=0.5),
    lambda L: L.nn.HuberLoss(delta=2.0),
    lambda L: L.nn.SoftMarginLoss(),
    lambda L: L.nn.CosineEmbeddingLoss(),
    lambda L: L.nn.MarginRankingLoss(),
    lambda L: L.nn.MultiMarginLoss(),
    lambda L: L.nn.TripletMarginLoss(),
    lambda L: L.nn.PoissonNLLLoss(),
    lambda L: L.nn.GaussianNLLLoss(),
    lambda L: L.nn.CTCLoss(),
    lambda L: L.nn.ModuleList(),
    lambda L: L.nn.ModuleList([L.nn.Linear(2, 2) for _ in range(3)] + [L.nn.ReLU()]),
    lambda L: L.nn.ModuleDict({"a": L.nn.ReLU(), "b": L.nn.Linear(1, 2)}),
    lambda L: L.nn.Sequential(),
    lambda L: L.nn.Sequential(OrderedDict([("fc", L.nn.Linear(3, 4)), ("act", L.nn.Tanh())])),
    lambda L: L.nn.ParameterList([L.nn.Parameter(L.zeros(2, 3)), L.zeros(4)]),
    lambda L: L.nn.ParameterDict({"b": L.nn.Parameter(L.zeros(2)), "a": L.ones(3, 1)}),
]


def _ids(items):
    return [name for name, *_ in items]


def _net(L):
    """A nested model: containers inside containers, a custom module, repeated layers."""

    class Block(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = L.nn.Conv2d(2, 2, 3, padding=1)
            self.bn = L.nn.BatchNorm2d(2)
            self.heads = L.nn.ModuleList([L.nn.Linear(4, 4) for _ in range(2)])

        def forward(self, x):
            return self.bn(self.conv(x))

    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = L.nn.Sequential(Block(), L.nn.ReLU(), L.nn.MaxPool2d(2))
            self.classifier = L.nn.Sequential(
                OrderedDict([("fc1", L.nn.Linear(8, 6)), ("act", L.nn.GELU()),
                             ("drop", L.nn.Dropout(0.1)), ("fc2", L.nn.Linear(6, 3))])
            )
            self.norm = L.nn.LayerNorm(3)
            self.register_buffer("steps", L.zeros(1))
            self.register_buffer("scratch", L.ones(2), persistent=False)
            self.scale = L.nn.Parameter(L.ones(1))

        def forward(self, x):
            h = self.features(x).flatten(1)
            return self.norm(self.classifier(h)) * self.scale

    return Net()


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def make_inputs(L, spec, dtype, seed=0):
    """Inputs from NumPy (the same values for both libraries), requiring grad when float."""
    rng = np.random.default_rng(seed)
    if spec == "idx":
        return [L.tensor(np.array([[1, 2, 9], [2, 0, 2]], dtype=np.int64))]
    out = []
    for shape in spec:
        arr = rng.standard_normal(shape).astype(dtype)
        out.append(L.tensor(arr, requires_grad=True))
    return out


def snapshot_state(m):
    """The module's state as NumPy arrays (taken before any forward changes it)."""
    return OrderedDict((k, to_numpy(v)) for k, v in m.state_dict().items())


def copy_state(state, dst, L):
    """Load a NumPy snapshot of torch's module state into ``dst`` (the library's)."""
    dst.load_state_dict(OrderedDict((k, L.tensor(v)) for k, v in state.items()))


def run_layer(L, ctor, spec, dtype, state_from=None, train=None):
    L.manual_seed(0)
    m = ctor(L)
    if dtype == np.float64:
        m = m.double()
    if train is not None:
        m.train(train)
    if state_from is not None:
        copy_state(state_from, m, L)
    state = snapshot_state(m)
    xs = make_inputs(L, spec, dtype)
    y = m(*xs)
    if isinstance(y, tuple):
        y = y[0]
    g = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(y.detach().numpy().dtype)
    y.backward(L.tensor(g))
    grads = {n: to_numpy(p.grad) for n, p in m.named_parameters() if p.grad is not None}
    xgrads = [to_numpy(x.grad) for x in xs if x.grad is not None]
    bufs = {n: to_numpy(b) for n, b in m.named_buffers()}
    name = None if y.grad_fn is None else type(y.grad_fn).__name__
    return state, to_numpy(y), grads, xgrads, bufs, name


# --------------------------------------------------------------------------------------------
# Reprs and state_dict keys
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,ctor,spec", LAYERS, ids=_ids(LAYERS))
def test_layer_repr_keys_and_shapes(lib, oracle, name, ctor, spec):
    """repr, state_dict keys / shapes / dtypes and parameter names equal torch's."""

    def facts(L):
        m = ctor(L)
        sd = m.state_dict()
        return (
            repr(m),
            [(k, tuple(v.shape), str(v.dtype)) for k, v in sd.items()],
            [n for n, _ in m.named_parameters()],
            [n for n, _ in m.named_buffers()],
            type(sd).__name__,
        )

    assert normalize_text(str(facts(lib))) == normalize_text(str(facts(oracle)))


@pytest.mark.parametrize("ctor", REPR_ONLY, ids=range(len(REPR_ONLY)))
def test_more_reprs(lib, oracle, ctor):
    def facts(L):
        m = ctor(L)
        return repr(m), list(m.state_dict().keys())

    assert normalize_text(str(facts(lib))) == normalize_text(str(facts(oracle)))


def test_nested_model_repr_and_keys(lib, oracle):
    def facts(L):
        m = _net(L)
        return (
            repr(m),
            list(m.state_dict().keys()),
            [n for n, _ in m.named_parameters()],
            [n for n, _ in m.named_buffers()],
            [n for n, _ in m.named_modules()],
            [n for n, _ in m.named_children()],
            [type(c).__name__ for c in m.modules()],
        )

    got, want = facts(lib), facts(oracle)
    for g, w in zip(got, want, strict=True):
        assert normalize_text(str(g)) == normalize_text(str(w))


def test_repr_extra_repr_multiline_and_custom(compare):
    def scenario(L):
        class Custom(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = L.nn.Linear(1, 1)

            def extra_repr(self):
                return "alpha=1,\nbeta=2"

        class OneLine(L.nn.Module):
            def extra_repr(self):
                return "k=3"

        class Both(L.nn.Module):
            def __init__(self):
                super().__init__()
                self.x = L.nn.ReLU()

            def extra_repr(self):
                return "k=3"

        return repr(Custom()), repr(OneLine()), repr(Both()), repr(L.nn.Module())

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Default initialisation: bit-equal values after the same seed
# --------------------------------------------------------------------------------------------

INIT_CTORS = [
    ("Linear", lambda L: L.nn.Linear(7, 5)),
    ("Linear-2-3", lambda L: L.nn.Linear(2, 3)),
    ("Linear-big", lambda L: L.nn.Linear(64, 33)),
    ("Linear-nobias", lambda L: L.nn.Linear(4, 9, bias=False)),
    ("Linear-f64", lambda L: L.nn.Linear(6, 4, dtype=L.float64)),
    ("Bilinear", lambda L: L.nn.Bilinear(3, 4, 5)),
    ("Conv1d", lambda L: L.nn.Conv1d(3, 5, 4)),
    ("Conv2d", lambda L: L.nn.Conv2d(3, 8, 3)),
    ("Conv2d-groups", lambda L: L.nn.Conv2d(4, 8, (3, 2), groups=2)),
    ("ConvTranspose2d", lambda L: L.nn.ConvTranspose2d(4, 6, 3)),
    ("Embedding", lambda L: L.nn.Embedding(11, 7)),
    ("Embedding-small", lambda L: L.nn.Embedding(3, 2, padding_idx=1)),
    ("Embedding-f64", lambda L: L.nn.Embedding(5, 5, dtype=L.float64)),
    ("LayerNorm", lambda L: L.nn.LayerNorm(6)),
    ("BatchNorm2d", lambda L: L.nn.BatchNorm2d(4)),
    ("PReLU", lambda L: L.nn.PReLU(3)),
    ("MultiheadAttention", lambda L: L.nn.MultiheadAttention(8, 2)),
    ("MultiheadAttention-kv", lambda L: L.nn.MultiheadAttention(6, 3, kdim=4, vdim=5,
                                                                add_bias_kv=True)),
    ("Sequential", lambda L: L.nn.Sequential(L.nn.Linear(64, 32), L.nn.Sigmoid(),
                                             L.nn.Linear(32, 10))),
    ("Net", _net),
    ("TransformerEncoderLayer", lambda L: L.nn.TransformerEncoderLayer(8, 2, 16)),
]


@pytest.mark.parametrize("seed", [0, 7])
@pytest.mark.parametrize("name,ctor", INIT_CTORS, ids=_ids(INIT_CTORS))
def test_default_init_is_bit_equal(lib, oracle, name, ctor, seed):
    def values(L):
        L.manual_seed(seed)
        m = ctor(L)
        after = L.rand(3)  # the generator is left where torch leaves it
        out = {k: to_numpy(v) for k, v in m.state_dict().items()}
        out["__next__"] = to_numpy(after)
        return out

    got, want = values(lib), values(oracle)
    assert list(got) == list(want)
    for k in want:
        assert got[k].dtype == want[k].dtype, k
        assert_draws(got[k], want[k], k)


def test_linear_2_3_exact_values(lib):
    """The brief's example: manual_seed(0); nn.Linear(2, 3) gives torch's weights."""
    lib.manual_seed(0)
    m = lib.nn.Linear(2, 3)
    w = np.array([[-0.005293981172144413, 0.37932288646698],
                  [-0.5819807648658752, -0.5203874707221985],
                  [-0.27234524488449097, 0.1896158903837204]], dtype=np.float32)
    b = np.array([-0.014010033570230007, 0.5606575012207031, -0.06275151669979095],
                 dtype=np.float32)
    assert np.array_equal(to_numpy(m.weight), w)
    assert np.array_equal(to_numpy(m.bias), b)
    assert type(m.weight).__name__ == "Parameter" and m.weight.requires_grad


# --------------------------------------------------------------------------------------------
# Forward and backward against torch, weights copied across
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name,ctor,spec", LAYERS, ids=_ids(LAYERS))
def test_layer_forward_backward(lib, oracle, name, ctor, spec, dtype):
    rtol, atol = (1e-10, 1e-12) if dtype == np.float64 else (1e-5, 1e-6)
    tm, ty, tg, txg, tb, tname = run_layer(oracle, ctor, spec, dtype)
    _, ly, lg, lxg, lb, lname = run_layer(lib, ctor, spec, dtype, state_from=tm)
    assert ly.dtype == ty.dtype and ly.shape == ty.shape
    np.testing.assert_allclose(ly, ty, rtol=rtol, atol=atol, err_msg="output")
    assert list(lg) == list(tg)
    for k in tg:
        np.testing.assert_allclose(lg[k], tg[k], rtol=rtol, atol=atol, err_msg=k)
    assert len(lxg) == len(txg)
    for a, b in zip(lxg, txg, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg="input grad")
    assert list(lb) == list(tb)
    for k in tb:  # running statistics after one training step
        np.testing.assert_allclose(lb[k], tb[k], rtol=rtol, atol=atol, err_msg=k)
    assert lname == tname


def test_linear_node_names(compare):
    """2-D input -> AddmmBackward0; 3-D input -> ViewBackward0 over AddmmBackward0 (torch)."""

    def scenario(L):
        L.manual_seed(0)
        m = L.nn.Linear(3, 2)
        y2 = m(L.ones(4, 3))
        y3 = m(L.ones(2, 4, 3))
        y1 = L.nn.Linear(3, 2, bias=False)(L.ones(3))
        return (type(y2.grad_fn).__name__, type(y3.grad_fn).__name__,
                type(y1.grad_fn).__name__)

    compare(scenario)


def test_sequential_mlp_training_step_matches_torch(lib, oracle):
    """Sequential(Linear, Sigmoid, Linear) + CrossEntropyLoss: loss and gradients."""

    def run(L):
        L.manual_seed(0)
        model = L.nn.Sequential(L.nn.Linear(16, 8), L.nn.Sigmoid(), L.nn.Linear(8, 4))
        x = L.randn(10, 16)
        y = L.randint(0, 4, (10,))
        loss = L.nn.CrossEntropyLoss()(model(x), y)
        loss.backward()
        return loss.item(), [to_numpy(p.grad) for p in model.parameters()]

    (tl, tg), (ll, lg) = run(oracle), run(lib)
    assert math.isclose(ll, tl, rel_tol=1e-6)
    for a, b in zip(lg, tg, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


LOSSES = [
    ("MSELoss", lambda L: L.nn.MSELoss(), "reg"),
    ("MSELoss-sum", lambda L: L.nn.MSELoss(reduction="sum"), "reg"),
    ("L1Loss", lambda L: L.nn.L1Loss(), "reg"),
    ("L1Loss-none", lambda L: L.nn.L1Loss(reduction="none"), "reg"),
    ("SmoothL1Loss", lambda L: L.nn.SmoothL1Loss(beta=0.5), "reg"),
    ("HuberLoss", lambda L: L.nn.HuberLoss(delta=0.7), "reg"),
    ("CrossEntropyLoss", lambda L: L.nn.CrossEntropyLoss(), "cls"),
    ("CrossEntropyLoss-opts", lambda L: L.nn.CrossEntropyLoss(
        weight=L.tensor([1.0, 2.0, 0.5, 1.5]), ignore_index=1, label_smoothing=0.1), "cls"),
    ("CrossEntropyLoss-sum", lambda L: L.nn.CrossEntropyLoss(reduction="sum"), "cls"),
    ("NLLLoss", lambda L: L.nn.NLLLoss(), "logp"),
    ("NLLLoss-weight", lambda L: L.nn.NLLLoss(weight=L.tensor([1.0, 2.0, 0.5, 1.5]),
                                              reduction="none"), "logp"),
    ("BCELoss", lambda L: L.nn.BCELoss(), "prob"),
    ("BCELoss-weight", lambda L: L.nn.BCELoss(weight=L.tensor([0.5, 1.0, 2.0, 1.0])), "prob"),
    ("BCEWithLogitsLoss", lambda L: L.nn.BCEWithLogitsLoss(), "logit"),
    ("BCEWithLogitsLoss-pos", lambda L: L.nn.BCEWithLogitsLoss(
        pos_weight=L.tensor([1.0, 2.0, 3.0, 0.5])), "logit"),
    ("KLDivLoss", lambda L: L.nn.KLDivLoss(reduction="batchmean"), "kl"),
    ("KLDivLoss-logt", lambda L: L.nn.KLDivLoss(reduction="sum", log_target=True), "kl"),
]


def _loss_inputs(L, kind, dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4)).astype(dtype)
    if kind == "reg":
        return x, L.tensor(rng.standard_normal((5, 4)).astype(dtype))
    if kind == "cls":
        return x, L.tensor(np.array([0, 3, 1, 2, 3], dtype=np.int64))
    if kind == "logp":
        lp = x - np.log(np.exp(x).sum(1, keepdims=True))
        return lp, L.tensor(np.array([0, 3, 1, 2, 3], dtype=np.int64))
    if kind == "prob":
        return 1 / (1 + np.exp(-x)), L.tensor(rng.uniform(size=(5, 4)).astype(dtype))
    if kind == "logit":
        return x, L.tensor(rng.uniform(size=(5, 4)).astype(dtype))
    p = rng.uniform(0.1, 1, size=(5, 4)).astype(dtype)
    return np.log(p / p.sum(1, keepdims=True)), L.tensor(
        (p / p.sum(1, keepdims=True)).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name,ctor,kind", LOSSES, ids=_ids(LOSSES))
def test_loss_modules(lib, oracle, name, ctor, kind, dtype):
    rtol, atol = (1e-10, 1e-12) if dtype == np.float64 else (1e-5, 1e-6)

    def run(L):
        crit = ctor(L)
        if dtype == np.float64:
            crit = crit.double()
        x_np, target = _loss_inputs(L, kind, dtype)
        if kind == "kl" and "logt" in name:
            target = target.log()
        x = L.tensor(x_np, requires_grad=True)
        loss = crit(x, target)
        loss.backward(L.ones_like(loss))
        return to_numpy(loss), to_numpy(x.grad), type(loss.grad_fn).__name__, repr(crit)

    (tl, tg, tn, tr), (ll, lg, ln, lr) = run(oracle), run(lib)
    assert ll.dtype == tl.dtype and ll.shape == tl.shape
    np.testing.assert_allclose(ll, tl, rtol=rtol, atol=atol)
    np.testing.assert_allclose(lg, tg, rtol=rtol, atol=atol)
    assert ln == tn
    assert normalize_text(lr) == normalize_text(tr)


def test_loss_weight_is_a_buffer_and_legacy_args(compare):
    def scenario(L):
        ce = L.nn.CrossEntropyLoss(weight=L.tensor([1.0, 2.0]))
        bce = L.nn.BCEWithLogitsLoss(pos_weight=L.tensor([3.0]))
        legacy = L.nn.MSELoss(size_average=False)
        legacy2 = L.nn.L1Loss(reduce=False)
        return ([n for n, _ in ce.named_buffers()], list(ce.state_dict()),
                [n for n, _ in bce.named_buffers()], legacy.reduction, legacy2.reduction,
                ce.double().weight.dtype)

    compare(scenario)


# --------------------------------------------------------------------------------------------
# MultiheadAttention
# --------------------------------------------------------------------------------------------

MHA_CASES = [
    ("self", dict(embed_dim=8, num_heads=2), dict()),
    ("batch_first", dict(embed_dim=8, num_heads=4, batch_first=True), dict()),
    ("no-avg", dict(embed_dim=8, num_heads=2), dict(average_attn_weights=False)),
    ("no-weights", dict(embed_dim=8, num_heads=2), dict(need_weights=False)),
    ("kdim-vdim", dict(embed_dim=6, num_heads=3, kdim=4, vdim=5), dict()),
    ("bias-kv-zero", dict(embed_dim=8, num_heads=2, add_bias_kv=True, add_zero_attn=True),
     dict()),
    ("nobias", dict(embed_dim=8, num_heads=2, bias=False), dict()),
    ("masks", dict(embed_dim=8, num_heads=2), dict(masks=True)),
    ("causal", dict(embed_dim=8, num_heads=2), dict(causal=True)),
    ("unbatched", dict(embed_dim=8, num_heads=2), dict(unbatched=True)),
]


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("name,kw,opts", MHA_CASES, ids=_ids(MHA_CASES))
def test_multihead_attention(lib, oracle, name, kw, opts, dtype):
    rtol, atol = (1e-10, 1e-12) if dtype == np.float64 else (1e-5, 1e-6)
    opts = dict(opts)
    masks = opts.pop("masks", False)
    causal = opts.pop("causal", False)
    unbatched = opts.pop("unbatched", False)

    def run(L, state=None):
        L.manual_seed(0)
        m = L.nn.MultiheadAttention(**kw)
        if dtype == np.float64:
            m = m.double()
        if state is not None:
            copy_state(state, m, L)
        snap = snapshot_state(m)
        rng = np.random.default_rng(5)
        e = kw["embed_dim"]
        lq, lk, n = 4, 5, 3
        bf = kw.get("batch_first", False)

        def shape(length, dim):
            if unbatched:
                return (length, dim)
            return (n, length, dim) if bf else (length, n, dim)

        q = L.tensor(rng.standard_normal(shape(lq, e)).astype(dtype), requires_grad=True)
        k = L.tensor(rng.standard_normal(shape(lk, kw.get("kdim", e))).astype(dtype),
                     requires_grad=True)
        v = L.tensor(rng.standard_normal(shape(lk, kw.get("vdim", e))).astype(dtype),
                     requires_grad=True)
        extra = dict(opts)
        if masks:
            extra["key_padding_mask"] = L.tensor(np.array(
                [[False] * 4 + [True], [False] * 5, [False, True] + [False] * 3]))
            extra["attn_mask"] = L.tensor(rng.standard_normal((lq, lk)).astype(dtype))
        if causal:
            q2 = L.tensor(rng.standard_normal(shape(lk, e)).astype(dtype), requires_grad=True)
            q, k, v = q2, q2, q2
            extra["attn_mask"] = L.tensor(np.triu(np.full((lk, lk), -np.inf), 1).astype(dtype))
            extra["is_causal"] = True
        out, w = m(q, k, v, **extra)
        out.sum().backward()
        grads = {n_: to_numpy(p.grad) for n_, p in m.named_parameters()}
        return snap, to_numpy(out), None if w is None else to_numpy(w), grads, to_numpy(q.grad)

    tm, to, tw, tg, tq = run(oracle)
    _, lo, lw, lg, lq_ = run(lib, tm)
    np.testing.assert_allclose(lo, to, rtol=rtol, atol=atol)
    assert (lw is None) == (tw is None)
    if tw is not None:
        assert lw.shape == tw.shape
        np.testing.assert_allclose(lw, tw, rtol=rtol, atol=atol)
    assert list(lg) == list(tg)
    for key in tg:
        np.testing.assert_allclose(lg[key], tg[key], rtol=rtol, atol=atol, err_msg=key)
    np.testing.assert_allclose(lq_, tq, rtol=rtol, atol=atol)


def test_transformer_encoder_warning_and_causal_mask(compare):
    def scenario(L):
        layer = L.nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)
        enc = L.nn.TransformerEncoder(layer, 1)
        L.manual_seed(0)
        x = L.randn(3, 2, 4)
        mask = L.tensor(np.triu(np.full((3, 3), -np.inf), 1).astype(np.float32))
        return enc(x, mask=mask).shape, enc.use_nested_tensor, repr(enc)

    compare(scenario)


def test_multihead_attention_structure(compare):
    def scenario(L):
        m = L.nn.MultiheadAttention(8, 2)
        m2 = L.nn.MultiheadAttention(6, 3, kdim=4, vdim=5)
        return (repr(m), [n for n, _ in m.named_parameters()], type(m.out_proj).__name__,
                repr(m.out_proj), [n for n, _ in m2.named_parameters()], m.head_dim,
                m.in_proj_bias.abs().sum().item(), m.out_proj.bias.abs().sum().item(),
                raised(L.nn.MultiheadAttention, 6, 4), raised(L.nn.MultiheadAttention, 0, 1))

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Module machinery
# --------------------------------------------------------------------------------------------


def test_registration_by_assignment_and_lookup(compare):
    def scenario(L):
        m = L.nn.Module()
        m.w = L.nn.Parameter(L.ones(2))
        m.sub = L.nn.Linear(2, 1)
        m.register_buffer("buf", L.zeros(3))
        m.plain = L.ones(1)  # a plain tensor is just an attribute
        m.buf = L.full((3,), 2.0)  # re-assigning a buffer keeps it a buffer
        m.nb = L.nn.Buffer(L.ones(1), persistent=False)
        names = ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()],
                 [n for n, _ in m.named_children()], list(m.state_dict()))
        m.sub = None
        m.w = None
        after = ([n for n, _ in m.named_parameters()], list(m._modules), m.sub, m.w)
        del m.buf
        return names, after, [n for n, _ in m.named_buffers()], "plain" in dir(m), m.buf \
            if "buf" in m._buffers else "gone"

    compare(scenario)


def test_assignment_errors(compare):
    def scenario(L):
        out = []

        class Early(L.nn.Module):
            def __init__(self, kind):
                if kind == "param":
                    self.p = L.nn.Parameter(L.ones(1))
                elif kind == "module":
                    self.m = L.nn.ReLU()
                elif kind == "buffer":
                    self.register_buffer("b", L.ones(1))
                else:
                    self.register_parameter("p", None)
                super().__init__()

        for kind in ("param", "module", "buffer", "regparam"):
            out.append(raised(Early, kind))
        m = L.nn.Linear(2, 2)

        def assign(name, value):
            setattr(m, name, value)

        out.append(raised(assign, "weight", L.ones(2, 2)))
        out.append(raised(m.register_parameter, "a.b", None))
        out.append(raised(m.register_parameter, "", None))
        out.append(raised(m.register_parameter, 3, None))
        out.append(raised(m.register_parameter, "x", L.ones(1)))
        out.append(raised(m.register_parameter, "training", None))
        out.append(raised(m.register_buffer, "x", 3))
        out.append(raised(m.register_buffer, "a.b", None))
        out.append(raised(m.register_buffer, "", None))
        out.append(raised(m.register_buffer, "weight", None))
        out.append(raised(m.add_module, "x", 3))
        out.append(raised(m.add_module, "a.b", None))
        out.append(raised(m.add_module, "", None))
        out.append(raised(m.add_module, "weight", L.nn.ReLU()))
        x = L.ones(1, requires_grad=True) * 2
        out.append(raised(m.register_parameter, "y", L.nn.Parameter(L.ones(1))))
        n = L.nn.Sequential(L.nn.ReLU())
        out.append(raised(setattr, n, "0", L.ones(1)))
        out.append(raised(getattr, m, "nothing"))
        out.append(raised(L.nn.ReLU, 1, 2))
        out.append(raised(L.nn.Module, foo=1))
        out.append(raised(L.nn.Module()))
        out.append(raised(m.train, "yes"))
        out.append(raised(m.to, L.int64))
        del x
        return out

    compare(scenario)


def test_non_leaf_parameter_error(compare):
    def scenario(L):
        m = L.nn.Module()
        p = L.nn.Parameter(L.ones(2))
        q = p * 2
        return raised(m.register_parameter, "q", q), type(q).__name__

    compare(scenario)


def test_traversal_order_and_duplicates(compare):
    def scenario(L):
        shared = L.nn.Linear(2, 2)
        m = L.nn.Sequential(shared, L.nn.ReLU(), shared, L.nn.Sequential(shared))
        tied = L.nn.Module()
        tied.a = L.nn.Linear(2, 2, bias=False)
        tied.b = L.nn.Linear(2, 2, bias=False)
        tied.b.weight = tied.a.weight
        return (
            [n for n, _ in m.named_parameters()],
            [n for n, _ in m.named_parameters(remove_duplicate=False)],
            [n for n, _ in m.named_modules()],
            [n for n, _ in m.named_modules(remove_duplicate=False)],
            [n for n, _ in m.named_children()],
            [n for n, _ in m.named_parameters(prefix="model")],
            [n for n, _ in m.named_parameters(recurse=False)],
            len(list(m.parameters())), len(list(m.children())), len(list(m.modules())),
            [n for n, _ in tied.named_parameters()], list(tied.state_dict()),
        )

    compare(scenario)


def test_state_dict_contents(compare):
    def scenario(L):
        m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2))
        with L.no_grad():  # (fixed values: the contents, not the draws, are under test)
            m[0].weight.copy_(L.tensor([[0.5, -0.25], [1.5, 2.0]]))
            m[0].bias.copy_(L.tensor([-1.0, 0.125]))
        sd = m.state_dict()
        kv = m.state_dict(keep_vars=True)
        pre = m.state_dict(prefix="net.")
        dest = OrderedDict()
        m.state_dict(destination=dest)
        return (
            type(sd).__name__, list(sd.items()), sd["0.weight"].requires_grad,
            type(sd["0.weight"]).__name__, kv["0.weight"] is m[0].weight, list(pre),
            list(dest), dict(sd._metadata),
        )

    compare(scenario)


def test_state_dict_shares_memory(compare):
    def scenario(L):
        m = L.nn.Linear(2, 2)
        sd = m.state_dict()
        with L.no_grad():
            sd["bias"].fill_(5.0)
        return m.bias

    compare(scenario)


def test_load_state_dict_roundtrip_and_incompatible_keys(compare):
    def scenario(L):
        L.manual_seed(0)
        a = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.BatchNorm1d(2))
        L.manual_seed(1)
        b = L.nn.Sequential(L.nn.Linear(3, 2), L.nn.BatchNorm1d(2))
        res = b.load_state_dict(a.state_dict())
        same = all(L.equal(x, y) for x, y in zip(a.state_dict().values(),
                                                   b.state_dict().values(), strict=True))
        sd = a.state_dict()
        del sd["0.bias"]
        sd["extra"] = L.ones(1)
        sd["1.more"] = L.ones(1)
        loose = b.load_state_dict(sd, strict=False)
        return (repr(res), res.missing_keys, res.unexpected_keys, same, repr(loose),
                loose.missing_keys, loose.unexpected_keys, type(loose).__name__,
                b[0].weight.requires_grad, type(b[0].weight).__name__)

    compare(scenario)


def test_load_state_dict_errors(compare):
    def scenario(L):
        m = L.nn.Linear(3, 2)
        sd = m.state_dict()
        out = []
        bad = dict(sd)
        del bad["bias"]
        out.append(raised(m.load_state_dict, bad))
        bad = dict(sd)
        bad["zzz"] = L.ones(1)
        bad["yyy"] = L.ones(1)
        out.append(raised(m.load_state_dict, bad))
        bad = dict(sd)
        bad["weight"] = L.ones(2, 4)
        out.append(raised(m.load_state_dict, bad))
        bad = {"weight": L.ones(2, 4), "zzz": L.ones(1)}
        out.append(raised(m.load_state_dict, bad))
        out.append(raised(m.load_state_dict, {"weight": [1, 2], "bias": L.ones(2)}))
        out.append(raised(m.load_state_dict, [1, 2]))
        seq = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.Sequential(L.nn.Linear(2, 1)))
        ssd = seq.state_dict()
        del ssd["1.0.weight"]
        ssd["1.0.extra"] = L.ones(1)
        ssd["2.weight"] = L.ones(1)
        out.append(raised(seq.load_state_dict, ssd))
        out.append(raised(L.nn.Linear(2, 2).load_state_dict, {"weight": L.ones(2, 2)},
                          strict=False))
        return out

    compare(scenario)


def test_load_state_dict_assign_and_scalar_broadcast(compare):
    def scenario(L):
        m = L.nn.Linear(2, 2)
        new_w = L.full((2, 2), 3.0, dtype=L.float64)
        m.load_state_dict({"weight": new_w, "bias": L.zeros(2)}, assign=True)
        bn = L.nn.BatchNorm1d(2)
        sd = bn.state_dict()
        sd["num_batches_tracked"] = L.tensor([4])  # 1-element -> scalar buffer
        bn.load_state_dict(sd)
        return (m.weight, type(m.weight).__name__, m.weight.dtype, bn.num_batches_tracked)

    compare(scenario)


def test_train_eval_flags(compare):
    def scenario(L):
        m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.Sequential(L.nn.Dropout()))
        a = [x.training for x in m.modules()]
        r = m.eval()
        b = [x.training for x in m.modules()]
        m.train()
        c = [x.training for x in m.modules()]
        m[1].eval()
        return a, b, c, [x.training for x in m.modules()], r is m

    compare(scenario)


def test_dropout_train_eval(lib, oracle):
    def run(L):
        L.manual_seed(3)
        d = L.nn.Dropout(0.4)
        x = L.ones(6, 5)
        y1 = d(x)
        d.eval()
        y2 = d(x)
        d2 = L.nn.Dropout2d(0.5)
        y3 = d2(L.ones(2, 4, 3, 3))
        return [to_numpy(y) for y in (y1, y2, y3)], y2 is x

    (ta, tsame), (la, lsame) = run(oracle), run(lib)
    for a, b in zip(la, ta, strict=True):
        assert np.array_equal(a, b)
    assert lsame == tsame


def test_batchnorm_running_stats_train_eval(lib, oracle):
    def run(L):
        rng = np.random.default_rng(0)
        out = []
        for momentum in (0.1, None):
            bn = L.nn.BatchNorm1d(3, momentum=momentum).double()
            for _ in range(3):
                bn(L.tensor(rng.standard_normal((8, 3))))
            out += [to_numpy(bn.running_mean), to_numpy(bn.running_var),
                    to_numpy(bn.num_batches_tracked)]
            bn.eval()
            out.append(to_numpy(bn(L.tensor(rng.standard_normal((4, 3))))))
            out.append(to_numpy(bn.num_batches_tracked))
        return out

    for a, b in zip(run(lib), run(oracle), strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda L: L.nn.BatchNorm1d(3), (4, 3)),
        (lambda L: L.nn.BatchNorm1d(3), (4, 3, 5)),
        (lambda L: L.nn.BatchNorm2d(3), (2, 3, 4, 4)),
        (lambda L: L.nn.GroupNorm(1, 3), (2, 3, 4)),
        (lambda L: L.nn.InstanceNorm1d(3, affine=True), (2, 3, 4)),
        (lambda L: L.nn.LayerNorm(3), (2, 3)),
    ],
)
def test_norm_layers_backward_when_only_the_weights_want_grad(compare, make, shape):
    # the input needs no gradient (a first layer fed data): only weight and bias get one
    def scenario(L):
        m = make(L).double()
        x = L.tensor(np.random.default_rng(0).standard_normal(shape))
        m(x).pow(2).sum().backward()
        train = (m.weight.grad.clone(), m.bias.grad.clone())
        m.zero_grad()
        m.eval()
        m(x).pow(3).sum().backward()
        return train, (m.weight.grad, m.bias.grad)

    compare(scenario, rtol=1e-10, atol=1e-10)


def test_zero_grad_and_requires_grad(compare):
    def scenario(L):
        m = L.nn.Linear(2, 1)
        m(L.ones(3, 2)).sum().backward()
        had = m.weight.grad.clone()
        m.zero_grad(set_to_none=False)
        zeroed = m.weight.grad
        m(L.ones(3, 2)).sum().backward()
        m.zero_grad()
        r = m.requires_grad_(False)
        return (had, zeroed, m.weight.grad, m.bias.grad, m.weight.requires_grad, r is m,
                m(L.ones(1, 2)).requires_grad)

    compare(scenario)


def test_dtype_conversion_keeps_parameters(compare):
    def scenario(L):
        m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2))
        w = m[0].weight
        m(L.ones(3, 2)).sum().backward()
        m.double()
        same = m[0].weight is w
        d = (m[0].weight.dtype, m[0].weight.grad.dtype, m[1].running_mean.dtype,
             m[1].num_batches_tracked.dtype, type(m[0].weight).__name__,
             m[0].weight.requires_grad)
        m.float()
        e = m[0].weight.dtype
        m.to(L.float64)
        f = m[0].weight.dtype
        m.to("cpu")
        m.half()
        g = m[0].bias.dtype
        m.to(dtype=L.float32)
        h = (m[0].weight.dtype, m.cpu() is m, m.apply(lambda mod: None) is m)
        return same, d, e, f, g, h

    compare(scenario)


def test_apply_visits_children_first(compare):
    def scenario(L):
        seen = []
        m = L.nn.Sequential(L.nn.Linear(1, 1), L.nn.Sequential(L.nn.ReLU(), L.nn.Tanh()))
        m.apply(lambda mod: seen.append(type(mod).__name__))

        def init(mod):
            if isinstance(mod, L.nn.Linear):
                L.nn.init.constant_(mod.weight, 0.5)

        m.apply(init)
        return seen, m[0].weight

    compare(scenario)


def test_get_submodule_parameter_buffer(compare):
    def scenario(L):
        m = _net(L)
        return (
            type(m.get_submodule("features.0.conv")).__name__,
            m.get_submodule("") is m,
            tuple(m.get_parameter("classifier.fc1.bias").shape),
            tuple(m.get_buffer("features.0.bn.running_var").shape),
            raised(m.get_submodule, "features.9"),
            raised(m.get_submodule, "classifier.fc1.weight"),
            raised(m.get_parameter, "classifier.fc1.nothing"),
            raised(m.get_parameter, "features.0.bn.running_mean"),
            raised(m.get_buffer, "classifier.fc1.weight"),
        )

    compare(scenario)


def test_dir_contains_members(lib):
    m = lib.nn.Linear(2, 2)
    m.register_buffer("buf", lib.zeros(1))
    names = dir(m)
    assert {"weight", "bias", "buf", "forward", "in_features"} <= set(names)
    assert names == sorted(names)
    s = lib.nn.Sequential(lib.nn.ReLU())
    assert "0" not in dir(s)


def test_deepcopy_module(compare):
    def scenario(L):
        m = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2))
        with L.no_grad():  # (fixed values: the copy, not the draws, is under test)
            m[0].weight.copy_(L.tensor([[0.5, -0.25], [1.5, 2.0]]))
        c = copy.deepcopy(m)
        different = c[0].weight is not m[0].weight
        with L.no_grad():
            c[0].weight.fill_(1.0)
        return (different, type(c[0].weight).__name__, c[0].weight.requires_grad,
                m[0].weight, repr(c), list(c.state_dict()))

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Hooks
# --------------------------------------------------------------------------------------------


def test_hook_order_and_arguments(compare):
    def scenario(L):
        log = []
        m = L.nn.Linear(2, 2)
        m.weight.data.fill_(0.5)
        m.bias.data.fill_(0.1)

        def fwd_pre(mod, args):
            log.append(("fwdpre", type(mod).__name__, len(args), args[0].shape))

        def fwd(mod, args, out):
            log.append(("fwd", out.shape))

        def bwd_pre(mod, grad_output):
            log.append(("bwdpre", len(grad_output), grad_output[0].clone()))

        def bwd(mod, grad_input, grad_output):
            log.append(("bwd", len(grad_input), grad_input[0].clone(), grad_output[0].clone()))

        handles = [m.register_forward_pre_hook(fwd_pre), m.register_forward_hook(fwd),
                   m.register_full_backward_pre_hook(bwd_pre),
                   m.register_full_backward_hook(bwd)]
        x = L.ones(3, 2, requires_grad=True)
        y = m(x)
        (y * L.tensor([1.0, 2.0])).sum().backward()
        for h in handles:
            h.remove()
        log.append("removed")
        m(x).sum().backward()
        return log, x.grad

    compare(scenario)


def test_hooks_modify_values(compare):
    def scenario(L):
        m = L.nn.Linear(2, 2)
        m.weight.data.fill_(1.0)
        m.bias.data.zero_()
        m.register_forward_pre_hook(lambda mod, args: args[0] * 2)
        m.register_forward_hook(lambda mod, args, out: out + 1)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1,))
        x = L.ones(1, 2, requires_grad=True)
        y = m(x)
        y.sum().backward()
        return y, x.grad, m.weight.grad

    compare(scenario)


def test_hooks_with_kwargs_prepend_and_always_call(compare):
    def scenario(L):
        log = []

        class Add(L.nn.Module):
            def forward(self, x, scale=1.0):
                if scale < 0:
                    raise ValueError("negative")
                return x * scale

        m = Add()
        m.register_forward_pre_hook(lambda mod, args, kwargs: log.append(("pre", kwargs)),
                                    with_kwargs=True)
        m.register_forward_pre_hook(lambda mod, args: log.append("first"), prepend=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("fwd", kwargs)),
                                with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append("always"), always_call=True)
        y = m(L.ones(1), scale=3.0)
        err = raised(m, L.ones(1), scale=-1.0)
        bad = L.nn.ReLU()
        bad.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        return y, log, err, raised(bad, L.ones(1))

    compare(scenario)


def test_backward_hook_when_input_does_not_require_grad(compare):
    def scenario(L):
        log = []
        m = L.nn.Linear(2, 1)
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, go[0].shape)))
        m(L.ones(3, 2)).sum().backward()
        return log

    compare(scenario)


def test_nested_module_hook_order(compare):
    def scenario(L):
        log = []
        model = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.Tanh())
        for name, mod in model.named_modules():
            tag = name or "root"
            mod.register_forward_pre_hook(lambda m, a, tag=tag: log.append(("fpre", tag)))
            mod.register_forward_hook(lambda m, a, o, tag=tag: log.append(("f", tag)))
            mod.register_full_backward_pre_hook(lambda m, g, tag=tag: log.append(("bpre", tag)))
            mod.register_full_backward_hook(lambda m, gi, go, tag=tag: log.append(("b", tag)))
        x = L.ones(1, 2, requires_grad=True)
        model(x).sum().backward()
        return log

    compare(scenario)


def test_hook_mixing_error_and_handles(compare):
    def scenario(L):
        m = L.nn.Linear(1, 1)
        m.register_full_backward_hook(lambda *a: None)
        err = raised(m.register_backward_hook, lambda *a: None)
        n = L.nn.Linear(1, 1)
        n.register_backward_hook(lambda *a: None)
        err2 = raised(n.register_full_backward_hook, lambda *a: None)
        h = m.register_forward_hook(lambda *a: None)
        before = len(m._forward_hooks)
        with h:
            pass
        return err, err2, before, len(m._forward_hooks)

    compare(scenario)


def test_state_dict_and_load_hooks(compare):
    def scenario(L):
        log = []
        m = L.nn.Linear(1, 1)
        m.register_state_dict_pre_hook(lambda mod, prefix, keep: log.append(("pre", prefix)))
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: log.append(
            ("post", list(sd))))
        m.register_load_state_dict_post_hook(lambda mod, keys: log.append(
            ("load", keys.missing_keys)))
        sd = m.state_dict()
        m.load_state_dict(sd)
        return log

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Containers
# --------------------------------------------------------------------------------------------


def test_sequential_operations(compare):
    def scenario(L):
        a, b, c = L.nn.Linear(1, 2), L.nn.ReLU(), L.nn.Linear(2, 1)
        s = L.nn.Sequential(a, b, c)
        out = [s[0] is a, s[-1] is c, type(s[1:]).__name__, repr(s[1:]), len(s),
               [type(x).__name__ for x in s], raised(lambda: s[3]), raised(lambda: s[-4])]
        s.append(L.nn.Tanh())
        s.insert(1, L.nn.Sigmoid())
        s.extend([L.nn.Identity()])
        out.append(repr(s))
        del s[1]
        out.append(list(s._modules))
        s[0] = L.nn.Linear(1, 2)
        out.append(repr(s + L.nn.Sequential(L.nn.ReLU())))
        out.append(raised(lambda: s + 3))
        out.append(repr(L.nn.Sequential(L.nn.ReLU()) * 2))
        out.append(type(s.pop(0)).__name__)
        out.append(raised(s.insert, 9, L.nn.ReLU()))
        od = L.nn.Sequential(OrderedDict([("x", L.nn.ReLU())]))
        out.append((list(od._modules), od.x is od[0]))
        return out

    compare(scenario)


def test_sequential_forward(compare):
    def scenario(L):
        L.manual_seed(0)
        s = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.ReLU(), L.nn.Linear(4, 2))
        return s(L.ones(2, 3))

    compare(scenario, rtol=1e-5)


def test_modulelist_and_moduledict(compare):
    def scenario(L):
        ml = L.nn.ModuleList([L.nn.Linear(1, 1), L.nn.ReLU()])
        ml.append(L.nn.Tanh())
        ml.extend([L.nn.Sigmoid()])
        ml.insert(0, L.nn.Identity())
        out = [len(ml), type(ml[-1]).__name__, type(ml[1:3]).__name__, len(ml[1:3]),
               [type(x).__name__ for x in ml], repr(ml), raised(lambda: ml[10]),
               raised(ml.extend, 5), len(list(ml.parameters()))]
        del ml[0]
        out.append(list(ml._modules))
        out.append(repr(ml + L.nn.ModuleList([L.nn.ReLU()])))
        md = L.nn.ModuleDict({"b": L.nn.ReLU(), "a": L.nn.Linear(1, 1)})
        md["c"] = L.nn.Tanh()
        out += [list(md.keys()), "a" in md, len(md), [type(v).__name__ for v in md.values()],
                repr(md), type(md.pop("b")).__name__, list(md)]
        md.update([("z", L.nn.ReLU())])
        out.append(list(md.keys()))
        out.append(raised(md.update, 3))
        out.append(raised(md.update, [("a",)]))
        return out

    compare(scenario)


def test_parameter_list_and_dict(compare):
    def scenario(L):
        pl = L.nn.ParameterList([L.zeros(2), L.nn.Parameter(L.ones(3))])
        pl.append(L.ones(1))
        out = [len(pl), [type(p).__name__ for p in pl], repr(pl), list(pl.state_dict()),
               [n for n, _ in pl.named_parameters()], raised(pl), len(pl[1:])]
        pd = L.nn.ParameterDict({"b": L.zeros(1), "a": L.ones(1)})
        pd["c"] = L.nn.Parameter(L.ones(2))
        out += [list(pd.keys()), repr(pd), "a" in pd, type(pd["a"]).__name__,
                [n for n, _ in pd.named_parameters()], raised(lambda: pd[3])]
        return out

    compare(scenario)


def test_identity_flatten_unflatten(compare):
    def scenario(L):
        x = L.arange(24.0).reshape(2, 3, 4)
        return (L.nn.Identity()(x) is x, L.nn.Flatten()(x).shape, L.nn.Flatten(0, -1)(x).shape,
                L.nn.Unflatten(2, (2, 2))(x).shape, raised(L.nn.Unflatten, 1, (2, 2.0)),
                raised(L.nn.Unflatten, 1, 4))

    compare(scenario)


# --------------------------------------------------------------------------------------------
# Parameter
# --------------------------------------------------------------------------------------------


def test_parameter_basics(compare):
    def scenario(L):
        t = L.ones(2)
        p = L.nn.Parameter(t)
        q = L.nn.Parameter(L.ones(2), requires_grad=False)
        e = L.nn.Parameter()
        t.add_(1.0)  # shares memory with the wrapped tensor
        return (repr(p), repr(q), repr(e), isinstance(p, L.Tensor),
                isinstance(p, L.nn.Parameter), p.requires_grad, p.is_leaf,
                type(p * 2).__name__, type(p.detach()).__name__, type(p.data).__name__,
                type(p[0]).__name__, type(p.clone()).__name__,
                raised(L.nn.Parameter, L.tensor([1, 2])), p)

    compare(scenario)


def test_parameter_deepcopy_and_double_repr(compare):
    def scenario(L):
        p = L.nn.Parameter(L.tensor([1.5, 2.0], dtype=L.float64))
        c = copy.deepcopy(p)
        memo = {}
        a = copy.deepcopy([p, p], memo)
        return repr(c), type(c).__name__, c is not p, a[0] is a[1], c.requires_grad

    compare(scenario)


def test_forward_not_implemented(compare):
    def scenario(L):
        class NoForward(L.nn.Module):
            pass

        return raised(NoForward(), L.ones(1)), raised(L.nn.Module())

    compare(scenario)


def test_incompatible_keys_repr(compare):
    def scenario(L):
        m = L.nn.Linear(1, 1)
        r = m.load_state_dict(m.state_dict())
        r2 = m.load_state_dict({}, strict=False)
        return repr(r), str(r), repr(r2), tuple(r2)

    compare(scenario)


def test_embedding_padding_row_and_from_pretrained(compare):
    def scenario(L):
        L.manual_seed(0)
        e = L.nn.Embedding(4, 3, padding_idx=1)
        pre = L.nn.Embedding.from_pretrained(L.ones(2, 3))
        y = e(L.tensor([1, 3]))
        y.sum().backward()
        return e.weight[1], e.weight.grad, pre.weight.requires_grad, repr(pre), \
            raised(L.nn.Embedding, 3, 2, padding_idx=3)

    compare(scenario)


def test_module_called_with_none_results_in_torch_error(compare):
    """Unknown attribute on a module gives torch's AttributeError."""

    def scenario(L):
        return raised(lambda: L.nn.Linear(1, 1).wieght)

    compare(scenario)


def test_backward_hooks_with_tuple_output_and_constant_input(compare):
    """Outputs without gradient show as None in grad_output, zeros in grad_input."""

    def scenario(L):
        log = []

        class Two(L.nn.Module):
            def forward(self, x, y):
                return x * 2, y * 3

        def show(gs):
            return [None if g is None else g.clone() for g in gs]

        m = Two()
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", show(go))))
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("bwd", show(gi),
                                                                         show(go))))
        x = L.ones(2, requires_grad=True)
        y = L.ones(2, requires_grad=True)
        a, b = m(x, y)
        a.sum().backward()
        log.append((type(a.grad_fn).__name__, x.grad, y.grad))
        a, b = m(L.ones(2), y)
        (b * 2).sum().backward()
        log.append((y.grad, a.requires_grad, a.grad_fn))
        return log

    compare(scenario)


def test_cuda_is_not_available(compare):
    def scenario(L):
        m = L.nn.Linear(1, 1)
        return raised(m.cuda), raised(m.to, "cuda"), raised(m.to, "cuda:0")

    compare(scenario)


def test_softmax_without_dim_warns_like_torch(compare):
    def scenario(L):
        x = L.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
        return L.nn.Softmax()(x), L.nn.LogSoftmax()(x), L.nn.Softmin()(x)

    compare(scenario)
