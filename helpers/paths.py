"""The repository's folders, found once: its root, data/, lessons/, build/ (every module asks here).

The course runs from a clone (``pip install -e .``), so the root is the folder above this package.
``ZC_DATA_DIR`` points the recorded measurements elsewhere (the tests use it).
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parent
LESSONS = ROOT / "lessons"
SOLUTIONS = LESSONS / "solutions"
BUILD = ROOT / "build"
KERNELS = PACKAGE / "kernels"
STYLE = PACKAGE / "display" / "course.mplstyle"

__all__ = ["PACKAGE", "ROOT", "LESSONS", "SOLUTIONS", "BUILD", "KERNELS", "STYLE", "data_dir"]


def data_dir() -> Path:
    """The folder of recorded measurements: ``$ZC_DATA_DIR`` or the repository's data/."""
    override = os.environ.get("ZC_DATA_DIR")
    return Path(override) if override else ROOT / "data"
