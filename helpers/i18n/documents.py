"""The course's Markdown documents in Chinese (issue 35): the README's start section (``README.zh-CN.md``), the
instructor guide (``lessons/zh/instructor-guide.md``) and the glossary (``lessons/zh/glossary.md``, 术语表), built
from the English by ``python -m helpers sync``.

Each document has a catalog beside the lessons' (``lessons/locale/zh_CN/LC_MESSAGES/<name>.po``), kept in step by
:func:`helpers.i18n.catalogs.extract` as a lesson's is: one entry per Markdown block (a heading, a paragraph, a list,
a table, a fenced code block), keyed ``<heading anchor>/<block number in its section>`` (a document translated a
table row at a time, the glossary, keys each row ``<heading anchor>/<anchor of its first cell>``, so that a new row
moves no other key), and one per phrase of the
parts that ``python -m helpers sync`` derives from the registry (the guide's plans), keyed ``string/<name>``. A
lesson heading's minutes are held as ``{minutes}``. A block without a current translation shows in English; the tests
fail on a stale one anywhere and on an untranslated one outside the sections a document lists as pending and the
guide's sections of lessons not yet declared translated (:mod:`.edition`), heading included.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import lessons, paths
from . import catalogs, edition
from .catalogs import PLACEHOLDER, Status, current, fits, read

__all__ = ["Document", "DOCUMENTS", "GLOSSARY", "blocks", "keyed", "catalog_text", "build", "status", "expected",
           "built", "document", "undeclared_sections"]

_MINUTES = re.compile(r"^(### \d\d · .*\()(\d+)( min\))$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_LESSON_SECTION = re.compile(r"^(\d\d)--")     # the anchor of a lesson's heading, ``### NN · Title``
DERIVED = "{plans}"
# The block `python -m helpers sync` writes from the registry between these markers (helpers.tools.derived).
_PLANS_BLOCK = re.compile(r"<!-- plans: written by .*? -->\n.*?<!-- end of plans -->", re.S)


@dataclass(frozen=True)
class Document:
    """An English document, the part of it translated, where its Chinese twin is written, and the sections whose
    paragraphs are still to translate (``pending``: anchors of ``##``/``###`` headings; their headings are not)."""

    name: str
    source: Path
    target: Path
    end: str | None = None                       # the first heading line not translated (None: to the end)
    pending: tuple[str, ...] = ()
    strings: Callable[[], list[tuple[str, str]]] = field(default=lambda: [])
    twin: str = ""                               # the English's line linking to the Chinese twin (not translated)
    lesson_sections: bool = False                # its ``### NN · `` sections follow the lessons' translation
    rows: bool = False                           # its tables are translated a row at a time

    def catalog(self) -> Path:
        return edition.CATALOGS / f"{self.name}.po"

    def back(self) -> str:
        """The Chinese twin's line linking back to the English."""
        return f"[English]({os.path.relpath(self.source, self.target.parent)})"


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading's text (lower case, punctuation dropped, spaces as hyphens)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _normalised(text: str) -> str:
    """The English as the catalog keys it: the guide's derived plans block as one placeholder."""
    return _PLANS_BLOCK.sub(DERIVED, text, count=1)


_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")


def _table_rows(block: str) -> list[str]:
    """A table block as its head (header row and rule) and its rows, one piece each; any other block whole."""
    lines = block.split("\n")
    if len(lines) > 2 and all(line.startswith("|") for line in lines) and _RULE.match(lines[1]):
        return ["\n".join(lines[:2]), *lines[2:]]
    return [block]


def _is_row(piece: str) -> bool:
    return piece.startswith("|") and "\n" not in piece


def blocks(text: str, rows: bool = False) -> list[str]:
    """The Markdown blocks of ``text``: runs of lines between blank lines, a fenced code block whole, a heading on
    its own; with ``rows``, a table's head and each of its rows one block apiece."""
    found: list[str] = []
    run: list[str] = []
    fence = ""
    for line in text.split("\n"):
        if fence:
            run.append(line)
            if line.strip().startswith(fence):
                fence = ""
            continue
        if line.strip().startswith(("```", "~~~")):
            fence = line.strip()[:3]
            run.append(line)
            continue
        if not line.strip() or _HEADING.match(line):
            if run:
                found.append("\n".join(run))
            run = [line] if line.strip() else []
            if line.strip():
                found.append(line)
                run = []
            continue
        run.append(line)
    if run:
        found.append("\n".join(run))
    return [piece for block in found for piece in _table_rows(block)] if rows else found


def _english(doc: Document) -> str:
    text = _normalised(doc.source.read_text(encoding="utf-8"))
    if doc.end:
        text = text.split(f"\n{doc.end}\n", 1)[0]
    return text


def keyed(text: str, rows: bool = False) -> list[tuple[str, str]]:
    """(key, block as the catalog holds it) for each block: ``<anchor of the heading above>/<number>``, the heading
    itself number 0, a lesson heading's minutes as ``{minutes}``; with ``rows``, a table row is its own block, keyed
    ``<anchor of the heading above>/<anchor of its first cell>``."""
    found, section, number = [], "top", 0
    for block in blocks(text, rows):
        heading = _HEADING.match(block)
        if heading and "\n" not in block:
            section, number = anchor(re.sub(r"\(\d+ min\)$", "", heading.group(2))), 0
        elif rows and _is_row(block):
            found.append((f"{section}/{anchor(block.strip('|').split('|')[0])}", block))
            continue
        else:
            number += 1
        found.append((f"{section}/{number}", _MINUTES.sub(rf"\g<1>{PLACEHOLDER}\g<3>", block)))
    return found


def _entries(doc: Document) -> list[tuple[str, str]]:
    blocks_ = [(k, b) for k, b in keyed(_english(doc), doc.rows) if b not in (DERIVED, doc.twin)]
    return blocks_ + [(f"string/{k}", s) for k, s in doc.strings()]


def catalog_text(doc: Document) -> str:
    """The document's catalog merged with its English as it is now."""
    inside = doc.source.is_relative_to(paths.ROOT)
    name = doc.source.relative_to(paths.ROOT).as_posix() if inside else doc.source.name
    about = (f"The Chinese edition of {name} (issue 35): one entry per Markdown block, keyed by its heading's "
             "anchor and number (msgctxt)" + (", a table row by its first cell's anchor" if doc.rows else "")
             + "; string/...: phrases of derived parts.")
    return catalogs.render(catalogs.extract(_entries(doc), read(doc.catalog())), about)


def translations(doc: Document) -> dict[str, tuple[str, str]]:
    """Key -> (English, Chinese) of the current entries of the document's catalog on disk."""
    return {e.msgctxt: (e.msgid, e.msgstr) for e in current(read(doc.catalog())) if fits(e.msgid, e.msgstr)}


def translated(doc: Document, key: str, english: str) -> str:
    """A string of the document's catalog in Chinese (its English where it has no current translation)."""
    found = translations(doc).get(f"string/{key}")
    return found[1] if found and found[0] == english else english


def _relink(doc: Document, text: str) -> str:
    if doc.target.parent == doc.source.parent:
        return text
    twins = {edition.notebook(e).name for e in edition.started()} | {d.target.name for d in DOCUMENTS
                                                                       if d.target.parent == doc.target.parent}
    return edition.relink(text, twins)


def build(doc: Document, derived_block: Callable[[], str] | None = None) -> str:
    """The Chinese document's text: each block's current translation, else its English."""
    chinese = translations(doc)
    out = []
    for (key, english), block in zip(keyed(_english(doc), doc.rows), blocks(_english(doc), doc.rows)):
        joint = "\n" if doc.rows and _is_row(block) else "\n\n"   # a row follows its table's head or row
        if english == DERIVED:
            out.append((joint, derived_block() if derived_block else block))
            continue
        if english == doc.twin:
            out.append((joint, doc.back()))
            continue
        found = chinese.get(key)
        if not found or found[0] != english:
            out.append((joint, block))
            continue
        text = found[1]
        minutes = _MINUTES.match(block)
        if minutes:
            text = text.replace(PLACEHOLDER, minutes.group(2))
        out.append((joint, _relink(doc, text)))
    return "".join(j + t for j, t in out)[2:] + "\n" + "".join(f"\n{translated(doc, k, s)}\n" for k, s in doc.strings()
                                              if k.startswith("after/"))


def _in(pending: tuple[str, ...], key: str) -> bool:
    """Whether a block must be translated: every heading, every phrase, every block of a section not pending."""
    return key.split("/", 1)[0] not in pending or key.startswith("string/") or key.endswith("/0")


def undeclared_sections(doc: Document) -> tuple[str, ...]:
    """Anchors of the document's lesson sections whose lesson is not declared translated: pending whole, heading
    too, as the lesson's own catalog is (a new lesson needs no translation to land)."""
    if not doc.lesson_sections:
        return ()
    ids = {entry.id for entry in edition.undeclared()}
    heads = [key.split("/", 1)[0] for key, _ in keyed(_english(doc), doc.rows) if key.endswith("/0")]
    return tuple(h for h in heads if (m := _LESSON_SECTION.match(h)) and m.group(1) in ids)


def status(doc: Document) -> Status:
    """Each block and phrase of the document against its catalog on disk; an untranslated block of a pending
    section or of an undeclared lesson's section is not a problem (:func:`untranslated` lists it)."""
    found = Status(doc.name)
    old = {e.msgctxt: e for e in read(doc.catalog()) if e.msgid and not e.obsolete}
    later = undeclared_sections(doc)
    for key, source in _entries(doc):
        e = old.get(key)
        if e is None or not e.msgstr:
            if _in(doc.pending, key) and key.split("/", 1)[0] not in later:
                found.untranslated.append(key)
        elif e.fuzzy or e.msgid != source:
            found.stale.append(key)
        elif not fits(source, e.msgstr):
            found.broken.append(key)
        else:
            found.current.append(key)
    return found


def untranslated(doc: Document) -> list[str]:
    """Keys of blocks with no translation yet, pending or not."""
    done = {e.msgctxt for e in read(doc.catalog()) if e.msgstr and not e.obsolete}
    return [key for key, _ in _entries(doc) if key not in done]


# --------------------------------------------------------------------------- the documents and their derived parts
def _plans_strings() -> list[tuple[str, str]]:
    found = [("plans/intro", "By the estimates ({lessons} lessons that take {minutes} minutes, about {hours} hours, "
                             "in all; the course promises at most {course} minutes and no lesson over {lesson}; "
                             "exercises included):"),
             ("plans/header", "| Plan | Lessons | Minutes | What it covers |"),
             ("plans/budget", " ({hours} hours)")]
    for plan in lessons.PLANS:
        found += [(f"plans/{anchor(plan.name)}", plan.name), (f"plans/{anchor(plan.name)}/covers", plan.covers)]
    return found


def _guide_plans(doc: Document) -> Callable[[], str]:
    def render() -> str:
        total = lessons.total_minutes()
        say = {k: translated(doc, k, s) for k, s in _plans_strings()}
        rows = []
        for row in lessons.plans():
            plan, key = row["plan"], f"plans/{anchor(row['plan'].name)}"
            budget = say["plans/budget"].format(hours=f"{plan.budget / 60:g}") if plan.budget else ""
            rows.append(f"| {say[key]}{budget} | {row['ids']} | {row['minutes']} | {say[key + '/covers']} |")
        intro = say["plans/intro"].format(lessons=len(lessons.LESSONS), minutes=total, hours=f"{total / 60:g}",
                                          course=lessons.COURSE_MINUTES, lesson=lessons.LESSON_MINUTES)
        return "\n".join([intro, "", say["plans/header"], "|---|---|---|---|", *rows])
    return render


def _readme_strings() -> list[tuple[str, str]]:
    """The Chinese README's closing line, and the phrases of the Chinese site's front page (helpers.tools.book)."""
    return [("after/rest", "The rest of the README (the lessons, the two modes, GPU machines, Binder and Colab, "
                           "conda, instructors, troubleshooting) is in English: [README.md](README.md)."),
            ("book/lessons", "## Lessons"),
            ("book/header", "| Lesson | Time | Run it |"),
            ("book/minutes", "{minutes} min"),
            ("book/total", "These lessons take about {minutes} minutes in all; the lessons not yet translated are "
                           "in <a href=\"../index.html\">the English edition</a>."),
            ("book/built", "## How this site was built")]


TWIN = "[中文版 (the Chinese edition)]({})"
README = Document("README", paths.ROOT / "README.md", paths.ROOT / "README.zh-CN.md", end="## Lessons",
                  strings=_readme_strings, twin=TWIN.format("README.zh-CN.md"))
GUIDE = Document("instructor-guide", paths.LESSONS / "instructor-guide.md", edition.NOTEBOOKS / "instructor-guide.md",
                 strings=_plans_strings, twin=TWIN.format("zh/instructor-guide.md"), lesson_sections=True)
GLOSSARY = Document("glossary", paths.LESSONS / "glossary.md", edition.NOTEBOOKS / "glossary.md",
                    twin=TWIN.format("zh/glossary.md"), rows=True)
DOCUMENTS = (README, GUIDE, GLOSSARY)


def document(name: str) -> Document:
    """The document named ``name`` (README, instructor-guide, glossary)."""
    return next(d for d in DOCUMENTS if d.name == name)


def expected() -> dict[Path, str]:
    """Every document's catalog merged with its English as it is now."""
    return {doc.catalog(): catalog_text(doc) for doc in DOCUMENTS}


def built() -> dict[Path, str]:
    """Every Chinese document, from the catalogs on disk."""
    return {doc.target: build(doc, _guide_plans(doc) if doc is GUIDE else None) for doc in DOCUMENTS}


def problems() -> list[tuple[str, str]]:
    """(file, what to do) for each document whose catalog has a stale, broken or (outside a pending section) missing
    translation."""
    found = []
    for doc in DOCUMENTS:
        state = status(doc)
        if not state.complete:
            found.append((doc.catalog().relative_to(paths.ROOT).as_posix(), f"{state.words()}: translate them "
                          "(msgstr; drop the fuzzy flag once it matches the msgid), then `python -m helpers sync`"))
    return found
