"""``autograd.graph.saved_tensors_hooks``, ``save_on_cpu`` and ``disable_saved_tensors_hooks``
against torch: which tensors are packed (one pack per saved tensor, in torch's numbers), what
backward receives, errors, nesting."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torchcompare import to_numpy


def _scenario(L, hooks):
    x = L.tensor([0.5, -1.0, 2.0], dtype=L.float64, requires_grad=True)
    w = L.tensor([1.5, 0.25, -0.5], dtype=L.float64, requires_grad=True)
    with hooks:
        y = (x.exp() * w).sin().sum() + (x * x).sum() + L.nn.functional.linear(x, w[None])
    gx, gw = L.autograd.grad(y.sum(), (x, w))
    return to_numpy(gx), to_numpy(gw)


@pytest.mark.parametrize("kind", ["identity", "numpy_copy", "save_on_cpu", "nested"])
def test_hooks_see_every_saved_tensor_and_gradients_are_unchanged(lib, kind):
    """The pack hook runs once per saved tensor (torch's count), unpack as many times, and the
    gradients equal torch's plain ones."""
    counts = {"pack": 0, "unpack": 0}

    def make(L):
        if kind == "save_on_cpu":
            return L.autograd.graph.save_on_cpu(pin_memory=False)

        def pack(t):
            counts["pack"] += 1
            return t.detach().numpy().copy() if kind == "numpy_copy" else t

        def unpack(p):
            counts["unpack"] += 1
            return L.tensor(p) if kind == "numpy_copy" else p

        hooks = L.autograd.graph.saved_tensors_hooks(pack, unpack)
        if kind == "nested":  # the innermost pair applies
            outer = L.autograd.graph.saved_tensors_hooks(lambda t: 1 / 0, lambda p: 1 / 0)

            class Both:
                def __enter__(self):
                    outer.__enter__()
                    hooks.__enter__()

                def __exit__(self, *exc):
                    hooks.__exit__(*exc)
                    outer.__exit__(*exc)

            return Both()
        return hooks

    want = _scenario(torch, make(torch))
    torch_counts = dict(counts)
    counts.update(pack=0, unpack=0)
    got = _scenario(lib, make(lib))
    for a, b in zip(want, got, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
    assert counts == torch_counts


def test_unpack_must_return_a_tensor(compare):
    def scenario(L):
        x = L.ones(3, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: 5, lambda p: 5):
            y = x.exp()
        y.sum().backward()

    compare(scenario)


def test_disable_saved_tensors_hooks(compare):
    def scenario(L):
        with L.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    compare(scenario)


def test_double_backward_through_hooked_tensors(lib):
    """The unpacked tensors keep their place in the graph: create_graph works as without."""

    def run(L):
        x = L.tensor([0.3, -0.7], dtype=L.float64, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
            y = (x.tanh() ** 3).sum()
        (g,) = L.autograd.grad(y, x, create_graph=True)
        (gg,) = L.autograd.grad(g.sum(), x)
        return to_numpy(g.detach()), to_numpy(gg)

    for a, b in zip(run(torch), run(lib), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-12)


def test_nodes_recorded_without_hooks_are_untouched(lib_name):
    """No hook active: the node keeps its tensors itself (no packing, its usual class)."""
    if lib_name == "torch":
        pytest.skip("tapegrad's node internals")
    import tapegrad

    x = tapegrad.ones(2, requires_grad=True)
    y = x.exp()
    assert type(y.grad_fn) is tapegrad.ops._registry.REGISTRY["exp"].node_cls
    with tapegrad.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        z = x.exp()
    assert type(z.grad_fn).__name__ == "ExpBackward0"
    assert type(z.grad_fn) is not type(y.grad_fn)
    assert tapegrad.ops._registry._SPECIAL is False


def test_custom_function_saves_go_through_the_hooks(lib):
    counts = {"pack": 0, "unpack": 0}

    def run(L):
        class Cube(L.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x ** 2 * g

        def pack(t):
            counts["pack"] += 1
            return t

        def unpack(t):
            counts["unpack"] += 1
            return t

        x = L.tensor([1.0, 2.0], requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = Cube.apply(x)
        y.sum().backward()
        return to_numpy(x.grad), dict(counts)

    want = run(torch)
    counts.update(pack=0, unpack=0)
    got = run(lib)
    np.testing.assert_allclose(got[0], want[0])
    assert got[1] == want[1]
