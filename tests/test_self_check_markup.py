"""A self-check's question reads as text in JupyterLab (issue 31): Markdown is not rendered inside an HTML
``<summary>``, so code there is ``<code>...</code>`` and emphasis ``<em>...</em>``, never backticks or asterisks."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

LESSONS = sorted((Path(__file__).resolve().parent.parent / "lessons").glob("[0-9][0-9]-*.ipynb"))
SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)
MARKDOWN = re.compile(r"`|(?<![\w*])\*[^*\s]|\*\*")


def markdown_in_summaries(source: str) -> list[str]:
    """The ``<summary>`` texts of a Markdown cell that hold Markdown markup (backticks, ``*emphasis*``)."""
    return [s.strip() for s in SUMMARY.findall(source) if MARKDOWN.search(s)]


def test_the_finder_sees_backticks_and_emphasis_and_passes_html():
    assert markdown_in_summaries("<details><summary>1. With `np.empty`?</summary>") == ["1. With `np.empty`?"]
    assert markdown_in_summaries("<summary>does memory *without* it work?</summary>")
    assert not markdown_in_summaries("<summary>With <code>np.empty</code>, <em>without</em> n * 2?</summary>")
    assert not markdown_in_summaries("<summary>plain</summary> then `code` after it")


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem[:2] for p in LESSONS])
def test_self_check_questions_use_html_not_markdown(path):
    cells = nbformat.read(path, as_version=4).cells
    found = [f"cell {c.get('id')}: {s!r}" for c in cells if c.cell_type == "markdown"
             for s in markdown_in_summaries(c.source)]
    assert not found, f"{path.name}: write <code>...</code> / <em>...</em> inside <summary>: " + "; ".join(found)
