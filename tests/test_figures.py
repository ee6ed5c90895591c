"""The book's figures, drawn by `annotated_transformer.architecture` (appendix F): Figures 1 and 2 of the paper and the
pipeline of training and translating; what each chapter's "you are here" lights; labels that do not collide, at full
size and at the chapters' small size, measured with matplotlib's renderer; and heat maps of attention weights.

What is lit is read twice: from `fig.lit`, which the drawing functions record, and from the artists drawn in red."""
import ast
import importlib.util
import itertools
import re
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import yaml  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from annotated_transformer import architecture as arch  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TOC = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
RED = to_rgb("#c0392b")


def chapters_calling() -> dict[str, str]:
    "chapter id -> notebook stem, for every notebook that opens with you_are_here(\"ID\")."
    found = {}
    for nb in sorted((REPO / "nbs").glob("*.ipynb")):
        for chapter in re.findall(r'you_are_here\(\\"(\w+)\\"\)', nb.read_text(encoding="utf-8")):
            found[chapter] = nb.stem
    return found


def in_part(index: int) -> list[str]:
    "The chapter ids of a part of _toc.yml that open with a map, in reading order."
    calling = chapters_calling()
    ids = [Path(c["file"]).stem.split("_")[0] for c in TOC["parts"][index]["chapters"]]
    return [i for i in ids if i in calling]


TEACHING, ENGINEERING = in_part(0), in_part(1)


def text_problems(fig) -> list[str]:
    """Labels that collide: two texts whose boxes on the page overlap, a text outside its axes (the title: outside
    the figure), a box's label sticking out of its box, or a label on another box (one drawn over its own box, or
    any box for a free label)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = [t for ax in fig.axes for t in ax.texts if t.get_text().strip()]
    texts += [t for t in [fig._suptitle] if t is not None]
    extent = {id(t): t.get_window_extent(renderer).shrunk(0.98, 0.98) for t in texts}
    boxes = [p for ax in fig.axes for p in ax.patches
             if isinstance(p, FancyBboxPatch) and p.get_facecolor()[3] > 0]
    where = {id(p): p.get_window_extent(renderer) for p in boxes}
    order = {id(p): i for i, p in enumerate(boxes)}
    found = [f"{a.get_text()!r} overlaps {b.get_text()!r}" for a, b in itertools.combinations(texts, 2)
             if extent[id(a)].overlaps(extent[id(b)])]
    inside = lambda e, b: b.x0 <= e.x0 and e.x1 <= b.x1 and b.y0 <= e.y0 and e.y1 <= b.y1
    for t in texts:
        e = extent[id(t)]
        if not inside(e, fig.bbox if t.axes is None else t.axes.get_window_extent(renderer)):
            found.append(f"{t.get_text()!r} is outside its axes")
        own = [p for p in boxes if p.get_gid() == t.get_gid() and where[id(p)].overlaps(e)]
        found += [f"{t.get_text()!r} sticks out of its box" for p in own if not inside(e, where[id(p)])]
        floor = max((order[id(p)] for p in own), default=-1)
        found += [f"{t.get_text()!r} lies on the box {p.get_gid()!r}" for p in boxes
                  if p.get_gid() != t.get_gid() and order[id(p)] > floor and where[id(p)].overlaps(e)]
    return found


def drawn_red(fig) -> set[str]:
    "The parts drawn in red: boxes and circles by their edge, lines and arrows by their colour, labels by theirs."
    gids = set()
    for ax in fig.axes:
        gids |= {p.get_gid() for p in ax.patches if to_rgb(p.get_edgecolor()) == RED}
        gids |= {line.get_gid() for line in ax.lines if to_rgb(line.get_color()) == RED}
        for t in ax.texts:  # labels, and the annotations that draw arrows
            arrow = getattr(t, "arrow_patch", None)
            colour = arrow.get_edgecolor() if arrow is not None else t.get_color() if t.get_text() else None
            if colour is not None and to_rgb(colour) == RED:
                gids.add(t.get_gid())
    return gids - {None}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("scale", [1.0, 0.55])
@pytest.mark.parametrize("draw", [arch.draw_architecture, arch.draw_attention, arch.draw_pipeline],
                         ids=["figure1", "figure2", "pipeline"])
def test_figures_draw_every_part_and_no_labels_collide(draw, scale):
    fig = draw(scale=scale)
    name = {arch.draw_architecture: "figure1", arch.draw_attention: "figure2", arch.draw_pipeline: "pipeline"}[draw]
    assert fig.lit == {name: frozenset()}  # nothing lit: the whole figure in colour
    drawn = {a.get_gid() for ax in fig.axes for a in [*ax.patches, *ax.lines, *ax.texts]} - {None}
    assert drawn == set(arch.PARTS[name]), set(arch.PARTS[name]) ^ drawn
    assert text_problems(fig) == []


def test_figure_1_has_a_residual_path_into_every_add_and_norm_and_three_arrows_into_every_attention():
    fig = arch.draw_architecture()
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    boxes = {p.get_gid(): p.get_window_extent(renderer) for p in ax.patches if isinstance(p, FancyBboxPatch)}
    arrows = [a for a in ax.texts if getattr(a, "arrow_patch", None) is not None]
    heads = lambda gid: [a for a in arrows if a.get_gid() == gid and "|>" in str(a.arrowprops["arrowstyle"])]
    add_norms = [b for b in boxes if "add_norm" in b]
    assert len(add_norms) == 5
    for add_norm in add_norms:  # the arrow of its residual path ends on the box's side
        (arrow,) = heads(add_norm.replace("add_norm", "residual"))
        end = ax.transData.transform(arrow.xy)
        box = boxes[add_norm]
        assert box.y0 < end[1] < box.y1 and min(abs(end[0] - box.x0), abs(end[0] - box.x1)) < 3
    for attention in arch.GROUPS["attention"]:  # V, K, Q: three arrowheads on the box's bottom edge
        ends = [ax.transData.transform(a.xy) for a in heads(attention + "_qkv")]
        assert len(ends) == 3 and all(abs(y - boxes[attention].y0) < 3 for _, y in ends)
    # the encoder's output reaches the cross-attention: its V and K arrows start on it
    (memory,) = [a for a in arrows if a.get_gid() == "memory"]
    x, y = ax.transData.transform(memory.xy)
    starts = [ax.transData.transform(a.xyann) for a in heads("cross_attention_qkv")]
    assert sum(abs(sx - x) < 3 and abs(sy - y) < 3 for sx, sy in starts) == 1
    assert boxes["cross_attention"].x0 < x < boxes["cross_attention"].x1


def test_the_collision_check_catches_what_chapter_00_once_drew():
    "The positional encoding's label under its ∿, as drawn before: it lay on the embedding boxes."
    fig = arch.draw_architecture(scale=0.55)
    fig.axes[0].text(0.75, 1.3, "Positional\nEncoding", ha="center", va="top", fontsize=4)
    assert any("lies on the box 'input_embedding'" in p for p in text_problems(fig))
    fig = arch.draw_architecture()
    fig.axes[0].text(arch._X[1], 8.3, "a label far too wide for its box", gid="decoder_feed_forward")
    assert any("sticks out" in p for p in text_problems(fig))


def test_every_chapter_that_opens_with_a_map_has_its_parts():
    assert set(chapters_calling()) == set(arch.CHAPTER_PARTS)


@pytest.mark.parametrize("chapter", list(arch.CHAPTER_PARTS))
def test_you_are_here_lights_what_the_chapter_names_and_nothing_collides(chapter):
    fig = arch.you_are_here(chapter)
    assert fig.lit == arch.resolve(arch.CHAPTER_PARTS[chapter])
    assert all(fig.lit.values()), "a figure is shown with nothing lit"
    assert drawn_red(fig) == set().union(*fig.lit.values())
    assert text_problems(fig) == []


def lit(chapter: str) -> frozenset:
    return frozenset().union(*arch.resolve(arch.CHAPTER_PARTS[chapter]).values())


def test_each_teaching_chapter_lights_other_parts_than_its_neighbours():
    "In reading order (_toc.yml) and in the order of the chapter numbers."
    assert TEACHING[:3] == ["02", "03", "04"] and "11" in TEACHING
    for order in (TEACHING, sorted(TEACHING)):
        same = [(a, b) for a, b in zip(order, order[1:]) if lit(a) == lit(b)]
        assert not same, same


@pytest.mark.parametrize("chapter,parts", [
    ("02", {"sdpa_scale", "sdpa_softmax", "sdpa_matmul_qk", "sdpa_matmul_v"}),
    ("03", {"sdpa_mask", "decoder_self_attention"}),
    ("04", {"mha_linear_q", "mha_linear_k", "mha_linear_v", "mha_concat", "mha_heads", "mha_linear"}),
    ("05", {"positional_encoder", "positional_decoder"}),
    ("06", {"encoder_residual_1", "decoder_residual_3", "encoder_add_norm_1", "decoder_feed_forward"}),
    ("07", {"encoder_stack", "decoder_stack", "input_embedding", "linear"}),
    ("08", {"batches", "inputs", "outputs"}),
    ("09", {"loss", "probabilities"}),
    ("11", {"decoding", "outputs"}),
])
def test_a_teaching_chapter_lights_what_it_builds(chapter, parts):
    assert parts <= lit(chapter)
    if chapter != "03":  # the mask of Figure 2 is chapter 03's alone
        assert "sdpa_mask" not in lit(chapter)


def test_the_chapters_that_build_figure_2_show_it():
    shown = {c for c in TEACHING if "figure2" in arch.resolve(arch.CHAPTER_PARTS[c])}
    assert shown == {"02", "03", "04"}


@pytest.mark.parametrize("chapter", ENGINEERING)
def test_an_engineering_chapter_shows_the_pipeline_with_one_stage_lit(chapter):
    shown = arch.resolve(arch.CHAPTER_PARTS[chapter])
    assert set(shown) == {"pipeline"} and len(shown["pipeline"]) == 1


def test_unknown_names_fail():
    with pytest.raises(KeyError, match="no part or group of that name: 'attnetion'"):
        arch.draw_architecture(["attnetion"])


def test_matplotlib_is_imported_only_when_something_is_drawn():
    "Importing the module (it imports nothing of the package, so it loads alone) does not import matplotlib."
    source = (REPO / "annotated_transformer" / "architecture.py").read_text(encoding="utf-8")
    top = [n for n in ast.parse(source).body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not [n for n in top if "matplotlib" in ast.dump(n)]
    path = str(REPO / "annotated_transformer" / "architecture.py")
    code = ("import importlib.util, sys\n"
            f"spec = importlib.util.spec_from_file_location('architecture', {path!r})\n"
            "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
            "assert 'matplotlib' not in sys.modules, 'imported at import'\n"
            "import matplotlib; matplotlib.use('Agg'); module.you_are_here('06')\n")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=120)


def test_attention_maps_draw_a_panel_per_layer_and_head_with_the_tokens():
    weights = torch.softmax(torch.randn(2, 3, 4, 5), dim=-1)
    fig = arch.draw_attention_maps(weights, ["a", "b", "c", "d"], ["v", "w", "x", "y", "z"], title="cross")
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 6 and panels[5].get_title() == "layer 2, head 3"
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["a", "b", "c", "d"]
    assert [t.get_text() for t in panels[5].get_xticklabels()] == ["v", "w", "x", "y", "z"]
    torch.testing.assert_close(torch.tensor(panels[4].images[0].get_array()), weights[1, 1].float())


def test_attention_statistics():
    weights = torch.softmax(torch.randn(3, 2, 6, 6, dtype=torch.float64), dim=-1)
    stats = arch.attention_statistics(weights)
    assert stats["diagonal"].shape == (3, 2)
    torch.testing.assert_close(stats["diagonal"], weights.diagonal(0, -2, -1).mean(-1))
    torch.testing.assert_close(stats["previous"], weights.diagonal(-1, -2, -1).mean(-1))
    torch.testing.assert_close(stats["last"], weights[..., -1].mean(-1))
    # from the second query on: the first query's key 0 is its own position
    later = arch.attention_statistics(weights, start=1)
    torch.testing.assert_close(later["diagonal"], weights.diagonal(0, -2, -1)[..., 1:].mean(-1))
    torch.testing.assert_close(later["previous"], weights.diagonal(-1, -2, -1).mean(-1))
    one_hot = torch.eye(6, dtype=torch.float64)
    assert arch.attention_statistics(one_hot)["entropy"] == 0
    assert arch.attention_statistics(torch.full((6, 6), 1 / 6))["entropy"].item() == pytest.approx(2.585, abs=1e-3)


def test_attention_weights_of_every_layer_and_head():
    "Chapter 11's `attention_weights`: shapes, rows that sum to 1, masks obeyed, the model's modes left as they were."
    from annotated_transformer.batching import make_batch
    from annotated_transformer.decoding import attention_weights
    from annotated_transformer.model import make_model
    torch.manual_seed(0)
    model = make_model(11, 11, N=2, d_model=32, d_ff=64, h=4).train()
    batch = make_batch([([3, 4, 5, 6], [6, 5, 4, 3]), ([7, 8], [8, 7])])
    maps = attention_weights(model, batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
    b, s, t = 2, batch.src.size(1), batch.tgt_in.size(1)
    assert {k: tuple(v.shape) for k, v in maps.items()} == {
        "encoder self": (2, b, 4, s, s), "decoder self": (2, b, 4, t, t), "cross": (2, b, 4, t, s)}
    for w in maps.values():
        torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))
    assert (maps["decoder self"].triu(1) == 0).all()  # causal: no weight on later positions
    assert (maps["cross"][:, 1, :, :, 3:] == 0).all() and (maps["encoder self"][:, 1, :, :, 3:] == 0).all()  # padding
    assert model.training and all(not m.keep_weights for m in model.modules() if hasattr(m, "keep_weights"))
