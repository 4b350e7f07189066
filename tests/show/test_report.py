"""The report page: one self-contained file, checked in a real headless Chromium (the system's
package, driven by Playwright): it loads without console errors, stepping through the trace
highlights each node on the picture, and clicking a node shows its row."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import _graphs  # noqa: E402

import tapegrad as torch  # noqa: E402
from tapegrad import show  # noqa: E402
from tapegrad.show.report import write_report  # noqa: E402

CHROMIUM = os.environ.get("TAPEGRAD_CHROMIUM", "/usr/bin/chromium")


def _browser_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed (pip install tapegrad[test])"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt install chromium)"
    if shutil.which("dot") is None:
        return "Graphviz's dot program is not installed (apt install graphviz)"
    return None


needs_browser = pytest.mark.skipif(_browser_reason() is not None,
                                   reason=_browser_reason() or "")


def _seed_trace():
    a = torch.tensor([2.0], requires_grad=True)
    b = torch.tensor([3.0], requires_grad=True)
    e = (a * b + 1.0) ** 2
    with show.trace() as t:
        e.backward()
    return t


def test_page_is_self_contained(tmp_path):
    t = _seed_trace()
    fig = '<?xml version="1.0"?><!DOCTYPE svg><svg xmlns="http://www.w3.org/2000/svg"><rect/></svg>'
    path = write_report(tmp_path / "r.html", trace=t, figures={"norms": fig}, title="seed")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing from the network
    assert "<h3>norms</h3>" in page and "<?xml" not in page
    assert "AccumulateGrad(a): 42" in page and "a.grad = 42" in page
    zh = write_report(tmp_path / "zh.html", trace=t, lang="zh").read_text(encoding="utf-8")
    assert "反向传播" in zh and '<html lang="zh">' in zh


def test_nan_gradients_keep_the_data_valid_json(tmp_path):
    import json

    x = torch.tensor([0.0], requires_grad=True)
    y = (x * float("nan")).sum()
    with show.trace() as t:
        y.backward()
    page = write_report(tmp_path / "nan.html", trace=t).read_text(encoding="utf-8")
    data = re.search(r'id="tg-data">(.*?)</script>', page, re.S).group(1)
    json.loads(data.replace("<\\/", "</"), parse_constant=lambda c: pytest.fail(c))


@needs_browser
def test_page_in_headless_chromium(tmp_path):
    from playwright.sync_api import sync_playwright

    loss, model = _graphs.mlp()
    with show.trace(model) as t:
        loss.backward()
    seed = _seed_trace()
    mlp_page = write_report(tmp_path / "mlp.html", trace=t, figures={"x": "<svg></svg>"})
    seed_page = write_report(tmp_path / "seed.html", trace=seed)
    records = t.records()
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            page.goto(mlp_page.as_uri())
            page.wait_for_selector("#picture svg")

            def current():
                return page.eval_on_selector_all(
                    "#picture g.tg-current", "els => els.map(e => e.id)")

            # the first step is selected on load; step through all of them, by button and key
            for k, rec in enumerate(records):
                assert current() == [rec["shown"]]
                cls = page.get_attribute(f"#picture g[id='{rec['shown']}']", "class")
                assert "tg-current" in cls
                assert page.get_attribute("#detail", "data-step") == str(k)
                assert page.text_content("#detail").startswith(f"step {rec['step']}: "
                                                               f"{rec['node']}")
                row = page.get_attribute("#steps tbody tr.current", "data-node")
                assert row == rec["shown"]
                sent = page.eval_on_selector_all("#picture g.tg-sent",
                                                 "els => els.map(e => e.id)")
                assert sorted(sent) == sorted(f"{rec['shown']}-{e['input']}"
                                              for e in rec["sent"] if e["grad"] is not None)
                if k % 2:
                    page.click("#next")
                else:
                    page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowLeft")
            assert current() == [records[-2]["shown"]]
            page.click("#prev")
            assert current() == [records[-3]["shown"]]
            # clicking a node on the picture shows its step
            target = next(r for r in records if r["node"] == "AccumulateGrad")
            page.click(f"#picture g[id='{target['shown']}']")
            assert current() == [target["shown"]]
            assert page.get_attribute("#detail", "data-step") == str(target["step"])
            assert target["accumulated"]["leaf"] in page.text_content("#detail")
            # clicking a row does the same
            page.click(f"#steps tbody tr:nth-child({records[1]['step'] + 1})")
            assert current() == [records[1]["shown"]]

            page.goto(seed_page.as_uri())
            page.click("#next")
            page.click("#next")
            detail = page.text_content("#detail")
            assert "MulBackward0" in detail and "AccumulateGrad(a): 42" in detail
            assert "AccumulateGrad(b): 28" in detail
            assert errors == []
            assert all(u.startswith("file:") for u in requests)
        finally:
            browser.close()


def test_page_words_come_from_i18n_and_text_sections(tmp_path, monkeypatch):
    from tapegrad.show.i18n import t as words

    t = _seed_trace()
    page = write_report(tmp_path / "en.html", trace=t, lang="en",
                        text={"Health": "line <1>\nline 2"}).read_text(encoding="utf-8")
    assert '<pre class="report">line &lt;1&gt;\nline 2</pre>' in page
    assert page.index("<h2>Health</h2>") < page.index('<section id="trace">')
    monkeypatch.setenv("TAPEGRAD_LANG", "zh")
    zh = write_report(tmp_path / "zh.html", trace=t).read_text(encoding="utf-8")
    for key in ("page.trace", "page.received", "page.sent", "page.next", "page.text_tree"):
        assert html_escape(words(key, "zh")) in zh, key
    assert "保存：" in zh  # the graph's text tree in the page speaks the page's language
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 1)
    with show.trace() as hooked:
        y.sum().backward()
    zh = write_report(tmp_path / "hook.html", trace=hooked).read_text(encoding="utf-8")
    assert "张量钩子 " in zh and "tensor hook" not in zh  # the steps' hooks in Chinese too


def html_escape(s):
    import html

    return html.escape(s)


def _deep_sigmoid_report_and_trace():
    """A 10-layer sigmoid MLP: its health report's diagnosis (vanishing gradients) is a long
    sentence, the line the page must show whole; and the trace of its backward pass."""
    torch.manual_seed(0)
    layers = []
    for _ in range(10):
        layers += [torch.nn.Linear(16, 16), torch.nn.Sigmoid()]
    model = torch.nn.Sequential(*layers[:-1])
    loss = model(torch.randn(8, 16)).pow(2).mean()
    with show.trace(model) as t:
        loss.backward()
    report = show.health(model, lang="en")
    assert report.kinds()[0] == "vanishing"
    return report, t


def _box_in_screenshot(png: Path, rgb: tuple[int, int, int]) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of the pixels of exactly the colour ``rgb``, in pixels."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(png).convert("RGB")).astype(int)
    ys, xs = np.nonzero((pixels == np.array(rgb)).all(axis=-1))
    assert xs.size, f"no pixel of colour {rgb} in {png.name}"
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


_MEASURE = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {sw: el.scrollWidth, cw: el.clientWidth, left: r.left, right: r.right,
            top: r.top, bottom: r.bottom, height: r.height}; };
  return {diagnosis: box(document.querySelector('.tg-diagnosis')),
          plain: box(document.querySelector('pre.report')),
          detail: box(document.getElementById('detail')),
          page: {sw: document.documentElement.scrollWidth, vw: window.innerWidth}};
}"""


@needs_browser
def test_page_wraps_the_diagnosis_and_numbers_steps_as_its_rows(tmp_path):
    """At 1024 and 1400 pixels wide: the diagnosis box and a plain text section wrap (nothing
    wider than its box, the page never scrolls sideways), measured in the DOM and on
    screenshots (the box's colour ends inside the window, and the box is taller where the
    window is narrower: its sentences wrapped); the step counter names the step the
    highlighted row shows, at every step."""
    from playwright.sync_api import sync_playwright

    report, t = _deep_sigmoid_report_and_trace()
    long_line = "a plain text section with one long line " * 12
    page_path = write_report(tmp_path / "health.html", trace=t, lang="en",
                             text={"Gradient health report": report, "Notes": long_line})
    html_text = page_path.read_text(encoding="utf-8")
    assert "vanishing gradients: the first layer&#x27;s gradient norm" in html_text
    n_steps = len(t.records())
    measured: dict[int, dict] = {}
    shots: dict[int, tuple[int, int, int, int]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM, timeout=60_000,
            args=["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"])
        try:
            for width in (1024, 1400):
                page = browser.new_page(viewport={"width": width, "height": 900})
                page.set_default_timeout(20_000)
                page.goto(page_path.as_uri())
                page.wait_for_selector(".tg-diagnosis")
                m = page.evaluate(_MEASURE)
                measured[width] = m
                for name in ("diagnosis", "plain", "detail"):
                    assert m[name]["sw"] <= m[name]["cw"], (width, name, m[name])
                    assert 0 <= m[name]["left"] and m[name]["right"] <= width, (width, name)
                assert m["page"]["sw"] <= m["page"]["vw"], (width, m["page"])
                # the screenshot: the diagnosis box's background, inside the window
                page.locator(".tg-diagnosis").scroll_into_view_if_needed()
                top = page.evaluate("document.querySelector('.tg-diagnosis')"
                                    ".getBoundingClientRect().top")
                png = tmp_path / f"page-{width}.png"
                page.screenshot(path=str(png))
                left, y0, right, y1 = _box_in_screenshot(png, (255, 247, 230))
                assert right < width and left > 0, (width, left, right)
                assert abs(y0 - top) <= 2
                shots[width] = (left, y0, right, y1)
                # the counter names the highlighted row's step, step after step
                for k in range(n_steps):
                    row = page.text_content("#steps tbody tr.current td")
                    assert page.text_content("#pos") == f"step {row} ({k + 1} of {n_steps})"
                    assert page.text_content("#detail").startswith(f"step {row}: ")
                    page.click("#next")
                page.close()
        finally:
            browser.close()
    # narrower window, more lines: the box grew in height, in the DOM and on the screenshot
    assert measured[1024]["diagnosis"]["height"] > measured[1400]["diagnosis"]["height"]
    assert shots[1024][3] - shots[1024][1] > shots[1400][3] - shots[1400][1]
    for width in (1024, 1400):
        assert abs((shots[width][3] - shots[width][1])
                   - measured[width]["diagnosis"]["height"]) <= 3


def test_rich_display_in_jupyter():
    """Trace, HealthReport and Monitor render as HTML in a notebook: IPython's display
    formatter (what Jupyter calls) gives text/html for each, with their content."""
    from IPython.core.formatters import DisplayFormatter

    formatter = DisplayFormatter()
    report, t = _deep_sigmoid_report_and_trace()
    data, _ = formatter.format(t)
    page = data["text/html"]
    assert page.startswith('<div class="tg-trace">')
    assert f"Backward trace: {len(t.steps)} steps in 1 pass(es)" in page
    assert "<td style=\"text-align:left;vertical-align:top;padding:1px 8px\">0</td>" in page
    assert "MseLossBackward0" in page or "MeanBackward0" in page
    assert "t.graph()" in page
    data, _ = formatter.format(report)
    page = data["text/html"]
    assert "Gradient health report" in page and '<div class="tg-diagnosis"' in page
    assert "vanishing gradients" in page and "0.weight" in page and "<table" in page
    assert data["text/plain"] == str(report)

    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sigmoid(), torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    monitor = show.Monitor(model, opt, lang="en")
    data, _ = formatter.format(monitor)
    assert "0 steps recorded (attached)" in data["text/html"]
    assert "no step yet" in data["text/html"]
    for _ in range(3):
        opt.zero_grad()
        model(torch.ones(2, 3)).sum().backward()
        opt.step()
    monitor.detach()
    data, _ = formatter.format(monitor)
    page = data["text/html"]
    assert data["text/plain"] == "<tapegrad.show.Monitor: 3 steps recorded, detached>"
    assert "Gradient health monitor: 3 steps recorded (detached)" in page
    assert "Gradient health report (step 3)" in page and '<div class="tg-diagnosis"' in page
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in page
    else:
        assert "<svg" in page and "<?xml" not in page
