# Type stubs of annotated_transformer.copytask, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""A sanity check before translation: random symbol sequences paired with themselves, a plain greedy decoder, and exact-copy accuracy."""

import torch
from typing import Sequence

__all__ = ['copy_task_pairs', 'greedy_decode_simple', 'strip_special', 'copy_accuracy']

def copy_task_pairs(n: int, vocab: int, max_length: int, seed: int = 0, min_length: int = 1, exclude: Sequence[tuple[Sequence[int], Sequence[int]]] = ()) -> list[tuple[list[int], list[int]]]:
    """Random symbol sequences paired with themselves: the copy task.

    Parameters:
    - n: number of pairs
    - vocab: vocabulary size including PAD, BOS, EOS: symbols are 3 .. vocab-1
    - max_length: lengths are uniform in min_length .. max_length
    - exclude: pairs to avoid
    """

def greedy_decode_simple(model: torch.nn.Module, src: torch.Tensor, src_mask: torch.Tensor, max_new_tokens: int, bos: int = 1, eos: int = 2, pad: int = 0) -> torch.Tensor:
    """Greedy decoding, no cache: (batch, ≤ max_new_tokens) ids, no BOS, PAD after EOS.

    Parameters:
    - model: an EncoderDecoder (put it in eval mode first)
    - src: (batch, src_len) source ids, padded as `make_batch` pads them
    - src_mask: (batch, 1, src_len) bool
    - max_new_tokens: most tokens to generate per sentence (EOS included)
    - pad: pad: written after EOS
    """

def strip_special(ids: Sequence[int], eos: int = 2) -> list[int]:
    """The tokens before the first EOS."""

def copy_accuracy(model: torch.nn.Module, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], batch_size: int = 256, device: torch.device | str | None = None) -> float:
    """Fraction of pairs whose greedy output equals the target exactly.

    Parameters:
    - device: None: model's
    """
