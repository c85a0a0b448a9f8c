"""An instructor's reveal.js deck per lesson (``make slides``): ``build/slides/NN-name.slides.html``.

    python -m helpers.tools.slides [--no-execute] [--output DIR] [LESSON ...]     (LESSON: an id, slug or file stem)

Each lesson is executed (replay without a GPU, live with one; ``--no-execute`` keeps the code without outputs),
cut into slides and converted with nbconvert's reveal.js exporter (``jupyter nbconvert --to slides``). The cut
comes from the lesson's structure, so the lessons need no slide markup: the title cell and every ``##`` section
start a slide, every ``###`` heading a sub-slide (below it, in reveal.js's second dimension), and every other cell
follows on the slide before ("-"). An instructor can override any cell: a cell whose metadata already has
``slideshow.slide_type`` keeps it, and the tags ``slide``, ``subslide``, ``fragment``, ``skip`` and ``notes`` set it.
Figures keep their alt text (``helpers.display.alt_text``). Long slides scroll. Nothing is fetched while building: the
deck loads reveal.js from its CDN when opened (``--reveal-prefix`` names a local copy instead).
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any

from .. import lessons as course_lessons, paths
from ..errors import CourseError

TYPES = ("slide", "subslide", "fragment", "skip", "notes", "-")


class SlidesError(CourseError):
    """The slides could not be built; the message says why and what to do."""


def slide_type(cell: Any) -> str:
    """The reveal.js slide type of a cell: its own metadata or tag if it has one, else from its headings."""
    own = cell.get("metadata", {}).get("slideshow", {}).get("slide_type")
    if own:
        return own
    tags = [t for t in cell.get("metadata", {}).get("tags", []) if t in TYPES]
    if tags:
        return tags[0]
    if cell["cell_type"] == "markdown":
        first = next((line for line in "".join(cell["source"]).splitlines() if line.strip()), "")
        if first.startswith(("# ", "## ")):
            return "slide"
        if first.startswith("### "):
            return "subslide"
    return "-"


def mark(nb: Any) -> Any:
    """A copy of ``nb`` with every cell's ``slideshow.slide_type`` set (see :func:`slide_type`)."""
    marked = copy.deepcopy(nb)
    for cell in marked["cells"]:
        cell.setdefault("metadata", {}).setdefault("slideshow", {})["slide_type"] = slide_type(cell)
    return marked


def lessons(names: list[str] | None = None, folder: Path | None = None) -> list[Path]:
    """The lesson files named (by id, slug or file stem: :func:`helpers.lessons.find`), or all of them, in course
    order."""
    try:
        return course_lessons.chosen_notebooks(names, folder)
    except LookupError as exc:
        first = course_lessons.notebooks(folder)[0].stem
        raise SlidesError(f"no lesson {exc.args[0]!r}: give its number (06) or name ({first}).") from None


def deck(path: Path, execute: bool = True, reveal_prefix: str | None = None) -> str:
    """The reveal.js HTML of one lesson (executed first unless ``execute`` is False)."""
    import nbformat
    from nbconvert import SlidesExporter

    from ..display import alt_text
    from .book import BookError, execute as run_all

    nb = nbformat.read(path, as_version=4)
    if execute:
        try:
            run_all(nb, path.parent)
        except BookError as exc:
            raise SlidesError(f"{path.name}: {exc}") from None
        alt_text.embed_in_html(nb)
    exporter = SlidesExporter(reveal_scroll=True, exclude_input_prompt=True, exclude_output_prompt=True)
    if reveal_prefix:
        exporter.reveal_url_prefix = reveal_prefix
    body, _ = exporter.from_notebook_node(mark(nb))
    return body


def build(names: list[str] | None = None, output: Path | None = None, execute: bool = True,
          reveal_prefix: str | None = None) -> list[Path]:
    """Write one deck per lesson into ``output`` (default ``build/slides/``) and an index page; return the decks."""
    output = output or paths.BUILD / "slides"
    output.mkdir(parents=True, exist_ok=True)
    written = []
    for path in lessons(names):
        target = output / f"{path.stem}.slides.html"
        target.write_text(deck(path, execute, reveal_prefix), encoding="utf-8")
        written.append(target)
    items = "\n".join(f'<li><a href="{p.name}">{p.name.removesuffix(".slides.html")}</a></li>'
                      for p in sorted(output.glob("*.slides.html")))
    (output / "index.html").write_text(f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                                       f"<title>Slides</title></head><body><h1>Slides, one deck per lesson</h1>"
                                       f"<ul>\n{items}\n</ul></body></html>\n", encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.tools.slides", description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lessons to convert (default: all), e.g. 06")
    parser.add_argument("--no-execute", action="store_true", help="keep the code without running it")
    parser.add_argument("--output", type=Path, help="folder for the decks (default: build/slides)")
    parser.add_argument("--reveal-prefix", help="where the decks load reveal.js from (default: a CDN)")
    args = parser.parse_args(argv)
    try:
        written = build(args.lessons, args.output, not args.no_execute, args.reveal_prefix)
    except CourseError as exc:
        print(exc, file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
