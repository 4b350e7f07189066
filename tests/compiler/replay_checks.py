"""What the compiler tests compare: every array a training step changes, bit for bit."""

from __future__ import annotations

import numpy as np

import tapegrad as torch


def replayed(c, n=1):
    """Every signature of ``c`` replays a program; ``n`` signatures were seen."""
    assert len(c.entries) == n, c.listing()
    for e in c.entries:
        assert e.eager is None, e.eager
        assert e.program is not None, c.listing()
    return c


def step_arrays(model, opt=None, extra=()):
    """Every array a training step changes: parameters, gradients, module buffers (batch
    norm's running statistics, ``num_batches_tracked``), optimizer state, and each param
    group's hyperparameters (its learning rate, which a scheduler changes)."""
    out = []
    for p in list(model.parameters()) + list(extra):
        out.append(p._data.copy())
        out.append(None if p._grad is None else p._grad._data.copy())
    for b in model.buffers():
        out.append(b._data.copy())
    if opt is not None:
        for s in opt.state.values():
            for k in sorted(s):
                v = s[k]
                out.append(v._data.copy() if isinstance(v, torch.Tensor) else v)
        for group in opt.param_groups:
            for k in sorted(group):
                if k != "params":
                    v = group[k]
                    out.append(v._data.copy() if isinstance(v, torch.Tensor) else v)
    return out


def assert_same(a, b):
    """Equal bit for bit: the same arrays (dtype, shape, bytes) and the same Python values."""
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        if x is None or y is None:
            assert x is y
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        elif isinstance(x, float) and x != x:
            assert y != y
        else:
            assert x == y


def flat_values(out):
    """A step's return value as a flat list: arrays for tensors, Python values as they are,
    containers item by item (dict keys included, in order). A tensor's ``requires_grad`` is
    left out: a replayed loss whose backward already ran comes back without its (spent)
    graph."""
    if isinstance(out, torch.Tensor):
        return [out._data.copy(), str(out.dtype)]
    if isinstance(out, (tuple, list)):
        return [type(out).__name__, len(out)] + [v for x in out for v in flat_values(x)]
    if isinstance(out, dict):
        return [len(out)] + [v for k, x in out.items() for v in [k, *flat_values(x)]]
    return [out]


def _scheduler_state(s):
    """An LR scheduler's state (its step count and last learning rates), functions left out."""
    return sorted((k, repr(v)) for k, v in s.state_dict().items() if not callable(v))


def run_twins(make, steps=6, **compile_kw):
    """Run a program eagerly and compiled on twin copies, comparing bit for bit after each step.

    ``make()`` builds one copy of the program (called twice, with the same seed) and returns a
    dict: ``step`` (the function; the second copy's is compiled), ``model`` (a module holding
    every parameter and buffer), optional ``opt``, ``scheds`` (LR schedulers), ``extra``
    (tensors outside the model), ``inputs(i)`` (the positional arguments of call ``i``, made
    freshly for each copy), ``before(i)`` (run before call ``i``: feeds a global, say) and
    ``after(i)`` (run after it: a scheduler stepped outside the step). After each call the two
    copies must agree on the returned values, every parameter, gradient, buffer, optimizer
    state and learning rate, the schedulers' state and the default generator's state.
    Returns the compiled function, to look at its entries.
    """
    torch.manual_seed(0)
    eager = make()
    torch.manual_seed(0)
    twin = make()
    compiled = torch.compile(twin["step"], **compile_kw)
    for i in range(steps):
        state = torch.get_rng_state()
        out_e = _call(eager, eager["step"], i)
        rng_eager = torch.get_rng_state()
        torch.set_rng_state(state)
        out_c = _call(twin, compiled, i)
        assert torch.equal(torch.get_rng_state(), rng_eager), f"RNG state differs at step {i}"
        assert_same(flat_values(out_e), flat_values(out_c))
        assert_same(_state(eager), _state(twin))
    return compiled


def _call(copy, fn, i):
    """One call of a copy's step: its inputs made, its hooks around it."""
    if "before" in copy:
        copy["before"](i)
    args = copy["inputs"](i) if "inputs" in copy else ()
    out = fn(*args)
    if "after" in copy:
        copy["after"](i)
    return out


def _state(copy):
    """Everything a copy's step may change."""
    out = step_arrays(copy["model"], copy.get("opt"), copy.get("extra", ()))
    for s in copy.get("scheds", ()):
        out.extend(_scheduler_state(s))
    return out


def batch(i, *shape, seed=0, kind="randn", high=None):
    """Input data for call ``i``: the same values for both copies, new values at each call
    (from a generator of their own, so the default generator is left alone)."""
    g = torch.Generator().manual_seed(1000 * seed + i)
    if kind == "randint":
        return torch.randint(0, high, shape, generator=g)
    return torch.randn(*shape, generator=g)
