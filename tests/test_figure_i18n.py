"""The Chinese edition's figures (tools/figure_i18n.py): the kernel hook keeps each figure under the SHA-256 of the
PNG it displayed without changing that PNG, labels are translated from locales/zh_CN/figures.yml (numbers, formulas
and data tick labels left alone), and a built site's images are drawn again, their sizes carried into the pages."""
import base64
import hashlib
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import figure_i18n as F  # noqa: E402

CATALOG = {"step": "步", "train loss": "训练损失", "layer {}, head {}": "第 {} 层，第 {} 头",
           "Add & Norm": "Add & Norm"}


def test_labels_are_translated_exactly_or_by_pattern():
    assert F.translate("step", CATALOG) == "步"
    assert F.translate("layer 2, head 7", CATALOG) == "第 2 层，第 7 头"
    assert F.translate("Add & Norm", CATALOG) == "Add & Norm"  # a name kept in both editions, said so
    assert F.translate("steps", CATALOG) is None and F.translate("layer 2", CATALOG) is None


@pytest.mark.parametrize("text,words", [("step", True), ("dev perplexity (seed 0)", True), ("0.25", False),
                                        ("$d_k$", False), ("$10^{2}$", False), ("−1.5", False), ("", False),
                                        ("h", False), ("$d_k$ (theory)", True), ("Q", False), ("训练", False)])
def test_what_needs_words(text, words):
    assert F.needs_words(text) == words


def _figure():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [3, 1, 2], label="train loss")
    ax.set_xlabel("step"), ax.set_ylabel("$d_k$")
    ax.set_xticks([0, 1, 2], ["Haus", "ist", "klein"])  # data: tokens, never asked for
    ax.set_title("layer 1, head 2")
    ax.legend()
    return fig


def test_translate_figure_replaces_what_the_catalog_has_and_lists_the_rest():
    fig = _figure()
    fig.suptitle("untranslated words")
    missing = F.translate_figure(fig, CATALOG)
    texts = {t.get_text() for t in fig.findobj(matplotlib.text.Text)}
    assert {"步", "训练损失", "第 1 层，第 2 头", "$d_k$", "Haus"} <= texts
    assert "step" not in texts and missing == ["untranslated words"]
    plt.close(fig)


def test_the_hook_keeps_the_figure_under_the_hash_of_the_png_it_returns(tmp_path, monkeypatch):
    import IPython.core.pylabtools as pylabtools
    monkeypatch.setattr(pylabtools, "print_figure", pylabtools.print_figure)  # restored after the test
    fig = _figure()
    before = pylabtools.retina_figure(fig, base64=True)
    F.install_hook(tmp_path / "kept")
    after = pylabtools.retina_figure(fig, base64=True)  # the inline backend's call (figure_formats = retina)
    assert after == before  # the hook changes nothing the notebook shows
    name = hashlib.sha256(base64.b64decode(after[0])).hexdigest()
    assert [p.name for p in (tmp_path / "kept").iterdir()] == [f"{name}.pickle"]
    plt.close(fig)


def _site(tmp_path, monkeypatch, catalog):
    "A built site of one page with one image, and the figure kept for it by the hook."
    import IPython.core.pylabtools as pylabtools
    monkeypatch.setattr(pylabtools, "print_figure", pylabtools.print_figure)
    F.install_hook(tmp_path / "kept")
    fig = _figure()
    png = base64.b64decode(pylabtools.retina_figure(fig, base64=True)[0])
    plt.close(fig)
    name = hashlib.sha256(png).hexdigest()
    site = tmp_path / "zh_CN"
    (site / "_images").mkdir(parents=True)
    (site / "nbs").mkdir()
    (site / "_images" / f"{name}.png").write_bytes(png)
    (site / "nbs" / "page.html").write_text(
        f'<img alt="x" src="../_images/{name}.png" style="width: 1px; height: 1px;" />', encoding="utf-8")
    (site / "_images" / "logo.png").write_bytes(png)  # on no page: left alone
    english = tmp_path / "en"  # the English edition of the same build: the same page and image
    (english / "nbs").mkdir(parents=True)
    (english / "nbs" / "page.html").write_text((site / "nbs" / "page.html").read_text(), encoding="utf-8")
    path = tmp_path / "figures.yml"
    path.write_text("\n".join(f'"{k}": "{v}"' for k, v in catalog.items()), encoding="utf-8")
    monkeypatch.setattr(F, "REPO", tmp_path)
    return site, name, png, path


def test_a_site_is_drawn_again_in_chinese_with_its_sizes(tmp_path, monkeypatch, capsys):
    site, name, png, catalog = _site(tmp_path, monkeypatch, CATALOG)
    assert F.translate_site(site, tmp_path / "kept", catalog, require_font=False) == 0
    redrawn = (site / "_images" / f"{name}.png").read_bytes()
    assert redrawn != png and (site / "_images" / "logo.png").read_bytes() == png
    width, height = F.png_size(redrawn)
    page = (site / "nbs" / "page.html").read_text(encoding="utf-8")
    assert f"width: {width // 2}px; height: {height // 2}px;" in page  # retina: shown at half its pixels
    assert "1 of 1 figures" in capsys.readouterr().out


def test_a_label_without_translation_fails_the_step_and_is_named(tmp_path, monkeypatch, capsys):
    site, *_, catalog = _site(tmp_path, monkeypatch, {"step": "步"})
    assert F.translate_site(site, tmp_path / "kept", catalog, require_font=False) == 1
    out = capsys.readouterr().out
    assert re.search(r"no translation .* for the label 'train loss' \(nbs/page.html\)", out), out


def test_a_figure_is_found_by_its_place_not_by_its_bytes(tmp_path, monkeypatch, capsys):
    "The committed output (the Chinese page's image) differs from what this build drew: redrawn all the same."
    site, name, png, catalog = _site(tmp_path, monkeypatch, CATALOG)
    page = site / "nbs" / "page.html"
    page.write_text(page.read_text().replace(name, "0" * 64), encoding="utf-8")  # a plot of measured times, say
    (site / "_images" / f"{'0' * 64}.png").write_bytes(png[:-1] + b"\0")
    assert F.translate_site(site, tmp_path / "kept", catalog, require_font=False) == 0
    shown = page.read_text(encoding="utf-8")
    assert f"_images/{name}.png" in shown and "0" * 64 not in shown  # this build's figure, in that place
    assert (site / "_images" / f"{name}.png").read_bytes() != png  # with Chinese labels
    assert "1 of 1 figures" in capsys.readouterr().out


def test_a_figure_that_cannot_be_redrawn_fails_the_step(tmp_path, monkeypatch, capsys):
    site, name, png, catalog = _site(tmp_path, monkeypatch, CATALOG)
    (tmp_path / "kept" / f"{name}.pickle").unlink()
    (tmp_path / "kept" / f"{name}.error").write_text("PicklingError: a lambda")  # what the hook writes instead
    assert F.translate_site(site, tmp_path / "kept", catalog, require_font=False) == 1
    assert (site / "_images" / f"{name}.png").read_bytes() == png
    assert "nbs/page.html, image 1" in (out := capsys.readouterr().out) and "not kept: PicklingError: a lambda" in out
    (tmp_path / "kept" / f"{name}.error").unlink()  # no figure kept, and the English page shows another image
    english = tmp_path / "en" / "nbs" / "page.html"
    english.write_text(english.read_text().replace(name, "1" * 64), encoding="utf-8")
    assert F.translate_site(site, tmp_path / "kept", catalog, require_font=False) == 1
    assert "no figure kept for it" in capsys.readouterr().out


def test_a_page_whose_images_are_not_todays_fails_the_step(tmp_path, monkeypatch, capsys):
    site, name, png, catalog = _site(tmp_path, monkeypatch, CATALOG)
    english = tmp_path / "en" / "nbs" / "page.html"
    english.write_text(english.read_text() * 2, encoding="utf-8")  # today's run draws two figures
    assert F.translate_site(site, tmp_path / "kept", catalog, require_font=False) == 1
    assert "nbs/page.html shows 1 images, its English page" in capsys.readouterr().out


def test_the_catalog_is_chinese_or_says_a_name_is_kept():
    catalog = F.read_catalog()
    for english, chinese in catalog.items():
        assert isinstance(english, str) and isinstance(chinese, str) and chinese.strip(), english
        assert re.search(r"[\u4e00-\u9fff\uff01-\uff5e]", chinese) or chinese == english, (english, chinese)
        assert english.count("{}") == chinese.count("{}"), english


def test_a_character_no_font_draws_fails_the_step(tmp_path, monkeypatch, capsys):
    "A label drawn as boxes is no translation: a private-use character stands in for a missing Chinese font."
    site, *_, catalog = _site(tmp_path, monkeypatch, {**CATALOG, "step": "\ue000"})
    assert F.translate_site(site, tmp_path / "kept", catalog, require_font=False) == 1
    assert "drawn as boxes" in capsys.readouterr().out
