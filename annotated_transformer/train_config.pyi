# Type stubs of annotated_transformer.train_config, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5, §6.1. Where a run trains (device, mixed precision) and everything that defines it: one dataclass, `TrainConfig`, checked before anything runs."""

import contextlib
import torch
from annotated_transformer.model import TransformerConfig
from fastcore.basics import _clsmethod

__all__ = ['VOCAB_FIELDS', 'pick_device', 'autocast_context', 'TrainConfig', 'field_types', 'is_of_type', 'type_name']

def pick_device(device: str | torch.device | None = ..., local_rank: int = ...) -> torch.device:
    """The device to train on: the requested one (checked), or the best available.

    Parameters:
    - device: "auto"/None: cuda > mps > cpu; or an explicit device
    - local_rank: with several GPUs per machine: which one this process uses
    """

def autocast_context(device: torch.device, amp: str = ...) -> contextlib.AbstractContextManager:
    """A context manager for the forward pass: bf16 autocast or nothing.

    Parameters:
    - amp: "auto": bf16 on CUDA GPUs that support it, else off; "bf16": always; "off": never
    """
VOCAB_FIELDS: tuple

class TrainConfig:
    """Everything that defines a training run. Defaults: the paper's base model and recipe."""
    model: TransformerConfig
    arch: str
    label_smoothing: float
    warmup: int
    lr_factor: float
    adam_beta1: float
    adam_beta2: float
    adam_eps: float
    max_tokens: int
    accum_steps: int
    clip_norm: float
    steps: int
    seed: int
    rebatch: bool
    pad_to_multiple: int
    static_shapes: bool
    data: str
    data_options: dict
    device: str
    amp: str
    compile: bool
    log_every: int
    eval_every: int
    checkpoint_every: int
    keep_last: int
    progress: bool
    threads: int
    def __init__(self, model: TransformerConfig = ..., arch: str = ..., label_smoothing: float = ..., warmup: int = ..., lr_factor: float = ..., adam_beta1: float = ..., adam_beta2: float = ..., adam_eps: float = ..., max_tokens: int = ..., accum_steps: int = ..., clip_norm: float = ..., steps: int = ..., seed: int = ..., rebatch: bool = ..., pad_to_multiple: int = ..., static_shapes: bool = ..., data: str = ..., data_options: dict = ..., device: str = ..., amp: str = ..., compile: bool = ..., log_every: int = ..., eval_every: int = ..., checkpoint_every: int = ..., keep_last: int = ..., progress: bool = ..., threads: int = ...) -> None: ...
    def validate(self) -> TrainConfig:
        """Check types and ranges; raise ValueError naming the first problem. Returns self."""
    from_dict: _clsmethod
    def to_dict(self) -> dict:
        """The settings as a plain dict (what config.json and checkpoints store); the model without its vocabulary sizes."""

def field_types(cls) -> dict[str, object]:
    """Each field's type as a Python object (the annotations are strings under `from __future__ import annotations`)."""

def is_of_type(value, kind) -> bool:
    """`isinstance` for a config's field types: int (not bool), float (ints too), bool, str, dict, classes, `X | None`."""

def type_name(kind) -> str:
    """How an error message names a field type: int, str | None, TransformerConfig."""
