"""The listener stack (autograd/listeners.py): the backward trace, forward-mode AD, a
compiled function's capture and the ``tapegrad doctor`` and ``tapegrad graph`` commands work
while no function, method, class or property of tapegrad is replaced; the engine announces
its steps in order; listeners stack and unstack; anomaly mode's NaN check is one of them."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tapegrad as torch
from tapegrad import show
from tapegrad.autograd import engine, forward_ad, listeners


def _is_code(value: object) -> bool:
    return callable(value) or isinstance(value, (property, staticmethod, classmethod))


def _code_of_tapegrad() -> dict:
    """Every function, class, method and property held by a tapegrad module or class (its
    own ``vars()``), by where it is held, and each such function's code object (a function
    whose ``__code__`` was swapped is replaced too)."""
    held: dict = {}

    def hold(key: tuple, value: object) -> None:
        held[key] = value
        code = getattr(value, "__code__", None)
        if code is not None:
            held[key + ("__code__",)] = code

    for name, module in list(sys.modules.items()):
        if module is None or not (name == "tapegrad" or name.startswith("tapegrad.")):
            continue
        for key, value in list(vars(module).items()):
            if _is_code(value):
                hold((name, key), value)
            if isinstance(value, type) and value.__module__ == name:
                for attr, member in list(vars(value).items()):
                    if _is_code(member):
                        hold((name, key, attr), member)
    return held


def _replaced(before: dict, during: dict) -> set:
    """Where ``during`` holds something else than ``before`` did."""
    return {k for k, v in before.items() if k in during and during[k] is not v}


class _Snapshot(listeners.Listener):
    """Takes ``_code_of_tapegrad()`` in the middle of the first backward pass it hears."""

    def __init__(self) -> None:
        self.during: dict | None = None

    def node_started(self, node: object, grads: object) -> None:
        if self.during is None:
            self.during = _code_of_tapegrad()


def test_the_trace_records_with_nothing_replaced():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = ((x * 3).tanh() + x).sum()
    before = _code_of_tapegrad()
    snap = _Snapshot()
    with show.trace() as t, listeners.listening(snap):
        assert listeners.stack()[-2:] == (t, snap)
        loss.backward()
    assert snap.during is not None and _replaced(before, snap.during) == set()
    assert [s.name for s in t.steps] == ["SumBackward0", "AddBackward0", "TanhBackward0",
                                         "MulBackward0", "AccumulateGrad"]
    assert t.steps[-1].accumulated["leaf"] == "x"
    assert listeners.active is None


def test_forward_ad_with_nothing_replaced():
    primal = torch.tensor([0.5, 1.5])
    tangent = torch.tensor([1.0, 0.0])
    before = _code_of_tapegrad()
    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)
        y = (x.sin() * x).sum()
        during = _code_of_tapegrad()
        value, jvp = forward_ad.unpack_dual(y)
    assert _replaced(before, during) == set()
    expected = float(np.cos(0.5) * 0.5 + np.sin(0.5))
    assert abs(jvp.item() - expected) < 1e-6
    assert abs(value.item() - float(np.sin(0.5) * 0.5 + np.sin(1.5) * 1.5)) < 1e-6


def test_compiled_capture_hears_the_core_through_listeners():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, 2, gamma=0.5)
    x = torch.randn(5, 4)
    target = torch.tensor([0, 2, 1, 1, 0])

    def step():  # (cross_entropy reads its target in a value check)
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), target)
        loss.backward()
        opt.step()
        sched.step()
        return loss

    eager_model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                      torch.nn.Linear(8, 3))
    eager_model.load_state_dict(model.state_dict())
    eager_opt = torch.optim.SGD(eager_model.parameters(), lr=0.1)
    eager_sched = torch.optim.lr_scheduler.StepLR(eager_opt, 2, gamma=0.5)

    before = _code_of_tapegrad()
    snap = _Snapshot()
    compiled = torch.compile(step)
    with listeners.listening(snap):
        losses = [compiled() for _ in range(4)]
    listing = compiled.listing()
    assert "# program 0" in listing  # captured, and replayed
    assert "StepLR_step(" in listing and "_ce_targets_fit" in listing
    assert snap.during is not None and _replaced(before, snap.during) == set()
    assert _replaced(before, _code_of_tapegrad()) == set()

    for got in losses:
        eager_opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(eager_model(x), target)
        loss.backward()
        eager_opt.step()
        eager_sched.step()
        np.testing.assert_array_equal(got.detach().numpy(), loss.detach().numpy())
    assert sched.get_last_lr() == eager_sched.get_last_lr()
    for a, b in zip(model.parameters(), eager_model.parameters(), strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


class _SnapshotEach(listeners.Listener):
    """Takes ``_code_of_tapegrad()`` at each optimizer made, each ``autograd.backward`` called
    and the first node of each backward pass."""

    def __init__(self) -> None:
        self.during: list = []

    def optimizer_created(self, optimizer: object) -> None:
        self.during.append(("optimizer", _code_of_tapegrad()))

    def run_autograd_backward(self, tensors, run):  # noqa: ANN001, ANN201
        self.during.append(("backward", _code_of_tapegrad()))
        return run()

    def node_started(self, node: object, grads: object) -> None:
        self.during.append(("node", _code_of_tapegrad()))


_SCRIPT = """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sigmoid(), torch.nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
for _ in range(2):
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
"""


def test_doctor_and_graph_commands_replace_nothing(tmp_path, capsys):
    from tapegrad.show._commands import graph_command
    from tapegrad.show.doctor import doctor_command

    script = tmp_path / "train.py"
    script.write_text(_SCRIPT)
    before = _code_of_tapegrad()
    snap = _SnapshotEach()
    with listeners.listening(snap):
        assert doctor_command(["--out", str(tmp_path / "doctor"), "--lang", "en",
                               str(script)]) == 0
    assert (tmp_path / "doctor" / "health.json").exists()
    # the optimizer (with its Monitor), two backward calls (the first one traced), their passes
    assert [kind for kind, _ in snap.during].count("optimizer") == 1
    assert [kind for kind, _ in snap.during].count("backward") == 2
    assert all(_replaced(before, during) == set() for _, during in snap.during)

    snap = _SnapshotEach()
    with listeners.listening(snap):
        graph_command(["--out", str(tmp_path / "g.dot"), "--lang", "en", str(script)])
    assert "Sigmoid" in capsys.readouterr().out  # the graph of the first loss, printed
    assert [kind for kind, _ in snap.during] == ["optimizer", "backward"]  # stopped there
    assert all(_replaced(before, during) == set() for _, during in snap.during)
    assert _replaced(before, _code_of_tapegrad()) == set() and listeners.stack() == ()


class _Log(listeners.Listener):
    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log

    def backward_started(self, roots: object, inputs: object) -> None:
        self.log.append((self.name, "start"))

    def node_started(self, node: object, grads: object) -> None:
        self.log.append((self.name, type(node).__name__))

    def run_node(self, node, run, grads):  # noqa: ANN001, ANN201
        self.log.append((self.name, "enter"))
        out = run(grads)
        self.log.append((self.name, "leave"))
        return out

    def gradient_sent(self, node, i, child, nr, grad):  # noqa: ANN001, ANN201
        self.log.append((self.name, "sent", i, child is None, grad is None))

    def gradient_accumulated(self, node, grad, stored):  # noqa: ANN001, ANN201
        self.log.append((self.name, "accumulated", grad.tolist(), stored))

    def backward_finished(self) -> None:
        self.log.append((self.name, "finish"))


def test_events_in_order_and_stacked_listeners_nest():
    a = torch.tensor([2.0], requires_grad=True)
    c = torch.tensor([5.0])
    y = a * c
    log: list = []
    outer, inner = _Log("outer", log), _Log("inner", log)
    with listeners.listening(outer), listeners.listening(inner):
        y.backward()
    assert log == [
        ("outer", "start"), ("inner", "start"),
        ("outer", "MulBackward0"), ("inner", "MulBackward0"),
        ("outer", "enter"), ("inner", "enter"), ("inner", "leave"), ("outer", "leave"),
        ("outer", "sent", 0, False, False), ("inner", "sent", 0, False, False),
        ("outer", "sent", 1, True, True), ("inner", "sent", 1, True, True),
        ("outer", "AccumulateGrad"), ("inner", "AccumulateGrad"),
        ("outer", "accumulated", [5.0], True), ("inner", "accumulated", [5.0], True),
        ("outer", "finish"), ("inner", "finish"),
    ]
    assert a.grad.tolist() == [5.0]
    assert listeners.active is None and listeners.stack() == ()


def test_pop_takes_a_listener_out_from_under_another():
    first, second = listeners.Listener(), listeners.Listener()
    listeners.push(first)
    listeners.push(second)
    listeners.pop(first)
    assert listeners.stack() == (second,) and listeners.active is second
    listeners.pop(second)
    assert listeners.active is None


def test_anomaly_modes_nan_check_listens():
    x = torch.tensor([0.0], requires_grad=True)
    y = (x.sqrt() * 0).sum()  # backward: 0 * inf = nan in SqrtBackward0
    with torch.autograd.set_detect_anomaly(True, check_nan=False):
        assert listeners.stack() == ()
    with torch.autograd.set_detect_anomaly(True):
        assert listeners.stack() == (engine.NAN_CHECK,)
        with pytest.warns(UserWarning), pytest.raises(
                RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th"):
            y.backward()
    assert listeners.stack() == ()
