"""The Chinese edition (中文版): configuration, message catalogs and their checks.

The book's prose is translated through Sphinx's gettext catalogs, one `.po` file per chapter under
locales/zh_CN/LC_MESSAGES/ (compiled `.mo` files are not committed). Code, outputs and figures are not in the
catalogs: both editions show the same ones.

    python tools/book_i18n.py config zh_CN _build/_config.zh_CN.yml   # the Chinese edition's _config.yml
    python tools/book_i18n.py extract                                 # the English messages -> _build/gettext/*.pot
    python tools/book_i18n.py update                                  # merge them into the catalogs (new entries
                                                                      # empty, unless the same English moved from
                                                                      # another chapter: it keeps its translation)
    python tools/book_i18n.py todo nbs/02_attention > todo.json       # a chapter's untranslated messages, as JSON
    python tools/book_i18n.py fill nbs/02_attention done.json         # write their translations into the catalog
    python tools/book_i18n.py check                                   # CI: every message translated, nothing stale
    python tools/book_i18n.py stats                                   # messages and words per chapter
    python tools/book_i18n.py density                                 # glosses per 100 messages per chapter
    python tools/book_i18n.py site                                    # both editions -> _build/site/

`check` compares message ids, not the location comments: it fails, with one line per problem naming the
chapter and the message, when an English message has no translation, when a translation is fuzzy, when a
catalog holds a message that the English text no longer has, or when a translation breaks the markup that both
editions share (math, inline code, roles such as {cite:p}, links). It also holds the Chinese to one vocabulary
and one house style:
* the terms of locales/glossary.yml, wherever the English uses them, and their glosses (the English in
  parentheses, 注意力（attention）) where the glossary's rule puts them: per chapter in chapter 00 and part 1, only in
  the first chapter that uses the term from part 2 on (a gloss there that the rule does not ask for, 注意力权重
  （attention weights） after chapter 02, is refused), or once in the book for everyday terms; around whole
  compounds; never inside another parenthesis, in a heading or in a subtitle;
* no rival rendering of a term (its `rivals` in the glossary: 栈 for 堆叠) where the English uses the term or beside
  its rendering, nor in the figures' labels (locales/zh_CN/figures.yml, which give the glossary's terms too) or in
  README.zh-CN.md; a figure's box that the English names in bold is named as the figure draws it (掩码（可选）);
* a term glossed once in a chapter, at its first use there (not after a message that used it outside bold and
  parentheses), no gloss in a link to a page, glosses around whole compounds even through
  emphasis; at most `gloss_density` glosses per 100 messages from a part on, where the glossary sets it;
* a link whose English text is a chapter's title gives that chapter's Chinese title; a heading quoted in its page's
  prose reads as the heading is translated; chapter 00's contents name the chapters as README.zh-CN.md's table;
* an English message that several chapters share has one translation (the exercises' boilerplate);
* bold labels as `**预期结果：** ` (the colon inside the bold, then a space) and `**它不是 WMT。**` (a message that
  opens with a bold label keeps its full stop inside the bold too), percentages as `65%`;
* displayed formulas: only the words in `\text{}` change, and they are translated.
"""
from __future__ import annotations

import argparse
import copy
import functools
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from babel.messages.pofile import read_po

REPO = Path(__file__).resolve().parents[1]
LOCALES = REPO / "locales"
GETTEXT = REPO / "_build" / "gettext"
LANGUAGES = {"en": "English", "zh_CN": "中文"}

# What the Chinese edition changes in _config.yml; everything else is the English edition's, so the two cannot drift.
OVERRIDES = {
    "zh_CN": {
        "title": "The Annotated Transformer 中文版",
        "author": "The Annotated Transformer 编写组",  # the footer's "作者："
        "execute": {"execute_notebooks": "off"},  # the English build executes and tests the code; this one reuses it
        "html": {"extra_footer": "<p>代码：MIT 许可证。论文：Vaswani 等，“Attention Is All You Need”，NeurIPS 2017。</p>"},
        "sphinx": {"config": {"language": "zh_CN", "locale_dirs": ["locales"], "gettext_compact": False}},
    },
    "gettext": {  # extracting the English messages: no execution, one catalog per chapter, no location churn
        "execute": {"execute_notebooks": "off"},
        "sphinx": {"config": {"gettext_compact": False, "gettext_location": False, "gettext_uuid": False}},
    },
}


def _merge(base: dict, extra: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def write_config(which: str, dest: Path) -> Path:
    "_config.yml with the overrides of WHICH ('zh_CN' or 'gettext'), written to DEST (paths stay the book's)."
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    overrides = copy.deepcopy(OVERRIDES[which])
    if which in LANGUAGES:  # the part captions of _toc.yml (see _ext/nbdev_directives.py)
        overrides["sphinx"]["config"]["toc_captions"] = captions(which)
        overrides["sphinx"]["config"]["interface_strings"] = interface(which)  # the theme's, myst-nb's, the book's
    extensions = config.get("sphinx", {}).get("local_extensions", {})
    for name, folder in extensions.items():  # jupyter-book finds them relative to the config file: make them absolute
        extensions[name] = str(REPO / folder)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(yaml.safe_dump(_merge(config, overrides), allow_unicode=True, sort_keys=False),
                    encoding="utf-8")
    return dest


def captions(lang: str) -> dict[str, str]:
    "{part caption of _toc.yml: its translation} from locales/LANG/captions.yml."
    path = LOCALES / lang / "captions.yml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}


def interface(lang: str) -> dict[str, str]:
    "{English interface string: its translation} from locales/LANG/interface.yml (see _ext/nbdev_directives.py)."
    path = LOCALES / lang / "interface.yml"
    return yaml.safe_load(path.read_text(encoding="utf-8")) if path.is_file() else {}


def toc_captions() -> list[str]:
    return [part["caption"] for part in yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))["parts"]]


def extract() -> Path:
    "The English messages of every page, as _build/gettext/**/*.pot."
    config = write_config("gettext", REPO / "_build" / "_config.gettext.yml")
    shutil.rmtree(GETTEXT, ignore_errors=True)
    # a page that was renamed or removed leaves its .pot in Sphinx's output folder: start that folder empty
    shutil.rmtree(REPO / "_build" / "gettext-build" / "_build" / "gettext", ignore_errors=True)
    subprocess.run(["jupyter-book", "build", str(REPO), "--config", str(config), "--builder", "custom",
                    "--custom-builder", "gettext", "--path-output", str(REPO / "_build" / "gettext-build")],
                   check=True, stdout=subprocess.DEVNULL)
    built = REPO / "_build" / "gettext-build" / "_build" / "gettext"
    shutil.copytree(built, GETTEXT, ignore=lambda folder, names: [n for n in names if _english_only(
        (Path(folder) / n).relative_to(built).with_suffix("").as_posix())])
    return GETTEXT


# Pages that both editions show in English, without catalogs: the API reference (api/*.md), written from the
# package's docstrings by tools/make_stubs.py (each page says so in both languages).
ENGLISH_ONLY = ("api/",)


def _english_only(chapter: str) -> bool:
    return any(chapter == prefix.rstrip("/") or chapter.startswith(prefix) for prefix in ENGLISH_ONLY)


def templates(root: Path = GETTEXT) -> dict[str, Path]:
    "{chapter: its .pot}, the chapter named by its path without suffix (nbs/02_attention); English-only pages left out."
    return {name: p for p in sorted(root.rglob("*.pot"))
            if not _english_only(name := p.relative_to(root).with_suffix("").as_posix())}


def catalogs(lang: str = "zh_CN") -> dict[str, Path]:
    root = LOCALES / lang / "LC_MESSAGES"
    return {p.relative_to(root).with_suffix("").as_posix(): p for p in sorted(root.rglob("*.po"))}


def _read(path: Path):
    with open(path, "rb") as f:
        return read_po(f)


# markup both editions must keep, found in this order (each kind removed before the next is looked for, so that a
# role's `target` is not also inline code, nor a `$` in code math)
_MARKUP = [
    ("role", re.compile(r"\{[a-z:-]+\}`[^`]*`")),
    ("code", re.compile(r"``.+?``|`[^`\n]+?`", re.S)),
    ("math", re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$", re.S)),
    ("link target", re.compile(r"\]\(([^)\s]+)\)")),
    ("footnote", re.compile(r"\[\^[^\]]+\]")),
]


def _markup(text: str) -> dict[str, list[str]]:
    found = {}
    for name, pattern in _MARKUP:
        found[name] = sorted(pattern.findall(text))
        text = pattern.sub(" ", text)
    return found


def markup_problems(msgid: str, msgstr: str) -> list[str]:
    "What a translation lost or changed of the markup its English message has."
    problems = []
    english, chinese = _markup(msgid), _markup(msgstr)
    for name, _ in _MARKUP:
        en, zh = english[name], chinese[name]
        if en != zh:
            missing = [x for x in en if x not in zh] or [x for x in zh if x not in en] or en or zh
            problems.append(f"{name} differs from the English ({missing[0][:60]!r})")
    left = _unrendered_emphasis(msgstr)
    if len(left) > len(_unrendered_emphasis(msgid)):  # CommonMark closes ** only where the run is right-flanking:
        # 标为**掩码（可选）**的 stays literal on the page
        problems.append(f"emphasis that does not render (put a space outside it, or move the punctuation): "
                        f"{left[0]!r}")
    return problems


@functools.lru_cache(maxsize=1)
def _commonmark():
    from markdown_it import MarkdownIt
    return MarkdownIt("commonmark")


def _unrendered_emphasis(text: str) -> list[str]:
    "The `**` runs that survive Markdown rendering as literal text (outside code), each with a little context."
    rendered = re.sub(r"<code>.*?</code>", " ", _commonmark().render(text), flags=re.S)
    return [m.group(0) for m in re.finditer(r".{0,6}\*\*.{0,6}", rendered)]


GLOSSARY = LOCALES / "glossary.yml"
_NOT_PROSE = re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$|``.+?``|`[^`\n]+?`|\]\([^)]*\)|https?://\S+", re.S)


def glossary(path: Path = GLOSSARY) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for term in data["terms"]:
        term["regex"] = re.compile(r"(?<![\w-])(?:" + term.get("pattern", re.escape(term["en"])) + r")(?![\w-])", re.I)
    return data


def is_prose(msgid: str) -> bool:
    "Whether a message has words to translate (three in a row), not only math, code or names."
    if msgid.startswith("| English | 中文 |"):  # the glossary's own table: both languages already
        return False
    text = _NOT_PROSE.sub(" ", msgid)
    text = re.sub(r"\\text\{([^}]*)\}", r" \1 ", text)  # words in a formula's \text{} are prose
    text = re.sub(r"[_^](\{[^{}]*\}|\w)|\\[A-Za-z]+|[{}]", " ", text)  # sub/superscripts and commands are not
    return bool(re.search(r"[A-Za-z]{2,}[,.;:]?\s+[A-Za-z]{2,}[,.;:]?\s+[A-Za-z]{2,}", text))


def glossary_problems(chapter: str, msgid: str, msgstr: str, data: dict) -> list[str]:
    "The glossary's terms that the English message uses and its translation does not."
    if msgstr == msgid and not is_prose(msgid):  # a formula or a name, copied as it is: nothing to translate
        return []
    text = " ".join(formula_words(msgid)) if _formula(msgid) else _NOT_PROSE.sub(" ", msgid)
    for name in data.get("keep", []):
        text = text.replace(name, " ")
    excused = {e["term"] for e in data.get("exceptions", [])
               if e["chapter"] == chapter and msgid.startswith(e["message"])}
    problems = [f"glossary: {t['en']!r} is {t['zh']!r}" for t in data["terms"]
                if t["en"] not in excused and t["regex"].search(text) and t["zh"] not in msgstr]
    chinese = _NOT_PROSE.sub(" ", msgstr)
    for t in data["terms"]:
        if t["en"] not in excused and (t["regex"].search(text) or t["zh"] in chinese):
            problems += [f"glossary: {t['en']!r} is {t['zh']!r}, not also {r!r}" for r in rivals(t, chinese)]
    return problems


def rivals(term: dict, chinese: str) -> list[str]:
    """The rival renderings of TERM (its `rivals` in the glossary) that CHINESE uses, once its own rendering is set
    aside (堆叠 is not 堆栈; 栈 counts where 堆栈 does not: the longer rivals first)."""
    chinese, found = chinese.replace(term["zh"], " "), []
    for rival in sorted(term.get("rivals", []), key=len, reverse=True):
        if rival in chinese:
            found.append(rival)
            chinese = chinese.replace(rival, " ")
    return found


FIGURES = LOCALES / "zh_CN" / "figures.yml"
README_ZH = REPO / "README.zh-CN.md"


def figure_problems(labels: dict[str, str], data: dict) -> list[str]:
    """The figures' labels (locales/zh_CN/figures.yml, {English: Chinese}) hold to the glossary as the prose does:
    a label whose English uses a term gives its Chinese, and no label uses a rival rendering."""
    problems = []
    for en, zh in labels.items():
        if en == zh:  # a name or a setting, the same in both editions (d_model={}, SoftMax)
            continue
        english, chinese = " ".join(str(en).split()), "".join(str(zh).split())
        for t in data["terms"]:
            used = t["regex"].search(english)
            if used and "".join(t["zh"].split()) not in chinese:
                problems.append(f"figures.yml: glossary: {t['en']!r} is {t['zh']!r}: {en!r}: {zh!r}")
            if used or t["zh"] in chinese:
                problems += [f"figures.yml: glossary: {t['en']!r} is {t['zh']!r}, not {r!r}: {en!r}: {zh!r}"
                             for r in rivals(t, str(zh))]
    return problems


def box_problems(msgid: str, msgstr: str, labels: dict[str, str]) -> list[str]:
    """A figure's box that the English names in bold (**Mask**, **Feed Forward**) is named in the Chinese as the
    figure draws it (figures.yml: 掩码（可选）, 前馈网络), not by its English alone."""
    drawn = {" ".join(str(en).split()): "".join(str(zh).split()) for en, zh in labels.items()}
    drawn = {en: zh for en, zh in drawn.items() if en != zh and re.search(r"[\u4e00-\u9fff]", zh)}
    names = {re.sub(r"\s*\([^)]*\)$", "", en): zh for en, zh in drawn.items()}  # Mask (opt.) is named **Mask**
    names.update(drawn)
    problems = []
    for bold in re.findall(r"\*\*([^*]+?)\*\*", _NOT_PROSE.sub(" ", msgid)):
        zh = names.get(" ".join(bold.split()))
        if zh and zh not in "".join(msgstr.split()):
            problems.append(f"figure: the box **{bold}** is named as the figure draws it, {zh}")
    return problems


def readme_problems(text: str, data: dict) -> list[str]:
    "README.zh-CN.md uses the glossary's renderings: none of their rivals."
    prose = _NOT_PROSE.sub(" ", re.sub(r"```.*?```", " ", text, flags=re.S))
    return [f"README.zh-CN.md: glossary: {t['en']!r} is {t['zh']!r}, not {r!r}"
            for t in data["terms"] for r in rivals(t, prose)]


def reading_order() -> list[str]:
    "The book's pages in reading order (_toc.yml): the root page, then the chapters of each part."
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"]] + [c["file"] for part in toc["parts"] for c in part["chapters"]]


def _normal(text: str) -> str:
    return " ".join(text.split())


def page_titles(chapter: str) -> list[str]:
    """CHAPTER's title, its other headings and its subtitle (the quote under the title), as their messages
    (whitespace normalized), the title first; [] for a page that is no notebook or markdown file of the book."""
    path = next((p for p in (REPO / f"{chapter}.ipynb", REPO / f"{chapter}.md") if p.is_file()), None)
    if path is None:
        return []
    if path.suffix == ".ipynb":
        import json
        cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "markdown"]
        texts = ["".join(c["source"]) for c in cells]
    else:
        texts = [path.read_text(encoding="utf-8")]
    titles, fence = [], False
    for k, text in enumerate(texts):
        lines = text.splitlines()
        for n, line in enumerate(lines):
            if line.lstrip().startswith(("```", "~~~")):
                fence = not fence
            heading = None if fence else re.match(r" {0,3}#{1,6}\s+(.+?)(?:\s+#+)?\s*$", line)
            if heading:
                titles.append(_normal(heading.group(1)))
                if k == 0 and len(titles) == 1:  # the subtitle: the quote right under the page's title
                    quote = []
                    for below in lines[n + 1:]:
                        if below.startswith(">"):
                            quote.append(below[1:].strip())
                        elif quote or below.strip():
                            break
                    if quote:
                        titles.append(_normal(" ".join(quote)))
    return titles


# A gloss gives a term's English in parentheses after the Chinese: 注意力（attention）. Where it is required:
# `gloss: chapter` (the default) at the term's first use in every chapter that uses it, and from part
# `gloss_once_from_part` on only in the first chapter in reading order that uses it (no gloss in a later one); `gloss: book` (everyday
# terms) once in the whole book, in the first chapter in reading order that uses it, and in no other chapter;
# `gloss: none` never (names and titles). Everywhere: not in a heading or a page's subtitle, never inside another
# parenthesis, and around a whole compound: 梯度下降（gradient descent）, not 梯度（gradient）下降.
_FUNCTION = set("的地得和与及或是为在中上里时也都会就被把对从到可能要只还并则而即又再才所之等以已将让使给由向跟同于"
                "每各该其这那了着过")
# English nouns that make a compound with the term before them ("attention weights", "batch size"): a gloss
# between the term and such a noun splits the compound
_COMPOUND_HEADS = set("""weight weights mask masks size sizes dimension dimensions dim axis axes averaging average
schedule schedules network networks layer layers sublayer sublayers matrix matrices descent accumulation mechanism
table tables projection projections bias biases cache caches stack stacks variant variants vector vectors piece
pieces count counts budget budgets id ids representation representations tokenizer tokenizers accuracy hidden width
widths norm norms rate rates step steps signal signals state states score scores length lengths position positions
pair pairs split splits loss losses distribution distributions model models input inputs output outputs
self-attention vocabulary vocabularies tokens embeddings attention""".split())


def _gloss_scope(term: dict) -> str:
    return term.get("gloss", "chapter")


def _pattern(term: dict) -> str:
    return term.get("pattern", re.escape(term["en"]))


def _glossed(term: dict) -> re.Pattern:
    "A gloss of TERM: its Chinese, then (a few characters on: 词表大小（vocabulary size）) its English in parentheses."
    en, zh = _pattern(term), re.escape(term["zh"])
    return re.compile(zh + r"[^。；（）()]{0,12}?[（(][^）)]*?(?:" + en + r")|[（(][^）)]*" + zh + r"[^）)]*?(?:" + en + ")",
                      re.I)


def _bare_gloss(term: dict) -> re.Pattern:
    "TERM's Chinese with only its own English after it: 批量（batch）, 词元（tokens）, 哈佛笔记本（the Harvard notebook）."
    return re.compile(re.escape(term["zh"]) + r"[（(]\s*(?:the |an? )?(?:" + _pattern(term) + r")\s*[）)]", re.I)


def _gloss_of(term: dict) -> re.Pattern:
    "A parenthesis that gives TERM's English: （beam search）, （key/value cache，第 21 章）."
    return re.compile(r"[（(][^）)]*?(?<![\w-])(?:" + _pattern(term) + r")(?![\w-])[^）)]*[）)]", re.I)


_LINK_TEXT = re.compile(r"\[[^\[\]]*\](?=\([^)]*\))")


def glosses(text: str, data: dict) -> list[str]:
    "The glosses in TEXT: each parenthesis that gives a glossary term's English (注意力（attention）: 'attention')."
    text = _NOT_PROSE.sub(" ", _LINK_TEXT.sub(" ", text))  # a link's text (an issue's title) is no gloss
    found = []
    for paren in re.finditer(r"（([^（）]*)）", text):
        if any(t["regex"].search(paren.group(1)) for t in data["terms"] if _gloss_scope(t) != "none"):
            found.append(paren.group(1))
    return found


def density_problems(chapters: dict[str, list], data: dict, parts: dict[str, int]) -> list[str]:
    """Chapters whose glosses exceed the glossary's `gloss_density` ({from_part: P, per_100: N}): at most N glosses
    per 100 messages in the chapters of part P and later, where every term has been glossed before.
    CHAPTERS: {chapter: its translated messages}; PARTS: {chapter: its part's number in _toc.yml}."""
    limit = data.get("gloss_density")
    problems = []
    for chapter, msgs in chapters.items():
        if not limit or not msgs or parts.get(chapter, 0) < limit["from_part"]:
            continue
        n = sum(len(glosses(m.string, data)) for m in msgs)
        if 100 * n > limit["per_100"] * len(msgs):
            problems.append(f"{chapter}: glossary: {n} glosses in {len(msgs)} messages, "
                            f"more than {limit['per_100']} per 100 from part {limit['from_part']} on")
    return problems


def toc_parts() -> dict[str, int]:
    "{chapter: the number of its part in _toc.yml, from 1}."
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    return {c["file"]: k for k, part in enumerate(toc["parts"], 1) for c in part["chapters"]}


# the text of a link to a page of the book: [解码：贪心解码、束搜索与键/值缓存](11_decoding.ipynb)
_PAGE_LINK_TEXT = re.compile(r"\[[^\[\]]*\](?=\([\w./-]+\.(?:ipynb|md)(?:#[^)]*)?\))")


def _depth(text: str) -> int:
    deepest = depth = 0
    for ch in text:
        if ch in "（(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "）)":
            depth = max(0, depth - 1)
    return deepest


_GLOSS_FILLERS = {"the", "a", "an", "of", "or", "and", "i.e.", "e.g."}


def _known_gloss(paren: str, data: dict) -> bool:
    """Whether a parenthesis (its content) holds a gloss made only of the glossary's terms and the nouns that make
    compounds with them: 'attention weights', 'padding mask', 'key，包括填充'; not a new term whose Chinese the
    reader cannot guess, 'grouped-query attention', nor a name or a value inside Chinese, '即 newstest2013'."""
    for segment in re.split(r"[，；、,;]", paren):
        if re.search(r"[\u4e00-\u9fff]", segment) or not any(t["regex"].search(segment) for t in data["terms"]):
            continue
        for t in data["terms"]:
            segment = t["regex"].sub(" ", segment)
        words = re.findall(r"[A-Za-z][\w.-]*", segment)
        if all(w.lower() in _COMPOUND_HEADS or w.lower() in _GLOSS_FILLERS for w in words):
            return True
    return False


def _plain_use(english: str, term: dict, hidden: list[dict], data: dict) -> bool:
    """Whether ENGLISH uses TERM where a gloss can stand: outside bold (a bold question or label) and parentheses
    (a gloss there would nest), and not as part of a compound term with an entry of its own (HIDDEN)."""
    text = _NOT_PROSE.sub(" ", _PAGE_LINK_TEXT.sub(" ", english))
    for name in data.get("keep", []):
        text = text.replace(name, " ")
    for other in hidden:
        text = other["regex"].sub(" ", text)
    text = re.sub(r"\*\*.+?\*\*", " ", text)
    text = re.sub(r"\([^()]*\)", " ", text)
    return bool(term["regex"].search(text))


def late_gloss_problems(chapter: str, body: list, data: dict, skip: set = frozenset()) -> list[str]:
    """A term glossed in CHAPTER after a message that already used it where a gloss could stand: the reader meets
    the English at the first use, not later. BODY: the chapter's messages in page order, headings left out."""
    problems = []
    for term in data["terms"]:
        if _gloss_scope(term) == "none" or (chapter, term["en"]) in skip:
            continue
        own = _bare_gloss(term)
        at = next((k for k, m in enumerate(body) if own.search(_PAGE_LINK_TEXT.sub(" ", m.string))), None)
        if not at:
            continue
        hidden = [o for o in data["terms"]
                  if o is not term and _gloss_scope(o) != "chapter" and term["regex"].search(o["en"])]
        first = next((m for m in body[:at] if is_prose(m.id) and _plain_use(m.id, term, hidden, data)), None)
        if first is not None:
            problems.append(f"{chapter}: glossary: {term['en']!r} is glossed after its first use; give "
                            f"{term['zh']}（{term['en']}） where the reader first meets it: {_short(first.id)}")
    return problems


def gloss_problems(chapters: dict[str, list], data: dict, order: list[str] | None = None,
                   titles: dict[str, list[str]] | None = None, parts: dict[str, int] | None = None) -> list[str]:
    """Where the glosses of the book break the rule above, one line per problem, naming the chapter.
    CHAPTERS: {chapter: its translated messages}; ORDER: the reading order (default: _toc.yml's);
    TITLES: {chapter: its headings and subtitle} (default: read from the page); PARTS: {chapter: its part's number}
    (default: _toc.yml's; a chapter in none, as the root, counts as part 0)."""
    order = reading_order() if order is None else order
    parts = toc_parts() if parts is None else parts
    once_from = data.get("gloss_once_from_part")  # from this part on, a `gloss: chapter` term is glossed once
    ranked = sorted(chapters, key=lambda c: (order.index(c) if c in order else len(order), c))
    if titles is None:
        titles = {c: page_titles(c) for c in chapters}
    skip = {(u["chapter"], u["term"]) for u in data.get("unglossed", [])}
    problems = []
    body, heads, uses = {}, {}, {}
    for chapter in ranked:
        heading = set(titles.get(chapter, []))
        body[chapter] = [m for m in chapters[chapter] if _normal(m.id) not in heading]
        heads[chapter] = [m for m in chapters[chapter] if _normal(m.id) in heading]
        prose = [_NOT_PROSE.sub(" ", _PAGE_LINK_TEXT.sub(" ", m.id)) for m in body[chapter] if is_prose(m.id)]
        for name in data.get("keep", []):
            prose = [text.replace(name, " ") for text in prose]
        # a term inside a compound that has its own entry, glossed once or never (the key of "key/value cache"),
        # is glossed by that compound
        inner = list(prose)
        for t in data["terms"]:
            if _gloss_scope(t) != "chapter":
                inner = [t["regex"].sub(" ", text) for text in inner]
        uses[chapter] = {t["en"] for t in data["terms"]
                         if any(t["regex"].search(text) for text in (inner if _gloss_scope(t) == "chapter" else prose))}
    first = {}  # a book-wide term: the first chapter that uses it
    for chapter in ranked:
        for t in data["terms"]:
            if t["en"] in uses[chapter] and (chapter, t["en"]) not in skip:
                first.setdefault(t["en"], chapter)
    for chapter in ranked:
        for t in data["terms"]:
            scope, glossed, bare = _gloss_scope(t), _glossed(t), _bare_gloss(t)
            if scope == "none":
                continue
            has_gloss = any(glossed.search(_PAGE_LINK_TEXT.sub(" ", m.string)) for m in body[chapter])
            # from part `gloss_once_from_part` on the reader has read the chapters before: a `gloss: chapter` term
            # is glossed only in the first chapter in reading order that uses it (below: no other gloss either)
            once = bool(once_from) and parts.get(chapter, 0) >= once_from
            if scope == "chapter" and t["en"] in uses[chapter] and (chapter, t["en"]) not in skip and not has_gloss \
                    and (not once or first.get(t["en"]) == chapter):
                problems.append(f"{chapter}: glossary: {t['en']!r} is used but never given as {t['zh']}（{t['en']}） "
                                "in this chapter (at its first use)")
            if scope == "book" and first.get(t["en"]) == chapter and not has_gloss:
                problems.append(f"{chapter}: glossary: {t['en']!r} is first used in the book here but never given as "
                                f"{t['zh']}（{t['en']}）")
            if scope == "chapter" and (not once or first.get(t["en"]) == chapter):  # once in a chapter: a second
                again = [(m, hit) for m in body[chapter] for hit in bare.finditer(m.string)][1:]  # 注意力（attention）
                problems += [f"{chapter}: glossary: {t['en']!r} is glossed once in a chapter, not again: "  # repeats it
                             f"{hit.group(0)!r}: {_short(m.id)}" for m, hit in again]
            if scope == "book" and first.get(t["en"]) != chapter and not once:
                problems += [f"{chapter}: glossary: {t['en']!r} is glossed once in the book (in {first.get(t['en'])}), "
                             f"not again here: {hit.group(0)!r}: {_short(m.id)}"
                             for m in body[chapter] for hit in bare.finditer(m.string)]
        if once_from and parts.get(chapter, 0) >= once_from:
            # a redundant gloss: a parenthesis that gives the English of terms all glossed in an earlier chapter
            # (注意力权重（attention weights） after chapter 02), where the rule asks for none
            for m in body[chapter]:
                for paren in glosses(m.string, data):
                    named = [t for t in data["terms"] if _gloss_scope(t) != "none" and t["regex"].search(paren)]
                    if named and _known_gloss(paren, data) and not any(first.get(t["en"]) == chapter for t in named):
                        before = ", ".join(f"{t['en']!r} in {first.get(t['en'])}" for t in named)
                        problems.append(f"{chapter}: glossary: a redundant gloss (from part {once_from} on a term is "
                                        f"glossed only in the first chapter that uses it: {before}): "
                                        f"（{paren}）: {_short(m.id)}")
        for m in body[chapter]:  # a link's text that names a page (its title, a contents line) holds no gloss
            for link in _PAGE_LINK_TEXT.finditer(m.string):
                if any(_gloss_of(t).search(link.group(0)) for t in data["terms"]):
                    problems.append(f"{chapter}: glossary: no gloss in the text of a link to a page "
                                    f"({_short(link.group(0), 50)}): {_short(m.id)}")
        for m in heads[chapter]:
            for t in data["terms"]:
                if re.search(r"[（(][^）)]*?(?<![\w-])(?:" + _pattern(t) + r")(?![\w-])[^）)]*[）)]", m.string, re.I):
                    problems.append(f"{chapter}: glossary: no gloss in a heading or subtitle ({t['en']!r}): "
                                    f"{_short(m.id)}")
                    break
        for m in body[chapter]:
            english = _NOT_PROSE.sub(" ", m.id)
            for t in data["terms"]:
                # *前馈*（feed-forward）网络: emphasis around the term hides the compound, it does not end it
                split = re.escape(t["zh"]) + r"\**[（(]\s*(?:" + _pattern(t) + r")\s*[）)]\**(?=(?P<next>[\u4e00-\u9fff]))"
                for hit in re.finditer(split, m.string, re.I):
                    after = [a.group("word").lower() for a in re.finditer(
                        r"(?<!\w)(?:" + _pattern(t) + r")(?![\w-])[*_]*\s+[*_]*(?P<word>[A-Za-z][\w-]*)", english, re.I)]
                    if hit.group("next") not in _FUNCTION and any(a in _COMPOUND_HEADS for a in after):
                        problems.append(f"{chapter}: glossary: a gloss splits a compound ({hit.group(0)}"
                                        f"{hit.group('next')}…): gloss the whole of it: {_short(m.id)}")
        problems += late_gloss_problems(chapter, body[chapter], data, skip)
    return problems


def _formula(msgid: str) -> bool:
    "Whether a message is a displayed formula (a math block: LaTeX commands, no inline math or code around it)."
    return "$" not in msgid and "`" not in msgid and bool(re.search(r"\\[A-Za-z]+", msgid))


_TEXT = re.compile(r"(?P<sub>[_^]\{?\s*)?\\text\{(?P<words>[^{}]*)\}")


def formula_words(formula: str) -> list[str]:
    "The words of a formula's \\text{} that are not sub- or superscripts (labels such as d_{\\text{model}})."
    return [t.group("words") for t in _TEXT.finditer(formula) if not t.group("sub")]


def style_problems(msgid: str, msgstr: str, data: dict | None = None) -> list[str]:
    "The house style of the Chinese text: bold labels, percentages, parentheses and displayed formulas."
    problems = []
    if _formula(msgid):
        # the \text{} groups go, wherever they are (the word order may change): the rest is the math
        bare = [re.sub(r"\s+", "", _TEXT.sub(lambda t: t.group("sub") or "", s)) for s in (msgid, msgstr)]
        if bare[0] != bare[1]:
            problems.append("formula: only the words in \\text{} may change, the math stays the English one")
        allowed = set((data or {}).get("formula_keep", []))
        english = [w for words in formula_words(msgstr) for w in re.findall(r"[A-Za-z][A-Za-z-]+", words)
                   if w not in allowed and not re.search(r"[A-Z].*[A-Z]", w)]  # acronyms (BLEU, FLOPs) stay
        if english:
            problems.append(f"formula: English words in \\text{{}} ({' '.join(english)!r}): translate them")
        return problems
    prose = _NOT_PROSE.sub(" ", msgstr)
    for bold in re.finditer(r"\*\*(?=\S)(.+?)(?<=\S)\*\*(.?)", prose):
        label, after = bold.group(1), bold.group(2)
        if after in "：:" and after:
            problems.append(f"bold label: the colon goes inside the bold, then a space: **{label}：** ")
        elif label[-1] in "：:。？！" and after and not after.isspace():
            problems.append(f"bold label: a space after **{label}**")
    label = re.match(r"\s*(?:[-*+]\s+)?\*\*(?=\S)([^*]+?)(?<=\S)\*\*([。？！.?!])", prose)
    if label:  # a message that opens with a bold label: its full stop, like its colon, is inside the bold
        problems.append(f"bold label: the full stop goes inside the bold: **{label.group(1)}{label.group(2)}**")
    if re.search(r"\d\s+[%％]|\d％", prose):
        problems.append("percent: 65%, no space and no full-width ％")
    if _depth(prose) > 1 and _depth(_NOT_PROSE.sub(" ", msgid)) < 2:
        problems.append("nested parentheses: （…（…）…） (gloss elsewhere, or reword)")
    return problems


def title_problems(messages: dict[str, dict[str, str]], titles: dict[str, list[str]]) -> list[str]:
    """A link whose English text is a chapter's title gives that chapter's Chinese title, word for word.
    MESSAGES: {chapter: {English: Chinese}}; TITLES: {chapter: [title, ...]} (page_titles)."""
    chinese = {c: messages.get(c, {}).get(t[0]) for c, t in titles.items() if t}
    problems = []
    for chapter, msgs in messages.items():
        for msgid, msgstr in msgs.items():
            for text, target in re.findall(r"\[([^\]]+)\]\(([\w.-]+)\.ipynb(?:#[^)]*)?\)", msgid):
                target = f"nbs/{target}"
                if titles.get(target) and _normal(text) == titles[target][0] and chinese.get(target):
                    linked = re.findall(r"\[([^\]]+)\]\(" + re.escape(target[4:]) + r"\.ipynb", msgstr)
                    if chinese[target] not in linked:
                        problems.append(f"{chapter}: title: a link to {target} gives its title "
                                        f"{chinese[target]!r}, not {linked[:1] or '?'}: {_short(msgid)}")
    return problems


def heading_problems(messages: dict[str, dict[str, str]], titles: dict[str, list[str]]) -> list[str]:
    """A heading of the page quoted in its prose ("Different heads can look at different positions") is quoted in the
    Chinese as the heading is translated, word for word. MESSAGES: {chapter: {English: Chinese}}; TITLES: page_titles."""
    problems = []
    for chapter, msgs in messages.items():
        headings = {h: msgs[h] for h in titles.get(chapter, [])[1:] if msgs.get(h)}
        for msgid, msgstr in msgs.items():
            if _normal(msgid) in headings:
                continue
            for quoted in re.findall(r'"([^"]+)"|“([^”]+)”', msgid):
                text = _normal(quoted[0] or quoted[1]).rstrip(".,;:")
                if text in headings and f"“{headings[text]}”" not in msgstr:
                    problems.append(f"{chapter}: heading: a quoted heading reads as it is translated, "
                                    f"“{headings[text]}”: {_short(msgid)}")
    return problems


_README_ROW = re.compile(r"^\| [\w]+ \| \[(.+?)\]\((nbs/[\w.]+)\.ipynb\)", re.M)


def contents_problems(introduction: dict[str, str], readme_en: str, readme_zh: str) -> list[str]:
    """Chapter 00's contents name each chapter as the chapter table of README.zh-CN.md does, where the English
    contents and README.md agree. INTRODUCTION: chapter 00's {English: Chinese}."""
    english = {path: text for text, path in _README_ROW.findall(readme_en)}
    chinese = {path: text for text, path in _README_ROW.findall(readme_zh)}
    problems = []
    for msgid, msgstr in introduction.items():
        line = re.fullmatch(r"\[(.+)\]\(([\w.-]+)\.ipynb\)", msgid.strip())
        path = line and f"nbs/{line.group(2)}"
        if line and english.get(path) == line.group(1) and chinese.get(path):
            if msgstr.strip() != f"[{chinese[path]}]({line.group(2)}.ipynb)":
                problems.append(f"nbs/00_introduction: contents: {path} is named as in README.zh-CN.md, "
                                f"{chinese[path]!r}: {_short(msgstr)}")
    return problems


def consistency_problems(messages: dict[str, dict[str, str]]) -> list[str]:
    "An English message that several chapters share (the exercises' boilerplate, a heading) has one translation."
    seen: dict[str, tuple[str, str]] = {}
    problems, order = [], reading_order()
    for chapter in sorted(messages, key=lambda c: (order.index(c) if c in order else len(order), c)):
        for msgid, msgstr in messages[chapter].items():
            if msgid in seen and seen[msgid][1] != msgstr:
                problems.append(f"{chapter}: translated otherwise than in {seen[msgid][0]} "
                                f"({_short(seen[msgid][1], 40)}): {_short(msgid)}")
            seen.setdefault(msgid, (chapter, msgstr))
    return problems


def check(lang: str = "zh_CN", root: Path = GETTEXT, only: str | None = None) -> list[str]:
    "One line per problem: catalogs that do not hold exactly today's English messages, each translated."
    problems = []
    pots, pos, terms = templates(root), catalogs(lang), glossary()
    translated_captions = captions(lang)
    if not only:
        problems += [f"_toc.yml: part caption without its translation in locales/{lang}/captions.yml: {c!r}"
                     for c in toc_captions() if not translated_captions.get(c)]
        problems += [f"locales/{lang}/captions.yml: {c!r} is no part caption of _toc.yml"
                     for c in translated_captions if c not in toc_captions()]
    labels = yaml.safe_load(FIGURES.read_text(encoding="utf-8")) or {}
    done: dict[str, list] = {}  # {chapter: its translated messages}, for the checks across chapters
    for chapter in sorted(set(pots) | set(pos)):
        if chapter not in pos:
            problems.append(f"{chapter}: no catalog locales/{lang}/LC_MESSAGES/{chapter}.po")
            continue
        if chapter not in pots:
            problems.append(f"{chapter}: catalog {pos[chapter].relative_to(REPO)} belongs to no page of the book")
            continue
        english = {m.id for m in _read(pots[chapter]) if m.id}
        translated = {m.id: m for m in _read(pos[chapter]) if m.id}
        done[chapter] = [m for m in translated.values() if m.id in english and m.string and not m.fuzzy]
        for msgid in sorted(english - set(translated)):
            problems.append(f"{chapter}: English message without its translation: {_short(msgid)}")
        for msgid in sorted(set(translated) - english):
            problems.append(f"{chapter}: translation of a message the English text no longer has: {_short(msgid)}")
        for msgid in sorted(english & set(translated)):
            m = translated[msgid]
            if not m.string:
                problems.append(f"{chapter}: untranslated message: {_short(msgid)}")
            elif m.fuzzy:
                problems.append(f"{chapter}: fuzzy translation (the English changed): {_short(msgid)}")
            elif m.string == msgid and is_prose(msgid):
                problems.append(f"{chapter}: English copied, not translated: {_short(msgid)}")
            else:
                problems += [f"{chapter}: {p}: {_short(msgid)}" for p in markup_problems(msgid, m.string)
                             + glossary_problems(chapter, msgid, m.string, terms)
                             + style_problems(msgid, m.string, terms) + box_problems(msgid, m.string, labels)]
    if not only:
        problems += figure_problems(labels, terms)
        problems += readme_problems(README_ZH.read_text(encoding="utf-8"), terms)
    titles = {chapter: page_titles(chapter) for chapter in set(pots) | set(pos)}
    messages = {chapter: {m.id: m.string for m in msgs} for chapter, msgs in done.items()}
    problems += gloss_problems(done, terms, titles=titles, parts=toc_parts()) + title_problems(messages, titles)
    problems += density_problems(done, terms, toc_parts())
    problems += consistency_problems(messages) + heading_problems(messages, titles)
    if not only and "nbs/00_introduction" in messages:
        problems += contents_problems(messages["nbs/00_introduction"], (REPO / "README.md").read_text(encoding="utf-8"),
                                      README_ZH.read_text(encoding="utf-8"))
    return [p for p in problems if not only or p.startswith(f"{only}: ")]


def fill(chapter: str, translations: dict[str, str], lang: str = "zh_CN") -> int:
    "Write TRANSLATIONS {English message: Chinese} into CHAPTER's catalog; the number written."
    from babel.messages.pofile import write_po
    path = catalogs(lang)[chapter]
    catalog = _read(path)
    unknown = [m for m in translations if m not in catalog]
    if unknown:
        raise KeyError(f"{chapter}: {len(unknown)} message(s) not in the catalog, e.g. {_short(unknown[0])}")
    for msgid, msgstr in translations.items():
        message = catalog[msgid]
        message.string, message.flags = msgstr, {f for f in message.flags if f != "fuzzy"}
    with open(path, "wb") as f:
        write_po(f, catalog, width=-1, omit_header=False)
    return len(translations)


def translation_memory(lang: str = "zh_CN") -> dict[str, str]:
    "{English message: its translation} over every catalog (translated, not fuzzy): what a moved message carries."
    memory = {}
    for path in catalogs(lang).values():
        memory.update({m.id: m.string for m in _read(path) if m.id and m.string and not m.fuzzy})
    return memory


def carry(memory: dict[str, str], lang: str = "zh_CN") -> dict[str, int]:
    """Give each untranslated message the translation the same English had in any catalog before `update`: a
    paragraph that moved to another chapter keeps its translation; an edited one stays empty. {chapter: filled}."""
    filled = {}
    for chapter, path in catalogs(lang).items():
        todo = {m.id: memory[m.id] for m in _read(path) if m.id and not m.string and m.id in memory}
        filled[chapter] = fill(chapter, todo, lang) if todo else 0
    return filled


SITE = REPO / "_build" / "site"
_ROOT_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>The Annotated Transformer</title>
<style>body{font-family:sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;line-height:1.6}
a{display:block;font-size:1.3rem;margin:1rem 0}</style></head>
<body><h1>The Annotated Transformer</h1>
<p>"Attention Is All You Need", section by section. 《Attention Is All You Need》逐节精读。</p>
%s
<script>// a reader whose browser prefers Chinese goes to the Chinese edition, others to the English one;
// ?choose keeps this page
if (!location.search.includes("choose")) {
  location.replace((navigator.language || "").toLowerCase().startsWith("zh") ? "zh_CN/index.html" : "en/index.html");
}</script></body></html>
"""


def assemble_site(editions: dict[str, Path]) -> Path:
    "One site: each edition's built HTML under _build/site/CODE/, and a root page that picks one."
    shutil.rmtree(SITE, ignore_errors=True)
    for code, html in editions.items():
        shutil.copytree(html, SITE / code)
    links = "\n".join(f'<a href="{code}/index.html" hreflang="{code.replace("_", "-")}">{LANGUAGES[code]}</a>'
                      for code in editions)
    (SITE / "index.html").write_text(_ROOT_PAGE % links, encoding="utf-8")
    return SITE


def _short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= n else text[:n - 1] + "…")


def stats(lang: str = "zh_CN") -> list[tuple[str, int, int, int, int]]:
    "(chapter, messages, translated, fuzzy, English words) per catalog."
    rows = []
    for chapter, path in catalogs(lang).items():
        msgs = [m for m in _read(path) if m.id]
        rows.append((chapter, len(msgs), sum(bool(m.string) and not m.fuzzy for m in msgs),
                     sum(bool(m.fuzzy) for m in msgs), sum(len(m.id.split()) for m in msgs)))
    return rows


def density(lang: str = "zh_CN") -> list[tuple[str, int, int, int]]:
    "(chapter, part, translated messages, glosses) per catalog, in reading order: what `gloss_density` limits."
    data, parts, order = glossary(), toc_parts(), reading_order()
    rows = []
    for chapter, path in catalogs(lang).items():
        msgs = [m for m in _read(path) if m.id and m.string and not m.fuzzy]
        rows.append((chapter, parts.get(chapter, 0), len(msgs), sum(len(glosses(m.string, data)) for m in msgs)))
    return sorted(rows, key=lambda r: (order.index(r[0]) if r[0] in order else len(order), r[0]))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("config")
    c.add_argument("which", choices=list(OVERRIDES))
    c.add_argument("dest", type=Path)
    sub.add_parser("extract")
    sub.add_parser("update")
    k = sub.add_parser("check")
    k.add_argument("--no-extract", action="store_true", help="use the messages already in _build/gettext")
    k.add_argument("--only", help="one chapter, e.g. nbs/02_attention")
    sub.add_parser("stats")
    sub.add_parser("density", help="glosses per 100 translated messages, per chapter and per part")
    sub.add_parser("site", help="_build/html (English) and _build/zh_CN/_build/html -> _build/site/{en,zh_CN}/")
    t = sub.add_parser("todo", help="a chapter's messages without a translation, as JSON {English: \"\"}")
    t.add_argument("chapter")
    f = sub.add_parser("fill", help="write a JSON file {English message: Chinese} into a chapter's catalog")
    f.add_argument("chapter")
    f.add_argument("json", type=Path)
    args = p.parse_args(argv)
    if args.command == "config":
        print(write_config(args.which, args.dest))
    elif args.command == "extract":
        print(f"{len(templates(extract()))} catalogs of English messages in {GETTEXT}")
    elif args.command == "update":
        memory = translation_memory()  # read before sphinx-intl drops the messages that moved away
        subprocess.run([sys.executable, "-m", "sphinx_intl", "update", "-p", str(GETTEXT), "-l", "zh_CN",
                        "-d", str(LOCALES), "--line-width", "-1", "--no-obsolete"], check=True)
        carried = carry(memory)
        print(f"update: {sum(carried.values())} moved message(s) kept their translation"
              + "".join(f"\n  {chapter}: {n}" for chapter, n in sorted(carried.items()) if n))
    elif args.command == "check":
        if not args.no_extract:
            extract()
        problems = check(only=args.only)
        for line in problems:
            print(f"translation: {line}", file=sys.stderr)
        if problems:
            print(f"translation: {len(problems)} problem(s); translate in locales/zh_CN/LC_MESSAGES/ "
                  "(python tools/book_i18n.py update adds the new English messages)", file=sys.stderr)
            return 1
        print(f"translation: {args.only or f'{len(catalogs())} catalogs'}: exactly the English messages, all translated")
    elif args.command == "site":
        site = assemble_site({"en": REPO / "_build" / "html", "zh_CN": REPO / "_build" / "zh_CN" / "_build" / "html"})
        print(site)
        # the figures of the Chinese edition, with Chinese labels (kept as the English edition executed)
        import figure_i18n
        if figure_i18n.translate_site(site / "zh_CN"):
            return 1
    elif args.command == "todo":
        import json
        todo = {m.id: "" for m in _read(catalogs()[args.chapter]) if m.id and (not m.string or m.fuzzy)}
        print(json.dumps(todo, ensure_ascii=False, indent=1))
    elif args.command == "fill":
        import json
        print(f"{fill(args.chapter, json.loads(args.json.read_text(encoding='utf-8')))} messages written")
    elif args.command == "density":
        rows = density()
        for chapter, part, n, g in rows:
            print(f"{chapter:28} part {part} {n:5d} messages {g:4d} glosses {100 * g / max(n, 1):5.1f} per 100")
        for part in sorted({r[1] for r in rows}):
            n, g = sum(r[2] for r in rows if r[1] == part), sum(r[3] for r in rows if r[1] == part)
            print(f"{'part ' + str(part):28} {n:12d} messages {g:4d} glosses {100 * g / max(n, 1):5.1f} per 100")
        n, g = sum(r[2] for r in rows), sum(r[3] for r in rows)
        print(f"{'total':28} {n:12d} messages {g:4d} glosses {100 * g / max(n, 1):5.1f} per 100")
    else:
        rows = stats()
        for chapter, n, done, fuzzy, words in rows:
            print(f"{chapter:28} {n:5d} messages {done:5d} translated {fuzzy:3d} fuzzy {words:6d} English words")
        print(f"{'total':28} {sum(r[1] for r in rows):5d} messages {sum(r[2] for r in rows):5d} translated "
              f"{sum(r[3] for r in rows):3d} fuzzy {sum(r[4] for r in rows):6d} English words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
