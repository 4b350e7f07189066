"""nn.utils.prune compared with torch: masks (random ones after manual_seed, ties broken as
torch's topk breaks them), weight_orig / weight_mask / the forward pre-hook, iterative pruning
through PruningContainer, global and custom pruning, importance scores, remove, is_pruned,
training with the mask in place, and the error messages.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch.nn.utils.prune  # noqa: F401
from torchcompare import raised

import tapegrad.nn.utils.prune  # noqa: F401  (not imported by nn.utils, as in torch)


def _lin(L, n, shape):
    return L.tensor(np.linspace(-1, 1, n, dtype=np.float32).reshape(shape))


def _state(m):
    return dict(m.state_dict())


def test_random_and_l1_unstructured(compare):
    def scenario(L):
        prune = L.nn.utils.prune
        L.manual_seed(0)
        m = L.nn.Linear(6, 4)
        with L.no_grad():  # fixed values (the draws are test_init's subject; the mask's are
            m.weight.copy_(_lin(L, 24, (4, 6)))  # this test's, and take the same draws)
        prune.random_unstructured(m, "weight", amount=0.3)
        hooks = [type(h).__name__ for h in m._forward_pre_hooks.values()]
        names = ([n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()])
        w = m.weight
        prune.l1_unstructured(m, "bias", amount=2)
        out = m(_lin(L, 12, (2, 6)))
        out.pow(2).sum().backward()
        return (hooks, names, w, m.weight_mask, m.bias_mask, m.weight_orig.grad,
                m.bias_orig.grad, _state(m), prune.is_pruned(m), type(m.weight).__name__)

    compare(scenario)


def test_structured(compare):
    def scenario(L):
        prune = L.nn.utils.prune
        L.manual_seed(1)
        conv = L.nn.Conv2d(3, 5, 2)
        prune.ln_structured(conv, "weight", amount=0.4, n=2, dim=0)
        m1 = conv.weight_mask.clone()
        prune.random_structured(conv, "weight", amount=1, dim=1)  # a PruningContainer now
        hook = next(iter(conv._forward_pre_hooks.values()))
        kinds = [type(h).__name__ for h in hook]
        prune.ln_structured(conv, "weight", amount=0.5, n=float("inf"), dim=-1)
        conv(_lin(L, 2 * 3 * 4 * 4, (2, 3, 4, 4))).sum().backward()
        return (m1, conv.weight_mask, conv.weight, kinds, type(hook).__name__, len(hook),
                conv.weight_orig.grad, _state(conv))

    compare(scenario)


def test_iterative_unstructured_and_remove(compare):
    def scenario(L):
        prune = L.nn.utils.prune
        L.manual_seed(2)
        m = L.nn.Linear(5, 4)
        prune.l1_unstructured(m, "weight", amount=0.25)
        prune.random_unstructured(m, "weight", amount=0.25)  # 25% of what is left
        prune.l1_unstructured(m, "weight", amount=3)
        mask = m.weight_mask.clone()
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        x = _lin(L, 10, (2, 5))
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = m(x).pow(2).sum()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        pruned_w = m.weight
        prune.remove(m, "weight")
        err = raised(prune.remove, m, "weight")
        return (mask, losses, pruned_w, m.weight, type(m.weight).__name__, _state(m),
                prune.is_pruned(m), err, len(m._forward_pre_hooks))

    compare(scenario)


def test_ties_broken_as_torch(compare):
    def scenario(L):
        prune = L.nn.utils.prune
        out = []
        for shape, amount in [((8, 10), 0.3), ((40, 50), 0.1), ((300,), 3), ((4, 5), 11)]:
            m = L.nn.Module()
            n = int(np.prod(shape))
            vals = (np.arange(n) * 7 % 5 - 2).astype(np.float32).reshape(shape)
            m.weight = L.nn.Parameter(L.tensor(vals))
            prune.l1_unstructured(m, "weight", amount=amount)
            out.append(m.weight_mask)
        conv = L.nn.Module()
        conv.weight = L.nn.Parameter(L.tensor(np.tile([1.0, -1.0, 2.0], (6, 3, 2))
                                              .astype(np.float32)))
        prune.ln_structured(conv, "weight", amount=0.5, n=1, dim=0)  # all rows tie
        out.append(conv.weight_mask)
        prune.ln_structured(conv, "weight", amount=2, n=2, dim=2)
        out.append(conv.weight_mask)
        return out

    compare(scenario)


def test_topk_tie_selection(oracle):
    """The replayed selection picks the set torch.topk picks, with heavy ties, both paths
    (partial_sort for 64 k <= n, nth_element otherwise) and NaNs."""
    from tapegrad.nn.utils.prune import _topk_indices

    rng = np.random.default_rng(0)
    for n in (5, 17, 64, 65, 130, 1000, 3000):
        for k in sorted({1, 2, n // 64, n // 10, n // 2, n - 1}):
            if k < 1:
                continue
            for levels in (2, 3, 11):
                a = rng.integers(0, levels, n).astype(np.float32)
                if n > 100:
                    a[rng.integers(0, n, 3)] = np.nan
                for largest in (True, False):
                    want = oracle.topk(oracle.tensor(a), k, largest=largest).indices.numpy()
                    got = _topk_indices(a, k, largest)
                    assert sorted(want.tolist()) == sorted(got.tolist()), (n, k, levels, largest)


def test_global_custom_identity_importance(compare):
    def scenario(L):
        prune = L.nn.utils.prune
        L.manual_seed(3)
        net = L.nn.Sequential(L.nn.Linear(4, 3), L.nn.ReLU(), L.nn.Linear(3, 2))
        prune.l1_unstructured(net[2], "weight", amount=1)
        params = [(net[0], "weight"), (net[0], "bias"), (net[2], "weight")]
        prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=0.4)
        masks = [net[0].weight_mask, net[0].bias_mask, net[2].weight_mask]
        hook = [type(h).__name__ for h in net[2]._forward_pre_hooks.values()]
        m = L.nn.Linear(3, 3)
        prune.custom_from_mask(m, "weight", mask=L.tensor([[1, 0, 1], [0, 1, 1], [1, 1, 0]]))
        prune.identity(m, "bias")
        scores = L.arange(9.0).reshape(3, 3)
        m2 = L.nn.Linear(3, 3)
        prune.l1_unstructured(m2, "weight", amount=4, importance_scores=scores)
        m3 = L.nn.Conv1d(2, 4, 2)
        prune.ln_structured(m3, "weight", amount=2, n=1, dim=0,
                            importance_scores=L.arange(16.0).reshape(4, 2, 2).flip(0))
        p = prune.L1Unstructured(amount=0.5)
        pruned = p.prune(L.tensor([3.0, -1.0, 2.0, 0.5]))
        return (masks, hook, m.weight, m.weight_mask, m.bias_mask, m2.weight_mask,
                m3.weight_mask, pruned, _state(net), prune.is_pruned(net))

    compare(scenario)


@pytest.mark.parametrize("case", range(12))
def test_errors(compare, case):
    def scenario(L):
        prune = L.nn.utils.prune
        L.manual_seed(4)
        m = L.nn.Linear(3, 2)
        calls = [
            lambda: prune.l1_unstructured(m, "weight", amount=1.5),
            lambda: prune.l1_unstructured(m, "weight", amount=-1),
            lambda: prune.l1_unstructured(m, "weight", amount="a"),
            lambda: prune.l1_unstructured(m, "weight", amount=7),
            lambda: prune.ln_structured(m, "bias", amount=1, n=2, dim=0),
            lambda: prune.random_structured(m, "weight", amount=1, dim=2),
            lambda: prune.l1_unstructured(m, "weight", amount=1,
                                          importance_scores=L.ones(2, 2)),
            lambda: prune.remove(m, "weight"),
            lambda: prune.global_unstructured([(m, "weight")], prune.RandomStructured,
                                              amount=1),
            lambda: prune.global_unstructured(3, prune.L1Unstructured, amount=1),
            lambda: prune.global_unstructured([(m, "weight")], prune.L1Unstructured,
                                              importance_scores=[1], amount=1),
            lambda: prune.custom_from_mask(m, "weight", mask=L.ones(3, 2)),
        ]
        err = raised(calls[case])
        # a failed pruning leaves the module as it was
        return err, [n for n, _ in m.named_parameters()], [n for n, _ in m.named_buffers()]

    compare(scenario)
