# Type stubs of annotated_transformer.one_page, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §3 (all of it), §5.4. The base model in plain PyTorch, every equation next to the line that computes it."""

from torch import Tensor
from torch.nn import Module
from typing import Any

__all__ = ['attention', 'MultiHeadAttention', 'AddAndNorm', 'FeedForward', 'EncoderLayer', 'Encoder', 'DecoderLayer', 'Decoder', 'Embeddings', 'PositionalEncoding', 'Generator', 'EncoderDecoder', 'make_model']

def attention(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
    """Scaled dot-product attention of (..., n, d_k) queries over (..., m, d_k) keys."""

class MultiHeadAttention(Module):
    """h attentions on learned projections, concatenated and projected (§3.2.2)."""
    d_k: Any
    h: Any
    w_k: Any
    w_o: Any
    w_q: Any
    w_v: Any
    def __init__(self, h: int, d_model: int) -> None: ...
    def forward(self, query, key, value, mask=None) -> Tensor: ...

class AddAndNorm(Module):
    """The residual connection around a sublayer, with dropout and LayerNorm."""
    dropout: Any
    norm: Any
    def __init__(self, d_model: int, dropout: float) -> None: ...
    def forward(self, x: Tensor, sublayer) -> Tensor: ...

class FeedForward(Module):
    """The position-wise feed-forward network (§3.3)."""
    w_1: Any
    w_2: Any
    def __init__(self, d_model: int, d_ff: int) -> None: ...
    def forward(self, x: Tensor) -> Tensor: ...

class EncoderLayer(Module):
    """Self-attention, then feed-forward, each in an Add & Norm (Figure 1, left)."""
    feed_forward: Any
    self_attn: Any
    sublayer: Any
    def __init__(self, d_model: int, h: int, d_ff: int, dropout: float) -> None: ...
    def forward(self, x: Tensor, mask: Tensor) -> Tensor: ...

class Encoder(Module):
    """N encoder layers, one after the other."""
    layers: Any
    def __init__(self, N: int, d_model: int, h: int, d_ff: int, dropout: float) -> None: ...
    def forward(self, x: Tensor, mask: Tensor) -> Tensor: ...

class DecoderLayer(Module):
    """Masked self-attention, attention over the encoder's output, feed-forward."""
    feed_forward: Any
    self_attn: Any
    src_attn: Any
    sublayer: Any
    def __init__(self, d_model: int, h: int, d_ff: int, dropout: float) -> None: ...
    def forward(self, x, memory, src_mask, tgt_mask) -> Tensor: ...

class Decoder(Module):
    """N decoder layers, one after the other."""
    layers: Any
    def __init__(self, N: int, d_model: int, h: int, d_ff: int, dropout: float) -> None: ...
    def forward(self, x, memory, src_mask, tgt_mask) -> Tensor: ...

class Embeddings(Module):
    """Learned embeddings, multiplied by sqrt(d_model) (§3.4)."""
    d_model: Any
    lut: Any
    def __init__(self, vocab: int, d_model: int) -> None: ...
    def forward(self, x: Tensor) -> Tensor: ...

class PositionalEncoding(Module):
    """Add the sinusoidal encoding of each position, then dropout (§3.5, §5.4)."""
    dropout: Any
    def __init__(self, d_model: int, dropout: float, max_positions: int = 5000) -> None: ...
    def forward(self, x: Tensor) -> Tensor: ...

class Generator(Module):
    """The pre-softmax linear map and the softmax, in log space (§3.4)."""
    proj: Any
    def __init__(self, d_model: int, vocab: int) -> None: ...
    def forward(self, x: Tensor) -> Tensor: ...

class EncoderDecoder(Module):
    """The Transformer of Figure 1."""
    decoder: Any
    encoder: Any
    generator: Any
    src_embed: Any
    tgt_embed: Any
    def __init__(self, encoder, decoder, src_embed, tgt_embed, generator) -> None: ...
    def encode(self, src: Tensor, src_mask: Tensor) -> Tensor: ...
    def decode(self, memory, src_mask, tgt, tgt_mask) -> Tensor: ...
    def forward(self, src, tgt, src_mask, tgt_mask) -> Tensor:
        """Parameters:
        - returns: decoder states
        """

def make_model(vocab: int, N: int = 6, d_model: int = 512, d_ff: int = 2048, h: int = 8, dropout: float = 0.1) -> EncoderDecoder:
    """The Transformer with the base model's sizes, one vocabulary for both sides."""
