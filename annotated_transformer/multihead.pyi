# Type stubs of annotated_transformer.multihead, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §3.2.2. h attentions side by side on learned projections, concatenated and projected."""

from torch import Tensor, nn
from torch.nn import Module
from typing import Any

__all__ = ['check_heads', 'MultiHeadAttention', 'keep_attention_weights']

def check_heads(h: int, d_model: int, d_k: int | None) -> None:
    """Refuse head counts and widths that cannot split d_model."""

class MultiHeadAttention(Module):
    """Multi-head attention (§3.2.2): h attentions on learned projections, concatenated."""
    attn: Any
    d_k: Any
    d_model: Any
    d_v: Any
    dropout: Any
    h: Any
    keep_weights: Any
    w_k: Any
    w_o: Any
    w_q: Any
    w_v: Any
    fused: bool
    def __init__(self, h: int, d_model: int, dropout: float = 0.1, bias: bool = True, d_k: int | None = None) -> None:
        """Parameters:
        - h: number of heads
        - d_model: width of the inputs and the output; d_v = d_model // h
        - dropout: on the weights (Harvard, PyTorch; not in the paper)
        - bias: biases in the projections (the paper's formula has none)
        - d_k: query/key width; None: d_model // h (Table 3, B)
        """
    @property
    def dropout_p(self) -> float: ...
    @dropout_p.setter
    def dropout_p(self, value: float) -> None: ...
    def split_heads(self, x: Tensor, width: int) -> Tensor:
        """(b, len, h * width) -> (b, len, h, width) -> (b, h, len, width)."""
    def queries(self, query: Tensor, start: int = 0) -> Tensor:
        """Q W_i^Q, every head: (b, n, d_model) -> (b, h, n, d_k); `start`: row 0's position."""
    def keys_values(self, key: Tensor, value: Tensor, start: int = 0):
        """K W_i^K and V W_i^V for every head i: (b, h, m, d_k) and (b, h, m, d_v)."""
    def heads(self, query: Tensor, key: Tensor, value: Tensor, cache=None):
        """Queries, keys and values of every head; chapter 21's cache makes its own."""
    def attend(self, q: Tensor, k: Tensor, v: Tensor, mask, is_causal):
        """head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V), all heads at once: (b, h, n, d_v)."""
    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, cache=None, is_causal: bool = False) -> Tensor:
        """Parameters:
        - query: (batch, n_queries, d_model): the sequence that asks
        - key: (batch, n_keys, d_model): the sequence that is looked at
        - value: (batch, n_keys, d_model): what is returned (usually `key` itself)
        - mask: bool, True = may attend; broadcasts to the scores
        - cache: decoding (chapter 11): keys and values kept from earlier calls
        - is_causal: True: no query sees a later key (also with `mask`)
        - returns: (b, n, d_model)
        """

def keep_attention_weights(model: nn.Module):
    """Context manager: `keep_weights=True` on every `MultiHeadAttention` in `model`.

    Parameters:
    - model: every MultiHeadAttention inside it
    """
