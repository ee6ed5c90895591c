# Type stubs of annotated_transformer.checkpoint, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5.2, §6.1. Checkpoints that resume a run exactly and load safely, the layout of a run directory, and loading a trained model (with checkpoint averaging)."""

import torch
from pathlib import Path
from torch import Tensor, nn
from typing import Any, BinaryIO

__all__ = ['CHECKPOINT_FORMAT', 'rng_state', 'set_rng_state', 'RunWriteError', 'atomic_torch_save', 'atomic_write_bytes', 'append_line', 'save_checkpoint', 'safe_torch_load', 'load_checkpoint', 'checkpoint_path', 'checkpoint_step', 'list_checkpoints', 'find_checkpoint', 'prune_checkpoints', 'average_checkpoints', 'last_checkpoints', 'model_checkpoints', 'load_model']

def rng_state() -> dict[Any, Any]:
    """The states of Python's, NumPy's, PyTorch's CPU and (if present) CUDA random generators, as tensors."""

def set_rng_state(state: dict[Any, Any]) -> None:
    """Restore the generators saved by `rng_state`."""
CHECKPOINT_FORMAT: str

class RunWriteError(OSError):
    """A file of a run could not be written (a full disk, no permission, a folder that is gone): names the file and why."""
    path: Any
    reason: Any
    def __init__(self, path: str | Path, error: Exception) -> None: ...

class _WatchedFile:
    """The file `write` gets: it passes writes on and remembers the first OSError (torch's zip writer replaces it with a RuntimeError: "unexpected pos ...")."""
    error: Any
    f: Any
    def __init__(self, f: BinaryIO) -> None: ...
    def write(self, data) -> int: ...
    def flush(self) -> None: ...

def atomic_torch_save(obj: Any, path: str | Path) -> Path:
    """`torch.save(obj, path)` via a temporary file in the same directory and `os.replace`: all or nothing."""

def atomic_write_bytes(data: bytes, path: str | Path) -> Path:
    """Write `data` to `path` (in a folder that exists) all or nothing, as `atomic_torch_save` does."""

def append_line(path: str | Path, line: str) -> None:
    """Append `line` and a newline to `path`: all of it, or none of it (a write that fails half way is cut back off)."""

def save_checkpoint(path: str | Path, model: nn.Module, optimizer: torch.optim.Optimizer | None = None, scheduler: Any = None, *, step: int = 0, sampler: Any = None, model_config: dict[Any, Any] | None = None, train_config: dict[Any, Any] | None = None, rng: list[dict[Any, Any]] | str | None = 'current', extra: dict[Any, Any] | None = None) -> Path:
    """Write a checkpoint that `load_checkpoint` can read with `weights_only=True`.

    Parameters:
    - path: file to write (atomically)
    - model: weights are saved from the unwrapped model
    - scheduler: an LR scheduler (anything with state_dict())
    - step: number of updates made so far
    - sampler: anything with state_dict(): chapter 12's TokenBatchSampler saves its (epoch, position)
    - model_config: make_model keyword arguments, so load_model can rebuild the model
    - train_config: the training settings (plain values), for the record
    - rng: "current": this process's generators; a list: one per rank; None: skip
    - extra: anything else made of tensors and plain containers
    """

def safe_torch_load(path: str | Path, map_location: str | torch.device = 'cpu') -> Any:
    """`torch.load(path, weights_only=True)` without torch's warnings; one ValueError for a damaged file, another for code."""

def load_checkpoint(path: str | Path, model: nn.Module | None = None, optimizer: torch.optim.Optimizer | None = None, scheduler: Any = None, sampler: Any = None, *, bare_ok: bool = False, restore_rng: bool = False, rank: int = 0, map_location: str | torch.device = 'cpu') -> dict[Any, Any]:
    """Read a checkpoint with `torch.load(weights_only=True)`, refusing anything that is not plain data.

    Parameters:
    - model: if given: load the weights into it
    - optimizer: if given: load its state
    - scheduler: if given: load its state
    - sampler: if given: restore its (epoch, position)
    - bare_ok: weights only: also a bare state dict ({"model": it, "bare_state_dict": True}) or {"model": ...}
    - restore_rng: also restore the random generators (entry `rank` of the saved list)
    """

def checkpoint_path(out_dir: str | Path, step: int) -> Path:
    """Where the checkpoint of `step` lives: OUT/checkpoints/step_000100.pt."""

def checkpoint_step(path: str | Path) -> int | None:
    """The step in a checkpoint's name (step_000100.pt → 100); None for other names."""

def list_checkpoints(out_dir: str | Path) -> list[Path]:
    """The checkpoints of a run (OUT, or OUT/checkpoints itself), oldest first."""

def find_checkpoint(path: str | Path) -> Path:
    """A checkpoint file: `path` itself, or the newest checkpoint of the run directory `path`."""

def prune_checkpoints(out_dir: str | Path, keep_last: int, upto: int | None = None) -> list[Path]:
    """Delete all but the newest `keep_last` checkpoints (of those up to step `upto`); returns the deleted paths.

    Parameters:
    - keep_last: how many of the newest to keep (0 keeps all)
    - upto: only consider checkpoints up to this step (a trainer passes its own step)
    """

def average_checkpoints(paths, out_path: str | Path | None = None) -> dict[str, Tensor]:
    """Average the model weights of several checkpoints (§6.1); integer/bool tensors come from the last one.

    Parameters:
    - paths: checkpoint files (this chapter's format, or bare state dicts), e.g. last_checkpoints(out_dir, 5)
    - out_path: if given: write the average there, atomically, in the same format
    - returns: the averaged model state dict
    """

def last_checkpoints(out_dir: str | Path, k: int = 5) -> list[Path]:
    """The checkpoints of the last k steps of a run, by the step number in their names (step_000100.pt).

    Parameters:
    - out_dir: a run directory (with checkpoints/step_*.pt) or the checkpoints directory itself
    - k: how many: 5 for the paper's base model, 20 for the big one
    - returns: the last k checkpoints, oldest first
    """

def model_checkpoints(path: str | Path, average: int = 1) -> list[Path]:
    """The checkpoint files `load_model(path, average)` reads: `path` itself, or the last `average` of the run `path`.

    Parameters:
    - path: a run directory or a checkpoint file
    - average: how many of the run's last checkpoints to average (§6.1: 5 for the base model)
    """

def load_model(path: str | Path | list[Any], average: int = 1, device: str | torch.device = 'cpu') -> nn.Module:
    """Rebuild the model a run saved, with its (averaged) weights, in eval mode; each checkpoint file is read once.

    Parameters:
    - path: a run directory, a checkpoint file, or a list of checkpoint files (averaged)
    - average: for a run directory: average the weights of its last `average` checkpoints
    """
