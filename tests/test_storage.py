"""Storages and what works on them directly (tapegrad/_storage.py), and the Tensor attributes a
CPU-only build answers simply (tapegrad/_tensor_surface.py), compared with torch."""

from __future__ import annotations

import numpy as np
import pytest


def test_untyped_storage_is_shared_memory(compare):
    def scenario(L):
        x = L.arange(6.0)
        s = x.untyped_storage()
        v = x[2:].view(2, 2).t()
        same = [t.untyped_storage().data_ptr() == s.data_ptr() for t in (v, x.detach(), x.data)]
        other = L.arange(6.0).untyped_storage().data_ptr() == s.data_ptr()
        return (s.nbytes(), s.size(), len(s), s.element_size(), s[4], s.tolist()[:8], same,
                other, repr(s[0:4]), repr(L.empty(0).untyped_storage()),
                L.empty(0).untyped_storage().data_ptr(), str(s.device))

    compare(scenario)


def test_typed_storage(compare):
    def scenario(L):
        x = L.tensor([1, 2, 3], dtype=L.int32)
        st = x[1:].storage()
        st[0] = 7
        return (repr(st), st.size(), len(st), str(st.dtype), st.element_size(), st.nbytes(),
                st.tolist(), x, st.data_ptr() == x.data_ptr(), x.storage_type().__name__,
                L.ones(1, dtype=L.bool).storage_type().__name__)

    compare(scenario)


def test_typed_storage_warns_once(lib, oracle, lib_name):
    """torch warns on the first storage() of a process only: both flags reset, then twice."""
    import warnings

    from torch import storage as torch_storage

    from tapegrad import _storage

    def first_two(L):
        torch_storage._reset_warn_typed_storage_removal()
        _storage._TYPED_STORAGE_WARNED[0] = False
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            L.ones(2).storage()
            L.ones(2).storage()
        return [(w.category.__name__, str(w.message)) for w in seen]

    assert first_two(lib) == first_two(oracle)
    assert len(first_two(oracle)) == 1


@pytest.mark.parametrize("args", [
    ("storage", 2, (2, 2), (2, 1)),
    ("storage", 0),
    ("storage",),
    ("tensor", 1, (2,)),
    ("tensor", 1),
    ("tensor",),
    (),
])
def test_set_(compare, args):
    def scenario(L):
        src = L.arange(6.0)
        y = L.zeros(3)
        if args and args[0] == "storage":
            y.set_(src.untyped_storage(), *args[1:])
        elif args:
            y.set_(src, *args[1:])
        else:
            y.set_()
        src[0] = 100.0  # y sees it when it views src's memory
        return y, y.shape, y.stride()

    compare(scenario)


@pytest.mark.parametrize("make,size,fmt", [
    (lambda L: L.arange(25.0).view(5, 5).t(), (5,), None),  # storage order, not logical
    (lambda L: L.arange(4.0), (2, 2), None),
    (lambda L: L.arange(6.0)[2:], (2, 2), None),  # from the view's storage offset
    (lambda L: L.arange(24.0), (1, 2, 3, 4), "channels_last"),
    (lambda L: L.ones(()), (), None),
    (lambda L: L.ones(()), (1, 1, 1), None),
])
def test_resize_(compare, make, size, fmt):
    def scenario(L):
        x = make(L)
        kw = {"memory_format": getattr(L, fmt)} if fmt else {}
        y = x.resize_(list(size), **kw)
        return y is x, x, x.stride()

    compare(scenario)


def test_resize_grows_the_storage(compare):
    def scenario(L):
        x = L.arange(3.0)
        x.resize_(2, 3)
        return x[0], x.shape, x.untyped_storage().nbytes()  # (new elements: unspecified)

    compare(scenario)


def test_set_to_another_dtype(compare):
    compare(lambda L: L.zeros(3).set_(L.arange(3)))


def test_resize_as_and_errors(compare):
    compare(lambda L: L.resize_as_(L.arange(6.0), L.zeros(2, 3)))
    compare(lambda L: L.ones(3, requires_grad=True).resize_(4))
    compare(lambda L: L.ones(3).resize_())


def test_deprecated_resize(compare):
    def scenario(L):
        x = L.arange(6.0).requires_grad_()
        y = x.resize(3, 2)
        z = x.resize_as(L.zeros(6))
        (y.sum() + 2 * z.sum()).backward()
        return y, z, x.grad

    compare(scenario)
    compare(lambda L: L.arange(6.0).resize(4))


@pytest.mark.parametrize("size,stride", [((2, 3), (1, 2)), ((2, 2, 2), (0, 2, 1)), ((0, 3), (3, 1)),
                                         ((2, 3), (1,)), ((2, -3), (1, 2)), ((2, 3), (1, -2))])
def test_empty_strided(compare, size, stride):
    def scenario(L):
        x = L.empty_strided(size, stride, dtype=L.float64)
        y = L.ones(2, dtype=L.int32).new_empty_strided(size, stride)
        return x.shape, x.stride(), x.dtype, y.stride(), y.dtype

    compare(scenario)


@pytest.mark.parametrize("size,layout", [((2, 3, 4), (2, 0, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)),
                                         ((2,), (0, 1)), ((2,), (3,)), ((2, 3), (0, 0)),
                                         ((2, 3), (-1, 0))])
def test_empty_permuted(compare, size, layout):
    compare(lambda L: (lambda x: (x.shape, x.stride()))(L.empty_permuted(size, layout)))


def test_as_strided_(compare):
    def scenario(L):
        y = L.arange(6.0)[1:]
        y.as_strided_((2,), (2,))
        z = L.arange(6.0)[1:]
        z.as_strided_((2, 2), (1, 2), 0)
        return y, y.storage_offset(), z

    compare(scenario)
    compare(lambda L: L.ones(3, requires_grad=True).as_strided_((2,), (1,)))


def test_slice_inverse(compare):
    def scenario(L):
        src = L.zeros(4, 5, dtype=L.float64)
        base = L.zeros(20, dtype=L.float64, requires_grad=True)
        s = base[5:13].view(4, 2)
        out = L.slice_inverse(s, src, 1, 1, 3)
        out.backward(L.arange(20.0, dtype=L.float64).view(4, 5))
        return out.shape, out.stride(), out.grad_fn, base.grad

    compare(scenario)


def test_from_file(lib, oracle, tmp_path):
    path = tmp_path / "values.bin"
    np.arange(3, dtype=np.float32).tofile(path)
    for L in (lib, oracle):
        assert L.from_file(str(path), shared=False, size=2).tolist() == [0.0, 1.0]
        assert L.from_file(str(path), size=0).shape == (0,)
        with pytest.raises(RuntimeError, match=r"size <12> is smaller than the required mapping "
                                               r"size <16>"):
            L.from_file(str(path), shared=False, size=4)
        with pytest.raises(RuntimeError, match="in read-only mode: No such file"):
            L.from_file(str(tmp_path / "absent.bin"), size=1)
    private = lib.from_file(str(path), shared=False, size=3)
    private[0] = 9.0
    assert np.fromfile(path, dtype=np.float32)[0] == 0.0  # private: the file is unchanged
    mapped = lib.from_file(str(tmp_path / "new.bin"), shared=True, size=2, dtype=lib.float64)
    mapped[1] = 5.0
    del mapped
    assert np.fromfile(tmp_path / "new.bin", dtype=np.float64).tolist() == [0.0, 5.0]


@pytest.mark.parametrize("attr", ["is_xla", "is_ipu", "is_maia", "is_mtia", "is_nested", "name",
                                  "volatile", "ipu", "mtia", "reinforce", "is_distributed",
                                  "to_dense"])
def test_other_backends_and_removed_features(compare, attr):
    def scenario(L):
        x = L.ones(2)
        v = getattr(x, attr)
        if callable(v):
            return v(1) if attr == "reinforce" else v()
        return v

    compare(scenario)


def test_surface_functions(compare):
    def scenario(L):
        x = L.zeros(3)
        x.volatile = True
        y = L.index_put_(x, (L.tensor([0, 2]),), L.tensor(1.0))
        w = L.ones(2).module_load(L.full((2,), 3.0))
        return (y, L.is_complex(x), L.is_complex(x.cfloat()), L.is_distributed(x),
                x.to_dense(L.float64), w, L.thread_safe_generator())

    compare(scenario)
    compare(lambda L: L.is_complex(3))


def test_copy_ops(compare):
    def scenario(L):
        x = L.arange(12.0, dtype=L.float64).view(3, 4).requires_grad_()
        outs = (L.select_copy(x, 1, -1), L.slice_copy(x, 1, 1, 3), L.narrow_copy(x, 0, 1, 2),
                *L.split_copy(x, 2), *L.unsafe_split_with_sizes(x, [1, 3], 1))
        sum(o.sum() for o in outs).backward()
        z = L.view_as_real_copy(L.view_as_complex(x.detach().view(3, 2, 2)))
        return outs, x.grad, z, L.view_as_complex_copy(x.detach().view(6, 2))

    compare(scenario)


def test_detach_copy_has_no_derivative(compare):
    def scenario(L):
        x = L.ones(2, requires_grad=True)
        y = L.detach_copy(x)
        names = (y.requires_grad, type(y.grad_fn).__name__)
        y.sum().backward()
        return names

    compare(scenario)
