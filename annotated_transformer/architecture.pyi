# Type stubs of annotated_transformer.architecture, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""The book's figures as code: Figures 1 and 2 of the paper and the pipeline of training and translating, with any part highlighted ("you are here"), the attention maps of trained models, and a first run of the package's pieces."""

from typing import Any, Iterable, Sequence

__all__ = ['PARTS', 'GROUPS', 'CHAPTER_PARTS', 'resolve', 'draw_architecture', 'draw_attention', 'draw_pipeline', 'you_are_here', 'draw_attention_maps', 'attention_statistics']
PARTS: dict[Any, Any]

def resolve(highlight: Iterable[str]) -> dict[str, frozenset[Any]]:
    """Names of GROUPS or of parts -> {figure: the parts of it that they name}."""
GROUPS: dict[Any, Any]

class _Pen:
    """Draws parts on `ax`: those in `lit` in red, the others grey when any is lit."""
    ax: Any
    fs: Any
    lit: Any
    scale: Any
    def __init__(self, ax, lit: Iterable[str], scale: float) -> None: ...
    def on(self, name) -> bool:
        """In colour: when nothing is lit, when it is, and always the unnamed lines."""
    def ink(self, name) -> str: ...

def draw_architecture(highlight: Iterable[str] = (), ax=None, title: str | None = None, scale: float = 1.0):
    """Figure 1 of the paper, drawn with matplotlib: every sublayer of the encoder and the decoder, its residual path and its inputs; `highlight` in red.

    Parameters:
    - highlight: names of GROUPS or of parts (PARTS["figure1"]); empty: the whole model in colour
    - ax: a matplotlib Axes to draw on; None: a new figure
    - scale: 0.55: the small copy a chapter opens with
    """

def draw_attention(highlight: Iterable[str] = (), ax=None, title: str | None = None, scale: float = 1.0):
    """Figure 2 of the paper, drawn with matplotlib: scaled dot-product attention and multi-head attention; `highlight` in red.

    Parameters:
    - highlight: names of GROUPS or of parts (PARTS["figure2"]); empty: all in colour
    - ax: a matplotlib Axes to draw on; None: a new figure
    """

def draw_pipeline(highlight: Iterable[str] = (), ax=None, title: str | None = None, scale: float = 1.0):
    """From text to BLEU: the stages of training and translating, `highlight` in red.

    Parameters:
    - highlight: stages (PARTS["pipeline"]); empty: all in colour
    - ax: a matplotlib Axes to draw on; None: a new figure
    """
CHAPTER_PARTS: dict[Any, Any]

def you_are_here(chapter: str, scale: float = 0.55):
    """The small figures a chapter opens with, side by side, its parts (CHAPTER_PARTS) in red."""

def draw_attention_maps(weights, queries: Sequence[str], keys: Sequence[str], title: str = '', size: float = 1.7):
    """Heat maps of attention weights, 0 to 1: a row of panels a layer, a panel a head.

    Parameters:
    - weights: (layers, heads, queries, keys): one kind of attention, one sentence
    - queries: the query tokens, one a row
    - keys: the key tokens, one a column
    - size: inches a panel
    """

def attention_statistics(weights, start: int = 0) -> dict[Any, Any]:
    """Where the weight goes, per head: on the query's own position (diagonal), the one before or after it, the first or the last key; and the entropy, in bits.

    Parameters:
    - weights: (..., queries, keys): attention weights, each row summing to 1
    - start: the first query counted (decoder self-attention: 1, as query 0
    - returns: statistic -> (...): its mean over the queries counted
    """
