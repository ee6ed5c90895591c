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
# Sphinx hands each process a chunk of about a dozen pages in alphabetical order, so one process may get several of
# the slow notebooks while the other idles (a 2-core build measured 416 s against 351 s of execution per core).
# One page per chunk lets the pool balance itself; the slowest notebooks go first so that none of them starts last.
# The list is the execution times of the CI trial at 4bfdc0d, slowest first: a stale list costs balance, never
# correctness.
SLOWEST_FIRST = ["nbs/11_pitfalls", "nbs/08_decoding", "nbs/07b_trainer", "nbs/06c_copy_task", "nbs/13_decoder_only",
                 "nbs/09e_five_languages", "nbs/05_sublayers", "nbs/07_training", "nbs/07c_train_command"]


def one_page_chunks(docnames, nproc, maxbatch=10):
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    return [[name] for name in sorted(docnames, key=lambda name: rank.get(name, len(rank)))]


sphinx.builders.make_chunks = one_page_chunks
jobs = int(os.environ.get("BOOK_JOBS", min(4, os.cpu_count() or 1)))
# jupyter-book's `build` imports build_sphinx from jupyter_book.sphinx when it runs, so this is the one it calls
jupyter_book.sphinx.build_sphinx = functools.partial(jupyter_book.sphinx.build_sphinx, jobs=jobs)

if __name__ == "__main__":
    sys.argv[0] = "jupyter-book"
    main()
