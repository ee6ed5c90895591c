# Type stubs of annotated_transformer.train_command, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5. The `annotated-transformer train` command: settings from defaults, a file and flags, a run directory, resuming, and one clear line when something goes wrong."""

import argparse
import torch
from annotated_transformer.train_config import TrainConfig
from annotated_transformer.trainer import Trainer
from argparse import Action
from pathlib import Path
from typing import Any, Sequence

__all__ = ['RESUMABLE_CHANGES', 'SMALL_MODEL_WORK', 'MEMORY_MARGIN', 'build_parser', 'resolve_config', 'run_start', 'train_main', 'choose_threads', 'check_memory', 'main']

class _OldFlag(Action):
    """A flag of an earlier release: its value under today's name, its spelling noted to be refused."""
    def __call__(self, parser, namespace, value, option_string=None): ...

def build_parser(config_class: type[Any] = ...) -> argparse.ArgumentParser:
    """The argument parser of `annotated-transformer train` (one flag per field of the config class, by its type)."""
RESUMABLE_CHANGES: set[Any]

def resolve_config(args: argparse.Namespace) -> tuple[TrainConfig, Path | None]:
    """Defaults ← (resumed run's settings) ← --config file ← flags; and the checkpoint to resume from (None: none yet)."""

def run_start(args: argparse.Namespace, resume_from: Path | None) -> str:
    """How the run begins in args.out: 'new', 'resume', 'restart' (step 0) or 'overwrite'; ValueError if runs would mix."""

def train_main(argv: Sequence[str] | None = None) -> int:
    """`annotated-transformer train`: train from a config file and flags; returns the exit status."""
SMALL_MODEL_WORK: float

def choose_threads(cfg: TrainConfig, parameters: int, device: torch.device, default: int | None = None) -> int:
    """CPU threads for the run: --threads if given; else one for a small model on a CPU, PyTorch's default otherwise.

    Parameters:
    - parameters: the model's
    - device: where it trains
    - default: PyTorch's choice (default: torch.get_num_threads() now)
    """
MEMORY_MARGIN: float

def check_memory(trainer: Trainer, cfg: TrainConfig, resuming: bool = False) -> dict[Any, Any]:
    """Measure what a step takes (`Trainer.step_memory`); a ValueError (one line) if it will not fit, else the figures."""

def main(argv: Sequence[str] | None = None) -> int:
    """`annotated-transformer train`: `train_main`, as the console script and `python -m` call it."""
