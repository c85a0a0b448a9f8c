"""The printed solutions in Chinese: ``zc.exercises.solution(...)`` shows a solution from
``lessons/solutions/lessonNN.py`` with its docstring and comments translated when Chinese is chosen, its code as it
is (:mod:`.code`). Their catalog, ``lessons/locale/zh_CN/LC_MESSAGES/solutions.po``, holds one entry per solution,
keyed ``NN/name`` (``msgctxt``), kept in step by ``python -m helpers sync`` as the lessons' catalogs are.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import paths
from . import CHINESE, language
from .catalogs import Status, current, extract, fits, read, render
from .edition import CATALOGS

__all__ = ["CATALOG", "SECTION", "sections", "english", "catalog_text", "translate", "status"]

CATALOG = CATALOGS / "solutions.po"
SECTION = re.compile(r"^# exercise: (\w+)\s*$", re.M)
_ABOUT = ("The Chinese edition of the printed solutions, lessons/solutions/lessonNN.py (issue 35): one entry per "
          "solution, keyed NN/name (msgctxt); translate its comments and docstring only, never the code.")


def sections(text: str) -> dict[str, str]:
    """A solutions file's solutions by exercise name, each the text after its ``# exercise: name`` line."""
    parts = SECTION.split(text)
    return {name: body.strip() for name, body in zip(parts[1::2], parts[2::2])}


def english(folder: Path | None = None) -> list[tuple[str, str]]:
    """(``NN/name``, solution) for every solution in the folder (``lessons/solutions/``), in course order."""
    found = []
    for path in sorted((folder or paths.SOLUTIONS).glob("lesson[0-9][0-9].py")):
        lesson = path.stem.removeprefix("lesson")
        found += [(f"{lesson}/{name}", body) for name, body in sections(path.read_text(encoding="utf-8")).items()]
    return found


def _declared(found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The solutions of lessons declared translated (:func:`.edition.declared`): a new lesson's wait, as its cells
    do, until it is declared, so adding a lesson touches no Chinese file."""
    from .edition import declared

    ids = {entry.id for entry in declared()}
    return [(key, text) for key, text in found if key.split("/", 1)[0] in ids]


def catalog_text(folder: Path | None = None, path: Path | None = None) -> str:
    """The solutions' catalog, for the lessons declared translated, merged with the solutions as they are now."""
    cells = _declared(english(folder))
    return render(extract(cells, read(path or CATALOG), {key for key, _ in cells}), _ABOUT)


def translate(lesson: str, name: str, text: str, path: Path | None = None) -> str:
    """A solution's ``text`` in the chosen language: in Chinese its current translation, when the catalog has one
    for this very English and it changes nothing but comments and docstrings; else the English."""
    if language() != CHINESE:
        return text
    for entry in current(read(path or CATALOG)):
        if entry.msgctxt == f"{lesson}/{name}" and entry.msgid == text and fits(text, entry.msgstr, code=True):
            return entry.msgstr
    return text


def status(folder: Path | None = None, path: Path | None = None) -> Status:
    """Each solution of a lesson declared translated against its catalog entry as it is on disk
    (exercise-solutions in the report)."""
    found = Status("solutions")
    old = {e.msgctxt: e for e in read(path or CATALOG) if e.msgid and not e.obsolete}
    for key, text in _declared(english(folder)):
        e = old.get(key)
        if e is None or not e.msgstr:
            found.untranslated.append(key)
        elif e.fuzzy or e.msgid != text:
            found.stale.append(key)
        elif not fits(text, e.msgstr, code=True):
            found.broken.append(key)
        else:
            found.current.append(key)
    return found
