"""make slides (helpers.tools.slides): the cut into reveal.js slides, and one lesson's deck built offline."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from helpers.tools import slides

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


def test_a_lessons_deck_is_built_offline_with_its_figures_and_their_alt_text(tmp_path, monkeypatch):
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):  # any web request would fail
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")
    written = slides.build(["00"], tmp_path)
    assert written == [tmp_path / "00-start-here.slides.html"]
    deck = written[0].read_text(encoding="utf-8")
    nb = nbformat.read(ROOT / "lessons" / "00-start-here.ipynb", as_version=4)
    kinds = [slides.slide_type(c) for c in nb.cells]
    assert deck.count("<section") == 2 * kinds.count("slide") + kinds.count("subslide")
    images = re.findall(r"<img [^>]*>", deck)
    assert images and all('src="data:image/png;base64,' in i for i in images)
    assert all(re.search(r'alt="Diagram [^"]+"', i) for i in images), "a figure has no alt text"
    assert "reveal.js" in deck and "Reveal.initialize" in deck
    assert "00-start-here.slides.html" in (tmp_path / "index.html").read_text()
    assert json.loads((ROOT / "lessons" / "00-start-here.ipynb").read_text())["cells"][0].get("outputs") is None
