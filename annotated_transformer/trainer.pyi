# Type stubs of annotated_transformer.trainer, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5.1–§5.4. The training loop: one update from a global batch, logging, evaluation, checkpoints that resume exactly, stopping, memory and DDP; then the copy task, trained on a CPU."""

from annotated_transformer.loss import LabelSmoothingLoss
from annotated_transformer.train_config import TrainConfig
from pathlib import Path
from torch import Tensor, nn
from torch.autograd import Function
from torch.nn import Module
from typing import Any, Callable, Sequence

__all__ = ['Seq2SeqLoss', 'data_file_bytes', 'LogitsSeq2SeqLoss', 'Trainer', 'StepOutOfMemory', 'StepMemory', 'init_distributed']

class Seq2SeqLoss(Module):
    """model → generator → (Σ label-smoothed loss, Σ negative log-likelihood) over the non-PAD labels."""
    criterion: Any
    model: Any
    wraps_model: bool
    def __init__(self, model: nn.Module, criterion: LabelSmoothingLoss) -> None: ...
    def forward(self, src, tgt_in, tgt_out, src_mask, tgt_mask) -> tuple[Tensor, Tensor]: ...

def data_file_bytes(files: dict[Any, Any]) -> dict[str, bytes]:
    """A run's data files (DataBundle.files: name -> text or bytes) as bytes, their names checked."""

class _SmoothedLossFromLogits(Function):
    """Σ label-smoothed loss and Σ NLL over the non-PAD labels, from logits, `rows` rows at a time."""
    @staticmethod
    def forward(ctx, logits, target, pad: int, eps: float, rows: int): ...
    @staticmethod
    def backward(ctx, grad_loss, grad_nll): ...

class LogitsSeq2SeqLoss(Seq2SeqLoss):
    """`Seq2SeqLoss`; under bf16/fp16 autocast the loss comes from the generator's logits, a block of rows at a time, with no float32 copy of them all."""
    block_elements: int
    def forward(self, src, tgt_in, tgt_out, src_mask, tgt_mask) -> tuple[Tensor, Tensor]: ...

class Trainer:
    """Train an `EncoderDecoder` on (source ids, target ids) pairs: one process, or one of many under torchrun."""
    autocast: Any
    bos: Any
    cfg: Any
    criterion: Any
    ddp: Any
    dev_pairs: Any
    device: Any
    eos: Any
    files: Any
    history: Any
    is_main: Any
    last_checkpoint: Any
    loss_module: Any
    model: Any
    model_config: Any
    on_log: Any
    optimizer: Any
    out_dir: Any
    pad: Any
    pairs: Any
    rank: Any
    resumed_from: Any
    sampler: Any
    scheduler: Any
    step: Any
    step_module: Any
    stopped: Any
    world: Any
    def __init__(self, model: nn.Module, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], cfg: TrainConfig | None = None, *, dev_pairs: Sequence[Any] | None = None, out_dir: str | Path | None = None, files: dict[str, str | bytes] | None = None, pad: int = 0, bos: int = 1, eos: int = 2) -> None:
        """Parameters:
        - model: an EncoderDecoder from make_model; its initial weights are the caller's
        - pairs: training pairs, no special tokens
        - cfg: the recipe (the model's own settings: model.config)
        - dev_pairs: held-out pairs for evaluation
        - out_dir: for metrics.jsonl and checkpoints/ (None: nowhere)
        - files: written into out_dir as training starts: DataBundle.files (tokenizer, corpus record)
        """
    def train_step(self, batches: list[list[int]]) -> dict[Any, Any]:
        """One update on the global batch made of `batches` (lists of pair indices): returns its metrics."""
    def next_batches(self) -> list[list[int]]:
        """The sampler batches that make the next global batch."""
    def fit(self, steps: int | None = None, stop: Callable[[], int | bool] | None = None) -> list[dict[Any, Any]]:
        """Train until `steps` updates have been made, or until `stop()` asks to stop after an update; returns the logged records.

        Parameters:
        - steps: train until this many updates have been made (default: cfg.steps)
        - stop: asked before every update: a true value stops the run (see below)
        """
    def log(self, record: dict[Any, Any]) -> None:
        """Keep `record` in `history` and (rank 0, with out_dir) append it to OUT/metrics.jsonl, a whole line or nothing."""
    def evaluate(self, pairs: Sequence[Any] | None = None) -> dict[Any, Any]:
        """Label-smoothed loss and NLL per token on held-out pairs (shared out between ranks)."""
    def save(self, path: str | Path | None = None) -> Path | None:
        """Checkpoint the run (collective under DDP: call it on every rank; rank 0 writes)."""
    def load(self, path: str | Path) -> dict[Any, Any]:
        """Resume from a checkpoint: weights, optimizer, schedule, data position and RNG states."""
    def rewind_metrics(self) -> list[dict[Any, Any]]:
        """Keep the records of OUT/metrics.jsonl up to `self.step` (rank 0); a torn last line is dropped with a warning."""
    def largest_batch(self) -> tuple[int, int, int]:
        """(sentence pairs per rank, source length, target length) of the largest batch: the longest pairs, at the budget."""
    def step_memory(self, limit: int | None = None, probe_tokens: int = 1000) -> StepMemory | None:
        """Measure what a training step on the largest batch takes (see the text); None where memory cannot be measured.

        Parameters:
        - limit: the memory the process may use (bytes): a measurement that might not fit is not run
        - probe_tokens: the middle measurement: at least about this many target tokens
        """

class StepOutOfMemory(RuntimeError):
    """A training update ran out of memory; `checkpoint` holds the run at its last completed update (`step`)."""
    checkpoint: Any
    step: Any
    def __init__(self, message: str, step: int, checkpoint: Path | None) -> None: ...

class StepMemory:
    """The memory of a training step on the largest batch, measured by `Trainer.step_memory` (bytes)."""
    peak: int
    sentences: int
    src_len: int
    tgt_len: int
    fixed: int
    per_sentence: float
    measured: tuple[int, ...]
    def at(self, sentences: int) -> int:
        """The peak of a step on `sentences` pairs of the same lengths."""
    def sentences_at(self, max_tokens: int, world: int = 1) -> int:
        """Pairs per rank in the largest batch under another token budget (0: not even one of the longest pairs fits)."""
    def __init__(self, peak: int, sentences: int, src_len: int, tgt_len: int, fixed: int, per_sentence: float, measured: tuple[int, ...]) -> None: ...

def init_distributed(device: str | None = 'auto') -> tuple[int, int]:
    """Join the process group described by torchrun's environment (RANK, WORLD_SIZE, ...); returns (rank, world_size).

    Parameters:
    - device: the training device setting (cuda → nccl, anything else → gloo)
    """
