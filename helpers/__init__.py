"""Helpers for the CUDA zero-copy course.

Lessons import the submodules they need (``from helpers import gpu, experiments``).
Nothing here touches CUDA at import time: the mode (live on a GPU, or replay of
recorded measurements) is decided once, by :func:`helpers.mode.detect`.
"""

__version__ = "0.1.0"
