# Type stubs of annotated_transformer.batching, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5.1. Special token ids, the padded batch for teacher forcing, and batching by length under a token budget."""

from torch import Tensor
from typing import Sequence

__all__ = ['PAD', 'BOS', 'EOS', 'UNK', 'Batch', 'make_batch', 'length_batches']
PAD: int
BOS: int
EOS: int
UNK: int

class Batch:
    """A padded batch of sentence pairs, ready for `EncoderDecoder` (all batch-first)."""
    src: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    src_mask: Tensor
    tgt_mask: Tensor
    ntokens: int
    src_ntokens: int
    def __init__(self, src: Tensor, tgt_in: Tensor, tgt_out: Tensor, src_mask: Tensor, tgt_mask: Tensor, ntokens: int, src_ntokens: int) -> None: ...
    def __len__(self) -> int: ...
    def to(self, device, non_blocking: bool = False) -> Batch:
        """The same batch with every tensor moved to `device`."""

def make_batch(pairs: Sequence[tuple[Sequence[int], Sequence[int]]], pad: int = 0, bos: int = 1, eos: int = 2) -> Batch:
    """Pad `pairs` into a `Batch`: `src` ids+EOS, `tgt_in` BOS+ids, `tgt_out` ids+EOS.

    Parameters:
    - pairs: (source ids, target ids)
    - eos: the special ids
    """

def length_batches(pairs: Sequence[tuple[Sequence[int], Sequence[int]]], max_tokens: int) -> list[list[int]]:
    """Indices of `pairs` in length order, cut into batches under a padded-target budget.

    Parameters:
    - pairs: (source ids, target ids)
    - max_tokens: budget: pairs × longest target (with EOS) <= max_tokens
    """
