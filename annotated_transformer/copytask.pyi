# Type stubs of annotated_transformer.copytask, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""A sanity check before translation: random symbol sequences paired with themselves, a plain greedy decoder, and the `--data copy` builder."""

import torch
from annotated_transformer.batching import DataBundle
from torch import Tensor, nn
from typing import Any, Sequence

__all__ = ['COPY_OPTIONS', 'copy_task_pairs', 'greedy_decode_simple', 'strip_special', 'copy_accuracy', 'copy_data']

def copy_task_pairs(n: int, vocab: int, max_length: int, seed: int = ..., min_length: int = ..., exclude: Sequence[tuple[Sequence[int], Sequence[int]]] = ...) -> list[tuple[list[int], list[int]]]:
    """Random symbol sequences paired with themselves: the copy task.

    Parameters:
    - n: number of pairs
    - vocab: vocabulary size including PAD, BOS, EOS: symbols are 3 .. vocab-1
    - max_length: lengths are uniform in min_length .. max_length
    - exclude: pairs to avoid (e.g. the training set)
    """

def greedy_decode_simple(model: nn.Module, src: Tensor, src_mask: Tensor, max_new_tokens: int, bos: int = ..., eos: int = ..., pad: int = ...) -> Tensor:
    """Greedy decoding without a cache: (batch, ≤ max_new_tokens) generated ids, BOS excluded, PAD after EOS.

    Parameters:
    - model: an EncoderDecoder (put it in eval mode first)
    - src: (batch, src_len) source ids, with EOS and padding as in `make_batch`
    - src_mask: (batch, 1, src_len) bool
    - max_new_tokens: most tokens to generate per sentence (EOS included)
    - pad: written after a sentence's EOS
    """

def strip_special(ids: Sequence[int], eos: int = ...) -> list[int]:
    """The tokens before the first EOS."""

def copy_accuracy(model: nn.Module, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], batch_size: int = ..., device: torch.device | str | None = ...) -> float:
    """Fraction of pairs whose greedy output equals the target exactly.

    Parameters:
    - device: default: the model's device
    """
COPY_OPTIONS: dict

def copy_data(cfg: Any) -> DataBundle:
    """The copy task: `train_size` random sequences (seed `cfg.seed`) and `dev_size` different ones.

    Parameters:
    - cfg: chapter 07a's TrainConfig: this reads its data_options and seed
    """
