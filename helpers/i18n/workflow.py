"""What ``python -m helpers i18n extract | build | status`` and ``python -m helpers sync`` do with the Chinese
edition: the files that follow from the English lessons (catalogs, notebooks), and where each lesson stands.

A lesson's translation starts when its catalog exists (``i18n extract <lesson>`` creates it); from then on sync
keeps the catalog and the Chinese notebook in step with the English. It is *declared* (:mod:`.edition`) once its
catalog is complete.
"""

from __future__ import annotations

from pathlib import Path

from .. import lessons, paths
from . import STRINGS_CATALOG, catalogs, documents, edition, notebooks, solutions, strings

__all__ = ["started", "catalog_text", "expected", "write", "report", "problems"]


def started() -> list[lessons.Lesson]:
    """Lessons whose translation has started or is declared (:func:`helpers.i18n.edition.started`)."""
    return edition.started()


def catalog_text(entry: lessons.Lesson) -> str:
    """The lesson's catalog merged with its English notebook as it is now."""
    old = catalogs.read(edition.catalog(entry))
    about = (f"The Chinese edition of lessons/{entry.name}.ipynb (issue 35): one entry per Markdown cell and per "
             "code cell with comments, keyed by its cell id (msgctxt).")
    cells, code = catalogs.english_cells(entry.notebook()), catalogs.code_ids(entry.notebook())
    return catalogs.render(catalogs.extract(cells, old, code), about)


def expected(extra: list[lessons.Lesson] | None = None) -> dict[Path, str]:
    """Every file that follows from the English lessons: the started lessons' catalogs (and ``extra``'s), the
    strings' and the solutions' catalogs, then the Chinese notebooks (built from the catalogs as they will be
    written)."""
    chosen = {e.id: e for e in [*started(), *(extra or [])]}
    texts = {edition.catalog(e): catalog_text(e) for e in chosen.values()}
    texts[STRINGS_CATALOG] = strings.extract()
    if paths.SOLUTIONS.is_dir():                     # an instructor may remove the solutions
        texts[solutions.CATALOG] = solutions.catalog_text()
    return {**texts, **documents.expected()}


def write(texts: dict[Path, str]) -> list[str]:
    """Write the files whose text changed; the paths written, relative to the repository."""
    changed = []
    for path, text in texts.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(path.relative_to(paths.ROOT).as_posix())
    return changed


def built() -> dict[Path, str]:
    """The Chinese notebooks of the started lessons and the Chinese documents (:mod:`.documents`), from the
    catalogs on disk."""
    return {**{edition.notebook(e): notebooks.build(e) for e in started()}, **documents.built()}


def report() -> list[str]:
    """One line per lesson: declared, started or not, and its cells by state; then the Python strings."""
    lines = []
    for entry in lessons.LESSONS:
        if entry not in started():
            lines.append(f"{entry.name}: not started (`python -m helpers i18n extract {entry.id}` starts it)")
            continue
        state = catalogs.status(entry, edition.catalog(entry))
        label = "declared" if entry.slug in edition.TRANSLATED else "started, not declared"
        lines.append(f"[{label}] {state.words()}")
    for doc in documents.DOCUMENTS:
        todo = documents.untranslated(doc)
        lines.append(f"[document] {documents.status(doc).words()}; {len(todo)} blocks untranslated in all")
    lines.append(f"[solutions] {solutions.status().words()}")
    left = strings.untranslated()
    lines.append(f"Python strings: {len(left)} without a current translation" + "".join(f"\n  {x}" for x in left))
    return lines


def problems() -> list[tuple[str, str]]:
    """(file, what to do) for each declared lesson whose catalog is not complete and current, each marked Python
    string without a current translation, and each Chinese notebook behind its catalog."""
    found = []
    for entry in edition.declared():
        state = catalogs.status(entry, edition.catalog(entry))
        if not state.complete:
            found.append((f"lessons/locale/zh_CN/LC_MESSAGES/{entry.name}.po", f"{state.words()}: translate them "
                          "(msgstr; drop the fuzzy flag once it matches the msgid), then `python -m helpers sync`"))
    found += documents.problems()
    if paths.SOLUTIONS.is_dir() and not (state := solutions.status()).complete:
        found.append(("lessons/locale/zh_CN/LC_MESSAGES/solutions.po", f"{state.words()}: translate their comments "
                      "and docstrings, then `python -m helpers sync`"))
    found += [("helpers/locale/zh_CN/LC_MESSAGES/helpers.po", f"no current translation: {x}")
              for x in strings.untranslated()]
    for path, text in built().items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            found.append((path.relative_to(paths.ROOT).as_posix(), "behind its catalog: `python -m helpers sync`"))
    return found
