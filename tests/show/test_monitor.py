"""tapegrad.show.Monitor: the health check at every optimizer step: its history against the
gradients and updates computed directly, missing zero_grad, NaN origins, dead ReLU units, the
plot, and that detaching leaves nothing behind."""

from __future__ import annotations

import numpy as np
import pytest

import tapegrad
from tapegrad.autograd import listeners
from tapegrad.show import Monitor, watch
from tapegrad.show.i18n import TEXTS, resolve_lang, t

nn = tapegrad.nn


def small():
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
    x, y = tapegrad.randn(16, 4), tapegrad.randn(16, 2)
    return model, opt, x, y


def train(model, opt, x, y, steps, zero_grad=True, set_to_none=True):
    losses, grads, updates = [], [], []
    for _ in range(steps):
        if zero_grad:
            opt.zero_grad(set_to_none=set_to_none)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        before = [p.detach().clone() for p in model.parameters()]
        opt.step()
        losses.append(loss.item())
        grads.append([p.grad.norm().item() for p in model.parameters()])
        updates.append([(p.detach() - b).norm().item()
                        for p, b in zip(model.parameters(), before, strict=True)])
    return losses, grads, updates


def test_history_matches_direct_numbers():
    model, opt, x, y = small()
    with Monitor(model, opt, lang="en") as monitor:
        losses, grads, updates = train(model, opt, x, y, 4)
    assert [h["step"] for h in monitor.history] == [1, 2, 3, 4]
    assert [h["loss"] for h in monitor.history] == pytest.approx(losses, rel=1e-6)
    names = [n for n, _ in model.named_parameters()]
    for h, g, u in zip(monitor.history, grads, updates, strict=True):
        assert [h["params"][n]["grad_norm"] for n in names] == pytest.approx(g, rel=1e-5)
        for n, un in zip(names, u, strict=True):
            row = h["params"][n]
            assert row["update_source"] == "step"
            assert row["update_ratio"] * row["weight_norm"] == pytest.approx(un, rel=1e-4)
    report = monitor.report()
    assert report.step == 4 and "(step 4)" in str(report)
    assert "accumulating" not in report.kinds()


def test_missing_zero_grad_is_found():
    model, opt, x, y = small()
    with Monitor(model, opt, lang="en") as monitor:
        opt.zero_grad()
        train(model, opt, x, y, 4, zero_grad=False)
    report = monitor.report()
    f = next(f for f in report.diagnosis() if f.kind == "accumulating")
    assert f.numbers["steps"] == 3  # steps 2, 3 and 4 added onto the previous gradient
    assert f.parameter == "0.weight"
    assert set(f.numbers["parameters"]) == {n for n, _ in model.named_parameters()}
    assert f.numbers["first"] == monitor.history[0]["params"]["0.weight"]["grad_norm"]
    assert f.numbers["last"] == monitor.history[-1]["params"]["0.weight"]["grad_norm"]
    assert "zero_grad() was not called" in f.text
    zh = monitor.report(lang="zh").diagnosis()
    assert zh[0].kind == "accumulating"  # first among the warnings: it causes the others
    assert "没有调用 zero_grad()" in zh[0].text
    assert [h["stale"] != [] for h in monitor.history] == [False, True, True, True]


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_and_accumulation_over_micro_batches_are_fine(set_to_none):
    model, opt, x, y = small()
    with Monitor(model, opt, lang="en") as monitor:
        for _ in range(3):
            opt.zero_grad(set_to_none=set_to_none)
            for half in (x[:8], x[8:]):  # two backward calls per step: deliberate
                nn.functional.mse_loss(model(half), y[:8]).backward()
            opt.step()
    assert "accumulating" not in monitor.report().kinds()


def test_nan_born_in_backward_names_the_node():
    class Root(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(tapegrad.zeros(3))

        def forward(self):
            return (self.w.sqrt() * 0).sum()  # finite forward; sqrt'(0) * 0 = nan

    model = Root()
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
    with Monitor(model, opt, lang="en") as monitor:
        opt.zero_grad()
        model().backward()
        opt.step()
    f = monitor.report().diagnosis()[0]
    assert f.kind == "nan" and f.parameter == "w"
    assert (f.numbers["phase"], f.numbers["op"]) == ("backward", "SqrtBackward0")
    assert "in the backward pass, in SqrtBackward0" in f.text
    assert "反向传播中的 SqrtBackward0" in monitor.report(lang="zh").diagnosis()[0].text


def test_nan_born_in_forward_without_retain_graph():
    tapegrad.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
    with Monitor(model, opt, lang="en") as monitor:
        opt.zero_grad()
        tapegrad.log(model(tapegrad.randn(5, 4)) - 10).pow(2).mean().backward()
        opt.step()
    report = monitor.report()
    f = report.diagnosis()[0]
    assert (f.kind, f.numbers["phase"], f.numbers["op"]) == ("nan", "forward", "LogBackward0")
    assert "nan_weights" in report.kinds()  # the step wrote the NaN into the weights
    assert np.isnan(monitor.history[0]["loss"])


def test_unused_and_dead_units_seen_over_training():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 8)
            self.act = nn.ReLU()
            self.head = nn.Linear(8, 1)
            self.spare = nn.Linear(4, 1)

        def forward(self, x):
            return self.head(self.act(self.fc(x)))

    tapegrad.manual_seed(0)
    model = Net()
    with tapegrad.no_grad():
        model.fc.bias[:2] = -100.0
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.01)
    x = tapegrad.randn(32, 4)
    with Monitor(model, opt, lang="en") as monitor:
        for _ in range(2):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
    report = monitor.report()
    dead = next(f for f in report.diagnosis() if f.kind == "dead_relu")
    assert (dead.parameter, dead.numbers["dead"], dead.numbers["units"]) == ("act", 2, 8)
    reasons = {f.parameter: f.numbers["reason"] for f in report.diagnosis()
               if f.kind == "no_grad"}
    assert reasons == {"spare.weight": "not_called", "spare.bias": "not_called"}


def test_without_optimizer_every_backward_is_a_step():
    model, _, x, y = small()
    with Monitor(model, lang="en") as monitor:
        for _ in range(3):
            model.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
    assert len(monitor.history) == 3
    assert monitor.history[-1]["params"]["0.weight"]["update_ratio"] is None


def test_detach_leaves_nothing_behind():
    model, opt, x, y = small()
    backward, detach = tapegrad.Tensor.backward, tapegrad.Tensor.detach
    monitor = Monitor(model, opt)
    assert listeners.stack() == (watch.WATCH,)  # listening while attached, nothing replaced
    assert tapegrad.Tensor.backward is backward and tapegrad.Tensor.detach is detach
    train(model, opt, x, y, 1)
    monitor.detach()
    assert listeners.stack() == ()
    assert tapegrad.Tensor.backward is backward and tapegrad.Tensor.detach is detach
    assert not opt._optimizer_step_pre_hooks and not opt._optimizer_step_post_hooks
    assert all(not p._hooks for p in model.parameters())
    assert all(not m._forward_hooks for m in model.modules())
    train(model, opt, x, y, 1)
    assert len(monitor.history) == 1
    # two monitors: the listener goes when the last one does
    a, b = Monitor(model, opt), Monitor(model, opt)
    a.detach()
    assert listeners.stack() == (watch.WATCH,)
    b.detach()
    assert listeners.stack() == ()
    assert tapegrad.Tensor.backward is backward


def test_plot():
    pytest.importorskip("matplotlib", reason="the plot needs matplotlib (the viz extra)")
    model, opt, x, y = small()
    with Monitor(model, opt, lang="en") as monitor:
        _, grads, _ = train(model, opt, x, y, 3)
    fig = monitor.plot()
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"0.weight", "2.weight"}
    assert list(lines["0.weight"].get_xdata()) == [1, 2, 3]
    assert list(lines["0.weight"].get_ydata()) == pytest.approx([g[0] for g in grads], rel=1e-5)
    assert "<svg" in monitor.svg()


# ---------------------------------------------------------------------------------------------
# the words


def test_language_resolution(monkeypatch):
    for var in ("TAPEGRAD_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert resolve_lang() == "zh"
    monkeypatch.setenv("TAPEGRAD_LANG", "en")
    assert resolve_lang() == "en"
    assert resolve_lang("zh") == "zh" and resolve_lang("zh_TW") == "zh"
    monkeypatch.setenv("TAPEGRAD_LANG", "zh")
    assert resolve_lang() == "zh" and resolve_lang("en") == "en"
    monkeypatch.delenv("TAPEGRAD_LANG")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert resolve_lang() == "en"
    with pytest.raises(ValueError, match="unknown language 'fr'"):
        resolve_lang("fr")
    assert t("health.title", "zh") == "梯度体检报告"


def test_every_text_in_both_languages_with_the_same_fields():
    import string

    fmt = string.Formatter()
    for key, (en, zh) in TEXTS.items():
        fields_en = {f for _, f, _, _ in fmt.parse(en) if f}
        fields_zh = {f for _, f, _, _ in fmt.parse(zh) if f}
        assert fields_en == fields_zh, key
        assert bool(en) == bool(zh), key


def test_every_key_the_show_package_uses_has_both_languages():
    import re
    from pathlib import Path

    import tapegrad.show as show_pkg

    used: set[str] = set()
    for path in Path(show_pkg.__file__).parent.glob("*.py"):
        used |= set(re.findall(r"\b_?t\(\s*[\"']([a-z_]+(?:\.[a-z_0-9]+)+)[\"']",
                               path.read_text(encoding="utf-8")))
    assert {"trace.no_edge", "graph.in_place", "graphcmd.usage", "doctor.usage"} <= used
    assert used <= set(TEXTS), sorted(used - set(TEXTS))
    for key in used:
        en, zh = TEXTS[key]
        assert en and zh and en != zh or key.startswith("col.") or en == zh == "", key
    # the report page's words: every one in both languages, same placeholders
    from tapegrad.show.steps import page_text

    assert set(page_text("en")) == set(page_text("zh")) >= {"trace", "received", "copy"}
