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
jobs = int(os.environ.get("BOOK_JOBS", min(4, os.cpu_count() or 1)))
# jupyter-book's `build` imports build_sphinx from jupyter_book.sphinx when it runs, so this is the one it calls
jupyter_book.sphinx.build_sphinx = functools.partial(jupyter_book.sphinx.build_sphinx, jobs=jobs)

if __name__ == "__main__":
    sys.argv[0] = "jupyter-book"
    main()
