# Type stubs of annotated_transformer.explorer, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""An interactive view of a model's attention: choose a sentence, a kind of attention, a layer and a head, and point at a token to see where it looks and what looks at it; in a notebook, on the book's pages, or as a page of its own, offline."""

from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

__all__ = ['KIND_TOKENS', 'MAX_BYTES', 'explorer_example', 'AttentionExplorer', 'attention_explorer', 'head_statistics', 'load_explorer']
KIND_TOKENS: dict[Any, Any]
MAX_BYTES: int

def explorer_example(weights: Any, source: Sequence[str], target: Sequence[str] | None = None, *, name: str | None = None, text: Mapping[str, str] | None = None, scale: int = 100) -> dict[Any, Any]:
    """One sentence for the explorer: its tokens, and every kind's weights rounded to 1/scale.

    Parameters:
    - weights: {kind: (layers, heads, queries, keys)}: attention_weights of one sentence; or one tensor
    - source: the source tokens (encoder positions)
    - target: the target tokens (decoder positions), if the weights have any
    - name: what the sentence menu shows; default: the source tokens
    - text: shown above the maps: source, reference, output
    - scale: weights are kept as integers in units of 1/scale
    """

class AttentionExplorer:
    """Sentences' attention weights, shown as an interactive view in a notebook (or a saved page)."""
    examples: Any
    fallback: Any
    initial: Any
    language: Any
    note: Any
    scale: Any
    statistics: Any
    def __init__(self, examples: Sequence[dict[Any, Any]], statistics: Mapping[Any, Any] | None = None, note: str | None = None, scale: int = 100, fallback: bool = True, language: str | None = None, kind: str | None = None, layer: int | None = None, head: int | None = None) -> None:
        """Parameters:
        - examples: explorer_example's, one a sentence
        - statistics: head_statistics's: the side table
        - note: a line under the view: where the weights come from
        - scale: the examples' unit: 1/scale
        - fallback: keep a static figure for where scripts do not run
        - language: "en" or "zh_CN"; default: the page's language
        - layer: what the view opens on
        - head: (default: the first kind, layer 1, head 1)
        """
    def data(self) -> dict[Any, Any]:
        """What the viewer reads (the JSON inside the page)."""
    def to_html(self, full_page: bool = False) -> str:
        """The viewer with its data, script and style inline; a whole HTML page with full_page=True."""
    def save(self, path: str | Path) -> Path:
        """Write the viewer as a page of its own, which opens offline in any browser."""

def attention_explorer(weights: Any = None, source: Sequence[str] | None = None, target: Sequence[str] | None = None, *, examples: Sequence[dict[Any, Any]] | None = None, statistics: Mapping[Any, Any] | None = None, note: str | None = None, **options: Any) -> AttentionExplorer:
    """An interactive view of attention weights: one sentence's, or several sentences' (examples=).

    Parameters:
    - weights: one sentence's weights: {kind: tensor} (attention_weights) or one tensor
    - source: its source tokens
    - target: its target tokens
    - examples: instead: several sentences (explorer_example's)
    - statistics: per-head statistics shown beside the view
    - returns: AttentionExplorer's: fallback, language, kind, layer, head
    """

def head_statistics(sentences: Iterable[Mapping[str, Any]]) -> dict[Any, Any]:
    """Appendix F's attention_statistics per kind, layer and head, averaged over sentences: the side table.

    Parameters:
    - sentences: one {kind: (layers, heads, queries, keys)} a sentence
    - returns: {kind: {"sentences": n, "rows": {statistic: [layer][head]}}}
    """

def load_explorer(path: str | Path, **options: Any) -> AttentionExplorer:
    """The explorer of a recorded JSON file (bench/collect_attention.py --explorer)."""
