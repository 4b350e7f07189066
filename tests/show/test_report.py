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
