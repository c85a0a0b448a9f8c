"""Where a lesson's slides start, and what one slide may hold (``make slides``, ``python -m helpers slides``).

A slide holds what an audience reads at a distance: a figure, a table, or a few lines, at most :data:`BUDGET` words
besides its speaker notes. Two users read the same cut:

* JupyterLab's RISE extension presents a lesson live from its cells' ``slideshow.slide_type``, which
  :func:`mark_lessons` writes into the lessons from here (one place, not by hand in each notebook): the title and every
  ``##`` section start a slide, ``###`` headings, exercises and a cell that would overflow the slide before start a
  sub-slide, the set-up cell's output is a sub-slide of the title;
* the static decks (:mod:`helpers.tools.slides`) cut an executed copy finer with :func:`deck_cells`: a text over the
  budget is split at its headings and paragraphs, a long kernel into pieces, a result's tables and narration onto
  slides of their own, and the lesson's section of the instructor guide becomes the title slide's speaker notes.
"""

from __future__ import annotations

import copy
import re
from html import unescape
from pathlib import Path
from typing import Any

from .. import paths

BUDGET = 150          # words on one slide, speaker notes aside (tests/browser/test_site_and_slides.py holds decks to it)
CUT_BUDGET = 135      # the decks' cut counts sources, the test counts the rendered slide: a margin for the difference
PLAN_BUDGET = 110     # the lessons' own cut, from their sources, leaves room for a cell's output
FIGURE_WORDS = CUT_BUDGET   # a figure (an image, a widget's snapshot) fills a slide's height: it stands alone
TYPES = ("slide", "subslide", "fragment", "skip", "notes", "-")
_WORD = re.compile(r"[^\s|#*`>\-=:]*[A-Za-z0-9][^\s|]*")


def words(text: str) -> int:
    """Words an audience reads in Markdown or code: links, images and HTML tags count for their text only."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", text)
    text = re.sub(r"\]\([^)]*\)", "] ", text)
    text = re.sub(r"</?[A-Za-z][^<>\s]*(?:\s[^<>]*)?>", " ", text)   # tags, not a < b ... c > d in code
    return len(_WORD.findall(text))


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def output_words(output: Any) -> int:
    """Words of one output as a deck shows it (an image counts for none)."""
    data = output.get("data", {})
    if output.get("output_type") == "stream":
        return words("".join(output.get("text", "")))
    for kind in ("image/png", "image/svg+xml"):
        if kind in data:
            return 0
    for kind in ("text/markdown", "text/html", "text/plain"):
        if kind in data:
            return words("".join(data[kind]))
    return 0


def figures(cell: Any) -> int:
    """Figures a code cell's outputs show: images, and ``<img>`` in HTML (coalesce-and-align-accesses' widget)."""
    count = 0
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "image/png" in data or "image/svg+xml" in data:
            count += 1
        elif "text/html" in data:
            count += "".join(data["text/html"]).count("<img")
    return count


def cell_words(cell: Any) -> int:
    """Words a cell puts on a slide: its source, and a code cell's outputs."""
    if cell.get("cell_type") == "code":
        return words(_source(cell)) + sum(output_words(o) for o in cell.get("outputs", []))
    return words(_source(cell))


def _heading(cell: Any) -> str:
    """``slide`` for a cell that opens with a title or ``##`` section, ``subslide`` for ``###``, else ``""``."""
    if cell.get("cell_type") != "markdown":
        return ""
    first = next((line for line in _source(cell).splitlines() if line.strip()), "")
    if first.startswith(("# ", "## ")):
        return "slide"
    return "subslide" if first.startswith("### ") else ""


def _tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def plan(nb: Any, budget: int = PLAN_BUDGET) -> list[str]:
    """The slide type of each cell of a lesson (RISE's cut): see the module's docstring."""
    types: list[str] = []
    used = 0
    setup_seen = False
    for cell in nb["cells"]:
        size = cell_words(cell)
        kind = _heading(cell)
        if cell["cell_type"] == "code" and not setup_seen and "zc.start()" in _source(cell):
            setup_seen, kind = True, "subslide"
        elif not kind and ("exercise" in _tags(cell) or (types and used + size > budget)):
            kind = "subslide"
        types.append(kind or ("slide" if not types else "-"))
        used = size if kind or len(types) == 1 else used + size
    return types


def mark(nb: Any, budget: int = PLAN_BUDGET) -> bool:
    """Write :func:`plan`'s types into ``nb``'s cells' ``slideshow.slide_type``; True if any changed."""
    changed = False
    for cell, kind in zip(nb["cells"], plan(nb, budget)):
        show = cell.setdefault("metadata", {}).setdefault("slideshow", {})
        if show.get("slide_type") != kind:
            show["slide_type"] = kind
            changed = True
    return changed


def mark_lessons(lessons: list[Path] | None = None) -> list[Path]:
    """Write the slide types into the lesson files (ids kept, outputs untouched); return those that changed."""
    import nbformat

    from .. import lessons as course_lessons

    changed = []
    for path in lessons or course_lessons.notebooks():
        nb = nbformat.read(path, as_version=4)
        if mark(nb):
            nbformat.write(nb, path)
            changed.append(path)
    return changed


# --------------------------------------------------------------------------- the static decks' finer cut
def speaker_notes(lesson_id: str, guide: Path | None = None) -> str:
    """The lesson's section of the instructor guide (``### NN · Title (N min)`` up to the next heading), or ``""``."""
    path = guide or paths.LESSONS / "instructor-guide.md"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    match = re.search(rf"^### {re.escape(lesson_id)} · .*?$(.*?)(?=^#{{1,3}} |\Z)", text, re.M | re.S)
    return match.group(1).strip() if match else ""


def _chunks(blocks: list[str], budget: int, join: str) -> list[str]:
    """Consecutive ``blocks`` packed into pieces of at most ``budget`` words (a block over it stands alone)."""
    pieces: list[str] = []
    for block in blocks:
        if pieces and words(pieces[-1]) + words(block) <= budget:
            pieces[-1] += join + block
        else:
            pieces.append(block)
    return pieces


def _blocks(section: str, budget: int) -> list[str]:
    """A section's paragraphs (a fenced code block is one), each cut to ``budget`` words: a table by its rows, code
    by its lines (each piece fenced again), prose by its sentences."""
    blocks: list[str] = []
    for part in re.split(r"(^```[^\n]*\n.*?^```[ \t]*$)", section, flags=re.M | re.S):
        if part.startswith("```"):
            fence, *lines = part.splitlines()
            body = lines[:-1]
            blocks += [f"{fence}\n{chunk}\n```" for chunk in _chunks(body, budget - words(fence), "\n")]
            continue
        for paragraph in re.split(r"\n\s*\n", part.strip()):
            if not paragraph.strip():
                continue
            if words(paragraph) <= budget:
                blocks.append(paragraph)
            elif re.search(r"^\|.*\|\s*$", paragraph, re.M):
                head, rows = paragraph.splitlines()[:2], paragraph.splitlines()[2:]
                blocks += ["\n".join(head + chunk.split("\n")) for chunk in
                           _chunks(rows, budget - words("\n".join(head)), "\n")]
            else:
                blocks += _chunks(re.split(r"(?<=[.:;?!])\s+", paragraph), budget, " ")
    return blocks


def split_markdown(text: str, budget: int = CUT_BUDGET) -> list[str]:
    """A Markdown text cut at its headings, then packed by paragraphs (then sentences, table rows, code lines) into
    pieces of at most ``budget`` words."""
    sections = [s for s in re.split(r"\n(?=#{1,3} )", text.strip()) if s.strip()]
    return [piece for section in sections for piece in _chunks(_blocks(section, budget), budget, "\n\n")]


def _code_pieces(source: str, language: str, budget: int) -> list[str]:
    return [f"```{language}\n{piece}\n```" for piece in _chunks(source.splitlines(), budget - 1, "\n")]


def _atoms(cell: Any, budget: int) -> list[Any]:
    """A cell as slide-sized pieces: itself when it fits, else Markdown and code pieces of at most ``budget`` words."""
    import nbformat

    if cell_words(cell) <= budget:
        return [cell]
    if cell["cell_type"] == "markdown":
        return [nbformat.v4.new_markdown_cell(piece) for piece in split_markdown(_source(cell), budget)]
    shown = copy.deepcopy(cell)
    texts = [o for o in shown.get("outputs", []) if output_words(o) and (o.get("output_type") == "stream"
                                                                         or "text/markdown" in o.get("data", {}))]
    shown["outputs"] = [o for o in shown.get("outputs", []) if o not in texts]
    atoms = [shown]
    if words(_source(shown)) > budget or cell_words(shown) > budget:
        language = "c" if "__global__" in _source(cell) else "python"
        atoms = [nbformat.v4.new_markdown_cell(p) for p in _code_pieces(_source(cell), language, budget)]
        rest = copy.deepcopy(shown)
        rest["metadata"].setdefault("tags", []).append("remove_input")
        atoms += [rest] if rest["outputs"] else []
    for output in texts:
        text = (f"```\n{''.join(output['text']).rstrip()}\n```" if output.get("output_type") == "stream"
                else "".join(output["data"]["text/markdown"]))
        atoms += [nbformat.v4.new_markdown_cell(p) for p in split_markdown(text, budget)]
    return atoms


def deck_cells(nb: Any, lesson_id: str, budget: int = CUT_BUDGET, guide: Path | None = None) -> Any:
    """A copy of an executed lesson cut for a static deck: every slide within ``budget`` words, the set-up cell's
    code hidden (its output says the mode once), the instructor guide's section (``guide``: the edition's guide) as
    the title's speaker notes."""
    import nbformat

    deck = copy.deepcopy(nb)
    kinds = [c.get("metadata", {}).get("slideshow", {}).get("slide_type") for c in nb["cells"]]
    kinds = kinds if all(kinds) else plan(nb)
    cells, used = [], 0
    for index, (cell, kind) in enumerate(zip(deck["cells"], kinds)):
        if kind in ("skip", "notes"):
            cells.append(_typed(cell, kind))
            continue
        if cell["cell_type"] == "code" and "zc.start(" in _source(cell):
            cell.setdefault("metadata", {}).setdefault("tags", []).append("remove_input")
        for number, atom in enumerate(_atoms(cell, budget)):
            size = cell_words(atom) if "remove_input" not in _tags(atom) else cell_words(atom) - words(_source(atom))
            size += FIGURE_WORDS * figures(atom)      # words say nothing of a figure's height
            heading = _heading(atom) if number else ""
            new = kind if number == 0 and kind != "-" else heading or ("subslide" if used + size > budget else "-")
            if new == "-" and number == 0 and kind == "-" and used + size > budget:
                new = "subslide"
            used = size if new in ("slide", "subslide") else used + size
            cells.append(_typed(atom, new))
        if index == 0:
            notes = speaker_notes(lesson_id, guide)
            if notes:
                cells.append(_typed(nbformat.v4.new_markdown_cell(notes), "notes"))
    deck["cells"] = cells
    return deck


def _typed(cell: Any, kind: str) -> Any:
    cell.setdefault("metadata", {})["slideshow"] = {"slide_type": kind}
    return cell


def slide_words(html: str) -> list[int]:
    """Words on each slide of a built deck (its innermost ``<section>``s), speaker notes and scripts aside."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    html = re.sub(r'<aside class="notes">.*?</aside>', " ", html, flags=re.S)
    html = re.sub(r'src="data:[^"]*"', "", html)
    html = re.sub(r"</?(?:span|a|code|em|strong|b|i|sub|sup)\b[^>]*>", "", html)   # inline: one word stays one
    counts = []
    for part in re.split(r"<section\b[^>]*>", html)[1:]:
        body = part.split("</section>")[0]
        text = re.sub(r"<[^>]+>", " ", body)
        counts.append(len(_WORD.findall(unescape(text))))
    return counts
