"""The Chinese edition's figures: every figure of the book drawn again with Chinese labels.

The Chinese edition shows the notebooks' committed outputs, and a figure's labels are pixels there, out of reach of
the catalogs that translate the prose. So, while tools/build_site.sh executes the English edition, each IPython
kernel keeps every figure it shows (the matplotlib Figure, pickled, under the SHA-256 of the PNG it displayed;
`install_hook`, started by tools/ipython_kernel_config.py when BOOK_FIGURES_DIR is set). Jupyter Book names an
output image by the same SHA-256 of its bytes, so after both editions are built, `translate_site` finds each image
of the Chinese edition among the kept figures, replaces every label that locales/zh_CN/figures.yml translates, draws
the figure again with the same settings, and writes it over the English image (and its size into the pages).

    python tools/figure_i18n.py _build/site/zh_CN [--figures _build/figures]   # what `book_i18n.py site` runs

An image that no executed figure matches (its committed output differs from what the code draws today, e.g. a plot
of measured times) keeps its English labels and is listed. A label that needs translating and has none fails the
step: numbers, mathematics, and tick labels that are data (tokens, sizes) are left as they are.
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


def translate_site(site: Path, figures: Path = FIGURES, catalog_path: Path = CATALOG,
                   require_font: bool = True) -> int:
    """Redraw every image of the built edition in SITE that a kept figure matches, with Chinese labels; 1 if a label
    with words has no translation (or, with REQUIRE_FONT, matplotlib has no Chinese font), else 0. Prints what it
    did."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import font_manager
    if require_font and not any(CJK_FONT in f.name for f in font_manager.fontManager.ttflist):
        print(f"figures: matplotlib finds no {CJK_FONT} font (tools/install_system.sh installs it)")
        return 1
    catalog = read_catalog(catalog_path)
    images = sorted((site / "_images").glob("*.png"))
    pages = list(site.rglob("*.html"))
    html = {p: p.read_text(encoding="utf-8") for p in pages}
    redrawn, english, missing = 0, [], {}
    todo = []  # (image, its kept figure, the pages that show it)
    for image in images:
        kept = figures / f"{image.stem}.pickle"
        used_in = [p for p, text in html.items() if image.name in text]
        if not used_in:
            continue  # an image of no page (a logo, a figure of a cell that is not shown)
        if not kept.exists():
            error = figures / f"{image.stem}.error"  # drawn today, but the hook could not pickle it
            why = f"not kept: {error.read_text()}" if error.exists() else "no executed figure draws this image today"
            english.append(f"{image.name} ({', '.join(sorted(str(p.relative_to(site)) for p in used_in))}): {why}")
            continue
        todo.append((image, kept, used_in))
    # one process a core: drawing is most of the step (about 40 s for the book's 61 figures, one after another)
    with ProcessPoolExecutor(max_workers=min(len(todo), os.cpu_count() or 1) or 1) as pool:
        drawn = list(pool.map(redraw, [kept for _, kept, _ in todo], [catalog] * len(todo)))
    for (image, _, used_in), (png, untranslated, density) in zip(todo, drawn):
        for label in untranslated:
            missing.setdefault(label, set()).update(str(p.relative_to(site)) for p in used_in)
        image.write_bytes(png)
        shown = [n // density for n in png_size(png)]
        style = re.compile(r'(src="[^"]*' + re.escape(image.name) + r'"[^>]*?style=")width: \d+px; height: \d+px;')
        for page in used_in:
            html[page] = style.sub(rf"\g<1>width: {shown[0]}px; height: {shown[1]}px;", html[page])
        redrawn += 1
    for page, text in html.items():
        page.write_text(text, encoding="utf-8")
    print(f"figures: {redrawn} of {redrawn + len(english)} figures of {site} drawn again with Chinese labels")
    for item in english:
        print(f"  kept in English: {item}")
    for label, where in sorted(missing.items()):
        print(f"  FAIL no translation in {catalog_path.relative_to(REPO)} for the label {label!r} "
              f"({', '.join(sorted(where))})")
    return 1 if missing else 0


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
