# Type stubs of annotated_transformer.reference, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5.1, §6.2. The data this book ships or pins: Tatoeba's Chinese–English pairs, and a fixed train/dev/test split for comparing training recipes."""

import os
from annotated_transformer.data import ParallelCorpus
from pathlib import Path
from typing import Any, Sequence

__all__ = ['REFERENCE_SPLITS', 'REFERENCE_SPLIT_SIZES', 'REFERENCE_SPLIT_SHA256', 'tatoeba_path', 'tatoeba_columns', 'load_tatoeba', 'reference_split', 'write_reference_split', 'load_reference_split', 'reference_split_main']

def tatoeba_path() -> Path:
    """The Tatoeba Chinese-English pairs that come with the package (CC-BY 2.0 FR, Tatoeba contributors)."""

def tatoeba_columns(path: str | os.PathLike[Any]) -> tuple[int, int]:
    """(source column, English column) of a Tatoeba file, read from its layout."""

def load_tatoeba(path: str | os.PathLike[Any] | None = None, *, src_lang: str | None = None, join_cjk: bool | None = None, seed: int = 0, dev_frac: float = 0.03, test_frac: float = 0.03, skip_empty: bool = False) -> ParallelCorpus:
    """Tatoeba sentence pairs, other language -> English, split by hash of the source sentence.

    Parameters:
    - path: a Tatoeba file; default: the pairs that come with the package
    - src_lang: default: "zh" for Chinese, else from the file name ("fra.txt" -> "fr")
    - join_cjk: remove word-segmentation spaces; default: when the source is Chinese
    """
REFERENCE_SPLITS: dict[str, tuple[str, str, str]]
REFERENCE_SPLIT_SIZES: dict[Any, Any]
REFERENCE_SPLIT_SHA256: dict[Any, Any]

def reference_split(name: str) -> dict[str, list[str]]:
    """The 'source<TAB>target' lines of each split of reference split `name`.

    Parameters:
    - name: "bible-de-en" or "cmn-eng" 
    """

def write_reference_split(out_dir: str | os.PathLike[Any], names: Sequence[str] = ..., check: bool = True) -> list[Path]:
    """Write NAME.{train,dev,test}.tsv for each reference split; returns the paths.

    Parameters:
    - out_dir: folder for the files, created if missing
    - names: which reference splits
    - check: refuse files whose checksum differs from the recorded one
    """

def load_reference_split(name: str, *, join_cjk: bool = False, skip_empty: bool = False) -> ParallelCorpus:
    """The reference split `name` as a corpus: the pairs `tsv:` reads from the files `write_reference_split` writes.

    Parameters:
    - name: "bible-de-en" or "cmn-eng"
    - join_cjk: remove word-segmentation spaces (the files keep them)
    """

def reference_split_main(argv: Sequence[str] | None = None) -> int:
    """`annotated-transformer reference-split`: write the reference split's files."""
