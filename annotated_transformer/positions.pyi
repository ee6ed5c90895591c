# Type stubs of annotated_transformer.positions, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Beyond the paper: rotary positions (RoPE) and Shaw et al.'s relative positions, inside the attention, against the sinusoids of §3.5."""

from annotated_transformer.multihead import MultiHeadAttention
from torch import Tensor, nn
from torch.nn import Module
from typing import Any

__all__ = ['RELATIVE_CLIP', 'apply_rotary', 'RotaryPositions', 'RotaryMultiHeadAttention', 'relative_offsets', 'RelativeAttention', 'RelativePositions', 'RelativeMultiHeadAttention']

def apply_rotary(x: Tensor, positions: Tensor, base: float = 10000.0) -> Tensor:
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
    def __init__(self, d_model: int, dropout: float = 0.1, max_positions: int = 5000) -> None: ...
    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Parameters:
        - returns: dropout(x), (batch, seq, d_model)
        """
    def extra_repr(self) -> str: ...

class RotaryMultiHeadAttention(MultiHeadAttention):
    """Chapter 04's multi-head attention with rotary positions: queries and keys turned by their positions (RoPE), values as they are."""
    def queries(self, query: Tensor, start: int = 0) -> Tensor: ...
    def keys_values(self, key: Tensor, value: Tensor, start: int = 0) -> tuple[Tensor, Tensor]: ...

def relative_offsets(n_queries: int, n_keys: int, clip: int, device=None) -> Tensor:
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
    def __init__(self, d_k: int, d_v: int, clip: int = 16) -> None:
        """Parameters:
        - d_k: width of each head's queries and keys
        - d_v: width of each head's values
        - clip: k: the largest offset with its own vectors
        """
    def extra_repr(self) -> str: ...
    def forward(self, q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None, dropout: nn.Module | None = None) -> tuple[Tensor, Tensor]:
        """Parameters:
        - q: (batch, h, n, d_k): the queries, the last n of the m positions
        - k: (batch, h, m, d_k)
        - v: (batch, h, m, d_v)
        - mask: bool, True = may attend; broadcasts to (b, h, n, m)
        - dropout: on the weights, as chapter 02's attention
        - returns: z (batch, h, n, d_v) and the weights (batch, h, n, m)
        """

class RelativePositions(RotaryPositions):
    """The positional module of a relative-position model: the self-attentions add $a^K$ and $a^V$, so nothing is added here; dropout (§5.4) stays."""

class RelativeMultiHeadAttention(MultiHeadAttention):
    """Chapter 04's multi-head attention with Shaw et al.'s relative positions: one pair of tables per layer, shared by its heads."""
    attn: Any
    relative: Any
    fused: bool
    def __init__(self, h: int, d_model: int, dropout: float = 0.1, bias: bool = True, d_k: int | None = None, clip: int = 16) -> None:
        """Parameters:
        - clip: k: the largest offset with its own vectors
        """
    def attend(self, q: Tensor, k: Tensor, v: Tensor, mask, is_causal: bool) -> Tensor: ...
