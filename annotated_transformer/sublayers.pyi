# Type stubs of annotated_transformer.sublayers, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §3.1, §3.3, §5.4. The residual connection with dropout and LayerNorm around every sublayer, and the position-wise feed-forward network."""

from collections.abc import Callable
from torch import Tensor
from torch.nn import Module
from typing import Any

__all__ = ['AddAndNorm', 'PositionwiseFeedForward']

class AddAndNorm(Module):
    """Residual connection + dropout + LayerNorm around a sublayer: post-norm (paper) or pre-norm."""
    d_model: Any
    dropout: Any
    norm: Any
    norm_first: Any
    def __init__(self, d_model: int, dropout: float = ..., norm_first: bool = ..., eps: float = ...) -> None:
        """Parameters:
        - d_model: width of x and of the sublayer's output (512 in the paper)
        - dropout: P_drop on the sublayer's output, before the add (§5.4)
        - norm_first: False: LN(x + F(x)) (§3.1); True: x + F(LN(x))
        - eps: added to the variance inside LayerNorm's square root
        """
    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        """Parameters:
        - x: (batch, seq, d_model)
        - sublayer: F: (batch, seq, d_model) -> same
        - returns: (batch, seq, d_model)
        """
    def extra_repr(self) -> str: ...

class PositionwiseFeedForward(Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 at every position alike (§3.3, equation 2)."""
    dropout: Any
    w_1: Any
    w_2: Any
    def __init__(self, d_model: int, d_ff: int, dropout: float = ...) -> None:
        """Parameters:
        - d_model: input and output width (512 in the paper)
        - d_ff: inner width (2048 in the paper)
        - dropout: on the hidden ReLU activations (as PyTorch; not in the paper)
        """
    def forward(self, x: Tensor) -> Tensor:
        """Parameters:
        - returns: (..., d_model) -> (..., d_model)
        """
