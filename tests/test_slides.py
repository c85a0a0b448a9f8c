"""make slides (helpers.tools.slides): the cut into reveal.js slides, and one lesson's deck built offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from helpers.tools import slide_plan, slides

pytest.importorskip("nbconvert", reason="nbconvert (installed with JupyterLab by `make setup`) builds the slides")

ROOT = Path(__file__).resolve().parents[1]


def cell(kind: str, text: str, **metadata) -> dict:
    return {"cell_type": kind, "source": text, "metadata": metadata}


def test_sections_start_slides_and_subheadings_subslides():
    assert slides.slide_type(cell("markdown", "# 06 · Measure bandwidth\nintro")) == "slide"
    assert slides.slide_type(cell("markdown", "\n## 2. The link\ntext")) == "slide"
    assert slides.slide_type(cell("markdown", "### A detail")) == "subslide"
    assert slides.slide_type(cell("markdown", "Plain text, #not a heading")) == "-"
    assert slides.slide_type(cell("code", "## a comment, not a heading")) == "-"


def test_an_instructors_slide_type_or_tag_wins():
    assert slides.slide_type(cell("markdown", "## Section", slideshow={"slide_type": "skip"})) == "skip"
    assert slides.slide_type(cell("code", "x = 1", tags=["exercise", "fragment"])) == "fragment"
    marked = slides.mark({"cells": [cell("markdown", "## S"), cell("code", "x", tags=["notes"])]})
    assert [c["metadata"]["slideshow"]["slide_type"] for c in marked["cells"]] == ["slide", "notes"]


def test_lessons_are_chosen_by_number_or_name():
    assert [p.stem for p in slides.lessons(["6"])] == ["06-measure-bandwidth"]
    assert [p.stem for p in slides.lessons(["00-start-here", "06"])] == ["00-start-here", "06-measure-bandwidth"]
    try:
        slides.lessons(["99"])
    except slides.SlidesError as exc:
        assert "no lesson '99'" in str(exc)
    else:
        raise AssertionError("a missing lesson must be refused")


def test_the_lessons_carry_the_slide_types_for_rise_written_from_one_place():
    """RISE presents a lesson live from its cells' slideshow metadata, which `python -m helpers.tools.slides --mark`
    writes from slide_plan.plan; a lesson edited since says so here."""
    from helpers import lessons

    stale = []
    for entry in lessons.LESSONS:
        nb = nbformat.read(entry.notebook(), as_version=4)
        written = [c.get("metadata", {}).get("slideshow", {}).get("slide_type") for c in nb.cells]
        if written != slide_plan.plan(nb):
            stale.append(entry.name)
    assert not stale, f"run `python -m helpers.tools.slides --mark` (then commit the lessons): {stale}"


def test_the_cut_starts_slides_at_sections_exercises_and_overflow():
    nb = {"cells": [cell("markdown", "# 06 · Title\nintro"), cell("code", "%matplotlib inline\nimport helpers as zc\n"
                                                                             "zc.start()"),
                    cell("markdown", "## 1. A section"), cell("markdown", " ".join(["word"] * 100)),
                    cell("markdown", " ".join(["more"] * 30)), cell("code", "x = 1", tags=["exercise"]),
                    cell("markdown", "### Detail")]}
    assert slide_plan.plan(nb) == ["slide", "subslide", "slide", "-", "subslide", "subslide", "subslide"]


def test_a_figure_or_a_widget_snapshot_gets_a_slide_of_its_own():
    """Issue 33: deck 09's widget slide ran off the bottom: the cut counted its words, not its height. A cell that
    shows a figure (an image, or a frozen widget's <img>) starts a slide, and what follows it starts the next."""
    def shows(data):
        return dict(cell("code", "zc.something()"), outputs=[{"output_type": "display_data", "data": data}])

    for data in ({"image/png": "iVBORw0KGgo="}, {"text/html": '<div class="zc-widget"><img src="data:x"></div>'}):
        nb = {"cells": [cell("markdown", "# 09 · Title"), cell("markdown", "## 1. A section\n\nA few words."),
                        shows(data), cell("markdown", "What the figure shows, in one sentence.")]}
        kinds = [c["metadata"]["slideshow"]["slide_type"] for c in slide_plan.deck_cells(nb, "99")["cells"]]
        assert kinds == ["slide", "slide", "subslide", "subslide"], (data, kinds)
    assert slide_plan.figures(shows({"text/plain": "no figure"})) == 0


def test_a_long_text_is_cut_into_slides_within_the_budget():
    table = "| a | b |\n|---|---|\n" + "\n".join(f"| row {i} | value {i} |" for i in range(60))
    code = "```c\n" + "\n".join(f"int x{i} = {i}; // line {i}" for i in range(60)) + "\n```"
    text = "## A\n\n" + ". ".join(["A sentence of some words here"] * 40) + "\n\n### B\n\n" + table + "\n\n" + code
    pieces = slide_plan.split_markdown(text, 100)
    assert len(pieces) > 4 and all(slide_plan.words(p) <= 100 for p in pieces)
    assert pieces[0].startswith("## A") and any(p.startswith("### B") for p in pieces)
    assert all(p.count("```") % 2 == 0 for p in pieces), "a code block was cut without closing its fence"
    assert all("| a | b |\n|---|---|" in p for p in pieces if "| row" in p), "a table piece lost its header"


def test_speaker_notes_come_from_the_instructor_guide():
    notes = slide_plan.speaker_notes("06")
    assert notes and "Objectives" in notes and "### 07" not in notes
    assert slide_plan.speaker_notes("99") == ""


def test_a_lessons_deck_is_built_offline_as_slides_within_the_word_budget(tmp_path, monkeypatch):
    # the decks serve reveal.js from sphinx-revealjs, in the slides extra (`make slides` installs it and builds every
    # deck; `make test-browser` opens them offline); `make test`'s environment does not carry it
    pytest.importorskip("sphinx_revealjs", reason="the slides extra is not installed: `make slides` builds the decks")
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):  # any web request would fail
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")
    written = slides.build(["00"], tmp_path)
    assert written == [tmp_path / "00-start-here.slides.html"]
    deck = written[0].read_text(encoding="utf-8")
    # reveal.js is served from the build, with its licence; no script or style sheet comes from the network
    for name in slides.REVEAL_FILES:
        assert (tmp_path / slides.REVEAL / name).exists(), name
    assert not re.findall(r'<(?:script|link)[^>]+(?:src|href)="(?:https?:)?//', deck)
    assert f'src="{slides.REVEAL}/dist/reveal.js"' in deck and "Reveal.initialize" in deck
    counts = slide_plan.slide_words(deck)
    assert len([c for c in counts if c]) > 10 and max(counts) <= slide_plan.BUDGET, counts
    notes = re.findall(r'<aside class="notes">(.*?)</aside>', deck, re.S)
    assert notes and "l2_mib" in notes[0], "the title slide has no speaker notes from the instructor guide"
    images = re.findall(r"<img [^>]*>", deck)
    assert images and all('src="data:image/png;base64,' in i for i in images)
    assert all(re.search(r'alt="Diagram [^"]+"', i) for i in images), "a figure has no alt text"
    assert "%matplotlib inline" not in re.sub(r"<[^>]+>", "", deck), "a slide carries the set-up code"
    assert "00-start-here.slides.html" in (tmp_path / "index.html").read_text()
    assert json.loads((ROOT / "lessons" / "00-start-here.ipynb").read_text())["cells"][0].get("outputs") is None


def test_a_decks_formulas_are_mathml_built_offline():
    # no MathJax in the decks (nothing from a CDN): lesson 08's Little's law arrives as MathML (helpers.tools.maths)
    pytest.importorskip("latex2mathml", reason="the slides extra is not installed: `make slides` renders formulas")
    deck = slides.deck(ROOT / "lessons" / "08-keep-enough-bytes-in-flight.ipynb", execute=False)
    assert '<math display="block"' in deck and "<mtext>latency</mtext>" in deck
    text = re.sub(r"<(script|style)\b.*?</\1>", "", deck, flags=re.S)
    assert "$$" not in text and "\\text{" not in text and "mathjax" not in deck.lower()
