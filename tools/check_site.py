"""Check the built website in a real browser (headless Chromium driven by Playwright).

    python tools/check_site.py _build/site/en [--screenshots DIR] [--chromium /usr/bin/chromium]
    python tools/check_site.py _build/site/zh_CN --language zh_CN

For every page in _toc.yml it serves the site on 127.0.0.1, loads the page and checks that
  * the page loads and nothing on it is fetched from outside this machine (offline book);
  * the browser console shows no errors and no script throws;
  * math is typeset: MathJax produced output (mjx-container), no MathJax error, and no raw
    `\\(`, `\\[` or `$$` left in the text outside code;
  * a page whose source has math shows typeset math, and one whose notebook has a figure among its outputs
    shows at least one rendered figure (an image that decoded);
  * nothing is clipped, at a desktop (1280 px) and a phone (390 px) viewport: no element of the page's
    article sticks out of it or hides part of its content, unless it sits in a box with its own scrollbar
    (wide tables, code and equations scroll inside their box), and the page itself never scrolls sideways;
  * at 1280 px no code cell of the short path (the root page and the first part of _toc.yml) scrolls sideways
    (the others are counted in the report);
  * the page links to itself in the other editions (the language switch), and those pages exist;
  * an attention explorer (appendix G) on the page, worked at each width by pointer and keyboard, shows the weights
    of its data (and its data those of its recorded file), in the edition's language and in the dark theme too;
  * (the API reference, api/*: only that each page loads at 1280 px, shows autodoc's entries, fetches nothing
    from outside and logs no console error)
and saves a screenshot of each page at each width. The site's search finds a chapter for a word of its language.
With --language zh_CN (the Chinese edition) each page must also show Chinese text, in a real CJK font (single
characters are screenshot and compared: missing glyphs are drawn as identical boxes), and no markup that a
translation broke: no literal `**`, `$`, `{cite` or `[^` in the text; nor an English interface string (ENGLISH_UI: the
theme's, myst-nb's and the book's buttons, labels, tooltips and CSS-drawn labels, in the page's text, its attributes or
its ::before/::after content; code, outputs, math and the API reference aside). Exit status 1 if any check fails.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import json
import re
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

import yaml
from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def toc_pages(root: Path) -> list[str]:
    "Document names from _toc.yml, in reading order."
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    pages = [toc["root"]]

    def walk(entries):
        for e in entries or []:
            if "file" in e:
                pages.append(e["file"])
            walk(e.get("sections"))
            walk(e.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [re.sub(r"\.(ipynb|md)$", "", p) for p in pages]


def serve(directory: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    class QuietHandler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the check's output readable
            pass

    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


# Runs in the page: waits for MathJax to finish, then reports what a reader would see.
PAGE_REPORT_JS = """
async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; }
  const clone = document.querySelector('main') ? document.querySelector('main').cloneNode(true) : document.body.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-container, .highlight').forEach(e => e.remove());
  const text = clone.textContent;
  const imgs = Array.from(document.querySelectorAll('.cell_output img'));
  return {
    mathjax_loaded: !!(window.MathJax && MathJax.version),
    mathjax_version: window.MathJax && MathJax.version ? MathJax.version : null,
    math_nodes: document.querySelectorAll('mjx-container').length,
    math_errors: document.querySelectorAll('mjx-merror, [data-mjx-error]').length,
    raw_math: (text.match(/\\\\\\(|\\\\\\[|\\$\\$/g) || []).length,
    raw_math_sample: (text.match(/.{0,40}(\\\\\\(|\\\\\\[|\\$\\$).{0,40}/) || [''])[0],
    figures: imgs.filter(i => i.complete && i.naturalWidth > 0).length,
    broken_images: imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(0, 80)),
    title: document.title,
  };
}
"""


# Runs in the page: what sticks out of the article (or is cut off) without a scrollbar of its own to reach it.
CLIPPED_JS = """
() => {
  const article = document.querySelector('article.bd-article') || document.querySelector('main') || document.body;
  const edge = article.getBoundingClientRect();
  const scrolls = e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);
  const cuts = e => ['hidden', 'clip'].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + 1;
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\\s+/).slice(0, 2).join('.') : '');
  const found = [];
  for (const e of article.querySelectorAll('*')) {
    if (found.some(f => f.contains(e))) continue;  // report the outermost element only
    const r = e.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || getComputedStyle(e).position === 'fixed') continue;
    let inScrollBox = false;
    for (let p = e.parentElement; p && p !== article; p = p.parentElement) {
      if (scrolls(p)) { inScrollBox = true; break; }
    }
    if (inScrollBox) continue;
    const sticksOut = r.right > edge.right + 1 || r.left < edge.left - 1;
    if (sticksOut || (cuts(e) && !e.matches('mjx-container *'))) found.push(e);
  }
  return {
    clipped: found.slice(0, 5).map(e => `${name(e)} (${Math.round(e.getBoundingClientRect().width)} px wide` +
      `, scrolls ${e.scrollWidth} px: "${(e.textContent || '').trim().slice(0, 50)}")`),
    count: found.length,
    page_scrolls_sideways: document.documentElement.scrollWidth > window.innerWidth + 1,
  };
}
"""
WIDTHS = {"desktop": 1280, "phone": 390}

# Runs in the page: code cells whose source scrolls sideways in its box. Folded cells are opened first, since a
# reader opens them too. (Only the input: printed outputs may be wide tables.)
CODE_SCROLL_JS = """() => {
  document.querySelectorAll('article details').forEach(d => { d.open = true; });
  const boxes = Array.from(document.querySelectorAll('article .cell_input pre'));
  const wide = boxes.filter(b => b.scrollWidth > b.clientWidth + 1);
  const longest = b => b.textContent.split('\\n').reduce((a, l) => l.length > a.length ? l : a, '');
  return {cells: boxes.length, wide: wide.length, samples: wide.slice(0, 3).map(b => longest(b).slice(0, 60))};
}"""


@functools.lru_cache(maxsize=None)  # read once, not at every page view
def teaching_pages(root: Path) -> set[str]:
    "The learner's short path: the root page and the first part of _toc.yml (tests/test_short_path.py)."
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    return {toc["root"]} | {c["file"] for c in toc["parts"][0]["chapters"]}


# Runs in the page: the links of the language switch, as absolute URLs.
SWITCH_JS = """() => Array.from(document.querySelectorAll('.language-switch a')).map(a => a.href)"""
_SWITCH_STATUS: dict[str, int] = {}  # href -> HTTP status, for the run

# Runs in the page: the text a reader sees (no code, no math), for the translated edition's checks.
TEXT_JS = """() => {
  const clone = (document.querySelector('article.bd-article') || document.body).cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, mjx-container, .highlight, .cell_output').forEach(e => e.remove());
  return clone.textContent;
}"""
LEFTOVER_MARKUP = re.compile(r"\*\*|\$|\{cite|\[\^")
CJK = re.compile(r"[\u4e00-\u9fff]")
PROBE = "注意力\ue000"  # three different characters, and one no font draws (a private-use code point)


def cjk_glyphs_differ(page) -> str | None:
    "None if the probe's Chinese characters are drawn as different glyphs (a real CJK font); else the problem."
    page.evaluate("""(chars) => {
      const box = document.createElement('div');
      box.id = 'cjk-probe';
      box.style.cssText = 'font-size:40px;line-height:1.2;position:relative;z-index:9999;background:#fff';
      for (const c of chars) { const s = document.createElement('span'); s.textContent = c; box.appendChild(s); }
      (document.querySelector('article.bd-article') || document.body).prepend(box);
    }""", PROBE)
    shots = [page.locator("#cjk-probe span").nth(i).screenshot() for i in range(len(PROBE))]
    page.evaluate("() => document.getElementById('cjk-probe').remove()")
    chinese, missing = shots[:-1], shots[-1]
    if len(set(chinese)) < len(chinese):
        return f"different Chinese characters ({PROBE[:-1]}) are drawn identically: no CJK font (tofu boxes)"
    if missing in chinese:
        return "a Chinese character is drawn like a character no font has: no CJK font (tofu boxes)"
    return None


# The interface strings of the theme (sphinx-book-theme, pydata-sphinx-theme), of myst-nb, sphinx-copybutton and Sphinx,
# and of the book's own _ext/ and _static/, in English: a translated edition shows none of them. A string of one word
# must be a whole text (digits and punctuation aside: "© Copyright 2026." is "Copyright"), one of several words may
# be part of one ("Search this book..."). English prose, code, outputs, math and tokens are not interface strings.
ENGLISH_UI = [
    # myst-nb: folded cells (`#| fold`, `#| fold: output`), _static/custom.css: exported cells
    "Show code cell", "Hide code cell", "Toggle hidden content", "exported to",
    # the theme: header, sidebars, footer, buttons and their tooltips
    "Skip to main content", "Back to top", "Search this book", "Search", "Search the docs", "Contents",
    "On this page", "Section Navigation", "Site navigation", "Main", "Page", "Navigation", "previous", "next",
    "Color mode", "Light", "Dark", "System Settings", "Toggle primary sidebar", "Toggle secondary sidebar",
    "Launch interactive content", "Launch on Binder", "Launch on Colab", "Binder logo", "Colab logo", "Launch",
    "Download this page", "Download source file", "Download notebook file", "Print to PDF", "Fullscreen mode",
    "Source repositories", "Repository", "Open issue", "Edit this page", "Suggest edit", "By", "Copyright",
    "Last updated", "The Annotated Transformer authors",
    # Sphinx: permalinks and the search page; sphinx-copybutton; sphinx-togglebutton
    "Link to this heading", "Link to this equation", "Link to this image", "Link to this table", "Link to this code",
    "Link to this definition", "Searching", "Search Results", "Hide Search Matches", "Copy", "Copied",
    "Copy to clipboard", "Failed to copy", "Click to show", "Click to hide",
    # the attention explorer's static figure (inside .at-explorer, which check_explorer reads instead)
    "attention weights of the first example",
]

# Runs in the page: every piece of interface a reader meets, shown or behind a button or a menu: texts, the tooltips,
# labels and placeholders of elements, and what CSS draws with `content:` (::before/::after, `attr()` resolved), as
# [where, text]. Code, outputs, math and anything marked as in another language (the switch's `English`) are left out.
UI_TEXT_JS = """() => {
  const skip = 'pre, code, script, style, noscript, template, mjx-container, .cell_output, .at-explorer';
  const attrs = ['title', 'aria-label', 'placeholder', 'alt', 'data-tooltip', 'data-bs-original-title',
                 'aria-description', 'data-content'];
  const foreign = e => { const l = e.closest('[lang]'); return l && !/^zh/i.test(l.getAttribute('lang')); };
  const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (typeof e.className === 'string' && e.className.trim() ? '.' + e.className.trim().split(/\\s+/)[0] : '');
  const found = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
    acceptNode: n => n.nodeType === 1 && n.matches(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.nodeType === 3) {
      const t = n.textContent.trim();
      if (t && !foreign(n.parentElement)) found.push([name(n.parentElement), t]);
      continue;
    }
    if (foreign(n)) continue;
    for (const a of attrs) {
      const v = n.getAttribute(a);
      if (v && v.trim()) found.push([`${a} of ${name(n)}`, v.trim()]);
    }
    for (const pseudo of ['::before', '::after']) {
      const c = getComputedStyle(n, pseudo).content;
      if (!c || c === 'none' || c === 'normal') continue;
      const text = c.replace(/attr\\(([-\\w]+)\\)/g, (_, a) => JSON.stringify(n.getAttribute(a) || ''))
                    .match(/"(?:[^"\\\\]|\\\\.)*"/g);
      const joined = (text || []).map(s => { try { return JSON.parse(s); } catch (e) { return s.slice(1, -1); } })
                                .join('').trim();
      if (joined) found.push([`${pseudo} of ${name(n)}`, joined]);
    }
  }
  return found;
}"""


def _ui_pattern(string: str) -> re.Pattern:
    words = r"\s+".join(map(re.escape, string.split()))
    if " " in string.strip():  # a phrase: anywhere in the text
        return re.compile(rf"(?<![A-Za-z]){words}(?![A-Za-z])", re.I)
    return re.compile(rf"[\W\d_]*{words}[\W\d_]*", re.I)  # a word: the whole text, digits and punctuation aside


_UI_PATTERNS = [(s, _ui_pattern(s)) for s in ENGLISH_UI]


def english_interface(found: list[list[str]], strings: list[str] | None = None) -> list[str]:
    """The English interface strings among FOUND ([where, text], as UI_TEXT_JS reports them): one problem per
    string and place, e.g. "'Show code cell source' (p.collapsed)"."""
    patterns = _UI_PATTERNS if strings is None else [(s, _ui_pattern(s)) for s in strings]
    problems: list[str] = []
    for where, text in found:
        text = " ".join(text.split())
        for string, pattern in patterns:
            hit = pattern.search(text) if " " in string.strip() else pattern.fullmatch(text)
            if hit:
                line = f"{text[:60]!r} ({where})"
                if line not in problems:
                    problems.append(line)
                break
    return problems


def check_interface(page) -> str | None:
    "None if the page shows no English interface string (ENGLISH_UI); else the problem."
    found = english_interface(page.evaluate(UI_TEXT_JS))
    if not found:
        return None
    return f"{len(found)} English interface strings: {'; '.join(found[:8])}{' ...' if len(found) > 8 else ''}"


def check_search(context, base: str, word: str) -> list[str]:
    "The site's own search finds at least one chapter for WORD."
    page = context.new_page()
    page.goto(f"{base}/search.html?q={word}", wait_until="load")
    try:
        page.wait_for_selector("#search-results ul.search li a", timeout=15000)
    except Exception:  # noqa: BLE001 -- no result in time is the failure reported below
        pass
    hits = page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(e => e.href)")
    page.close()
    chapters = [h for h in hits if "/nbs/" in h]
    print(f"{'ok' if chapters else 'FAIL':4} search for {word!r}: {len(chapters)} chapters")
    return [] if chapters else [f"search for {word!r} finds no chapter"]


def expectations(root: Path, page_name: str) -> tuple[bool, bool]:
    "(has math, has a figure) in the page's source: TeX in its markdown, an image among a notebook's outputs."
    source = root / f"{page_name}.ipynb"
    if not source.exists():
        text = next((p.read_text(encoding="utf-8") for p in root.glob(f"{page_name}.*")), "")
        return bool(re.search(r"\$[^$\n]+\$", text)), False
    cells = json.loads(source.read_text(encoding="utf-8"))["cells"]
    markdown = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    figure = any("image/png" in o.get("data", {}) for c in cells for o in c.get("outputs", []))
    return bool(re.search(r"\$[^$\n]+\$", markdown)), figure


def check_page(context, base: str, page_name: str, screenshots: Path | None,
               root: Path = Path("."), language: str = "en") -> int:
    """Load one page once and check it at every width of WIDTHS; the number of widths at which something is
    wrong (printed). The page is loaded at the first width and resized for the others, as a reader turning a
    tablet would: the layout reflows under the same CSS media queries, and MathJax has typeset once (loading
    each width afresh doubled the check's time for the same verdicts)."""
    problems: list[str] = []  # width-independent: about the page, reported at every width
    (first_name, first_width), *others = WIDTHS.items()
    page = context.new_page()
    page.set_viewport_size({"width": first_width, "height": 900})
    page.on("console", lambda m, pr=problems: m.type == "error" and pr.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e, pr=problems: pr.append(f"script error: {e}"))
    page.on("requestfailed", lambda r, pr=problems: pr.append(f"request failed: {r.url} ({r.failure})"))

    def outside(route, *_):  # (Playwright passes the request too, in recent releases)
        pr = problems
        pr.append(f"fetched from outside the machine: {route.request.url}")
        route.abort()

    page.route(re.compile(r"^(?!http://127\.0\.0\.1[:/]|data:|blob:|about:).*"), outside)
    url = f"{base}/{page_name}.html"
    response = page.goto(url, wait_until="load")
    if response is None or not response.ok:
        problems.append(f"HTTP {response.status if response else 'no response'} for {url}")
    report = page.evaluate(PAGE_REPORT_JS)
    page.wait_for_timeout(200)
    # the page's HTML as served, read apart from the browser: the explorers' data, to compare with what they show
    explorer_html = page.request.get(url).text() if page.query_selector(".at-explorer") else None
    has_math, has_figure = expectations(root, page_name)
    if has_math and not report["mathjax_loaded"]:
        problems.append("MathJax did not load")
    if has_math and report["math_nodes"] == 0:
        problems.append("no typeset math, although the page's source has math")
    if report["math_errors"]:
        problems.append(f"{report['math_errors']} MathJax errors")
    if report["raw_math"]:
        problems.append(f"raw TeX left in the page: {report['raw_math_sample']!r}")
    if has_figure and report["figures"] == 0:
        problems.append("no rendered figure, although the notebook has one among its outputs")
    if report["broken_images"]:
        problems.append(f"images that did not load: {report['broken_images']}")
    switch = page.evaluate(SWITCH_JS)
    if not switch:
        problems.append("no link to the page in the other edition (language switch)")
    for href in switch:
        if href not in _SWITCH_STATUS:  # the same link on every page view: fetched once
            _SWITCH_STATUS[href] = page.request.get(href).status
        status = _SWITCH_STATUS[href]
        if not 200 <= status < 300 or not urlparse(href).path.endswith(f"/{page_name}.html"):
            problems.append(f"the language switch leads to {href} (HTTP {status}), not this page")
    if language != "en":
        text = page.evaluate(TEXT_JS)
        if not CJK.search(text):
            problems.append(f"no {language} text on the page")
        leftover = LEFTOVER_MARKUP.search(text)
        if leftover:
            start = max(0, leftover.start() - 30)
            problems.append(f"markup left in the text: {text[start:leftover.end() + 30]!r}")
        tofu = cjk_glyphs_differ(page)
        if tofu:
            problems.append(tofu)
        english = check_interface(page)
        if english:
            problems.append(english)
    failures = 0
    for width_name, width in [(first_name, first_width), *others]:
        at_width: list[str] = []  # the layout at this width
        if width != first_width:
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_timeout(100)  # let the reflow settle
        if explorer_html is not None:
            at_width += check_explorer(page, explorer_html, page_name, root, language, width)
        clipped = page.evaluate(CLIPPED_JS)
        if clipped["count"]:
            at_width.append(f"{clipped['count']} elements clipped or sticking out without a scrollbar of their "
                            f"own, e.g. {'; '.join(clipped['clipped'])}")
        if clipped["page_scrolls_sideways"]:
            at_width.append("the page scrolls sideways")
        code_note = ""
        if width_name == "desktop":  # code that fits the page: a reader of the short path never scrolls sideways
            code = page.evaluate(CODE_SCROLL_JS)
            code_note = f", {code['wide']} of {code['cells']} code cells scroll sideways"
            if code["wide"] and page_name in teaching_pages(root):
                at_width.append(f"{code['wide']} code cells scroll sideways at {width} px, e.g. {code['samples']}")
        if screenshots is not None:
            screenshots.mkdir(parents=True, exist_ok=True)
            suffix = "" if width_name == "desktop" else f"_{width_name}"
            page.screenshot(path=str(screenshots / f"{Path(page_name).name}{suffix}.png"))
        found = problems + at_width
        print(f"{'ok' if not found else 'FAIL':4} {page_name} at {width} px: {report['math_nodes']} math, "
              f"{report['figures']} figures, MathJax {report['mathjax_version']}{code_note}")
        for pr in found:
            print(f"     - {pr}")
        failures += bool(found)
    page.close()
    return failures


# The attention explorer (appendix G) on a page: the recorded file its data must equal, where it has one.
EXPLORER_RECORDS = {"nbs/22_translate": "results/attention_explorer_deen.json"}
EXPLORER_DATA = re.compile(r'<script type="application/json" class="at-data">(.*?)</script>', re.S)
EXPLORER_WORDS = {"en": "Sentence", "zh_CN": "句子"}  # the first control's label in each edition

# Runs in the page: what the explorer shows now (the readout's rows, the lines left visible) and its colours.
EXPLORER_STATE_JS = """root => {
  const rows = [...root.querySelectorAll('.at-readout tr[data-index]')].map(
      tr => [...tr.querySelectorAll('td')].map(td => td.dataset.weight));
  const lines = [...root.querySelectorAll('.at-linegroup line')].filter(l => !l.classList.contains('at-dim'))
      .map(l => [+l.dataset.q, +l.dataset.k, +l.dataset.h, l.getAttribute('stroke-opacity')]);
  const style = getComputedStyle(root);
  return {rows, lines, title: (root.querySelector('.at-readout-title') || {}).textContent || '',
          label: root.querySelector('.at-control span').textContent, bg: style.backgroundColor, fg: style.color,
          ready: root.classList.contains('at-ready'),
          fallbackHidden: [...root.querySelectorAll('.at-fallback')].every(f => f.hidden)};
}"""


def _luminance(css_colour: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css_colour)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


# The languages of the static figure's sentences that its style would display (the fallback itself is hidden by the
# script, so each sentence's own computed display is read).
FALLBACK_LANGUAGES_JS = """e => Array.from(e.querySelectorAll('.at-fallback [lang]'))
    .filter(s => getComputedStyle(s).display !== 'none').map(s => s.getAttribute('lang'))"""


def check_explorer(page, html: str, page_name: str, root: Path, language: str, width: int) -> list[str]:
    """Work the page's attention explorers as a reader would and compare what they show with their data: choose a
    sentence, the cross-attention (else the first kind), the last layer and the second head; point at a query token
    and read its weights, a key token and its column, move with the keyboard; the data must equal its recorded file
    (where it has one), fit 1 MB, and the dark theme must turn the view dark. Problems, as lines."""
    problems: list[str] = []
    blobs = [json.loads(b) for b in EXPLORER_DATA.findall(html)]
    roots = page.query_selector_all(".at-explorer")
    if len(roots) != len(blobs):
        return [f"explorer: {len(roots)} views on the page but {len(blobs)} data blocks in its HTML"]
    recorded = EXPLORER_RECORDS.get(page_name)
    if recorded and width == WIDTHS["desktop"]:
        record = json.loads((root / recorded).read_text(encoding="utf-8"))
        if not any(b["examples"] == record["examples"] and b.get("statistics") == record["statistics"]
                   for b in blobs):
            problems.append(f"explorer: no view on the page shows {recorded} as recorded")
    for n, (element, data) in enumerate(zip(roots, blobs)):
        size = len(element.evaluate("e => e.outerHTML").encode())
        if size > 1_000_000:
            problems.append(f"explorer {n}: {size:,} bytes on the page (limit 1,000,000)")
        state = element.evaluate(EXPLORER_STATE_JS)
        if not state["ready"] or not state["fallbackHidden"]:
            problems.append(f"explorer {n}: the script did not set the view up (the static figure is still shown)")
            continue
        if state["label"] != EXPLORER_WORDS.get(language, EXPLORER_WORDS["en"]):
            problems.append(f"explorer {n}: its controls say {state['label']!r}, not the {language} words")
        # the sentence under the static figure (seen where no script runs) is in the page's language: CSS picks it
        shown = element.evaluate(FALLBACK_LANGUAGES_JS)
        if shown != ["zh-CN" if language.startswith("zh") else "en"]:
            problems.append(f"explorer {n}: the static figure's sentence would show in {shown}, not {language}")
        alt = element.evaluate("e => (e.querySelector('.at-fallback img') || {}).alt || ''")
        if language.startswith("zh") and english_interface([["the static figure's alt", alt]]):
            problems.append(f"explorer {n}: the static figure's alt text is English ({alt!r})")
        which = min(1, len(data["examples"]) - 1)
        example = data["examples"][which]
        kind = "cross" if "cross" in example["kinds"] else next(iter(example["kinds"]))
        entry = example["kinds"][kind]
        layer, head = len(entry["w"]) - 1, min(1, len(entry["w"][0]) - 1)
        # by position (Playwright would take a value "1" for the label "1" of the option whose value is "0");
        # the head menu starts with "all heads"
        element.query_selector(".at-example").select_option(index=which)
        element.query_selector(".at-kind").select_option(value=kind)
        element.query_selector(".at-layer").select_option(index=layer)
        element.query_selector(".at-head").select_option(index=head + 1)
        w = entry["w"][layer][head]  # [query][key], in units of 1/scale
        as_shown = lambda v: f"{v / data['scale']:.2f}"
        q = min(1, len(w) - 1)
        element.query_selector(f".at-tok[data-side=q][data-i='{q}']").hover()
        state = element.evaluate(EXPLORER_STATE_JS)
        if [r[0] for r in state["rows"]] != [as_shown(v) for v in w[q]]:
            problems.append(f"explorer {n}: query {q} of sentence {which} ({kind}, layer {layer + 1}, head "
                            f"{head + 1}) shows {[r[0] for r in state['rows']]}, recorded {[as_shown(v) for v in w[q]]}")
        if sorted((k, float(o)) for _, k, _, o in state["lines"]) != [(k, v / data["scale"])
                                                                      for k, v in enumerate(w[q]) if v > 0]:
            problems.append(f"explorer {n}: the lines left for query {q} are not its nonzero weights")
        k = len(w[0]) - 1
        element.query_selector(f".at-tok[data-side=k][data-i='{k}']").hover()
        column = [r[0] for r in element.evaluate(EXPLORER_STATE_JS)["rows"]]
        if column != [as_shown(row[k]) for row in w]:
            problems.append(f"explorer {n}: key {k} shows the column {column}")
        page.mouse.move(0, 0)
        element.query_selector(".at-tok[data-side=q][data-i='0']").focus()
        page.keyboard.press("ArrowDown")
        moved = [r[0] for r in element.evaluate(EXPLORER_STATE_JS)["rows"]]
        if len(w) > 1 and moved != [as_shown(v) for v in w[1]]:
            problems.append(f"explorer {n}: ArrowDown from the first query does not show the second's weights")
        page.keyboard.press("Escape")
        if width == WIDTHS["desktop"]:
            theme = page.evaluate("document.documentElement.dataset.theme || ''")
            page.evaluate("document.documentElement.dataset.theme = 'dark'")
            dark = element.evaluate(EXPLORER_STATE_JS)
            page.evaluate(f"document.documentElement.dataset.theme = {json.dumps(theme)}" if theme
                          else "delete document.documentElement.dataset.theme")  # ('' upsets the theme)
            if not _luminance(dark["bg"]) < 0.3 < _luminance(dark["fg"]):
                problems.append(f"explorer {n}: in the dark theme its colours are {dark['fg']} on {dark['bg']}")
    return problems


SEARCH_WORD = {"en": "attention", "zh_CN": "注意力"}
API = "api/"  # the API reference (tools/make_stubs.py): English in both editions, checked lightly (check_api_page)


def check_api_page(context, base: str, page_name: str) -> int:
    """An API reference page, once at the desktop width: it loads, shows what autodoc wrote (the index: a link to
    every module's page), fetches nothing from outside and logs no console error; 1 if not (printed), else 0."""
    problems: list[str] = []
    page = context.new_page()
    page.set_viewport_size({"width": WIDTHS["desktop"], "height": 900})
    page.on("console", lambda m, pr=problems: m.type == "error" and pr.append(f"console error: {m.text}"))
    page.on("pageerror", lambda e, pr=problems: pr.append(f"script error: {e}"))
    page.route(re.compile(r"^(?!http://127\.0\.0\.1[:/]|data:|blob:|about:).*"),
               lambda route, *_: (problems.append(f"fetched from outside: {route.request.url}"), route.abort()))
    url = f"{base}/{page_name}.html"
    response = page.goto(url, wait_until="domcontentloaded")
    if response is None or not response.ok:
        problems.append(f"HTTP {response.status if response else 'no response'} for {url}")
    if page_name.endswith("/index"):
        found = page.locator("table a.reference.internal").count()  # the table of modules and chapters
        what = f"{found} links"
    else:
        found = page.locator("dl.py").count()  # autodoc's entries: classes, functions, methods
        what = f"{found} autodoc entries"
    if not found:
        problems.append(f"no {what.split(' ', 1)[1]}: the reference is empty")
    print(f"{'ok' if not problems else 'FAIL':4} {page_name} at {WIDTHS['desktop']} px: {what}")
    for pr in problems:
        print(f"     - {pr}")
    page.close()
    return bool(problems)


def check(site: Path, root: Path, screenshots: Path | None, chromium: str, language: str = "en",
          only: list[str] | None = None) -> int:
    pages = [p for p in toc_pages(root) if not only or p in only]
    if language != "en" and not only:
        # The API reference is English in every edition, built from the same docstrings: the English check opens
        # every page of it; a translated edition's check opens its index and first module page (its own build and
        # theme, the links between them), not the same English text a second time.
        api = [p for p in pages if p.startswith(API)]
        pages = [p for p in pages if not p.startswith(API) or p in api[:2]]
    server, base = serve(site.resolve().parent)  # the editions side by side: the switch's links must resolve
    base = f"{base}/{site.resolve().name}"
    failures = 0
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
            # One browser context for every page, as one reader's browser: each page is a fresh tab, and the
            # scripts, styles and fonts every page shares (MathJax alone is 2 MB) come from the cache after the
            # first page, as they would for a reader, instead of being fetched and compiled again for each page.
            context = browser.new_context(viewport={"width": WIDTHS["desktop"], "height": 900})
            for page_name in pages:
                if page_name.startswith(API):
                    failures += check_api_page(context, base, page_name)
                else:
                    failures += check_page(context, base, page_name, screenshots, root, language)
            failures += len(check_search(context, base, SEARCH_WORD.get(language, SEARCH_WORD["en"])))
            context.close()
            browser.close()
    finally:
        server.shutdown()
    api = sum(p.startswith(API) for p in pages)
    views = (len(pages) - api) * len(WIDTHS) + api
    print(f"{views - failures}/{views} page views passed ({len(pages) - api} pages at "
          f"{' and '.join(f'{w} px' for w in WIDTHS.values())}, {api} API reference pages at "
          f"{WIDTHS['desktop']} px)")
    return 1 if failures else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("site", type=Path, help="one edition's built HTML folder, e.g. _build/site/en")
    ap.add_argument("--root", type=Path, default=Path("."), help="the book's root (where _toc.yml is)")
    ap.add_argument("--screenshots", type=Path, default=None, help="save one PNG per page here")
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="the Chromium binary")
    ap.add_argument("--language", default="en", help="the edition's language (zh_CN: the Chinese edition's checks)")
    ap.add_argument("--only", nargs="*", help="check only these pages (e.g. nbs/02_attention)")
    args = ap.parse_args(argv)
    if not (args.site / "index.html").exists() and not any(args.site.glob("*.html")):
        sys.exit(f"{args.site} holds no built site: run `jupyter-book build .` first")
    return check(args.site, args.root, args.screenshots, args.chromium, args.language, args.only)


if __name__ == "__main__":
    sys.exit(main())
