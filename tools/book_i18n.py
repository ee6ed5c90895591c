"""The Chinese edition (中文版): configuration, message catalogs and their checks.

The book's prose is translated through Sphinx's gettext catalogs, one `.po` file per chapter under
locales/zh_CN/LC_MESSAGES/ (compiled `.mo` files are not committed). Code, outputs and figures are not in the
catalogs: both editions show the same ones.

    python tools/book_i18n.py config zh_CN _build/_config.zh_CN.yml   # the Chinese edition's _config.yml
    python tools/book_i18n.py extract                                 # the English messages -> _build/gettext/*.pot
    python tools/book_i18n.py update                                  # merge them into the catalogs (new entries empty)
    python tools/book_i18n.py check                                   # CI: every message translated, nothing stale
    python tools/book_i18n.py stats                                   # messages and words per chapter
    python tools/book_i18n.py site                                    # both editions -> _build/site/

`check` compares message ids, not the location comments: it fails, with one line per problem naming the
chapter and the message, when an English message has no translation, when a translation is fuzzy, when a
catalog holds a message that the English text no longer has, or when a translation breaks the markup that both
editions share (math, inline code, roles such as {cite:p}, links).
"""
from __future__ import annotations

import argparse
import copy
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


def toc_captions() -> list[str]:
    return [part["caption"] for part in yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))["parts"]]


def extract() -> Path:
    "The English messages of every page, as _build/gettext/**/*.pot."
    config = write_config("gettext", REPO / "_build" / "_config.gettext.yml")
    shutil.rmtree(GETTEXT, ignore_errors=True)
    subprocess.run(["jupyter-book", "build", str(REPO), "--config", str(config), "--builder", "custom",
                    "--custom-builder", "gettext", "--path-output", str(REPO / "_build" / "gettext-build")],
                   check=True, stdout=subprocess.DEVNULL)
    built = REPO / "_build" / "gettext-build" / "_build" / "gettext"
    shutil.copytree(built, GETTEXT)
    return GETTEXT


def templates(root: Path = GETTEXT) -> dict[str, Path]:
    "{chapter: its .pot}, the chapter named by its path without suffix (nbs/01_attention)."
    return {p.relative_to(root).with_suffix("").as_posix(): p for p in sorted(root.rglob("*.pot"))}


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
    return problems


GLOSSARY = LOCALES / "glossary.yml"
_NOT_PROSE = re.compile(r"\$\$.+?\$\$|\$[^$\n]+?\$|``.+?``|`[^`\n]+?`|\]\([^)]*\)|https?://\S+", re.S)


def glossary(path: Path = GLOSSARY) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for term in data["terms"]:
        term["regex"] = re.compile(r"(?<![\w-])(?:" + term.get("pattern", re.escape(term["en"])) + r")(?![\w-])", re.I)
    return data


def is_prose(msgid: str) -> bool:
    "Whether a message has words to translate (three in a row), not only math, code or names."
    text = _NOT_PROSE.sub(" ", msgid)
    text = re.sub(r"\\text\{([^}]*)\}", r" \1 ", text)  # words in a formula's \text{} are prose
    text = re.sub(r"[_^](\{[^{}]*\}|\w)|\\[A-Za-z]+|[{}]", " ", text)  # sub/superscripts and commands are not
    return bool(re.search(r"[A-Za-z]{2,}[,.;:]?\s+[A-Za-z]{2,}[,.;:]?\s+[A-Za-z]{2,}", text))


def glossary_problems(chapter: str, msgid: str, msgstr: str, data: dict) -> list[str]:
    "The glossary's terms that the English message uses and its translation does not."
    if msgstr == msgid and not is_prose(msgid):  # a formula or a name, copied as it is: nothing to translate
        return []
    text = _NOT_PROSE.sub(" ", msgid)
    for name in data.get("keep", []):
        text = text.replace(name, " ")
    excused = {e["term"] for e in data.get("exceptions", [])
               if e["chapter"] == chapter and msgid.startswith(e["message"])}
    return [f"glossary: {t['en']!r} is {t['zh']!r}" for t in data["terms"]
            if t["en"] not in excused and t["regex"].search(text) and t["zh"] not in msgstr]


def gloss_problems(chapter: str, messages: list, data: dict) -> list[str]:
    "Glossary terms a chapter uses without ever giving their English in parentheses: 注意力（attention）."
    problems = []
    skip = {u["term"] for u in data.get("unglossed", []) if u["chapter"] == chapter}
    prose = [_NOT_PROSE.sub(" ", m.id) for m in messages if is_prose(m.id)]  # the English, stripped once
    for t in data["terms"]:
        if t["en"] in skip or not any(t["regex"].search(text) for text in prose):
            continue
        en, zh = t.get("pattern", re.escape(t["en"])), re.escape(t["zh"])
        gloss = re.compile(zh + r"[^。；]{0,12}?[（(][^）)]*?(?:" + en + r")|[（(][^）)]*" + zh + r"[^）)]*?(?:" + en + ")", re.I)
        if not any(gloss.search(m.string) for m in messages):
            problems.append(f"glossary: {t['en']!r} is used but never given as {t['zh']}（{t['en']}） in this chapter")
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
    for chapter in sorted(set(pots) | set(pos)):
        if only and chapter != only:
            continue
        if chapter not in pos:
            problems.append(f"{chapter}: no catalog locales/{lang}/LC_MESSAGES/{chapter}.po")
            continue
        if chapter not in pots:
            problems.append(f"{chapter}: catalog {pos[chapter].relative_to(REPO)} belongs to no page of the book")
            continue
        english = {m.id for m in _read(pots[chapter]) if m.id}
        translated = {m.id: m for m in _read(pos[chapter]) if m.id}
        problems += [f"{chapter}: {p}" for p in gloss_problems(
            chapter, [m for m in translated.values() if m.string and not m.fuzzy], terms)]
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
                             + glossary_problems(chapter, msgid, m.string, terms)]
    return problems


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
    k.add_argument("--only", help="one chapter, e.g. nbs/01_attention")
    sub.add_parser("stats")
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
        subprocess.run([sys.executable, "-m", "sphinx_intl", "update", "-p", str(GETTEXT), "-l", "zh_CN",
                        "-d", str(LOCALES), "--line-width", "-1", "--no-obsolete"], check=True)
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
        print(assemble_site({"en": REPO / "_build" / "html", "zh_CN": REPO / "_build" / "zh_CN" / "_build" / "html"}))
    elif args.command == "todo":
        import json
        todo = {m.id: "" for m in _read(catalogs()[args.chapter]) if m.id and (not m.string or m.fuzzy)}
        print(json.dumps(todo, ensure_ascii=False, indent=1))
    elif args.command == "fill":
        import json
        print(f"{fill(args.chapter, json.loads(args.json.read_text(encoding='utf-8')))} messages written")
    else:
        rows = stats()
        for chapter, n, done, fuzzy, words in rows:
            print(f"{chapter:28} {n:5d} messages {done:5d} translated {fuzzy:3d} fuzzy {words:6d} English words")
        print(f"{'total':28} {sum(r[1] for r in rows):5d} messages {sum(r[2] for r in rows):5d} translated "
              f"{sum(r[3] for r in rows):3d} fuzzy {sum(r[4] for r in rows):6d} English words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
