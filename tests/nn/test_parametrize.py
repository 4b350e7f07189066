"""nn.utils.parametrize and nn.utils.parametrizations compared with torch: the generated
class, properties and state_dict keys, right_inverse on registration and assignment, chains,
removal, caching, errors; weight_norm, spectral_norm and orthogonal (values, gradients with
respect to the originals, buffers after manual_seed, training steps); the hook-based
weight_norm / spectral_norm; and the linalg functions they use.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from torchcompare import raised


def _modules(L):
    class Symmetric(L.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    class Scale(L.nn.Module):  # no right_inverse
        def forward(self, X):
            return 2.0 * X

    class Double(L.nn.Module):  # invertible
        def forward(self, X):
            return 2.0 * X

        def right_inverse(self, Y):
            return Y / 2.0

    class Split(L.nn.Module):  # two originals
        def forward(self, A, B):
            return A + B

        def right_inverse(self, X):
            return (X * 0.25, X * 0.75)

    return Symmetric, Scale, Double, Split


def _lin(L, n):
    """n points evenly spaced in [-1, 1] (float32, made by NumPy on both sides)."""
    return L.tensor(np.linspace(-1, 1, n, dtype=np.float32))


def _fixed(L, m, seed=0):
    """``m`` with its parameters from NumPy: the same values in both libraries whatever random
    kernels torch runs (tests/cpu_kernels.py; the draws themselves are test_init's subject)."""
    rng = np.random.default_rng(seed)
    with L.no_grad():
        for p in m.parameters():
            p.copy_(L.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape))))
    return m


def _train(L, m, steps=3, make_opt=None):
    opt = (make_opt or (lambda ps: L.optim.SGD(ps, lr=0.1, momentum=0.9)))(m.parameters())
    x = _lin(L, 2 * m.in_features).reshape(2, m.in_features).to(m.weight.dtype)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = m(x).pow(2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def test_register_basic(compare):
    def scenario(L):
        P = L.nn.utils.parametrize
        Symmetric, _, _, _ = _modules(L)
        L.manual_seed(0)
        m = L.nn.Linear(3, 3)
        other = L.nn.Linear(3, 3)
        P.register_parametrization(m, "weight", Symmetric())
        m(L.ones(2, 3)).sum().backward()
        orig = m.parametrizations.weight.original
        return (type(m).__name__, type(other).__name__, P.type_before_parametrizations(m),
                P.is_parametrized(m), P.is_parametrized(m, "weight"),
                P.is_parametrized(m, "bias"), P.is_parametrized(other), repr(m),
                m.weight, orig, orig.grad, dict(m.state_dict()),
                [n for n, _ in m.named_parameters()], isinstance(m, L.nn.Linear),
                type(m.parametrizations).__name__, _train(L, m))

    compare(scenario, rtol=1e-5)


def test_assignment_and_chains(compare):
    def scenario(L):
        P = L.nn.utils.parametrize
        Symmetric, Scale, Double, _ = _modules(L)
        L.manual_seed(1)
        m = L.nn.Linear(3, 3)
        P.register_parametrization(m, "weight", Symmetric())
        P.register_parametrization(m, "weight", Double())
        w1 = m.weight
        target = L.arange(9.0).reshape(3, 3)
        m.weight = target + target.T  # right_inverse of Double, then of Symmetric
        orig = m.parametrizations.weight.original.clone()
        w2 = m.weight
        P.register_parametrization(m, "weight", Scale())  # no right_inverse: assignment fails
        err = raised(setattr, m, "weight", L.zeros(3, 3))
        return (w1, orig, w2, m.weight, len(m.parametrizations.weight), err,
                list(m.state_dict()), m.parametrizations.weight.unsafe)

    compare(scenario)


def test_sequence_right_inverse(compare):
    def scenario(L):
        P = L.nn.utils.parametrize
        _, _, _, Split = _modules(L)
        L.manual_seed(2)
        m = L.nn.Linear(4, 2)
        P.register_parametrization(m, "weight", Split())
        plist = m.parametrizations.weight
        keys = list(m.state_dict())
        m(L.ones(1, 4)).sum().backward()
        grads = (plist.original0.grad, plist.original1.grad)
        m.weight = L.ones(2, 4)
        err = raised(P.remove_parametrizations, m, "weight", leave_parametrized=False)
        P.remove_parametrizations(m, "weight")
        return (keys, grads, plist.original0, plist.original1, hasattr(plist, "original"),
                plist.ntensors, err, type(m).__name__, m.weight,
                type(m.weight).__name__, list(m.state_dict()))

    compare(scenario)


def test_remove_parametrizations(compare):
    def scenario(L):
        P = L.nn.utils.parametrize
        Symmetric, _, Double, _ = _modules(L)
        out = []
        for leave in (True, False):
            L.manual_seed(3)
            m = L.nn.Linear(3, 3)
            P.register_parametrization(m, "weight", Symmetric())
            P.register_parametrization(m, "bias", Double())
            orig = m.parametrizations.weight.original
            P.remove_parametrizations(m, "weight", leave_parametrized=leave)
            still = (type(m).__name__, P.is_parametrized(m))
            P.remove_parametrizations(m, "bias", leave_parametrized=leave)
            out.append((still, type(m).__name__, m.weight, m.bias, m.weight is orig,
                        type(m.weight).__name__, hasattr(m, "parametrizations"),
                        list(m.state_dict())))
        out.append(raised(P.remove_parametrizations, L.nn.Linear(2, 2), "weight"))
        return out

    compare(scenario)


def test_parametrize_buffer_and_cache(compare):
    def scenario(L):
        P = L.nn.utils.parametrize
        calls = []

        class Counting(L.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X.exp()

        m = L.nn.BatchNorm1d(3)
        P.register_parametrization(m, "running_var", Counting())
        before = m.running_var
        with P.cached():
            a = m.running_var
            b = m.running_var
            same = a is b
        n_cached = len(calls)
        after = m.running_var  # outside the block: computed again
        return (before, same, n_cached, len(calls), after, list(m.state_dict()),
                [n for n, _ in m.named_buffers()])

    compare(scenario)


def test_register_errors(compare):
    def scenario(L):
        P = L.nn.utils.parametrize
        Symmetric, _, _, _ = _modules(L)

        class Shrink(L.nn.Module):
            def forward(self, X):
                return X[0]

        class ToDouble(L.nn.Module):
            def forward(self, X):
                return X.double()

        class NotTensor(L.nn.Module):
            def forward(self, X):
                return 3

        class BadInverse(L.nn.Module):
            def forward(self, X):
                return X

            def right_inverse(self, X):
                return "no"

        class DtypeInverse(L.nn.Module):
            def forward(self, X):
                return X

            def right_inverse(self, X):
                return X.double()

        class BadInverseLater(L.nn.Module):
            def forward(self, X):
                return X

            def right_inverse(self, X):
                return X[0]

        def fresh():
            L.manual_seed(0)
            return L.nn.Linear(3, 3)

        errs = [raised(P.register_parametrization, fresh(), p(), "weight") for p in ()]
        for p in (Shrink, ToDouble, NotTensor, BadInverse, DtypeInverse):
            m = fresh()
            errs.append(raised(P.register_parametrization, m, "weight", p()))
            errs.append((type(m).__name__, list(m.state_dict())))
        errs.append(raised(P.register_parametrization, fresh(), "nothing", Symmetric()))
        for p in (Shrink, ToDouble, NotTensor, BadInverseLater):  # on top of an existing one
            m = fresh()
            P.register_parametrization(m, "weight", Symmetric())
            errs.append(raised(P.register_parametrization, m, "weight", p()))
        m = fresh()
        P.register_parametrization(m, "weight", Shrink(), unsafe=True)
        errs.append((m.weight.shape, m.parametrizations.weight.unsafe))
        errs.append(raised(P.ParametrizationList, [], L.ones(2)))
        return errs

    compare(scenario)


def test_transfer_deepcopy_pickle(compare):
    def scenario(L):
        P = L.nn.utils.parametrize
        Symmetric, _, Double, Split = _modules(L)
        L.manual_seed(4)
        a = L.nn.Linear(3, 3)
        P.register_parametrization(a, "weight", Symmetric())
        P.register_parametrization(a, "bias", Split())
        b = L.nn.Linear(3, 3)
        P.transfer_parametrizations_and_params(a, b)
        shared = b.parametrizations.weight.original is a.parametrizations.weight.original
        c = copy.deepcopy(a)
        c_shares = c.parametrizations.weight.original is a.parametrizations.weight.original
        err = raised(pickle.dumps, a)
        P.transfer_parametrizations_and_params(L.nn.Linear(2, 2), b)  # not parametrized: no-op
        return (shared, type(b).__name__, b.weight, b.bias, list(b.state_dict()),
                type(c).__name__, c.weight, c_shares, err)

    compare(scenario)


# ---------------------------------------------------------------------------------------------
# weight_norm
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None, -2, 2])
def test_weight_norm_conv(compare, dim):
    def scenario(L):
        L.manual_seed(5)
        m = _fixed(L, L.nn.Conv1d(3, 4, 2))
        L.nn.utils.parametrizations.weight_norm(m, dim=dim)
        g = m.parametrizations.weight.original0
        v = m.parametrizations.weight.original1
        x = _lin(L, 30).reshape(2, 3, 5)
        w = m.weight
        m(x).pow(2).sum().backward()
        return (w, g, v, g.grad, v.grad, list(m.state_dict()), repr(m))

    # float32 gradients summed over the batch and positions: an entry near 0 is a difference of
    # terms near 1, exact to their last place (~1e-7)
    compare(scenario, rtol=1e-5, atol=1e-6)


def test_weight_norm_linear_training_and_old_state_dict(compare):
    def scenario(L):
        L.manual_seed(6)
        m = L.nn.Linear(4, 3)
        L.nn.utils.parametrizations.weight_norm(m)
        losses = _train(L, m, make_opt=lambda ps: L.optim.Adam(ps, lr=0.05))
        sd = dict(m.state_dict())
        # a state dict of the hook-based weight_norm (weight_g, weight_v) loads too
        fresh = L.nn.Linear(4, 3)
        L.nn.utils.parametrizations.weight_norm(fresh)
        old = {"weight_g": sd["parametrizations.weight.original0"] * 2,
               "weight_v": sd["parametrizations.weight.original1"], "bias": sd["bias"]}
        res = fresh.load_state_dict(old)
        return losses, sd, m.weight, fresh.weight, tuple(res)

    compare(scenario, rtol=1e-5)


def test_weight_norm_double_backward(compare):
    def scenario(L):
        v = L.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]], dtype=L.float64, requires_grad=True)
        g = L.tensor([[1.5], [-0.7]], dtype=L.float64, requires_grad=True)
        w = L._weight_norm(v, g, 0)
        (gv, gg) = L.autograd.grad(w.sin().sum(), (v, g), create_graph=True)
        (hv,) = L.autograd.grad((gv.pow(2).sum() + gg.sum()), v)
        whole = L.norm_except_dim(v, 3, -1).detach()  # Tensor.norm's own node name differs
        return w, gv, gg, hv, L.norm_except_dim(v, 2, 1), L.norm_except_dim(v, 2, 0), whole

    compare(scenario, rtol=1e-10)


# ---------------------------------------------------------------------------------------------
# spectral_norm
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["linear", "conv", "convT", "linear_dim1"])
def test_spectral_norm(compare, kind):
    def scenario(L):
        L.manual_seed(7)
        if kind == "linear":
            m = L.nn.Linear(5, 4)
            L.nn.utils.parametrizations.spectral_norm(m)
            x = _lin(L, 10).reshape(2, 5)
        elif kind == "linear_dim1":
            m = L.nn.Linear(5, 4)
            L.nn.utils.parametrizations.spectral_norm(m, n_power_iterations=3, dim=1)
            x = _lin(L, 10).reshape(2, 5)
        elif kind == "conv":
            m = L.nn.Conv2d(2, 3, 2)
            L.nn.utils.parametrizations.spectral_norm(m)
            x = _lin(L, 36).reshape(1, 2, 3, 6)
        else:
            m = L.nn.ConvTranspose1d(2, 3, 2)
            L.nn.utils.parametrizations.spectral_norm(m)
            x = _lin(L, 8).reshape(1, 2, 4)
        sn = m.parametrizations.weight[0]
        u0, v0 = sn._u.clone(), sn._v.clone()
        opt = L.optim.SGD(m.parameters(), lr=0.1)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = m(x).pow(2).sum()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        grad = m.parametrizations.weight.original.grad
        m.eval()
        u1 = sn._u.clone()
        w_eval = m.weight
        same_u = bool((sn._u == u1).all())
        return (u0, v0, sn._u, sn._v, losses, grad, w_eval, same_u, list(m.state_dict()),
                sn.dim)

    compare(scenario, rtol=1e-5, atol=1e-6)  # float32: sums in another order


def test_spectral_norm_1d_and_errors(compare):
    def scenario(L):
        SN = L.nn.utils.parametrizations.spectral_norm
        m = L.nn.Linear(3, 2)
        with L.no_grad():
            m.bias.copy_(L.tensor([3.0, 4.0]))
        SN(m, "bias")
        out = [m.bias, list(m.state_dict())]
        out.append(raised(SN, L.nn.Linear(3, 2), n_power_iterations=0))
        out.append(raised(SN, L.nn.Linear(3, 2), dim=2))
        out.append(raised(SN, L.nn.Linear(3, 2), "nothing"))
        out.append(raised(L.nn.utils.parametrizations.orthogonal, L.nn.Linear(3, 2), "bias"))
        out.append(raised(L.nn.utils.parametrizations.orthogonal, L.nn.Linear(3, 2),
                          orthogonal_map="qr"))
        return out

    compare(scenario)


# ---------------------------------------------------------------------------------------------
# orthogonal
# ---------------------------------------------------------------------------------------------

_ORTH_CASES = [(shape, omap, triv) for shape in [(5, 3), (3, 5), (4, 4)]
               for omap in [None, "matrix_exp", "cayley", "householder"]
               for triv in [True, False] if omap is not None or triv]


@pytest.mark.parametrize(("shape", "omap", "triv"), _ORTH_CASES)
def test_orthogonal(compare, shape, omap, triv):
    def scenario(L):
        L.manual_seed(8)
        m = _fixed(L, L.nn.Linear(shape[1], shape[0]).double())
        orth = L.nn.utils.parametrizations.orthogonal
        reg = raised(orth, m, orthogonal_map=omap, use_trivialization=triv)
        if not isinstance(m.weight, L.Tensor) or not hasattr(m, "parametrizations"):
            return reg
        p = m.parametrizations.weight
        w = m.weight
        gram = w @ w.mT if shape[0] < shape[1] else w.mT @ w
        losses = _train(L, m, steps=2, make_opt=lambda ps: L.optim.SGD(ps, lr=0.05))
        w2 = m.weight
        gram2 = w2 @ w2.mT if shape[0] < shape[1] else w2.mT @ w2
        base = getattr(p[0], "base", None)
        q = L.linalg.qr(_lin(L, shape[0] * shape[0]).reshape(shape[0], shape[0])
                        .double() + L.eye(shape[0], dtype=L.float64) * 2)[0][:, :shape[1]]
        if shape[0] < shape[1]:
            q = L.linalg.qr(_lin(L, shape[1] * shape[1]).reshape(shape[1], shape[1])
                             .double() + L.eye(shape[1], dtype=L.float64) * 2)[0][:shape[0]]
        assign = raised(setattr, m, "weight", q)
        return (p.original, w, gram, losses, p.original.grad, w2, gram2, base,
                list(m.state_dict()), assign, m.weight, p.original)

    compare(scenario, rtol=1e-7, atol=1e-9)


def test_orthogonal_float32_batched_and_errors(compare):
    def scenario(L):
        L.manual_seed(9)
        out = []
        m = L.nn.Module()
        m.weight = L.nn.Parameter(L.randn(2, 4, 3))
        L.nn.utils.parametrizations.orthogonal(m)  # householder, batched
        out += [m.weight, m.parametrizations.weight.original]
        m.weight.sum().backward()
        out.append(m.parametrizations.weight.original.grad)
        out.append(raised(setattr, m, "weight", L.zeros(3, 3)))
        out.append(raised(L.nn.utils.parametrizations.orthogonal, L.nn.Linear(3, 3),
                          orthogonal_map="matrix_exp", use_trivialization=False))
        m2 = L.nn.Linear(3, 3)
        L.nn.utils.parametrizations.orthogonal(m2, use_trivialization=False)
        out.append(raised(setattr, m2, "weight", L.eye(3)))
        return out

    compare(scenario, rtol=2e-5, atol=1e-6)


# ---------------------------------------------------------------------------------------------
# The hook-based weight_norm and spectral_norm
# ---------------------------------------------------------------------------------------------

def test_old_weight_norm(compare):
    def scenario(L):
        L.manual_seed(10)
        m = L.nn.Linear(4, 3)
        L.nn.utils.weight_norm(m, dim=None)
        names = [n for n, _ in m.named_parameters()]
        losses = _train(L, m)
        err = raised(L.nn.utils.weight_norm, m)
        w = m.weight
        L.nn.utils.remove_weight_norm(m)
        err2 = raised(L.nn.utils.remove_weight_norm, m)
        return names, losses, err, w, m.weight, type(m.weight).__name__, err2, list(
            m.state_dict())

    compare(scenario, rtol=1e-5)


def test_old_spectral_norm(compare):
    def scenario(L):
        L.manual_seed(11)
        m = L.nn.Conv1d(2, 3, 2)
        L.nn.utils.spectral_norm(m)
        u0 = m.weight_u.clone()
        losses = _train_conv(L, m)
        sd = m.state_dict()
        meta = dict(sd._metadata[""])
        m.eval()
        w_eval = m(L.ones(1, 2, 3))
        err = raised(L.nn.utils.spectral_norm, m)
        L.nn.utils.remove_spectral_norm(m)
        return (u0, losses, dict(sd), meta, w_eval, err, m.weight, list(m.state_dict()),
                raised(L.nn.utils.remove_spectral_norm, m))

    compare(scenario, rtol=1e-5)


def _train_conv(L, m):
    opt = L.optim.SGD(m.parameters(), lr=0.1)
    x = _lin(L, 8).reshape(1, 2, 4)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = m(x).pow(2).sum()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


# ---------------------------------------------------------------------------------------------
# linalg
# ---------------------------------------------------------------------------------------------

def test_linalg_functions(compare):
    def scenario(L):
        rng = np.random.default_rng(0)
        a = L.tensor(rng.standard_normal((2, 4, 4)), requires_grad=True)
        b = L.tensor(rng.standard_normal((2, 4, 3)), requires_grad=True)
        c = L.tensor(rng.standard_normal((5, 3)), requires_grad=True)
        tau = L.tensor(rng.random(3), requires_grad=True)
        x = L.linalg.solve(a, b)
        e = L.linalg.matrix_exp(0.3 * a)
        q, r = L.linalg.qr(c)
        h = L.linalg.householder_product(c, tau)
        loss = x.sum() + e.pow(2).sum() + q.sin().sum() + r.cos().sum() + h.tanh().sum()
        ga, gb, gc, gt = L.autograd.grad(loss, (a, b, c, tau), create_graph=True)
        (hh,) = L.autograd.grad(ga.pow(2).sum() + gc.pow(2).sum(), a)
        geq = L.geqrf(c.detach())
        qc = L.linalg.qr(c.detach(), mode="complete")
        # gt: values only (its node depends on how the backward rule is written)
        return (x, e, q, r, h, ga, gb, gc, gt.detach(), hh, tuple(geq), tuple(qc),
                L.linalg.qr(c.detach(), mode="r")[1], L.matrix_exp(a.detach()),
                L.linalg.vector_norm(c, 3, dim=1), L.linalg.vector_norm(c, float("inf")),
                L.linalg.matrix_norm(c), L.linalg.matrix_norm(c, 1),
                L.linalg.matrix_norm(c, float("-inf"), keepdim=True),
                raised(L.linalg.solve, L.zeros(2, 2), L.ones(2)),
                raised(L.linalg.qr, c, mode="bad"),
                L.linalg.solve(a.detach()[0], b.detach()[0, :, 0]), repr(geq), repr(qc))

    compare(scenario, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("shape", [(3, 5), (4, 4), (2, 3, 6)])
def test_qr_gradients(compare, shape):
    def scenario(L):
        c = L.tensor(np.random.default_rng(1).standard_normal(shape), requires_grad=True)
        q, r = L.linalg.qr(c)
        (g,) = L.autograd.grad(q.sin().sum() + r.cos().sum(), c, create_graph=True)
        (h,) = L.autograd.grad(g.pow(2).sum(), c)
        (gr,) = L.autograd.grad(L.linalg.qr(c)[1].sum(), c)  # Q unused
        errs = [raised(lambda m=m: L.linalg.qr(c, mode=m)[1].sum().backward())
                for m in ("r", "complete")]
        return g.detach(), h, gr, errs  # g's own node depends on how the rule is written

    compare(scenario, rtol=1e-9, atol=1e-8)  # h: R^{-1} enters twice, round-off grows


def test_old_spectral_norm_loads_version0_state_dict(compare):
    def scenario(L):
        L.manual_seed(12)
        m = L.nn.Linear(3, 4)
        L.nn.utils.spectral_norm(m)
        m(L.ones(1, 3))
        sd = m.state_dict()
        # a state dict written before weight_v was saved: weight itself instead of weight_v
        old = {"bias": sd["bias"], "weight_orig": sd["weight_orig"], "weight_u": sd["weight_u"],
               "weight": m.weight.detach()}
        fresh = L.nn.Linear(3, 4)
        L.nn.utils.spectral_norm(fresh)
        res = fresh.load_state_dict(old)
        fresh.eval()
        return tuple(res), fresh.weight_v, fresh(L.ones(1, 3))

    # W^T W is invertible here (W is 4 x 3), so v is well defined; float32 pseudo-inverse
    compare(scenario, rtol=1e-4, atol=1e-6)
