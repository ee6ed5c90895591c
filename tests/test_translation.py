"""The Chinese edition (tools/book_i18n.py): its catalogs, its glossary, and the checks that keep it in step."""
import importlib.util
import re
import sys
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("book_i18n", REPO / "tools" / "book_i18n.py")
i18n = importlib.util.module_from_spec(spec)
sys.modules["book_i18n"] = i18n
spec.loader.exec_module(i18n)
spec = importlib.util.spec_from_file_location("nbdev_directives", REPO / "_ext" / "nbdev_directives.py")
ext = importlib.util.module_from_spec(spec)  # the book's Sphinx extension
spec.loader.exec_module(ext)

GLOSSARY = i18n.glossary()
CATALOGS = i18n.catalogs()


def _write(path: Path, messages: dict[str, str], fuzzy: set[str] = frozenset()) -> Path:
    catalog = Catalog(locale="zh_CN")
    for msgid, msgstr in messages.items():
        catalog.add(msgid, msgstr, flags=["fuzzy"] if msgid in fuzzy else [])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        write_po(f, catalog, width=-1)
    return path


def test_every_chapter_has_a_catalog_and_every_message_is_translated():
    chapters = {f"nbs/{p.stem}" for p in (REPO / "nbs").glob("*.ipynb")} | {"nbs/references"}
    assert chapters <= set(CATALOGS), sorted(chapters - set(CATALOGS))
    rows = i18n.stats()
    assert sum(r[1] for r in rows) >= 1900
    untranslated = [(chapter, n - done) for chapter, n, done, fuzzy, words in rows if done < n or fuzzy]
    assert not untranslated, untranslated


def test_every_translation_keeps_the_markup_and_follows_the_glossary():
    problems = []
    for chapter, path in CATALOGS.items():
        for m in i18n._read(path):
            if m.id and m.string:
                problems += [f"{chapter}: {p}: {m.id[:60]!r}" for p in i18n.markup_problems(m.id, m.string)
                             + i18n.glossary_problems(chapter, m.id, m.string, GLOSSARY)]
    assert not problems, "\n".join(problems[:20])


def test_the_glossary_catches_a_planted_wrong_term():
    msgid = "The decoder attends to the encoder output with *cross-attention*."
    good = "解码器通过*交叉注意力*关注编码器的输出。"
    assert i18n.glossary_problems("nbs/x", msgid, good, GLOSSARY) == []
    planted = good.replace("解码器", "译码器")  # a term that is not the glossary's
    assert i18n.glossary_problems("nbs/x", msgid, planted, GLOSSARY) == ["glossary: 'decoder' is '解码器'"]
    # code, math and link targets are not prose: `decoder` there needs no Chinese term
    assert i18n.glossary_problems("nbs/x", "Call `model.decoder` on $x$.", "对 $x$ 调用 `model.decoder`。", GLOSSARY) == []
    # an exception listed in the data file excuses exactly that message and term
    excused = {**GLOSSARY, "exceptions": [{"chapter": "nbs/x", "message": "The decoder attends", "term": "decoder"}]}
    assert i18n.glossary_problems("nbs/x", msgid, planted, excused) == []


def test_a_real_catalog_fails_the_glossary_when_a_term_is_planted_in_it():
    path = CATALOGS["nbs/01_attention"]
    hits = [m for m in i18n._read(path) if m.string and "注意力" in m.string and re.search(r"\battention\b", m.id)
            and not i18n._NOT_PROSE.sub("", m.id) == ""]
    assert hits
    m = hits[0]
    assert i18n.glossary_problems("nbs/01_attention", m.id, m.string, GLOSSARY) == []
    assert "glossary: 'attention' is '注意力'" in i18n.glossary_problems(
        "nbs/01_attention", m.id, m.string.replace("注意力", "关注机制"), GLOSSARY)


def test_markup_that_a_translation_drops_is_reported():
    msgid = "As {cite:p}`vaswani2017attention` write, $d_k = 64$ and `h = 8` ([chapter 03](03_multihead.ipynb))."
    ok = "正如 {cite:p}`vaswani2017attention` 所写，$d_k = 64$，`h = 8`（[第 03 章](03_multihead.ipynb)）。"
    assert i18n.markup_problems(msgid, ok) == []
    assert i18n.markup_problems(msgid, ok.replace("{cite:p}`vaswani2017attention` ", ""))[0].startswith("role differs")
    assert i18n.markup_problems(msgid, ok.replace("$d_k = 64$", "d_k = 64"))[0].startswith("math differs")
    assert i18n.markup_problems(msgid, ok.replace("03_multihead.ipynb", "04_positional.ipynb"))[0].startswith(
        "link target differs")


def test_check_names_the_chapter_and_the_message_of_every_problem(tmp_path, monkeypatch):
    pot, locales = tmp_path / "gettext", tmp_path / "locales"
    english = {"Attention weights sum to one.": "", "A new English sentence.": "", "A changed sentence.": ""}
    _write(pot / "nbs" / "01_attention.pot", english)
    _write(locales / "zh_CN" / "LC_MESSAGES" / "nbs" / "01_attention.po",
           {"Attention weights sum to one.": "注意力（attention）权重之和为一。", "A changed sentence.": "改过的句子。",
            "An old sentence.": "旧句子。"}, fuzzy={"A changed sentence."})
    monkeypatch.setattr(i18n, "LOCALES", locales)
    monkeypatch.setattr(i18n, "toc_captions", lambda: [])
    problems = i18n.check(root=pot)
    assert problems == [
        "nbs/01_attention: English message without its translation: 'A new English sentence.'",
        "nbs/01_attention: translation of a message the English text no longer has: 'An old sentence.'",
        "nbs/01_attention: fuzzy translation (the English changed): 'A changed sentence.'",
    ]


def test_every_part_caption_of_the_toc_is_translated():
    captions = i18n.captions("zh_CN")
    assert set(captions) == set(i18n.toc_captions()) and all(re.search(r"[\u4e00-\u9fff]", v) for v in captions.values())


def test_the_chinese_configuration_is_the_english_one_plus_the_language(tmp_path):
    import yaml
    en = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    zh = yaml.safe_load(i18n.write_config("zh_CN", tmp_path / "zh.yml").read_text(encoding="utf-8"))
    assert zh["sphinx"]["config"]["language"] == "zh_CN" and zh["execute"]["execute_notebooks"] == "off"
    assert zh["launch_buttons"] == en["launch_buttons"] and zh["parse"] == en["parse"]  # the rest: the same
    assert zh["sphinx"]["config"]["language_switch"] == {"en": "English", "zh_CN": "中文"}
    assert Path(zh["sphinx"]["local_extensions"]["nbdev_directives"]) == REPO / "_ext"


def test_the_chinese_readme_gives_the_same_two_commands():
    zh = (REPO / "README.zh-CN.md").read_text(encoding="utf-8")
    en = (REPO / "README.md").read_text(encoding="utf-8")
    for command in ("bash tools/book.sh", "bash tools/test.sh"):
        assert command in zh and command in en
    assert "[English](README.md)" in zh


@pytest.mark.parametrize("page,here,there,link", [
    ("nbs/01_attention", "en", "zh_CN", "../../zh_CN/nbs/01_attention.html"),
    ("nbs/01_attention", "zh_CN", "en", "../../en/nbs/01_attention.html"),
    ("genindex", "zh_CN", "en", "../en/genindex.html"),
])
def test_the_language_switch_leads_to_the_same_page(page, here, there, link):
    assert ext.language_link(page, here, there) == link


def test_part_captions_are_replaced_in_the_written_pages(tmp_path):
    "sphinx-external-toc adds the part captions after translation: the extension replaces them in the pages."
    from types import SimpleNamespace
    page = tmp_path / "nbs" / "01_attention.html"
    page.parent.mkdir()
    page.write_text('<p class="caption"><span class="caption-text">Appendices</span></p><p>Appendix</p>', encoding="utf-8")
    app = SimpleNamespace(config=SimpleNamespace(toc_captions=i18n.captions("zh_CN")), outdir=str(tmp_path),
                          builder=SimpleNamespace(format="html"))
    ext._translate_captions(app, None)
    assert page.read_text(encoding="utf-8") == '<p class="caption"><span class="caption-text">附录</span></p><p>Appendix</p>'


def test_every_chapter_gives_the_english_of_each_term_it_uses_once():
    problems = [f"{chapter}: {p}" for chapter, path in CATALOGS.items()
                for p in i18n.gloss_problems(chapter, [m for m in i18n._read(path) if m.id and m.string], GLOSSARY)]
    assert not problems, "\n".join(problems)
    # and the check notices a chapter where the English never appears
    messages = [m for m in i18n._read(CATALOGS["nbs/06c_copy_task"]) if m.id and m.string]
    for m in messages:
        m.string = m.string.replace("（greedy decoding）", "")
    assert "never given as 贪心解码（greedy decoding）" in " ".join(i18n.gloss_problems("nbs/06c_copy_task", messages, GLOSSARY))
