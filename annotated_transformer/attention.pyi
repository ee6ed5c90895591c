# Type stubs of annotated_transformer.attention, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §3.2.1. Scaled dot-product attention, softmax(QKᵀ/√d_k)V, written out and as PyTorch's fused kernel."""

import torch
from torch import Tensor, nn

__all__ = ['check_2d_mask', 'check_mask', 'attention', 'fused_attention']

def check_2d_mask(mask, b: int, n: int, m: int, rank: int = 3) -> None:
    """Refuse a 2-D mask that could be (batch, keys) as well as (queries, keys).

    Parameters:
    - mask: the mask given
    - b: batch size: sequences in the batch
    - n: queries per sequence
    - m: keys per sequence
    - rank: dimensions of the masks the caller takes (3: (batch, 1|n, m))
    """

def check_mask(mask: Tensor, scores_shape: tuple[int, ...] | torch.Size) -> None:
    """Raise a clear error unless `mask` is a bool tensor that broadcasts to `scores_shape`, and is not a 2-D mask that could be read two ways.

    Parameters:
    - mask: bool, True = may attend; must broadcast to `scores_shape`
    - scores_shape: shape of the attention scores, (..., n_queries, n_keys)
    """

def attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, dropout: nn.Module | None = None) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention, softmax(Q K^T / sqrt(d_k)) V (§3.2.1), explicitly.

    Parameters:
    - query: (..., n_queries, d_k)
    - key: (..., n_keys, d_k)
    - value: (..., n_keys, d_v)
    - mask: bool, True = may attend; broadcasts to the scores
    - dropout: on the weights (Harvard/PyTorch, not the paper)
    - returns: output (..., n_queries, d_v) and the weights A
    """

def fused_attention(query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, dropout_p: float = 0.0, is_causal: bool = False) -> Tensor:
    """The same attention through PyTorch's fused `scaled_dot_product_attention`; fully masked rows give zeros.

    Parameters:
    - query: (..., n_queries, d_k)
    - key: (..., n_keys, d_k)
    - value: (..., n_keys, d_v)
    - mask: bool, True = may attend; broadcasts to the scores
    - dropout_p: dropout on the attention weights (0.0 when evaluating)
    - is_causal: query i may attend to keys 0..i only, no mask built
    - returns: output (..., n_queries, d_v)
    """
