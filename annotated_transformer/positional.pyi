# Type stubs of annotated_transformer.positional, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Telling the model where each token is: the sinusoidal encoding of §3.5, and learned positions."""

import torch
from torch import Tensor, nn
from torch.nn import Module
from typing import Any

__all__ = ['RELATIVE_CLIP', 'sinusoidal_encoding', 'PositionalEncoding', 'LearnedPositionalEncoding', 'apply_rotary', 'RotaryPositions', 'relative_offsets', 'RelativeAttention', 'RelativePositions']

def sinusoidal_encoding(max_positions: int, d_model: int, *, dtype: torch.dtype = ...) -> Tensor:
    """The sinusoidal positional encoding table of §3.5.

    Parameters:
    - max_positions: number of positions (rows): 0, 1, ..., max_positions - 1
    - d_model: size of each encoding vector; must be even (sine/cosine pairs)
    - dtype: dtype of the result (computed in float64, then cast)
    - returns: (max_positions, d_model): PE[pos, 2i] = sin(pos * w_i), PE[pos, 2i+1] = cos(pos * w_i)
    """

class PositionalEncoding(Module):
    """Add the sinusoidal encoding of §3.5 to x, then dropout (§5.4)."""
    d_model: Any
    dropout: Any
    max_positions: Any
    def __init__(self, d_model: int, dropout: float = ..., max_positions: int = ...) -> None:
        """Parameters:
        - d_model: embedding size; must be even
        - dropout: dropout on the sum, P_drop = 0.1 in the base model (§5.4)
        - max_positions: longest sequence the table covers
        """
    def forward(self, x: Tensor, offset: int = ...) -> Tensor:
        """Parameters:
        - x: embeddings (batch, seq, d_model)
        - offset: position of x[:, 0] (for step-by-step decoding)
        - returns: dropout(x + PE[offset : offset + seq]), (batch, seq, d_model)
        """
    def extra_repr(self) -> str: ...

class LearnedPositionalEncoding(Module):
    """Add a learned position embedding (the §3.5 alternative, Table 3 row (E)) to x, then dropout."""
    d_model: Any
    dropout: Any
    embedding: Any
    max_positions: Any
    def __init__(self, d_model: int, dropout: float = ..., max_positions: int = ...) -> None:
        """Parameters:
        - d_model: embedding size (any size; no sine/cosine pairs here)
        - dropout: dropout on the sum (§5.4)
        - max_positions: number of positions with a learned vector
        """
    def forward(self, x: Tensor, offset: int = ...) -> Tensor:
        """Parameters:
        - x: embeddings (batch, seq, d_model)
        - offset: position of x[:, 0] (for step-by-step decoding)
        - returns: dropout(x + P[offset : offset + seq]), (batch, seq, d_model)
        """

def apply_rotary(x: Tensor, positions: Tensor, base: float = ...) -> Tensor:
    """Rotate each pair $(x_{2i}, x_{2i+1})$ of the last dimension by the angle $m\\theta_i$ (Su et al., 2021).

    Parameters:
    - x: (..., seq, dim), dim even: queries or keys of one or more heads
    - positions: (seq,) the position of each row (an integer tensor)
    - base: theta_i = base^(-2i/dim), the frequencies of §3.5
    - returns: x with pair i of every row at position m rotated by m * theta_i (RoPE)
    """

class RotaryPositions(Module):
    """The positional module of a RoPE model: the attention rotates q and k, so nothing is added; dropout (§5.4) stays."""
    d_model: Any
    dropout: Any
    max_positions: Any
    def __init__(self, d_model: int, dropout: float = ..., max_positions: int = ...) -> None: ...
    def forward(self, x: Tensor, offset: int = ...) -> Tensor:
        """Parameters:
        - returns: dropout(x), (batch, seq, d_model)
        """
    def extra_repr(self) -> str: ...

def relative_offsets(n_queries: int, n_keys: int, clip: int, device=...) -> Tensor:
    """The row of $w^K$ and $w^V$ for every (query $i$, key $j$): $\\mathrm{clip}(j - i, k) + k$.

    Parameters:
    - n_queries: the queries are the last n_queries of the n_keys positions
    - n_keys: keys at positions 0, 1, ..., n_keys - 1
    - clip: k: offsets beyond +-k are clipped to +-k
    - returns: (n_queries, n_keys) long: clip(j - i, k) + k, a row of the 2k + 1 tables
    """
RELATIVE_CLIP: int

class RelativeAttention(Module):
    """Scaled dot-product attention with relative position representations (Shaw et al., 2018): $a^K$ in the scores, $a^V$ in the outputs."""
    clip: Any
    d_k: Any
    d_v: Any
    w_k: Any
    w_v: Any
    def __init__(self, d_k: int, d_v: int, clip: int = ...) -> None:
        """Parameters:
        - d_k: width of each head's queries and keys
        - d_v: width of each head's values
        - clip: k: the largest offset with its own vectors
        """
    def extra_repr(self) -> str: ...
    def forward(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = ..., dropout: nn.Module | None = ...) -> tuple[Tensor, Tensor]:
        """Parameters:
        - q: (batch, h, n, d_k): the queries, the last n of the m positions
        - k: (batch, h, m, d_k)
        - v: (batch, h, m, d_v)
        - mask: bool, True = may attend; broadcasts to (b, h, n, m)
        - dropout: on the weights, as chapter 01's attention
        - returns: z (batch, h, n, d_v) and the weights (batch, h, n, m)
        """

class RelativePositions(RotaryPositions):
    """The positional module of a relative-position model: the self-attentions add $a^K$ and $a^V$, so nothing is added here; dropout (§5.4) stays."""
