# Type stubs of annotated_transformer.sublayers, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §3.1, §3.3, §5.4. The residual connection with dropout and LayerNorm around every sublayer, and the position-wise feed-forward network."""

from collections.abc import Callable
from torch import Tensor
from torch.nn import Module
from typing import Any

__all__ = ['AddAndNorm', 'PositionwiseFeedForward']

class AddAndNorm(Module):
    """LayerNorm(x + Dropout(Sublayer(x))) (§3.1, §5.4); pre-norm with norm_first=True."""
    d_model: Any
    dropout: Any
    norm: Any
    norm_first: Any
    def __init__(self, d_model: int, dropout: float = 0.1, norm_first: bool = False, eps: float = 1e-05) -> None:
        """Parameters:
        - eps: eps: inside LayerNorm's square root
        """
    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor: ...
    def extra_repr(self) -> str: ...

class PositionwiseFeedForward(Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 at every position alike (§3.3, equation 2)."""
    dropout: Any
    w_1: Any
    w_2: Any
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.1) -> None: ...
    def forward(self, x: Tensor) -> Tensor:
        """Parameters:
        - returns: (..., d_model) -> (..., d_model)
        """
