"""torch.fft (ops/fft.py) against real torch, beyond OpInfo's real-dtype samples: complex inputs
and their gradients, every norm mode, the frequency helpers and the errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

NORMS = [None, "backward", "forward", "ortho"]


def _x(L, shape=(3, 4), dtype=None, **kw):
    rs = np.random.RandomState(0)
    data = rs.randn(*shape) + 1j * rs.randn(*shape)
    dtype = dtype or L.complex128
    if not dtype.is_complex:
        data = data.real
    return L.tensor(data, dtype=dtype, **kw)


CALLS = [
    ("fft", {}), ("fft", {"n": 6}), ("fft", {"n": 3, "dim": 0}), ("ifft", {"n": 2}),
    ("fft2", {}), ("ifft2", {"s": (4, 5)}), ("fftn", {"dim": (0,)}), ("ifftn", {"s": (2, -1)}),
    ("irfft", {}), ("irfft", {"n": 7}), ("irfft2", {}), ("irfftn", {"s": (3, 5)}),
    ("hfft", {}), ("hfft", {"n": 5}), ("hfft2", {}), ("hfftn", {"s": (2, 4)}),
]


@pytest.mark.parametrize("name,kw,norm", [(n, k, m) for (n, k), m in itertools.product(
    CALLS, NORMS)])
def test_complex_input_values_and_gradients(compare, name, kw, norm):
    def scenario(L):
        x = _x(L, requires_grad=True)
        y = getattr(L.fft, name)(x, norm=norm, **kw)
        loss = (y.abs() ** 2).sum() if y.is_complex() else (y * y).sum()
        (g,) = L.autograd.grad(loss, [x])
        return y, g, type(y.grad_fn).__name__

    compare(scenario, rtol=1e-7, atol=1e-9)


REAL_CALLS = [("fft", {}), ("ifft", {}), ("rfft", {"n": 5}), ("rfft2", {}), ("rfftn", {}),
              ("ihfft", {}), ("ihfft2", {}), ("ihfftn", {"s": (2, 6)}), ("fftn", {})]


@pytest.mark.parametrize("name,kw,norm", [(n, k, m) for (n, k), m in itertools.product(
    REAL_CALLS, NORMS)])
def test_real_input_second_order(compare, name, kw, norm):
    def scenario(L):
        x = _x(L, dtype=L.float64, requires_grad=True)
        y = getattr(L.fft, name)(x, norm=norm, **kw)
        (g,) = L.autograd.grad((y.abs() ** 3).sum(), [x], create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), [x])
        return y, g.detach(), gg

    compare(scenario, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int64", "bool"])
def test_single_precision_and_integer_inputs(compare, dtype):
    def scenario(L):
        x = L.tensor([[1, 0, 2, 3], [0, 1, 1, 5]]).to(getattr(L, dtype))
        out = [L.fft.fft(x), L.fft.fftn(x), L.fft.ifft2(x), L.fft.irfft(x), L.fft.hfft(x)]
        if not x.is_complex():
            out += [L.fft.rfft(x), L.fft.ihfft(x), L.fft.rfft2(x)]
        return out

    compare(scenario, rtol=1.3e-6, atol=1e-5)


FREQS = [
    lambda L: L.fft.fftfreq(5),
    lambda L: L.fft.fftfreq(8, 0.1),
    lambda L: L.fft.fftfreq(7, 2.5, dtype=L.float64),
    lambda L: L.fft.rfftfreq(6, 2),
    lambda L: L.fft.rfftfreq(9, dtype=L.float64, requires_grad=True),
    lambda L: L.fft.fftshift(L.arange(10).reshape(2, 5)),
    lambda L: L.fft.ifftshift(L.arange(10).reshape(2, 5), dim=1),
    lambda L: L.fft.ifftshift(L.fft.fftshift(L.arange(7.0))),
    lambda L: L.fft.fftshift(L.fft.fftfreq(6)),
]


@pytest.mark.parametrize("case", range(len(FREQS)))
def test_frequencies_and_shifts(compare, case):
    compare(FREQS[case])


ERRORS = [
    lambda L: L.fft.fft(L.ones(4), norm="bad"),
    lambda L: L.fft.fft(L.ones(4), n=0),
    lambda L: L.fft.irfft(L.ones(1, dtype=L.cfloat)),
    lambda L: L.fft.rfft(L.ones(4, dtype=L.cfloat)),
    lambda L: L.fft.ihfft(L.ones(4, dtype=L.cdouble)),
    lambda L: L.fft.fftn(L.ones(4), s=(2, 3)),
    lambda L: L.fft.fftn(L.ones(4, 4), dim=(0, 0)),
    lambda L: L.fft.fft2(L.ones(4)),
    lambda L: L.fft.fft(L.tensor(1.0)),
    lambda L: L.fft.fftshift(L.tensor(1.0)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(compare, case):
    compare(ERRORS[case])


def test_out(compare):
    def scenario(L):
        out = L.empty(0, dtype=L.complex128)
        r = L.fft.fft(L.arange(4.0, dtype=L.float64), out=out)
        return r is out, out

    compare(scenario)
