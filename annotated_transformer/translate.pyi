# Type stubs of annotated_transformer.translate, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §5 (training data, batching, the recipe) and §6.1 (beam search, checkpoint averaging, BLEU): the pieces put together, trained, decoded and scored."""

import os
import torch
from annotated_transformer.data import ParallelCorpus
from annotated_transformer.subwords import Tokenizer
from pathlib import Path
from torch import nn
from typing import Any, Callable, Sequence

__all__ = ['CONFIG_FILE', 'WEIGHTS_FILE', 'PRETRAINED_FORMAT', 'DECODING_FILE', 'TUNE_ALPHAS', 'TUNE_AVERAGES', 'run_dir_of', 'Translator', 'bleu_and_chrf', 'repeats', 'score_translations', 'format_scores', 'length_warning', 'evaluate_translator', 'tune_decoding', 'chosen_decoding', 'translate_main', 'evaluate_main']

def run_dir_of(path: str | os.PathLike[Any]) -> Path:
    """The run directory of `path`: itself, or for a checkpoint file OUT/checkpoints/step_N.pt, OUT."""

class Translator:
    """A trained model and its tokenizer: sentences in, translations out (greedy or beam search, batched by length)."""
    avg: Any
    checkpoints: Any
    corpus: Any
    device: Any
    model: Any
    model_config: Any
    run_dir: Any
    tokenizer: Any
    use_cache: Any
    def __init__(self, path: str | os.PathLike[Any], avg: int = 1, tokenizer: str | os.PathLike[Any] | None = None, device: str | torch.device | None = 'cpu', convert: bool = True) -> None:
        """Parameters:
        - path: a run directory (newest checkpoint), a checkpoint file or a save_pretrained folder
        - avg: average the weights of the last `avg` checkpoints of the run (§6.1: 5 for the base model)
        - tokenizer: default: OUT/tokenizer.model, written by `--data corpus`
        - device: "auto": the best device present
        - convert: an --arch torch model: decode with its weights in our implementation (same function, with the KV cache); False: decode with nn.Transformer itself (no cache: slower)
        """
    def prepare(self, text: str) -> str:
        """The source text as the training data saw it (e.g. without word-segmentation spaces in Chinese)."""
    def translate(self, sentences: Sequence[str], beam_size: int = 4, length_penalty: float = 0.6, greedy: bool = False, batch_size: int = 64, max_tokens: int = 6000, sample: bool = False, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None, seed: int | None = None) -> list[str]:
        """Translate `sentences`: encode, sort by length, decode in batches, detokenize, restore the order.

        Parameters:
        - sentences: source sentences; an empty one is translated as an empty string
        - beam_size: k of beam search (§6.1: 4)
        - length_penalty: α of beam search (§6.1: 0.6)
        - greedy: greedy decoding instead of beam search
        - batch_size: most sentences decoded together
        - max_tokens: most padded source tokens per batch (beam search multiplies them by k)
        - sample: sample instead of searching (chapter 21's sample_decode), with these settings:
        - temperature: 0: greedy; < 1 sharper, > 1 flatter than the model
        - top_k: keep the k most probable tokens
        - top_p: keep the smallest set of tokens holding p
        - seed: the same seed, sentences and settings: the same samples
        - returns: detokenized translations, in the order of `sentences`
        """
    def attention_maps(self, sentence: str, translation: str | None = None, layer: int = -1) -> dict[Any, Any]:
        """The attention weights of one layer for one sentence pair, averaged over heads (for heat maps).

        Parameters:
        - sentence: a source sentence
        - translation: the target side to feed (teacher forcing); default: the beam translation
        - layer: which encoder/decoder layer
        - returns: tokens and head-averaged weights of the three kinds of attention, as plain lists
        """
    @classmethod
    def from_model(cls, model: nn.Module, tokenizer: Tokenizer | str | os.PathLike[Any], device: str | torch.device | None = 'cpu', corpus: dict[Any, Any] | None = None, convert: bool = True) -> Translator:
        """A Translator for a model in memory and its tokenizer: no run directory needed.

        Parameters:
        - model: an EncoderDecoder (or a registered arch) with its TransformerConfig
        - tokenizer: the tokenizer, or its file
        - device: "auto": the best device present
        - corpus: the corpus record of the run (corpus.json), for `prepare` and `evaluate_translator`
        - convert: an --arch torch model: decode with our layers (see __init__)
        """
    def save_pretrained(self, folder: str | os.PathLike[Any]) -> Path:
        """Write tokenizer.model, then the model with chapter 07's `write_pretrained` (model.safetensors, config.json) into `folder`; `Translator.from_pretrained` reads them."""
    @classmethod
    def from_pretrained(cls, folder: str | os.PathLike[Any], device: str | torch.device | None = 'cpu', tokenizer: str | os.PathLike[Any] | None = None) -> Translator:
        """The Translator that save_pretrained wrote into `folder`, read without pickle.

        Parameters:
        - folder: written by save_pretrained
        - device: "auto": the best device present
        - tokenizer: the tokenizer file; needed for a folder of EncoderDecoder.save_pretrained, which has none
        """
CONFIG_FILE: str
WEIGHTS_FILE: str
PRETRAINED_FORMAT: str

def bleu_and_chrf(tgt_lang: str | None = None): ...

def repeats(text: str, n: int = 4) -> bool:
    """Whether some run of `n` words occurs twice in `text`: greedy decoding caught in a loop repeats itself."""

def score_translations(hypotheses: Sequence[str], references: Sequence[str], tgt_lang: str | None = None) -> dict[Any, Any]:
    """Corpus BLEU and chrF with sacrebleu, each with its signature.

    Parameters:
    - hypotheses: detokenized system output, one per sentence
    - references: detokenized references, same order
    - tgt_lang: target language code (picks BLEU's tokenizer for zh/ja/ko)
    - returns: {"bleu": {...}, "chrf": {...}}, each with score, signature and sacrebleu's full line
    """

def format_scores(scores: dict[Any, Any]) -> str:
    """Each score as sacrebleu prints it, with its signature; then the output's length against the references."""

def length_warning(scores: dict[Any, Any], tolerance: float = 0.1) -> str | None:
    """One line when the output is more than `tolerance` shorter or longer than the references; else None."""

def evaluate_translator(translator: Translator, split: str = 'test', limit: int | None = None, greedy: bool = False, beam_size: int = 4, length_penalty: float = 0.6, batch_size: int = 64, samples: int = 5, corpus: ParallelCorpus | None = None) -> dict[Any, Any]:
    """Translate a split of the run's corpus and score it; a JSON-able record.

    Parameters:
    - split: which split of the run's corpus
    - limit: only the first `limit` pairs of the split
    - samples: how many example translations to keep (evenly spread over the split)
    - corpus: the run's corpus, already read (tune_decoding reads it once for all its settings)
    """
DECODING_FILE: str
TUNE_ALPHAS: tuple[Any, ...]
TUNE_AVERAGES: tuple[Any, ...]

def tune_decoding(run: str | os.PathLike[Any], alphas: Sequence[float] = (0.6, 1.0, 1.4), averages: Sequence[int] = (1, 5), beam_size: int = 4, batch_size: int = 64, device: str = 'cpu', limit: int | None = None, log: Callable[[str], None] | None = None) -> dict[Any, Any]:
    """Choose α and the checkpoints to average by BLEU on the *dev* split (greedy is a candidate); write OUT/decoding.json.

    Parameters:
    - run: a run directory trained with --data corpus
    - beam_size: k of beam search (§6.1: 4)
    - limit: only the first `limit` dev pairs (for quick checks)
    - log: called with one line per setting tried
    """

def chosen_decoding(run: str | os.PathLike[Any]) -> dict[Any, Any] | None:
    """What `tune_decoding` chose for `run` ({'avg': K, 'decoding': {...}}), or None if it was never tuned."""

def translate_main(argv: Sequence[str] | None = None) -> int:
    """`annotated-transformer translate`: translate sentences, one per line, with a trained run."""

def evaluate_main(argv: Sequence[str] | None = None) -> int:
    """`annotated-transformer evaluate`: BLEU and chrF (sacrebleu) of a trained run on its corpus, or of two files."""
