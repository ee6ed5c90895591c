# Type stubs of annotated_transformer.subwords, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5.1. A joint subword vocabulary (BPE), sentence pairs as ids, and the data builder for the trainer."""

import os
from annotated_transformer.data import ParallelCorpus
from annotated_transformer.sampler import DataBundle
from pathlib import Path
from typing import Any, Iterable, Sequence

__all__ = ['TOKENIZER_FILE', 'CORPUS_FILE', 'Tokenizer', 'train_tokenizer', 'EncodedPairs', 'encode_pairs', 'corpus_data']

class Tokenizer:
    """A trained sentencepiece subword model with the special ids pad=0, bos=1, eos=2, unk=3."""
    sp: Any
    pad_id: int
    bos_id: int
    eos_id: int
    unk_id: int
    def __init__(self, model_proto: bytes) -> None:
        """Parameters:
        - model_proto: the serialized sentencepiece model
        """
    @property
    def vocab_size(self) -> int: ...
    def __len__(self) -> int: ...
    def encode(self, text: str) -> list[int]:
        """Subword ids of `text` (normalized first); no BOS/EOS are added."""
    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """encode() for many texts at once (faster)."""
    def decode(self, ids: Iterable[int]) -> str:
        """Text of `ids` (a list, tuple or 1-D tensor); pad, bos and eos ids are dropped, not interpreted."""
    def decode_batch(self, batch: Iterable[Iterable[int]]) -> list[str]: ...
    def tokenize(self, text: str) -> list[str]:
        """The subword pieces of `text` (for display)."""
    def id_to_piece(self, i: int) -> str: ...
    def save(self, path: str | os.PathLike[Any]) -> Path:
        """Write the model file (atomically) to `path`; returns the path."""
    @classmethod
    def load(cls, path: str | os.PathLike[Any]) -> Tokenizer:
        """A Tokenizer from a model file written by `save` or `train_tokenizer`."""

def train_tokenizer(data: ParallelCorpus | Iterable[str] | Iterable[tuple[str, str]], vocab_size: int = 8000, out_path: str | os.PathLike[Any] | None = None, *, model_type: str = 'bpe', character_coverage: float | None = None, byte_fallback: bool = True, max_sentences: int | None = None, seed: int = 0, num_threads: int | None = None) -> Tokenizer:
    """Train a joint subword vocabulary with sentencepiece.

    Parameters:
    - data: a corpus: its train split
    - vocab_size: total size, including the 4 specials and 256 byte pieces
    - out_path: where to save the model file (optional)
    - model_type: "bpe" (as in the paper) or "unigram"
    - character_coverage: None: 0.9995 if >= 1% CJK, else 1.0
    - byte_fallback: spell unknown characters as UTF-8 bytes instead of <unk>
    - max_sentences: train on a random sample of this many sentences
    - seed: for that sample (BPE itself is deterministic)
    - num_threads: default: all CPU cores (at most 16)
    """

class EncodedPairs(list[Any]):
    """A list of (src_ids, tgt_ids) that remembers which pairs were too long and skipped."""
    max_subwords: Any
    skipped: Any
    def __init__(self, items=(), skipped: Sequence[int] = (), max_subwords: int | None = None) -> None: ...
    @property
    def n_skipped(self) -> int: ...

def encode_pairs(pairs: Iterable[tuple[str, str]], tokenizer: Tokenizer, max_subwords: int | None = None, on_too_long: str = 'skip', tgt_tokenizer: Tokenizer | None = None) -> EncodedPairs:
    """Encode pairs to (src_ids, tgt_ids) lists without BOS/EOS; too-long pairs are skipped or raise.

    Parameters:
    - pairs: (source, target) strings
    - tokenizer: the joint tokenizer (or the source one, with tgt_tokenizer)
    - max_subwords: most ids per side, BOS/EOS not counted; None: no limit
    - on_too_long: "skip" (drop, warn, count) or "raise"
    - tgt_tokenizer: a separate target vocabulary, if any
    """
TOKENIZER_FILE: str
CORPUS_FILE: str

def corpus_data(cfg: Any) -> DataBundle:
    """Data builder `--data corpus`: load a corpus, train a joint subword vocabulary on its train split, encode.

    Parameters:
    - cfg: chapter 16's TrainConfig: this reads its data_options and threads
    """
