"""tapegrad.show.health: its numbers against norms computed directly (and against real torch's
gradients), and its diagnosis on constructed cases: vanishing (10-layer sigmoid), not vanishing
(ReLU + He init, the seed chapter's two-sigmoid network), exploding, NaN, unused, detached,
no_grad and dead-ReLU.

tapegrad.show has no torch counterpart: these tests always run tapegrad, and use real torch as
the oracle for the gradients the report reads."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import tapegrad
from tapegrad.show import HealthReport, health
from tapegrad.show.health import Thresholds, fmt


def seed003_3(lib):
    """seed003_3_grad_health_check.py: the model after the 5th step's backward (before its
    opt.step), as the seed prints its norms."""
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.Sigmoid(), nn.Sigmoid(), nn.Linear(32, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.5)
    x = lib.randn(64, 64)
    y = lib.randint(0, 10, (64,))
    for step in range(5):
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(model(x), y)
        loss.backward()
        if step == 4:
            return model, opt, loss
        opt.step()
    raise AssertionError("unreachable")


def deep(lib, act: str, he: bool = False, depth: int = 10, width: int = 32, std=None):
    """A ``depth``-layer MLP with ``act`` between the layers, after one backward of an MSE."""
    nn = lib.nn
    lib.manual_seed(0)
    layers = []
    for i in range(depth):
        lin = nn.Linear(width, width if i < depth - 1 else 1)
        if he:
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            nn.init.zeros_(lin.bias)
        if std is not None:
            nn.init.normal_(lin.weight, std=std)
        layers.append(lin)
        if i < depth - 1:
            layers.append(getattr(nn, act)())
    model = nn.Sequential(*layers)
    x, y = lib.randn(64, width), lib.randn(64, 1)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    return model, loss


def finding(report: HealthReport, kind: str):
    found = [f for f in report.diagnosis() if f.kind == kind]
    assert found, f"no {kind!r} finding in:\n{report}"
    return found[0]


# ---------------------------------------------------------------------------------------------
# the numbers


def test_numbers_equal_norms_computed_directly():
    model, opt, _ = seed003_3(tapegrad)
    report = health(model, optimizer=opt, lang="en")
    assert [r.name for r in report.rows] == [n for n, _ in model.named_parameters()]
    for name, p in model.named_parameters():
        r = report[name]
        g = p.grad.numpy().astype(np.float64)
        w = p.detach().numpy().astype(np.float64)
        assert r.grad_norm == pytest.approx(np.sqrt((g * g).sum()), rel=1e-12)
        assert r.grad_norm == pytest.approx(p.grad.norm().item(), rel=1e-6)
        assert r.weight_norm == pytest.approx(np.linalg.norm(w.ravel()), rel=1e-12)
        assert r.max_abs == np.abs(g).max()
        assert r.zero_frac == np.count_nonzero(g == 0) / g.size
        assert (r.nan, r.inf, r.weight_nan, r.weight_inf) == (0, 0, 0, 0)
        assert r.update_source == "lr"  # no step observed: lr * |g| / |w|
        assert r.update_ratio == pytest.approx(0.5 * r.grad_norm / r.weight_norm, rel=1e-12)
        assert r.shape == tuple(p.shape)


def test_numbers_equal_real_torch_gradients():
    model, opt, _ = seed003_3(tapegrad)
    tmodel, _, _ = seed003_3(torch)
    report = health(model, lang="en")
    for name, p in tmodel.named_parameters():
        assert report[name].grad_norm == pytest.approx(p.grad.norm().item(), rel=1e-5)
        assert report[name].weight_norm == pytest.approx(p.detach().norm().item(), rel=1e-6)


def test_seed003_3_norms_and_verdict():
    model, opt, _ = seed003_3(tapegrad)
    report = health(model, optimizer=opt, lang="en")
    # the seed chapter's layer norms, as torch prints them
    assert round(report["0.weight"].grad_norm, 6) == 0.030843
    assert round(report["3.weight"].grad_norm, 6) == 0.056721
    text = str(report)
    assert "0.030843" in text and "0.056721" in text
    assert "vanishing" not in report.kinds()
    ok = finding(report, "depth_ok")
    assert ok.numbers["factor"] == pytest.approx(0.056721 / 0.030843, rel=1e-4)
    assert ok.numbers["factor"] < 2
    assert "differ by a factor of 1.84" in ok.text and "no vanishing gradient" in ok.text
    zh = health(model, optimizer=opt, lang="zh")
    assert "没有梯度消失" in str(zh) and "只差 1.84 倍" in str(zh)
    assert "梯度范数" in zh.table()


def test_to_dict_is_json_and_complete():
    model, opt, _ = seed003_3(tapegrad)
    d = health(model, optimizer=opt, lang="en").to_dict()
    json.dumps(d)
    assert [p["name"] for p in d["parameters"]] == ["0.weight", "0.bias", "3.weight", "3.bias"]
    assert {"kind", "severity", "parameter", "numbers", "text"} <= set(d["diagnosis"][0])


def test_named_parameters_forms():
    model, _, _ = seed003_3(tapegrad)
    a = health(model, lang="en")
    b = health(dict(model.named_parameters()), lang="en")
    c = health(list(model.named_parameters()), lang="en")
    d = health(list(model.parameters()), lang="en")
    assert [r.grad_norm for r in a.rows] == [r.grad_norm for r in b.rows] == [
        r.grad_norm for r in c.rows] == [r.grad_norm for r in d.rows]
    assert [r.name for r in d.rows] == ["p0", "p1", "p2", "p3"]


def test_fmt():
    assert fmt(0.0308430123) == "0.030843"
    assert fmt(2.5718e-08) == "2.572e-08"
    assert fmt(None) == "-" and fmt(float("nan")) == "nan" and fmt(0.0) == "0"


# ---------------------------------------------------------------------------------------------
# the diagnosis


def test_ten_layer_sigmoid_vanishes():
    model, _ = deep(tapegrad, "Sigmoid")
    tmodel, _ = deep(torch, "Sigmoid")
    report = health(model, lang="en")
    f = finding(report, "vanishing")
    first = tmodel[0].weight.grad.norm().item()
    last = tmodel[18].weight.grad.norm().item()
    assert f.numbers["first"] == pytest.approx(first, rel=1e-4)
    assert f.numbers["last"] == pytest.approx(last, rel=1e-4)
    assert f.numbers["ratio"] == pytest.approx(last / first, rel=1e-4)
    assert f.numbers["ratio"] > 1e6  # more than six orders of magnitude
    assert f.parameter == "0.weight" and f.numbers["last_name"] == "18.weight"
    assert fmt(f.numbers["first"]) in f.text and fmt(f.numbers["last"]) in f.text
    assert f"{f.numbers['orders']} orders of magnitude" in f.text
    assert report.diagnosis()[0].kind == "vanishing"
    assert "梯度消失" in finding(health(model, lang="zh"), "vanishing").text


def test_relu_with_he_init_does_not_vanish():
    model, _ = deep(tapegrad, "ReLU", he=True)
    report = health(model, lang="en")
    assert "vanishing" not in report.kinds() and "exploding" not in report.kinds()
    f = finding(report, "depth_ok")
    assert f.numbers["factor"] < Thresholds.shrinking_ratio


def test_exploding():
    model, _ = deep(tapegrad, "ReLU", depth=8, std=4 / 32**0.5)
    report = health(model, lang="en")
    f = finding(report, "exploding")
    assert f.severity == "warning"
    norms = [r.grad_norm for r in report.rows]
    assert max(norms) > Thresholds.exploding_norm
    assert f.numbers["norm"] == next(n for n in norms if n > Thresholds.exploding_norm)


def test_nan_born_in_forward_names_the_op():
    nn = tapegrad.nn
    tapegrad.manual_seed(0)
    model = nn.Linear(4, 3)
    out = model(tapegrad.randn(5, 4))
    loss = tapegrad.log(out - 10).pow(2).mean()  # log of a negative number: NaN
    loss.backward(retain_graph=True)  # the saved forward values stay for the scan
    report = health(model, loss=loss, lang="en")
    f = finding(report, "nan")
    assert f.severity == "error" and f.parameter == "weight"
    assert f.numbers["nan"] == 12 and f.numbers["phase"] == "forward"
    assert f.numbers["op"] == "LogBackward0"
    assert "in the output of LogBackward0" in f.text
    assert report.diagnosis()[0].kind == "nan"
    assert report["weight"].nan == 12 and np.isnan(report["weight"].grad_norm)


def test_unused_parameter_not_on_the_path():
    class Net(tapegrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.used = tapegrad.nn.Linear(3, 2)
            self.unused = tapegrad.nn.Linear(3, 2)

        def forward(self, x):
            return self.used(x)

    tapegrad.manual_seed(0)
    model = Net()
    x = tapegrad.randn(4, 3)
    loss = model(x).sum()
    loss.backward()
    # from the graph alone
    f = finding(health(model, loss=loss, lang="en"), "no_grad")
    assert f.parameter == "unused.weight" and f.numbers["reason"] == "not_in_graph"
    assert "not on the loss's path" in f.text
    # from a forward pass with hooks: the module was never called
    report = health(model, inputs=x, lang="en")
    reasons = {f.parameter: f.numbers["reason"] for f in report.diagnosis() if f.kind == "no_grad"}
    assert reasons == {"unused.weight": "not_called", "unused.bias": "not_called"}
    assert "'unused' was not called" in str(report)
    # without either, it says what it cannot tell
    f = finding(health(model, lang="en"), "no_grad")
    assert f.numbers["reason"] == "unknown"


class _Two(tapegrad.nn.Module):
    def __init__(self, how):
        super().__init__()
        self.a = tapegrad.nn.Linear(3, 3)
        self.b = tapegrad.nn.Linear(3, 1)
        self.how = how

    def forward(self, x):
        if self.how == "detach":
            h = self.a(x).detach()
        else:
            with tapegrad.no_grad():
                h = self.a(x)
        return self.b(h)


@pytest.mark.parametrize("how,reason,words", [
    ("detach", "detached", "was detached (.detach())"),
    ("no_grad", "no_grad", "ran under torch.no_grad()"),
])
def test_why_no_gradient(how, reason, words):
    tapegrad.manual_seed(0)
    model = _Two(how)
    x = tapegrad.randn(4, 3)
    report = health(model, inputs=x, lang="en")  # the forward with hooks
    model(x).sum().backward()
    report = health(model, inputs=x, lang="en")
    found = {f.parameter: f for f in report.diagnosis() if f.kind == "no_grad"}
    assert set(found) == {"a.weight", "a.bias"}
    assert found["a.weight"].numbers["reason"] == reason
    assert words in found["a.weight"].text
    assert report["b.weight"].grad_norm is not None


def test_dead_relu_units():
    nn = tapegrad.nn
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    with tapegrad.no_grad():
        model[0].bias[:3] = -100.0  # units 0..2 can never fire on these inputs
    x = tapegrad.randn(16, 4)
    model(x).sum().backward()
    report = health(model, inputs=x, lang="en")
    f = finding(report, "dead_relu")
    assert f.parameter == "1"
    assert (f.numbers["dead"], f.numbers["units"]) == (3, 8)
    assert "3 of 8 units of '1'" in f.text
    assert "个单元中有 3 个" in finding(health(model, inputs=x, lang="zh"), "dead_relu").text
    # the dead units' rows of the first layer get exactly zero gradient
    g = model[0].weight.grad.numpy()
    assert (g[:3] == 0).all() and report["0.weight"].zero_frac >= 3 / 8


def test_frozen_parameters_are_left_out():
    model, _, _ = seed003_3(tapegrad)
    model[0].bias.requires_grad_(False)
    model[0].bias.grad = None
    report = health(model, lang="en")
    f = finding(report, "frozen")
    assert f.numbers["parameters"] == ["0.bias"]
    assert "no_grad" not in report.kinds()


def test_no_backward_yet():
    model = tapegrad.nn.Linear(2, 2)
    assert health(model, lang="en").kinds() == ["no_grads_at_all"]


def test_plot_and_svg():
    pytest.importorskip("matplotlib", reason="the plot needs matplotlib (the viz extra)")
    from matplotlib.figure import Figure

    model, _ = deep(tapegrad, "Sigmoid", depth=4)
    report = health(model, lang="en")
    fig = report.plot()
    assert isinstance(fig, Figure)
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert labels == [r.name for r in report.rows]
    heights = [b.get_height() for b in fig.axes[0].patches[: len(report.rows)]]
    assert heights == pytest.approx([r.grad_norm for r in report.rows])
    assert "<svg" in report.svg()


def _with_grads(norms):
    """Named (4, 4) parameters whose gradients have the given norms."""
    named = {}
    for i, n in enumerate(norms):
        p = tapegrad.ones(4, 4, requires_grad=True)
        p.grad = tapegrad.full((4, 4), n / 4.0)
        named[f"layer{i}.weight"] = p
    return named


def test_a_converged_last_layer_does_not_hide_vanishing():
    report = health(_with_grads([1e-6, 1.0, 1e-3]), lang="en")
    f = finding(report, "vanishing")
    assert f.numbers["last_name"] == "layer1.weight"
    assert f.numbers["ratio"] == pytest.approx(1e6)
    assert "than the largest gradient among the later layers (layer1.weight: 1.000000)" in f.text
    f = finding(health(_with_grads([1e-6, 1e-3, 1.0]), lang="en"), "vanishing")
    assert "than the last layer's (layer2.weight: 1.000000)" in f.text


def test_stalled_training():
    report = health(_with_grads([3e-9, 2e-8, 5e-8]), lang="en")
    assert report.kinds()[0] == "stalled"
    assert "vanishing" not in report.kinds()
    assert "5.000e-08" in report.diagnosis()[0].text
    assert "训练停滞" in health(_with_grads([3e-9, 2e-8, 5e-8]), lang="zh").diagnosis()[0].text


def test_gradient_growing_towards_the_input_is_exploding():
    f = finding(health(_with_grads([5.0, 1e-2]), lang="en"), "exploding")
    assert f.numbers["ratio"] == pytest.approx(2e-3) and f.numbers["orders"] == 2
    assert "500 times larger than the last layer's (layer1.weight: 0.010000)" in f.text


def test_one_order_of_magnitude_is_a_note_not_vanishing():
    report = health(_with_grads([0.05, 1.0]), lang="en")
    f = finding(report, "shrinking")
    assert f.severity == "info" and f.numbers["ratio"] == pytest.approx(20.0)
    assert "vanishing" not in report.kinds() and "healthy" in report.kinds()


def test_gradient_cleared_after_backward():
    model, opt, loss = seed003_3(tapegrad)
    opt.zero_grad()
    report = health(model, loss=loss, lang="en")
    reasons = {f.numbers["reason"] for f in report.diagnosis() if f.kind == "no_grad"}
    assert report.kinds() == ["no_grads_at_all"] and not reasons
    model[0].weight.grad = tapegrad.zeros_like(model[0].weight)  # one parameter has one again
    report = health(model, loss=loss, lang="en")
    f = next(f for f in report.diagnosis() if f.parameter == "0.bias")
    assert f.kind == "no_grad" and f.numbers["reason"] == "cleared"
    assert "gradient was cleared after backward" in f.text


def test_complex_parameters():
    w = tapegrad.tensor([3 + 4j, 1 - 1j], requires_grad=True)
    (w.abs() ** 2).sum().backward()
    r = health({"w": w}, lang="en")["w"]
    assert r.weight_norm == pytest.approx(tapegrad.linalg.vector_norm(w).item())
    assert r.grad_norm == pytest.approx(tapegrad.linalg.vector_norm(w.grad).item())


def test_an_update_float32_lost_reads_0_lost():
    """A step whose change is too small for float32 to add to the weights leaves them
    unchanged although the gradient is not zero: the update/weight column says "0 (lost)" (and
    a note under the table says why), not a bare 0; in Chinese too."""
    big = tapegrad.nn.Parameter(tapegrad.full((4,), 1e8))  # float32's step at 1e8 is 8
    small = tapegrad.nn.Parameter(tapegrad.ones(4))
    opt = tapegrad.optim.SGD([big, small], lr=1.0)
    monitor = tapegrad.show.Monitor({"big": big, "small": small}, opt, lang="en")
    opt.zero_grad()
    (big * 1e-3 + small * 1e-3).sum().backward()
    opt.step()
    monitor.detach()
    report = monitor.report("en")
    assert report["big"].update_ratio == 0.0 and report["big"].grad_norm > 0
    assert report["small"].update_ratio > 0
    lines = report.table().splitlines()
    assert lines[2].split()[0] == "big" and "0 (lost)" in lines[2]
    assert "0 (lost)" not in lines[3]
    assert lines[-1].startswith("0 (lost): the last step left these weights exactly as they "
                                "were though their gradient was not zero")
    assert "0 (lost)" in report.html()
    zh = monitor.report("zh")
    assert "0（丢失）" in zh.table() and "float32 大约只有 7 位有效数字" in zh.table()
