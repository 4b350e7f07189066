"""nn.utils.rnn against torch: padding, packing and unpacking sequences, values, gradients,
node names and errors."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad

torch = pytest.importorskip("torch")

P1 = torch.nn.utils.rnn
P2 = tapegrad.nn.utils.rnn


def seqs(lengths, rng, trailing=(2,)):
    arrays = [rng.standard_normal((n,) + trailing) for n in lengths]
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    ours = [tapegrad.tensor(a, requires_grad=True) for a in arrays]
    return theirs, ours


def same(a, b):
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())


def same_packed(pt, po):
    assert type(po) is P2.PackedSequence
    same(pt.data, po.data)
    same(pt.batch_sizes, po.batch_sizes)
    for a, b in ((pt.sorted_indices, po.sorted_indices),
                 (pt.unsorted_indices, po.unsorted_indices)):
        assert (a is None) == (b is None)
        if a is not None:
            same(a, b)


def grads_match(theirs, ours, out_t, out_o, rng):
    w = rng.standard_normal(tuple(out_t.shape))
    (out_t * torch.tensor(w)).sum().backward()
    (out_o * tapegrad.tensor(w)).sum().backward()
    for a, b in zip(theirs, ours, strict=True):
        np.testing.assert_array_equal(b.grad.numpy(), a.grad.numpy())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    rng = np.random.default_rng(0)
    theirs, ours = seqs([3, 5, 1], rng)
    pt = P1.pad_sequence(theirs, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    po = P2.pad_sequence(ours, batch_first=batch_first, padding_value=-1.5, padding_side=side)
    same(pt, po)
    assert type(po.grad_fn).__name__ == type(pt.grad_fn).__name__ == "CopySlices"
    grads_match(theirs, ours, pt, po, rng)
    ints = [torch.tensor([1, 2, 3]), torch.tensor([4])]
    same(P1.pad_sequence(ints), P2.pad_sequence([tapegrad.tensor(t.numpy()) for t in ints]))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("lengths_as", ["list", "tensor"])
def test_pack_and_pad_roundtrip(batch_first, enforce_sorted, lengths_as):
    rng = np.random.default_rng(1)
    lengths = [4, 4, 2, 1] if enforce_sorted else [2, 4, 1, 4]
    x = rng.standard_normal((4, 5, 3) if batch_first else (5, 4, 3))
    xt = torch.tensor(x, requires_grad=True)
    xo = tapegrad.tensor(x, requires_grad=True)
    lt = lengths if lengths_as == "list" else torch.tensor(lengths)
    lo = lengths if lengths_as == "list" else tapegrad.tensor(lengths)
    pt = P1.pack_padded_sequence(xt, lt, batch_first=batch_first, enforce_sorted=enforce_sorted)
    po = P2.pack_padded_sequence(xo, lo, batch_first=batch_first, enforce_sorted=enforce_sorted)
    same_packed(pt, po)
    if enforce_sorted:
        assert type(po.data.grad_fn).__name__ == "PackPaddedSequenceBackward0"
    for total in (None, 7):
        padt, lent = P1.pad_packed_sequence(pt, batch_first=batch_first, padding_value=9.0,
                                            total_length=total)
        pado, leno = P2.pad_packed_sequence(po, batch_first=batch_first, padding_value=9.0,
                                            total_length=total)
        same(padt, pado)
        same(lent, leno)
    grads_match([xt], [xo], padt, pado, rng)


def test_pack_sequence_unpack_unpad():
    rng = np.random.default_rng(2)
    for enforce_sorted, lengths in ((True, [4, 3, 1]), (False, [1, 4, 3, 3])):
        theirs, ours = seqs(lengths, rng)
        pt = P1.pack_sequence(theirs, enforce_sorted=enforce_sorted)
        po = P2.pack_sequence(ours, enforce_sorted=enforce_sorted)
        same_packed(pt, po)
        ut, uo = P1.unpack_sequence(pt), P2.unpack_sequence(po)
        assert len(ut) == len(uo)
        for a, b in zip(ut, uo, strict=True):
            same(a, b)
        grads_match(theirs, ours, pt.data, po.data, rng)
    padded = rng.standard_normal((4, 3, 2))
    lens = [4, 2, 3]
    ut = P1.unpad_sequence(torch.tensor(padded), torch.tensor(lens))
    uo = P2.unpad_sequence(tapegrad.tensor(padded), tapegrad.tensor(lens))
    for a, b in zip(ut, uo, strict=True):
        same(a, b)


def test_ties_sort_as_torch():
    x = np.arange(6 * 5, dtype=np.float64).reshape(6, 5)
    lengths = [3, 5, 3, 1, 5, 3]
    pt = P1.pack_padded_sequence(torch.tensor(x), lengths, batch_first=True,
                                 enforce_sorted=False)
    po = P2.pack_padded_sequence(tapegrad.tensor(x), lengths, batch_first=True,
                                 enforce_sorted=False)
    same_packed(pt, po)


def test_packed_sequence_is_a_namedtuple():
    po = P2.pack_sequence([tapegrad.tensor([1.0, 2.0]), tapegrad.tensor([3.0])])
    data, batch_sizes, sorted_indices, unsorted_indices = po
    assert po._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert sorted_indices is None and unsorted_indices is None
    assert po.double().data.dtype == tapegrad.float64
    assert po.to(tapegrad.float64).data.dtype == tapegrad.float64
    assert po.float() is po
    assert po.long().data.dtype == tapegrad.int64
    assert not po.is_cuda
    assert po.batch_sizes.tolist() == [2, 1]
    again = P2.PackedSequence(data, batch_sizes, tapegrad.tensor([1, 0]))
    assert again.unsorted_indices.tolist() == [1, 0]
    assert P2.invert_permutation(tapegrad.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert P2.invert_permutation(None) is None


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e).__name__, str(e)
    return None


ERRORS = [
    lambda P, L: P.pack_padded_sequence(L.zeros(4, 3, 2), [2, 3, 1]),
    lambda P, L: P.pack_padded_sequence(L.zeros(4, 3, 2), [3, 2]),
    lambda P, L: P.pack_padded_sequence(L.zeros(4, 3, 2), [3, 2, 0]),
    lambda P, L: P.pad_packed_sequence(P.pack_padded_sequence(L.zeros(4, 3, 2), [3, 2, 1]),
                                       total_length=2),
    lambda P, L: P.pad_sequence([L.zeros(2)], padding_side="middle"),
    lambda P, L: P.pad_sequence(5),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    theirs = raised(lambda: ERRORS[k](P1, torch))
    assert theirs is not None
    assert raised(lambda: ERRORS[k](P2, tapegrad)) == theirs
