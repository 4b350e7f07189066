"""Which ops return views and which copies, against torch: one test per test of torch's
test_view_ops.py (TestViewOps, TestOldViewOps), named alike. A view shares its base's storage
and version counter (``_is_view()``, ``_base``, the same ``untyped_storage().data_ptr()``), so a
write through it shows in the base; a copy does not."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
from torchcompare import error_of, normal_values


def is_view_of(base, other):
    """torch's test helper: ``other`` is a view of ``base`` (and not ``base`` itself)."""
    if not other._is_view() or other is base or other._base is not base:
        return False
    return base.untyped_storage().data_ptr() == other.untyped_storage().data_ptr()


def is_view_of_same_base(v1, v2):
    if not v1._is_view() or v1 is v2:
        return False
    return is_view_of(v1._base, v2)


DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64", "complex128")


def dt(L, name):
    return getattr(L, name)


def make(L, shape, dtype, low=-9, high=9):
    """Deterministic values of any dtype (the same on both libraries)."""
    n = int(np.prod(shape)) if shape else 1
    vals = (np.arange(n) * 7 % (high - low)) + low
    d = dt(L, dtype)
    if dtype == "bool":
        t = L.tensor((vals % 2 == 0).tolist(), dtype=d)
    elif dtype.startswith("complex"):
        t = L.complex(L.tensor(vals.astype(float).tolist()),
                      L.tensor((vals[::-1] * 0.5).tolist())).to(d)
    else:
        t = L.tensor(vals.tolist(), dtype=d)
    return t.reshape(shape).clone()  # (a tensor of its own, not a view)


def write_check(L, t, v, idx_t, idx_v, value=0):
    """Write through ``v`` and read the element back through ``t``."""
    v[idx_v] = value
    return t[idx_t].item(), v[idx_v].item()


# -- TestViewOps --------------------------------------------------------------------------------

def test_conj_self(compare):
    def scenario(L):
        t = L.ones(5, 5)
        return t.conj() is t, [make(L, (2,), d).conj() is not None for d in DTYPES[:9]]

    compare(scenario)


def test_view_dtype_new(compare):
    def scenario(L):
        out = []
        for dtype in ("float32", "float64", "float16", "int64", "int32", "int16", "int8",
                      "uint8", "complex64", "complex128", "bool"):
            inputs = [make(L, (4, 4, 8), dtype), make(L, (4, 4, 8), dtype).permute(1, 0, 2),
                      make(L, (4, 8, 4), dtype).permute(2, 0, 1),
                      make(L, (1, 5, 1), dtype).expand(5, 5, 8),
                      make(L, (2, 5, 16), dtype)[1::2, 1:, ::2], make(L, (0, 5, 8), dtype),
                      make(L, (), dtype)]
            for a in inputs:
                for view_dtype in ("float32", "float64", "float16", "int64", "int32", "int16",
                                   "int8", "uint8", "complex64", "complex128"):
                    r = error_of(lambda a=a, vd=view_dtype: a.view(dt(L, vd)))
                    if r is not None:
                        out.append(r)
                        continue
                    v = a.view(dt(L, view_dtype))
                    out.append((v.dtype, tuple(v.size()), v.stride(),
                                a.data_ptr() == v.data_ptr(), v.view(a.dtype).equal(a)))
        t = make(L, (5, 5, 8), "float32").requires_grad_()
        out.append([t.view(dt(L, d)).requires_grad for d in ("float16", "float64", "complex64")])
        return out

    compare(scenario)


def test_view_dtype_upsize_errors(compare):
    def scenario(L):
        out = []
        for dtype in DTYPES:
            size = dt(L, dtype).itemsize
            for view_dtype in DTYPES:
                vsize = dt(L, view_dtype).itemsize
                if vsize <= size:
                    continue
                ratio = vsize // size
                a = make(L, (4, 4, ratio + 1), dtype)
                out.append(error_of(lambda a=a, vd=view_dtype: a.view(dt(L, vd))))
                out.append(error_of(lambda a=a, vd=view_dtype: a[:, :, 1:].view(dt(L, vd))))
                a = make(L, (4, 4, ratio), dtype).as_strided((4, 4, ratio), (ratio, 1, 1))
                out.append(error_of(lambda a=a, vd=view_dtype: a.view(dt(L, vd))))
        return out

    compare(scenario)


def test_view_as_complex(compare):
    def scenario(L):
        out = []

        def fn(contiguous_input=True, dim0=0, dim1=1):
            t = L.arange(12.0).reshape(3, 2, 2)
            inp = t if contiguous_input else t.transpose(dim0, dim1)
            r = error_of(lambda: L.view_as_complex(inp))
            if r is not None:
                return r
            res = L.view_as_complex(inp)
            return res, is_view_of(t, res)

        out += [fn(), fn(contiguous_input=False), fn(False, 0, 2), fn(False, 1, 2)]
        x = L.randn(3, 3)
        out.append(error_of(lambda: L.view_as_complex(L.as_strided(x, (2, 2), (1, 1)))))
        x = L.tensor([])
        out.append(error_of(lambda: L.view_as_complex(x)))
        out.append(error_of(lambda: L.view_as_complex(L.tensor(2.0))))
        y = x.reshape(0, 2)
        res = L.view_as_complex(y)
        out.append((is_view_of(x, res), res.shape))
        return out

    compare(scenario)


def test_view_as_real(compare):
    def scenario(L):
        out = []
        for dtype in ("complex64", "complex128"):
            for contiguous in (True, False):
                t = make(L, (3, 4), dtype)
                inp = t if contiguous else t.transpose(0, 1)
                res = L.view_as_real(inp)
                out.append((res, res[:, :, 0].equal(inp.real), res[:, :, 1].equal(inp.imag),
                            is_view_of(t, res)))
            x = L.tensor([], dtype=dt(L, dtype))
            res = L.view_as_real(x)
            out.append((is_view_of(x, res), res.shape))
            x = L.tensor(2 + 3j, dtype=dt(L, dtype))
            res = L.view_as_real(x)
            out.append((is_view_of(x, res), res.shape, res))
        return out

    compare(scenario)


def test_view_tensor_split(compare):
    def scenario(L):
        out = []
        for dtype in DTYPES:
            a = make(L, (40, 30), dtype)
            out.append([is_view_of(a, p) for p in a.tensor_split(7, 0)])
            out.append([is_view_of(a, p) for p in a.tensor_split(7, 1)])
        return out

    compare(scenario)


def _xsplit(L, name, idx_piece, idx_t):
    out = []
    for dtype in DTYPES:
        t = make(L, (4, 4, 4), dtype)
        pieces = getattr(L, name)(t, 2)
        out.append([is_view_of(t, p) for p in pieces])
        t[2, 2, 2] = 7
        out.append(pieces[1][idx_piece].item() == t[idx_t].item())
    return out


def test_view_tensor_hsplit(compare):
    compare(lambda L: _xsplit(L, "hsplit", (2, 0, 2), (2, 2, 2)))


def test_view_tensor_vsplit(compare):
    compare(lambda L: _xsplit(L, "vsplit", (0, 2, 2), (2, 2, 2)))


def test_view_tensor_dsplit(compare):
    compare(lambda L: _xsplit(L, "dsplit", (2, 2, 0), (2, 2, 2)))


def test_imag_noncomplex(compare):
    def scenario(L):
        return [error_of(lambda d=d: L.imag(L.ones((5, 5), dtype=dt(L, d))))
                for d in ("float32", "float64", "float16", "bfloat16", "int64", "uint8", "bool")]

    compare(scenario)


def test_real_imag_view(compare):
    def scenario(L):
        out = []
        for dtype in ("complex64", "complex128"):
            for contiguous in (True, False):
                t = make(L, (3, 3), dtype)
                u = t if contiguous else t.T
                re, im = u.real, u.imag
                out.append((re, is_view_of(t, re), im, is_view_of(t, im)))
            a = make(L, (10,), dtype)
            out.append((a[5:].real.equal(a.real[5:]), a[5:].imag.equal(a.imag[5:])))
        return out

    compare(scenario)


def test_set_real_imag(compare):
    def scenario(L):
        warnings.simplefilter("ignore")  # (torch's test suppresses its warn-once cast warning)
        out = []
        for d0, d1 in itertools.product(("complex64", "complex128"), DTYPES):
            x = make(L, (10,), d0)
            new_real = make(L, (10,), d1, low=-3)
            new_imag = make(L, (10,), d1, low=-5)
            r = error_of(lambda x=x, nr=new_real: setattr(x, "real", nr))
            r2 = error_of(lambda x=x, ni=new_imag: setattr(x, "imag", ni))
            out.append((r, r2, x))
        return out

    compare(scenario)


def _simple_view(L, make_view, write_v, read_t, shape=(5, 5)):
    t = L.ones(shape)
    v = make_view(t)
    return is_view_of(t, v), write_check(L, t, v, read_t, write_v)


def test_diagonal_view(compare):
    def scenario(L):
        t = L.ones((3, 3, 3))
        v = L.diagonal(t, offset=1, dim1=1, dim2=2)
        return (_simple_view(L, L.diagonal, 0, (0, 0)),
                (is_view_of(t, v), write_check(L, t, v, (0, 0, 1), (0, 0))))

    compare(scenario)


def test_select_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.select(0, 2), 0, (2, 0)))


def test_unbind_view(compare):
    def scenario(L):
        t = L.zeros((5, 5))
        out = []
        for idx, v in enumerate(L.unbind(t)):
            out.append((is_view_of(t, v), write_check(L, t, v, (idx, 0), 0, idx + 1)))
        return out

    compare(scenario)


def test_unbind(compare):
    def scenario(L):
        stacked = normal_values(L, 3, 4, 4, requires_grad=True)
        x, y, z = stacked.unbind()
        grad = normal_values(L, 3, 4, 4, seed=1)
        L.autograd.backward([x, y, z], grad.unbind())
        out = [stacked.grad.equal(grad)]
        for i in range(3):
            stacked = normal_values(L, 3, 4, 4, seed=2 + i, requires_grad=True)
            outs = stacked.unbind()
            gi = grad.unbind()[i]
            (g,) = L.autograd.grad(outs[i], stacked, gi)
            out.append(g)
        stacked = normal_values(L, 3, 4, 4, seed=5, dtype=L.double, requires_grad=True)
        with warnings.catch_warnings():  # (torch's gradcheck warns about its own internals)
            warnings.simplefilter("ignore", DeprecationWarning)
            out.append(L.autograd.gradcheck(lambda x: x.unbind(), (stacked,),
                                            check_forward_ad=True))
        return out

    compare(scenario)


def test_expand_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.expand(5, 5), (2, 2), (2, 0), shape=(5, 1)))


def test_expand_as_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.expand_as(L.empty((5, 5))), (2, 2), (2, 0),
                                   shape=(5, 1)))


def test_inplace_on_expanded_view_overlap(compare):
    # writing into an expanded view whose elements share memory raises torch's error; an empty
    # one has nothing to write (and copy_ into an empty slice of a padded tensor is fine)
    def scenario(L):
        out = []
        for t in (L.empty(0, 1).expand(0, 3), L.empty(1, 0).expand(3, 0),
                  L.zeros(2, 1).expand(2, 3), L.zeros(1).expand(1)):
            try:
                out.append(list(t.add_(1).shape))
            except RuntimeError as exc:
                out.append(exc)
        out.append(L.nn.functional.pad(L.zeros(0, 3, 3, dtype=L.float64), [1, 2], mode="circular"))
        return out

    compare(scenario)


def test_narrow_view(compare):
    compare(lambda L: _simple_view(L, lambda t: L.narrow(t, 1, 2, 2), (0, 0), (0, 2)))


def test_permute_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.permute(1, 0), (0, 1), (1, 0)))


def test_transpose_view(compare):
    def scenario(L):
        return [_simple_view(L, lambda t, fn=fn: fn(t, 0, 1), (0, 1), (1, 0))
                for fn in (L.swapdims, L.swapaxes, L.transpose)]

    compare(scenario)


def test_transpose_inplace_view(compare):
    def scenario(L):
        out = []
        for name in ("swapdims_", "swapaxes_", "transpose_"):
            t = L.ones(5, 5)
            v = t.view_as(t)
            v = getattr(v, name)(0, 1)
            out.append((is_view_of(t, v), write_check(L, t, v, (1, 0), (0, 1))))
        return out

    compare(scenario)


def test_t_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.t(), (0, 1), (1, 0)))


def test_t_inplace_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.view_as(t).t_(), (0, 1), (1, 0)))


def test_T_view(compare):
    def scenario(L):
        return [_simple_view(L, lambda t, op=op: getattr(t, op), (0, 1), (1, 0))
                for op in ("T", "H", "mT", "mH")]

    compare(scenario)


def test_unfold_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.unfold(0, 3, 2), (1, 0), (2,), shape=(10,)))


def test_squeeze_view(compare):
    def scenario(L):
        t = L.ones(5, 1, 5)
        v = L.squeeze(t)
        v[0, 1] = 0
        return is_view_of(t, v), t.equal(v._base), t

    compare(scenario)


def test_squeeze_inplace_view(compare):
    def scenario(L):
        t = L.ones(5, 5)
        v = t.view_as(t).squeeze_()
        v[0, 1] = 0
        return is_view_of(t, v), t.equal(v._base), t

    compare(scenario)


def test_unsqueeze_view(compare):
    compare(lambda L: _simple_view(L, lambda t: L.unsqueeze(t, 1), (0, 0, 1), (0, 1)))


def test_unsqueeze_inplace_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.view_as(t).unsqueeze_(1), (0, 0, 1), (0, 1)))


def test_as_strided_view(compare):
    compare(lambda L: _simple_view(L, lambda t: L.as_strided(t, (25,), (1,)), (6,), (1, 1)))


def test_as_strided_inplace_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.view_as(t).as_strided_((25,), (1,)), (6,),
                                   (1, 1)))


def test_as_strided_gradients(compare):
    def scenario(L):
        L.manual_seed(0)
        out = []

        def test(x, prepro_fn, size, strides, offset=None):
            x = x.to(L.double).detach().requires_grad_()

            def closure(x):
                if prepro_fn is not None:
                    x = prepro_fn(x)
                return x.as_strided(size, strides, offset)

            out.append(closure(x))
            out.append(L.autograd.gradcheck(closure, [x], check_forward_ad=True))
            out.append(L.autograd.gradgradcheck(closure, [x]))

        # (inputs of NumPy's: their values are the same under every CPU kernel of torch's)
        r12, r5a, r5b, r5c, r35, r15 = (normal_values(L, n, seed=n + i)
                                        for i, n in enumerate((12, 5, 5, 5, 35, 15)))
        r34, x, r23 = (normal_values(L, 3, 4, seed=34), normal_values(L, 6, 2, seed=62),
                       normal_values(L, 2, 3, seed=23))
        test(L.arange(0, 25), lambda x: x.view(5, 5), [3, 3], [6, 2], 2)
        test(r12, None, [1, 2, 1, 5], [0, 5, 100, 1], 2)
        test(r5a, None, [3, 3, 3], [0, 1, 0], 2)
        test(r5b, None, [3, 3, 3], [0, 0, 0], 4)
        test(r5c, lambda x: x.expand(5, 5), [5, 5], [0, 1], 0)
        test(r35, None, [6, 6], [5, 1], 2)
        test(r15, None, [3, 2], [3, 6], 2)
        test(r34, None, [4, 3], [1, 4])
        test(x[3:], None, [3, 2], [2, 1], 0)
        out.append(x[3:].as_strided([3, 2], [2, 1], 0).equal(x[:3]))
        test(r23, lambda x: x.expand(10, 2, 3), [2, 3], [3, 1], 0)
        return out

    compare(scenario)


def test_view_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.view(25), (6,), (1, 1)))


def test_view_as_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.view_as(L.empty((25,))), (6,), (1, 1)))


def test_contiguous_self(compare):
    def scenario(L):
        t = L.ones(5, 5)
        return t.contiguous() is t

    compare(scenario)


def test_contiguous_nonview(compare):
    def scenario(L):
        t = L.ones(5, 5)
        nv = t.t().contiguous()
        return not is_view_of(t, nv), write_check(L, t, nv, (0, 0), (0, 0))

    compare(scenario)


def test_reshape_view(compare):
    compare(lambda L: _simple_view(L, lambda t: L.reshape(t, (25,)), (6,), (1, 1)))


def test_reshape_as_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t.reshape_as(L.empty((25,))), (6,), (1, 1)))


def test_reshape_nonview(compare):
    def scenario(L):
        t = L.ones(5, 5)
        nv = L.reshape(t.t(), (25,))
        return not is_view_of(t, nv), write_check(L, t, nv, (1, 1), (6,))

    compare(scenario)


def test_flatten_view(compare):
    def scenario(L):
        out = []

        def writes_propagate(t, v):
            return write_check(L, t, v, (0,) * t.ndim, (0,) * v.ndim)

        t = L.ones(1, 2, 3, 4)
        v = t.flatten()
        out.append((is_view_of(t, v), writes_propagate(t, v)))
        t = L.tensor(1)
        v = t.flatten()
        out.append((writes_propagate(t, v), is_view_of(t, v)))
        t = L.ones(1, 2, 3, 4).transpose(2, 3)
        v = t.flatten(0, 1)
        out.append((writes_propagate(t, v), is_view_of_same_base(t, v)))
        t = L.ones(720).as_strided((2, 3, 2, 3, 5, 4), (6, 2, 15, 5, 1, 0))
        v1 = t.flatten(0, 1)
        v2 = v1.flatten(1, 3)
        v3 = v2.flatten(2, 2)
        for v in (v1, v2, v3):
            out.append((writes_propagate(t, v), is_view_of_same_base(t, v), v.shape, v.stride()))
        return out

    compare(scenario)


def test_flatten_nonview(compare):
    def scenario(L):
        out = []

        def nonview(t, nv):
            nv[(0,) * nv.ndim] = 0
            return nv._is_view(), t[(0,) * t.ndim].item() != nv[(0,) * nv.ndim].item()

        t = L.ones(2, 3, 2, 3).transpose(2, 3)
        out.append(nonview(t, t.flatten(1, 3)))
        t = L.ones(2, 2).T
        out.append(nonview(t, t.flatten()))
        t = L.ones(2, 2)
        out.append(t.flatten(1, 1) is t)
        return out

    compare(scenario)


def test_basic_indexing_slice_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t[:2, :3], (0, 0), (0, 0)))


def test_basic_indexing_ellipses_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t[..., :2], (0, 0), (0, 0)))


def test_basic_indexing_newaxis_view(compare):
    compare(lambda L: _simple_view(L, lambda t: t[None, :2, 3], (0, 0), (0, 3)))


def test_advanced_indexing_nonview(compare):
    def scenario(L):
        t = L.ones(3, 3)
        rows = L.tensor([[0, 0], [2, 2]])
        cols = L.tensor([[0, 1], [2, 2]])
        nv = t[rows, cols]
        return not is_view_of(t, nv), write_check(L, t, nv, (2, 2), (1, 1))

    compare(scenario)


def test_advanced_indexing_assignment(compare):
    def scenario(L):
        t = L.ones(3, 3)
        rows = L.tensor([[0, 0], [2, 2]])
        cols = L.tensor([[0, 1], [2, 2]])
        t[rows, cols] = 0
        return t

    compare(scenario)


def test_chunk_view(compare):
    """(torch skips its own version: chunk's outputs are views, but writing them in place is
    the multi-output case; here, with no gradient involved, the writes go through.)"""
    def scenario(L):
        t = L.zeros(3, 3)
        out = []
        for idx, v in enumerate(L.chunk(t, 3)):
            out.append((is_view_of(t, v), write_check(L, t, v, (idx, 0), (0, 0), idx + 1)))
        return out

    compare(scenario)


def test_split_view(compare):
    """(Skipped in torch, as test_chunk_view.)"""
    def scenario(L):
        t = L.zeros(3, 3)
        out = []
        for idx, v in enumerate(L.split(t, [1, 1, 1])):
            out.append((is_view_of(t, v), write_check(L, t, v, (idx, 0), (0, 0), idx + 1)))
        return out

    compare(scenario)


def test_movedim_view(compare):
    def scenario(L):
        out = []
        for fn in (L.movedim, L.moveaxis):
            for src, dst in (((0, 1), (1, 0)), (0, 1)):
                t = L.zeros(3, 3)
                o = fn(t, src, dst)
                out.append(is_view_of(t, o))
                for i, j, val in ((0, 1, 0.25), (2, 0, 0.5), (1, 2, 0.75)):
                    o[i, j] = val
                    out.append(t[j, i].item() == o[i, j].item())
        return out

    compare(scenario)


def test_view_copy(compare):
    def scenario(L):
        L.manual_seed(0)
        a = L.randn(4, requires_grad=True)
        a_ref = a.detach().clone().requires_grad_()
        a_view = a_ref.view(2, 2)
        a_view_copy = L.view_copy(a, (2, 2))
        out = [is_view_of(a_ref, a_view), is_view_of(a, a_view_copy)]
        a_view_copy.sum().backward()
        a_view.sum().backward()
        out += [a_view_copy, a_view, a.grad, a_ref.grad, a_view_copy.grad_fn]
        return out

    compare(scenario)


def test_view_copy_output_contiguous(compare):
    def scenario(L):
        a = L.randn(4, 4, 4, 4).to(memory_format=L.channels_last)
        b = L.slice_copy(a, 0, 0, 2)
        return b.is_contiguous(), b.shape

    compare(scenario)


def test_view_copy_out(compare):
    def scenario(L):
        L.manual_seed(0)
        a = L.randn(2, 2)
        out = L.empty(2)
        L.diagonal_copy(a, out=out)
        r = [out, L.diagonal_copy(a)]
        a = L.randn(4)
        out1, out2 = L.empty(2), L.empty(2)
        L.split_copy(a, 2, out=(out1, out2))
        return r, out1, out2, L.split_copy(a, 2)

    compare(scenario)


# -- TestOldViewOps -----------------------------------------------------------------------------

def test_ravel(compare):
    """(torch's version also ravels quantized tensors, which tapegrad does not have.)"""
    def scenario(L):
        out = []

        def check(tensors, size, nc=False):
            for src in tensors:
                flat = src.ravel()
                out.append((flat.shape, src.view(-1).equal(flat), flat._base is src,
                            flat.is_contiguous()))
                if nc:
                    nc_src = src.t()
                    nc_flat = nc_src.ravel()
                    out.append((nc_flat.shape, nc_src.contiguous().view(-1).equal(nc_flat),
                                nc_flat._base is src, nc_flat.is_contiguous()))

        zero_dim = L.tensor(123)
        flat0 = zero_dim.ravel()
        nc_ones = L.ones(10)[::2]
        flat2 = nc_ones.ravel()
        out.append((flat0.shape, flat2.shape, flat0.is_contiguous(), flat2.is_contiguous(),
                    flat0.equal(L.tensor([123])), flat2._base is nc_ones._base))
        check([L.randn(5, 5, 5, 5)], 625)
        check([L.randn(0, 2, 3), L.randn(3, 0, 2)], 0)
        check([L.randn(5, 5)], 25, True)
        return out

    compare(scenario)


def test_empty_reshape(compare):
    def scenario(L):
        x = L.randn(0, 6)
        return (x.reshape(1, 0, 6, 1, 1).shape, x.data_ptr() == x.reshape(1, 0, 6, 1, 1).data_ptr(),
                error_of(lambda: x.reshape(0, -1)))

    compare(scenario)


def test_expand(compare):
    def scenario(L):
        L.manual_seed(0)
        tensor = L.rand(1, 8, 1)
        tensor2 = L.rand(5)
        template = L.rand(4, 8, 5)
        target = template.size()
        out = [tensor.expand_as(template).size(), tensor.expand(4, 8, 5).size(),
               tensor.expand(target).size(), tensor2.expand_as(template).size(),
               tensor2.expand(4, 8, 5).size(), tensor2.expand(target).size(),
               tensor2.expand(1, 5).expand(2, 2, 5).equal(tensor2.repeat(2, 2, 1))]
        noncontig = L.randn(5, 2, 1, 3)[:, 0]
        out.append((noncontig.is_contiguous(), noncontig.expand(2, 5, 4, 3).equal(
            noncontig.contiguous().repeat(2, 1, 4, 1))))
        expanded = tensor2.expand(1, 1, 5)
        unsqueezed = tensor2.unsqueeze(0).unsqueeze(1)
        out.append((expanded.equal(unsqueezed), expanded.stride(), unsqueezed.stride()))
        out.append(tensor.expand(4, -1, 5).equal(tensor.expand(4, 8, 5)))
        out.append(error_of(lambda: tensor2.expand(-1, -1)))
        out.append(L.zeros(0).expand((0,)).equal(L.zeros(0)))
        return out

    compare(scenario)


def test_view_empty(compare):
    def scenario(L):
        return L.randn(0, 6).view(1, 0, 6, 1, 1).shape

    compare(scenario)


def test_reshape(compare):
    def scenario(L):
        L.manual_seed(0)
        x = L.randn(3, 3)
        out = [x.data_ptr() == x.reshape(-1).data_ptr(),
               x.data_ptr() == x.reshape(1, 9, 1).data_ptr(),
               L.reshape(x, (9,)).equal(x.reshape(9)), error_of(lambda: x.reshape(-1, -1))]
        y = L.randn(4, 4, 4)[:, 0, :]
        out += [y.data_ptr() != y.reshape(-1).data_ptr(),
                y.contiguous().view(-1).equal(y.reshape(-1)),
                y.reshape(2, 2, 4).data_ptr() == y.data_ptr()]
        s = L.randn(())
        out += [s.data_ptr() == s.reshape(()).data_ptr(), s.reshape(-1).shape,
                error_of(lambda: s.reshape(2))]
        empty = L.tensor([])
        out += [empty.equal(empty.reshape(-1)), empty.equal(empty.reshape([0])),
                empty.reshape([0, 1]).shape, empty.reshape([1, -1]).shape,
                error_of(lambda: empty.reshape(1))]
        x = L.randn(3, 3)
        out += [x.data_ptr() == x.reshape_as(L.rand(9)).data_ptr(),
                x.data_ptr() == x.reshape_as(L.rand(1, 9, 1)).data_ptr(),
                error_of(lambda: x.reshape_as(L.rand(10)))]
        return out

    compare(scenario)


def test_flatten(compare):
    """(torch's version also flattens quantized tensors, which tapegrad does not have.)"""
    def scenario(L):
        L.manual_seed(0)
        zero_dim = L.tensor(123)
        out = [zero_dim.flatten().shape, zero_dim.flatten().equal(L.tensor([123]))]
        src = L.randn(5, 5, 5, 5)
        for args in ((0, -1), (0, 2), (0, 1), (1, 2), (2, 3), (-2, -1), (2, 2)):
            flat = src.flatten(*args)
            out.append((flat.shape, src.view(-1).equal(flat.view(-1))))
        out.append(error_of(lambda: src.flatten(5, 10)))
        out.append(error_of(lambda: src.flatten(2, 0)))
        return out

    compare(scenario)


def test_narrow(compare):
    def scenario(L):
        x = L.tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8]])
        return [x.narrow(0, 0, 1), x.narrow(0, 0, 2), x.narrow(0, 1, 1), x.narrow(0, -1, 1),
                x.narrow(0, -2, 2), x.narrow(0, -3, 3), x.narrow(-1, -1, 1), x.narrow(-2, -1, 1)]

    compare(scenario)


def test_narrow_tensor(compare):
    def scenario(L):
        x = L.tensor([[0, 1, 2], [3, 4, 5], [6, 7, 8]])
        return (x.narrow(0, L.tensor(0), 1), error_of(lambda: x.narrow(0, L.tensor(0.0), 1)),
                error_of(lambda: x.narrow(0, L.tensor([0]), 1)),
                error_of(lambda: x.narrow(0, L.tensor([0, 1]), 1)))

    compare(scenario)


def test_t(compare):
    """(torch's version also transposes sparse tensors, which tapegrad does not have.)"""
    def scenario(L):
        L.manual_seed(0)
        x = L.randn(())
        y = L.arange(4)
        z = L.rand((2, 2))
        return (x.equal(x.t()), y.equal(y.t()), z.t().equal(z.transpose(0, 1)),
                error_of(lambda: L.rand((2, 2, 2)).t()))

    compare(scenario)


def test_split(compare):
    def scenario(L):
        L.manual_seed(0)
        out = []
        tensor = L.rand(7, 4)
        for split in tensor.split(3, 0):
            out.append(split)
        tensor = L.randn(20, 10)
        start = 0
        for split in tensor.split([5, 5, 10], 0):
            out.append((split.size(), tensor.narrow(0, start, split.size(0)).equal(split)))
            start += split.size(0)
        start = 0
        for split in tensor.split([2, 2, 6], 1):
            out.append((split.size(), tensor.narrow(1, start, split.size(1)).equal(split)))
            start += split.size(1)
        return out

    compare(scenario)


def test_chunk(compare):
    def scenario(L):
        L.manual_seed(0)
        tensor = L.rand(4, 7)
        out = [(c.size(), c) for c in tensor.chunk(3, 1)]
        out += [error_of(lambda: tensor.chunk(0)), error_of(lambda: tensor.chunk(-2))]
        return out

    compare(scenario)


def test_unsqueeze(compare):
    def scenario(L):
        L.manual_seed(0)
        x = L.randn(2, 3, 4)
        out = [x.unsqueeze(1).equal(x.view(2, 1, 3, 4)),
               x.clone().unsqueeze_(2).equal(x.view(2, 3, 1, 4))]
        x = x[:, 1]
        out += [x.is_contiguous(), x.unsqueeze(1).equal(x.contiguous().view(2, 1, 4)),
                x.clone().unsqueeze_(2).equal(x.contiguous().view(2, 4, 1))]
        return out

    compare(scenario)


def test_big_transpose(compare):
    def scenario(L):
        L.manual_seed(0)
        t = L.rand(456, 789)
        t1 = t.t().contiguous()
        return t1.equal(L.from_numpy(t.numpy().transpose()).contiguous()), t1.is_contiguous()

    compare(scenario)


def test_T(compare):
    def scenario(L):
        L.manual_seed(0)
        a = L.randn(2, 3, 4)
        b = L.randn(10)
        return a.T.equal(a.permute(2, 1, 0)), b.equal(b.T)

    compare(scenario)


def test_transposes(compare):
    def scenario(L):
        out = []
        for dtype in DTYPES:
            for op in ("T", "H", "mT", "mH", "adjoint"):
                shapes = ((2, 3), (2, 3, 4)) if op[0] == "m" or op == "adjoint" else ((2, 3),)
                for shape in shapes:
                    a = make(L, shape, dtype)
                    t1 = getattr(a, op)
                    if op == "adjoint":
                        t1 = t1()
                    t2 = a.transpose(-2, -1)
                    if op[-1] == "H" or op == "adjoint":
                        t2 = t2.conj()
                    out.append(t1.equal(t2))
        return out

    compare(scenario)


def test_transposes_errors(compare):
    def scenario(L):
        out = []
        for dtype in DTYPES:
            for op in ("H", "mT", "mH", "adjoint"):
                shapes = ((2,), (2, 3, 4)) if op == "H" else ((2,),)
                for shape in shapes:
                    a = make(L, shape, dtype)
                    out.append(error_of(lambda a=a, op=op: getattr(a, op)() if op == "adjoint"
                                      else getattr(a, op)))
        return out

    compare(scenario)


def test_python_types(compare):
    def scenario(L):
        return (L.randn((1, 2), dtype=L.float64).dtype, L.randn((1, 2), dtype=float).dtype,
                L.arange(10, 20, dtype=L.int64).dtype, L.arange(10, 20, dtype=int).dtype,
                L.tensor([True, False], dtype=L.bool).dtype,
                L.tensor([True, False], dtype=bool).dtype)

    compare(scenario)


def test_resize_as_preserves_strides(compare):
    def scenario(L):
        x = L.empty(2, 3).t()
        old_strides = x.stride()
        x.resize_as_(x)
        return x.stride(), old_strides

    compare(scenario)


def test_memory_format_resize_as(compare):
    def scenario(L):
        out = []
        for shape, fmt in (((10, 3, 8, 8), L.channels_last), ((3, 10, 3, 8, 8),
                                                               L.channels_last_3d)):
            xc = L.randn(shape).contiguous(memory_format=fmt)
            flat = L.randn(xc.numel())
            flat.resize_as_(xc, memory_format=L.preserve_format)
            out.append((flat.is_contiguous(memory_format=fmt), flat.stride()))
        return out

    compare(scenario)


def test_memory_format_resize_(compare):
    def scenario(L):
        out = []
        for shape, fmt in (((10, 3, 8, 8), L.channels_last), ((3, 10, 3, 8, 8),
                                                               L.channels_last_3d)):
            flat = L.randn(int(np.prod(shape)))
            flat.resize_(shape, memory_format=fmt)
            out.append((flat.is_contiguous(memory_format=fmt), flat.stride()))
        return out

    compare(scenario)


def test_transpose_invalid(compare):
    def scenario(L):
        out = []
        for dtype in ("int64", "float32", "complex128"):
            x = make(L, (5, 6, 7, 8), dtype)
            for fn in (L.swapdims, L.swapaxes, L.transpose):
                out.append(error_of(lambda fn=fn, x=x: fn(x, 5, 0)))
                out.append(error_of(lambda fn=fn, x=x: fn(x, 0, 5)))
        return out

    compare(scenario)


def test_transpose_vs_numpy(compare):
    def scenario(L):
        out = []
        for dtype in ("int64", "float32", "complex128"):
            for nd in range(5):
                shape = tuple(range(5, 5 + nd))
                x = make(L, shape, dtype)
                for src, dst in itertools.permutations(range(nd), r=2):
                    for s, d in ((src, dst), (src - nd, dst), (src, dst - nd),
                                 (src - nd, dst - nd)):
                        want = np.swapaxes(x.numpy(), s, d)
                        for r in (L.swapdims(x, dim0=s, dim1=d), L.swapaxes(x, axis0=s, axis1=d),
                                  L.transpose(x, dim0=s, dim1=d)):
                            out.append(np.array_equal(r.numpy(), want) and r.shape == want.shape)
            x = make(L, (2, 3, 5, 7, 11), dtype)
            out.append(L.transpose(x, 0, 0).equal(x))
        return out

    compare(scenario)


def test_atleast(compare):
    def scenario(L):
        out = []
        for dtype in ("float32", "int64", "complex64", "bool"):
            for ndims in range(0, 5):
                x = make(L, tuple(range(2, 2 + ndims)), dtype)
                for fn, np_fn in ((L.atleast_1d, np.atleast_1d), (L.atleast_2d, np.atleast_2d),
                                  (L.atleast_3d, np.atleast_3d)):
                    for t in (x, x.T):
                        r = fn(t)
                        out.append((r.shape, np.array_equal(r.numpy(), np_fn(t.numpy()))))
                    seq = fn(x, x, x)
                    out.append(tuple(r.shape for r in seq))
        return out

    compare(scenario)


def test_atleast_gradient(compare):
    def scenario(L):
        L.manual_seed(0)
        out = []
        for fn in (L.atleast_1d, L.atleast_2d, L.atleast_3d):
            s = L.tensor(0.5, dtype=L.double, requires_grad=True)
            a = L.rand(4, dtype=L.double, requires_grad=True)
            b = L.rand(4, 3, dtype=L.double, requires_grad=True)
            c = L.rand(4, 3, 2, dtype=L.double, requires_grad=True)
            d = L.rand(4, 3, 2, 1, dtype=L.double, requires_grad=True)
            for t in (s, a):
                out.append(L.autograd.gradcheck(lambda x, fn=fn: fn(x), t))
                out.append(L.autograd.gradgradcheck(lambda x, fn=fn: fn(x), t))
            out.append(L.autograd.gradcheck(lambda *xs, fn=fn: fn(*xs), (s, a, b, c, d)))
            out.append(L.autograd.gradgradcheck(lambda *xs, fn=fn: fn(*xs), (s, a, b, c, d)))
            out.append(tuple(r.grad_fn for r in fn(s, a, b, c, d)))
        return out

    compare(scenario)


def test_broadcast_tensors(compare):
    def scenario(L):
        x0, x1, x2 = L.randn(2, 1, 3), L.randn(3), L.randn(3, 1)
        y0, y1, y2 = L.broadcast_tensors(x0, x1, x2)
        return y0.size(), y1.size(), y2.size(), y1._is_view(), y1._base is x1

    compare(scenario)


def test_broadcast_shapes(compare):
    def scenario(L):
        out = []
        examples = [(), (1,), (2,), (1, 1), (3, 1), (3, 2), (4, 1, 1), (4, 3, 2)]
        for s0 in examples:
            x0 = L.randn(s0)
            out.append((L.broadcast_tensors(x0)[0].shape, L.broadcast_shapes(s0)))
            for s1 in examples:
                x1 = L.randn(s1)
                out.append(error_of(lambda x0=x0, x1=x1: L.broadcast_tensors(x0, x1)[0].shape)
                           or (L.broadcast_tensors(x0, x1)[0].shape, L.broadcast_shapes(s0, s1)))
        for ints in ([1, 4], [4, 1], [1, 1, 3]):
            out.append((L.broadcast_shapes(*ints),
                        L.broadcast_tensors(*map(L.empty, ints))[0].shape))
        for bad in ([1, 1, -12], [-1, 1], [-11]):
            out.append(error_of(lambda bad=bad: L.broadcast_shapes(*bad)))
        for bad in [(3, 5), (2, 4, 1)]:
            out.append(error_of(lambda bad=bad: L.broadcast_shapes(*bad)))
        negative = [(-1,), (1, -12), (4, -11), (-4, 1), (1, 1, -2)]
        for s0 in negative:
            out.append(error_of(lambda s0=s0: L.broadcast_shapes(s0)))
            for s1 in negative:
                out.append(error_of(lambda s0=s0, s1=s1: L.broadcast_shapes(s0, s1)))
        for case in [(1.1, 2.0), (1.1, 1.0)]:
            for value in case:
                out.append(error_of(lambda value=value: L.broadcast_shapes(value)))
        for s0 in [(1, (5,)), (3, (1,)), (1, (3, 4))]:
            out.append((L.broadcast_shapes(*s0),
                        L.broadcast_tensors(*map(L.empty, s0))[0].shape))
        return out

    compare(scenario)


def test_broadcast_to(compare):
    def scenario(L):
        out = []
        sizes = ((), (1,), (2,), (1, 1), (3, 1), (3, 2), (4, 1, 1), (4, 3, 2))
        for dtype in ("float32", "float16", "int64", "uint8", "bool", "complex64"):
            for s0, s1 in itertools.combinations(sizes, r=2):
                t = make(L, s0, dtype)
                r = error_of(lambda t=t, s1=s1: L.broadcast_to(t, s1))
                out.append(r if r is not None else L.broadcast_to(t, s1))
        return out

    compare(scenario)


def test_view(compare):
    def scenario(L):
        L.manual_seed(0)
        out = []
        tensor = L.rand(15)
        template = L.rand(3, 5)
        empty = L.empty(0)
        target = template.size()
        out += [tensor.view_as(template).size() == target, tensor.view(3, 5).size(),
                tensor.view(L.Size([3, 5])).size(), tensor.view(-1, 5).size(),
                tensor.view(3, -1).size()]
        tensor.view(5, 3).fill_(0.25)
        out.append(tensor)
        out += [empty.view_as(empty).equal(empty), empty.view(0).equal(empty),
                empty.view(0, 3, 0, 1).size(), empty.view(0, 3, 0, 1).view(0).equal(empty),
                empty.view(-1).size(), empty.view(10, 3, -1).size()]
        out += [error_of(lambda: empty.view(-1, 0)), error_of(lambda: empty.view(3, 0, -1, 0)),
                error_of(lambda: tensor.view(15, 0)), error_of(lambda: tensor.view(7, -1)),
                error_of(lambda: tensor.view(15, -1, -1))]
        tensor = L.rand(4, 2, 5, 1, 6, 2, 9, 3).transpose(-1, 2).transpose(-2, 3)
        contig = tensor.clone()
        for size in ([8, 1, 3, 3, 3, 4, 1, 3, 5], [2, 4, 3, 1, 9, 2, 2, 3, 5, 1],
                     [1, 1, 2, 1, 4, 3, 1, 1, 9, 1, 2, 1, 2, 3, 1, 5, 1, 1]):
            out.append((tensor.view(*size).equal(contig.view(*size)), tensor.view(*size).stride()))
        out += [error_of(lambda: tensor.view(-1)), error_of(lambda: tensor.view(24, 9, 6, 2, 1, 5)),
                error_of(lambda: tensor.view(8, 3, 9, 6, 10)),
                error_of(lambda: tensor.view(8, 3, 54, 2, 1, 5))]
        tensor = L.empty(1, 1).expand(3, 4)
        contig = tensor.clone()
        for size in ((-1,), (1, -1, 1), (-1, 1), (6, 2, 1), (1, 6, 2, 1)):
            out.append((tensor.view(*size).equal(contig.view(*size)), tensor.view(*size).stride()))
        return out

    compare(scenario)


def test_reshape_view_semantics(compare):
    def scenario(L):
        out = []
        for dtype in DTYPES:
            tensor = make(L, (15, 4), dtype)
            view_tensor = tensor.reshape((20, 3))
            copy_tensor = tensor.transpose(0, 1).reshape((20, 3))
            out.append((view_tensor.size(), tensor.storage().data_ptr()
                        == view_tensor.storage().data_ptr(), copy_tensor.size(),
                        tensor.storage().data_ptr() != copy_tensor.storage().data_ptr()))
        return out

    compare(scenario)


def test_contiguous(compare):
    def scenario(L):
        x = L.randn(1, 16, 5, 5)
        out = [x.is_contiguous()]
        stride = list(x.stride())
        stride[0] = 20
        x.set_(x.storage(), 0, x.size(), stride)
        out.append((x.is_contiguous(), x.stride()))
        return out

    compare(scenario)


def test_tensor_split_sections(compare):
    def scenario(L):
        out = []
        for dtype in ("float32", "int64", "bool", "complex64", "float16"):
            for input_size in ((0,), (10,), (10, 0), (0, 10), (4, 10), (12, 3)):
                a_base = make(L, input_size, dtype)
                for a in ([a_base, a_base.t()] if a_base.dim() > 2 else [a_base]):
                    for dim in range(-a.dim(), a.dim()):
                        for sections in range(1, 2 * a.size(dim)):
                            r1 = L.tensor_split(a, sections, dim)
                            r2 = L.tensor_split(a, L.tensor(sections, dtype=L.int64), dim)
                            want = np.array_split(a.numpy(), sections, dim)
                            out.append(all(np.array_equal(x.numpy(), w) and y.equal(x)
                                           and x.dtype == a.dtype
                                           for x, y, w in zip(r1, r2, want, strict=True)))
        return out

    compare(scenario)


def test_tensor_split_indices(compare):
    def scenario(L):
        out = []
        indices_args = [(), (0,), (3,), (10,), (-1,), (-10,), (2, -1), (3, 4, 10),
                        (0, -1, 0, 10), (1, 5, 2, 8)]
        for dtype in ("float32", "int64", "bool", "complex64"):
            for input_size in ((0,), (10,), (10, 0), (0, 10), (4, 10), (12, 3)):
                a = make(L, input_size, dtype)
                for dim in range(-a.dim(), a.dim()):
                    for indices in indices_args:
                        r1 = L.tensor_split(a, indices, dim)
                        r2 = L.tensor_split(a, L.tensor(indices, dtype=L.int64), dim)
                        want = np.array_split(a.numpy(), indices, dim)
                        out.append(all(np.array_equal(x.numpy(), w) and y.equal(x)
                                       for x, y, w in zip(r1, r2, want, strict=True)))
        return out

    compare(scenario)


def test_tensor_split_errors(compare):
    def scenario(L):
        out = []
        for input_size, arg, dim in [((10,), 10, 1), ((), 10, 0), ((10,), (10,), 1),
                                     ((), (10,), 0), ((10,), 0, 0), ((10,), -1, 0)]:
            a = L.randn(input_size)
            out.append(error_of(lambda a=a, arg=arg, dim=dim: L.tensor_split(a, arg, dim)))
            out.append(error_of(lambda a=a, arg=arg, dim=dim: L.tensor_split(a, L.tensor(arg),
                                                                           dim)))
        a = L.randn(10)
        out.append(error_of(lambda: L.tensor_split(a, L.tensor(1.1), 0)))
        out.append(error_of(lambda: L.tensor_split(L.rand(10), L.tensor(((1,),)), 0)))
        return out

    compare(scenario)


def test_resize_all_dtypes_and_devices(compare):
    def scenario(L):
        out = []
        for dtype in DTYPES:
            x = L.tensor([[1, 2], [3, 4], [5, 6]], dtype=dt(L, dtype))
            x.resize_((2, 2))
            out.append(x)
        return out

    compare(scenario)


def test_resize_as_all_dtypes_and_devices(compare):
    def scenario(L):
        out = []
        for dtype in DTYPES:
            x = L.tensor([[1, 2], [3, 4], [5, 6]], dtype=dt(L, dtype))
            y = L.tensor([[1, 2, 3], [4, 5, 6]], dtype=dt(L, dtype))
            x.resize_as_(y)
            out.append(x)
        return out

    compare(scenario)


def test_resize_overflow(compare):
    def scenario(L):
        x = L.empty((), dtype=L.float64)
        return (error_of(lambda: x.resize_([2, 4, 2 ** 29, 2 ** 29])),
                error_of(lambda: x.resize_([8, 8, 2 ** 29, 2 ** 29])),
                error_of(lambda: x.resize_([0, 4, 2305843009213693952])))

    compare(scenario)


def test_view_all_dtypes_and_devices(compare):
    def scenario(L):
        return [L.tensor([[1, 2], [3, 4], [5, 6]], dtype=dt(L, d)).view(6).shape for d in DTYPES]

    compare(scenario)


def test_conj_neg_view_numpy_error(compare):
    def scenario(L):
        return (error_of(lambda: L.tensor([1 + 2j]).conj().numpy()),
                error_of(lambda: L.tensor([1 + 2j]).conj().imag.numpy()),
                error_of(lambda: L.tensor([1 + 2j]).conj().view(L.float64)),
                error_of(lambda: L.tensor([1 + 2j]).conj().imag.view(L.int32)))

    compare(scenario)
