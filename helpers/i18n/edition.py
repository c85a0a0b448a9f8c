"""The Chinese edition's registry: where its catalogs and notebooks live, and which lessons are translated.

A lesson is *declared* here once its catalog is complete; from then on the tests hold it complete and current
(tests/test_i18n_catalogs.py), so an English change without its Chinese twin fails. Lessons not yet declared are
reported as such by ``python -m helpers i18n status`` and by a skipped test each, never passed in silence.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import lessons, paths
from . import CHINESE

__all__ = ["TRANSLATED", "CATALOGS", "NOTEBOOKS", "catalog", "notebook", "declared", "undeclared", "started",
           "relink"]

# Slugs of the lessons whose Chinese edition is complete (course order).
TRANSLATED: tuple[str, ...] = (
    "start-here",
    "pin-host-memory",
    "measure-what-pinning-buys",
    "map-pages-on-the-cpu",
    "map-pages-on-the-gpu",
    "write-your-first-zero-copy-kernel",
    "measure-bandwidth",
    "measure-latency",
    "keep-enough-bytes-in-flight",
    "coalesce-and-align-accesses",
    "model-zero-copy-reads",
    "overlap-copies-with-streams",
    "decide-when-zero-copy-wins",
    "use-write-combined-and-registered-memory",
    "avoid-hazards-on-mapped-memory",
    "take-zero-copy-beyond-one-pcie-gpu",
)

CATALOGS = paths.LESSONS / "locale" / CHINESE / "LC_MESSAGES"   # sphinx-intl's layout beside the documents
NOTEBOOKS = paths.LESSONS / "zh"                                  # the built Chinese notebooks
_LINK = re.compile(r"\]\((?![a-z][a-z0-9+.-]*:|#|/)([^)\s#]+)")


def relink(text: str, twins: set[str]) -> str:
    """A Chinese page's relative links: to a file of ``twins`` (beside it in lessons/zh/) as they are, to any other
    file one folder up, in lessons/."""
    return _LINK.sub(lambda m: f"]({m.group(1) if m.group(1) in twins else '../' + m.group(1)}", text)


def catalog(entry: lessons.Lesson) -> Path:
    """The lesson's catalog: ``lessons/locale/zh_CN/LC_MESSAGES/<id>-<slug>.po``."""
    return CATALOGS / f"{entry.name}.po"


def notebook(entry: lessons.Lesson) -> Path:
    """The lesson's Chinese notebook: ``lessons/zh/<id>-<slug>.ipynb``."""
    return entry.notebook(NOTEBOOKS)


def declared() -> list[lessons.Lesson]:
    """The translated lessons, in course order."""
    return [entry for entry in lessons.LESSONS if entry.slug in TRANSLATED]


def undeclared() -> list[lessons.Lesson]:
    """The lessons still to translate, in course order."""
    return [entry for entry in lessons.LESSONS if entry.slug not in TRANSLATED]


def started() -> list[lessons.Lesson]:
    """Lessons whose translation has started (their catalog exists) or is declared, in course order: each has a
    Chinese notebook."""
    return [e for e in lessons.LESSONS if catalog(e).exists() or e.slug in TRANSLATED]
