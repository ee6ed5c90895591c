"""The exercises at the end of chapters 02-11 state what a learner will see; their solution cells check it.

A solution cell starts with `#| fold` and a line `# Solution to exercise NN.K`, imports what it needs, and ends with
asserts of the outcome the exercise states. Each runs here on its own, in a fresh namespace, so the stated outcomes
stay true as the code changes."""
import json
import re
from pathlib import Path

import pytest
import torch

NBS = Path(__file__).resolve().parents[1] / "nbs"
SOLUTION = re.compile(r"^#\|\s*fold\s*\n# Solution to exercise (\d\d\w*|[A-F])\.(\d+)\b")
# the teaching part (the short path of _toc.yml's first part) and the engineering chapters that keep exercises
TEACHING = ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11"]
CHAPTERS_WITH_EXERCISES = [*TEACHING, "23", "17", "18", "16", "19", "20"]
EXERCISE = re.compile(r"^### Exercise (\d\d\w*|[A-F])\.(\d+)( \(build\))?:", re.M)
FOLDED_OUTCOME = "<details><summary>Expected outcome</summary>"


def notebook(chapter: str) -> list[dict]:
    (path,) = NBS.glob(f"{chapter}_*.ipynb")
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def markdown(chapter: str) -> str:
    return "\n\n".join("".join(c["source"]) for c in notebook(chapter) if c["cell_type"] == "markdown")


def exercises(chapter: str) -> list[tuple[str, bool, str]]:
    "(number, is a build exercise, its text up to the next heading) of every exercise of CHAPTER."
    text = markdown(chapter)
    found = []
    for m in EXERCISE.finditer(text):
        end = re.search(r"^#{1,3} ", text[m.end():], re.M)
        found.append((f"{m.group(1)}.{m.group(2)}", bool(m.group(3)),
                      text[m.end():m.end() + end.start()] if end else text[m.end():]))
    return found


def solutions() -> list[tuple[str, str]]:
    "(exercise id, source) of every solution cell in the book."
    found = []
    for nb in sorted(NBS.glob("*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            src = "".join(cell["source"])
            m = SOLUTION.match(src)
            if cell["cell_type"] == "code" and m:
                found.append((f"{m.group(1)}.{m.group(2)}", src))
    return found


def test_every_chapter_01_to_08_has_three_exercises_with_solutions():
    count = {}
    for ex, _ in solutions():
        count[ex.split(".")[0]] = count.get(ex.split(".")[0], 0) + 1
    short = {ch: count.get(ch, 0) for ch in CHAPTERS_WITH_EXERCISES if count.get(ch, 0) < 3}
    assert not short, f"chapters with fewer than 3 exercises: {short}"


def chapters_with_any_exercise() -> list[str]:
    return [nb.name.split("_")[0] for nb in sorted(NBS.glob("*.ipynb"))
            if "### Exercise" in nb.read_text(encoding="utf-8")]


@pytest.mark.parametrize("chapter", sorted(set(CHAPTERS_WITH_EXERCISES) | set(chapters_with_any_exercise())))
def test_every_exercise_asks_for_a_prediction_and_folds_its_outcome(chapter):
    "One style everywhere: the task, a **Predict first:** question, then the expected outcome folded under it."
    found = exercises(chapter)
    assert found, f"chapter {chapter} has no '### Exercise {chapter}.K: title' headings"
    solved = {e for e, _ in solutions()}
    for number, _, text in found:
        assert number.startswith(chapter + "."), f"exercise {number} is numbered for another chapter"
        assert "**Predict first:**" in text, f"exercise {number} asks for no prediction (**Predict first:**)"
        fold = text.find(FOLDED_OUTCOME)
        assert fold > text.find("**Predict first:**"), f"exercise {number}: no folded outcome after the prediction"
        assert "</details>" in text[fold:], f"exercise {number}: the folded outcome is never closed"
        assert number in solved, f"exercise {number} has no solution cell"
    text = markdown(chapter)
    for old in ("**Expected:**", "**Expected outcome:**"):
        assert old not in text, f"chapter {chapter} keeps the old style {old!r}: fold the outcome instead"
    assert not any(c["cell_type"] == "code" and "".join(c["source"]).startswith("# Try it:")
                   for c in notebook(chapter)), f"chapter {chapter} keeps a '# Try it:' cell of the old style"


@pytest.mark.parametrize("chapter", TEACHING)
def test_every_teaching_chapter_has_a_build_exercise_and_questions_and_answers(chapter):
    assert any(build for _, build, _ in exercises(chapter)), \
        f"chapter {chapter} has no build exercise ('### Exercise {chapter}.K (build): ...')"
    text = markdown(chapter)
    qa = re.search(r"^## Questions and answers\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert qa, f"chapter {chapter} has no '## Questions and answers' section"
    questions = re.findall(r"^\*\*[^*\n]+\?\*\*$", qa.group(1), re.M)
    assert 3 <= len(questions) <= 5, f"chapter {chapter}: {len(questions)} questions (3 to 5, each a bold line)"


@pytest.mark.parametrize("exercise,source", solutions(), ids=[e for e, _ in solutions()])
def test_the_stated_outcome_holds(exercise, source):
    assert "assert" in source, f"the solution to exercise {exercise} checks nothing"
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    try:
        exec(compile(source, f"<exercise {exercise}>", "exec"), {"__name__": f"exercise_{exercise}"})
    finally:
        torch.set_num_threads(threads)
