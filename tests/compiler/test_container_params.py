"""Steps that read their parameters from lists, tuples and dicts (the functional style:
``x @ w + b`` with the weights in a Python list, no ``nn.Module``), compiled and run eagerly on
twin copies, compared bit for bit after every step; the guards on the containers' contents
(another tensor, another shape, an item added) and what ``TORCH_LOGS`` reports."""

from __future__ import annotations

import pytest
from replay_checks import batch, replayed, run_twins

import tapegrad as torch
import tapegrad.nn.functional as F
from tapegrad import nn


def weights(sizes=(8, 16, 4)):
    """An MLP's weights and biases as a flat list ``[w0, b0, w1, b1, ...]``."""
    out = []
    for n_in, n_out in zip(sizes, sizes[1:], strict=False):
        out.append((torch.randn(n_in, n_out) * 0.3).requires_grad_())
        out.append(torch.zeros(n_out, requires_grad=True))
    return out


def forward(ps, x):
    """The MLP on ``x``, its weights read from a list or tuple."""
    for i in range(0, len(ps), 2):
        x = x @ ps[i] + ps[i + 1]
        if i + 2 < len(ps):
            x = torch.relu(x)
    return x


def classes(i):
    return batch(i, 6, 8), batch(i, 6, seed=1, kind="randint", high=4)


def holder(params):
    """A module holding nothing (run_twins compares the parameters through ``extra``)."""
    return nn.Module()


@pytest.mark.parametrize("opt_name", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_list_in_a_global_or_closure(opt_name):
    def make():
        params = weights()
        kw = {"lr": 0.05, "momentum": 0.9} if opt_name in ("SGD", "RMSprop") else {"lr": 1e-2}
        opt = getattr(torch.optim, opt_name)(params, **kw)

        def step(x, y):
            loss = F.cross_entropy(forward(params, x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()

        return {"step": step, "model": holder(params), "opt": opt, "extra": params,
                "inputs": classes}

    c = replayed(run_twins(make))
    assert "cell_contents[0]._data" in c.listing()


@pytest.mark.parametrize("kind", ["list", "tuple", "dict", "nested", "kwarg"])
def test_parameters_passed_as_a_container(kind):
    def make():
        params = weights()
        opt = torch.optim.SGD(params, lr=0.1)
        if kind in ("dict", "kwarg"):
            box = {f"p{i}": p for i, p in enumerate(params)}
        elif kind == "nested":
            box = [{"w": params[i], "b": params[i + 1]} for i in (0, 2)]
        else:
            box = params if kind == "list" else tuple(params)

        def unpack(ps):
            if kind in ("dict", "kwarg"):
                return [ps[f"p{i}"] for i in range(4)]
            if kind == "nested":
                return [ps[0]["w"], ps[0]["b"], ps[1]["w"], ps[1]["b"]]
            return ps

        def step(x, y, ps):
            loss = F.cross_entropy(forward(unpack(ps), x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()

        def inputs(i):
            return (*classes(i), box)

        if kind == "kwarg":  # the container passed by keyword, a new dict at each call
            def by_keyword(x, y, *, ps):
                return step(x, y, ps)

            return {"step": by_keyword, "model": holder(params), "opt": opt, "extra": params,
                    "inputs": classes, "kwargs": lambda i: {"ps": dict(box)}}
        return {"step": step, "model": holder(params), "opt": opt, "extra": params,
                "inputs": inputs}

    if kind == "kwarg":
        c = replayed(twins_with_kwargs(make))
    else:
        c = replayed(run_twins(make))
    first = {"list": "args[2][0]", "tuple": "args[2][0]", "dict": "args[2]['p0']",
             "nested": "args[2][0]['w']", "kwarg": "kwargs['ps']['p0']"}[kind]
    assert f"{first}._data" in c.listing()


def twins_with_kwargs(make, steps=6):
    """``run_twins`` for a step called with keyword arguments (``make()['kwargs'](i)``)."""
    from replay_checks import assert_same, flat_values, step_arrays

    torch.manual_seed(0)
    eager = make()
    torch.manual_seed(0)
    twin = make()
    compiled = torch.compile(twin["step"])
    for i in range(steps):
        a = eager["step"](*eager["inputs"](i), **eager["kwargs"](i))
        b = compiled(*twin["inputs"](i), **twin["kwargs"](i))
        assert_same(flat_values(a), flat_values(b))
        assert_same(step_arrays(eager["model"], eager["opt"], eager["extra"]),
                    step_arrays(twin["model"], twin["opt"], twin["extra"]))
    return compiled


def test_d2l_from_scratch_sgd():
    """d2l's from-scratch loop: ``params = [W, b]``, ``net`` reads them, ``sgd`` updates them
    in place under ``no_grad`` and zeroes their gradients."""

    def make():
        W = torch.normal(0, 0.01, size=(8, 4), requires_grad=True)
        b = torch.zeros(4, requires_grad=True)
        params = [W, b]

        def net(X):
            return torch.softmax(X.reshape((-1, W.shape[0])) @ params[0] + params[1], dim=1)

        def sgd(params, lr, batch_size):
            with torch.no_grad():
                for param in params:
                    param -= lr * param.grad / batch_size
                    param.grad.zero_()

        def step(X, y):
            y_hat = net(X)
            lo = -torch.log(y_hat[range(len(y_hat)), y])
            lo.sum().backward()
            sgd(params, 0.1, X.shape[0])
            return lo.detach()

        def warm(i):  # d2l's sgd reads .grad: the first call needs one to exist
            if i == 0:
                for p in params:
                    p.grad = torch.zeros_like(p)

        return {"step": step, "model": nn.Module(), "extra": params, "inputs": classes,
                "before": warm}

    replayed(run_twins(make))


def test_another_tensor_in_the_list_is_read_through_it():
    """The list's item replaced by a tensor of the same shape: the program reads the new one
    (as dynamo treats a list's tensors as inputs); results stay eager's."""

    def make():
        params = weights()

        @torch.no_grad()
        def step(x):
            return forward(params, x)

        def feed(i):
            if i == 4:
                params[0] = params[0] * 2

        return {"step": step, "model": nn.Module(), "extra": params, "before": feed,
                "inputs": lambda i: (batch(i, 6, 8),)}

    replayed(run_twins(make))


def test_changed_contents_recompile_and_say_why(monkeypatch, capsys):
    monkeypatch.setenv("TORCH_LOGS", "recompiles")
    params = weights()

    @torch.compile
    def f(ps, x):
        with torch.no_grad():
            return forward(ps[:4], x)

    x = torch.randn(3, 8)
    for _ in range(3):
        f(params, x)
    assert len(f.entries) == 1 and f.entries[0].program is not None
    f(list(params), x)  # another list, the same items: the same program
    assert len(f.entries) == 1
    wider = weights((8, 16, 5))
    f([params[0], params[1], wider[2], wider[3]], x)  # another shape in the list
    f([*params, torch.zeros(1)], x)  # one more item (guarded on the length, as dynamo does)
    err = capsys.readouterr().err.splitlines()
    assert len(f.entries) == 3
    assert err[0].endswith("argument 0: item [2] of the list: tensor shape (16, 5), "
                           "captured with (16, 4)"), err
    assert err[1].endswith("argument 0: a list of 5 items, captured with 4"), err
    with torch.compiler.set_stance("fail_on_recompile"):
        with pytest.raises(RuntimeError, match=r"item \[0\] of the list: tensor dtype"):
            f([params[0].double(), *params[1:]], x)


def test_global_list_guards_each_item(monkeypatch, capsys):
    monkeypatch.setenv("TORCH_LOGS", "recompiles")
    params = weights()

    @torch.compile
    def f(x):
        with torch.no_grad():
            return forward(params, x)

    x = torch.randn(3, 8)
    for _ in range(3):
        f(x)
    params[2] = torch.zeros(16, 5)
    params[3] = torch.zeros(5)
    assert f(x).shape == (3, 5)
    del params[3]
    del params[2]
    assert f(x).shape == (3, 16)
    err = capsys.readouterr().err
    assert "a closure variable, item [2] holds a tensor of another shape" in err, err
    assert "a closure variable, item [2] is gone (the container changed)" in err, err


def test_every_fallback_is_logged(monkeypatch, capsys):
    """A function that runs eagerly says so under ``TORCH_LOGS=graph_breaks``, whatever the
    reason: a graph break, a tensor no guard watches, the recompile limit, the profiler."""
    monkeypatch.setenv("TORCH_LOGS", "graph_breaks,recompiles")

    class Holder:
        pass

    h = Holder()
    box = {"h": h}
    h.x = torch.ones(3)

    @torch.compile
    def unwatched():
        with torch.no_grad():
            return box["h"].x * 2

    for _ in range(3):
        unwatched()
    err = capsys.readouterr().err
    assert "runs eagerly for this signature: a tensor reached through a container" in err

    @torch.compile
    def breaks(x):
        return x.sum().item()

    breaks(torch.ones(2))
    assert "graph break: Tensor.item() reads a value into Python" in capsys.readouterr().err

    from tapegrad._dynamo import config

    config.recompile_limit = 2
    try:
        f = torch.compile(lambda x: x * 2)
        for n in (1, 2, 3, 4):
            f(torch.ones(n))
    finally:
        config.recompile_limit = 8
    err = capsys.readouterr().err.splitlines()
    hit = [line for line in err if "hit the recompile limit (2)" in line]
    assert len(hit) == 1 and "last reason: argument 0: tensor shape (3,)" in hit[0], err

    g = torch.compile(lambda x: x * 3)
    with torch.profiler.profile():
        for _ in range(2):
            g(torch.ones(2))
    err = capsys.readouterr().err.splitlines()
    profiled = [line for line in err if "runs eagerly while the profiler records" in line]
    assert len(profiled) == 1, err


def test_no_log_without_torch_logs(monkeypatch, capsys):
    monkeypatch.delenv("TORCH_LOGS", raising=False)
    monkeypatch.delenv("TAPEGRAD_LOGS", raising=False)

    @torch.compile
    def breaks(x):
        return x.sum().item()

    breaks(torch.ones(2))
    assert capsys.readouterr().err == ""


def test_forward_with_a_list_argument_gets_its_backward():
    """A compiled function of ``(x, params)`` whose output needs its graph (the loss and
    backward in the eager loop): the backward program's gradients go to the list's tensors,
    read through the list at each call."""
    torch.manual_seed(0)
    params = weights()
    torch.manual_seed(0)
    twin = weights()
    compiled = torch.compile(forward)
    for i in range(5):
        x, y = classes(i)
        for ps, f in ((params, lambda ps, x: forward(ps, x)), (twin, compiled)):
            F.cross_entropy(f(ps, x), y).backward()
            with torch.no_grad():
                for p in ps:
                    p -= 0.1 * p.grad
                    p.grad = None
        for p, q in zip(params, twin, strict=True):
            assert p._data.tobytes() == q._data.tobytes()
    (e,) = compiled.entries
    assert e.program is not None and e.backward is not None, compiled.listing()
    assert "args[0][0]._data" in compiled.listing()


def test_a_list_argument_changed_in_place_is_a_graph_break(monkeypatch, capsys):
    """A step that appends to a list it is given: a replay would not append, so the call runs
    eagerly, reported as a graph break."""
    monkeypatch.setenv("TORCH_LOGS", "graph_breaks")
    losses = []

    @torch.compile
    def f(x, out):
        y = x * 2
        out.append(y)
        return y

    for i in range(3):
        f(torch.ones(2) * i, losses)
    assert [t.tolist() for t in losses] == [[0.0, 0.0], [2.0, 2.0], [4.0, 4.0]]
    assert all(e.program is None for e in f.entries)
    err = capsys.readouterr().err
    assert "the call changes the list 'argument 1' in place" in err, err
