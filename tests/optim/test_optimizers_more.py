"""Adadelta, Adamax, ASGD, NAdam, RAdam, Rprop and SparseAdam compared with torch step for step.

Every optimizer, over a grid of its options, runs 20 steps on the same parameters in both
libraries, and the parameters are compared after *every* step:

* from a loss (elementwise terms, plus ``tanh(X @ W + b)**2`` in float64; one parameter gets a
  gradient only on even steps, so the "no grad: skip" path runs too): float64 to 1e-12
  relative; float32 (no matmul) to 1e-6;
* from bit-identical gradients fed to both: float64 to 1e-13 relative (the remaining
  difference: torch rounds ``a*b + c`` once with a fused multiply-add, tapegrad twice in
  float64); float32 bit for bit where no square root is taken (Adamax, ASGD, Rprop) and within
  a few ulps where one is (torch's float32 ``sqrt`` comes from MKL's vector library, which
  differs from the correctly rounded one in the last bit for about 17% of inputs).

Then param groups, lr schedulers, state_dict structure and round trips, validation messages,
the ``foreach``/``capturable``/``differentiable`` options, version counters, complex
parameters, and SparseAdam's errors.
"""

from __future__ import annotations

import numpy as np
import pytest
from cpu_kernels import VECTORIZED, assert_kernel_bits
from torchcompare import raised

RNG = np.random.default_rng(2024)
X0 = RNG.standard_normal((6, 4))
W0 = RNG.standard_normal((4, 3)) * 0.5
B0 = RNG.standard_normal(3) * 0.1
C0 = RNG.standard_normal(5)
A0 = RNG.standard_normal((4, 3))
STEPS = 20

CONFIGS = [
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adadelta", dict(lr=2.0, maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adamax", dict(lr=0.02, maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=4, weight_decay=0.1)),
    ("ASGD", dict(lr=0.02, t0=0, maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.02, maximize=True, momentum_decay=0)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, betas=(0.7, 0.8), weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.02, eps=1e-4, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(lr=0.01, maximize=True)),
]
NAMES = ["Adadelta", "Adamax", "ASGD", "NAdam", "RAdam", "Rprop"]
# float32 updates that take no square root are reproduced bit for bit
NO_SQRT = {"Adamax", "ASGD", "Rprop"}


def config_id(cfg):
    name, kw = cfg
    return name + "(" + ",".join(f"{k}={v}" for k, v in kw.items()) + ")"


def train(L, name, kw, dtype, steps=STEPS, groups=False, sched=None):
    """Run ``steps`` optimizer steps; return the parameters after each and the state_dict."""
    dt = getattr(L, dtype)
    W = L.tensor(W0, dtype=dt, requires_grad=True)
    b = L.tensor(B0, dtype=dt, requires_grad=True)
    c = L.tensor(C0, dtype=dt, requires_grad=True)
    X = L.tensor(X0, dtype=dt)
    A = L.tensor(A0, dtype=dt)
    if groups:
        params = [{"params": [W, b]}, {"params": [c], "lr": 0.003}]
    else:
        params = [W, b, c]
    opt = getattr(L.optim, name)(params, **kw)
    scheduler = sched(L, opt) if sched is not None else None
    history = []
    for i in range(steps):
        opt.zero_grad()
        loss = (A * W * W).sum() + L.tanh(W - 0.2).sum() + (W**4).sum() * 0.1
        loss = loss + ((b - 0.3) ** 2).sum()
        if dtype == "float64":
            loss = loss + (L.tanh(X @ W + b) ** 2).sum()
        if i % 2 == 0:
            loss = loss + (c * c * c).sum() * 0.3
        loss.backward()
        opt.step()
        if scheduler is not None:
            scheduler.step()
        history.append([p.detach().clone() for p in (W, b, c)])
    return history, opt.state_dict()


@pytest.mark.parametrize("cfg", CONFIGS, ids=config_id)
def test_steps_match_torch_float64(compare, cfg):
    name, kw = cfg
    compare(lambda L: train(L, name, kw, "float64"), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", NAMES)
def test_steps_match_torch_float32(compare, name):
    """float32 from a loss (its arithmetic is checked bit for bit below, from identical
    gradients; here tanh's last bit may differ between the libraries)."""
    compare(lambda L: train(L, name, {}, "float32"), rtol=1e-6, atol=1e-7)


def run_with_grads(L, name, kw, dtype, grads):
    """The same gradients, bit for bit, fed to both libraries; the parameters after each step."""
    dt = getattr(L, dtype)
    ps = [L.tensor(W0, dtype=dt, requires_grad=True), L.tensor(C0, dtype=dt, requires_grad=True)]
    opt = getattr(L.optim, name)(ps, **kw)
    out = []
    for gs in grads:
        for p, g in zip(ps, gs, strict=True):
            p.grad = None if g is None else L.tensor(g, dtype=dt)
        opt.step()
        out.append([p.detach().numpy().copy() for p in ps])
    return out


def random_grads(seed):
    rng = np.random.default_rng(seed)
    return [
        [
            rng.standard_normal(W0.shape) * 10.0 ** rng.uniform(-3, 1),
            None if i == 3 else rng.standard_normal(C0.shape),
        ]
        for i in range(STEPS)
    ]


@pytest.mark.parametrize("cfg", CONFIGS, ids=config_id)
def test_identical_gradients_float32_and_float64(lib, oracle, cfg):
    name, kw = cfg
    grads = random_grads(7)
    for dtype in ("float32", "float64"):
        got = run_with_grads(lib, name, kw, dtype, grads)
        want = run_with_grads(oracle, name, kw, dtype, grads)
        for step, (gs, ws) in enumerate(zip(got, want, strict=True)):
            for g, w in zip(gs, ws, strict=True):
                assert g.dtype == w.dtype
                if not VECTORIZED:  # torch's scalar kernels: tests/cpu_kernels.py
                    assert_kernel_bits(g, w, str(step))
                elif dtype == "float64":
                    np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15, err_msg=str(step))
                elif name in NO_SQRT:
                    np.testing.assert_array_equal(g, w, err_msg=str(step))
                else:
                    np.testing.assert_array_max_ulp(g, w, maxulp=4)


@pytest.mark.parametrize("name", NAMES)
def test_param_groups_with_own_options_match_torch(compare, name):
    kw = {"lr": 0.01} if name != "Adadelta" else {"lr": 0.5}
    compare(lambda L: train(L, name, kw, "float64", steps=6, groups=True), rtol=1e-12, atol=1e-14)


SCHEDULES = {
    "StepLR": lambda L, opt: L.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
    "CosineAnnealingLR": lambda L, opt: L.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=5),
    "OneCycleLR": lambda L, opt: L.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=0.05, total_steps=12, cycle_momentum=False
    ),
}


@pytest.mark.parametrize(
    "name,schedule", [(name, sorted(SCHEDULES)[i % 3]) for i, name in enumerate(NAMES)]
)
def test_lr_schedulers_drive_the_optimizers(compare, name, schedule):
    """A scheduler rewrites group['lr'] between steps (ASGD folds it into eta, Rprop only
    reads it when the state is created); both groups carry their own lr."""
    kw = {"lr": 0.02} if name != "Adadelta" else {"lr": 0.5}

    def scenario(L):
        history, sd = train(
            L, name, kw, "float64", steps=12, groups=True, sched=SCHEDULES[schedule]
        )
        return history, sd

    compare(scenario, rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------------------------------------
# Construction, options and validation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,kw",
    [
        ("Adadelta", {"lr": -1.0}),
        ("Adadelta", {"rho": 1.5}),
        ("Adadelta", {"rho": -0.1}),
        ("Adadelta", {"eps": -1.0}),
        ("Adadelta", {"weight_decay": -1.0}),
        ("Adamax", {"lr": -0.1}),
        ("Adamax", {"eps": -1.0}),
        ("Adamax", {"betas": (1.0, 0.9)}),
        ("Adamax", {"betas": (0.9, -0.5)}),
        ("Adamax", {"weight_decay": -1.0}),
        ("ASGD", {"lr": -0.1}),
        ("ASGD", {"weight_decay": -0.5}),
        ("NAdam", {"lr": -0.1}),
        ("NAdam", {"eps": -1.0}),
        ("NAdam", {"betas": (0.9, 1.0)}),
        ("NAdam", {"weight_decay": -1.0}),
        ("NAdam", {"momentum_decay": -1.0}),
        ("RAdam", {"lr": -0.1}),
        ("RAdam", {"eps": -1.0}),
        ("RAdam", {"betas": (-0.1, 0.9)}),
        ("RAdam", {"weight_decay": -1.0}),
        ("Rprop", {"lr": -0.1}),
        ("Rprop", {"etas": (1.5, 1.2)}),
        ("Rprop", {"etas": (0.5, 0.9)}),
        ("Rprop", {"etas": (0.0, 1.2)}),
        ("SparseAdam", {"lr": 0.0}),
        ("SparseAdam", {"eps": 0.0}),
        ("SparseAdam", {"betas": (0.9, 1.0)}),
        ("Adamax", {"lr": float("nan")}),
        ("Adadelta", {"fused": True}),
        ("NAdam", {"lr": [0.1]}),
    ],
)
def test_invalid_options_raise_torch_errors(compare, name, kw):
    compare(
        lambda L: raised(lambda: getattr(L.optim, name)([L.zeros(2, requires_grad=True)], **kw))
    )


@pytest.mark.parametrize("name", NAMES + ["SparseAdam"])
def test_defaults_group_keys_and_repr(compare, name):
    def scenario(L):
        opt = getattr(L.optim, name)([L.zeros(2, requires_grad=True)])
        group = opt.param_groups[0]
        return (
            list(group.keys()),
            {k: v for k, v in group.items() if k != "params"},
            repr(opt),
            opt.defaults,
        )

    compare(scenario)


@pytest.mark.parametrize("name", NAMES)
def test_capturable_fails_at_step_on_the_cpu(compare, name):
    """capturable=True is accepted; its first step raises torch's AssertionError (capturable
    needs an accelerator), after the state is created as torch creates it."""

    def scenario(L):
        p = L.ones(3, requires_grad=True)
        opt = getattr(L.optim, name)([p], capturable=True)
        no_grad_step = opt.step()  # nothing has a gradient: nothing to check
        p.grad = L.ones(3)
        return no_grad_step, raised(opt.step), sorted(opt.state[p]), opt.defaults["capturable"]

    compare(scenario)


@pytest.mark.parametrize("name", NAMES)
def test_foreach_true_runs_the_single_tensor_update(compare, name):
    """foreach=True is accepted and runs the single-tensor update (the default on the CPU).
    torch's multi-tensor kernels regroup the arithmetic: the same numbers to rounding for most;
    ASGD's computes eta from the float32 step tensor (relative differences near 1e-7)."""
    rtol = 1e-6 if name == "ASGD" else 1e-10
    compare(lambda L: train(L, name, {"foreach": True}, "float64", steps=5), rtol=rtol, atol=1e-14)


def differentiable_steps(L, name, kw, steps):
    """Non-leaf parameters updated with differentiable=True by gradients that are leaves
    themselves; a loss of the result backpropagates through the steps to both."""
    rng = np.random.default_rng(9)
    p0 = L.tensor(rng.standard_normal(5), requires_grad=True)
    grads = [L.tensor(rng.standard_normal(5), requires_grad=True) for _ in range(steps)]
    p = p0 * 1.0
    opt = getattr(L.optim, name)([p], differentiable=True, **kw)
    for g in grads:
        p.grad = g * 1.0
        opt.step()
    (p**2).sum().backward()
    return p.detach(), p0.grad, [g.grad for g in grads]


DIFFERENTIABLE = (
    [(name, {}) for name in NAMES]
    + [(name, {"weight_decay": 0.1, "maximize": True}) for name in NAMES if name != "Rprop"]
    + [
        ("Rprop", {"maximize": True}),
        ("NAdam", {"weight_decay": 0.1, "decoupled_weight_decay": True}),
        ("ASGD", {"t0": 0, "lambd": 0.1}),  # averaging from the first step
    ]
)


@pytest.mark.parametrize("cfg", DIFFERENTIABLE, ids=config_id)
def test_differentiable_steps_match_torch(compare, cfg):
    """The parameters and the gradients through the update (to the initial parameters and to
    every gradient) match torch's; three steps where torch's own differentiable update allows
    them (Adamax's and Rprop's modify, in place, tensors their previous step saved: torch
    raises on the backward, so one step). The gradients with respect to the step's gradients
    nearly cancel (the update is close to lr * sign(g)): compared to 1e-12 absolute."""
    name, kw = cfg
    # RAdam: 7 steps, so that the rectified update (rho_t > 5 from step 6) runs too
    steps = {"Adamax": 1, "Rprop": 1, "RAdam": 7}.get(name, 3)
    compare(lambda L: differentiable_steps(L, name, kw, steps), rtol=1e-10, atol=1e-12)


def test_differentiable_step_on_a_leaf_raises(compare):
    def scenario(L):
        out = []
        for name in NAMES:
            p = L.ones(2, requires_grad=True)
            opt = getattr(L.optim, name)([p], differentiable=True)
            p.grad = L.ones(2)
            out.append((name, raised(opt.step)))
        return out

    compare(scenario)


def test_tensor_lr(compare):
    def scenario(L):
        out = []
        for name in NAMES:
            p = L.tensor([1.0, -2.0, 0.5], requires_grad=True)
            opt = getattr(L.optim, name)([p], lr=L.tensor(0.05))
            for _ in range(3):
                p.grad = p.detach() * 2 - 0.3
                opt.step()
            out.append(
                (
                    name,
                    p,
                    raised(lambda n=name, p=p: getattr(L.optim, n)([p], lr=L.tensor([0.1, 0.2]))),
                )
            )
        return out

    compare(scenario, rtol=1e-6)


# --------------------------------------------------------------------------------------------
# state / state_dict
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_state_dict_structure_matches_torch(compare, name, dtype):
    """The same keys, in the same order, with the same dtypes (``step`` a 0-d tensor of the
    scalar dtype, ASGD's ``eta``/``mu`` and NAdam's ``mu_product`` too)."""

    def scenario(L):
        _, sd = train(L, name, {}, dtype, steps=3)
        layout = {k: list(v) for k, v in sd["state"].items()}
        return layout, sd

    compare(scenario, rtol=1e-6, atol=1e-7)


def test_state_scalars_follow_the_default_dtype(compare):
    def scenario(L):
        old = L.get_default_dtype()
        L.set_default_dtype(L.float64)
        try:
            return [train(L, name, {}, "float32", steps=2)[1]["state"][0] for name in NAMES]
        finally:
            L.set_default_dtype(old)

    compare(scenario)


@pytest.mark.parametrize("name", NAMES)
def test_load_state_dict_resumes_training_exactly(compare, name):
    """6 steps, state_dict, a fresh optimizer loads it, 6 more == 12 steps straight."""

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
                ((W.sum(0) ** 2).sum() + (c**3).sum() + L.sin(W).sum()).backward()
                opt.step()

        kw = {"lr": 0.01, "t0": 3} if name == "ASGD" else {"lr": 0.01}
        W, c = model()
        opt = getattr(L.optim, name)([W, c], **kw)
        run(opt, W, c, 6)
        sd = opt.state_dict()
        W2, c2 = model((W, c))
        opt2 = getattr(L.optim, name)([W2, c2], **kw)
        opt2.load_state_dict(sd)
        run(opt, W, c, 6)
        run(opt2, W2, c2, 6)
        return W, c, W2, c2, opt2.state_dict()

    compare(scenario, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", NAMES)
def test_loaded_state_is_cast_to_float64_params(compare, name):
    """load_state_dict casts floating state (not step) to the parameter's dtype, so ASGD's eta
    and mu and NAdam's mu_product become float64; ASGD's new eta/mu still pass through the
    default dtype (torch.as_tensor of a number) before they are copied in."""

    def scenario(L):
        a = L.tensor([0.5, -1.0], dtype=L.float64, requires_grad=True)
        kw = {"t0": 1} if name == "ASGD" else {}
        opt = getattr(L.optim, name)([a], lr=0.01, **kw)
        out = []
        for i in range(6):
            if i == 3:
                opt.load_state_dict(opt.state_dict())
                out.append({k: v.dtype for k, v in opt.state[a].items()})
            a.grad = L.tensor([1.0, 2.0 * i - 1], dtype=L.float64)
            opt.step()
        return out, a, opt.state_dict()

    compare(scenario, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", NAMES)
def test_old_style_numeric_state_is_converted(compare, name):
    """A state_dict from an older torch with Python numbers for step (and eta, mu,
    mu_product) loads as 0-d tensors."""

    def scenario(L):
        a = L.tensor([0.5, -1.0], requires_grad=True)
        opt = getattr(L.optim, name)([a], lr=0.01)
        a.grad = L.tensor([1.0, 2.0])
        opt.step()
        sd = opt.state_dict()
        for key in ("step", "eta", "mu", "mu_product"):
            if key in sd["state"][0]:
                sd["state"][0][key] = float(sd["state"][0][key])
        opt.load_state_dict(sd)
        opt.step()
        return opt.state_dict(), a

    compare(scenario)


def test_version_counters_bump_like_torch(compare):
    def scenario(L):
        out = []
        for name in NAMES:
            kw = {"t0": 0} if name == "ASGD" else {}
            for wd in (0, 0.1):
                if name != "Rprop":
                    kw["weight_decay"] = wd
                p = L.tensor([1.0, 2.0], requires_grad=True)
                opt = getattr(L.optim, name)([p], **kw)
                p.grad = L.tensor([0.1, -0.2])
                g = p.grad
                opt.step()
                opt.step()
                out.append(
                    (
                        name,
                        wd,
                        p._version,
                        g._version,
                        {k: v._version for k, v in opt.state[p].items()},
                    )
                )
        return out

    compare(scenario)


def test_complex_parameters_update_as_real_pairs(compare):
    def scenario(L):
        out = []
        for name in NAMES:
            p = L.tensor([1 + 2j, -0.5 + 0.25j], dtype=L.complex128, requires_grad=True)
            opt = (
                getattr(L.optim, name)([p], lr=0.1, weight_decay=0.1)
                if name != "Rprop"
                else L.optim.Rprop([p], lr=0.1)
            )
            for i in range(4):
                p.grad = L.tensor([0.3 - 0.1j, 0.2 + 0.4j * (-1) ** i], dtype=L.complex128)
                opt.step()
            out.append((name, p, opt.state_dict()))
        return out

    compare(scenario, rtol=1e-12)


def test_closure_and_hooks(compare):
    def scenario(L):
        out = []
        for name in NAMES:
            a = L.tensor([1.0, -2.0], requires_grad=True)
            opt = getattr(L.optim, name)([a], lr=0.1)
            log = []
            opt.register_step_post_hook(lambda o, args, kw, log=log: log.append("post"))

            def closure(opt=opt, a=a, log=log):
                log.append(L.is_grad_enabled())
                opt.zero_grad()
                loss = (a**2).sum()
                loss.backward()
                return loss

            with L.no_grad():
                loss = opt.step(closure)
            out.append((loss, a, log))
        return out

    compare(scenario)


# --------------------------------------------------------------------------------------------
# SparseAdam
# --------------------------------------------------------------------------------------------


def test_sparse_adam_raises_torchs_error_for_dense_gradients(compare):
    """tapegrad has no sparse-layout gradients: every step that finds a gradient raises what
    torch raises for a dense one; without gradients a step is a no-op."""

    def scenario(L):
        w = L.zeros(3, 2, requires_grad=True)
        opt = L.optim.SparseAdam([w], lr=0.1)
        nothing = opt.step(), opt.state_dict()
        (w * 2).sum().backward()
        return nothing, raised(opt.step), w, len(opt.state)

    compare(scenario)


def test_sparse_adam_closure_and_complex_params(compare):
    def scenario(L):
        w = L.ones(2, requires_grad=True)
        opt = L.optim.SparseAdam([w])

        def closure():
            return (w * 3).sum()  # no backward: no gradient, nothing to update

        z = L.zeros(2, dtype=L.complex64, requires_grad=True)
        return (
            opt.step(closure),
            raised(lambda: L.optim.SparseAdam([w, z])),
            raised(lambda: L.optim.SparseAdam([{"params": [w]}, {"params": [z]}])),
        )

    compare(scenario)
