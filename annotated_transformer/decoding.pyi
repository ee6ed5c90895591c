# Type stubs of annotated_transformer.decoding, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §6.1 (beam search, length penalty, maximum output length), built as a library: batched, with a key/value cache, and with the choices the paper leaves open written down."""

import torch
from annotated_transformer.model import DecoderLayer, EncoderDecoder
from annotated_transformer.multihead import MultiHeadAttention
from torch import Tensor
from typing import Any, Literal, NamedTuple, overload

__all__ = ['KVCache', 'new_cache', 'IncrementalDecoder', 'greedy_decode', 'gnmt_length_penalty', 'beam_step', 'Hypothesis', 'beam_search', 'check_sampling', 'filter_logits', 'sample_next', 'sample_decode', 'attention_weights']

class KVCache:
    """Keys and values of one attention module kept between decoding steps, in a buffer written in place."""
    capacity: Any
    fixed: Any
    length: Any
    def __init__(self, fixed: bool = False, capacity: int = 0) -> None:
        """Parameters:
        - fixed: True: computed once, at the first call (cross-attention over the encoder memory)
        - capacity: positions to make room for at once (e.g. the longest output); it grows if needed
        """
    @property
    def keys(self) -> Tensor: ...
    @property
    def values(self) -> Tensor: ...
    def update(self, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Append the keys/values of new positions, (rows, h, n, d_k); return those of every position so far."""
    def reorder(self, index: Tensor) -> None:
        """Keep the rows `index` (long), in that order: beam search follows its hypotheses, finished sentences leave."""
    def heads(self, attn: MultiHeadAttention, query: Tensor, key: Tensor, value: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """`attn`'s queries of the new positions, and the keys and values of every position so far: only what is new is projected."""

def new_cache(layer: DecoderLayer, capacity: int = 0) -> tuple[KVCache, KVCache]:
    """Empty caches for decoding: the self-attention keys/values of the prefix, and those of the memory (fixed)."""

class IncrementalDecoder:
    """Run a model's decoder one target position at a time, with a key/value cache or by recomputing the prefix."""
    caches: Any
    embed: Any
    length: Any
    memory: Any
    model: Any
    position: Any
    prefix: Any
    src_mask: Any
    use_cache: Any
    def __init__(self, model: EncoderDecoder, memory: Tensor, src_mask: Tensor | None, use_cache: bool = True, capacity: int = 0) -> None:
        """Parameters:
        - model: put it in eval mode: dropout would make the steps disagree
        - memory: (rows, src_len, d_model): model.encode(src, src_mask), one row per sentence/hypothesis
        - src_mask: (rows, 1, src_len) bool, True = real source token
        - use_cache: False: re-run model.decode over the whole prefix at every step (the reference)
        - capacity: positions to make room for in the cache at once (e.g. the longest output)
        """
    def step(self, tokens: Tensor) -> Tensor:
        """Feed one token per row; return the log-probabilities of the token after it.

        Parameters:
        - tokens: (rows,) long: each row's token at position `self.length`
        - returns: (rows, tgt_vocab): log p(next token | tokens so far, source)
        """
    def reorder(self, index: Tensor, memory: bool = True) -> None:
        """Keep the rows `index`, in that order.

        Parameters:
        - index: (new_rows,) long: new row r continues old row index[r]
        - memory: False: every row keeps its sentence (reordering inside beams): skip the memory
        """

@overload
def greedy_decode(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, max_new_tokens: int | None = None, bos: int = 1, eos: int = 2, pad: int = 0, use_cache: bool = True, return_scores: Literal[False] = False) -> Tensor:
    """Greedy decoding: encode once, then take the most probable token until each sentence has produced EOS.

    Parameters:
    - model: run in eval mode for the call (its modes are restored afterwards)
    - src: (batch, src_len) source ids, right-padded with `pad`
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - max_new_tokens: most tokens per sentence, EOS included; None: its source length + 50 (§6.1)
    - bos: first decoder input
    - eos: ends a sentence
    - pad: written after a sentence's EOS
    - use_cache: False: recompute the whole prefix at every step (slow; the reference)
    - return_scores: also return each generated token's log-probability (0.0 after EOS)
    - returns: (batch, <= max_new_tokens) ids without BOS [, (batch, <= max_new_tokens) log-probs]
    """
@overload
def greedy_decode(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, max_new_tokens: int | None = None, bos: int = 1, eos: int = 2, pad: int = 0, use_cache: bool = True, *, return_scores: Literal[True]) -> tuple[Tensor, Tensor]:
    """Greedy decoding: encode once, then take the most probable token until each sentence has produced EOS.

    Parameters:
    - model: run in eval mode for the call (its modes are restored afterwards)
    - src: (batch, src_len) source ids, right-padded with `pad`
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - max_new_tokens: most tokens per sentence, EOS included; None: its source length + 50 (§6.1)
    - bos: first decoder input
    - eos: ends a sentence
    - pad: written after a sentence's EOS
    - use_cache: False: recompute the whole prefix at every step (slow; the reference)
    - return_scores: also return each generated token's log-probability (0.0 after EOS)
    - returns: (batch, <= max_new_tokens) ids without BOS [, (batch, <= max_new_tokens) log-probs]
    """
@overload
def greedy_decode(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, max_new_tokens: int | None = None, bos: int = 1, eos: int = 2, pad: int = 0, use_cache: bool = True, return_scores: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """Greedy decoding: encode once, then take the most probable token until each sentence has produced EOS.

    Parameters:
    - model: run in eval mode for the call (its modes are restored afterwards)
    - src: (batch, src_len) source ids, right-padded with `pad`
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - max_new_tokens: most tokens per sentence, EOS included; None: its source length + 50 (§6.1)
    - bos: first decoder input
    - eos: ends a sentence
    - pad: written after a sentence's EOS
    - use_cache: False: recompute the whole prefix at every step (slow; the reference)
    - return_scores: also return each generated token's log-probability (0.0 after EOS)
    - returns: (batch, <= max_new_tokens) ids without BOS [, (batch, <= max_new_tokens) log-probs]
    """

def gnmt_length_penalty(length: int | float | Tensor, alpha: float = 0.6) -> float | Tensor:
    """GNMT's length penalty lp(Y) = ((5 + |Y|) / 6)^α (Wu et al. 2016, §7), as used in §6.1.

    Parameters:
    - length: |Y|: generated tokens, EOS included
    - alpha: α (0.6 in the paper); 0 turns the penalty off
    """

def beam_step(live_log_prob: Tensor, log_probs: Tensor, eos: int) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Extend every live hypothesis of n sentences by one token.
    Returns, each (n, 2k) and best first: the candidates' log-probabilities, the
    hypothesis each extends (0..k-1), their tokens, and which of them finish (EOS among
    the best k); and (n, k): the positions of the next live ones.

    Parameters:
    - live_log_prob: (n, k) float64: log p of each live hypothesis; -inf marks an empty slot
    - log_probs: (n, k, V): log p(next token | hypothesis, source) from the decoder
    - eos: the end-of-sentence id
    """

class Hypothesis:
    """A finished hypothesis of beam search."""
    tokens: list[int]
    log_prob: float
    score: float
    def __init__(self, tokens: list[int], log_prob: float, score: float) -> None: ...

class _StepLists(NamedTuple):
    """One step of beam search as Python lists, row i for the i-th active sentence (one transfer from the device)."""
    prefixes: list[list[int]] | None
    done: list[list[bool]]
    cand: list[list[float]]
    rows: list[list[int]]
    live: list[list[float]]
    next_tokens: list[list[int]]
    next_rows: list[list[int]]

@overload
def beam_search(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, beam_size: int = 4, length_penalty: float = 0.6, max_new_tokens: int | None = None, bos: int = 1, eos: int = 2, pad: int = 0, early_stopping: bool = True, use_cache: bool = True, return_hypotheses: Literal[False] = False, trace: list[Any] | None = None) -> Tensor:
    """Beam search with the GNMT length penalty, batched over sentences, reusing the KV cache (§6.1).

    Parameters:
    - model: run in eval mode for the call (its modes are restored afterwards)
    - src: (batch, src_len) source ids, right-padded with `pad`
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - beam_size: k, 4 in the paper (§6.1)
    - length_penalty: α of the GNMT length penalty, 0.6 in the paper; 0: rank by log p
    - max_new_tokens: most tokens per sentence, EOS included; None: its source length + 50 (§6.1)
    - pad: fills the output after EOS
    - early_stopping: stop a sentence once no live hypothesis can beat its best finished one
    - use_cache: False: recompute the whole prefix at every step (the reference)
    - return_hypotheses: also return each sentence's finished hypotheses, best first (<= k)
    - trace: if a list: one record (a dict) per step is appended, for inspection
    - returns: (batch, <= max_new_tokens) best hypotheses, PAD after EOS
    """
@overload
def beam_search(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, beam_size: int = 4, length_penalty: float = 0.6, max_new_tokens: int | None = None, bos: int = 1, eos: int = 2, pad: int = 0, early_stopping: bool = True, use_cache: bool = True, *, return_hypotheses: Literal[True], trace: list[Any] | None = None) -> tuple[Tensor, list[list[Hypothesis]]]:
    """Beam search with the GNMT length penalty, batched over sentences, reusing the KV cache (§6.1).

    Parameters:
    - model: run in eval mode for the call (its modes are restored afterwards)
    - src: (batch, src_len) source ids, right-padded with `pad`
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - beam_size: k, 4 in the paper (§6.1)
    - length_penalty: α of the GNMT length penalty, 0.6 in the paper; 0: rank by log p
    - max_new_tokens: most tokens per sentence, EOS included; None: its source length + 50 (§6.1)
    - pad: fills the output after EOS
    - early_stopping: stop a sentence once no live hypothesis can beat its best finished one
    - use_cache: False: recompute the whole prefix at every step (the reference)
    - return_hypotheses: also return each sentence's finished hypotheses, best first (<= k)
    - trace: if a list: one record (a dict) per step is appended, for inspection
    - returns: (batch, <= max_new_tokens) best hypotheses, PAD after EOS
    """
@overload
def beam_search(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, beam_size: int = 4, length_penalty: float = 0.6, max_new_tokens: int | None = None, bos: int = 1, eos: int = 2, pad: int = 0, early_stopping: bool = True, use_cache: bool = True, return_hypotheses: bool = False, trace: list[Any] | None = None) -> Tensor | tuple[Tensor, list[list[Hypothesis]]]:
    """Beam search with the GNMT length penalty, batched over sentences, reusing the KV cache (§6.1).

    Parameters:
    - model: run in eval mode for the call (its modes are restored afterwards)
    - src: (batch, src_len) source ids, right-padded with `pad`
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - beam_size: k, 4 in the paper (§6.1)
    - length_penalty: α of the GNMT length penalty, 0.6 in the paper; 0: rank by log p
    - max_new_tokens: most tokens per sentence, EOS included; None: its source length + 50 (§6.1)
    - pad: fills the output after EOS
    - early_stopping: stop a sentence once no live hypothesis can beat its best finished one
    - use_cache: False: recompute the whole prefix at every step (the reference)
    - return_hypotheses: also return each sentence's finished hypotheses, best first (<= k)
    - trace: if a list: one record (a dict) per step is appended, for inspection
    - returns: (batch, <= max_new_tokens) best hypotheses, PAD after EOS
    """

def check_sampling(temperature, top_k, top_p) -> None:
    """Refuse a negative temperature, top_k < 1, top_p outside (0, 1], in one line each."""

def filter_logits(logits: Tensor, top_k: int | None = None, top_p: float | None = None) -> Tensor:
    """Top-k, then top-p (nucleus) filtering of next-token scores; the best token always stays.

    Parameters:
    - logits: (..., vocab) scores: logits, or log-probabilities
    - top_k: keep the k highest (None: all)
    - top_p: keep the fewest highest whose probability reaches p (None: all)
    - returns: the same scores, -inf where a token is filtered out
    """

def sample_next(logits: Tensor, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None, generator: torch.Generator | None = None) -> Tensor:
    """One next token per row: the argmax at temperature 0, else a draw from softmax(logits / T), filtered.

    Parameters:
    - logits: (batch, vocab) next-token scores (logits or log-probabilities)
    - temperature: 0: greedy; < 1 sharper, > 1 flatter than the model
    - top_k: see filter_logits
    - top_p: see filter_logits
    - generator: seeded: the same draws every time
    - returns: (batch,) long
    """

@overload
def sample_decode(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, max_new_tokens: int | None = None, *, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None, generator: torch.Generator | None = None, seed: int | None = None, bos: int = 1, eos: int = 2, pad: int = 0, use_cache: bool = True, return_scores: Literal[False] = False) -> Tensor:
    """Sample each sentence token by token, tempered and filtered, with the KV cache.

    Parameters:
    - model: run in eval mode for the call (modes restored afterwards)
    - src: (batch, src_len) source ids, right-padded with `pad`
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - max_new_tokens: EOS included; None: source length + 50 (§6.1)
    - temperature: 0: greedy decoding; < 1 sharper, > 1 flatter
    - top_k: keep the k most probable tokens (None: all)
    - top_p: keep the smallest set holding p (None: all)
    - generator: the draws (None: from `seed`)
    - seed: None, and no generator: torch's global generator
    - use_cache: as greedy's
    - return_scores: also each token's log p (0.0 after EOS)
    - returns: (batch, <= max_new_tokens) ids [, log-probs]
    """
@overload
def sample_decode(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, max_new_tokens: int | None = None, *, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None, generator: torch.Generator | None = None, seed: int | None = None, bos: int = 1, eos: int = 2, pad: int = 0, use_cache: bool = True, return_scores: Literal[True]) -> tuple[Tensor, Tensor]:
    """Sample each sentence token by token, tempered and filtered, with the KV cache.

    Parameters:
    - model: run in eval mode for the call (modes restored afterwards)
    - src: (batch, src_len) source ids, right-padded with `pad`
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - max_new_tokens: EOS included; None: source length + 50 (§6.1)
    - temperature: 0: greedy decoding; < 1 sharper, > 1 flatter
    - top_k: keep the k most probable tokens (None: all)
    - top_p: keep the smallest set holding p (None: all)
    - generator: the draws (None: from `seed`)
    - seed: None, and no generator: torch's global generator
    - use_cache: as greedy's
    - return_scores: also each token's log p (0.0 after EOS)
    - returns: (batch, <= max_new_tokens) ids [, log-probs]
    """
@overload
def sample_decode(model: EncoderDecoder, src: Tensor, src_mask: Tensor | None, max_new_tokens: int | None = None, *, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None, generator: torch.Generator | None = None, seed: int | None = None, bos: int = 1, eos: int = 2, pad: int = 0, use_cache: bool = True, return_scores: bool = False) -> Tensor | tuple[Tensor, Tensor]:
    """Sample each sentence token by token, tempered and filtered, with the KV cache.

    Parameters:
    - model: run in eval mode for the call (modes restored afterwards)
    - src: (batch, src_len) source ids, right-padded with `pad`
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - max_new_tokens: EOS included; None: source length + 50 (§6.1)
    - temperature: 0: greedy decoding; < 1 sharper, > 1 flatter
    - top_k: keep the k most probable tokens (None: all)
    - top_p: keep the smallest set holding p (None: all)
    - generator: the draws (None: from `seed`)
    - seed: None, and no generator: torch's global generator
    - use_cache: as greedy's
    - return_scores: also each token's log p (0.0 after EOS)
    - returns: (batch, <= max_new_tokens) ids [, log-probs]
    """

def attention_weights(model: EncoderDecoder, src: Tensor, tgt_in: Tensor, src_mask: Tensor | None, tgt_mask: Tensor | None) -> dict[str, Tensor]:
    """The attention weights of every layer and head, for the three kinds of attention: one teacher-forced pass in eval mode.

    Parameters:
    - src: (batch, src_len) source ids
    - tgt_in: (batch, tgt_len) the decoder's input: BOS, then the target
    - src_mask: (batch, 1, src_len) bool, True = real source token
    - tgt_mask: (batch, tgt_len, tgt_len) bool, True = may attend
    - returns: kind -> weights (layers, batch, h, queries, keys)
    """
