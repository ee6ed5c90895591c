"""The Chinese edition shows no English interface: tools/check_site.py's check (english_interface, UI_TEXT_JS) and
what puts the translations in (locales/zh_CN/interface.yml, _ext/nbdev_directives.py)."""
import gettext
import importlib.util
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


site = _load("check_site", REPO / "tools" / "check_site.py")
ext = _load("nbdev_directives", REPO / "_ext" / "nbdev_directives.py")
INTERFACE = yaml.safe_load((REPO / "locales" / "zh_CN" / "interface.yml").read_text(encoding="utf-8"))

# A page's interface, in English and in Chinese: a fold button, a tooltip, a search box, the label CSS draws on an
# exported cell, the footer; code, outputs, math and the switch's "English" (lang="en") are not interface.
SNIPPET = """<!DOCTYPE html><html lang="%(lang)s"><head><style>
div.tag_exported::before { content: "%(label)s"; }
button.copy::after { content: attr(data-tooltip); }
</style></head><body>
<p class="language-switch"><a href="#" hreflang="en" lang="en">English</a></p>
<input class="form-control" placeholder="%(search)s" aria-label="%(search)s">
<button class="sidebar-toggle" title="%(toggle)s"></button>
<details><summary aria-label="%(fold_label)s"><p class="collapsed">%(fold)s</p></summary></details>
<div class="cell tag_exported"><pre>next = Search(Contents)  # Copy</pre></div>
<div class="cell_output"><pre>Show code cell source</pre></div>
<button class="copy" data-tooltip="%(copy)s"></button>
<p>注意力（attention）的下一步（next step）</p>
<p class="copyright">%(copyright)s</p>
</body></html>"""
ENGLISH = dict(lang="zh-CN", label="exported to annotated_transformer", search="Search this book...",
               toggle="Toggle primary sidebar", fold_label="Toggle hidden content", fold="Show code cell source",
               copy="Copy", copyright="© Copyright 2026.")
CHINESE = dict(lang="zh-CN", label="导出到 annotated_transformer", search="在本书中搜索……",
               toggle="显示或隐藏左侧栏", fold_label="展开或收起隐藏的内容", fold="显示代码", copy="复制",
               copyright="© 2026 版权所有。")


def test_a_known_interface_string_is_found_whole_or_as_a_phrase():
    found = [["input.form-control", "Search this book..."], ["p.copyright", "© Copyright 2026."],
             ["::before of div.cell", "exported to annotated_transformer"], ["a", "next"],
             ["p", "注意力（attention）的下一步（next step）"], ["p", "Contents of the box"], ["p", "显示代码"]]
    assert site.english_interface(found) == [
        "'Search this book...' (input.form-control)", "'© Copyright 2026.' (p.copyright)",
        "'exported to annotated_transformer' (::before of div.cell)", "'next' (a)"]
    # a word counts only as a whole text: in a sentence it is prose (a gloss), not a button
    assert site.english_interface([["p", "the next token"]]) == []


def test_every_translated_interface_string_is_one_the_check_knows_and_its_translation_passes():
    for english, chinese in INTERFACE.items():
        shown = english.replace("%(copyright)s", "2026")
        assert site.english_interface([["x", shown]]), f"check_site.ENGLISH_UI does not know {english!r}"
        assert not site.english_interface([["x", chinese.replace("%(copyright)s", "2026")]]), chinese


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="no Chromium on this machine")
def test_the_check_reads_texts_attributes_and_css_content_in_a_browser():
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=site.CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_content(SNIPPET % ENGLISH)
        problems = site.english_interface(page.evaluate(site.UI_TEXT_JS))
        page.set_content(SNIPPET % CHINESE)
        passed = site.check_interface(page)
        browser.close()
    assert problems == [
        "'Search this book...' (aria-label of input.form-control)",
        "'Search this book...' (placeholder of input.form-control)",
        "'Toggle primary sidebar' (title of button.sidebar-toggle)",
        "'Toggle hidden content' (aria-label of summary)",
        "'Show code cell source' (p.collapsed)",
        "'exported to annotated_transformer' (::before of div.cell)",
        "'Copy' (data-tooltip of button.copy)",
        "'Copy' (::after of button.copy)",
        "'© Copyright 2026.' (p.copyright)",
    ]
    assert passed is None


def test_labels_and_tooltips_that_templates_write_in_english_are_translated():
    page = ('<nav class="bd-links" aria-label="Main"><button title="Toggle primary sidebar" data-bs-title="Main">'
            '<img alt="Binder logo"></button><span class="pre">title="Main"</span><p>Main</p>')
    assert ext.translate_attributes(page, INTERFACE) == (
        '<nav class="bd-links" aria-label="全书导航"><button title="显示或隐藏左侧栏" data-bs-title="全书导航">'
        '<img alt="Binder 标志"></button><span class="pre">title="Main"</span><p>Main</p>')


def test_the_catalogs_of_the_theme_give_the_interface_strings_first(monkeypatch):
    from sphinx import locale
    theme = gettext.GNUTranslations()
    theme._catalog = {"Print to PDF": "列印成 PDF", "Fullscreen mode": "全屏模式"}
    theme._fallback = None
    missing = gettext.NullTranslations()
    monkeypatch.setattr(locale, "translators", {("general", "booktheme"): theme, ("general", "other"): missing})
    ext._translate_interface(SimpleNamespace(config=SimpleNamespace(interface_strings=INTERFACE)))
    assert locale.translators[("general", "booktheme")] is theme  # changed in place: templates hold the object
    assert theme.gettext("Print to PDF") == "打印为 PDF" and theme.gettext("Fullscreen mode") == "全屏模式"
    other = locale.translators[("general", "other")]
    assert other.gettext("Color mode") == "配色" and other.gettext("Anything else") == "Anything else"


def test_myst_nbs_fold_buttons_are_translated():
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document
    settings = get_default_settings(Parser)
    settings.env = SimpleNamespace(app=SimpleNamespace(config=SimpleNamespace(interface_strings=INTERFACE)))
    document = new_document("page", settings)
    fold = nodes.container(prompt_show="Show code cell source", prompt_hide="Hide code cell source")
    output = nodes.container(prompt_show="Show code cell output", prompt_hide="Hide code cell output")
    document += [fold, output]
    ext._TranslateFolds(document).run()
    assert (fold["prompt_show"], fold["prompt_hide"]) == ("显示代码", "隐藏代码")
    assert (output["prompt_show"], output["prompt_hide"]) == ("显示输出", "隐藏输出")


def test_only_the_chinese_configuration_carries_the_interface(tmp_path):
    i18n = _load("book_i18n", REPO / "tools" / "book_i18n.py")
    zh = yaml.safe_load(i18n.write_config("zh_CN", tmp_path / "zh.yml").read_text(encoding="utf-8"))
    assert zh["sphinx"]["config"]["interface_strings"] == INTERFACE
    en = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    assert "interface_strings" not in en["sphinx"]["config"]
    assert not site.english_interface([["p.author", f"作者： {zh['author']}"]])
    assert site.english_interface([["p.author", f"作者： {en['author']}"]])
