# Type stubs of annotated_transformer.train_config, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5, §6.1. Where a run trains (device, mixed precision) and everything that defines it: one dataclass, `TrainConfig`, checked before anything runs."""

import contextlib
import torch
from annotated_transformer.model import EncoderDecoder, TransformerConfig
from torch import nn
from typing import Any, Callable

__all__ = ['ARCHS', 'TO_OURS', 'VOCAB_FIELDS', 'register_arch', 'build_model', 'unwrap', 'model_config_dict', 'pick_device', 'autocast_context', 'TrainConfig', 'field_types', 'is_of_type', 'type_name']
ARCHS: dict[str, Callable[[TransformerConfig], nn.Module]]
TO_OURS: dict[str, Callable[[nn.Module], EncoderDecoder]]

def register_arch(name: str, build: Callable[[TransformerConfig], nn.Module], to_ours: Callable[[nn.Module], EncoderDecoder] | None = None) -> None:
    """Make a model implementation available to `build_model` and `--arch NAME`.

    Parameters:
    - name: the value of --arch that selects it, and what checkpoints record
    - build: config -> model with `.config` (and `.arch = name`)
    - to_ours: optional: the same function in our layers
    """

def build_model(config: TransformerConfig | dict[Any, Any], arch: str | None = None) -> nn.Module:
    """The model `config` describes, built by the architecture `arch` (default: ours, `make_model_from_config`).

    Parameters:
    - config: the model, or a checkpoint's model_config dict (arch included)
    - arch: a name in ARCHS; None: the dict's "arch", else ours
    """

def unwrap(model: nn.Module) -> nn.Module:
    """The plain model inside `torch.compile`, DDP and loss wrappers (a module with `wraps_model = True`)."""

def model_config_dict(model: nn.Module) -> dict[Any, Any]:
    """What a checkpoint stores to rebuild `model` with `build_model`: its TransformerConfig as a dict (+ arch if not ours)."""

def pick_device(device: str | torch.device | None = None, local_rank: int = 0) -> torch.device:
    """The device to train on: the requested one (checked), or the best available.

    Parameters:
    - device: "auto"/None: cuda > mps > cpu; or an explicit device
    - local_rank: with several GPUs per machine: which one this process uses
    """

def autocast_context(device: torch.device, amp: str = 'auto') -> contextlib.AbstractContextManager[Any]:
    """A context manager for the forward pass: bf16 autocast or nothing.

    Parameters:
    - amp: "auto": bf16 on CUDA GPUs that support it, else off; "bf16": always; "off": never
    """
VOCAB_FIELDS: tuple[Any, ...]

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
    data_options: dict[Any, Any]
    device: str
    amp: str
    compile: bool
    log_every: int
    eval_every: int
    checkpoint_every: int
    keep_last: int
    progress: bool
    threads: int
    def __init__(self, model: TransformerConfig = ..., arch: str = 'ours', label_smoothing: float = 0.1, warmup: int = 4000, lr_factor: float = 1.0, adam_beta1: float = 0.9, adam_beta2: float = 0.98, adam_eps: float = 1e-09, max_tokens: int = 25000, accum_steps: int = 1, clip_norm: float = 0.0, steps: int = 100000, seed: int = 0, rebatch: bool = True, pad_to_multiple: int = 1, static_shapes: bool = False, data: str = 'copy', data_options: dict[Any, Any] = ..., device: str = 'auto', amp: str = 'auto', compile: bool = False, log_every: int = 100, eval_every: int = 1000, checkpoint_every: int = 1000, keep_last: int = 5, progress: bool = True, threads: int = 0) -> None: ...
    def validate(self) -> TrainConfig:
        """Check types and ranges; raise ValueError naming the first problem. Returns self."""
    @classmethod
    def from_dict(cls, values: dict[Any, Any], source: str = 'config', warn: bool = True) -> TrainConfig:
        """A validated config from a dict; unknown keys are errors (with a suggestion). The model's settings go under 'model'.

        Parameters:
        - source: names the dict in an error: a file, "the command line"
        - warn: typed: an old name is refused; False for a file: read with its old names
        """
    def to_dict(self) -> dict[Any, Any]:
        """The settings as a plain dict (what config.json and checkpoints store); the model without its vocabulary sizes."""

def field_types(cls) -> dict[str, object]:
    """Each field's type as a Python object (the annotations are strings under `from __future__ import annotations`)."""

def is_of_type(value, kind) -> bool:
    """`isinstance` for a config's field types: int (not bool), float (ints too), bool, str, dict, classes, `X | None`."""

def type_name(kind) -> str:
    """How an error message names a field type: int, str | None, TransformerConfig."""
