"""The Chinese edition (tools/book_i18n.py): its catalogs, its glossary, and the checks that keep it in step."""
import copy
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
                             + i18n.glossary_problems(chapter, m.id, m.string, GLOSSARY)
                             + i18n.style_problems(m.id, m.string, GLOSSARY)]
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
    path = CATALOGS["nbs/02_attention"]
    hits = [m for m in i18n._read(path) if m.string and "注意力" in m.string and re.search(r"\battention\b", m.id)
            and not i18n._NOT_PROSE.sub("", m.id) == ""]
    assert hits
    m = hits[0]
    assert i18n.glossary_problems("nbs/02_attention", m.id, m.string, GLOSSARY) == []
    assert "glossary: 'attention' is '注意力'" in i18n.glossary_problems(
        "nbs/02_attention", m.id, m.string.replace("注意力", "关注机制"), GLOSSARY)


def test_markup_that_a_translation_drops_is_reported():
    msgid = "As {cite:p}`vaswani2017attention` write, $d_k = 64$ and `h = 8` ([chapter 04](04_multihead.ipynb))."
    ok = "正如 {cite:p}`vaswani2017attention` 所写，$d_k = 64$，`h = 8`（[第 03 章](04_multihead.ipynb)）。"
    assert i18n.markup_problems(msgid, ok) == []
    assert i18n.markup_problems(msgid, ok.replace("{cite:p}`vaswani2017attention` ", ""))[0].startswith("role differs")
    assert i18n.markup_problems(msgid, ok.replace("$d_k = 64$", "d_k = 64"))[0].startswith("math differs")
    assert i18n.markup_problems(msgid, ok.replace("04_multihead.ipynb", "05_positional.ipynb"))[0].startswith(
        "link target differs")
    # bold that CommonMark leaves as literal asterisks: the closing run follows punctuation and precedes a letter
    en = "the box labelled **Mask (opt.)** in Figure 2"
    [problem] = i18n.markup_problems(en, "图 2 中标为**掩码（可选）**的方框")
    assert problem.startswith("emphasis that does not render (put a space outside it") and "**掩码" in problem
    assert i18n.markup_problems(en, "图 2 中标为 **掩码（可选）** 的方框") == []
    assert i18n.markup_problems(en, "图 2 中标为**掩码**的方框") == []


def test_check_names_the_chapter_and_the_message_of_every_problem(tmp_path, monkeypatch):
    pot, locales = tmp_path / "gettext", tmp_path / "locales"
    english = {"Attention weights sum to one.": "", "A new English sentence.": "", "A changed sentence.": ""}
    _write(pot / "nbs" / "02_attention.pot", english)
    _write(locales / "zh_CN" / "LC_MESSAGES" / "nbs" / "02_attention.po",
           {"Attention weights sum to one.": "注意力权重（attention weights）之和为一。", "A changed sentence.": "改过的句子。",
            "An old sentence.": "旧句子。"}, fuzzy={"A changed sentence."})
    monkeypatch.setattr(i18n, "LOCALES", locales)
    monkeypatch.setattr(i18n, "toc_captions", lambda: [])
    problems = i18n.check(root=pot)
    assert problems == [
        "nbs/02_attention: English message without its translation: 'A new English sentence.'",
        "nbs/02_attention: translation of a message the English text no longer has: 'An old sentence.'",
        "nbs/02_attention: fuzzy translation (the English changed): 'A changed sentence.'",
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
    ("nbs/02_attention", "en", "zh_CN", "../../zh_CN/nbs/02_attention.html"),
    ("nbs/02_attention", "zh_CN", "en", "../../en/nbs/02_attention.html"),
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


def _messages(**chapters) -> dict[str, list]:
    "{chapter: [Message]} from {chapter: {English: Chinese}} (a chapter's / written as __)."
    from babel.messages.catalog import Message
    return {name.replace("__", "/"): [Message(en, zh) for en, zh in msgs.items()] for name, msgs in chapters.items()}


def test_the_real_glosses_follow_the_rule():
    chapters = {chapter: [m for m in i18n._read(path) if m.id and m.string] for chapter, path in CATALOGS.items()}
    problems = i18n.gloss_problems(chapters, GLOSSARY)
    assert not problems, "\n".join(problems)
    # and the check notices a chapter where the English never appears
    chapters["nbs/11_decoding"] = [copy.copy(m) for m in chapters["nbs/11_decoding"]]
    for m in chapters["nbs/11_decoding"]:
        m.string = m.string.replace("（greedy decoding）", "")
    assert "nbs/11_decoding: glossary: 'greedy decoding' is used but never given as 贪心解码（greedy decoding）" in \
        " ".join(i18n.gloss_problems(chapters, GLOSSARY))


def test_an_everyday_term_is_glossed_once_in_the_book():
    assert {t["en"] for t in GLOSSARY["terms"] if t.get("gloss") == "book"} >= {"batch", "seed", "gradient",
                                                                               "checkpoint", "token"}
    order = ["nbs/a", "nbs/b"]
    en = "Each batch holds sentences of similar length."
    first, later = "每个批量（batch）包含长度相近的句子。", "每个批量包含长度相近的句子。"
    assert i18n.gloss_problems(_messages(nbs__a={en: first}, nbs__b={en: later}), GLOSSARY, order, {}) == []
    glossed_again = i18n.gloss_problems(_messages(nbs__a={en: first}, nbs__b={en: first}), GLOSSARY, order, {})
    assert glossed_again == ["nbs/b: glossary: 'batch' is glossed once in the book (in nbs/a), not again here: "
                             "'批量（batch）': 'Each batch holds sentences of similar length.'"]
    never = i18n.gloss_problems(_messages(nbs__a={en: later}, nbs__b={en: later}), GLOSSARY, order, {})
    assert never == ["nbs/a: glossary: 'batch' is first used in the book here but never given as 批量（batch）"]
    # an article inside the parenthesis hides no second gloss
    en = "We compare with the Harvard notebook."
    first, again = "我们与哈佛笔记本（the Harvard notebook）比较。", "我们与哈佛笔记本（the Harvard notebook）比较。"
    assert "nbs/b: glossary: 'the Harvard notebook' is glossed once in the book (in nbs/a), not again here" in " ".join(
        i18n.gloss_problems(_messages(nbs__a={en: first}, nbs__b={en: again}), GLOSSARY, order, {}))
    # a technical term is still glossed in every chapter that uses it
    en = "The decoder reads the encoder's output."
    zh = "解码器（decoder）读取编码器（encoder）的输出。"
    assert i18n.gloss_problems(_messages(nbs__a={en: zh}, nbs__b={en: zh}), GLOSSARY, order, {}) == []
    assert "nbs/b: glossary: 'decoder' is used but never given" in " ".join(i18n.gloss_problems(
        _messages(nbs__a={en: zh}, nbs__b={en: zh.replace("（decoder）", "")}), GLOSSARY, order, {}))


def test_no_gloss_in_a_heading_and_none_that_splits_a_compound():
    heading, body = "The decoder", "The decoder reads the encoder's output."
    ok = {heading: "解码器", body: "解码器（decoder）读取编码器（encoder）的输出。"}
    titles = {"nbs/a": [heading]}
    assert i18n.gloss_problems(_messages(nbs__a=ok), GLOSSARY, ["nbs/a"], titles) == []
    in_heading = i18n.gloss_problems(_messages(nbs__a={**ok, heading: "解码器（decoder）"}), GLOSSARY, ["nbs/a"], titles)
    assert in_heading == ["nbs/a: glossary: no gloss in a heading or subtitle ('decoder'): 'The decoder'"]
    # the gloss follows the whole compound
    en = "Training is gradient descent on the loss."
    split = i18n.gloss_problems(_messages(nbs__a={en: "训练就是在损失上做梯度（gradient）下降。"}), GLOSSARY, ["nbs/a"], {})
    assert split == ["nbs/a: glossary: a gloss splits a compound (梯度（gradient）下…): gloss the whole of it: "
                     "'Training is gradient descent on the loss.'"]
    whole = i18n.gloss_problems(_messages(nbs__a={en: "训练就是在损失上做梯度下降（gradient descent）。"}), GLOSSARY,
                                ["nbs/a"], {})
    assert whole == []
    # a gloss before a particle, or a word that makes no compound with the term, splits nothing
    en = "The gradient of the loss is zero."
    assert i18n.gloss_problems(_messages(nbs__a={en: "损失的梯度（gradient）为零。"}), GLOSSARY, ["nbs/a"], {}) == []


def test_the_page_titles_are_read_from_the_notebook():
    titles = i18n.page_titles("nbs/07_model")
    assert titles[0] == "The full model" and titles[1].startswith("Paper: §3 (model architecture)")
    assert "Exercises" in titles and i18n.page_titles("nbs/no_such_page") == []
    assert i18n.reading_order()[:3] == ["nbs/00_introduction", "nbs/01_one_page", "nbs/02_attention"]


def test_the_house_style():
    def style(zh, en="An English message with words."):
        return i18n.style_problems(en, zh, GLOSSARY)
    assert style("**预期结果：** 权重之和为 1，约 65% 的行是这样。") == []
    assert style("**预期结果**：权重之和为 1。") == ["bold label: the colon goes inside the bold, then a space: **预期结果：** "]
    assert style("**预期结果：**权重之和为 1。") == ["bold label: a space after **预期结果：**"]
    assert style("约 65 % 的行。") == ["percent: 65%, no space and no full-width ％"]
    assert style("约 65％ 的行。") == ["percent: 65%, no space and no full-width ％"]
    assert style("代码 `f\"{x:.0f} %\"` 照原样。") == []  # code is shared with the English edition
    assert style("批量（大小为 1,000 个词元（token））。") == ["nested parentheses: （…（…）…） (gloss elsewhere, or reword)"]
    assert style("批量（大小为 1,000 个词元（token））。", "A batch (of (nested) tokens).") == []  # as nested as the English
    assert style("见 `f(g(x))`（第 04 章）。") == []  # parentheses in code do not count


def test_a_displayed_formula_keeps_its_math_and_translates_its_words():
    en = r"q \cdot k = \sum_{i=1}^{d_k} q_i k_i \quad\text{has mean } 0 \text{ and variance } d_k ."
    zh = r"q \cdot k = \sum_{i=1}^{d_k} q_i k_i \quad\text{均值为 } 0 \text{，方差为 } d_k ."
    assert i18n.style_problems(en, zh, GLOSSARY) == []
    assert i18n.style_problems(en, en, GLOSSARY) == ["formula: English words in \\text{} ('has mean and variance'): "
                                                     "translate them"]
    assert i18n.style_problems(en, zh.replace("d_k .", "d_v ."), GLOSSARY) == [
        "formula: only the words in \\text{} may change, the math stays the English one"]
    # sub- and superscript labels, acronyms and the names of formula_keep stay
    label = r"d_{\text{model}} \cdot \text{BLEU} + \text{FLOPs} + \sum_{m=1}^{\text{accum}} \text{rank } r"
    assert i18n.style_problems(label, label, GLOSSARY) == []
    assert i18n.formula_words(label) == ["BLEU", "FLOPs", "rank "]


def test_a_link_to_a_chapter_gives_its_chinese_title():
    titles = {"nbs/22_translate": ["Translating for real"], "nbs/11_decoding": ["Decoding"]}
    messages = {"nbs/22_translate": {"Translating for real": "真正动手翻译"},
                "nbs/11_decoding": {"Next, [Translating for real](22_translate.ipynb) decodes.":
                                    "接下来，[实战翻译](22_translate.ipynb)进行解码。"}}
    assert i18n.title_problems(messages, titles) == [
        "nbs/11_decoding: title: a link to nbs/22_translate gives its title '真正动手翻译', not ['实战翻译']: "
        "'Next, [Translating for real](22_translate.ipynb) decodes.'"]
    messages["nbs/11_decoding"] = {k: v.replace("实战翻译", "真正动手翻译") for k, v in messages["nbs/11_decoding"].items()}
    assert i18n.title_problems(messages, titles) == []


def test_a_message_shared_by_chapters_has_one_translation():
    en = "Each exercise changes one thing and measures the effect."
    messages = {"nbs/07_model": {en: "每个练习只改动一处，并测量其效果。"},
                "nbs/08_batches": {en: "每个练习只改变一件事，并测量其效果。"}}
    assert i18n.consistency_problems(messages) == [
        "nbs/08_batches: translated otherwise than in nbs/07_model ('每个练习只改动一处，并测量其效果。'): "
        "'Each exercise changes one thing and measures the effect.'"]
    messages["nbs/08_batches"][en] = messages["nbs/07_model"][en]
    assert i18n.consistency_problems(messages) == []


def test_the_real_catalogs_cite_titles_and_shared_messages_alike():
    messages = {chapter: {m.id: m.string for m in i18n._read(path) if m.id and m.string}
                for chapter, path in CATALOGS.items()}
    titles = {chapter: i18n.page_titles(chapter) for chapter in CATALOGS}
    problems = i18n.title_problems(messages, titles) + i18n.consistency_problems(messages)
    assert not problems, "\n".join(problems)


def test_the_new_terms_are_one_vocabulary():
    terms = {t["en"]: t for t in GLOSSARY["terms"]}
    assert terms["the Harvard notebook"]["zh"] == "哈佛笔记本" and terms["post-norm"]["zh"] == "后置归一化"
    assert terms["pre-norm"]["zh"] == "前置归一化"
    title = i18n._read(CATALOGS["nbs/22_translate"])["Translating for real"].string
    assert terms["Translating for real"]["zh"] == title
    msgid = "The Harvard notebook is pre-norm."
    assert i18n.glossary_problems("nbs/x", msgid, "Harvard 的 notebook 是前归一化的。", GLOSSARY) == [
        "glossary: 'pre-norm' is '前置归一化'", "glossary: 'the Harvard notebook' is '哈佛笔记本'",
        "glossary: 'Harvard' is '哈佛'"]
    assert i18n.glossary_problems("nbs/x", msgid, "哈佛笔记本是前置归一化的。", GLOSSARY) == []
    # "recipe" is the training recipe; the textbook's recipe for a masked softmax is another word (做法)
    assert i18n.glossary_problems("nbs/x", "The textbook recipe gives NaN.", "教科书的做法给出 NaN。", GLOSSARY) == []


def test_the_terms_that_drifted_have_one_rendering():
    "issue 63: stack, heat map, KV cache, nat, piece, live hypothesis, greedy decoding, the short path, (build)."
    def problems(en, zh):
        return i18n.glossary_problems("nbs/x", en, zh, GLOSSARY)
    # one paper quote in three forms: only 堆叠 passes
    en = 'Positional encodings are added "at the bottoms of the encoder and decoder stacks".'
    ok = "位置编码（positional encoding）加在“编码器和解码器堆叠的底部”。"
    assert problems(en, ok) == []
    assert problems(en, ok.replace("堆叠", "栈")) == ["glossary: 'stack' is '堆叠'", "glossary: 'stack' is '堆叠', not also '栈'"]
    assert problems(en, ok.replace("堆叠", "堆栈")) == ["glossary: 'stack' is '堆叠'",
                                                       "glossary: 'stack' is '堆叠', not also '堆栈'"]
    # a competing rendering beside the glossary's, in one message
    assert problems("Two stacks, each a stack of layers.", "两个堆叠，每个都是一个层栈。") == [
        "glossary: 'stack' is '堆叠', not also '栈'"]
    assert problems("The heat maps of chapter 22.", "第 22 章的热力图与热图。") == [
        "glossary: 'heat map' is '热力图', not also '热图'"]
    assert problems("The KV cache saves work.", "键值缓存省下工作。") == [
        "glossary: 'key/value cache' is '键/值缓存'", "glossary: 'key/value cache' is '键/值缓存', not also '键值缓存'"]
    assert problems("The loss falls below 3 nats.", "损失降到 3 nats 以下。")[-1] == "glossary: 'nat' is '奈特', not also 'nats'"
    assert problems("Exercise 01.1 (build): the parameters by formula",
                    "练习 01.1（构建）：用公式算出参数")[-1] == "glossary: '(build)' is '（动手实现）', not also '（构建）'"
    assert problems("Each row is a translation piece.", "每一行是译文的一个词片。")[-1] == \
        "glossary: 'piece' is '片段', not also '词片'"
    assert problems("Every piece of this book is tested.", "本书的每个部分都经过测试。") == []  # not a subword piece
    assert problems("Each live hypothesis grows.", "每个存活的假设都会增长。")[-1] == \
        "glossary: 'live hypothesis' is '活跃假设', not also '存活'"
    assert problems("Decode with greedy or beam search.", "用贪心搜索或束搜索解码。")[-1] == \
        "glossary: 'greedy decoding' is '贪心解码', not also '贪心搜索'"
    assert problems("The short path is part 1.", "快速路径是第一部分。")[-1] == \
        "glossary: 'the short path' is '捷径', not also '快速路径'"


def test_figure_labels_and_the_chinese_readme_use_the_glossary():
    labels = {"mean entropy (nats)": "平均熵（nats）", "KV cache: every step": "KV 缓存：每一步",
              "layer $l$ (12-layer stack)": "第 $l$ 层（12 层的堆叠）", "d_model={}": "d_model={}"}
    assert i18n.figure_problems(labels, GLOSSARY) == [
        "figures.yml: glossary: 'nat' is '奈特': 'mean entropy (nats)': '平均熵（nats）'",
        "figures.yml: glossary: 'nat' is '奈特', not 'nats': 'mean entropy (nats)': '平均熵（nats）'",
        "figures.yml: glossary: 'key/value cache' is '键/值缓存': 'KV cache: every step': 'KV 缓存：每一步'",
        "figures.yml: glossary: 'key/value cache' is '键/值缓存', not 'KV 缓存': 'KV cache: every step': 'KV 缓存：每一步'"]
    import yaml
    assert i18n.figure_problems(yaml.safe_load(i18n.FIGURES.read_text(encoding="utf-8")), GLOSSARY) == []
    assert i18n.readme_problems("| 11 | [解码：贪心解码、束搜索与键值缓存](nbs/11_decoding.ipynb) |", GLOSSARY) == [
        "README.zh-CN.md: glossary: 'key/value cache' is '键/值缓存', not '键值缓存'"]
    assert i18n.readme_problems(i18n.README_ZH.read_text(encoding="utf-8"), GLOSSARY) == []


def test_a_box_of_a_figure_is_named_as_the_figure_draws_it():
    import yaml
    labels = yaml.safe_load(i18n.FIGURES.read_text(encoding="utf-8"))
    en = "This chapter is about the optional **Mask** box of Figure 2 (left)."
    assert i18n.box_problems(en, "本章讲的是图 2（左）中可选的 **Mask** 方框。", labels) == [
        "figure: the box **Mask** is named as the figure draws it, 掩码（可选）"]
    assert i18n.box_problems(en, "本章讲的是图 2（左）中标为**掩码（可选）**的方框（英文 Mask）。", labels) == []
    en = "The two other boxes: **Add & Norm** and **Feed Forward**."
    assert i18n.box_problems(en, "另外两个方框：**Add & Norm** 和 **Feed Forward**。", labels) == [
        "figure: the box **Feed Forward** is named as the figure draws it, 前馈网络"]  # Add & Norm is drawn as it is
    # and the labels themselves: "masked (False)" reads as the prose does
    assert labels["masked (False)"].startswith("被掩码遮住")


def test_a_term_is_glossed_once_in_a_chapter():
    en1, en2 = "The decoder reads the encoder's output.", "Teacher forcing feeds the decoder the target."
    once = {en1: "解码器（decoder）读取编码器（encoder）的输出。", en2: "强制教学（teacher forcing）把目标句喂给解码器。"}
    assert i18n.gloss_problems(_messages(nbs__a=once), GLOSSARY, ["nbs/a"], {}) == []
    twice = {**once, en2: "强制教学（teacher forcing）把目标句喂给解码器（decoder）。"}
    assert i18n.gloss_problems(_messages(nbs__a=twice), GLOSSARY, ["nbs/a"], {}) == [
        "nbs/a: glossary: 'decoder' is glossed once in a chapter, not again: '解码器（decoder）': "
        "'Teacher forcing feeds the decoder the target.'"]


def test_emphasis_does_not_hide_a_split_compound():
    en = "Each layer ends with a position-wise *feed-forward* network and grouped-query attention."
    def split(zh):
        return i18n.gloss_problems(_messages(nbs__a={en: zh}), GLOSSARY, ["nbs/a"], {})
    assert "a gloss splits a compound (前馈*（feed-forward）网…)" in " ".join(
        split("每层以一个逐位置的*前馈*（feed-forward）网络和分组查询注意力（grouped-query attention）结尾。"))
    assert "a gloss splits a compound (查询（query）注…)" in " ".join(
        split("每层以一个逐位置的*前馈网络*（feed-forward network）和分组查询（query）注意力结尾。"))
    assert not [p for p in split("每层以一个逐位置的*前馈网络*（feed-forward network）和分组查询注意力（grouped-query "
                                 "attention）结尾。") if "splits" in p]


def test_a_quoted_heading_reads_as_the_heading_is_translated():
    titles = {"nbs/27_heads": ["Why several heads", "Different heads can look at different positions"]}
    en = 'The toy of "Different heads can look at different positions" shows a two-head layer.'
    messages = {"nbs/27_heads": {"Different heads can look at different positions": "不同的头可以关注不同的位置",
                                 en: "“不同的头可以看向不同的位置”一节中的小例子展示了一个双头层。"}}
    assert i18n.heading_problems(messages, titles) == [
        "nbs/27_heads: heading: a quoted heading reads as it is translated, “不同的头可以关注不同的位置”: "
        "'The toy of \"Different heads can look at different positions\" shows a two-head layer.'"]
    messages["nbs/27_heads"][en] = "“不同的头可以关注不同的位置”一节中的小例子展示了一个双头层。"
    assert i18n.heading_problems(messages, titles) == []
    real = {chapter: {m.id: m.string for m in i18n._read(path) if m.id and m.string} for chapter, path in CATALOGS.items()}
    assert i18n.heading_problems(real, {chapter: i18n.page_titles(chapter) for chapter in CATALOGS}) == []


def test_the_contents_of_chapter_00_name_the_chapters_as_the_chinese_readme():
    en = "| 11 | [Decoding: greedy, beam search, KV cache](nbs/11_decoding.ipynb) | §6.1 | — |\n"
    zh = "| 11 | [解码：贪心解码、束搜索与键/值缓存](nbs/11_decoding.ipynb) | §6.1 | — |\n"
    msgid = "[Decoding: greedy, beam search, KV cache](11_decoding.ipynb)"
    old = {msgid: "[解码：贪心、束搜索（beam search）与 KV 缓存](11_decoding.ipynb)"}
    assert i18n.contents_problems(old, en, zh) == [
        "nbs/00_introduction: contents: nbs/11_decoding is named as in README.zh-CN.md, '解码：贪心解码、束搜索与键/值缓存': "
        "'[解码：贪心、束搜索（beam search）与 KV 缓存](11_decoding.ipynb)'"]
    assert i18n.contents_problems({msgid: "[解码：贪心解码、束搜索与键/值缓存](11_decoding.ipynb)"}, en, zh) == []
    intro = {m.id: m.string for m in i18n._read(CATALOGS["nbs/00_introduction"]) if m.id}
    assert i18n.contents_problems(intro, (REPO / "README.md").read_text(encoding="utf-8"),
                                  (REPO / "README.zh-CN.md").read_text(encoding="utf-8")) == []
    # no gloss in a link to a page: a contents line is the page's name
    link = "[Batches: special tokens, teacher forcing, a token budget](08_batches.ipynb)"
    assert "nbs/a: glossary: no gloss in the text of a link to a page ('[批量（batch）：特殊词元与词元预算]'): " \
        "'[Batches: special tokens, teacher forcing, a token budget](08_batches.ipynb)'" in i18n.gloss_problems(
            _messages(nbs__a={link: "[批量（batch）：特殊词元与词元预算](08_batches.ipynb)"}), GLOSSARY, ["nbs/a"], {})


def test_a_bold_label_keeps_its_full_stop_inside():
    def style(zh):
        return i18n.style_problems("An English message with words.", zh, GLOSSARY)
    assert style("**它不是 WMT。** WMT 2014 是新闻文本。") == []
    assert style("**它不是 WMT**。WMT 2014 是新闻文本。") == ["bold label: the full stop goes inside the bold: **它不是 WMT。**"]
    assert style("**它不是 WMT。**WMT 2014 是新闻文本。") == ["bold label: a space after **它不是 WMT。**"]
    assert style("两者都与论文**相悖**。下一段。") == []  # a bold word inside a sentence is no label


def test_gloss_density_is_limited_from_a_part_on():
    en = "The decoder reads the encoder's output."
    dense = _messages(nbs__b={en: "解码器（decoder）读取编码器（encoder）的输出。", "Plain words here.": "平常的话。"})
    limit = {**GLOSSARY, "gloss_density": {"from_part": 2, "per_100": 10}}
    assert i18n.density_problems(dense, limit, {"nbs/b": 2}) == [
        "nbs/b: glossary: 2 glosses in 2 messages, more than 10 per 100 from part 2 on"]
    assert i18n.density_problems(dense, limit, {"nbs/b": 1}) == []  # part 1 glosses every term
    assert i18n.glosses("注意力（attention）与键/值缓存（key/value cache，第 21 章）", GLOSSARY) == [
        "attention", "key/value cache，第 21 章"]
    # a link's text (an issue's title) is no gloss
    assert i18n.glosses("（[harvardnlp/annotated-transformer: \"Masking bug?\"](https://github.com/x/y/issues/1)）",
                        GLOSSARY) == []
    # the book sets the limit, and every chapter from part 2 on keeps to it
    assert GLOSSARY["gloss_density"] == {"from_part": 2, "per_100": 10}
    chapters = {chapter: [m for m in i18n._read(path) if m.id and m.string] for chapter, path in CATALOGS.items()}
    assert i18n.density_problems(chapters, GLOSSARY, i18n.toc_parts()) == []


def _once(**chapters):
    "gloss_problems with the book's rule, on chapters nbs/a (part 1), nbs/a2 (part 1), nbs/b and nbs/c (part 2)."
    order = ["nbs/a", "nbs/a2", "nbs/b", "nbs/c"]
    parts = {"nbs/a": 1, "nbs/a2": 1, "nbs/b": 2, "nbs/c": 2}
    return i18n.gloss_problems(_messages(**chapters), GLOSSARY, order, {}, parts)


def test_from_part_2_a_term_is_glossed_only_in_its_first_chapter():
    assert GLOSSARY["gloss_once_from_part"] == 2
    en = "The decoder reads the encoder's output."
    glossed, plain = "解码器（decoder）读取编码器（encoder）的输出。", "解码器读取编码器的输出。"
    # part 1: every chapter glosses a term at its first use, and one that does not fails
    assert _once(nbs__a={en: glossed}, nbs__a2={en: glossed}) == []
    assert "nbs/a2: glossary: 'decoder' is used but never given as 解码器（decoder）" in " ".join(
        _once(nbs__a={en: glossed}, nbs__a2={en: plain}))
    # part 2: a term glossed in part 1 is not glossed again
    assert _once(nbs__a={en: glossed}, nbs__b={en: plain}) == []
    redundant = _once(nbs__a={en: glossed}, nbs__b={en: glossed})
    assert "nbs/b: glossary: a redundant gloss (from part 2 on a term is glossed only in the first chapter that " \
        "uses it: 'decoder' in nbs/a): （decoder）: \"The decoder reads the encoder's output.\"" in redundant
    assert len(redundant) == 2  # decoder and encoder
    # a term that part 1 never uses is glossed in the first chapter of part 2 that uses it, and only there
    assert _once(nbs__a={"Plain words.": "平常的话。"}, nbs__b={en: glossed}, nbs__c={en: plain}) == []
    assert "nbs/b: glossary: 'decoder' is used but never given" in " ".join(
        _once(nbs__a={"Plain words.": "平常的话。"}, nbs__b={en: plain}, nbs__c={en: glossed}))
    assert "nbs/c: glossary: a redundant gloss" in " ".join(
        _once(nbs__a={"Plain words.": "平常的话。"}, nbs__b={en: glossed}, nbs__c={en: glossed}))


def test_a_redundant_gloss_of_a_compound_fails_and_a_new_term_passes():
    en1, en2 = "Attention mixes the values.", "The attention weights sum to one, as in grouped-query attention."
    part1 = {en1: "注意力（attention）把值（value）混合起来。"}
    compound = {en2: "注意力权重（attention weights）之和为 1，分组查询注意力也是如此。"}
    assert "nbs/b: glossary: a redundant gloss" in " ".join(_once(nbs__a=part1, nbs__b=compound))
    new_term = {en2: "注意力权重之和为 1，分组查询注意力（grouped-query attention）也是如此。"}
    assert _once(nbs__a=part1, nbs__b=new_term) == []


def test_a_term_is_glossed_where_the_reader_first_meets_it():
    first, later = "The decoder reads the encoder's output.", "Teacher forcing feeds the decoder the target."
    late = {first: "解码器读取编码器（encoder）的输出。", later: "强制教学（teacher forcing）把目标句喂给解码器（decoder）。"}
    assert i18n.gloss_problems(_messages(nbs__a=late), GLOSSARY, ["nbs/a"], {}) == [
        "nbs/a: glossary: 'decoder' is glossed after its first use; give 解码器（decoder） where the reader first "
        "meets it: \"The decoder reads the encoder's output.\""]
    early = {first: "解码器（decoder）读取编码器（encoder）的输出。", later: "强制教学（teacher forcing）把目标句喂给解码器。"}
    assert i18n.gloss_problems(_messages(nbs__a=early), GLOSSARY, ["nbs/a"], {}) == []
    # a first use in bold or in parentheses takes no gloss (none in a bold question; none nested): the next one does
    for english in ("**What does the decoder read?**", "The output goes on (to the decoder)."):
        assert i18n.gloss_problems(_messages(nbs__a={english: "解码器读什么？", later: late[later]}), GLOSSARY,
                                   ["nbs/a"], {}) == []
