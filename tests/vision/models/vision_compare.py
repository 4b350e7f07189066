"""Comparing tapegrad.vision with torchvision in one scenario: ``scenario(L, V)`` runs once on
(torch, torchvision) and once on (the library under test, its vision package); results,
exceptions and warnings must agree (tests/torchcompare.py), reprs read "torchvision" for
"torch.vision". Also a switch that stubs out the random draws of the initializers, for the
tests that look only at the shape of huge models; the comparison of seeded initial values
(``compare_initial_values``); and parameters of a test's own (``own_values``), for the tests
that run a seeded model forward."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import torchcompare
from cpu_kernels import assert_draws


def _unvision(obj: Any) -> Any:
    """A snapshot with tapegrad.vision's names (normalised to "torch.vision") as torchvision's."""
    if isinstance(obj, str):
        return obj.replace("torch.vision", "torchvision")
    if isinstance(obj, list):
        return [_unvision(v) for v in obj]
    if isinstance(obj, tuple) and type(obj) is tuple:
        return tuple(_unvision(v) for v in obj)
    if isinstance(obj, dict):
        return {k: _unvision(v) for k, v in obj.items()}
    if isinstance(obj, torchcompare.Raised):
        return torchcompare.Raised(obj.type, _unvision(obj.message))
    return obj


def compare_vision(scenario, lib, oracle, vision, tv, *, rtol=1e-6, atol=1e-8):
    """Run ``scenario(L, V)`` with (torch, torchvision) and (lib, vision); assert they agree."""

    def on(L):
        return scenario(L, tv if L is oracle and lib is not oracle else vision)

    expected = torchcompare.run_scenario(on, oracle)
    actual = torchcompare.run_scenario(on, lib)
    torchcompare.assert_same(_unvision(expected.result), _unvision(actual.result), "result",
                             rtol, atol)
    ew = _unvision(torchcompare._without_warn_once(expected.warnings))
    aw = _unvision(torchcompare._without_warn_once(actual.warnings))
    assert aw == ew, f"warnings differ:\n torch: {ew}\n   lib: {aw}"
    return expected


_DRAWS = ("uniform_", "normal_", "trunc_normal_", "kaiming_uniform_", "kaiming_normal_",
          "xavier_uniform_", "xavier_normal_")


@contextlib.contextmanager
def no_draws(*libs: Any) -> Iterator[None]:
    """Within the block, the initializers of ``libs`` (``nn.init.*`` and ``Tensor.uniform_`` /
    ``normal_``) leave their tensor as it is: a model is built without drawing a number.
    Used only where the initial values are not compared (the architecture of huge models)."""
    saved = []
    for L in libs:
        for name in _DRAWS:
            saved.append((L.nn.init, name, getattr(L.nn.init, name)))
            setattr(L.nn.init, name, lambda tensor, *a, **k: tensor)
        for name in ("uniform_", "normal_"):
            saved.append((L.Tensor, name, getattr(L.Tensor, name)))
            setattr(L.Tensor, name, lambda self, *a, **k: self)
    try:
        yield
    finally:
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)


def compare_initial_values(build, lib, oracle, vision, tv) -> None:
    """The state of the modules ``build(L, V)`` makes after ``manual_seed(0)``, of both
    libraries: the same keys, dtypes and shapes, and values bit for bit where torch runs its
    vectorized kernels, else within the bound on the last bits of draws
    (``cpu_kernels.assert_draws``, docs/float32.md "Other CPU kernels")."""
    states = []
    for L, V in ((oracle, tv), (lib, vision)):
        L.manual_seed(0)
        modules = build(L, V)
        states.append([(k, v.detach().numpy().copy()) for m in modules
                       for k, v in m.state_dict().items()])
    theirs, ours = states
    assert [k for k, _ in ours] == [k for k, _ in theirs]
    for (key, b), (_, a) in zip(ours, theirs, strict=True):
        assert b.dtype == a.dtype and b.shape == a.shape, key
        assert_draws(b, a, key)


def own_values(L, modules, seed: int = 0) -> None:
    """Parameters of the test's own, from NumPy, in place of those a seeded initialisation drew
    (whose last bits depend on the CPU kernels torch runs: docs/float32.md): weights
    N(0, 1/fan_in), normalization scales U(0.5, 1.5), the other vectors U(-0.1, 0.1)."""
    rng = np.random.RandomState(seed)
    with L.no_grad():
        for m in modules:
            for name, p in m.named_parameters():
                shape = tuple(p.shape)
                if p.dim() >= 2:
                    value = rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))
                elif name.endswith("weight"):
                    value = rng.uniform(0.5, 1.5, shape)
                else:
                    value = rng.uniform(-0.1, 0.1, shape)
                p.copy_(L.tensor(value.astype(p.detach().numpy().dtype)))
