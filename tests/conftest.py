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
