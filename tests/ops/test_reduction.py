"""Reductions on empty and one-element inputs against torch 2.13: NaN results with no NumPy
warning escaping (NumPy's own ``np.mean`` warns "Mean of empty slice" from its module, which
tapegrad's warning filter does not cover: ops compute those cases without it), and torch's own
UserWarning when var/std have no degrees of freedom left, with torch's gradients there.

The leaks were found by running op_db's samples of every reduction (ReductionOpInfo entries,
means, variances, norms, losses) forward and backward with RuntimeWarnings turned into errors,
and these empty shapes through the same functions."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import tapegrad

F = {torch: torch.nn.functional, tapegrad: tapegrad.nn.functional}

# name: function of (library, x); x requires grad
EMPTY_CASES = {
    "mean": lambda L, x: x.mean(), "mean_dim": lambda L, x: x.mean(0),
    "mean_last_keepdim": lambda L, x: x.mean(-1, keepdim=True),
    "var": lambda L, x: x.var(), "var_dim": lambda L, x: x.var(0),
    "var_correction0": lambda L, x: x.var(-1, correction=0),
    "std": lambda L, x: x.std(), "std_dim": lambda L, x: x.std(-1),
    "var_mean": lambda L, x: L.var_mean(x), "var_mean_dim": lambda L, x: L.var_mean(x, 0),
    "std_mean": lambda L, x: L.std_mean(x), "std_mean_dim": lambda L, x: L.std_mean(x, -1),
    "nanmean": lambda L, x: x.nanmean(), "nanmean_dim": lambda L, x: x.nanmean(0),
    "nansum": lambda L, x: x.nansum(), "norm": lambda L, x: x.norm(),
    "logsumexp": lambda L, x: L.logsumexp(x, 0),
    "mse_loss": lambda L, x: F[L].mse_loss(x, x), "l1_loss": lambda L, x: F[L].l1_loss(x, x),
    "smooth_l1_loss": lambda L, x: F[L].smooth_l1_loss(x, x),
    "huber_loss": lambda L, x: F[L].huber_loss(x, x),
    "bce_with_logits": lambda L, x: F[L].binary_cross_entropy_with_logits(x, x),
    "soft_margin_loss": lambda L, x: F[L].soft_margin_loss(x, x.detach()),
    "instance_norm": lambda L, x: F[L].instance_norm(L.zeros(2, 3, 0, dtype=x.dtype) + x.sum()),
}
SHAPES = [(0,), (0, 3), (3, 0), (2, 0, 4)]
DTYPES = ["float32", "float64", "bfloat16", "float16"]


def _run(L, name, shape, dtype):
    x = L.zeros(shape).to(getattr(L, dtype)).requires_grad_(True)
    out = EMPTY_CASES[name](L, x)
    outs = out if isinstance(out, tuple) else (out,)
    diff = [o for o in outs if o.requires_grad]
    grad = L.autograd.grad([o.sum() for o in diff], [x], allow_unused=True)[0] if diff else None
    return outs, grad


def _same(ours, theirs, what):
    assert str(ours.dtype) == str(theirs.dtype), what
    assert tuple(ours.shape) == tuple(theirs.shape), what
    np.testing.assert_array_equal(ours.detach().double().numpy(),
                                  theirs.detach().double().numpy(), err_msg=what)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(EMPTY_CASES))
def test_empty_input_no_numpy_warning(name, dtype):
    """Every shape with a zero-length dimension: torch's values (NaN over no elements) and
    gradients, and not one RuntimeWarning, even with tapegrad's warning filter absent."""
    for shape in SHAPES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # torch's own degrees-of-freedom one
            theirs, theirs_grad = _run(torch, name, shape, dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("error", RuntimeWarning)  # in front of tapegrad's filter
            ours, ours_grad = _run(tapegrad, name, shape, dtype)
        for k, (o, t) in enumerate(zip(ours, theirs, strict=True)):
            _same(o, t, f"{name}{shape} output {k}")
        if theirs_grad is not None:
            _same(ours_grad, theirs_grad, f"{name}{shape} gradient")


def test_no_runtime_warning_with_python_W_error():
    """The user's view: ``python -W error::RuntimeWarning`` and empty reductions run clean."""
    code = (
        "import tapegrad as t\n"
        "F = t.nn.functional\n"
        "for s in [(0,), (0, 3)]:\n"
        "    x = t.zeros(s, requires_grad=True)\n"
        "    for y in (x.mean(), x.var(), x.std(0), t.var_mean(x)[0], x.nanmean(),\n"
        "              F.mse_loss(x, x), x.bfloat16().mean(), x.half().std()):\n"
        "        y.float().sum().backward()\n"
        "print('ok')\n")
    run = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-W",
                          "ignore::UserWarning", "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


DOF_CASES = [
    lambda L: L.zeros(0).var(), lambda L: L.zeros(0).std(), lambda L: L.zeros(1).var(),
    lambda L: L.tensor(1.0).var(), lambda L: L.tensor(1.0).var(correction=0),
    lambda L: L.zeros(3).var(correction=3), lambda L: L.zeros(3).var(correction=2),
    lambda L: L.zeros(2, 1).var(1), lambda L: L.zeros(0, 3).var(1),
    lambda L: L.zeros(3, 0).var(0), lambda L: L.var_mean(L.zeros(1)),
    lambda L: L.std_mean(L.zeros(2, 3), 1, correction=3),
    lambda L: L.zeros(1, dtype=L.complex64).var(), lambda L: L.zeros(1).bfloat16().std(),
    lambda L: L.zeros(2, 3).var((0, 1), correction=6), lambda L: L.zeros(1).var(0, True),
    lambda L: L.zeros(1, dtype=L.int64).var(), lambda L: L.var_mean(L.zeros(1, dtype=L.bool)),
]


@pytest.mark.parametrize("k", range(len(DOF_CASES)))
def test_degrees_of_freedom_warning_as_torch(k):
    """var/std/var_mean/std_mean with n - correction <= 0: torch's UserWarning (message,
    count, the caller's file), and its result or error."""
    seen = []
    for L in (torch, tapegrad):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                out = str(DOF_CASES[k](L))
            except RuntimeError as e:
                out = f"RuntimeError: {e}"
        seen.append(([(w.category, str(w.message), w.filename) for w in caught], out))
    assert seen[1] == seen[0]


VAR_GRAD_CASES = [
    ("var", [0.0], {}), ("var", [1.0, 2.0], {"correction": 2}),
    ("var", [1.0, 1.0], {"correction": 2}),
    ("var", [[0.0], [1.0]], {"dim": 1}), ("var", [[1.0, 2.0]], {"dim": 1, "correction": 3}),
    ("var", [], {"correction": 0}), ("var", [[]], {"dim": 1, "correction": 0}),
    ("std", [3.0, 3.0], {}), ("std", [[3.0, 3.0]], {"dim": 1}), ("std", [0.0], {}),
    ("std", [1.0, 2.0], {"correction": 2}), ("var_mean", [0.0], {}),
    ("var_mean", [[1.0, 2.0]], {"dim": 1, "correction": 2}), ("std_mean", [3.0, 3.0], {}),
    ("std_mean", [], {"correction": 0}), ("var", [1.0, 2.0, 4.0], {}),
]


@pytest.mark.parametrize("name,data,kw", VAR_GRAD_CASES)
def test_variance_gradient_without_degrees_of_freedom(name, data, kw):
    """torch's rules where n <= correction (inf, NaN, or a negative factor) and where the
    standard deviation is 0 (a zero gradient), instead of a ZeroDivisionError or NaN."""
    grads = []
    for L in (torch, tapegrad):
        x = L.tensor(data, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            out = getattr(L, name)(x, **kw)
        (out[0] if isinstance(out, tuple) else out).sum().backward()
        grads.append(x.grad)
    _same(grads[1], grads[0], "gradient")
