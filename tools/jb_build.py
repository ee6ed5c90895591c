"""`jupyter-book build` with Sphinx reading several pages at a time (Jupyter Book 1.x's command line has no -j).

    python tools/jb_build.py build . -W -n --keep-going      # the same arguments as jupyter-book

The English edition executes every notebook as it reads it, so reading two pages at a time executes two notebooks
at a time, which halves the build on a 2-core machine. myst-nb and this book's Sphinx extension declare themselves
safe for parallel reading; the notebooks already run two at a time in the tests. `BOOK_JOBS` chooses the number of
processes (default: the CPU count, at most 4; 1 reads one page at a time, as jupyter-book does).
"""
import functools
import os
import sys

import jupyter_book.sphinx
from jupyter_book.cli.main import main

jobs = int(os.environ.get("BOOK_JOBS", min(4, os.cpu_count() or 1)))
# jupyter-book's `build` imports build_sphinx from jupyter_book.sphinx when it runs, so this is the one it calls
jupyter_book.sphinx.build_sphinx = functools.partial(jupyter_book.sphinx.build_sphinx, jobs=jobs)

if __name__ == "__main__":
    sys.argv[0] = "jupyter-book"
    main()
