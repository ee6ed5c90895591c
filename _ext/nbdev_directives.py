"""Make nbdev notebooks read well in Jupyter Book.

myst-nb shows nbdev's `#|` directive lines (`#| export`, `#| hide`, ...) as ordinary comments
and has no option against it. This Sphinx extension rewrites each notebook as it is read
(`source-read`, before myst-nb parses and executes it):

* leading `#|` lines are removed from code cells;
* `hide` -> the `remove-cell` tag, `echo: false` -> `remove-input`, `output: false` ->
  `remove-output`, `eval: false` -> `skip-execution` (the same meaning nbdev gives them);
  `fold` -> `hide-input`: the code is folded behind a "Show code cell source" button (for plumbing that
  the prose describes, such as argument parsing; nbdev drops the line when it exports the cell);
  `fold: output` -> `hide-output`: a long output (a `--help` text, a JSON dump) folded the same way;
* `export`/`exports`/`exporti` -> the `exported` tag, which `_static/custom.css` turns into a
  small label naming the module the cell is exported to, so exported code is marked the
  same way on every page.

It also serves MathJax from `_mathjax/tex-svg.js` when that file exists (the build
scripts put it there from the npm `mathjax` package), so math renders offline.
"""
from __future__ import annotations

import gettext
import html
import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms.post_transforms import SphinxPostTransform

_DIRECTIVE = re.compile(r"^\s*#\|\s*(?P<body>.*)$")
_TAGS = {"hide": "remove-cell", "echo: false": "remove-input", "output: false": "remove-output",
         "eval: false": "skip-execution", "fold": "hide-input", "fold: output": "hide-output"}
_EXPORTS = ("export", "exports", "exporti")


def _split_directives(source: str) -> tuple[list[str], str]:
    "The `#|` directive bodies at the top of a cell, and the code below them."
    lines = source.splitlines(keepends=True)
    directives = []
    while lines and (m := _DIRECTIVE.match(lines[0])):
        directives.append(m["body"].strip())
        lines.pop(0)
    return directives, "".join(lines)


def _add_tag(cell: dict, tag: str) -> None:
    tags = cell.setdefault("metadata", {}).setdefault("tags", [])
    if tag not in tags:
        tags.append(tag)


def rewrite_notebook(text: str) -> str:
    "Rewrite one notebook (JSON text) as described in the module docstring."
    nb = json.loads(text)
    # the lexer for code cells: kernels write it when they execute a notebook; a build that does not execute
    # (the Chinese edition) needs it too, or `!command` lines in IPython cells fail to highlight as Python
    nb.setdefault("metadata", {}).setdefault("language_info", {"name": "python", "pygments_lexer": "ipython3"})
    module = None
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
        directives, code = _split_directives(source)
        if not directives:
            continue
        for d in directives:
            if d.startswith("default_exp"):
                module = d.split(maxsplit=1)[1].strip() if len(d.split()) > 1 else None
            key = re.sub(r"\s+", " ", d.lower())
            if key in _TAGS:
                _add_tag(cell, _TAGS[key])
            if key.split(" ")[0] in _EXPORTS:
                _add_tag(cell, "exported")
                if module:
                    cell["metadata"]["exported_to"] = f"annotated_transformer.{module}"
        cell["source"] = code
        if not code.strip():  # a cell that held only directives shows nothing
            _add_tag(cell, "remove-cell")
    return json.dumps(nb)


# The labels of folded answers (`<details><summary>LABEL</summary>` in markdown cells: folded in Jupyter and on
# the website alike). The HTML is not a message of the catalogs, so a translated edition swaps the label here.
SUMMARY_LABELS = {"zh_CN": {"Expected outcome": "预期结果", "Answer": "答案"}}


def translate_summaries(text: str, language: str | None) -> str:
    "Replace the `<summary>` labels of folded answers by LANGUAGE's (unchanged for English or an unknown one)."
    for english, translated in SUMMARY_LABELS.get(language or "en", {}).items():
        text = text.replace(f"<summary>{english}</summary>", f"<summary>{translated}</summary>")
    return text


def _on_source_read(app, docname: str, source: list[str]) -> None:
    if Path(app.env.doc2path(docname)).suffix == ".ipynb":
        source[0] = translate_summaries(rewrite_notebook(source[0]), app.config.language)


def _use_local_mathjax(app, config) -> None:
    # Kept out of _static/: jupyter-book adds every .js file there to every page, which would
    # load MathJax a second time next to the copy Sphinx's mathjax extension loads.
    local = Path(app.srcdir) / "_mathjax" / "tex-svg.js"
    if local.exists():
        config.html_static_path = [*config.html_static_path, "_mathjax"]
        config.mathjax_path = "tex-svg.js"


def _tidy_page(app, pagename, templatename, context, doctree) -> None:
    """Two fixes for console errors that headless Chromium shows on every page of a
    jupyter-book 1.0.4 site: sphinx-thebe's inline config is registered twice ("Identifier
    'THEBE_JS_URL' has already been declared"), so scripts are kept once; and the theme gets a
    valid colour mode instead of an empty one ("Got invalid theme mode")."""
    scripts = context.get("script_files")
    if scripts:
        seen, unique = set(), []
        for js in scripts:
            key = (str(js.filename or ""), js.attributes.get("body", ""))
            if key not in seen:
                seen.add(key)
                unique.append(js)
        scripts[:] = unique
    if not context.get("default_mode"):
        context["default_mode"] = "auto"


def language_link(pagename: str, here: str, there: str) -> str:
    "The same page in the edition THERE, relative to PAGENAME in the edition HERE (site/HERE/..., site/THERE/...)."
    return "../" * (pagename.count("/") + 1) + f"{there}/{pagename}.html"


def _language_switch(app, pagename, templatename, context, doctree) -> None:
    """Every page links to the same page in the other editions (`language_switch` = {code: label}): the
    editions are built side by side into one site, site/en/ and site/zh_CN/, with the same page paths."""
    editions = app.config.language_switch or {}
    here = app.config.language or "en"
    if not editions or "body" not in context:
        return
    links = " · ".join(f'<a href="{language_link(pagename, here, code)}" hreflang="{code.replace("_", "-")}" '
                       f'lang="{code.replace("_", "-")}">{label}</a>'
                       for code, label in editions.items() if code != here)
    context["body"] = f'<p class="language-switch">{links}</p>\n' + context["body"]


# The interface of a translated edition (`interface_strings` = {English: translation}, from
# locales/LANG/interface.yml): the theme's, Sphinx's and myst-nb's strings that have no translation of their own.
# Three ways in, since they reach the pages three ways: gettext (templates and the themes' Python), myst-nb's fold
# buttons (its configuration, with the English word of the fold's kind put in), and attributes that templates write
# in English without gettext (aria-label="Main", title="Toggle primary sidebar", ...).
_UI_ATTRIBUTE = re.compile(r'(?P<head>\s(?:title|aria-label|data-bs-title|placeholder|alt|data-tooltip)=")'
                           r'(?P<value>[^"]*)"')


class _Interface(gettext.NullTranslations):
    "The interface strings first, then the catalog it stands in front of (no catalog in this language)."

    def __init__(self, strings: dict[str, str]):
        super().__init__()
        self.strings = strings

    def gettext(self, message):
        return self.strings[message] if message in self.strings else super().gettext(message)


def _translate_interface(app) -> None:
    """Every message catalog of the build (Sphinx's and those the theme and extensions added; the chapters' come
    later, as each is read) gives the interface strings first."""
    from sphinx import locale

    strings = app.config.interface_strings or {}
    if not strings:
        return
    for key, translator in list(locale.translators.items()):
        if isinstance(getattr(translator, "_catalog", None), dict):  # in place: the templates hold this object
            translator._catalog.update(strings)
        else:
            interface = _Interface(strings)
            interface.add_fallback(translator)
            locale.translators[key] = interface


class _TranslateFolds(SphinxPostTransform):
    "myst-nb's fold buttons (\"Show code cell source\", ...), after it wrote them (HideInputCells, priority 199)."
    default_priority = 200
    formats = ("html",)

    def run(self, **kwargs) -> None:
        strings = self.app.config.interface_strings or {}
        if not strings:
            return
        for node in self.document.findall(nodes.Element):
            for key in ("prompt_show", "prompt_hide"):
                if node.get(key) in strings:
                    node[key] = strings[node[key]]


def translate_attributes(html_text: str, strings: dict[str, str]) -> str:
    "The labels and tooltips (aria-label, title, ...) of HTML_TEXT whose whole value is a key of STRINGS, translated."
    def swap(m: re.Match) -> str:
        value = html.unescape(m["value"])
        return f'{m["head"]}{html.escape(strings[value])}"' if value in strings else m[0]
    return _UI_ATTRIBUTE.sub(swap, html_text)


def _search_placeholder(app, pagename, templatename, context, doctree) -> None:
    "The search box's placeholder, which sphinx-book-theme composes as translation('Search') + '...'."
    strings = app.config.interface_strings or {}
    if "Search this book..." in strings:
        context["theme_search_bar_text"] = strings["Search this book..."]


def _translate_captions(app, exception) -> None:
    """Part captions of _toc.yml in the translated edition: sphinx-external-toc adds them after the message
    catalogs are applied, so they are replaced in the written pages from `toc_captions` = {English: translation}.
    The interface's attributes in English (`interface_strings`) are translated in the same pass."""
    captions = app.config.toc_captions or {}
    strings = getattr(app.config, "interface_strings", None) or {}
    if exception is not None or not (captions or strings) or app.builder.format != "html":
        return
    for path in Path(app.outdir).rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        new = text
        for english, translated in captions.items():
            new = new.replace(f'<span class="caption-text">{english}</span>',
                              f'<span class="caption-text">{translated}</span>')
        if strings:
            new = translate_attributes(new, strings)
        if new != text:
            path.write_text(new, encoding="utf-8")


def setup(app):
    app.add_config_value("language_switch", {}, "html")
    app.add_config_value("toc_captions", {}, "html")
    app.add_config_value("interface_strings", {}, "html")
    app.connect("builder-inited", _translate_interface)
    app.add_post_transform(_TranslateFolds)
    app.connect("html-page-context", _search_placeholder, priority=999)  # after sphinx-book-theme's
    app.connect("html-page-context", _language_switch)
    app.connect("build-finished", _translate_captions)
    app.connect("source-read", _on_source_read)
    app.connect("config-inited", _use_local_mathjax)
    app.connect("html-page-context", _tidy_page, priority=999)  # after the theme and mathjax handlers
    return {"parallel_read_safe": True, "parallel_write_safe": True}
