"""The lessons' gettext catalogs (``lessons/locale/zh_CN/LC_MESSAGES/<lesson>.po``), kept in step with the English
notebooks: one entry per Markdown cell, its cell id as ``msgctxt`` and the cell's English source as ``msgid``.

:func:`extract` merges a notebook into its catalog: a new cell becomes an untranslated entry, a changed one keeps
its old translation marked fuzzy with the English it translated as ``#| msgid`` (so the translator sees what
changed), a removed one becomes obsolete (``#~``). A fuzzy or empty entry never reaches the Chinese notebook: the
cell shows in English there, and :func:`status` reports it. A cell is the unit because Chinese reorders sentences
across an English cell's lines and paragraphs; gettext's previous msgid narrows a change down within it.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import lessons
from . import CHINESE

__all__ = ["TIME", "english_cells", "read", "extract", "render", "status", "Status", "HEADER"]

# The registry writes a lesson's minutes into its first cell (python -m helpers sync); the catalog holds
# {minutes} there, so a new estimate does not make the translation stale.
TIME = re.compile(r"(\*\*Time to complete:\*\*\s*)(\d+)(\s*minutes)")
PLACEHOLDER = "{minutes}"
HEADER = ('# {about}\n'
          '# Written by `python -m helpers i18n extract`: translate the msgstr lines; delete "#, fuzzy" (and the\n'
          '# "#| msgid" lines) once a translation matches the English msgid again. Terms: lessons/glossary.md.\n'
          'msgid ""\nmsgstr ""\n"Project-Id-Version: zero-copy-course\\n"\n"Language: {language}\\n"\n'
          '"MIME-Version: 1.0\\n"\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Content-Transfer-Encoding: 8bit\\n"\n')


def _normalised(source: str) -> str:
    return TIME.sub(rf"\g<1>{PLACEHOLDER}\g<3>", source, count=1)


def english_cells(notebook: Path) -> list[tuple[str, str]]:
    """(cell id, source as the catalog holds it) for each Markdown cell of an English notebook, in order."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    return [(cell.id, _normalised(cell.source)) for cell in nb.cells if cell.cell_type == "markdown"]


def read(path: Path):  # -> babel.messages.catalog.Catalog
    """The catalog at ``path`` (an empty one if there is none)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import read_po

    if not path.exists():
        return Catalog(locale=CHINESE)
    with path.open("rb") as handle:
        return read_po(handle, locale=CHINESE)


def extract(cells: list[tuple[str, str]], old):  # (cells, Catalog) -> Catalog
    """The catalog for ``cells`` (:func:`english_cells`), carrying over ``old``'s translations: unchanged cells as
    they were, changed ones fuzzy with the previous English, cells gone as obsolete entries."""
    from babel.messages.catalog import Catalog, Message

    by_context = {m.context: m for m in old if m.id}
    reusable = {m.id: m.string for m in [*old, *old.obsolete.values()] if m.id and m.string and not m.fuzzy}
    new = Catalog(locale=CHINESE)
    for cell_id, source in cells:
        before = by_context.get(cell_id)
        comments = [f"{PLACEHOLDER}: the lesson's minutes, written in by the build"] if PLACEHOLDER in source else []
        if before is not None and before.id == source:
            message = Message(source, before.string, flags=before.flags, previous_id=before.previous_id,
                              context=cell_id, auto_comments=comments)
        elif before is not None and before.string:
            previous = before.previous_id if before.fuzzy and before.previous_id else before.id
            message = Message(source, before.string, flags={"fuzzy"}, previous_id=previous, context=cell_id,
                              auto_comments=comments)
        else:
            message = Message(source, reusable.get(source, ""), context=cell_id, auto_comments=comments)
        new[source] = message
    kept = {cell_id for cell_id, _ in cells}
    for m in [*old, *old.obsolete.values()]:
        if m.id and m.context not in kept and m.string:
            new.obsolete[(m.id, m.context)] = m
    return new


def render(catalog, about: str) -> str:
    """The catalog's text, a source line a line: a fixed header (``about`` its first line) (no dates, no tool versions: the file changes only with its entries)
    and the entries in notebook order, previous msgids included."""
    from babel.messages.pofile import write_po

    buffer = io.BytesIO()
    write_po(buffer, catalog, width=0, omit_header=True, include_previous=True, include_lineno=False)
    return HEADER.format(about=about, language=CHINESE) + "\n" + buffer.getvalue().decode("utf-8")


@dataclass
class Status:
    """Where a lesson's catalog stands against its English notebook: cell ids by state."""

    lesson: str
    current: list[str] = field(default_factory=list)
    untranslated: list[str] = field(default_factory=list)   # new cells, or never translated
    stale: list[str] = field(default_factory=list)          # the English changed since the translation (fuzzy)
    broken: list[str] = field(default_factory=list)         # the translation lost the {minutes} placeholder

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
    old = {m.context: m for m in read(catalog_path) if m.id}
    for cell_id, source in english_cells(notebook or entry.notebook()):
        m = old.get(cell_id)
        if m is None or not m.string:
            found.untranslated.append(cell_id)
        elif m.fuzzy or m.id != source:
            found.stale.append(cell_id)
        elif (PLACEHOLDER in source) != (PLACEHOLDER in m.string):
            found.broken.append(cell_id)
        else:
            found.current.append(cell_id)
    return found
