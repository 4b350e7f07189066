"""Lazy modules, NLLLoss2d, LinearCrossEntropyLoss, nn.factory_kwargs and nn.grad against
torch: what the modules become and their values after the same seed."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

LAZY = [
    ("LazyLinear", (3,), (2, 5)), ("LazyLinear", (3, False), (4, 2, 7)),
    ("LazyConv1d", (4, 3), (2, 3, 9)), ("LazyConv2d", (4, 3), (2, 3, 6, 6)),
    ("LazyConv2d", (4, 3, 1, 1, 1, 2), (4, 6, 6)),  # unbatched, groups
    ("LazyConv3d", (2, 2), (1, 2, 4, 4, 4)), ("LazyConvTranspose1d", (4, 3), (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3, 2), (2, 3, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), (1, 2, 3, 3, 3)),
    ("LazyBatchNorm1d", (), (4, 3)), ("LazyBatchNorm2d", (), (2, 3, 4, 4)),
    ("LazyBatchNorm3d", (1e-3, 0.2, False), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (2, 3, 5)), ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("name,args,shape", LAZY)
def test_lazy_module(lib, name, args, shape):
    seen = []
    for L in (torch, lib):
        L.manual_seed(0)
        module = getattr(L.nn, name)(*args)
        before = (repr(module), type(module).__name__,
                  sorted(k for k, v in module.state_dict(keep_vars=True).items()))
        L.manual_seed(1)
        out = module(L.randn(*shape))
        after = (repr(module), type(module).__name__, {
            k: v.detach().numpy().copy() for k, v in module.state_dict().items()})
        seen.append((before, after, out.detach().numpy()))
    (tb, ta, tout), (lb, la, lout) = seen
    assert lb == tb
    assert la[:2] == ta[:2]
    assert la[2].keys() == ta[2].keys()
    for key in ta[2]:
        np.testing.assert_allclose(la[2][key], ta[2][key], rtol=1e-6, atol=1e-7, err_msg=key)
    np.testing.assert_allclose(lout, tout, rtol=1e-5, atol=1e-6)


def test_uninitialized_parameter(compare):
    def scenario(L):
        p = L.nn.UninitializedParameter()
        kinds = (repr(p), type(p).__name__, isinstance(p, L.nn.Parameter))
        p.materialize((2, 3))
        return kinds + (type(p).__name__, tuple(p.shape), p.requires_grad)

    compare(scenario)
    compare(lambda L: L.nn.UninitializedParameter().shape)
    compare(lambda L: (repr(L.nn.UninitializedBuffer()), type(L.nn.UninitializedBuffer(
        ).__class__.__mro__[1]).__name__))


def test_lazy_load_state_dict(lib):
    for L in (torch, lib):
        L.manual_seed(0)
        source = L.nn.Linear(5, 3)
        lazy = L.nn.LazyLinear(3)
        lazy.load_state_dict(source.state_dict())
        assert tuple(lazy.weight.shape) == (3, 5)
        assert (lazy.weight == source.weight).all()
        lazy(L.ones(2, 5))
        assert type(lazy).__name__ == "Linear"


def test_lazy_errors(compare):
    compare(lambda L: L.nn.LazyConv2d(4, 3)(L.ones(2, 3)))
    compare(lambda L: L.nn.LazyConv2d(4, 3, groups=2)(L.ones(1, 3, 5, 5)))


def test_nll_loss_2d(compare):
    def scenario(L):
        loss = L.nn.NLLLoss2d()
        x = L.log_softmax(L.arange(24.0).reshape(1, 3, 2, 4), 1)
        return type(loss).__mro__[1].__name__, loss(x, L.tensor([[[0, 1, 2, 0], [1, 1, 0, 2]]]))

    compare(scenario)


def test_linear_cross_entropy_loss(compare):
    def scenario(L):
        L.manual_seed(283)
        loss = L.nn.LinearCrossEntropyLoss(5, 10, out_features=(4, 3), bias=True)
        x = L.randn(2, 5, requires_grad=True)
        target = L.randint(0, 10, (2, 4, 3))
        out = loss(x, target)
        out.backward()
        options = L.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
        chunked = L.nn.LinearCrossEntropyLoss(5, 10, options=options)
        return repr(loss), out, x.grad, chunked(L.randn(4, 5), L.randint(0, 10, (4,))), options

    compare(scenario, rtol=1e-5)
    compare(lambda L: L.nn.LinearCrossEntropyOptions(acc_policy="fast"))
    compare(lambda L: L.nn.LinearCrossEntropyOptions(chunking_method="rows"))
    compare(lambda L: L.nn.LinearCrossEntropyLoss(5, 10, weight=L.ones(3)))


def test_factory_kwargs(compare):
    compare(lambda L: L.nn.factory_kwargs({"device": "cpu", "factory_kwargs": {
        "dtype": L.float64}}))
    compare(lambda L: L.nn.factory_kwargs(None))
    compare(lambda L: L.nn.factory_kwargs({"dtype": L.float64, "factory_kwargs": {
        "dtype": L.float32}}))
    compare(lambda L: sorted(L.nn.factory_kwargs({"colour": 1})))


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_conv_grads(compare, dims):
    # inputs from NumPy: torch's own random draws differ in their last bits by CPU kernels
    rng = np.random.default_rng(dims)
    arrays = [rng.standard_normal((2, 4, *([5] * dims))).astype(np.float32),
              rng.standard_normal((6, 2, *([3] * dims))).astype(np.float32),
              rng.standard_normal((2, 6, *([3] * dims))).astype(np.float32)]

    def scenario(L):
        x, w, g = (L.tensor(a) for a in arrays)
        conv = getattr(L.nn.functional, f"conv{dims}d")
        assert tuple(conv(x, w, None, 2, 1, 1, 2).shape) == tuple(g.shape)
        grad = L.nn.grad
        return (getattr(grad, f"conv{dims}d_input")(x.shape, w, g, 2, 1, 1, 2),
                getattr(grad, f"conv{dims}d_weight")(x, w.shape, g, 2, 1, 1, 2))

    compare(scenario, rtol=1e-5, atol=1e-6)
