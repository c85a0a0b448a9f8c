"""Build a lesson's Chinese notebook (``lessons/zh/<lesson>.ipynb``) from its English notebook and catalog.

Code cells stay as they are, except that the first cell starts the session in Chinese (``zc.start(language="zh")``)
and their comments and docstrings are translated (:mod:`.code`);
each Markdown cell takes its current translation, or stays English where the catalog has none (the tests fail on
that for a declared lesson). Links to a lesson not yet translated and to other files point back to ``lessons/``;
links to the Chinese documents beside it (the glossary, the instructor guide) stay in ``lessons/zh/``.
``python -m helpers sync`` writes the built notebooks; the tests check they are current.
"""

from __future__ import annotations

from .. import lessons
from . import edition
from .catalogs import PLACEHOLDER, TIME, current, fits, read
from .code import is_learner_code
from .documents import DOCUMENTS

__all__ = ["START", "START_ZH", "build"]

START, START_ZH = "zc.start()", 'zc.start(language="zh")'
def _documents() -> set[str]:
    """The names of the Chinese documents beside the Chinese notebooks (the glossary, the instructor guide)."""
    return {d.target.name for d in DOCUMENTS if d.target.parent == edition.NOTEBOOKS}


def build(entry: lessons.Lesson) -> str:
    """The Chinese notebook's text (nbformat, outputs cleared)."""
    import nbformat

    nb = nbformat.read(entry.notebook(), as_version=4)
    translated = {e.msgctxt: (e.msgid, e.msgstr) for e in current(read(edition.catalog(entry)))}
    twins = {edition.notebook(e).name for e in edition.started()} | _documents()
    for cell in nb.cells:
        if cell.id in translated and (cell.cell_type == "markdown" or is_learner_code(cell)):
            english, chinese = translated[cell.id]
            minutes = TIME.search(cell.source)
            if TIME.sub(rf"\g<1>{PLACEHOLDER}\g<3>", cell.source, count=1) == english and fits(
                    english, chinese, cell.cell_type == "code"):   # else stale, or a translation that breaks it
                chinese = chinese.replace(PLACEHOLDER, minutes.group(2)) if minutes else chinese
                cell.source = edition.relink(chinese, twins) if cell.cell_type == "markdown" else chinese
        if cell.cell_type == "code":
            cell.source = "\n".join(START_ZH if line.strip() == START else line for line in cell.source.split("\n"))
            cell.outputs, cell.execution_count = [], None
    return nbformat.writes(nb) + "\n"

