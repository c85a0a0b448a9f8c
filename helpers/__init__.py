"""Helpers for the CUDA zero-copy course.

Lessons import this one name, ``import helpers as zc``, and meet a handful of verbs: ``zc.start()`` (the first cell),
``zc.session()``, ``zc.experiments.<name>()`` (results that show themselves), ``zc.plots``, ``zc.kernels``,
``zc.exercises.check/compare/solution``, ``zc.findings.<lesson slug>`` (narration computed from results), and the
rich values ``zc.table``, ``zc.Text``. Below this face the package is folded by job, lowest layer first
(tests/test_house.py keeps the order):

- ``errors``, ``paths``, ``lessons``, ``mode``, ``records``, ``tables``: the core every layer uses;
- ``sharing``: the measurement queue and the page-locked budget that learners on one GPU share;
- ``memory``: pages, pinned and mapped allocations, the driver calls, event timing;
- ``kernels`` and ``cpu``: the CUDA C kernels, and the CPU backend that runs them without a GPU;
- ``platform``: what this machine is, the doctor, each lesson's note about it;
- ``experiments``: one function per experiment, live or replay;
- ``analysis``: the PCIe model, the sector explorer, a record's summary and targets;
- ``exercises``: the checks of the lessons' exercises;
- ``findings``: per lesson, the sentences that quote measured figures, computed from results as Markdown;
- ``display``: figures, alt text, views of results;
- ``tools``: the command line's pieces, the book, the slides, the classroom, lint;
- ``course``: the first cell of every lesson.

The modules lessons name here (``gpu``, ``plots``, ``doctor``...) are loaded on first use, from the
subpackage that holds them (:data:`FACE`). Nothing here touches CUDA at import time: the mode (live on
a GPU, or replay of recorded measurements) is decided once, by :func:`helpers.mode.detect`.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING

from .tables import Table, Text, bullets, join, table

if TYPE_CHECKING:
    from .course import Session

__version__ = "0.1.0"
__all__ = ["FACE", "Table", "Text", "bullets", "join", "session", "start", "table"]

# The name a lesson uses -> the module that holds it now.
FACE: dict[str, str] = {
    "experiments": "helpers.experiments",
    "exercises": "helpers.exercises",
    "kernels": "helpers.kernels",
    "findings": "helpers.findings",
    "course": "helpers.course",
    "cpu": "helpers.cpu",
    "gpu": "helpers.memory.gpu",
    "pages": "helpers.memory.pages",
    "driver_api": "helpers.memory.driver_api",
    "timing": "helpers.memory.timing",
    "machine": "helpers.platform.machine",
    "pcie": "helpers.platform.pcie",
    "platform_facts": "helpers.platform.facts",
    "doctor": "helpers.platform.doctor",
    "pcie_model": "helpers.analysis.pcie_model",
    "sector_explorer": "helpers.analysis.sector_explorer",
    "summary": "helpers.analysis.summary",
    "plots": "helpers.display.plots",
    "platform_views": "helpers.display.platform_views",
    "lesson_times": "helpers.tools.lesson_times",
}


def start(language: str | None = None) -> Session:
    """Start the lesson: decide the mode once and return the session, which shows itself (:func:`helpers.course.start`).
    ``language="zh"`` (the Chinese edition's first cell) shows what helpers say in Chinese (:mod:`helpers.i18n`)."""
    from .course import start as _start

    if language is not None:
        from .i18n import use_language

        use_language(language)
    return _start()


def session() -> Session:
    """The started session (:func:`helpers.course.session`): mode, GPU, attributes, PCIe link, reference record."""
    from .course import session as _session

    return _session()


def __getattr__(name: str) -> ModuleType:
    """``helpers.gpu`` and ``from helpers import gpu``: the module :data:`FACE` names, imported on first use."""
    if name in FACE:
        module = importlib.import_module(FACE[name])
        globals()[name] = module
        return module
    raise AttributeError(f"module 'helpers' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(FACE))
