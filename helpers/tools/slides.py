"""An instructor's reveal.js deck per lesson (``make slides``): ``build/slides/NN-name.slides.html``.

    python -m helpers.tools.slides [--no-execute] [--output DIR] [LESSON ...]     (LESSON: an id, slug or file stem)
    python -m helpers.tools.slides --mark                                         (write the lessons' slide types)

Each lesson is executed (replay without a GPU, live with one; ``--no-execute`` keeps the code without outputs), cut
into slides of at most :data:`helpers.tools.slide_plan.BUDGET` words with the instructor guide's section as speaker
notes (:func:`helpers.tools.slide_plan.deck_cells`), and converted with nbconvert's reveal.js exporter through the
course's template (``templates/reveal_offline``). reveal.js itself is copied into the build from the sphinx-revealjs
package (``reveal.js/``, with its licence), so a deck opens as slides offline: nothing is fetched when building or
presenting; formulas are MathML, converted when building (:mod:`helpers.tools.maths`), not typeset by MathJax
from a CDN. Figures keep their alt text (``helpers.display.alt_text``); a widget is a static snapshot
(:mod:`helpers.tools.widgets_static`); CJK text has a web font cut when building (:mod:`helpers.tools.webfont`).
To present a lesson live, open it in JupyterLab and press RISE's button (the ``lab`` extra installs
jupyterlab-rise): it reads the slide types that ``--mark`` writes into the lessons from
:func:`helpers.tools.slide_plan.plan`; an instructor's own ``slideshow`` metadata or tag (``slide``, ``subslide``,
``fragment``, ``skip``, ``notes``) is what :func:`slide_type` reads.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path
from typing import Any, Callable

import shutil

from .. import lessons as course_lessons, paths
from ..errors import CourseError
from . import maths, slide_plan, webfont, widgets_static
from .slide_plan import TYPES

TEMPLATES = Path(__file__).resolve().parent / "templates"
REVEAL = "reveal.js"   # the folder beside the decks that holds reveal.js
FONT = "fonts"        # the folder beside the decks that holds the CJK web font (helpers.tools.webfont)
# reveal.js's files a deck needs (nbconvert's template names them), from the sphinx-revealjs package
REVEAL_FILES = ("LICENSE", "dist/reveal.js", "dist/reveal.css", "dist/theme/white.css",
                "dist/theme/fonts/source-sans-pro", "plugin/notes/notes.js")


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


def reveal_source() -> Path:
    """reveal.js's files as the sphinx-revealjs package ships them (``make slides`` installs it)."""
    try:
        import sphinx_revealjs
    except ImportError:
        raise SlidesError("the decks serve reveal.js from the sphinx-revealjs package, which is not installed: run "
                          "`make slides`, or `pip install -e '.[slides]'`.") from None
    folder = Path(sphinx_revealjs.__file__).resolve().parent / "_static" / "revealjs"
    missing = [name for name in REVEAL_FILES if not (folder / name).exists()]
    if missing:
        raise SlidesError(f"sphinx-revealjs lacks reveal.js's {missing} in {folder}; reinstall it.")
    return folder


def copy_reveal(output: Path) -> Path:
    """Copy the reveal.js files a deck loads into ``output/reveal.js``; return that folder."""
    source, target = reveal_source(), output / REVEAL
    for name in REVEAL_FILES:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, dirs_exist_ok=True)
        else:
            shutil.copy2(source / name, target / name)
    return target


def deck(path: Path, execute: bool = True, reveal_prefix: str | None = None, guide: Path | None = None,
         twin: str | None = None) -> str:
    """The reveal.js HTML of one lesson (executed first unless ``execute`` is False), cut by
    :func:`helpers.tools.slide_plan.deck_cells` with ``guide``'s section as speaker notes, and a link to its
    ``twin`` deck in the other edition (relative to the deck) where there is one."""
    import nbformat
    from nbconvert import SlidesExporter
    from nbconvert.preprocessors import TagRemovePreprocessor

    from ..display import alt_text
    from .book import BookError, execute as run_all

    nb = nbformat.read(path, as_version=4)
    if execute:
        try:
            run_all(nb, path.parent)
        except BookError as exc:
            raise SlidesError(f"{path.name}: {exc}") from None
        alt_text.embed_in_html(nb)
        widgets_static.freeze(nb)
    cut = slide_plan.deck_cells(nb, course_lessons.find(path.stem).id, guide=guide)
    for cell in cut["cells"]:   # formulas as MathML: nothing to typeset them in the browser (helpers.tools.maths)
        if cell["cell_type"] == "markdown":
            cell["source"] = maths.markdown_with_mathml("".join(cell["source"]))
    exporter = SlidesExporter(template_name="reveal_offline", extra_template_basedirs=[str(TEMPLATES)],
                              exclude_input_prompt=True, exclude_output_prompt=True)
    exporter.register_preprocessor(TagRemovePreprocessor(remove_input_tags={"remove_input"}), enabled=True)
    exporter.reveal_url_prefix = reveal_prefix or REVEAL
    body, _ = exporter.from_notebook_node(mark(cut))
    style = webfont.deck_css(f"{FONT}/{webfont.file_name()}") + widgets_static.CSS + TWIN_CSS
    body = body.replace("</head>", f"<style>\n{style}</style>\n<script>{webfont.SCRIPT}</script>\n</head>", 1)
    return body.replace("</body>", twin_link(twin) + "\n</body>", 1) if twin else body


TWIN_CSS = ".zc-twin { position: fixed; top: 0.6em; right: 1em; z-index: 40; font-size: 16px; }\n"


def twin_link(twin: str) -> str:
    """The link from a deck (or the index) to its twin in the other edition: "中文" to the Chinese, else "English"."""
    chinese = "/zh/" in f"/{twin}"
    return (f'<a class="zc-twin" href="{twin}" hreflang="{"zh" if chinese else "en"}">'
            f'{"中文" if chinese else "English"}</a>')


def _edition(names: list[str] | None, language: str) -> tuple[list[Path], Path | None, Callable[[Path], str | None]]:
    """An edition's lessons (those of ``names`` it has), its instructor guide, and each deck's twin."""
    from ..i18n import documents, edition

    if language == "zh":
        have = [edition.notebook(e) for e in edition.started() if edition.notebook(e).exists()]
        chosen = {p.name for p in lessons(names, edition.NOTEBOOKS)} if names else {p.name for p in have}
        return ([p for p in have if p.name in chosen], documents.GUIDE.target,
                lambda p: f"../{p.stem}.slides.html")
    chinese = {p.stem for p in edition.NOTEBOOKS.glob("*.ipynb")}
    return lessons(names), None, lambda p: f"zh/{p.stem}.slides.html" if p.stem in chinese else None


def build(names: list[str] | None = None, output: Path | None = None, execute: bool = True,
          reveal_prefix: str | None = None, language: str = "en") -> list[Path]:
    """Write one deck per lesson of an edition (``language``: "en", or "zh": the Chinese lessons, into
    ``build/slides/zh/``) into ``output`` (default ``build/slides/``), reveal.js beside them (unless
    ``reveal_prefix`` names another copy) and an index page; each deck links to its twin; return the decks."""
    zh = language == "zh"
    output = output or (paths.BUILD / "slides" / "zh" if zh else paths.BUILD / "slides")
    output.mkdir(parents=True, exist_ok=True)
    if not reveal_prefix:
        copy_reveal(output)
    chosen, guide, twin = _edition(names, language)
    written = []
    for path in chosen:
        target = output / f"{path.stem}.slides.html"
        target.write_text(deck(path, execute, reveal_prefix, guide, twin(path)), encoding="utf-8")
        written.append(target)
    webfont.subset(webfont.characters_in(output, ("*.slides.html",)), output / FONT / webfont.file_name())
    items = "\n".join(f'<li><a href="{p.name}">{p.name.removesuffix(".slides.html")}</a></li>'
                      for p in sorted(output.glob("*.slides.html")))
    other = twin_link("../index.html" if zh else "zh/index.html")
    heading, about = (("幻灯片，每课一套", "在幻灯片中按 S 查看演讲者备注（来自讲师指南），按 Esc 查看总览。")
                      if zh else ("Slides, one deck per lesson", "Press S in a deck for the speaker notes (from "
                                  "the instructor guide), Esc for an overview."))
    (output / "index.html").write_text(f"<!DOCTYPE html>\n<html lang=\"{'zh-CN' if zh else 'en'}\"><head>"
                                       f"<meta charset=\"utf-8\"><title>Slides</title></head><body>"
                                       f"<p>{other}</p><h1>{heading}</h1><p>{about} reveal.js: {REVEAL}/LICENSE.</p>"
                                       f"<ul>\n{items}\n</ul></body></html>\n", encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.tools.slides", description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*", help="lessons to convert (default: all), e.g. 06")
    parser.add_argument("--no-execute", action="store_true", help="keep the code without running it")
    parser.add_argument("--output", type=Path, help="folder for the decks (default: build/slides)")
    parser.add_argument("--reveal-prefix", help=f"where the decks load reveal.js from (default: {REVEAL}/, copied "
                        "beside them)")
    parser.add_argument("--language", choices=("en", "zh", "both"), default="both",
                        help="which edition: en, zh (build/slides/zh/, the Chinese lessons) or both (default)")
    parser.add_argument("--mark", action="store_true", help="write the slide types into the lessons (for RISE) and "
                        "build nothing")
    args = parser.parse_args(argv)
    if args.mark:
        for path in slide_plan.mark_lessons(lessons(args.lessons) if args.lessons else None):
            print(f"marked {path.name}")
        return 0
    try:
        written = []
        for language in (("en", "zh") if args.language == "both" else (args.language,)):
            output = args.output / "zh" if args.output and language == "zh" else args.output
            written += build(args.lessons, output, not args.no_execute, args.reveal_prefix, language)
    except CourseError as exc:
        print(exc, file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
