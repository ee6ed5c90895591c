# Type stubs of annotated_transformer.loss, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5.3, §5.4. The label-smoothed loss, Adam with the warm-up schedule, and the loss module a training step calls."""

import torch
from annotated_transformer.batching import Batch
from collections.abc import Iterable
from torch import Tensor, nn
from torch.nn import Module
from typing import Any

__all__ = ['LabelSmoothingLoss', 'rate', 'NoamSchedule', 'make_optimizer', 'train_loop', 'Seq2SeqLoss']

class LabelSmoothingLoss(Module):
    """Cross-entropy against the label-smoothed target: 1-ε on the label, ε/(V-2) elsewhere, 0 on PAD."""
    pad_idx: Any
    reduction: Any
    smoothing: Any
    vocab_size: Any
    def __init__(self, vocab_size: int, pad_idx: int = ..., smoothing: float = ..., reduction: str = ...) -> None:
        """Parameters:
        - vocab_size: V, the size of the target vocabulary
        - pad_idx: id of the padding token: gets no probability mass; PAD labels are ignored
        - smoothing: ε (the paper: ε_ls = 0.1)
        - reduction: "mean" over non-PAD labels, "sum", or "none" (per position, 0 at PAD labels)
        """
    def target_distribution(self, target: Tensor, dtype: torch.dtype = ...) -> Tensor:
        """The smoothed target q, shape target.shape + (V,): for figures and tests (the loss never builds it)."""
    def forward(self, log_probs: Tensor, target: Tensor) -> Tensor:
        """Parameters:
        - log_probs: (..., V) log-probabilities, e.g. from `model.generator`
        - target: (...) label ids; positions labelled PAD are ignored
        """

def rate(step: int, d_model: int, warmup: int, factor: float = ...) -> float:
    """The learning rate of §5.3 at update number `step`.

    Parameters:
    - step: number of the update being made, counted from 1
    - d_model: model width; larger models get smaller rates
    - warmup: number of warm-up steps (the paper: 4000)
    - factor: overall scale (the paper: 1)
    """

class NoamSchedule:
    """`LambdaLR` multiplier: update number `last_epoch + 1` gets `rate(last_epoch + 1, d_model, warmup, factor)`."""
    d_model: Any
    factor: Any
    warmup: Any
    def __init__(self, d_model: int, warmup: int, factor: float = ...) -> None: ...
    def __call__(self, last_epoch: int) -> float: ...

def make_optimizer(model: nn.Module, d_model: int, warmup: int = ..., factor: float = ..., betas: tuple[float, float] = ..., eps: float = ..., fused: bool | None = ...) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam with the §5.3 settings and the warm-up/inverse-square-root schedule; call `scheduler.step()` after each update.

    Parameters:
    - d_model: for the schedule
    - warmup: warm-up steps
    - factor: scale of the schedule
    - betas: Adam β1, β2 (§5.3)
    - eps: Adam ε (§5.3)
    - fused: one fused kernel for every update; None: when all parameters are on a GPU
    """

def train_loop(model: nn.Module, batches: Iterable[Batch], criterion: LabelSmoothingLoss, optimizer: torch.optim.Optimizer, scheduler: torch.optim.lr_scheduler.LRScheduler) -> list[float]:
    """Train on `batches`: for each, the loss per label, its gradient, one update.

    Parameters:
    - model: an EncoderDecoder (chapter 06)
    - batches: chapter 06b's batches: one update each
    - criterion: built with reduction="sum"
    - optimizer: Adam, from make_optimizer
    - scheduler: the §5.3 schedule
    - returns: the loss per label of every update
    """

class Seq2SeqLoss(Module):
    """model → generator → (Σ label-smoothed loss, Σ negative log-likelihood) over the non-PAD labels."""
    criterion: Any
    model: Any
    wraps_model: bool
    def __init__(self, model: nn.Module, criterion: LabelSmoothingLoss) -> None: ...
    def forward(self, src, tgt_in, tgt_out, src_mask, tgt_mask) -> tuple[Tensor, Tensor]: ...
