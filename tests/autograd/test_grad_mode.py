"""Grad-mode blocks entered during a backward pass (in a hook, or by checkpointing's
recomputation) leave the rest of that pass as it was."""

from __future__ import annotations


def test_grad_mode_block_inside_a_backward_hook(compare):
    def scenario(L):
        x = L.tensor([1.0, 2.0], requires_grad=True)
        w = L.tensor([3.0, -1.0], requires_grad=True)
        h = x * w
        y = h.exp()
        seen = []

        def hook(g):
            with L.enable_grad():
                pass
            with L.no_grad():
                pass
            return g

        y.register_hook(hook)
        h.register_hook(lambda g: seen.append((g.requires_grad, g.grad_fn is None)))
        y.sum().backward()
        return x.grad, w.grad, seen

    compare(scenario)
