# Type stubs of annotated_transformer.positional, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Telling the model where each token is: the sinusoidal encoding of §3.5, and learned positions."""

import torch
from torch import Tensor
from torch.nn import Module
from typing import Any

__all__ = ['sinusoidal_encoding', 'check_positions', 'PositionalEncoding', 'LearnedPositionalEncoding']

def sinusoidal_encoding(max_positions: int, d_model: int, *, dtype: torch.dtype = ...) -> Tensor:
    """The sinusoidal positional encoding table of §3.5.

    Parameters:
    - max_positions: number of positions (rows): 0, 1, ..., max_positions - 1
    - d_model: size of each encoding vector; must be even (sine/cosine pairs)
    - dtype: of the result (computed in float64)
    - returns: (max_positions, d_model)
    """

def check_positions(x, d_model: int, max_positions: int, offset) -> int:
    """Check x (batch, seq, d_model) against the table; return seq."""

class PositionalEncoding(Module):
    """Add the sinusoidal encoding of §3.5 to x, then dropout (§5.4)."""
    d_model: Any
    dropout: Any
    max_positions: Any
    def __init__(self, d_model: int, dropout: float = 0.1, max_positions: int = 5000) -> None:
        """Parameters:
        - d_model: embedding size; must be even
        - dropout: on the sum, P_drop = 0.1 in the base model (§5.4)
        - max_positions: longest sequence the table covers
        """
    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Parameters:
        - returns: x: (batch, seq, d_model)
        """
    def extra_repr(self) -> str: ...

class LearnedPositionalEncoding(Module):
    """Add a learned position embedding (Table 3, row (E)) to x, then dropout."""
    d_model: Any
    dropout: Any
    embedding: Any
    max_positions: Any
    def __init__(self, d_model: int, dropout: float = 0.1, max_positions: int = 5000) -> None: ...
    def forward(self, x: Tensor, offset: int = 0) -> Tensor:
        """Parameters:
        - returns: x: (batch, seq, d_model)
        """
