# Type stubs of annotated_transformer.sampler, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Batches for long runs: by length under a token budget, seeded, resumable and shared between GPUs; fixed shapes for compiled models; the data builders behind `train --data`."""

from annotated_transformer.batching import Batch
from typing import Any, Callable, Iterator, Sequence

__all__ = ['SOURCE_ALLOWANCE', 'DATA_BUILDERS', 'COPY_OPTIONS', 'pad_lengths', 'make_batch', 'with_empty_rows', 'TokenBatchSampler', 'budget_rows', 'DataBundle', 'register_data', 'get_data_builder', 'copy_data']

def pad_lengths(batch: Batch, multiple: int, pad: int = 0) -> Batch:
    """`batch` with both lengths rounded up to a multiple of `multiple`, masks rebuilt.

    Parameters:
    - batch: a batch from make_batch
    - multiple: round both lengths up to a multiple of this
    - pad: padding id
    """

def make_batch(pairs: Sequence[tuple[Sequence[int], Sequence[int]]], pad: int = 0, bos: int = 1, eos: int = 2, pad_to_multiple: int = 1) -> Batch:
    """Chapter 08's `make_batch`, both lengths rounded up to a multiple of `pad_to_multiple`.

    Parameters:
    - pairs: (source ids, target ids), without special tokens
    - pad: padding id
    - bos: beginning-of-sentence id (first decoder input)
    - eos: end-of-sentence id (ends every source and every label sequence)
    - pad_to_multiple: round both padded lengths up to a multiple of this (fewer shapes to compile)
    """

def with_empty_rows(batch: Batch, rows: int, pad: int = 0) -> Batch:
    """`batch` with rows of padding appended up to `rows`: no token, no label, no key.

    Parameters:
    - batch: a batch from make_batch
    - rows: the number of rows to reach, at least len(batch)
    - pad: padding id
    """
SOURCE_ALLOWANCE: int

class TokenBatchSampler:
    """Batches of pair indices grouped by length, each within a padded target-token budget; seeded, infinite, resumable."""
    epoch: Any
    max_tokens: Any
    num_shards: Any
    pad_to_multiple: Any
    position: Any
    rebatch: Any
    seed: Any
    shuffle: Any
    src_lens: Any
    tgt_lens: Any
    def __init__(self, pairs: Sequence[tuple[Sequence[int], Sequence[int]]], max_tokens: int, seed: int = 0, shuffle: bool = True, num_shards: int = 1, rebatch: bool = True, pad_to_multiple: int = 1) -> None:
        """Parameters:
        - pairs: (source ids, target ids) without special tokens
        - max_tokens: budget: pairs × longest target ≤ max_tokens (× longest source ≤ 4 max_tokens)
        - seed: the plan of epoch e depends only on (seed, e)
        - shuffle: False: batches in length order (for evaluation)
        - num_shards: DDP world size: a batch holds at least this many pairs
        - rebatch: True: cut batches anew each epoch; False: cut them once
        - pad_to_multiple: the budget counts lengths rounded up to this
        """
    def epoch_batches(self, epoch: int) -> list[list[int]]:
        """The batches (lists of pair indices) of `epoch`, in the order they are used."""
    def __len__(self) -> int:
        """Number of batches in the current epoch."""
    def __iter__(self) -> Iterator[list[int]]:
        """Yield batches forever, epoch after epoch, starting at the saved (epoch, position)."""
    def state_dict(self) -> dict[Any, Any]: ...
    def load_state_dict(self, state: dict[Any, Any]) -> None: ...
    def batch_rows(self, indices: list[int]) -> int:
        """The most pairs that a batch of the pairs `indices`' padded lengths may hold: its rows once filled up with `with_empty_rows`."""

def budget_rows(max_tokens: int, src_len: int, tgt_len: int) -> int:
    """The most pairs of these padded lengths a batch may hold: the largest n with n × max(tgt_len, src_len / SOURCE_ALLOWANCE) <= max_tokens, as `_fits` counts."""

class DataBundle:
    """What a data builder returns: token-id pairs for training and evaluation, and the vocabulary facts."""
    train: Sequence[tuple[Sequence[int], Sequence[int]]]
    dev: Sequence[tuple[Sequence[int], Sequence[int]]]
    src_vocab: int
    tgt_vocab: int
    pad: int
    bos: int
    eos: int
    meta: dict[Any, Any]
    files: dict[Any, Any]
    def __init__(self, train: Sequence[tuple[Sequence[int], Sequence[int]]], dev: Sequence[tuple[Sequence[int], Sequence[int]]], src_vocab: int, tgt_vocab: int, pad: int = 0, bos: int = 1, eos: int = 2, meta: dict[Any, Any] = ..., files: dict[Any, Any] = ...) -> None: ...
DATA_BUILDERS: dict[str, Callable[[Any], DataBundle] | str]

def register_data(name: str, builder: Callable[[Any], DataBundle] | str) -> None:
    """Make a data builder available to `annotated-transformer train --data NAME`.

    Parameters:
    - name: the value of --data that selects it
    - builder: a function, or "module:function" imported when used
    """

def get_data_builder(name: str) -> Callable[[Any], DataBundle]:
    """The builder registered as `name`, or the function named by `module:function`."""
COPY_OPTIONS: dict[Any, Any]

def copy_data(cfg: Any) -> DataBundle:
    """The copy task: `train_size` random sequences (seed `cfg.seed`) and `dev_size` different ones.

    Parameters:
    - cfg: chapter 16's TrainConfig: this reads its data_options and seed
    """
