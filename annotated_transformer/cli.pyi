# Type stubs of annotated_transformer.cli, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""The console script `annotated-transformer`: one entry point that dispatches to the book's commands."""

from typing import Any, Sequence

__all__ = ['COMMANDS', 'USAGE', 'main']
COMMANDS: dict[Any, Any]
USAGE: str

def main(argv: Sequence[str] | None = None) -> int:
    """Run `annotated-transformer COMMAND ...`; returns the exit status."""
