# Type stubs of annotated_transformer.decoder_only, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Beyond the paper: a decoder-only language model built from the book's own parts, sampled with the key/value cache, trained on the English Bible, with the modern block's changes measured one by one."""

import torch
from annotated_transformer.decoding import KVCache
from annotated_transformer.model import EncoderLayer
from annotated_transformer.multihead import MultiHeadAttention
from annotated_transformer.positions import RotaryMultiHeadAttention
from torch import Tensor, nn
from torch.nn import Module
from typing import Any

__all__ = ['NORMS', 'FEED_FORWARDS', 'CausalLayer', 'LMConfig', 'RMSNorm', 'make_norm', 'SwiGLU', 'GroupedQueryAttention', 'RotaryGroupedQueryAttention', 'DecoderOnlyLM', 'prefix_mask', 'lm_nll', 'generate', 'ngrams', 'distinct_n', 'repetition_rate', 'cache_bytes']

class CausalLayer(EncoderLayer):
    """One decoder-only block: chapter 07's encoder layer (self-attention, feed-forward) under a causal mask, with a KV cache."""
    def forward(self, x: Tensor, mask: Tensor | None = None, cache: KVCache | None = None) -> Tensor:
        """Parameters:
        - x: (batch, seq, d_model)
        - mask: bool, True = may attend: (1|batch, seq, cached + seq); causal unless a prefix is open
        - cache: keys and values of the earlier positions (chapter 21)
        - returns: (batch, seq, d_model)
        """
NORMS: tuple[Any, ...]
FEED_FORWARDS: tuple[Any, ...]

class LMConfig:
    """Hyperparameters of a decoder-only language model; the defaults are the paper's block, small."""
    vocab: int
    N: int
    d_model: int
    d_ff: int
    h: int
    dropout: float
    max_positions: int
    positional: str
    norm_first: bool
    norm: str
    feed_forward: str
    n_kv_heads: int | None
    inner_dropout: bool
    def __post_init__(self) -> None: ...
    @property
    def kv_heads(self) -> int:
        """Key/value heads: `n_kv_heads`, or one per query head."""
    def __init__(self, vocab: int = 2000, N: int = 2, d_model: int = 128, d_ff: int = 512, h: int = 4, dropout: float = 0.1, max_positions: int = 512, positional: str = 'sinusoidal', norm_first: bool = False, norm: str = 'layer', feed_forward: str = 'relu', n_kv_heads: int | None = None, inner_dropout: bool = False) -> None: ...

class RMSNorm(Module):
    """Root-mean-square normalisation (Zhang & Sennrich, 2019): LayerNorm without mean and bias."""
    eps: Any
    weight: Any
    def __init__(self, d_model: int, eps: float = 1e-05) -> None: ...
    def forward(self, x: Tensor) -> Tensor:
        """Parameters:
        - returns: (..., d_model) -> same
        """

def make_norm(kind: str, d_model: int, eps: float = 1e-05) -> nn.Module:
    """A LayerNorm (`kind='layer'`) or an RMSNorm (`kind='rms'`) of width `d_model`."""

class SwiGLU(Module):
    """FFN_SwiGLU(x) = (Swish(x W) * x V) W_2 (Shazeer, 2020): a gated feed-forward, no biases."""
    dropout: Any
    w_down: Any
    w_gate: Any
    w_up: Any
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0) -> None: ...
    def forward(self, x: Tensor) -> Tensor:
        """Parameters:
        - returns: (..., d_model) -> same
        """

class GroupedQueryAttention(MultiHeadAttention):
    """Multi-head attention whose h query heads share `n_kv_heads` key/value heads (Ainslie et al., 2023); the cache keeps only those."""
    n_kv_heads: Any
    w_k: Any
    w_v: Any
    def __init__(self, h: int, d_model: int, n_kv_heads: int, dropout: float = 0.1) -> None: ...
    def keys_values(self, key: Tensor, value: Tensor, start: int = 0) -> tuple[Tensor, Tensor]:
        """K W^K, V W^V of the shared heads: (b, m, d_model) -> (b, n_kv_heads, m, d_k)."""
    def heads(self, query: Tensor, key: Tensor, value: Tensor, cache=None):
        """Queries of the h heads; each shared key/value head repeated for its group of h/n_kv_heads."""

class RotaryGroupedQueryAttention(RotaryMultiHeadAttention, GroupedQueryAttention):
    """Grouped-query attention with rotary positions: chapter 26's turns on the shared keys."""

class DecoderOnlyLM(Module):
    """A decoder-only language model: embeddings, positions, N causal layers, the tied generator."""
    config: Any
    embed: Any
    generator: Any
    layers: Any
    norm: Any
    position: Any
    def __init__(self, config: LMConfig) -> None: ...
    def forward(self, tokens: Tensor, mask: Tensor | None = None, caches: list[KVCache] | None = None) -> Tensor:
        """Parameters:
        - tokens: (batch, seq) ids that follow the cached positions (if any)
        - mask: (1|batch, seq, cached + seq) bool; None: causal
        - caches: one per layer, from `new_caches`: chapter 21's KVCache
        - returns: decoder states (batch, seq, d_model); `self.generator` gives log p
        """
    def new_caches(self, capacity: int = 0) -> list[KVCache]:
        """One empty key/value cache per layer, with room for `capacity` positions."""

def prefix_mask(prefix_lengths: Tensor, size: int) -> Tensor:
    """Causal attention, except that the first `prefix_lengths[b]` positions of row b see each other.

    Parameters:
    - prefix_lengths: (batch,) long: positions of each row that every position may see
    - size: sequence length
    - returns: bool (batch, size, size): True = query i may attend to key j
    """

def lm_nll(model: DecoderOnlyLM, tokens: Tensor, mask: Tensor | None = None, targets: Tensor | None = None, ignore: int | None = None) -> tuple[Tensor, Tensor]:
    """The language-model loss: -log p(x_{t+1} | x_1 ... x_t), summed over the scored targets.

    Parameters:
    - tokens: (batch, seq) long: each position predicts the next one
    - mask: attention mask over seq - 1 positions; None: causal
    - targets: (batch, seq - 1) the ids to score; None: tokens[:, 1:]
    - ignore: a target id that is not scored (padding, the source)
    - returns: (summed negative log-likelihood, number of tokens scored)
    """

def generate(model: DecoderOnlyLM, prompt: Tensor, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None, generator: torch.Generator | None = None, use_cache: bool = True, eos: int | None = None, prefix: bool = False) -> Tensor:
    """Continue `prompt` one sampled token at a time, in eval mode; the model's mode is restored.

    Parameters:
    - prompt: (batch, t) long: the beginning of each sequence
    - max_new_tokens: tokens to add
    - temperature: sampling settings: see sample_next
    - use_cache: False: run the whole sequence again at every step (the reference)
    - eos: stop when every row has produced it
    - prefix: True: the prompt's positions see each other (a prefix LM)
    - returns: (batch, t + new) long: the prompt and its continuation
    """

def ngrams(tokens: list[Any], n: int) -> list[tuple[Any, ...]]:
    """The n-grams of a sequence, in order."""

def distinct_n(samples: list[list[Any]], n: int) -> float:
    """Distinct n-grams over all n-grams of `samples` (Li et al., 2016); 1.0: no n-gram repeats."""

def repetition_rate(sample: list[Any], n: int = 4) -> float:
    """Share of a sample's n-grams that occurred earlier in it (Welleck et al., 2020); 0: none."""

def cache_bytes(caches: list[KVCache]) -> int:
    """Memory of the keys and values the caches hold (the filled part), in bytes."""
