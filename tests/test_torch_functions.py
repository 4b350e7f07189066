"""Small torch functions and Tensor methods (_torch_functions.py) against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import tapegrad

LIBS = (tapegrad, torch)


def _same_error(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(tapegrad)
    assert str(got.value) == str(want.value)


def test_predicates():
    for m in LIBS:
        x = m.ones(2, 3)
        assert m.typename(x) == "torch.FloatTensor" and m.typename(1) == "int"
        assert x.is_signed() and m.is_signed(x) and not m.tensor([1], dtype=m.uint8).is_signed()
        assert m.is_same_size(x, m.zeros(2, 3)) and not x.is_same_size(m.zeros(3, 2))
        assert m.tensor([2.0]).is_nonzero() and not m.is_nonzero(m.tensor(0))
        assert m.get_device(x) == -1 and not m.is_storage(x) and not m.is_inference(x)
        assert x.is_set_to(x) and x.is_set_to(x[:]) and not x.is_set_to(x.view(6))
        assert x.dim_order() == (0, 1) and x.t().dim_order() == (1, 0)
        assert not x.is_shared() and x.share_memory_() is x and x.is_shared()
        assert x.const_data_ptr() == x.data_ptr()
        assert m.set_flush_denormal(False) is True
        assert m.init_num_threads() is None
    _same_error(lambda m: m.tensor([1, 2]).is_nonzero())
    _same_error(lambda m: m.tensor([]).is_nonzero())


def test_warn_always_flag():
    assert not tapegrad.is_warn_always_enabled()
    tapegrad.set_warn_always(True)
    assert tapegrad.is_warn_always_enabled()
    tapegrad.set_warn_always(False)


def test_range_is_inclusive_and_deprecated():
    for args, kw in (((1, 4), {}), ((0, 1, 0.25), {"dtype": "float64"}), ((1, 2, 0.3), {})):
        out = []
        for m in LIBS:
            kwargs = {k: getattr(m, v) for k, v in kw.items()}
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out.append(m.range(*args, **kwargs))
            assert "torch.range is deprecated" in str(caught[0].message)
        assert out[0].dtype.name == str(out[1].dtype).split(".")[1]
        np.testing.assert_allclose(out[0].numpy(), out[1].numpy())


def test_frombuffer_shares_memory():
    for m in LIBS:
        b = bytearray(8)
        t = m.frombuffer(b, dtype=m.int32)
        t[0] = 5
        assert b[0] == 5 and m.frombuffer(bytearray(12), dtype=m.int32, count=2,
                                          offset=4).tolist() == [0, 0]
    _same_error(lambda m: m.frombuffer(bytearray(0), dtype=m.int32))
    _same_error(lambda m: m.frombuffer(bytearray(7), dtype=m.int32))


def test_new_and_callbacks():
    for m in LIBS:
        x = m.ones(2, 3)
        assert x.new(2).shape == (2,) and x.new().shape == (0,)
        assert m.tensor([1]).new([1.7, 2]).tolist() == [1, 2]
        z = m.arange(6.0).reshape(2, 3)
        v = z._version
        z.apply_(lambda a: a * 2)
        z.map_(m.ones(3), lambda a, b: a + b)
        z.map2_(m.ones(3), m.ones(2, 3), lambda a, b, c: a + b + c)
        assert z.tolist() == [[3.0, 5.0, 7.0], [9.0, 11.0, 13.0]] and z._version == v


@pytest.mark.parametrize("shape,wrap", [((5, 3), True), ((5, 3), False), ((3, 5), False),
                                        ((2, 2, 2), False), ((7, 2), True)])
def test_fill_diagonal(shape, wrap):
    got, want = tapegrad.zeros(*shape), torch.zeros(*shape)
    got.fill_diagonal_(1.5, wrap=wrap)
    want.fill_diagonal_(1.5, wrap=wrap)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    _same_error(lambda m: m.zeros(3).fill_diagonal_(1))
    _same_error(lambda m: m.zeros(2, 3, 2).fill_diagonal_(1))


def test_adjoint_and_as_subclass():
    x = np.arange(6.0).reshape(2, 3)
    for m in LIBS:
        t = m.tensor(x)
        assert m.adjoint(t).tolist() == x.T.tolist() and t.adjoint().shape == (3, 2)

        class Sub(m.Tensor):
            pass

        s = t.as_subclass(Sub)
        assert type(s) is Sub and s.tolist() == x.tolist()
        s.add_(1)
        assert t[0, 0].item() == 1.0 and t._version == s._version
        s.label = "a"  # the object's own attributes stay with it, as torch's do
        assert not hasattr(s.as_subclass(m.Tensor), "label")
        z = m.tensor([1 + 2j]).conj()  # the lazy conjugation is the tensor's state: it stays
        assert z.as_subclass(Sub).is_conj() and z.as_subclass(Sub).resolve_conj().imag == -2


@pytest.mark.parametrize("call", [
    lambda L, x: L.tensor_split(x, indices=(-1,), dim=0),
    lambda L, x: L.tensor_split(x, sections=3),
    lambda L, x: x.tensor_split(indices=[2, 5]),
    lambda L, x: L.tensor_split(x, tensor_indices_or_sections=L.tensor([1, 4])),
    lambda L, x: (L.pi, L.e, L.inf, L.newaxis, str(L.nan)),
])
def test_tensor_split_keywords_and_constants(compare, call):
    compare(lambda L: call(L, L.arange(10.0)))
