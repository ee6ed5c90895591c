"""The mutation check of the Pitfalls appendix (nbs/29_pitfalls.ipynb): every pitfall's catching test fails with
the bug planted and passes without it, so the suite is shown to guard against each bug rather than claimed to.

The checks run in one fresh Python process (pytest in-process there, once per pitfall with the bug and once
without), so that nothing planted can leak into this session; one more process plants a bug through
tests/conftest.py's ANNOTATED_TRANSFORMER_PITFALL, the way a reader runs the whole suite with a bug."""
import json
import os
import re
import subprocess
import sys

import pytest

from annotated_transformer import masking
from annotated_transformer.copytask import causal_mask as copytask_causal_mask
from annotated_transformer.pitfalls import PITFALLS, Mutation
from conftest import REPO, subprocess_env


def env() -> dict:
    e = subprocess_env()
    e.pop("ANNOTATED_TRANSFORMER_PITFALL", None)  # the checks decide what is planted
    return e


def test_at_least_ten_pitfalls_each_with_a_catching_test_and_a_current_bug():
    assert len(PITFALLS) >= 10
    for name, pitfall in PITFALLS.items():
        path, _, function = pitfall.catching_test.partition("::")
        assert (REPO / path).is_file() and f"\ndef {function}(" in (REPO / path).read_text(encoding="utf-8"), name
        assert any(line.startswith("-") for line in pitfall.diff().splitlines()), name  # the edits still apply
        assert (REPO / "nbs" / f"{pitfall.chapter}.ipynb").is_file(), name
        assert all(link.startswith("https://github.com/") for link in pitfall.reports), name


def test_a_planted_bug_reaches_every_importer_and_leaves_no_trace():
    original = masking.causal_mask
    with PITFALLS["future"].apply() as buggy:
        assert masking.causal_mask is buggy and sys.modules["annotated_transformer.copytask"].causal_mask is buggy
        assert buggy(3)[0, 0].all()  # the upper triangle: position 0 sees every position
    assert masking.causal_mask is original and sys.modules["annotated_transformer.copytask"].causal_mask is original
    assert copytask_causal_mask is original
    with pytest.raises(RuntimeError), PITFALLS["future"].apply():
        raise RuntimeError("the bug goes away after an error too")
    assert masking.causal_mask is original
    with pytest.raises(ValueError, match="no longer contains"):
        Mutation(masking.causal_mask, ("text that is not there", "")).source()


def test_chapter_11_checks_every_pitfall_as_it_executes():
    "What lets tools/test.sh skip the next test: the chapter runs check(name) for every pitfall, asserting it."
    cells = json.loads((REPO / "nbs" / "29_pitfalls.ipynb").read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert set(re.findall(r'^assert check\("(\w+)"\)\.caught$', code, re.M)) == set(PITFALLS)


@pytest.mark.skipif(os.environ.get("ANNOTATED_TRANSFORMER_BOOK_BUILD_FOLLOWS") == "1",
                    reason="tools/test.sh builds the book next, and chapter 29 asserts check(name).caught for every "
                           "pitfall as it executes: the same checks, run once")
def test_every_catching_test_fails_with_its_bug_and_passes_without_it():
    script = ("import json, torch; torch.set_num_threads(1)\n"
              "from annotated_transformer.pitfalls import PITFALLS, check\n"
              "print(json.dumps({n: [c.with_bug.exit_code, c.without_bug.exit_code, c.with_bug.error]\n"
              "                  for n in PITFALLS for c in [check(n, verbose=False)]}))")
    run = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env(), capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    outcomes = json.loads(run.stdout.strip().splitlines()[-1])
    assert set(outcomes) == set(PITFALLS)
    wrong = {name: o for name, o in outcomes.items() if o[:2] != [1, 0]}  # pytest: 1 = a test failed, 0 = passed
    assert not wrong, f"not caught, or failing without the bug (exit codes with, without): {wrong}"


def test_conftest_plants_a_pitfall_for_a_whole_session():
    node = PITFALLS["post_norm"].catching_test
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", node,
                          "tests/test_sublayers.py::test_pre_norm_feed_forward_half_matches_torch"],
                         cwd=REPO, env={**env(), "ANNOTATED_TRANSFORMER_PITFALL": "post_norm"},
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 1 and "1 failed, 1 passed" in run.stdout, run.stdout[-2000:]
