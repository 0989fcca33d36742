"""Runs every notebook here headlessly against a replay's outputs, failing on the first error.

Usage: python3 notebooks/run.py EVENTS_DIR RESULTS_DIR
The notebooks read LEASTGRANT_EVENTS and LEASTGRANT_RESULTS; executed copies are not written
back (the notebooks stay output-free in the repository).
"""

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    os.environ["LEASTGRANT_EVENTS"] = str(Path(sys.argv[1]).resolve())
    os.environ["LEASTGRANT_RESULTS"] = str(Path(sys.argv[2]).resolve())
    here = Path(__file__).parent
    books = sorted(here.glob("*.ipynb"))
    for book in books:
        notebook = nbformat.read(book, as_version=4)
        NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(here)}}).execute()
        print(f"ran {book.name}: {len(notebook.cells)} cells")
    return 0 if books else 1


if __name__ == "__main__":
    sys.exit(main())
