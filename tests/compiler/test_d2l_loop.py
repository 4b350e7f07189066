"""``net = torch.compile(net)`` in the textbook training loop (Dive into Deep Learning's
``train_epoch_ch3``)::

    for X, y in train_iter:
        l = loss(net(X), y)
        trainer.zero_grad()
        l.mean().backward()
        trainer.step()

The compiled module's forward is captured with its backward (aot.py) while the loss, the
backward call and the optimizer step stay in the eager loop. Run beside an uncompiled twin
(same seed, same batches, the last one smaller), every parameter, gradient and optimizer state
must agree bit for bit after every step, and the compiled module must replay (one program per
batch shape), with each optimizer the chapters use."""

from __future__ import annotations

import pytest
from replay_checks import assert_same, step_arrays

import tapegrad as torch
from tapegrad import nn
from tapegrad.utils import data

OPTIMIZERS = {
    "SGD": lambda ps: torch.optim.SGD(ps, lr=0.1),
    "SGD-momentum": lambda ps: torch.optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=1e-3),
    "Adam": lambda ps: torch.optim.Adam(ps, lr=1e-2),
    "AdamW": lambda ps: torch.optim.AdamW(ps, lr=1e-2),
    "RMSprop": lambda ps: torch.optim.RMSprop(ps, lr=1e-3, momentum=0.5),
}


def _iter():
    """A small Fashion-MNIST-like loader: 1x8x8 images in 10 classes, batches of 16, the last
    one of 8 (d2l's loaders keep the last partial batch)."""
    g = torch.Generator().manual_seed(3)
    X = torch.randn(72, 1, 8, 8, generator=g)
    y = torch.randint(0, 10, (72,), generator=g)
    return data.DataLoader(data.TensorDataset(X, y), batch_size=16, shuffle=False)


def _nets():
    return {
        "softmax": lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 10)),
        "mlp": lambda: nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(),
                                     nn.Linear(32, 10)),
        "lenet": lambda: nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=3, padding=1), nn.Sigmoid(),
            nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(), nn.Linear(64, 10)),
        "dropout-bn": lambda: nn.Sequential(
            nn.Flatten(), nn.Linear(64, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dropout(0.5),
            nn.Linear(32, 10)),
    }


def _train(net, trainer, loss, epochs=2):
    """d2l's train_epoch_ch3 body, the metrics included (they read the outputs eagerly)."""
    seen = []
    for _ in range(epochs):
        net.train()
        for X, y in _iter():
            y_hat = net(X)
            l = loss(y_hat, y)  # noqa: E741 - the book's name
            trainer.zero_grad()
            l.mean().backward()
            trainer.step()
            correct = float((y_hat.argmax(axis=1).type(y.dtype) == y).sum())
            seen.append((float(l.sum()), correct, y.numel()))
            yield seen[-1]


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")  # the book's
@pytest.mark.parametrize("opt", list(OPTIMIZERS))  # float(l.sum()), which torch warns about too
@pytest.mark.parametrize("arch", list(_nets()))
def test_compiled_module_in_the_textbook_loop(arch, opt):
    copies = []
    for _ in range(2):
        torch.manual_seed(0)
        net = _nets()[arch]()
        copies.append((net, OPTIMIZERS[opt](net.parameters())))
    (net, trainer), (twin, twin_trainer) = copies
    compiled = torch.compile(twin)
    loss = nn.CrossEntropyLoss(reduction="none")
    torch.manual_seed(1)
    eager_run = _train(net, trainer, loss)
    compiled_run = _train(compiled, twin_trainer, loss)
    state = torch.get_rng_state()  # (dropout draws: each copy from the same stream)
    steps = 0
    for metrics in eager_run:
        after = torch.get_rng_state()
        torch.set_rng_state(state)
        assert next(compiled_run) == metrics
        assert torch.equal(torch.get_rng_state(), after)
        state = after
        assert_same(step_arrays(net, trainer), step_arrays(twin, twin_trainer))
        steps += 1
    assert steps == 10
    c = compiled.__dict__["_compiled"]
    assert len(c.entries) == 2, c.listing()  # batches of 16, then the last one of 8
    for e in c.entries:
        assert e.eager is None and e.program is not None and e.backward is not None, (
            c.listing())


def test_eval_after_training_recompiles_and_matches():
    """d2l's evaluate_accuracy: ``net.eval()`` and ``no_grad`` around the compiled module."""
    copies = []
    for _ in range(2):
        torch.manual_seed(0)
        copies.append(_nets()["dropout-bn"]())
    net, twin = copies
    compiled = torch.compile(twin)
    for m in (net, compiled):
        m.eval()
    with torch.no_grad():
        for X, _ in _iter():
            assert_same([net(X)._data], [compiled(X)._data])
    c = compiled.__dict__["_compiled"]  # four batches of 16 (replayed from the third), one
    assert c.entries[0].program is not None, c.listing()  # of 8 (captured once)


def test_compiled_function_with_a_parameter_list_in_the_loop():
    """d2l's from-scratch MLP: ``params = [W1, b1, W2, b2]``, ``net(X)`` a function reading
    them, compiled; the loss, backward and d2l's ``sgd(params, lr, batch_size)`` eager."""

    def make():
        params = [(torch.randn(64, 32) * 0.01).requires_grad_(),
                  torch.zeros(32, requires_grad=True),
                  (torch.randn(32, 10) * 0.01).requires_grad_(),
                  torch.zeros(10, requires_grad=True)]

        def net(X):
            H = torch.relu(X.reshape((-1, 64)) @ params[0] + params[1])
            return H @ params[2] + params[3]

        return params, net

    def sgd(params, lr, batch_size):
        with torch.no_grad():
            for param in params:
                param -= lr * param.grad / batch_size
                param.grad.zero_()

    torch.manual_seed(0)
    params, net = make()
    torch.manual_seed(0)
    twin, twin_net = make()
    compiled = torch.compile(twin_net)
    loss = nn.CrossEntropyLoss(reduction="none")
    for p in (*params, *twin):
        p.grad = torch.zeros_like(p)
    for _ in range(2):
        for X, y in _iter():
            for ps, f in ((params, net), (twin, compiled)):
                l = loss(f(X), y)  # noqa: E741 - the book's name
                l.sum().backward()
                sgd(ps, 0.1, X.shape[0])
            assert_same([p._data for p in params], [p._data for p in twin])
    c = compiled
    assert len(c.entries) == 2 and c.entries[0].backward is not None, c.listing()
    assert "cell_contents[0]._data" in c.listing()


@pytest.mark.parametrize("opt", list(OPTIMIZERS))
@pytest.mark.parametrize("arch", list(_nets()))
def test_the_loop_body_compiled_whole(arch, opt):
    """The loop's body as one compiled function (``train_step(X, y)``: forward, loss,
    ``zero_grad``, ``l.mean().backward()``, ``trainer.step()``), beside the same body run
    eagerly: the same losses and every parameter, gradient and optimizer state bit for bit,
    one replayed program per batch shape."""
    copies = []
    for _ in range(2):
        torch.manual_seed(0)
        net = _nets()[arch]()
        trainer = OPTIMIZERS[opt](net.parameters())
        loss = nn.CrossEntropyLoss(reduction="none")

        def train_step(X, y, net=net, trainer=trainer, loss=loss):
            l = loss(net(X), y)  # noqa: E741 - the book's name
            trainer.zero_grad()
            l.mean().backward()
            trainer.step()
            return l.detach()

        copies.append((net, trainer, train_step))
    (net, trainer, eager), (twin, twin_trainer, body) = copies
    compiled = torch.compile(body)
    torch.manual_seed(1)
    for _ in range(2):
        for X, y in _iter():
            state = torch.get_rng_state()
            a = eager(X, y)
            after = torch.get_rng_state()
            torch.set_rng_state(state)
            b = compiled(X, y)
            assert torch.equal(torch.get_rng_state(), after)
            assert_same([a._data], [b._data])
            assert_same(step_arrays(net, trainer), step_arrays(twin, twin_trainer))
    assert len(compiled.entries) == 2, compiled.listing()
    assert all(e.program is not None for e in compiled.entries), compiled.listing()
