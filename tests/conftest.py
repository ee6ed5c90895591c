"""Shared pytest set-up.

The suite runs as `pytest -n 2` on a 2-core machine: two worker processes that would each start a
pool of torch threads. Oversubscribed cores made the small models here several times slower, so
each worker keeps to one thread (results are the same: only speed changes).
"""
import os
import sys
from pathlib import Path

import torch

torch.set_num_threads(1)

REPO = Path(__file__).resolve().parents[1]


def subprocess_env() -> dict:
    "The environment for a command run in a subprocess: one thread, this checkout first, the venv's scripts on PATH."
    e = dict(os.environ, OMP_NUM_THREADS="1")
    e["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), e.get("PATH", "")])
    e["PYTHONPATH"] = os.pathsep.join([str(REPO), e.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return e


# A pitfall of the appendix planted for the whole session, to see which tests catch it:
#     ANNOTATED_TRANSFORMER_PITFALL=future python -m pytest tests
# The bug goes in before any test module is imported, so a test that imported a function by name gets the buggy one.
PITFALL = os.environ.get("ANNOTATED_TRANSFORMER_PITFALL")
if PITFALL:
    from annotated_transformer.pitfalls import PITFALLS

    if PITFALL not in PITFALLS:
        raise ValueError(f"unknown ANNOTATED_TRANSFORMER_PITFALL={PITFALL!r}: choose one of {', '.join(PITFALLS)}")
    PLANTED = PITFALLS[PITFALL].apply()  # kept referenced: a collected context manager would remove the bug
    PLANTED.__enter__()  # left in place until the session's process ends


# The tests that take longest (measured with `--durations=15` on a clean 2-core run), started first: pytest-xdist
# hands tests out in collection order, so a long test collected last would leave the other worker idle at the end.
SLOWEST_FIRST = ("test_readme.py::test_bible_train_translate_evaluate", "test_readme.py::test_copy_task_learns",
                 "test_learning.py::test_tiny_model_learns", "test_run_safety.py", "test_stop_analysis.py",
                 "test_pitfalls.py", "test_readme.py::test_config_file_and_torchrun", "test_cli.py",
                 "test_api_reference.py::test_the_reference_builds", "test_gpu_script.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        return next((i for i, name in enumerate(SLOWEST_FIRST) if name in item.nodeid), len(SLOWEST_FIRST))
    items.sort(key=rank)  # stable: the order within each group is kept
