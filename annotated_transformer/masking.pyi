# Type stubs of annotated_transformer.masking, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Which keys each query may attend to: padding, causal and cross-attention masks (§3.2.3)."""

import torch
from torch import Tensor

__all__ = ['padding_mask', 'causal_mask', 'target_mask']

def padding_mask(tokens: Tensor, pad: int) -> Tensor:
    """Key padding mask: every query may attend to every non-padding key.

    Parameters:
    - tokens: token ids, integer tensor of shape (batch, seq)
    - pad: id of the padding token
    - returns: bool (batch, 1, seq): True where the *key* is a real token
    """

def causal_mask(size: int, device: torch.device | str | None = None) -> Tensor:
    """Causal (subsequent) mask: query position i may attend to key positions j <= i.

    Parameters:
    - size: sequence length (number of query = key positions)
    - device: where to create the mask
    - returns: bool (1, size, size): True on and below the diagonal
    """

def target_mask(tgt: Tensor, pad: int) -> Tensor:
    """Decoder self-attention mask: the padding mask AND the causal mask.

    Parameters:
    - tgt: decoder input token ids, integer tensor of shape (batch, seq)
    - pad: id of the padding token
    - returns: bool (batch, seq, seq): True where key j <= query i and key j is not padding
    """
