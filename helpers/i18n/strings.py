"""The Python strings' catalog (``helpers/locale/zh_CN/LC_MESSAGES/helpers.po``): what ``_("...")`` and
``N_("...")`` mark in helpers, found by Babel's extractor and merged here (polib): an unchanged string keeps its
translation, a changed one keeps the closest old translation marked fuzzy beside the previous English, one no
longer marked becomes obsolete.

A module is translated when its strings are marked; every marked string must have a current translation
(tests/test_i18n_strings.py), so marking a module and translating it land together.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import polib

from .. import lessons, paths
from . import STRINGS_CATALOG, edition
from .catalogs import read, render

__all__ = ["marked_files", "extracted", "extract", "untranslated"]

KEYWORDS = {"_": None, "N_": None, "gettext": None}
ABOUT = "The Chinese edition of the helpers package's Python strings (issue 35), marked _(\"...\") in the code."


def marked_files(folder: Path = paths.PACKAGE) -> list[Path]:
    """The modules that import the marker from :mod:`helpers.i18n` (other ``_`` are not ours)."""
    return [p for p in sorted(folder.rglob("*.py"))
            if re.search(r"^\s*from (helpers|\.+)\.?i18n import .*\b_\b", p.read_text(encoding="utf-8"), re.M)]


def extracted(folder: Path = paths.PACKAGE) -> dict[str, list[tuple[str, str]]]:
    """Every marked string in ``folder``'s marked modules -> the files it is in, as (file, ""), in the order found;
    then the registry's ``does`` lines of the declared lessons and those already translated (a new lesson's line
    enters the catalog when the lesson is declared)."""
    from babel.messages.extract import extract_from_file

    found: dict[str, list[tuple[str, str]]] = {}
    for path in marked_files(folder):
        where = path.relative_to(folder.parent).as_posix()
        for line, message, _comments, _context in extract_from_file("python", str(path), keywords=KEYWORDS):
            if isinstance(message, str) and message:
                found.setdefault(message, []).append((where, ""))   # no line: an edit above it changes nothing
    if folder == paths.PACKAGE:   # the registry's lines on what each lesson does (start-here's course plan): a
        # declared lesson's must be translated; another's is kept while its translation is current
        translated = {e.msgid for e in read(STRINGS_CATALOG) if e.msgstr and not e.fuzzy and not e.obsolete}
        for entry in lessons.LESSONS:
            if entry.slug in edition.TRANSLATED or entry.does in translated:
                found.setdefault(entry.does, []).append(("helpers/lessons.py", ""))
    return found


def extract(catalog: Path = STRINGS_CATALOG, folder: Path = paths.PACKAGE) -> str:
    """The strings catalog's new text, the old translations carried over."""
    old = {e.msgid: e for e in read(catalog) if e.msgid}
    marked = extracted(folder)
    orphans = [msgid for msgid, e in old.items() if msgid not in marked and e.msgstr]
    new = polib.POFile(wrapwidth=0)
    for msgid, where in marked.items():
        entry = polib.POEntry(msgid=msgid, occurrences=where)
        before = old.get(msgid)
        if before is not None and not before.obsolete:
            entry.msgstr, entry.flags, entry.previous_msgid = before.msgstr, [f for f in before.flags if f == "fuzzy"], \
                before.previous_msgid
        elif (close := difflib.get_close_matches(msgid, orphans, n=1, cutoff=0.8)):
            entry.msgstr, entry.flags, entry.previous_msgid = old[close[0]].msgstr, ["fuzzy"], close[0]
        new.append(entry)
    for msgid in orphans:
        new.append(polib.POEntry(msgid=msgid, msgstr=old[msgid].msgstr, obsolete=True))
    return render(new, ABOUT)


def untranslated(catalog: Path = STRINGS_CATALOG, folder: Path = paths.PACKAGE) -> list[str]:
    """Marked strings without a current translation, as ``file: string`` (a lesson's ``does`` line counts once the
    lesson is declared: it is part of the lesson's translation)."""
    have = {e.msgid: e for e in read(catalog) if e.msgid and not e.obsolete}
    return [f"{where[0][0]}: {msgid[:80]!r}" for msgid, where in extracted(folder).items()
            if msgid not in have or not have[msgid].msgstr or have[msgid].fuzzy]
