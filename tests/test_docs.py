"""The documentation site builds with ``mkdocs build --strict``: every page in the nav exists,
every link and API reference resolves, and every ``exec="on"`` code block of the guide (English
and Chinese) runs on this tree's tapegrad without an error.

The site is built once per language (mkdocs-static-i18n): English from docs/ at the root, Chinese
from docs/zh/ under zh/. One ``mkdocs build --strict`` builds both, and a warning in either
fails it. Both have the same pages: every English page has its Chinese page and the reverse,
each in its own language's chrome, with a switcher to the other."""

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NEEDED = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "markdown_exec",
          "mkdocs_static_i18n", "jieba")
DOCS = ROOT / "docs"
HAN = re.compile(r"[\u4e00-\u9fff]")
MISSING = [name for name in NEEDED if importlib.util.find_spec(name.split(".")[0]) is None
           or importlib.util.find_spec(name) is None]


@pytest.mark.skipif(bool(MISSING), reason=f"the docs extra is not installed (missing: "
                    f"{', '.join(MISSING)}); pip install -e '.[docs]'")
def test_site_builds_strict(tmp_path):
    env = dict(os.environ)
    # the code blocks import tapegrad: this tree's, not another installed copy
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    env["NO_MKDOCS_2_WARNING"] = "1"
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for page in ("index.html", "guide/backward/index.html", "zh/guide/backward/index.html",
                 "reference/internals/index.html", "design/index.html"):
        assert (site / page).is_file(), page
    # the guide's examples ran: their real output is on the page
    backward = (site / "guide/backward/index.html").read_text(encoding="utf-8")
    assert "b.grad: tensor(24.)" in backward
    assert "AccumulateGrad  receives tensor([21., 68.])" in backward
    zh = (site / "zh/guide/backward/index.html").read_text(encoding="utf-8")
    assert "b.grad: tensor(24.)" in zh and "AccumulateGrad  收到 tensor([21., 68.])" in zh
    # the compile page's claims held when it was built: replays equal eager bit for bit, and
    # the recompile log and the graph-break report are on the page
    compiled = (site / "guide/compile/index.html").read_text(encoding="utf-8")
    assert compiled.count("weights identical: True") == 5  # all five steps
    assert "recompiling" in compiled and "Tensor.item() reads a value into Python" in compiled
    zh_compiled = (site / "zh/guide/compile/index.html").read_text(encoding="utf-8")
    assert zh_compiled.count("权重逐位相同: True") == 5
    _check_languages(site)


def _pages(folder, skip=None):
    """The markdown pages under ``folder``, as paths relative to it (``skip``: a subfolder left
    out)."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*.md")
            if skip is None or skip not in p.parents}


def _built(page):
    """Where ``mkdocs build`` writes a page (directory URLs): guide/backward.md ->
    guide/backward/index.html."""
    stem = page[:-len(".md")]
    return "index.html" if stem == "index" else (
        f"{stem[:-len('index')]}index.html" if stem.endswith("/index") else f"{stem}/index.html")


def _check_languages(site):
    # the same pages in both languages, in the sources ...
    english, chinese = _pages(DOCS, skip=DOCS / "zh"), _pages(DOCS / "zh")
    assert english - chinese == set(), (
        f"English pages with no Chinese page in docs/zh/: {sorted(english - chinese)}")
    assert chinese - english == set(), (
        f"Chinese pages with no English page in docs/: {sorted(chinese - english)}")
    # ... and in the built site: each language's build has exactly these pages
    built_en = {p.relative_to(site).as_posix() for p in site.rglob("index.html")
                if not p.relative_to(site).as_posix().startswith("zh/")}
    built_zh = {p.relative_to(site / "zh").as_posix() for p in (site / "zh").rglob("index.html")}
    expected = {_built(page) for page in english}
    assert built_en == expected, (sorted(built_en ^ expected))
    assert built_zh == expected, (sorted(built_zh ^ expected))
    for page in sorted(expected):
        en = (site / page).read_text(encoding="utf-8")
        zh = (site / "zh" / page).read_text(encoding="utf-8")
        # each in its language's chrome: Material's own words, the translated nav titles
        assert '<html lang="en"' in en and '<html lang="zh"' in zh, page
        assert "Table of contents" in en and "API reference" in en, page
        assert "Table of contents" not in zh and "目录" in zh, page
        assert "指南" in zh and "API 参考" in zh, page
        assert not re.search(r">\s*(Guide|API reference)\s*<", zh), page
        # the Chinese page is docs/zh/'s, not the English one standing in for it
        article = zh.split("<article", 1)[1].split("</article>", 1)[0]
        assert HAN.search(re.sub(r"<[^>]+>", "", article)), f"zh/{page} has no Chinese text"
        # a switcher on each page leads to the same page in the other language (from the home
        # pages, the plugin links the languages' roots: /zh/ and /)
        url = page[:-len("index.html")]
        depth = url.count("/")
        to_zh, to_en = ((f"{'../' * depth}zh/{url}", f"{'../' * (depth + 1)}{url}") if url
                        else ("/zh/", "/"))
        assert f'href="{to_zh}" hreflang="zh"' in en, page
        assert f'href="{to_en}" hreflang="en"' in zh, page
    # search: Chinese text is split into words (jieba; Material's separator splits on U+200B)
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert "\\u200b" in index["config"]["separator"]
    zh_text = " ".join(d["title"] + d["text"] for d in index["docs"]
                       if d["location"].startswith("zh/"))
    assert "\u200b梯度\u200b" in zh_text
