"""The book's Sphinx extension (_ext/nbdev_directives.py): nbdev's `#|` lines become Jupyter Book tags."""
import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("nbdev_directives", REPO / "_ext" / "nbdev_directives.py")
directives = importlib.util.module_from_spec(spec)
spec.loader.exec_module(directives)


def _rewrite(*sources: str) -> list[dict]:
    nb = {"cells": [{"cell_type": "code", "source": s, "metadata": {}, "outputs": []} for s in sources]}
    return json.loads(directives.rewrite_notebook(json.dumps(nb)))["cells"]


def test_fold_folds_the_code_and_fold_output_folds_the_output():
    folded, long_output, plain = _rewrite("#| export\n#| fold\nx = 1\n", "#| fold: output\nprint(x)\n", "y = 2\n")
    assert folded["source"] == "x = 1\n" and set(folded["metadata"]["tags"]) == {"exported", "hide-input"}
    assert long_output["source"] == "print(x)\n" and long_output["metadata"]["tags"] == ["hide-output"]
    assert plain["source"] == "y = 2\n" and "tags" not in plain["metadata"]


def test_the_other_directives_keep_nbdevs_meaning():
    hide, echo, output = _rewrite("#| hide\nz = 3\n", "#| echo: false\nplot()\n", "#| output: false\nrun()\n")
    assert hide["metadata"]["tags"] == ["remove-cell"]
    assert echo["metadata"]["tags"] == ["remove-input"] and output["metadata"]["tags"] == ["remove-output"]


def test_the_labels_of_folded_answers_are_translated_in_the_chinese_edition_only():
    md = "<details><summary>Expected outcome</summary>\n\nIt grows.\n\n</details>"
    assert directives.translate_summaries(md, "zh_CN") == md.replace("Expected outcome", "预期结果")
    assert directives.translate_summaries(md, "en") == md
    assert directives.translate_summaries(md, None) == md
