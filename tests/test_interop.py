"""Exchange with NumPy and PyTorch: DLPack both ways, ``__array__``, ``numpy()``/``from_numpy``
sharing memory, and the Jupyter display; compared with real torch 2.13."""

import numpy as np
import pytest
import torch

import tapegrad

NO_COPY = "Unable to avoid copy while creating an array as requested."


# -- DLPack ----------------------------------------------------------------------------------


def test_torch_takes_a_tapegrad_tensor_without_copy():
    t = tapegrad.arange(6, dtype=tapegrad.float32).reshape(2, 3)
    p = torch.from_dlpack(t)
    assert p.dtype == torch.float32 and p.shape == (2, 3)
    assert p.data_ptr() == t.data_ptr()
    p[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    t.add_(1)
    assert p.tolist() == [[101.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_tapegrad_takes_a_torch_tensor_without_copy():
    p = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    t = tapegrad.from_dlpack(p)
    assert t.dtype is tapegrad.float64 and tuple(t.shape) == (2, 3)
    assert t.data_ptr() == p.data_ptr()
    p[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    t.mul_(2)
    assert p[0, 1].item() == 2.0


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "uint8", "bool",
                                   "float16", "complex64"])
def test_dtypes_cross_both_ways(dtype):
    p = torch.tensor([0, 1, 1], dtype=getattr(torch, dtype))
    t = tapegrad.from_dlpack(p)
    assert t.dtype.name == dtype
    back = torch.from_dlpack(t)
    assert back.dtype == p.dtype and torch.equal(back, p)


def test_strided_view_keeps_its_strides():
    p = torch.arange(12.0).reshape(3, 4).t()
    t = tapegrad.from_dlpack(p)
    assert t.stride() == p.stride() and t.tolist() == p.tolist()
    back = torch.from_dlpack(t[1:, ::2])
    assert back.tolist() == p[1:, ::2].tolist()
    assert back.data_ptr() == p[1:, ::2].data_ptr()


def test_numpy_exchange_both_ways():
    a = np.arange(4.0)
    t = tapegrad.from_dlpack(a)
    a[0] = 9.0
    assert t[0].item() == 9.0
    b = np.from_dlpack(t)
    b[1] = -3.0
    assert t[1].item() == -3.0
    assert np.shares_memory(a, b)


def test_legacy_capsules():
    t = tapegrad.ones(3)
    p = torch.utils.dlpack.from_dlpack(tapegrad.to_dlpack(t))
    p[0] = 5.0
    assert t[0].item() == 5.0
    capsule = torch.utils.dlpack.to_dlpack(torch.zeros(2))
    assert tapegrad.utils.dlpack.from_dlpack(capsule).tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError) as ours:
        tapegrad.from_dlpack(capsule)  # consumed above
    with pytest.raises(RuntimeError) as theirs:
        torch.from_dlpack(capsule)
    assert str(ours.value) == str(theirs.value)


def test_dlpack_device_and_errors_match_torch():
    assert tapegrad.ones(1).__dlpack_device__() == torch.ones(1).__dlpack_device__()
    assert repr(tapegrad.ones(1).__dlpack_device__()[0]) == "<DLDeviceType.kDLCPU: 1>"
    with pytest.raises(BufferError) as theirs:
        torch.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError) as ours:
        tapegrad.ones(2, requires_grad=True).__dlpack__()
    assert str(ours.value) == str(theirs.value)
    with pytest.raises(RuntimeError) as theirs:
        torch.from_dlpack([1, 2])
    with pytest.raises(RuntimeError) as ours:
        tapegrad.from_dlpack([1, 2])
    assert str(ours.value) == str(theirs.value)


def test_copy_true_does_not_share():
    p = torch.zeros(3)
    t = tapegrad.from_dlpack(p, copy=True)
    p[0] = 1.0
    assert t[0].item() == 0.0


# -- __array__ (NumPy 2's dtype and copy) ----------------------------------------------------


# torch's __array__ takes no copy keyword; NumPy 2 warns about it (and copies as asked)
@pytest.mark.filterwarnings("ignore:__array__ implementation doesn't accept a copy keyword")
def test_asarray_shares_and_array_copies_as_torch():
    for lib in (torch, tapegrad):
        t = lib.ones(3)
        np.asarray(t)[0] = 5.0  # no copy: the tensor sees the write
        np.array(t)[1] = 7.0  # np.array copies by default
        np.asarray(t, copy=True)[2] = 9.0
        assert t.tolist() == [5.0, 1.0, 1.0], lib.__name__


def test_asarray_with_dtype():
    """torch's __array__(dtype=None) takes no copy keyword: NumPy 2 warns, then refuses
    copy=False (it cannot know that no copy is made); tapegrad's is torch's."""
    for lib in (torch, tapegrad):
        t = lib.tensor([1.5, 2.5])
        out = np.asarray(t, dtype=np.float64)
        assert out.dtype == np.float64 and out.tolist() == [1.5, 2.5]
        for dtype in (np.float32, np.float64):
            with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match=NO_COPY):
                np.asarray(t, dtype=dtype, copy=False)


def test_array_of_tensor_requiring_grad_raises_torchs_error():
    with pytest.raises(RuntimeError) as theirs:
        np.asarray(torch.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError) as ours:
        np.asarray(tapegrad.ones(2, requires_grad=True))
    assert str(ours.value) == str(theirs.value)


# -- numpy() and from_numpy ------------------------------------------------------------------


def test_numpy_and_from_numpy_share_memory():
    a = np.zeros(3, dtype=np.float32)
    t = tapegrad.from_numpy(a)
    t[0] = 1.0
    assert a[0] == 1.0
    n = t.numpy()
    n[1] = 2.0
    assert t.tolist() == [1.0, 2.0, 0.0]
    assert np.shares_memory(a, n)


def test_numpy_requires_grad_and_force():
    for lib in (torch, tapegrad):
        x = lib.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires "
                           "grad. Use tensor.detach\\(\\).numpy\\(\\) instead."):
            x.numpy()
        forced = x.numpy(force=True)
        forced[0] = 3.0  # on the CPU, force=True still shares memory
        assert x.tolist() == [3.0, 1.0], lib.__name__
        assert x.detach().numpy().tolist() == [3.0, 1.0]


# -- Jupyter ---------------------------------------------------------------------------------


def test_html_repr_is_the_repr_with_a_header():
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    html = y._repr_html_()
    assert "Tensor 2 · torch.float32 · grad_fn=MulBackward0" in html
    assert "tensor([2., 4.], grad_fn=&lt;MulBackward0&gt;)" in html
    assert "leaf, requires_grad=True" in x._repr_html_()
    assert repr(y) == repr(torch.tensor([1.0, 2.0], requires_grad=True) * 2)  # unchanged
