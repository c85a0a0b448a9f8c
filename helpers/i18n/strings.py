"""The Python strings' catalog (``helpers/locale/zh_CN/LC_MESSAGES/helpers.po``): what ``_("...")`` and
``N_("...")`` mark in helpers, extracted with Babel and merged with Babel's own update (a changed string keeps its
old translation, fuzzy, beside the previous English; one no longer marked becomes obsolete).

A module is translated when its strings are marked; every marked string must have a current translation
(tests/test_i18n_strings.py), so marking a module and translating it land together.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import paths
from . import CHINESE, STRINGS_CATALOG
from .catalogs import read, render

__all__ = ["extracted", "extract", "untranslated"]

KEYWORDS = {"_": None, "N_": None, "gettext": None}


def marked_files(folder: Path = paths.PACKAGE) -> list[Path]:
    """The modules that import the marker from :mod:`helpers.i18n` (other ``_`` are not ours)."""
    return [p for p in sorted(folder.rglob("*.py"))
            if re.search(r"^\s*from (helpers|\.+)\.?i18n import .*\b_\b", p.read_text(encoding="utf-8"), re.M)]


def extracted(folder: Path = paths.PACKAGE):  # -> babel.messages.catalog.Catalog
    """Every marked string in ``folder``'s marked modules, with where it is (file:line)."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_file

    template = Catalog(locale=CHINESE)
    for path in marked_files(folder):
        where = path.relative_to(folder.parent).as_posix()
        for line, message, comments, context in extract_from_file("python", str(path), keywords=KEYWORDS,
                                                                  comment_tags=("TRANSLATORS:",)):
            template.add(message, locations=[(where, line)], auto_comments=comments, context=context)
    return template


def extract(catalog: Path = STRINGS_CATALOG, folder: Path = paths.PACKAGE) -> str:
    """The strings catalog's new text, the old translations carried over."""
    old = read(catalog)
    old.update(extracted(folder), update_header_comment=False)
    return render(old, "The Chinese edition of the helpers package's Python strings (issue 35), marked _(\"...\").")


def untranslated(catalog: Path = STRINGS_CATALOG, folder: Path = paths.PACKAGE) -> list[str]:
    """Marked strings without a current translation, as ``file:line: string``."""
    have = {m.id: m for m in read(catalog) if m.id}
    return [f"{m.locations[0][0]}:{m.locations[0][1]}: {m.id[:80]!r}" for m in extracted(folder)
            if m.id and (m.id not in have or not have[m.id].string or have[m.id].fuzzy)]
