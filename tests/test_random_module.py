"""torch.random (the module) against torch: the default generator's state, seeding, and
fork_rng, bit for bit (the generator itself is tested in tests/test_random.py)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

PUBLIC = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state",
          "thread_safe_generator", "default_generator"]


def test_names(lib):
    for name in PUBLIC:
        assert hasattr(lib.random, name), name
    assert lib.random.Generator is torch.random.Generator  # (collections.abc's, as in torch)
    assert lib.random.default_generator is lib.default_generator


@pytest.mark.parametrize("value", [0, 1, 42, 2**40 + 3, 2**63 - 1, -1, 2**64 - 1, 1.5])
def test_manual_seed(compare, value):
    def scenario(L):
        gen = L.random.manual_seed(value)
        return (gen is L.default_generator, L.random.initial_seed(), L.rand(3),
                L.random.get_rng_state())

    compare(scenario)


@pytest.mark.parametrize("value", [2**64, -2**63 - 1, "a"])
def test_manual_seed_errors(compare, value):
    compare(lambda L: L.random.manual_seed(value))


def test_state_round_trip(compare):
    def scenario(L):
        L.random.manual_seed(3)
        state = L.random.get_rng_state()
        first = L.randn(4)
        L.rand(10)
        L.random.set_rng_state(state)
        again = L.randn(4)
        return state.dtype, state.shape, first, again, L.random.initial_seed()

    compare(scenario)


@pytest.mark.parametrize("bad", ["list", "float tensor", "short state", "str"])
def test_set_rng_state_errors(compare, bad):
    def scenario(L):
        value = {"list": [1, 2], "float tensor": L.zeros(3), "short state": L.zeros(
            3, dtype=L.uint8), "str": "x"}[bad]
        return L.random.set_rng_state(value)

    compare(scenario)


def test_seed(lib):
    value = lib.random.seed()
    assert isinstance(value, int) and 0 <= value < 2**64
    assert lib.random.initial_seed() == value


def test_fork_rng(compare):
    def scenario(L):
        L.random.manual_seed(5)
        with L.random.fork_rng():
            inside = L.rand(3)
        after = L.rand(3)
        with L.random.fork_rng(enabled=False):
            L.rand(3)
        unforked = L.rand(3)
        with L.random.fork_rng(devices=[]):
            L.random.manual_seed(9)
        return inside, after, unforked, L.rand(2)

    compare(scenario)


def test_fork_rng_restores_on_error(compare):
    def scenario(L):
        L.random.manual_seed(2)
        try:
            with L.random.fork_rng():
                L.rand(5)
                raise ValueError("inside")
        except ValueError:
            pass
        return L.rand(3)

    compare(scenario)


def test_fork_rng_meta(compare):
    def scenario(L):
        L.random.manual_seed(1)
        with L.random.fork_rng(device_type="meta"):
            L.rand(2)
        return L.rand(2)

    compare(scenario)


def test_thread_safe_generator(compare):
    compare(lambda L: L.random.thread_safe_generator())
