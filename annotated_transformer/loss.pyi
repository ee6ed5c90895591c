# Type stubs of annotated_transformer.loss, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5.3, §5.4. The label-smoothed loss, Adam with the warm-up schedule, and the training loop."""

import torch
from annotated_transformer.batching import Batch
from collections.abc import Iterable
from torch import Tensor, nn
from torch.nn import Module
from typing import Any

__all__ = ['LabelSmoothingLoss', 'rate', 'NoamSchedule', 'make_optimizer', 'train_loop']

class LabelSmoothingLoss(Module):
    """Cross-entropy against q: 1-ε on the label, ε/(V-2) elsewhere, 0 on PAD (§5.4)."""
    pad_idx: Any
    reduction: Any
    smoothing: Any
    vocab_size: Any
    def __init__(self, vocab_size: int, pad_idx: int = 0, smoothing: float = 0.1, reduction: str = 'mean') -> None:
        """Parameters:
        - reduction: "mean" over non-PAD labels, "sum", "none" 
        """
    def forward(self, log_probs: Tensor, target: Tensor) -> Tensor:
        """Parameters:
        - returns: (..., V), (...)
        """
    def target_distribution(self, target: Tensor, dtype: torch.dtype = ...) -> Tensor:
        """The smoothed target q, shape target.shape + (V,) (the loss never builds it)."""

def rate(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """The learning rate of §5.3 at update `step` (from 1); `factor`: 1 in the paper."""

class NoamSchedule:
    """`LambdaLR` multiplier: update number `last_epoch + 1` gets `rate(last_epoch + 1, d_model, warmup, factor)`."""
    d_model: Any
    factor: Any
    warmup: Any
    def __init__(self, d_model: int, warmup: int, factor: float = 1.0) -> None: ...
    def __call__(self, last_epoch: int) -> float: ...

def make_optimizer(model: nn.Module, d_model: int, warmup: int = 4000, factor: float = 1.0, betas: tuple[float, float] = (0.9, 0.98), eps: float = 1e-09, fused: bool | None = None) -> tuple[torch.optim.Adam, torch.optim.lr_scheduler.LambdaLR]:
    """Adam with §5.3's settings and schedule; call `scheduler.step()` after each update.

    Parameters:
    - fused: None: on a GPU
    """

def train_loop(model: nn.Module, batches: Iterable[Batch], criterion: LabelSmoothingLoss, optimizer: torch.optim.Optimizer, scheduler: torch.optim.lr_scheduler.LRScheduler) -> list[float]:
    """Train on `batches` (one update each); the loss per label of every update."""
