"""Optimizers compared with torch step for step.

Every optimizer, with every option, runs 12 steps on the same initial parameters with
gradients from the same small loss (elementwise terms, plus ``tanh(X @ W + b)**2`` in float64;
one parameter gets a gradient only on even steps, so the "no grad: skip" path runs too) in both
libraries;
the parameters and the whole ``state_dict`` must agree (float64 to 1e-10, float32 to 1e-5).
A second set feeds bit-identical gradients to both and checks the float32 updates to a few ulps
(SGD: one rounding per step). Then the Optimizer API: param groups, validation messages,
state_dict / load_state_dict, zero_grad, closures, hooks, reprs, version counters.
"""

from __future__ import annotations

import numpy as np
import pytest
from cpu_kernels import VECTORIZED
from torchcompare import raised

RNG = np.random.default_rng(1234)
X0 = RNG.standard_normal((6, 4))
W0 = RNG.standard_normal((4, 3)) * 0.5
B0 = RNG.standard_normal(3) * 0.1
C0 = RNG.standard_normal(5)
A0 = RNG.standard_normal((4, 3))
STEPS = 12

CONFIGS = [
    ("SGD", dict(lr=0.05)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict()),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.02, betas=(0.3, 0.7), weight_decay=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict()),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, betas=(0.6, 0.9), eps=1e-4, maximize=True)),
    ("RMSprop", dict()),
    ("RMSprop", dict(lr=0.01, alpha=0.9, eps=1e-6, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.01, maximize=True)),
    ("Adagrad", dict()),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01)),
    ("Adagrad", dict(lr=0.1, weight_decay=0.1, initial_accumulator_value=0.1, eps=1e-6)),
    ("Adagrad", dict(lr=0.1, maximize=True)),
]


def config_id(cfg):
    name, kw = cfg
    return name + "(" + ",".join(f"{k}={v}" for k, v in kw.items()) + ")"


def train(L, name, kw, dtype, steps=STEPS, groups=False):
    """Run ``steps`` optimizer steps; return the parameters and the state_dict."""
    dt = getattr(L, dtype)
    W = L.tensor(W0, dtype=dt, requires_grad=True)
    b = L.tensor(B0, dtype=dt, requires_grad=True)
    c = L.tensor(C0, dtype=dt, requires_grad=True)
    X = L.tensor(X0, dtype=dt)
    if groups:
        params = [{"params": [W, b]}, {"params": [c], "lr": 0.003}]
    else:
        params = [W, b, c]
    opt = getattr(L.optim, name)(params, **kw)
    A = L.tensor(A0, dtype=dt)
    for i in range(steps):
        opt.zero_grad()
        loss = (A * W * W).sum() + L.tanh(W - 0.2).sum() + (W**4).sum() * 0.1
        loss = loss + ((b - 0.3) ** 2).sum()
        if dtype == "float64":
            # a matmul couples the entries (in float32 its reduction order would differ from
            # torch's by a few ulps and the 12 steps would amplify that past the tolerance)
            loss = loss + (L.tanh(X @ W + b) ** 2).sum()
        if i % 2 == 0:
            loss = loss + (c * c * c).sum() * 0.3
        loss.backward()
        opt.step()
    return [W, b, c], opt.state_dict()


@pytest.mark.parametrize("cfg", CONFIGS, ids=config_id)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_steps_match_torch(compare, cfg, dtype):
    name, kw = cfg
    rtol = 1e-10 if dtype == "float64" else 1e-5
    # under torch's scalar kernels (tests/cpu_kernels.py: one rounding more per fused
    # multiply-add, libm's tanh) the 12 float32 steps drift further: buffers of size 10 by a
    # few times 1e-6 where their entries cancel
    atol32 = 1e-6 if VECTORIZED else 1e-5
    compare(lambda L: train(L, name, kw, dtype), rtol=rtol, atol=1e-12 if dtype == "float64"
            else atol32)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_param_groups_with_own_options_match_torch(compare, name):
    kw = {"lr": 0.01, "momentum": 0.9} if name in ("SGD", "RMSprop") else {"lr": 0.01}
    compare(lambda L: train(L, name, kw, "float64", steps=5, groups=True), rtol=1e-10,
            atol=1e-12)


def run_with_grads(L, name, kw, dtype, grads):
    """The same gradients, bit for bit, fed to both libraries."""
    dt = getattr(L, dtype)
    ps = [L.tensor(W0, dtype=dt, requires_grad=True), L.tensor(C0, dtype=dt, requires_grad=True)]
    opt = getattr(L.optim, name)(ps, **kw)
    for gs in grads:
        for p, g in zip(ps, gs, strict=True):
            p.grad = None if g is None else L.tensor(g, dtype=dt)
        opt.step()
    return [p.detach().numpy().copy() for p in ps]


@pytest.mark.parametrize("cfg", CONFIGS, ids=config_id)
def test_float32_updates_with_identical_gradients(lib, oracle, cfg):
    """With the same gradients the float32 arithmetic is torch's, to rounding. SGD: torch
    rounds ``p + alpha*g`` once (a fused multiply-add), tapegrad twice (float32 multiply, then
    add; emulating the fused rounding needs float64 temporaries and made the update cost as much
    as an MLP step's matrix products), so each step may differ by one rounding: at most STEPS
    ulps after STEPS steps. The others within a few ulps (torch's CPU float32 sqrt comes from a
    vector math library that is not always correctly rounded; NumPy's is)."""
    name, kw = cfg
    rng = np.random.default_rng(7)
    grads = [
        [rng.standard_normal(W0.shape) * 10.0 ** rng.uniform(-3, 1),
         None if i == 3 else rng.standard_normal(C0.shape)]
        for i in range(STEPS)
    ]
    got = run_with_grads(lib, name, kw, "float32", grads)
    want = run_with_grads(oracle, name, kw, "float32", grads)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.float32
        if name == "SGD":
            np.testing.assert_array_max_ulp(g, w, maxulp=STEPS)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-7)


def test_default_dtype_float64_makes_float64_steps(compare):
    def scenario(L):
        old = L.get_default_dtype()
        L.set_default_dtype(L.float64)
        try:
            _, sd = train(L, "Adam", {}, "float64", steps=2)
            _, sd2 = train(L, "Adagrad", {}, "float64", steps=2)
        finally:
            L.set_default_dtype(old)
        return sd["state"][0]["step"], sd2["state"][0]["step"]

    compare(scenario)


def test_float32_stays_float32(lib):
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        kw = {"momentum": 0.9} if name in ("SGD", "RMSprop") else {}
        if name == "RMSprop":
            kw["centered"] = True
        params, sd = train(lib, name, kw, "float32", steps=3)
        for p in params:
            assert p.dtype == lib.float32
        for st in sd["state"].values():
            for k, v in st.items():
                assert v.dtype == lib.float32, (name, k)


def test_version_counters_bump_like_torch(compare):
    def scenario(L):
        out = []
        for name, kw in [("SGD", {"momentum": 0.9}), ("Adam", {}), ("AdamW", {}),
                         ("RMSprop", {"momentum": 0.9, "centered": True}), ("Adagrad", {})]:
            p = L.tensor([1.0, 2.0], requires_grad=True)
            opt = getattr(L.optim, name)([p], **kw)
            p.grad = L.tensor([0.1, -0.2])
            g = p.grad
            opt.step()
            opt.step()
            out.append((name, p._version, g._version,
                        {k: v._version for k, v in opt.state[p].items()}))
        return out

    compare(scenario)


def test_update_runs_in_place_on_the_parameter_storage(lib):
    p = lib.tensor([1.0, 2.0], requires_grad=True)
    view = p.detach()
    opt = lib.optim.SGD([p], lr=0.5)
    p.grad = lib.tensor([1.0, 1.0])
    opt.step()
    assert view.tolist() == [0.5, 1.5]
    assert p.is_leaf and p.requires_grad and p.grad_fn is None


def test_step_runs_without_recording_a_graph(lib):
    p = lib.tensor([1.0, 2.0], requires_grad=True)
    opt = lib.optim.Adam([p])
    seen = []
    opt.register_step_post_hook(lambda o, a, k: seen.append(lib.is_grad_enabled()))
    p.grad = lib.tensor([1.0, 1.0])
    opt.step()
    assert seen == [True]  # post hooks run after grad mode is restored
    assert p.grad_fn is None and lib.is_grad_enabled()


# --------------------------------------------------------------------------------------------
# Construction and validation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,kw",
    [
        ("SGD", {"lr": -1.0}),
        ("SGD", {"momentum": -0.5}),
        ("SGD", {"weight_decay": -1}),
        ("SGD", {"nesterov": True}),
        ("SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.1}),
        ("Adam", {"lr": -0.1}),
        ("Adam", {"eps": -1.0}),
        ("Adam", {"betas": (1.0, 0.9)}),
        ("Adam", {"betas": (0.9, -0.1)}),
        ("Adam", {"betas": (0, 0.9)}),
        ("Adam", {"weight_decay": -2}),
        ("AdamW", {"betas": (0.9, 1.5)}),
        ("RMSprop", {"alpha": -1.0}),
        ("RMSprop", {"momentum": -1.0}),
        ("RMSprop", {"eps": -1.0}),
        ("Adagrad", {"lr_decay": -1.0}),
        ("Adagrad", {"initial_accumulator_value": -1.0}),
        ("Adagrad", {"eps": -1.0}),
    ],
)
def test_invalid_options_raise_torch_errors(compare, name, kw):
    compare(lambda L: raised(lambda: getattr(L.optim, name)(
        [L.zeros(2, requires_grad=True)], **kw)))


def test_params_argument_errors(compare):
    def scenario(L):
        t = L.zeros(2, requires_grad=True)
        return [
            raised(lambda: L.optim.SGD(t, lr=0.1)),
            raised(lambda: L.optim.SGD([], lr=0.1)),
            raised(lambda: L.optim.SGD({t}, lr=0.1)),
            raised(lambda: L.optim.SGD([t, 3], lr=0.1)),
            raised(lambda: L.optim.SGD([t * 2], lr=0.1)),
            raised(lambda: L.optim.SGD([{"params": [t]}, {"params": [t]}], lr=0.1)),
            raised(lambda: L.optim.SGD([("a", t), L.ones(1, requires_grad=True)], lr=0.1)),
        ]

    compare(scenario)


def test_duplicate_parameters_warn(compare):
    def scenario(L):
        t = L.zeros(2, requires_grad=True)
        return len(L.optim.SGD([t, t], lr=0.1).param_groups[0]["params"])

    compare(scenario)


def test_generator_of_params_is_consumed_once(compare):
    def scenario(L):
        ps = [L.zeros(2, requires_grad=True), L.ones(3, requires_grad=True)]
        opt = L.optim.SGD((p for p in ps), lr=0.1)
        return len(opt.param_groups[0]["params"]), opt.param_groups[0]["params"][1] is ps[1]

    compare(scenario)


def test_non_leaf_that_retains_grad_is_accepted(compare):
    def scenario(L):
        a = L.ones(2, requires_grad=True)
        b = a * 2
        b.retain_grad()
        return len(L.optim.SGD([b], lr=0.1).param_groups[0]["params"])

    compare(scenario)


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_param_groups_defaults_and_repr(compare, name):
    def scenario(L):
        opt = getattr(L.optim, name)([L.zeros(2, requires_grad=True)])
        group = opt.param_groups[0]
        return list(group.keys()), {k: v for k, v in group.items() if k != "params"}, \
            repr(opt), opt.defaults

    compare(scenario)


def test_sgd_default_lr_is_1e_3(compare):
    compare(lambda L: L.optim.SGD([L.zeros(1, requires_grad=True)]).defaults["lr"])


def test_add_param_group_and_repr_of_two_groups(compare):
    def scenario(L):
        a, b = L.zeros(2, requires_grad=True), L.zeros(3, requires_grad=True)
        opt = L.optim.SGD([a], lr=0.1, momentum=0.9)
        opt.add_param_group({"params": b, "lr": 0.01})
        errs = [
            raised(lambda: opt.add_param_group({"params": [a]})),
            raised(lambda: opt.add_param_group([a])),
            raised(lambda: opt.add_param_group({"params": [("n", L.ones(1))]})),
        ]
        return repr(opt), [len(g["params"]) for g in opt.param_groups], errs

    compare(scenario)


def test_named_parameters_give_param_names(compare):
    def scenario(L):
        a, b = L.zeros(2, requires_grad=True), L.zeros(3, requires_grad=True)
        opt = L.optim.Adam([("a", a), ("b", b)], lr=0.1)
        a.grad = L.ones(2)
        opt.step()
        return opt.param_groups[0]["param_names"], opt.state_dict()

    compare(scenario)


def test_required_parameter(compare):
    def scenario(L):
        from importlib import import_module

        mod = import_module(L.__name__ + ".optim.optimizer")

        class Custom(mod.Optimizer):
            def __init__(self, params, lr=mod.required):
                super().__init__(params, {"lr": lr})

        return [
            raised(lambda: Custom([L.zeros(1, requires_grad=True)])),
            repr(mod.required),
            Custom([{"params": [L.zeros(1, requires_grad=True)], "lr": 0.5}]).param_groups[0]["lr"],
        ]

    compare(scenario)


# --------------------------------------------------------------------------------------------
# zero_grad, step, closure, hooks
# --------------------------------------------------------------------------------------------


def test_zero_grad(compare):
    def scenario(L):
        a = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([a], lr=0.1)
        (a * 3).sum().backward()
        g = a.grad
        opt.zero_grad(set_to_none=False)
        kept = (a.grad is g, a.grad.clone(), g._version)
        opt.zero_grad()
        return kept, a.grad

    compare(scenario)


def test_closure_is_evaluated_with_grad_enabled(compare):
    def scenario(L):
        a = L.tensor([1.0, -2.0], requires_grad=True)
        opt = L.optim.SGD([a], lr=0.1)
        modes = []

        def closure():
            modes.append(L.is_grad_enabled())
            opt.zero_grad()
            loss = (a**2).sum()
            loss.backward()
            return loss

        with L.no_grad():
            loss = opt.step(closure)
        return loss, a, modes, opt.step() is None

    compare(scenario)


def test_step_hooks_order_and_arguments(compare):
    def scenario(L):
        from importlib import import_module

        mod = import_module(L.__name__ + ".optim.optimizer")
        a = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([a], lr=0.1)
        log = []
        h1 = opt.register_step_pre_hook(lambda o, args, kw: log.append(("pre", len(args))))
        opt.register_step_post_hook(lambda o, args, kw: log.append(("post", o is opt)))
        g = mod.register_optimizer_step_pre_hook(lambda o, args, kw: log.append("global pre"))
        a.grad = L.ones(2)
        opt.step()
        h1.remove()
        g.remove()
        opt.step()
        return log, a

    compare(scenario)


def test_state_dict_hooks(compare):
    def scenario(L):
        a = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([a], lr=0.1)
        log = []
        opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(sorted(sd)))
        opt.register_load_state_dict_post_hook(lambda o: log.append("loaded"))
        sd = opt.state_dict()
        sd.pop("extra")
        opt.load_state_dict(sd)
        return log

    compare(scenario)


# --------------------------------------------------------------------------------------------
# state_dict / load_state_dict
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name,kw", [("SGD", {"momentum": 0.9}), ("Adam", {"amsgrad": True}),
                                     ("AdamW", {}), ("RMSprop", {"centered": True,
                                                                  "momentum": 0.5}),
                                     ("Adagrad", {"lr_decay": 0.1})])
def test_load_state_dict_resumes_training_exactly(compare, name, kw):
    """5 steps, state_dict, a fresh optimizer loads it, 5 more steps == 10 steps straight."""

    def scenario(L):
        def model(params_from=None):
            W = L.tensor(W0, requires_grad=True)
            c = L.tensor(C0, requires_grad=True)
            if params_from is not None:
                with L.no_grad():
                    W.copy_(params_from[0])
                    c.copy_(params_from[1])
            return W, c

        def run(opt, W, c, n):
            for _ in range(n):
                opt.zero_grad()
                ((W.sum(0) ** 2).sum() + (c**3).sum()).backward()
                opt.step()

        W, c = model()
        opt = getattr(L.optim, name)([W, c], lr=0.01, **kw)
        run(opt, W, c, 5)
        sd = opt.state_dict()
        W2, c2 = model((W, c))
        opt2 = getattr(L.optim, name)([W2, c2], lr=0.01, **kw)
        opt2.load_state_dict(sd)
        run(opt, W, c, 5)
        run(opt2, W2, c2, 5)
        return W, c, W2, c2, opt2.state_dict()

    compare(scenario, rtol=1e-12)


def test_load_state_dict_errors(compare):
    def scenario(L):
        a, b = L.zeros(2, requires_grad=True), L.zeros(3, requires_grad=True)
        one = L.optim.SGD([a, b], lr=0.1)
        two = L.optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
        three = L.optim.SGD([a], lr=0.1)
        return [
            raised(lambda: one.load_state_dict(two.state_dict())),
            raised(lambda: three.load_state_dict(one.state_dict())),
        ]

    compare(scenario)


def test_load_state_dict_casts_state_to_param_dtype_but_not_step(compare):
    def scenario(L):
        a = L.zeros(2, requires_grad=True)
        opt = L.optim.Adam([a])
        a.grad = L.ones(2)
        opt.step()
        sd = opt.state_dict()
        b = L.zeros(2, dtype=L.float64, requires_grad=True)
        opt2 = L.optim.Adam([b])
        opt2.load_state_dict(sd)
        st = opt2.state[b]
        return {k: (v.dtype, v) for k, v in st.items()}, opt2.param_groups[0]["params"][0] is b

    compare(scenario)


def test_state_dict_layout_and_shared_tensors(compare):
    def scenario(L):
        a, b, c = (L.zeros(2, requires_grad=True) for _ in range(3))
        opt = L.optim.SGD([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, momentum=0.9)
        b.grad = L.ones(2)
        c.grad = L.ones(2)
        opt.step()
        sd = opt.state_dict()
        return sd, sd["state"][1]["momentum_buffer"] is opt.state[b]["momentum_buffer"]

    compare(scenario)


def test_old_style_numeric_step_is_converted(compare):
    def scenario(L):
        a = L.zeros(2, requires_grad=True)
        opt = L.optim.Adam([a])
        a.grad = L.ones(2)
        opt.step()
        sd = opt.state_dict()
        sd["state"][0]["step"] = 1.0
        opt.load_state_dict(sd)
        opt.step()
        return opt.state[a]["step"], a

    compare(scenario)


def test_sgd_without_momentum_keeps_no_state(compare):
    def scenario(L):
        a = L.zeros(2, requires_grad=True)
        opt = L.optim.SGD([a], lr=0.1)
        a.grad = L.ones(2)
        opt.step()
        return opt.state_dict()["state"], len(opt.state)

    compare(scenario)


def test_tensor_lr(compare):
    def scenario(L):
        a = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([a], lr=L.tensor(0.5))
        a.grad = L.ones(2)
        opt.step()
        return a, raised(lambda: L.optim.SGD([a], lr=L.tensor([0.1, 0.2])))

    compare(scenario)


def test_complex_parameters_update_as_real_pairs(compare):
    def scenario(L):
        out = []
        for name in ("SGD", "Adam", "RMSprop", "Adagrad"):
            p = L.tensor([1 + 2j, -0.5 + 0.25j], dtype=L.complex128, requires_grad=True)
            opt = getattr(L.optim, name)([p], lr=0.1)
            for _ in range(3):
                p.grad = L.tensor([0.3 - 0.1j, 0.2 + 0.4j], dtype=L.complex128)
                opt.step()
            out.append(p)
        return out

    compare(scenario, rtol=1e-12)
