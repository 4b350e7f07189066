"""Every fast first-order path (ops/fast_paths.py) gives its op's rule's gradients, bit for bit.

An op's derivative is its ``backward`` rule, in Tensor terms; a fast path computes the same
values on the arrays when grad mode is off. Each op's samples (``op_samples.SAMPLES``, the
``nn.functional`` cases of tests/nn/test_functional.py for the fused entries, the recurrent
layers as modules) are differentiated with random cotangents; at every node whose op has a
fast path, the gradients the engine got from it are compared with the rule's, run on the same
node and gradient with grad mode on (as under ``create_graph=True``). Both are taken as the
engine takes them: summed to the input's shape.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from typing import Any

import numpy as np
import pytest
from op_samples import SAMPLES

import tapegrad
from tapegrad.autograd.engine import sum_to
from tapegrad.ops._registry import REGISTRY, OpNode

_NN = pathlib.Path(__file__).resolve().parents[1] / "nn" / "test_functional.py"


def _nn_cases() -> list:
    """The ``nn.functional`` table (its cases are not in op_samples: cross_entropy, gelu...)."""
    spec = importlib.util.spec_from_file_location("_functional_cases", _NN)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (its dataclasses look their module up there)
    spec.loader.exec_module(module)
    return module.CASES


def _calls() -> list:
    """(id, dtype, call(L, dtype) -> (inputs, outputs)) for every differentiable sample and
    case, in float64 and (where the table runs it) float32."""
    calls = []
    for s in SAMPLES:
        if s.differentiable:
            def run(L, dt, s=s):
                return _run(s.make_inputs(L, dt), lambda *x: s.fn(L, *x))

            calls += [(s.id, dt, run) for dt in ("float64", "float32")[:1 + s.float32]]
    for c in _nn_cases():
        if c.grad:
            def run(L, dt, c=c):
                return _run(c.inputs(L, dt), lambda *x: c.fn(L, L.nn.functional, *x))

            calls += [(c.id, dt, run) for dt in ("float64", "float32")[:1 + c.f32]]
    # cases the tables leave to a fast path's conditions: relu's integer product (larger
    # arrays), cross_entropy's lean entries (class indices all in range, no weight)
    rng = np.random.default_rng(0)
    big, logits = rng.standard_normal((64, 80)) + 0.01, rng.standard_normal((5, 7))

    def run_big(L, dt):
        return _run([L.tensor(big.astype(dt), requires_grad=True)], lambda x: x.relu())

    def run_ce(L, dt):
        target = L.tensor([1, 0, 6, 2, 2])
        return _run([L.tensor(logits.astype(dt), requires_grad=True)],
                    lambda x: L.nn.functional.cross_entropy(x, target))

    for name, run in (("relu-big", run_big), ("cross_entropy-lean", run_ce)):
        calls += [(name, dt, run) for dt in ("float64", "float32")]
    # the recurrent layers (modules, not in the tables): each layer entry, both directions,
    # the LSTM with a projection, and a packed batch
    seq = rng.standard_normal((5, 3, 4))
    layers = {"lstm": ("LSTM", {"proj_size": 2}), "gru": ("GRU", {}),
              "rnn_tanh": ("RNN", {}), "rnn_relu": ("RNN", {"nonlinearity": "relu"})}
    for name, (cls, kw) in layers.items():
        for packed in (False, True):
            def run_rnn(L, dt, cls=cls, kw=kw, packed=packed):
                L.manual_seed(0)
                layer = getattr(L.nn, cls)(4, 3, bidirectional=True, **kw).to(getattr(L, dt))
                x = L.tensor(seq.astype(dt), requires_grad=True)
                inp = L.nn.utils.rnn.pack_padded_sequence(x, [5, 4, 2]) if packed else x
                out, state = layer(inp)
                outs = [out.data if packed else out] + list(
                    state if isinstance(state, tuple) else (state,))
                return _run([x, *layer.parameters()], lambda *_: outs)

            calls += [(f"{name}-layer{'-packed' * packed}", dt, run_rnn)
                      for dt in ("float64", "float32")]
    return calls


def _run(inputs: list, fn) -> tuple:
    out = fn(*inputs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
            if isinstance(o, tapegrad.Tensor) and o.grad_fn is not None]
    return [x for x in inputs if x.requires_grad], outs


def _as_input(g: tapegrad.Tensor | None, meta: tuple | None) -> np.ndarray | None:
    """A gradient as the engine takes it for its input: summed to the input's shape."""
    if g is None or meta is None:
        return None
    with tapegrad.no_grad():
        return sum_to(g.detach(), meta[0])._data


# The fast paths that compute their rule's formula in another order, so the last bits may
# differ: each is the first-order evaluation the op has always had (its values are unchanged
# by having it apart), and its rule, run under create_graph, is the graph torch differentiates.
ROUNDING = {
    # the softmax the forward kept (e / sum e) where the rule takes exp(log_softmax)
    "ce_log_softmax": "the forward's softmax, not exp(log_softmax)",
    # the array formula works in place and in float64 where the Tensor ops round each step
    # to the dtype (the normalizations: on the moments the forward kept)
    "gelu": "in-place array arithmetic",
    "layer_norm": "in-place array arithmetic",
    "batch_norm": "in-place array arithmetic",
    "group_norm": "in-place array arithmetic",
    "sdpa": "in-place array arithmetic",
    # the row sums by kernels.sums.fast_sum, not the sum entry
    "safe_softmax": "fast_sum's order of addition",
    # the gates the forward kept (the rules recompute them in Tensor ops), the sums over the
    # steps by fast_sum; the LSTM's steps in its own array code (ops/rnn.py)
    **{name: "the forward's gates, fast_sum's order of addition" for name in (
        "lstm_layer", "gru_layer", "rnn_tanh_layer", "rnn_relu_layer")},
    # products and sums over other shapes (the batch folded into the columns' product,
    # OpenBLAS's order) where the rule goes through im2col / col2im entries
    "convolution": "the products in another order",
    # overlapping windows' gradients added at the argmax in NumPy's order, not scatter_add's
    "max_pool2d": "another order of addition",
    "max_pool3d": "another order of addition",
    "adaptive_max_pool2d": "another order of addition",
    "adaptive_max_pool3d": "another order of addition",
    # the transposed maps' products by NumPy's matmul, where the rule's matmul entry takes
    # its own product path (ops/resampling.py)
    **{name: "NumPy's matmul, not the matmul entry's" for name in (
        "adaptive_avg_pool2d", "adaptive_avg_pool3d", "upsample_linear1d", "upsample_bilinear2d",
        "upsample_trilinear3d", "upsample_bicubic2d")},
}
# The fast paths whose values equal the rule's but whose zeros may have the other sign.
SIGNED_ZEROS = {
    # the rule multiplies g by a matrix of the coefficients, so a negative g gives -0.0 off
    # the targets; the fast path writes the products into zeros (+0.0, as torch's kernel)
    "nll_loss": "+0.0 off the targets",
    "nll_loss2d": "+0.0 off the targets",
}
# The fast paths whose factor from a bool mask is float64 where their rule's is float32:
# NumPy makes a bool mask times a Python number float64 (the fast path's gradient is float64
# for a float32 input too, and the engine rounds it to the input's dtype once), a bool Tensor
# times one is the default dtype. Compared after that rounding, to float32's tolerance.
DEFAULT_DTYPE = {
    "leaky_relu": "the rule's slope in the default dtype",
    "leaky_relu_": "the rule's slope in the default dtype",
    "multi_margin_loss": "the rule's counted terms in the default dtype",
}
_TOL = {"float64": 1e-14, "float32": 1e-6}  # (the samples differ by 4e-16 and 1.5e-7 at most)


def _agree(name: str, w: np.ndarray, g: np.ndarray) -> bool:
    """Do the rule's ``w`` and the fast path's ``g`` agree: bit for bit, or as ``name``'s entry
    in ``SIGNED_ZEROS``, ``ROUNDING`` or ``DEFAULT_DTYPE`` allows?"""
    w, g = np.asarray(w), np.asarray(g)
    if name in DEFAULT_DTYPE and g.dtype == np.float64 and w.dtype == np.float32:
        g = g.astype(w.dtype)  # (as the engine rounds it)
    if w.shape != g.shape or w.dtype != g.dtype:
        return False
    if _bits(w) == _bits(g):
        return True
    if name in SIGNED_ZEROS:
        return bool(np.array_equal(w, g, equal_nan=True))
    if name in ROUNDING or name in DEFAULT_DTYPE:
        tol = _TOL["float32" if name in DEFAULT_DTYPE else w.dtype.name]
        scale = max(float(np.max(np.abs(w), initial=0.0)), 1.0)
        return bool(np.allclose(w, g, rtol=tol, atol=tol * scale, equal_nan=True))
    return False


def _kind(w: Any, g: Any) -> str:
    """How two gradients differ (for the failure message)."""
    if w is None or g is None:
        return f"one is None: rule {w is None}, fast path {g is None}"
    w, g = np.asarray(w), np.asarray(g)
    if w.shape != g.shape or w.dtype != g.dtype:
        return f"rule {w.shape} {w.dtype}, fast path {g.shape} {g.dtype}"
    if np.array_equal(w, g, equal_nan=True):
        return "signs of zeros"
    return f"values, by {float(np.max(np.abs(w - g)))}"


def _bits(a: np.ndarray) -> tuple:
    a = np.asarray(a)
    return a.shape, a.dtype, np.ascontiguousarray(a).tobytes()


def _compare(monkeypatch: pytest.MonkeyPatch, L_call, dtype: str, seen: set) -> list:
    """Differentiate one call; at each node with a fast path, the rule's gradients against
    the fast path's. Returns the mismatches."""
    wrong: list = []
    engine_apply = OpNode.apply

    def checked(node: OpNode, grads: list) -> tuple:
        op = node.op
        real = all(g is None or g._data.dtype.kind != "c" for g in grads)
        if op.fast_rule is None or not real or tapegrad.is_grad_enabled():
            return engine_apply(node, grads)
        with tapegrad.enable_grad():  # the rule, as create_graph runs it
            want = op.rule(node, grads[0] if op.outputs == 1 else list(grads))
        got = engine_apply(node, grads)  # (grad mode off: the fast path)
        seen.add(op.name)
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            w, g = _as_input(w, node.input_meta[i]), _as_input(g, node.input_meta[i])
            if (w is None) != (g is None) or (w is not None and not _agree(op.name, w, g)):
                wrong.append((op.name, i, _kind(w, g)))
        return got

    inputs, outs = L_call(tapegrad, dtype)
    if not outs or not inputs:
        return wrong
    rng = np.random.default_rng(1)
    cot = [tapegrad.tensor(rng.standard_normal(tuple(o.shape)).astype(dtype)) for o in outs]
    monkeypatch.setattr(OpNode, "apply", checked)
    try:
        tapegrad.autograd.grad(outs, inputs, cot, allow_unused=True)
    finally:
        monkeypatch.undo()
    return wrong


_SEEN: set = set()
_CALLS = _calls()


@pytest.mark.parametrize("call", _CALLS, ids=[f"{c[0]}-{c[1]}" for c in _CALLS])
def test_fast_path_equals_rule(monkeypatch, call):
    _id, dtype, fn = call
    assert _compare(monkeypatch, fn, dtype, _SEEN) == []


def test_every_fast_path_is_reached():
    """Runs after the comparisons (in file order): each fast path met a sample."""
    if not _SEEN:
        pytest.skip("the comparisons did not run in this session (a -k selection)")
    registered = {name for name, op in REGISTRY.items() if op.fast_rule is not None}
    assert registered - _SEEN == set()


def test_node_rule_follows_rule_and_fast_rule(monkeypatch):
    """``OpNode.apply`` calls ``op.node_rule``: the rule itself, or ``OpNode._fast`` for an entry
    with a fast path, however ``rule`` and ``fast_rule`` were set."""
    for name, op in REGISTRY.items():
        assert op.node_rule is (op.rule if op.fast_rule is None else OpNode._fast), name
    mul = REGISTRY["mul"]
    monkeypatch.setattr(mul, "fast_rule", None)
    assert mul.node_rule is mul.rule
    monkeypatch.setattr(mul, "rule", lambda ctx, grad: (grad, grad))
    assert mul.node_rule is mul.rule
    monkeypatch.undo()
    assert mul.node_rule is OpNode._fast
