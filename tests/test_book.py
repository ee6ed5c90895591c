"""The book's pages as a reader opens them from the website: every chapter starts with the same hidden cell that,
outside a clone of the book (Colab, Binder, a downloaded notebook), fetches the book, installs the package and
moves to its nbs/ folder; inside the repository it does nothing. The real source (GitHub) is replaced here by
this repository's own folder, through the cell's ANNOTATED_TRANSFORMER_GIT setting: no network in the tests."""
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
TOC = yaml.safe_load((REPO / "_toc.yml").read_text())
CHAPTERS = [REPO / f"{f}.ipynb" for f in [TOC["root"], *(c["file"] for p in TOC["parts"] for c in p["chapters"])]
            if (REPO / f"{f}.ipynb").exists()]


def first_cell(path: Path) -> str:
    return "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"])


def run_cell(source: str, cwd: Path, **env) -> subprocess.CompletedProcess:
    "Run the cell in a fresh interpreter started in `cwd`, then report where it left the working directory."
    code = source + "\nimport os, annotated_transformer; print(os.getcwd()); print(annotated_transformer.__file__)"
    e = {**os.environ, **env}
    e.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=e, capture_output=True, text=True, timeout=300)


def test_every_chapter_starts_with_the_same_hidden_launch_cell():
    assert len(CHAPTERS) >= 11
    cells = {path.name: first_cell(path) for path in CHAPTERS}
    assert len(set(cells.values())) == 1, "the launch cells differ"
    cell = next(iter(cells.values()))
    assert cell.startswith("#| hide\n")  # not shown on the website
    assert "https://github.com/annotated-transformer/annotated-transformer" in cell
    settings = (REPO / "settings.ini").read_text()
    assert "git_url = https://github.com/annotated-transformer/annotated-transformer" in settings


def test_launch_cell_does_nothing_inside_the_repository(tmp_path):
    home = tmp_path / "book"
    run = run_cell(first_cell(CHAPTERS[0]), REPO / "nbs", ANNOTATED_TRANSFORMER_HOME=str(home),
                   ANNOTATED_TRANSFORMER_GIT=str(tmp_path / "nowhere"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == str(REPO / "nbs") and not home.exists()


def test_launch_cell_fetches_the_book_outside_it(tmp_path):
    "As on Colab: a notebook alone in an empty folder. The cell clones the book and moves into its nbs/."
    alone = tmp_path / "content"
    alone.mkdir()
    home = tmp_path / "annotated-transformer"
    run = run_cell(first_cell(CHAPTERS[1]), alone, ANNOTATED_TRANSFORMER_HOME=str(home),
                   ANNOTATED_TRANSFORMER_GIT=str(REPO))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == str(home / "nbs")
    assert (home / "nbs" / CHAPTERS[1].name).is_file() and (home / "annotated_transformer" / "__init__.py").is_file()
    again = run_cell(first_cell(CHAPTERS[1]), alone, ANNOTATED_TRANSFORMER_HOME=str(home),
                     ANNOTATED_TRANSFORMER_GIT=str(tmp_path / "nowhere"))  # a second chapter: no second clone
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[0] == str(home / "nbs")
