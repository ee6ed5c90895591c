"""What every chapter gives a learner: where it sits in Figure 1, what it will teach, and what it taught.

Figure 1 itself is drawn in chapter 00 (`annotated_transformer.architecture`); chapters 02 to 22 open with the
small "you are here" version, every chapter says what the reader will learn and closes with a summary."""
import json
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
TOC = yaml.safe_load((REPO / "_toc.yml").read_text())
CHAPTERS = [REPO / f"{f}.ipynb" for f in [TOC["root"], *(c["file"] for p in TOC["parts"] for c in p["chapters"])]
            if (REPO / f"{f}.ipynb").exists()]
MAIN = [p for p in CHAPTERS if re.match(r"0[2-9]|1[0-1]|1[3-5]|2[12]", p.stem)]  # chapters 02 to 22
BACK_MATTER = {REPO / f"{c['file']}.ipynb" for p in TOC["parts"] if p["caption"] == "Back matter" for c in p["chapters"]}


def cells(path: Path) -> list[tuple[str, str]]:
    return [(c["cell_type"], "".join(c["source"])) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]


def test_chapter_00_draws_figure_1():
    assert any(kind == "code" and "draw_architecture()" in src for kind, src in cells(REPO / "nbs/00_introduction.ipynb"))


@pytest.mark.parametrize("path", MAIN, ids=[p.stem for p in MAIN])
def test_every_main_chapter_shows_where_it_is_in_figure_1(path):
    chapter = path.stem.split("_")[0]
    calls = [src for kind, src in cells(path) if kind == "code" and f'you_are_here("{chapter}")' in src]
    assert len(calls) == 1, f"{path.name}: one you_are_here({chapter!r}) cell"


@pytest.mark.parametrize("path", [p for p in CHAPTERS if p.stem != "00_introduction" and p not in BACK_MATTER],
                         ids=lambda p: p.stem)
def test_every_chapter_has_objectives_and_a_summary(path):
    md = [src for kind, src in cells(path) if kind == "markdown"]
    assert any("**In this chapter you will**" in s for s in md[:4]), f"{path.name}: no objectives near the top"
    assert any(re.match(r"## Summary\b", s) for s in md), f"{path.name}: no summary"
