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
