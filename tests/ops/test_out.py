"""``out=`` against torch: the result written into ``out`` and ``out`` returned, resizing with
torch's warning, the dtype rules and their errors, tuple outs, overlaps, the version counter,
and the autograd error; one seam gives every function its ``out`` (tapegrad/_out.py)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")


def _x(L):
    return L.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]])


SCENARIOS = {
    "same shape": lambda L: (lambda o: (L.add(_x(L), 1, out=o) is o, o, o._version))(
        L.empty(2, 3)),
    "resized with warning": lambda L: (lambda o: (L.mul(_x(L), 2, out=o), o.shape))(
        L.zeros(4)),
    "empty resized silently": lambda L: (lambda o: (L.sin(_x(L), out=o), o.shape))(
        L.empty(0)),
    "int result into float out": lambda L: L.add(L.tensor([1, 2]), 3, out=L.empty(2)),
    "float result into int out": lambda L: L.add(_x(L), 1, out=L.empty(2, 3, dtype=L.int64)),
    "float into float64 out": lambda L: L.exp(_x(L), out=L.empty(2, 3, dtype=L.float64)),
    "complex into float out": lambda L: L.mul(L.tensor([1j]), 2, out=L.empty(1)),
    "mm exact dtype": lambda L: L.mm(_x(L), _x(L).T, out=L.empty(2, 2, dtype=L.float64)),
    "mm": lambda L: L.mm(_x(L), _x(L).T, out=L.empty(2, 2)),
    "sum any dtype": lambda L: L.sum(_x(L), 0, out=L.empty(3, dtype=L.int32)),
    "max tuple": lambda L: (lambda v, i: (L.max(_x(L), 1, out=(v, i)), type(L.max(
        _x(L), 1, out=(v, i))).__name__))(L.empty(2), L.empty(2, dtype=L.int64)),
    "sort tuple": lambda L: L.sort(_x(L), 1, out=(L.empty(0), L.empty(0, dtype=L.int64))),
    "aminmax tuple": lambda L: L.aminmax(_x(L), out=(L.empty(()), L.empty(()))),
    "tuple of wrong length": lambda L: L.max(_x(L), 1, out=(L.empty(2),)),
    "tuple wrong index dtype": lambda L: L.max(_x(L), 1, out=(L.empty(2), L.empty(2))),
    "out not a tensor": lambda L: L.add(_x(L), 1, out=[1, 2]),
    "requires grad": lambda L: L.add(_x(L).requires_grad_(), 1, out=L.empty(2, 3)),
    "out requires grad": lambda L: L.add(_x(L), 1, out=L.empty(2, 3, requires_grad=True)),
    "requires grad under no_grad": lambda L: (lambda o: (L.no_grad().__enter__(), L.mul(
        _x(L).requires_grad_(), 2, out=o), L.set_grad_enabled(True))[1])(L.empty(2, 3)),
    "expanded out": lambda L: L.add(_x(L), 1, out=L.empty(1, 3).expand(2, 3)),
    "out overlaps input": lambda L: (lambda a: L.add(a[:4], 1, out=a[2:]))(L.arange(6.0)),
    "out is input": lambda L: (lambda a: (L.add(a, 1, out=a), a._version))(_x(L)),
    "factory zeros": lambda L: (lambda o: (L.zeros(2, 2, out=o) is o, o))(L.empty(3)),
    "factory dtype from out": lambda L: L.arange(4, out=L.empty(0, dtype=L.float64)),
    "factory dtype mismatch": lambda L: L.ones(2, dtype=L.float64, out=L.empty(2)),
    "factory requires out grad": lambda L: L.zeros(2, out=L.empty(2, requires_grad=True)),
    "linalg inv": lambda L: L.linalg.inv(L.eye(3) * 2, out=L.empty(3, 3)),
    "linalg exact dtype": lambda L: L.linalg.inv(L.eye(2), out=L.empty(2, 2,
                                                                       dtype=L.float64)),
    "linalg tuple": lambda L: L.linalg.slogdet(L.eye(2) * 3, out=(L.empty(()), L.empty(()))),
    "fft": lambda L: L.fft.fft(L.arange(4.0), out=L.empty(4, dtype=L.complex64)),
    "fft wrong dtype": lambda L: L.fft.fft(L.arange(4.0), out=L.empty(4)),
    "special": lambda L: L.special.expit(_x(L), out=L.empty(2, 3)),
    "cat": lambda L: L.cat([_x(L), _x(L)], out=L.empty(4, 3)),
    "cat into an input": lambda L: (lambda a: L.cat([a, a], out=a))(_x(L)),
    "clamp": lambda L: L.clamp(_x(L), -1, 1, out=L.empty(2, 3)),
    "where": lambda L: L.where(_x(L) > 0, _x(L), -_x(L), out=L.empty(2, 3)),
    "where with a number": lambda L: L.where(_x(L) > 0, _x(L), 0.0, out=L.empty(2, 3)),
    "factory resize warns": lambda L: L.arange(4, out=L.empty(3)),
    "arange into as many elements": lambda L: (lambda o: (L.arange(4, out=o), o.shape))(
        L.empty(2, 2)),
    "fftfreq resize": lambda L: L.fft.fftfreq(4, out=L.empty(3)),
    "range resize": lambda L: L.range(0, 3, out=L.empty(3)),
    "matmul resize": lambda L: L.matmul(_x(L), _x(L).T, out=L.empty(7)),
    "keyword out of a method": lambda L: _x(L).add(1, out=L.empty(2, 3)),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_out(compare, name):
    compare(SCENARIOS[name])


def test_version_bump(lib):
    o = lib.empty(2, 3)
    before = o._version
    lib.add(_x(lib), 1, out=o)
    assert o._version == before + 1


def test_no_out_is_the_function(lib, lib_name):
    """Without ``out`` the function runs as it is; the method form has no ``out`` seam."""
    import inspect

    if lib_name != "tapegrad":
        pytest.skip("torch's functions are built-ins without a Python signature")
    assert "out" in inspect.signature(lib.add).parameters
    assert lib.add(_x(lib), 1).shape == (2, 3)
