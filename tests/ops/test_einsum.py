"""einsum (ops/einsum.py) against torch: values, gradients and the last node torch records
(ViewBackward0 after a contraction, MulBackward0 for products with nothing summed,
SumBackward1/PermuteBackward0 for one operand), ellipses, the sublist form and torch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import tapegrad

CASES = [
    ("ij,jk->ik", (2, 3), (3, 4)), ("ij,kj->ik", (2, 3), (1, 3)), ("ij,Ab->ijAb", (2, 3), (4, 4)),
    ("ii->i", (3, 3)), ("ij->ij", (3, 3)), ("ij->", (3, 3)), ("ji", (3, 3)),
    ("ij,j->ij", (3, 3), (3,)), ("i,i,i->", (3,), (3,), (3,)), ("i,j,k->ijk", (3,), (3,), (3,)),
    ("i,i,j->j", (3,), (3,), (3,)), ("bij,bjk", (4, 2, 3), (1, 3, 5)), ("iij->ji", (3, 3, 2)),
    ("a...,...b->...ab", (2, 3, 4), (4, 5)), ("...ij,...ij->", (2, 2, 3), (2, 2, 3)),
    ("...ik, ...j -> ij", (1, 2, 3), (3,)), ("ijk,ikl,ilm->ijm", (2, 3, 4), (2, 4, 5), (2, 5, 6)),
    ("ab,cd,bd->ac", (2, 3), (4, 5), (3, 5)), ("ij,kl->", (2, 3), (4, 5)),
]


def _run(lib: Any, equation: str, shapes: tuple) -> tuple:
    ins = [lib.from_numpy(np.random.default_rng(k).standard_normal(s)).requires_grad_()
           for k, s in enumerate(shapes)]
    out = lib.einsum(equation, *ins)
    grads = lib.autograd.grad(out, ins, lib.ones_like(out))
    return type(out.grad_fn).__name__, out.detach().numpy(), [g.numpy() for g in grads]


@pytest.mark.parametrize(("equation", "shapes"), [(c[0], c[1:]) for c in CASES])
def test_einsum_matches_torch(equation: str, shapes: tuple) -> None:
    node, value, grads = _run(tapegrad, equation, shapes)
    t_node, t_value, t_grads = _run(torch, equation, shapes)
    assert node == t_node
    np.testing.assert_allclose(value, t_value, rtol=1e-12, atol=1e-12)
    for g, t in zip(grads, t_grads, strict=True):
        np.testing.assert_allclose(g, t, rtol=1e-12, atol=1e-12)


ERRORS = [
    ("ij,jk", (2, 3), (2, 3)), ("ij", (2, 3), (2, 3)), ("ij,jk->ik", (2, 3)), ("i.j", (2, 3)),
    ("...i...", (2, 3)), ("ij->i..", (2, 3)), ("ij->ii", (2, 3)), ("ij->k", (2, 3)),
    ("i1", (2, 3)), ("ij->i1", (2, 3)), ("ijk", (2, 3)), ("ii", (2, 3)),
    ("...ij,...ij->", (2, 2, 3), (3, 2, 3)),
]


@pytest.mark.parametrize(("equation", "shapes"), [(c[0], c[1:]) for c in ERRORS])
def test_einsum_errors_match_torch(equation: str, shapes: tuple) -> None:
    seen = []
    for lib in (torch, tapegrad):
        with pytest.raises(RuntimeError) as info:
            lib.einsum(equation, *[lib.ones(s) for s in shapes])
        seen.append(str(info.value))
    assert seen[0] == seen[1]


def test_einsum_sublist_form() -> None:
    a = np.random.default_rng(0).standard_normal((2, 3))
    for other, args in [(a.T, ([0, 1], [1, 2])), (a, ([0, 1], [0, Ellipsis])),
                        (a, ([0, 1], [0, 2], [1, 2]))]:
        mine = tapegrad.einsum(tapegrad.from_numpy(a), args[0], tapegrad.from_numpy(other),
                               *args[1:])
        theirs = torch.einsum(torch.from_numpy(a), args[0], torch.from_numpy(other), *args[1:])
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"not within the valid range \[0, 52\)"):
        tapegrad.einsum(tapegrad.from_numpy(a), [0, 60])
