"""The Chinese edition's figures: every figure of the book drawn again with Chinese labels.

The Chinese edition shows the notebooks' committed outputs, and a figure's labels are pixels there, out of reach of
the catalogs that translate the prose. So, while tools/build_site.sh executes the English edition, each IPython
kernel keeps every figure it shows (the matplotlib Figure, pickled, under the SHA-256 of the PNG it displayed;
`install_hook`, started by tools/ipython_kernel_config.py when BOOK_FIGURES_DIR is set). Jupyter Book names an
output image by the same SHA-256 of its bytes. After both editions are built, `translate_site` takes each image of
the Chinese edition by its place (page, and its position among the page's images), finds the image in the same place
of the English edition, which this build executed, and its kept figure; replaces every label that
locales/zh_CN/figures.yml translates, draws the figure again with the same settings, and puts it in that place (with
its size). The Chinese edition thus shows this build's figures, as the English one does, even where the committed
output is not reproduced bit for bit (a plot of measured times).

    python tools/figure_i18n.py _build/site/zh_CN [--figures _build/figures]   # what `book_i18n.py site` runs

A figure that cannot be redrawn (the kernel could not keep it, or a page's images do not match its English page's)
fails the step, and so does a label that needs translating and has none: numbers, mathematics, and tick labels that
are data (tokens, sizes) are left as they are.
"""
from __future__ import annotations

import argparse
import binascii
import hashlib
import logging
import os
import pickle
import re
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CATALOG = REPO / "locales" / "zh_CN" / "figures.yml"
FIGURES = REPO / "_build" / "figures"
CJK_FONT = "WenQuanYi Micro Hei"  # installed by tools/install_system.sh (fonts-wqy-microhei)


# ---- in the kernel: keep every figure shown ---------------------------------------------------------------------
def install_hook(directory: str | Path) -> None:
    """Wrap IPython's `print_figure` (which the inline backend calls to make a figure's PNG): it returns exactly what
    it returned before, and keeps the figure and the arguments it was drawn with in DIRECTORY/<sha256 of the PNG>."""
    import IPython.core.pylabtools as pylabtools

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    original = pylabtools.print_figure

    def print_figure(fig, fmt="png", bbox_inches="tight", base64=False, **kwargs):
        data = original(fig, fmt, bbox_inches, base64, **kwargs)
        if data is not None and fmt in ("png", "retina"):
            png = binascii.a2b_base64(data) if base64 else data
            name = hashlib.sha256(png).hexdigest()
            try:
                blob = pickle.dumps({"figure": fig, "fmt": fmt, "bbox_inches": bbox_inches, "kwargs": kwargs})
                (directory / f"{name}.pickle").write_bytes(blob)
            except Exception as e:  # noqa: BLE001 -- a figure that cannot be kept stays English (and is listed)
                (directory / f"{name}.error").write_text(f"{type(e).__name__}: {e}")
        return data

    pylabtools.print_figure = print_figure


# ---- after the build: translate the labels and draw again -------------------------------------------------------
def read_catalog(path: Path = CATALOG) -> dict[str, str]:
    "English label -> Chinese label; `{}` in a label stands for any text, carried into the translation in order."
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


def _patterns(catalog: dict[str, str]) -> list[tuple[re.Pattern, str]]:
    "The entries with `{}`, the most literal text first (so that 'self-attention, fused ({})' wins over '{} ({})')."
    found = []
    for english, chinese in sorted(catalog.items(), key=lambda kv: -len(kv[0].replace("{}", ""))):
        if "{}" in english:
            regex = "^" + "(.+?)".join(re.escape(part) for part in english.split("{}")) + "$"
            found.append((re.compile(regex, re.S), chinese))
    return found


def translate(text: str, catalog: dict[str, str], patterns=None) -> str | None:
    """TEXT in Chinese, or None when the catalog has no entry for it. What a `{}` stands for is translated in turn
    when it has words (and the entry does not apply if that fails), and carried over as it is when it has none."""
    if text in catalog:
        return catalog[text]
    patterns = patterns if patterns is not None else _patterns(catalog)
    for regex, chinese in patterns:
        match = regex.match(text)
        if not match:
            continue
        parts = [translate(g, catalog, patterns) if needs_words(g) else g for g in match.groups()]
        if None not in parts:
            return chinese.format(*parts)
    return None


_MATH_ONLY = re.compile(r"^\s*(\$[^$]*\$\s*)+$")


def needs_words(text: str) -> bool:
    "Whether TEXT has words to translate: two Latin letters in a row outside $...$ (not a number, not a formula)."
    if not text.strip() or _MATH_ONLY.match(text):
        return False
    return bool(re.search(r"[A-Za-z]{2}", re.sub(r"\$[^$]*\$", "", text)))


def _tick_labels(fig) -> set[int]:
    "The ids of FIG's tick labels (they show data: numbers, tokens, sizes)."
    found = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in [*axis.majorTicks, *axis.minorTicks]:
                found.update((id(tick.label1), id(tick.label2)))
    return found


def translate_figure(fig, catalog: dict[str, str]) -> list[str]:
    """Replace, in place, every label of FIG that the catalog translates, in a font with Chinese glyphs; the labels
    with words that it does not translate (tick labels excepted: they are data, such as tokens)."""
    from matplotlib.text import Text
    patterns, ticks = _patterns(catalog), _tick_labels(fig)
    missing = []
    for artist in fig.findobj(Text):
        text = artist.get_text()
        chinese = translate(text, catalog, patterns)
        if chinese is not None:
            artist.set_text(chinese)
            families = [f for f in artist.get_fontfamily() if f != CJK_FONT]
            # matplotlib falls back from font to font glyph by glyph, but mathtext draws the words around a formula
            # in the first font only: there the Chinese font goes first
            artist.set_fontfamily([CJK_FONT, *families] if "$" in chinese else [*families, CJK_FONT])
        elif needs_words(text) and id(artist) not in ticks:
            missing.append(text)
    return missing


class _Messages(logging.Handler):
    "Keeps the messages logged while a figure is drawn."
    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def redraw(kept: Path, catalog: dict[str, str]) -> tuple[bytes, list[str], int]:
    """The kept figure with Chinese labels, as PNG bytes drawn as the inline backend drew it; its untranslated labels;
    how many pixels the page shows per pixel of the PNG across (retina: 2)."""
    import matplotlib
    matplotlib.use("Agg")
    import IPython.core.pylabtools as pylabtools

    saved = pickle.loads(kept.read_bytes())
    fig = saved["figure"]
    missing = translate_figure(fig, catalog)
    # a character that no font draws becomes a box (tofu): matplotlib says so in a warning or a log message
    tofu = _Messages()
    logging.getLogger("matplotlib").addHandler(tofu)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            png = pylabtools.print_figure(fig, saved["fmt"], saved["bbox_inches"], False, **saved["kwargs"])
    finally:
        logging.getLogger("matplotlib").removeHandler(tofu)
    missing += [f"(drawn as boxes) {m}" for m in tofu.messages + [str(w.message) for w in caught]
                if "glyph" in m.lower()]
    import matplotlib.pyplot as plt
    plt.close(fig)
    return png, missing, 2 if saved["fmt"] == "retina" else 1


def png_size(png: bytes) -> tuple[int, int]:
    "(width, height) in pixels, from the PNG header."
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


IMAGE_TAG = re.compile(r'<img\b[^>]*?\bsrc="([^"]*?_images/)([^"/]+\.png)"[^>]*>')


def _images_in_order(text: str) -> list[re.Match]:
    "The page's images from _images/, in the order the page shows them."
    return list(IMAGE_TAG.finditer(text))


def translate_site(site: Path, figures: Path = FIGURES, catalog_path: Path = CATALOG,
                   require_font: bool = True, english: Path | None = None) -> int:
    """Redraw, with Chinese labels, every figure of the built edition in SITE, found by its place: the n-th image of a
    page is the n-th image of the same page of the English edition (ENGLISH, default SITE's sibling `en`), which this
    build executed, and whose figure the kernel kept under the SHA-256 of that image. The redrawn figure goes into the
    page in the place of the committed output's image (which a timing plot, say, does not reproduce bit for bit).
    1 if a label with words has no translation, if a figure of the English edition cannot be redrawn, if a page shows
    another number of images than its English page, or (with REQUIRE_FONT) if matplotlib has no Chinese font; else 0.
    Prints what it did."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import font_manager
    if require_font and not any(CJK_FONT in f.name for f in font_manager.fontManager.ttflist):
        print(f"figures: matplotlib finds no {CJK_FONT} font (tools/install_system.sh installs it)")
        return 1
    english = english if english is not None else site.parent / "en"
    catalog = read_catalog(catalog_path)
    problems, missing = [], {}
    todo: dict[str, list[tuple[Path, int]]] = {}  # English image -> the (page, place) that show it
    pages = {}
    for page in sorted(site.rglob("*.html")):
        text = page.read_text(encoding="utf-8")
        ours = _images_in_order(text)
        if not ours:
            continue
        twin = english / page.relative_to(site)
        theirs = _images_in_order(twin.read_text(encoding="utf-8")) if twin.exists() else []
        where = str(page.relative_to(site))
        if len(theirs) != len(ours):
            problems.append(f"{where} shows {len(ours)} images, its English page {twin} {len(theirs)}: "
                            "its notebook's committed outputs are not today's (run it again)")
            continue
        pages[page] = text
        for place, (mine, other) in enumerate(zip(ours, theirs)):
            image = other.group(2)
            kept = figures / f"{Path(image).stem}.pickle"
            if kept.exists():
                todo.setdefault(image, []).append((page, place))
            elif image != mine.group(2) or (figures / f"{Path(image).stem}.error").exists():
                # an image this build executed, of a figure the hook did not keep: it cannot be redrawn
                error = figures / f"{Path(image).stem}.error"
                why = f"not kept: {error.read_text()}" if error.exists() else "no figure kept for it"
                problems.append(f"{where}, image {place + 1} ({image}): {why}")
            # else the same file in both editions and no figure drew it (a picture of the prose): as it is
    names = list(todo)
    # one process a core: drawing is most of the step (about 40 s for the book's 61 figures, one after another)
    with ProcessPoolExecutor(max_workers=min(len(names), os.cpu_count() or 1) or 1) as pool:
        drawn = list(pool.map(redraw, [figures / f"{Path(n).stem}.pickle" for n in names], [catalog] * len(names)))
    new_images: dict[Path, dict[int, tuple[str, tuple[int, int]]]] = {}
    for name, (png, untranslated, density) in zip(names, drawn):
        for label in untranslated:
            missing.setdefault(label, set()).update(str(p.relative_to(site)) for p, _ in todo[name])
        (site / "_images" / name).write_bytes(png)
        shown = tuple(n // density for n in png_size(png))
        for page, place in todo[name]:
            new_images.setdefault(page, {})[place] = (name, shown)
    for page, places in new_images.items():
        text, out, at = pages[page], [], 0
        for place, match in enumerate(_images_in_order(text)):
            if place not in places:
                continue
            name, (width, height) = places[place]
            tag = match.group(0).replace(match.group(2), name)  # src and alt
            tag = re.sub(r"width: \d+px; height: \d+px;", f"width: {width}px; height: {height}px;", tag)
            out += [text[at:match.start()], tag]
            at = match.end()
        page.write_text("".join(out) + text[at:], encoding="utf-8")
    redrawn = sum(len(v) for v in todo.values())
    print(f"figures: {redrawn} of {redrawn + len(problems)} figures of {site} drawn again with Chinese labels, "
          f"each in its place (as {english} executed it)")
    for item in problems:
        print(f"  FAIL {item}")
    for label, where in sorted(missing.items()):
        print(f"  FAIL no translation in {catalog_path.relative_to(REPO)} for the label {label!r} "
              f"({', '.join(sorted(where))})")
    return 1 if missing or problems else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("site", type=Path, help="the built Chinese edition, e.g. _build/site/zh_CN")
    ap.add_argument("--figures", type=Path, default=FIGURES, help="the figures the English build kept")
    args = ap.parse_args(argv)
    if not args.figures.is_dir():
        sys.exit(f"{args.figures}: no kept figures (tools/build_site.sh keeps them while it executes the book)")
    return translate_site(args.site, args.figures)


if __name__ == "__main__":
    sys.exit(main())
