# Type stubs of annotated_transformer.why_self_attention, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Paper: §4, Table 1. Self-attention against recurrent and convolutional layers: computation per layer, sequential operations and the path length between positions, counted and measured."""

from collections.abc import Callable
from typing import Any

__all__ = ['KINDS', 'reads', 'path_length']
KINDS: tuple[Any, ...]

def reads(kind: str, n: int, layer: int = 1, k: int = 3) -> list[list[int]]:
    """Which input positions each output position of one layer reads.

    Parameters:
    - kind: one of KINDS
    - n: sequence length
    - layer: place in the stack, from 1 (sets a dilated convolution's gaps)
    - k: kernel width of the convolutions
    - returns: for each output position i: the input positions it reads
    """

def path_length(kind: str | Callable[[int, int], list[list[int]]], n: int, k: int = 3, recurrent: bool | None = None, max_layers: int = 100000) -> int:
    """Fewest edges from position 0 to n-1 in a stack of layers (breadth-first search).

    Parameters:
    - kind: KINDS or (n, layer) -> reads
    - n: sequence length
    - k: kernel width of the convolutions
    - recurrent: edges i-1 -> i in a layer; None: by kind
    - max_layers: give up beyond this many stacked layers
    - returns: fewest edges from input position 0 to output position n-1
    """
