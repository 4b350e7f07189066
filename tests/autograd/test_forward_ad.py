"""Forward-mode AD (``autograd.forward_ad``) on every op of the registry, against torch.

Every differentiable sample of ``tests/ops/op_samples.py`` and every case of the functional
table of ``tests/nn/test_functional.py`` (together they reach every registry entry; see their
coverage tests) is run with dual inputs carrying random tangents. For each one:

* the output's tangent equals torch's forward-mode tangent (where torch implements forward
  AD for the op);
* forward and reverse mode agree: ``<u, J v> == <J^T u, v>`` with the library's own
  reverse mode, for a random cotangent ``u``;
* the tangent matches central finite differences of the forward.

Plus the API: levels, ``make_dual``/``unpack_dual`` and torch's errors, and tangents that
themselves carry reverse-mode history.
"""

from __future__ import annotations

import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
from op_samples import SAMPLES
from torchcompare import assert_values, dtype_name, to_numpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "nn"))
import test_functional as nn_table  # noqa: E402

F64 = {"rtol": 1e-7, "atol": 1e-10}

# torch's first dual op imports modules that warn (torch.jit.script is deprecated): once here,
# so that the compared scenarios see only their own warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    with torch.autograd.forward_ad.dual_level():
        torch.autograd.forward_ad.make_dual(torch.ones(1), torch.ones(1)) * 2


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _is_float(t) -> bool:
    return dtype_name(t.dtype).startswith(("float", "double"))


class Item:
    """One call: ``call(L, *inputs)``, with its inputs and the positions carrying tangents."""

    def __init__(self, id, call, make, positions, torch_check=True):
        self.id = id
        self.torch_check = torch_check
        self.call = call
        self.make = make  # make(L, requires_grad) -> inputs
        self.positions = positions

    def tangents(self, L, inputs):
        rng = np.random.default_rng(zlib.crc32(self.id.encode()) + 7)
        return [L.tensor(rng.standard_normal(tuple(inputs[p].shape))) for p in self.positions]


ITEMS: list[Item] = []
for _s in SAMPLES:
    if _s.differentiable:
        ITEMS.append(Item(
            "ops:" + _s.id,
            lambda L, *xs, _s=_s: _s.fn(L, *xs),
            lambda L, rg, _s=_s: _s.make_inputs(L, "float64", rg),
            _s.diff_positions(),
            torch_check=_s.id.split("-")[-2] == "0",  # op-<n>-<shapes>: the first
        ))
for _c in nn_table.CASES:
    if _c.grad:
        _pos = [i for i, a in enumerate(_c.args) if a.diff and a.floating]
        if _pos:
            ITEMS.append(Item(
                "nn:" + _c.id,
                lambda L, *xs, _c=_c: _c.fn(L, L.nn.functional, *xs),
                lambda L, rg, _c=_c: _c.inputs(L, "float64", rg),
                _pos,
            ))


def _over_reverse(fn):
    """The gradient of ``fn`` (create_graph=True) as a function of x: its tangent runs the
    backward rules' own ops (tanh_backward, ...) in forward mode."""

    def call(L, x):
        w = L.ones(tuple(x.shape), dtype=x.dtype, requires_grad=True)
        return L.autograd.grad(fn(L, x * w).sum(), w, create_graph=True)[0]

    return call


_TARGET = np.array([1, 0, 4, 2])
for _name, _fn in {
    "tanh": lambda L, x: x.tanh() ** 2,
    "sigmoid": lambda L, x: x.sigmoid() ** 2,
    "relu": lambda L, x: L.relu(x) ** 2,
    "gelu": lambda L, x: L.nn.functional.gelu(x) ** 2,
    "cross_entropy": lambda L, x: L.nn.functional.cross_entropy(x, L.tensor(_TARGET)) ** 2,
}.items():
    ITEMS.append(Item(
        "over_reverse:" + _name,
        lambda L, x, _fn=_fn: _over_reverse(_fn)(L, x),
        lambda L, rg, _name=_name: [L.tensor(
            np.random.default_rng(len(_name)).standard_normal((4, 5)) + 0.05,
            requires_grad=rg)],
        [0],
    ))
ITEMS.append(Item(
    "nn:cross_entropy_class_indices",
    lambda L, x: L.nn.functional.cross_entropy(x, L.tensor(_TARGET)),
    lambda L, rg: [L.tensor(np.random.default_rng(3).standard_normal((4, 5)), requires_grad=rg)],
    [0],
))


def _rng_inputs(seed, *shapes, lo=None):
    def make(L, rg):
        rng = np.random.default_rng(seed)
        out = []
        for sh in shapes:
            v = rng.standard_normal(sh) if lo is None else rng.uniform(lo, lo + 2, sh)
            out.append(L.tensor(v, requires_grad=rg))
        return out

    return make


def _seeded_layer(name, **kw):
    """A recurrent layer built after the same seed in both libraries, in float64."""

    def call(L, x, h):
        L.manual_seed(0)
        layer = getattr(L.nn, name)(3, 4, **kw).double()
        state = (h, h) if name == "LSTM" else h
        out, _ = layer(x, state)
        return out

    return call


def _packed(L, x, h):  # pack_padded / pad_packed around an LSTM
    L.manual_seed(0)
    layer = L.nn.LSTM(3, 4).double()
    packed = L.nn.utils.rnn.pack_padded_sequence(x, [5, 3], enforce_sorted=True)
    out, _ = layer(packed, (h, h))
    return L.nn.utils.rnn.pad_packed_sequence(out)[0]


# registry entries that op_samples does not reach (the recurrent layers have their own
# tests; gammainc is differentiable in x only; diagonal's backward is met under double backward)
for _name, _call_fn in {"lstm": _seeded_layer("LSTM"), "gru": _seeded_layer("GRU"),
                        "rnn_tanh": _seeded_layer("RNN"),
                        "rnn_relu": _seeded_layer("RNN", nonlinearity="relu"),
                        "packed_lstm": _packed}.items():
    ITEMS.append(Item("layer:" + _name, _call_fn, _rng_inputs(1, (5, 2, 3), (1, 2, 4)), [0, 1]))
ITEMS.append(Item("ops:gammainc_x", lambda L, x: L.special.gammainc(L.tensor([[1.5, 2.0, 0.7]],
                                                                          dtype=L.float64), x),
                  _rng_inputs(2, (2, 3), lo=0.3), [0]))
ITEMS.append(Item("over_reverse:diagonal",
                  lambda L, x: _over_reverse(lambda L2, y: L2.diagonal(y, 1) ** 2)(L, x),
                  _rng_inputs(3, (3, 4)), [0]))
# complex ops and torch.fft, met from real inputs to real outputs (ops/complex.py, ops/fft.py)
for _name, _call_fn, _n in [
    ("complex_polar", lambda L, x, y: L.view_as_real(
        L.polar(x.abs() + 1, y) * L.complex(x, y).conj()), 2),
    ("complex_parts", lambda L, x, y: L.view_as_complex(L.stack([x, y], -1)).conj_physical()
     .angle() + L.complex(x, y).conj().resolve_conj().imag + L.complex(y, x).real, 2),
    ("fft", lambda L, x, y: L.view_as_real(L.fft.fftn(L.fft.rfft(x) * L.fft.fft(y)[:, :3])), 2),
    ("hfft", lambda L, x, y: L.fft.hfft(L.fft.ihfft(x) * 2) + L.fft.irfft(L.fft.rfft(y)), 2),
    ("roll", lambda L, x, y: L.roll(x, 1, 0) * y, 2),
]:
    ITEMS.append(Item("complex:" + _name, _call_fn, _rng_inputs(5, *[(3, 4)] * _n),
                      list(range(_n))))
# antialiased interpolation and lanczos (ops/resample_aa.py: torchvision's resizes)
for _mode in ("bilinear", "bicubic", "lanczos"):
    ITEMS.append(Item(f"ops:interpolate_aa_{_mode}", lambda L, x, _mode=_mode: (
        L.nn.functional.interpolate(x, size=(3, 7), mode=_mode, antialias=True)),
        _rng_inputs(7, (1, 2, 6, 5)), [0]))
IDS = [i.id for i in ITEMS]
# as_strided_scatter: torch 2.13's backward is not the derivative (it fails torch's gradcheck;
# tests/ops/test_view_scatter.py), its forward mode is
ITEMS.append(Item("ops:as_strided_scatter", lambda L, x, y: L.as_strided_scatter(
    x, y, (2, 2), (1, 2), 1), _rng_inputs(6, (3, 3), (2, 2)), [0, 1]))
IDS.append("ops:as_strided_scatter")
REVERSE_IS_NOT_THE_DERIVATIVE = {"nn:embedding_padding_idx", "nn:embedding_negative_padding_idx",
                                 "nn:embedding_scale_grad", "ops:as_strided_scatter"}
# torch 2.13's forward-mode formula for cholesky_inverse is not the derivative (it differs from
# finite differences by 5e-2 on this sample, while -X (dL L^H + L dL^H) X agrees to 1e-11):
# reverse mode and finite differences still check tapegrad's tangent
TORCH_FORWARD_AD_IS_WRONG = {"ops:cholesky_inverse-0-3x3"}


def _call(item, L, inputs):
    L.manual_seed(0)  # the random ops (dropout, rrelu) draw the same values every call
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _flat(item.call(L, *inputs))


def forward_mode(item, L, requires_grad=False):
    """``(inputs, tangents, outputs, output tangents)``, a None tangent as zeros."""
    fw = L.autograd.forward_ad
    inputs = item.make(L, requires_grad)
    tangents = item.tangents(L, inputs)
    with fw.dual_level():
        args = list(inputs)
        for p, t in zip(item.positions, tangents, strict=True):
            args[p] = fw.make_dual(inputs[p], t)
        outs = _call(item, L, args)
        pairs = [fw.unpack_dual(o) for o in outs if _is_float(o)]
        result = [(to_numpy(p.detach()),
                   np.zeros(tuple(p.shape)) if t is None else to_numpy(t.detach()))
                  for p, t in pairs]
    return inputs, tangents, result


@pytest.mark.parametrize("item", ITEMS, ids=IDS)
def test_tangents_match_torch_reverse_mode_and_finite_differences(item, lib, lib_name):
    """Forward-mode tangents of every op: torch's, reverse mode's and finite differences'."""
    try:
        inputs, tangents, got = forward_mode(item, lib)
    except (NotImplementedError, RuntimeError) as e:
        if lib_name == "torch" and ("forward AD" in str(e) or "not implemented" in str(e)):
            pytest.skip("torch has no forward-mode derivative for this op")
        raise
    assert got, "no floating output"

    # torch's forward mode, where torch implements it for the op (on the first sample of
    # each op family: torch's forward mode is slow, the other checks run on every sample)
    want = None
    if item.torch_check and item.id not in TORCH_FORWARD_AD_IS_WRONG:
        try:
            _, _, want = forward_mode(item, torch)
        except (NotImplementedError, RuntimeError) as e:
            assert "forward AD" in str(e) or "not implemented" in str(e), str(e)
    if want is not None:
        assert len(want) == len(got)
        for (wp, wt), (gp, gt) in zip(want, got, strict=True):
            assert_values(wp, gp, what="primal", **F64)
            assert_values(wt, gt, what="tangent (torch forward AD)", **F64)

    # reverse mode: <u, J v> == <J^T u, v>; not for embedding's padding row and frequency
    # scaling, whose backward (torch's too) is by convention not the derivative of the forward
    if item.id not in REVERSE_IS_NOT_THE_DERIVATIVE:
        rin = item.make(lib, True)
        outs = [o for o in _call(item, lib, rin) if _is_float(o)]
        diff_outs = [o for o in outs if o.requires_grad]
        rng = np.random.default_rng(zlib.crc32(item.id.encode()) + 8)
        us = [rng.standard_normal(tuple(o.shape)) for o in outs]
        lhs = sum(float((u * t).sum()) for u, (_, t) in zip(us, got, strict=True))
        if diff_outs:
            du = [lib.tensor(u) for u, o in zip(us, outs, strict=True) if o.requires_grad]
            gs = lib.autograd.grad(diff_outs, [rin[p] for p in item.positions], du,
                                   allow_unused=True)
            rhs = sum(float((to_numpy(g) * to_numpy(v)).sum())
                      for g, v in zip(gs, tangents, strict=True) if g is not None)
        else:
            rhs = 0.0
        assert abs(lhs - rhs) <= 1e-8 * (1 + abs(rhs)), (lhs, rhs)

    # central finite differences
    eps = 1e-6
    arrays = [to_numpy(x) for x in item.make(lib, False)]

    def shifted(sign):
        xs = item.make(lib, False)
        for p, t in zip(item.positions, tangents, strict=True):
            xs[p] = lib.tensor(arrays[p] + sign * eps * to_numpy(t))
        return [to_numpy(o) for o in _call(item, lib, xs) if _is_float(o)]

    plus, minus = shifted(1.0), shifted(-1.0)
    for (_, t), a, b in zip(got, plus, minus, strict=True):
        assert_values((a - b) / (2 * eps), t, what="tangent (finite differences)",
                      rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------------------
# Coverage: every differentiable registry entry gets a tangent in the samples above
# --------------------------------------------------------------------------------------------


def test_every_registry_op_gets_a_tangent(lib_name, monkeypatch):
    """Running the samples in forward mode computes a tangent through every registry entry
    that has a backward rule."""
    if lib_name == "torch":
        pytest.skip("coverage of tapegrad's op registry")
    import tapegrad
    from tapegrad.autograd import forward_ad
    from tapegrad.ops._registry import REGISTRY

    seen: set[str] = set()
    real = forward_ad._tangent_of

    def spy(op, *args, **kwargs):
        seen.add(op.name)
        return real(op, *args, **kwargs)

    monkeypatch.setattr(forward_ad, "_tangent_of", spy)
    for item in ITEMS:
        forward_mode(item, tapegrad)
    # ctc_loss_backward (the gradient of ctc_loss), floor_divide and number % tensor
    # (remainder_scalar_tensor) have no derivative, in torch either: test_ops_without_a_derivative
    # heaviside has no derivative in torch (its samples are not differentiable), nor have
    # linalg.ldl_factor_ex, ldl_solve and the gradient of segment_reduce; torch raises "Trying to
    # use forward AD with ... that does not support it" for batch_norm_update_stats and grouped_mm.
    # ops/spatial.py's entries register when that module is first imported, whichever test does
    # it: import it here so the check does not depend on the order tests run in. Their tangents
    # are checked by test_spatial_ops_tangents below.
    from tapegrad.ops import spatial

    # Entries that only name a node in the reverse-mode graph: the in-place comparisons (their
    # tangent is set by ops/inplace.py, checked by the "inplace" items), the chunked
    # linear_cross_entropy's identity nodes, and the zero-derivative links of second-order nodes.
    # (torchvision's ops, registered when tapegrad.vision.ops is first imported, whichever test
    # does it, are tested in tests/vision/ops)
    _RECORD_ONLY = {n for n in REGISTRY if n.startswith(("link:", "linear_cross_entropy_chunked",
                                                         "torchvision."))
                    or n.endswith("_inplace") and n.split("_")[0] in ("eq", "ne", "lt", "le",
                                                                          "gt", "ge")}
    # Entries without a gradient (``nondiff``: argmax, comparisons, ...) have no tangent.
    _RECORD_ONLY |= {n for n, op in REGISTRY.items() if not op.differentiable}
    missing = sorted(set(REGISTRY) - seen - {"ctc_loss_backward", "floor_divide", "heaviside",
                                             "remainder_scalar_tensor",
                                             "linalg_ldl_factor_ex", "linalg_ldl_solve",
                                             "segment_reduce_backward", "batch_norm_update_stats",
                                             "grouped_mm"}
                     - set(spatial.NAMES) - _RECORD_ONLY - _view_copy_entries())
    assert not missing, " ".join(missing)


def _view_copy_entries() -> set:
    """ops/view_copies.py's entries (torch.permute_copy, ...) register on first use, whichever
    test does it first; their tangents are checked by test_view_copies_tangents below."""
    from tapegrad.ops import view_copies

    return {n.split(":")[0] for n in view_copies.NAMES} | set(view_copies.NAMES)


_VIEW_COPIES = {
    "alias_copy": lambda L, a: L.alias_copy(a),
    "as_strided_copy": lambda L, a: L.as_strided_copy(a, (2, 2), (1, 2)),
    "diagonal_copy": lambda L, a: L.diagonal_copy(a),
    "expand_copy": lambda L, a: L.expand_copy(a.unsqueeze(0), (2, 3, 4)),
    "permute_copy": lambda L, a: L.permute_copy(a, (1, 0)),
    "split_with_sizes_copy": lambda L, a: L.split_with_sizes_copy(a, [1, 2])[1],
    "squeeze_copy": lambda L, a: L.squeeze_copy(a.unsqueeze(0)),
    "t_copy": lambda L, a: L.t_copy(a),
    "transpose_copy": lambda L, a: L.transpose_copy(a, 0, 1),
    "unbind_copy": lambda L, a: L.unbind_copy(a)[1],
    "unfold_copy": lambda L, a: L.unfold_copy(a, 1, 2, 1),
    "unsqueeze_copy": lambda L, a: L.unsqueeze_copy(a, 1),
    "view_copy": lambda L, a: L.view_copy(a, (12,)),
}


@pytest.mark.parametrize("name", sorted(_VIEW_COPIES))
def test_view_copies_tangents(name, lib_name):
    """Forward-mode tangents of the *_copy ops equal torch's."""
    if lib_name == "torch":
        pytest.skip("compares tapegrad's tangents with torch's")
    import tapegrad

    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    got = []
    for L in (torch, tapegrad):
        fa = L.autograd.forward_ad
        with fa.dual_level():
            dual = fa.make_dual(L.tensor(x), L.tensor(t))
            got.append(to_numpy(fa.unpack_dual(_VIEW_COPIES[name](L, dual)).tangent))
    np.testing.assert_allclose(got[1], got[0], rtol=1e-12, atol=0)


def _spatial_cases():
    rng = np.random.default_rng(0)
    x, x3 = rng.standard_normal((1, 4, 5, 5)), rng.standard_normal((1, 2, 6, 6, 6))

    def frac(dims, n):
        return lambda L, a: getattr(L.nn.functional, f"fractional_max_pool{dims}d")(
            a, 2, output_size=3, _random_samples=L.full((1, n, dims), 0.5, dtype=L.float64))

    return {
        "grid_sampler_2d": (lambda L, a, g: L.nn.functional.grid_sample(a, g, align_corners=False),
                            x, rng.uniform(-1, 1, (1, 3, 3, 2))),
        "grid_sampler_3d": (lambda L, a, g: L.nn.functional.grid_sample(a, g, align_corners=True),
                            x3, rng.uniform(-1, 1, (1, 2, 2, 2, 3))),
        "affine_grid_generator": (lambda L, th: L.nn.functional.affine_grid(
            th, (1, 1, 4, 4), align_corners=False), rng.standard_normal((1, 2, 3))),
        "channel_shuffle": (lambda L, a: L.nn.functional.channel_shuffle(a, 2), x),
        "fractional_max_pool2d": (frac(2, 4), x),
        "fractional_max_pool3d": (frac(3, 2), x3),
    }


@pytest.mark.parametrize("name", sorted(_spatial_cases()))
def test_spatial_ops_tangents(name, lib_name):
    """Forward-mode tangents of ops/spatial.py's entries equal J @ t, with J torch's Jacobian
    (torch has no forward-mode formula for the grid samplers, so J is taken in reverse mode)."""
    if lib_name == "torch":
        pytest.skip("compares tapegrad's tangents with torch's Jacobian")
    import tapegrad

    fn, *arrays = _spatial_cases()[name]
    rng = np.random.default_rng(1)
    tangents = [rng.standard_normal(a.shape) for a in arrays]
    fa = tapegrad.autograd.forward_ad
    with fa.dual_level():
        duals = [fa.make_dual(tapegrad.tensor(a), tapegrad.tensor(t))
                 for a, t in zip(arrays, tangents, strict=True)]
        got = to_numpy(fa.unpack_dual(fn(tapegrad, *duals)).tangent)
    jac = torch.autograd.functional.jacobian(lambda *xs: fn(torch, *xs),
                                             tuple(torch.tensor(a) for a in arrays))
    jac = jac if isinstance(jac, tuple) else (jac,)
    want = sum(np.tensordot(j.numpy(), t, axes=t.ndim)
               for j, t in zip(jac, tangents, strict=True))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------------------------------
# The API
# --------------------------------------------------------------------------------------------


def test_ops_without_a_derivative(lib):
    """floor_divide and ctc_loss's gradient: torch's NotImplementedError."""

    def run(L, fn):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(L.tensor([1.5, 2.5]), L.ones(2))
            fn(x)

    for fn in (lambda x: x // 2, lambda x: 5 % x):
        with pytest.raises(NotImplementedError) as want:
            run(torch, fn)
        with pytest.raises(NotImplementedError) as got:
            run(lib, fn)
        assert str(got.value) == str(want.value)


def test_make_dual_outside_a_level(lib):
    with pytest.raises(RuntimeError) as want:
        torch.autograd.forward_ad.make_dual(torch.ones(2), torch.ones(2))
    with pytest.raises(RuntimeError) as got:
        lib.autograd.forward_ad.make_dual(lib.ones(2), lib.ones(2))
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("case", ["shape", "int_primal", "twice", "nested", "exit_twice"])
def test_errors(compare, case):
    def scenario(L):
        fw = L.autograd.forward_ad
        if case == "exit_twice":
            fw.enter_dual_level()
            fw.exit_dual_level()
            fw.exit_dual_level()
        with fw.dual_level():
            if case == "shape":
                fw.make_dual(L.ones(3), L.ones(4))
            elif case == "int_primal":
                fw.make_dual(L.tensor([1, 2]), L.tensor([1, 2]))
            elif case == "twice":
                fw.make_dual(fw.make_dual(L.ones(2), L.ones(2)), L.ones(2))
            else:
                with fw.dual_level():
                    pass

    compare(scenario)


def test_levels_unpack_and_tangent_lifetime(lib):
    fw = lib.autograd.forward_ad
    x = lib.tensor([1.0, 2.0])
    with fw.dual_level() as level:
        assert level == 0
        d = fw.make_dual(x, lib.tensor([1.0, -1.0]))
        u = fw.unpack_dual(d)
        assert type(u).__name__ == "UnpackedDualTensor" and u._fields == ("primal", "tangent")
        assert fw.unpack_dual(x).tangent is None
        y = d * 3
        np.testing.assert_array_equal(to_numpy(fw.unpack_dual(y).tangent), [3.0, -3.0])
        np.testing.assert_array_equal(to_numpy(u.primal), [1.0, 2.0])
        assert fw.unpack_dual(u.primal).tangent is None
    assert fw.unpack_dual(y).tangent is None  # tangents end with their level
    assert fw.enter_dual_level() == 0
    fw.exit_dual_level()


def test_in_place_ops_and_views_update_tangents(lib):
    """In-place ops (on the tensor and on a view of it) carry tangents as torch's do."""

    def run(L):
        fw = L.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(L.tensor([1.0, 2.0, 3.0], dtype=L.float64),
                             L.tensor([1.0, 0.5, -1.0], dtype=L.float64))
            y = x.clone()
            y.mul_(x)
            y[1:].add_(x[:2] * 2)
            z = y.exp_()
            return [to_numpy(t) for t in fw.unpack_dual(z)]

    for a, b in zip(run(torch), run(lib), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_reverse_over_forward(lib):
    """A tangent computed while grad mode records has a graph: differentiating it gives the
    mixed second derivative, as torch's."""

    def run(L):
        fw = L.autograd.forward_ad
        x = L.tensor([0.3, -1.2, 2.0], dtype=L.float64, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x, L.tensor([1.0, 2.0, -0.5], dtype=L.float64))
            y = (d.sin() * d.exp().sum() + L.nn.functional.softplus(d) * d.tanh()).sum()
            t = fw.unpack_dual(y).tangent
        (g,) = L.autograd.grad(t, x)
        return to_numpy(t.detach()), to_numpy(g)

    for a, b in zip(run(torch), run(lib), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_no_dual_level_leaves_the_detour_off(lib_name):
    if lib_name == "torch":
        pytest.skip("tapegrad's internals")
    from tapegrad.ops import _registry

    assert _registry._SPECIAL is False


@pytest.mark.parametrize("shape", [(3,), (), (2, 3)])
def test_dual_tensor_repr(compare, shape):
    def scenario(L):
        fw = L.autograd.forward_ad
        n = int(np.prod(shape))
        x = L.tensor(np.linspace(-1, 2, n).reshape(shape))
        with fw.dual_level():
            d = fw.make_dual(x, L.tensor(np.linspace(0.5, 1, n).reshape(shape)))
            return repr(d), repr(d * 2), str(d.sum())

    compare(scenario)


def test_in_place_op_in_both_directions(lib):
    """An in-place op saving its result (exp_): forward over reverse reads the saved result's
    tangent, reverse over forward differentiates the in-place tangent."""

    def run(L):
        fw = L.autograd.forward_ad
        x0 = L.tensor([0.3, -0.5, 1.0], dtype=L.float64, requires_grad=True)
        with fw.dual_level():
            d = fw.make_dual(x0, L.tensor([1.0, 2.0, 3.0], dtype=L.float64))
            y = d * 1
            y.exp_()
            y = y * d
            (g,) = L.autograd.grad(y.sum(), x0, create_graph=True)
            t = fw.unpack_dual(g).tangent
            ty = fw.unpack_dual(y).tangent
        (gg,) = L.autograd.grad(ty.sum(), x0)
        return to_numpy(t.detach()), to_numpy(gg)

    for a, b in zip(run(torch), run(lib), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12)
