"""`jupyter-book build` with Sphinx reading several pages at a time (Jupyter Book 1.x's command line has no -j).

    python tools/jb_build.py build . -W -n --keep-going      # the same arguments as jupyter-book

The English edition executes every notebook as it reads it, so reading two pages at a time executes two notebooks
at a time, which halves the build on a 2-core machine. `BOOK_JOBS` chooses the number of processes (default: the CPU
count, at most 4; 1 reads one page at a time, as jupyter-book does).

Sphinx reads in parallel only when every extension declares that it may, and otherwise warns (an error under -W) and
reads serially. myst-nb and this book's extension declare it; two extensions that jupyter-book loads declare nothing,
so they are declared here, each with the reason it is safe.
"""
import functools
import importlib
import os
import sys

import jupyter_book.sphinx
import sphinx.builders
import sphinx.util.parallel
from jupyter_book.cli.main import main

UNDECLARED = {  # extension -> why its setup is safe for parallel reading and writing
    # it only replaces TocTreeCollector.assign_section_numbers, which Sphinx calls in the main process after reading
    "sphinx_multitoc_numbering": "numbers sections after reading, in the main process",
    # its transforms change only the document being read; its environment settings are made at builder-inited,
    # in the main process, and only for a LaTeX build
    "sphinx_jupyterbook_latex": "per-document transforms; LaTeX-only settings at builder-inited",
}


def _declare(name: str) -> None:
    module = importlib.import_module(name)
    setup = module.setup

    @functools.wraps(setup)
    def declared_setup(app):
        metadata = setup(app) or {}
        return {**metadata, "parallel_read_safe": True, "parallel_write_safe": True}

    module.setup = declared_setup


for name in UNDECLARED:
    _declare(name)
# Reading: Sphinx hands each process a chunk of about seventeen pages in alphabetical order, so one process got most
# of the slow notebooks (then 06c, 07b, 08 and 09b, now 10, 19, 11 and 22: about 380 s of execution in one chunk of the English edition, against
# about 240 s for all the other chunks together) while the other idled. The slowest notebooks are read first, each as
# a chunk of its own, so that the pool balances itself; the other pages keep Sphinx's chunks (every chunk returns a
# pickled copy of the environment, which is why one chunk per page made the Chinese edition slower). The list is the
# execution times of the English edition in the CI trial at efb92b7, slowest first: a stale list costs balance,
# never correctness. Writing keeps Sphinx's own chunks.
SLOWEST_FIRST = ["nbs/29_pitfalls", "nbs/11_decoding", "nbs/10_copy_task", "nbs/19_trainer", "nbs/24_five_languages",
                 "nbs/22_translate", "nbs/20_train_command", "nbs/15_subwords", "nbs/07_model"]


def slowest_first_chunks(docnames: list[str], nproc: int) -> list[list[str]]:
    "Each of SLOWEST_FIRST that is to be read as a chunk of its own, first; then Sphinx's chunks of the rest."
    slow = [name for name in SLOWEST_FIRST if name in docnames]
    rest = [name for name in docnames if name not in slow]
    return [[name] for name in slow] + (sphinx.util.parallel.make_chunks(rest, nproc) if rest else [])


def _read_parallel(self, docnames: list[str], nproc: int, _read=sphinx.builders.Builder._read_parallel) -> None:
    if getattr(self.config, "nb_execution_mode", "off") == "off":
        # nothing executes (the Chinese edition): Sphinx's few chunks are the fastest; one chunk per slow notebook
        # there only adds pickled environments (the trial at 07b8a0c: 266 s against 123 s)
        return _read(self, docnames, nproc)
    chunks = sphinx.builders.make_chunks
    sphinx.builders.make_chunks = slowest_first_chunks  # the name _read_parallel looks up, for this call only
    try:
        _read(self, docnames, nproc)
    finally:
        sphinx.builders.make_chunks = chunks


sphinx.builders.Builder._read_parallel = _read_parallel
jobs = int(os.environ.get("BOOK_JOBS", min(4, os.cpu_count() or 1)))
# jupyter-book's `build` imports build_sphinx from jupyter_book.sphinx when it runs, so this is the one it calls
jupyter_book.sphinx.build_sphinx = functools.partial(jupyter_book.sphinx.build_sphinx, jobs=jobs)

if __name__ == "__main__":
    sys.argv[0] = "jupyter-book"
    main()
