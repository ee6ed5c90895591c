"""Execute notebooks in place (so their committed outputs are real), then clean them with nbdev_clean.

    python tools/run_notebook.py nbs/02_attention.ipynb [more.ipynb ...]

Cells are run from the notebook's own folder, top to bottom, as a learner would run them.
"""
import subprocess
import sys
from pathlib import Path

import re

import nbclient
import nbformat

_NO_EVAL = re.compile(r"^\s*#\|\s*eval:\s*false\s*$", re.MULTILINE)


def run(path: Path, timeout: int = 1800) -> None:
    nb = nbformat.read(path, as_version=4)
    # `#| eval: false` cells are never run (as in nbdev_test and the book build): nbclient skips
    # cells tagged skip-execution; the tag is only for this run and is taken off again.
    skipped = [c for c in nb.cells if c.cell_type == "code" and _NO_EVAL.search(c.source)]
    for cell in skipped:
        cell.metadata.setdefault("tags", []).append("skip-execution")
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    finally:
        for cell in skipped:
            cell.metadata["tags"].remove("skip-execution")
            if not cell.metadata["tags"]:
                del cell.metadata["tags"]
    nbformat.write(nb, path)
    subprocess.run(["nbdev_clean", "--fname", str(path)], check=True)
    print(f"executed and cleaned {path}")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        run(Path(arg))
