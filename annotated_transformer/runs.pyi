# Type stubs of annotated_transformer.runs, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5.2. One run per directory, one process per run, stopping without losing work, and whether a step fits in memory."""

import torch
from pathlib import Path
from typing import Any, Callable

__all__ = ['RUN_FILES', 'LOCK_FILE', 'MEMORY_LIMIT_VARIABLE', 'run_markers', 'run_files', 'clear_run', 'RunLocked', 'RunLock', 'exit_status', 'Stopped', 'StopSignals', 'parse_size', 'format_size', 'memory_capacity', 'memory_in_use', 'measure_peak']
RUN_FILES: tuple[Any, ...]

def run_markers(out_dir: str | Path) -> list[str]:
    """What shows that `out_dir` holds a run: its config.json, metrics.jsonl, checkpoints/step_*.pt (empty: no run)."""

def run_files(out_dir: str | Path) -> list[Path]:
    """The files of the run in `out_dir`: RUN_FILES, the data files config.json lists, leftovers of interrupted writes."""

def clear_run(out_dir: str | Path) -> list[Path]:
    """Delete the run in `out_dir` (the files `run_files` lists, and checkpoints/ if that leaves it empty); returns them."""
LOCK_FILE: str

class RunLocked(ValueError):
    """Another process holds the lock of a run directory."""

class RunLock:
    """An exclusive lock on a run directory (`fcntl.flock` on OUT/.lock, which holds our PID) until `release()` or the process ends."""
    fd: Any
    out: Any
    path: Any
    def __init__(self, out_dir: str | Path) -> None: ...
    def release(self) -> None:
        """Empty the lock file (nobody trains here now) and unlock it."""
    def __enter__(self) -> RunLock: ...
    def __exit__(self, *exc) -> None: ...

def exit_status(signum: int) -> int:
    """The exit status of a program stopped by signal `signum`, by the shell's convention: 128 + signum (Ctrl-C: 130)."""

class Stopped(BaseException):
    """A stop signal that arrived while there was nothing to save yet (see `StopSignals`)."""
    signum: Any
    def __init__(self, signum: int) -> None: ...

class StopSignals:
    """While active (a `with` block), SIGINT (Ctrl-C) and SIGTERM (`kill`, `timeout`, job schedulers) ask the run to
    stop. Until `deferring` is set, the first one raises `Stopped` at once; after, a signal only sets `signum`, which a
    training loop reads between steps (`stop()` is true), so that no step or checkpoint is cut in half. Later signals
    change nothing.
    """
    deferring: Any
    signum: Any
    signals: tuple[Any, ...]
    def __init__(self) -> None: ...
    def __call__(self) -> int:
        """The signal that asked the run to stop (0: none has)."""
    def __enter__(self) -> StopSignals: ...
    def __exit__(self, *exc) -> None: ...
MEMORY_LIMIT_VARIABLE: str

def parse_size(text: str) -> int:
    """Bytes from a size such as 8G, 500MB, 1.5GiB or 123456 (k, M, G, T: powers of 1000; Ki, Mi, Gi, Ti: of 1024)."""

def format_size(n: float) -> str:
    """A number of bytes as people read it: 16.4 GB, 850 MB, 12 kB."""

def memory_capacity(device: str | torch.device = 'cpu') -> tuple[int | None, str]:
    """The most memory this process may use in all, and what sets it: (bytes, a description), or (None, why not).
    On a CPU it counts resident memory, and the tightest of: `ANNOTATED_TRANSFORMER_MEMORY_LIMIT`, the cgroup's
    limit, the address-space limit (`ulimit -v`) and the memory the kernel calls available; on CUDA, memory that
    PyTorch may allocate: the GPU's free memory plus what PyTorch holds already.
    """

def memory_in_use(device: str | torch.device = 'cpu') -> int | None:
    """The memory this process holds now (CPU: the resident set, on Linux; CUDA: what PyTorch allocated), or None."""

def measure_peak(fn: Callable[[], Any], device: str | torch.device = 'cpu') -> int | None:
    """Run `fn()` and return the peak memory of this process while it ran, in bytes (CPU: the resident set, on Linux;
    CUDA: what PyTorch allocated), or None where it cannot be measured.
    """
