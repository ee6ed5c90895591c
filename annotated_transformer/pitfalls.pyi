# Type stubs of annotated_transformer.pitfalls, written by tools/make_stubs.py from the imported package: do not edit.
# Regenerate with `python tools/make_stubs.py` after nbdev_export.
"""Bugs that pass a casual look and a shape test, planted in the book's code for the length of a `with` block: each one's symptom measured, and the test that catches it."""

from pathlib import Path
from typing import Any, Callable, Iterator

__all__ = ['PITFALLS', 'Mutation', 'Pitfall', 'PytestRun', 'book_folder', 'run_test', 'Check', 'check']

class Mutation:
    """The smallest change that plants a bug: text edits to the source of one function or method."""
    edits: Any
    target: Any
    def __init__(self, target: Callable[..., Any], *edits: tuple[str, str]) -> None:
        """Parameters:
        - target: a function, or a method of a class, of the package
        - edits: (old, new): every occurrence of old is replaced
        """
    def original(self) -> str:
        """The target's source, as at the top of its module (without fastcore's @patch)."""
    def source(self) -> str:
        """The source with the bug."""
    def diff(self) -> str:
        """The change as a diff: - the correct lines, + the buggy ones."""
    def build(self) -> Callable[..., Any]:
        """The buggy copy, compiled in a copy of the namespace of the target's module."""
    def __call__(self) -> Iterator[Callable[..., Any]]:
        """Plant the bug for the `with` block: the copy replaces the original wherever it is held."""

class Pitfall:
    """A silent bug: how to plant it, where the correct code is, the test that catches it."""
    title: str
    apply: Mutation
    catching_test: str
    chapter: str
    reports: tuple[str, ...]
    def diff(self) -> str: ...
    def __init__(self, title: str, apply: Mutation, catching_test: str, chapter: str, reports: tuple[str, ...] = ()) -> None: ...
PITFALLS: dict[str, Pitfall]

class PytestRun:
    """What pytest reported for one node id."""
    node_id: str
    exit_code: int
    passed: int
    error: str
    def summary(self) -> str: ...
    def __init__(self, node_id: str, exit_code: int, passed: int, error: str) -> None: ...

class _Reports:
    """A pytest plugin that keeps the reports of the test phases."""
    failures: Any
    passed: Any
    def __init__(self) -> None: ...
    def pytest_runtest_logreport(self, report): ...

def book_folder() -> Path:
    """The clone of the book that this package is loaded from: the folder that holds tests/."""

def run_test(node_id: str) -> PytestRun:
    """Run a test of tests/ (a node id) in this process, quietly, stopping at the first failure."""

class Check:
    """A catching test run with a pitfall's bug planted and without it."""
    name: str
    with_bug: PytestRun
    without_bug: PytestRun
    @property
    def caught(self) -> bool:
        """The test fails with the bug and passes without it."""
    def __init__(self, name: str, with_bug: PytestRun, without_bug: PytestRun) -> None: ...

def check(name: str, verbose: bool = True) -> Check:
    """Run pitfall `name`'s catching test with the bug planted, then without it."""
