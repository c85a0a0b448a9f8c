"""The lessons' gettext catalogs (``lessons/locale/zh_CN/LC_MESSAGES/<lesson>.po``), kept in step with the English
notebooks: one entry per Markdown cell (and per code cell with comments or docstrings, which alone are
translated: :mod:`.code`), its cell id as ``msgctxt`` and the cell's English source as ``msgid``.

:func:`extract` merges a notebook into its catalog: a new cell becomes an untranslated entry, a changed one keeps
its old translation marked fuzzy with the English it translated as ``#| msgid`` (so the translator sees what
changed), a removed one becomes obsolete (``#~``). A fuzzy or empty entry never reaches the Chinese notebook: the
cell shows in English there, and :func:`status` reports it. A cell is the unit because Chinese reorders sentences
across an English cell's lines and paragraphs; gettext's previous msgid narrows a change down within it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import polib

from .. import lessons
from . import CHINESE
from .code import is_learner_code, skeleton

__all__ = ["TIME", "english_cells", "code_ids", "fits", "read", "current", "extract", "render", "status", "Status",
           "HEADER"]

# The registry writes a lesson's minutes into its first cell (python -m helpers sync); the catalog holds
# {minutes} there, so a new estimate does not make the translation stale.
TIME = re.compile(r"(\*\*Time to complete:\*\*\s*)(\d+)(\s*minutes)")
PLACEHOLDER = "{minutes}"
HEADER = ("{about}\n"
          "Written by `python -m helpers i18n extract`: translate the msgstr lines; delete \"#, fuzzy\" and the \"#|\"\n"
          "lines once a translation matches the English msgid again. Terms: lessons/glossary.md.")
METADATA = {"Project-Id-Version": "zero-copy-course", "Language": CHINESE, "MIME-Version": "1.0",
            "Content-Type": "text/plain; charset=UTF-8", "Content-Transfer-Encoding": "8bit"}


def _normalised(source: str) -> str:
    return TIME.sub(rf"\g<1>{PLACEHOLDER}\g<3>", source, count=1)


def english_cells(notebook: Path) -> list[tuple[str, str]]:
    """(cell id, source as the catalog holds it) for each Markdown cell of an English notebook and each code cell
    with comments or docstrings (:mod:`.code`: only those are translated), in order."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    return [(cell.id, _normalised(cell.source)) for cell in nb.cells
            if cell.cell_type == "markdown" or is_learner_code(cell)]


def code_ids(notebook: Path) -> set[str]:
    """The ids of the code cells among :func:`english_cells`."""
    import nbformat

    return {cell.id for cell in nbformat.read(notebook, as_version=4).cells if is_learner_code(cell)}


def fits(english: str, chinese: str, code: bool = False) -> bool:
    """Whether a translation can stand for its English: it keeps ``{minutes}`` where the English has it, and a code
    cell's translation changes only comments and docstrings."""
    if (PLACEHOLDER in english) != (PLACEHOLDER in chinese):
        return False
    return not code or skeleton(english) == skeleton(chinese)


def read(path: Path) -> polib.POFile:
    """The catalog at ``path`` (an empty one if there is none)."""
    return polib.pofile(str(path), wrapwidth=0) if path.exists() else polib.POFile(wrapwidth=0)


def current(catalog: polib.POFile) -> list[polib.POEntry]:
    """The entries with a translation that is not fuzzy (what the Chinese edition shows)."""
    return [e for e in catalog if e.msgid and e.msgstr and not e.fuzzy and not e.obsolete]


def extract(cells: list[tuple[str, str]], old: polib.POFile, code: set[str] = frozenset()) -> polib.POFile:
    """The catalog for ``cells`` (:func:`english_cells`), carrying over ``old``'s translations: unchanged cells as
    they were, changed ones fuzzy with the previous English, cells gone as obsolete entries; ``code`` names the code
    cells, whose entries say to translate comments only."""
    live = {e.msgctxt: e for e in old if e.msgid and not e.obsolete}
    reusable = {e.msgid: e.msgstr for e in old if e.msgid and e.msgstr and not e.fuzzy}
    new = polib.POFile(wrapwidth=0)
    for cell_id, source in cells:
        before = live.get(cell_id)
        note = (f"{PLACEHOLDER}: the lesson's minutes, written in by the build" if PLACEHOLDER in source else
                "code: translate its comments and docstrings only, never the code" if cell_id in code else "")
        entry = polib.POEntry(msgctxt=cell_id, msgid=source, comment=note)
        if before is not None and before.msgid == source:
            entry.msgstr, entry.previous_msgid = before.msgstr, before.previous_msgid
            entry.flags = [f for f in before.flags if f == "fuzzy"]
        elif source in reusable:                       # the same English under another key: its translation
            entry.msgstr = reusable[source]
        elif before is not None and before.msgstr:
            entry.msgstr, entry.flags = before.msgstr, ["fuzzy"]
            entry.previous_msgid = before.previous_msgid if before.fuzzy and before.previous_msgid else before.msgid
        else:
            entry.msgstr = reusable.get(source, "")
        new.append(entry)
    kept = {cell_id for cell_id, _ in cells}
    for e in old:
        if e.msgid and e.msgctxt not in kept and e.msgstr:
            new.append(polib.POEntry(msgctxt=e.msgctxt, msgid=e.msgid, msgstr=e.msgstr, obsolete=True))
    return new


def render(catalog: polib.POFile, about: str) -> str:
    """The catalog's text, a source line a line: a fixed header (``about`` its first line; no dates, no tool
    versions, so the file changes only with its entries) and the entries in order, previous msgids included."""
    catalog.header = HEADER.format(about=about)
    catalog.metadata = dict(METADATA)
    catalog.wrapwidth = 0
    return str(catalog) + "\n"


@dataclass
class Status:
    """Where a lesson's catalog stands against its English notebook: cell ids by state."""

    lesson: str
    current: list[str] = field(default_factory=list)
    untranslated: list[str] = field(default_factory=list)   # new cells, or never translated
    stale: list[str] = field(default_factory=list)          # the English changed since the translation (fuzzy)
    broken: list[str] = field(default_factory=list)         # lost {minutes}, or changed a code cell's code

    @property
    def complete(self) -> bool:
        return not (self.untranslated or self.stale or self.broken)

    def words(self) -> str:
        parts = [f"{len(self.current)} current"] + [f"{len(ids)} {name} ({', '.join(ids)})" for name, ids in (
            ("untranslated", self.untranslated), ("stale", self.stale), ("broken", self.broken)) if ids]
        return f"{self.lesson}: " + ", ".join(parts)


def status(entry: lessons.Lesson, catalog_path: Path, notebook: Path | None = None) -> Status:
    """Each Markdown cell of the lesson's English notebook against the catalog as it is on disk."""
    found = Status(entry.name)
    old = {e.msgctxt: e for e in read(catalog_path) if e.msgid and not e.obsolete}
    code = code_ids(notebook or entry.notebook())
    for cell_id, source in english_cells(notebook or entry.notebook()):
        e = old.get(cell_id)
        if e is None or not e.msgstr:
            found.untranslated.append(cell_id)
        elif e.fuzzy or e.msgid != source:
            found.stale.append(cell_id)
        elif not fits(source, e.msgstr, cell_id in code):
            found.broken.append(cell_id)
        else:
            found.current.append(cell_id)
    return found
