"""The learner's short path: the introduction and the first part of `_toc.yml`, *The Transformer*.

On that path the code fits the page (at most 88 characters a line, 30 lines a cell; the rest of the book at most 100
characters a line), the whole model appears early (chapter 01, within the first 1,000 displayed lines of code), and
the text carries no development history: no back-compatibility tables, no trial stories, no commit hashes, no lint
pragmas. A cell is displayed unless it is hidden (`#| hide`) or shows only its output (`#| echo: false`); folded
cells are displayed. `#|` lines are directives, not code."""
import json
import re
from pathlib import Path

import pytest
import yaml

from test_prose import COMMIT_HASH, findings

REPO = Path(__file__).resolve().parents[1]
TOC = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
TEACHING = [TOC["root"]] + [c["file"] for c in TOC["parts"][0]["chapters"]]
ELSEWHERE = [c["file"] for p in TOC["parts"][1:] for c in p["chapters"] if (REPO / f"{c['file']}.ipynb").exists()]
HIDDEN = re.compile(r"^#\|\s*(hide|echo:\s*false)\s*$", re.M)


def cells(chapter: str) -> list[dict]:
    return json.loads((REPO / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]


def displayed(cell: dict) -> list[str] | None:
    "The code lines a reader sees (None for markdown and hidden cells)."
    source = "".join(cell["source"])
    if cell["cell_type"] != "code" or HIDDEN.search(source):
        return None
    return [line for line in source.split("\n") if not line.startswith("#|")]


# Known exceptions (the test fails on any other long line): shell cells, which cannot be wrapped, since a `\`
# continuation of an IPython `!` line breaks the book's lexer (-W).
KNOWN_WIDE = {
    "nbs/22_translate": ["!annotated-transformer reference-split --out data/reference-split"],
    "nbs/24_five_languages": ["!annotated-transformer reference-split --out data/reference-split"],
    "nbs/25_variations": ["!python ../bench/table3.py"],
}


def _known(chapter: str, cell: dict) -> bool:
    return any(marker in "".join(cell["source"]) for marker in KNOWN_WIDE.get(chapter, []))


def long_lines(chapters: list[str], width: int) -> list[str]:
    return [f"{ch} cell {i}: {len(line)} characters: {line[:50]}..."
            for ch in chapters for i, cell in enumerate(cells(ch)) if not _known(ch, cell)
            for line in displayed(cell) or [] if len(line) > width]


def test_the_first_part_is_the_short_path():
    assert TOC["parts"][0]["caption"].startswith("The Transformer")
    assert TEACHING[1] == "nbs/01_one_page" and TEACHING[-1] == "nbs/11_decoding"
    intro = "".join("".join(c["source"]) for c in cells(TOC["root"]) if c["cell_type"] == "markdown")
    assert "**The short path**" in intro


def _intro() -> str:
    "Chapter 00's prose, on one line."
    return " ".join(" ".join("".join(c["source"]) for c in cells(TOC["root"]) if c["cell_type"] == "markdown").split())


def stated_size() -> list[str]:
    "The short path's size as chapter 00 prints it: [words, lines of code shown, lines folded], e.g. '15,900'."
    found = re.search(r"about ([\d,]+) words and ([\d,]+) lines of code shown, plus ([\d,]+) lines folded", _intro())
    assert found, "chapter 00 no longer states the short path's size"
    return list(found.groups())


def test_chapter_00_states_the_short_paths_size():
    """'about N words and M lines of code shown, plus K lines folded', each within 5 % of the count below (the whole
    path, chapter 00 included), and a reading time of 'about H hours' at 200 words and 10 shown lines a minute."""
    intro = _intro()
    stated = [int(g.replace(",", "")) for g in stated_size()]
    sizes = [size(chapter) for chapter in TEACHING]
    counted = [sum(s[k] for s in sizes) for k in ("words", "shown", "folded")]
    for a, b in zip(stated, counted):
        assert abs(a / b - 1) < 0.05, (stated, counted)
    hours = re.search(r"about ([\d.]+) hours of reading", intro)
    assert hours, "chapter 00 no longer states the reading time"
    minutes = counted[0] / 200 + counted[1] / 10
    assert abs(float(hours.group(1)) - minutes / 60) <= 0.25, (hours.group(1), minutes / 60)


# how each README states the short path's size: (words, lines of code shown)
README_SIZE = {"README.md": r"about ([\d,]+) words and ([\d,]+) lines of code shown",
               "README.zh-CN.md": r"大约 ([\d,]+) 个英文单词、([\d,]+) 行代码"}


@pytest.mark.parametrize("readme", sorted(README_SIZE))
def test_the_readmes_state_the_size_chapter_00_states(readme):
    """The README's words and lines of code of the short path are chapter 00's, which the test above ties to the
    count: a README that keeps an old number fails here."""
    text = " ".join((REPO / readme).read_text(encoding="utf-8").split())
    found = re.findall(README_SIZE[readme], text)
    assert len(found) == 1, f"{readme} should state the short path's size once: {found}"
    assert list(found[0]) == stated_size()[:2], (readme, found[0], stated_size()[:2])


def test_teaching_code_lines_fit_88_characters():
    too_long = long_lines(TEACHING, 88)
    assert not too_long, f"{len(too_long)} lines:\n" + "\n".join(too_long)


def test_code_lines_elsewhere_fit_100_characters():
    too_long = long_lines(ELSEWHERE, 100)
    assert not too_long, f"{len(too_long)} lines:\n" + "\n".join(too_long)


SOLUTION = re.compile(r"^#\|\s*fold\s*\n# Solution to exercise ")


def test_teaching_cells_have_at_most_30_lines():
    """The reading path's cells fit a screen. The folded solution of an exercise is not on it (a reader opens it
    after writing their own), and a build exercise's solution is a whole small program (a 30-line beam search, a
    40-line decoder-only model, each with its checks): those may take 60 lines, still one cell, since
    tests/test_exercises.py runs each on its own."""
    big = [f"{ch} cell {i}: {len(lines)} lines" for ch in TEACHING for i, cell in enumerate(cells(ch))
           if (lines := displayed(cell)) is not None
           and len(lines) > (60 if SOLUTION.match("".join(cell["source"])) else 30)]
    assert not big, "\n".join(big)


def test_the_whole_model_comes_within_1000_lines():
    seen = 0
    for chapter in TEACHING:
        for cell in cells(chapter):
            lines = displayed(cell) or []
            if chapter == "nbs/01_one_page" and any(line.startswith("def make_model(") for line in lines):
                assert seen + len(lines) <= 1000, seen
                return
            seen += len(lines)
    pytest.fail("chapter 01's make_model was not found")


HISTORY = [  # (what, pattern) that has no place in the teaching text
    ("a back-compatibility table", re.compile(r"_RENAMED|\bold (?:names?|keys?|flags?|checkpoints?)\b", re.I)),
    ("a trial story", re.compile(r"\bour first\b|\bin our trials\b|\bwe tried\b|\bearlier versions?\b", re.I)),
    ("a lint pragma", re.compile(r"#\s*noqa\b|#\s*type:\s*ignore\b|#\s*pragma\b")),
]


@pytest.mark.parametrize("chapter", TEACHING, ids=lambda c: Path(c).name)
def test_teaching_text_has_no_history(chapter):
    found = []
    for i, cell in enumerate(cells(chapter)):
        source = "".join(cell["source"])
        texts = [source] if cell["cell_type"] == "markdown" or displayed(cell) is not None else []
        for out in cell.get("outputs", []):  # what a reader sees printed, hidden cells included
            texts.append("".join(out.get("text", "")) + "".join(out.get("data", {}).get("text/plain", "")))
        for text in texts:
            found += [f"cell {i}: {what}: {m.group(0)!r}" for what, rx in HISTORY for m in rx.finditer(text)]
            found += [f"cell {i}: {name}: {phrase}" for name, phrase in findings(text, rules=[COMMIT_HASH])]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("sentence,caught", [
    ("_RENAMED = {'max_len': 'max_positions'}", True),
    ("tables made our first models ignore their source", True),
    ("x = lambda n: n  # noqa: E731", True),
    ("commit 29e0500, 2026-11-26", True),
    ("the earlier positions' keys and values", False),
    ("Harvard's notebook {cite:p}`rush2018annotated`", False),
])
def test_the_history_rules_catch_what_they_should(sentence, caught):
    hits = [rx.search(sentence) for _, rx in HISTORY] + [bool(findings(sentence, rules=[COMMIT_HASH]))]
    assert any(hits) == caught


# ---- The path's size, its names, its exercises and its files (what a learner reads in an evening) ----------------
# Counted as a reader meets the code: a code cell is hidden (not counted) when `#| hide` / `#| echo: false` or the tag
# remove-input / remove-cell keeps its source off the website, folded when `#| fold` or the tag hide-input puts it
# behind a button (Jupyter shows it all), shown otherwise; `#|` lines and blank lines are not counted. Words are the
# markdown cells' whitespace-separated words.
LIMITS = {"shown": 1500, "shown + folded": 2500, "words": 18000}
_FOLD = re.compile(r"^#\|\s*fold\s*$", re.M)


def kind(cell: dict) -> str:
    source, tags = "".join(cell["source"]), set(cell.get("metadata", {}).get("tags", []))
    if HIDDEN.search(source) or tags & {"remove-input", "remove-cell"}:
        return "hidden"
    return "folded" if _FOLD.search(source) or "hide-input" in tags else "shown"


def size(chapter: str) -> dict[str, int]:
    "{'shown': lines, 'folded': lines, 'words': words} of one chapter."
    found = {"shown": 0, "folded": 0, "hidden": 0, "words": 0}
    for cell in cells(chapter):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            found["words"] += len(source.split())
        elif cell["cell_type"] == "code":
            found[kind(cell)] += sum(1 for line in source.split("\n") if line.strip() and not line.startswith("#|"))
    del found["hidden"]
    return found


def path_size() -> dict[str, int]:
    sizes = [size(chapter) for chapter in TEACHING]
    shown, folded = sum(s["shown"] for s in sizes), sum(s["folded"] for s in sizes)
    return {"shown": shown, "shown + folded": shown + folded, "words": sum(s["words"] for s in sizes)}


def test_the_counting_rules():
    cell = lambda source, tags=(): {"cell_type": "code", "source": source, "metadata": {"tags": list(tags)}}
    assert kind(cell("#| hide\nx = 1")) == kind(cell("#| echo: false\nplot()")) == "hidden"
    assert kind(cell("x = 1", ["remove-input"])) == "hidden"
    assert kind(cell("#| export\n#| fold\ndef f(): ...")) == kind(cell("x", ["hide-input"])) == "folded"
    assert kind(cell("#| export\nx = 1")) == kind(cell("#| fold: output\nprint(x)")) == "shown"


@pytest.mark.parametrize("what", LIMITS)
def test_the_short_path_fits_an_evening(what):
    found = path_size()[what]
    per_chapter = "\n".join(f"  {Path(ch).name}: {size(ch)}" for ch in TEACHING)
    assert found <= LIMITS[what], f"the short path has {found:,} {what} (limit {LIMITS[what]:,}):\n{per_chapter}"


# Names of the library's engineering that the path's shown and folded code does not use (`register_buffer` is
# PyTorch's and allowed): registries, serialisation, distributed and resumable training, the trainer, positions
# beyond the paper, sampling, grouped heads, back-compatibility.
OFF_PATH = ["ARCHS", "TO_OURS", "POSITIONAL_ENCODINGS", "DATA_BUILDERS", "unwrap", "DistributedSampler",
            "DistributedDataParallel", "world_size", "static_shapes", "with_empty_rows", "pad_to_multiple", "difflib",
            "to_dict", "from_dict", "TrainConfig", "Trainer", "RunLock", "token_ids_checked", "RotaryPositions",
            "RelativeAttention", "relative_offsets", "top_p", "top_k", "sample_decode", "n_kv_heads", "_RENAMED"]
OFF_PATH_RX = re.compile(r"\bregister_(?!buffer\b)\w+|\bupgrade_\w+|\brotate=|\b(?:" + "|".join(OFF_PATH) + r")\b")


def test_the_off_path_rule_catches_what_it_should():
    for text in ["register_arch('x', f)", "POSITIONAL_ENCODINGS['rope']", "mha(rotate=f)", "upgrade_model_config(c)",
                 "cfg.to_dict()", "Trainer(model)"]:
        assert OFF_PATH_RX.search(text), text
    for text in ["self.register_buffer('pe', pe)", "TrainerX", "rotate(q)", "my_top_p_list"]:
        assert not OFF_PATH_RX.search(text), text


@pytest.mark.parametrize("chapter", TEACHING, ids=lambda c: Path(c).name)
def test_only_the_paper_on_the_path(chapter):
    found = [f"cell {i}: {m.group(0)}" for i, cell in enumerate(cells(chapter))
             if cell["cell_type"] == "code" and kind(cell) != "hidden"
             for m in OFF_PATH_RX.finditer("".join(cell["source"]))]
    assert not found, f"{len(found)} use(s) of the library's engineering on the short path:\n" + "\n".join(found)


EXERCISE_HEADING = re.compile(r"^### Exercise \d\d\w*\.\d+", re.M)
SOLUTION_START = re.compile(r"^#\|\s*fold\s*\n# Solution to exercise ")
OUTPUT_KEPT_BACK = re.compile(r"^#\|\s*(?:fold:\s*output|output:\s*false)\s*$", re.M)


def starters(chapter: str) -> list[tuple[int, dict]]:
    "(index, cell): the code cells between an exercise's heading and its solution, the cells the reader edits."
    found, inside = [], False
    for i, cell in enumerate(cells(chapter)):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and re.match(r"#{1,3} ", source):
            inside = bool(EXERCISE_HEADING.match(source))
        elif cell["cell_type"] == "code" and SOLUTION_START.match(source):
            inside = False
        elif inside and cell["cell_type"] == "code":
            found.append((i, cell))
    return found


@pytest.mark.parametrize("chapter", TEACHING, ids=lambda c: Path(c).name)
def test_a_starter_cell_shows_no_outcome(chapter):
    "The reader predicts first: a starter's stored output stays off the page (none, or folded behind a button)."
    shown = [f"cell {i}" for i, cell in starters(chapter) if cell.get("outputs")
             and not OUTPUT_KEPT_BACK.search("".join(cell["source"]))
             and not {"hide-output", "remove-output"} & set(cell.get("metadata", {}).get("tags", []))]
    assert not shown, "starter cells whose output the website shows: " + ", ".join(shown)


def test_the_files_sort_in_reading_order():
    "A newcomer who opens nbs/ finds the chapters in the order the book reads them."
    chapters = [c for c in TEACHING + ELSEWHERE if c.startswith("nbs/")]
    assert chapters == sorted(chapters), "\n".join(f"{a}  >  {b}" for a, b in zip(chapters, chapters[1:]) if a > b)
