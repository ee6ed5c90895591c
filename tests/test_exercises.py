"""The exercises at the end of chapters 01-08 state what a learner will see; their solution cells check it.

A solution cell starts with `#| fold` and a line `# Solution to exercise NN.K`, imports what it needs, and ends with
asserts of the outcome the exercise states. Each runs here on its own, in a fresh namespace, so the stated outcomes
stay true as the code changes."""
import json
import re
from pathlib import Path

import pytest
import torch

NBS = Path(__file__).resolve().parents[1] / "nbs"
SOLUTION = re.compile(r"^#\|\s*fold\s*\n# Solution to exercise (\d\d\w*)\.(\d+)\b")
CHAPTERS_WITH_EXERCISES = ["01", "02", "03", "04", "05", "06", "06b", "06c", "06d", "06e", "07", "07a", "07b",
                           "07c", "08"]


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


@pytest.mark.parametrize("exercise,source", solutions(), ids=[e for e, _ in solutions()])
def test_the_stated_outcome_holds(exercise, source):
    assert "assert" in source, f"the solution to exercise {exercise} checks nothing"
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    try:
        exec(compile(source, f"<exercise {exercise}>", "exec"), {"__name__": f"exercise_{exercise}"})
    finally:
        torch.set_num_threads(threads)
