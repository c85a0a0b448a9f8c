"""make lint (helpers.tools.lint): spelling, links and anchors, notebook metadata; clean on the course, failing on errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.tools import lint

pytest.importorskip("codespell_lib", reason="the test extra's codespell is needed: run `make setup`")

ROOT = Path(__file__).resolve().parents[1]


def test_the_course_passes_its_lint():
    problems = lint.spelling() + lint.links() + lint.notebook_metadata()
    assert problems == [], "make lint finds:\n" + "\n".join(problems)


TYPO, TYPO2 = "t" + "eh", "recie" + "ved"  # spelt out of parts, so that the lint of this file passes


def test_a_misspelling_is_found_in_a_document_and_in_a_lesson_cell(tmp_path):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "README.md").write_text(f"The kernel reads {TYPO} mapped buffer.\n")
    nb = json.loads((ROOT / "lessons" / "00-start-here.ipynb").read_text())
    nb["cells"][0]["source"] = ["# 00 · Start here\n", f"Pinned memory is {TYPO2} by the GPU.\n"]
    (tmp_path / "lessons" / "00-start-here.ipynb").write_text(json.dumps(nb))
    found = lint.spelling(tmp_path)
    assert any(f"README.md:1: {TYPO}" in p for p in found), found
    assert any("lessons/00-start-here.ipynb: cell 1:" in p and TYPO2 in p for p in found), found


def test_cuda_terms_in_the_word_list_are_not_flagged(tmp_path):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "README.md").write_text("PyCUDA's InOut wraps an nd array.\n")
    assert lint.spelling(tmp_path) == []


def test_broken_links_and_anchors_are_found(tmp_path):
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "glossary.md").write_text("# Glossary\n\n## Page-locked memory (锁页内存)\n\n<a id=\"tlb\"></a>\n")
    doc = tmp_path / "README.md"
    doc.write_text("[ok](lessons/glossary.md#page-locked-memory-锁页内存) [ok2](lessons/glossary.md#tlb)\n"
                   "[ok3](#readme) [web](https://example.org/x#y)\n\n# Readme\n\n"
                   "[gone](lessons/missing.md) [bad anchor](lessons/glossary.md#pinned)\n"
                   "[here](#nowhere)\n\n```\n[not a link](in/a/fence.md)\n```\n")
    found = lint.links(tmp_path, [doc])
    assert len(found) == 3, found
    assert "no file lessons/missing.md" in found[0] and "'pinned'" in found[1] and "'nowhere'" in found[2]


def test_links_in_a_lesson_are_checked_relative_to_the_lesson(tmp_path):
    shutil.copytree(ROOT / "lessons", tmp_path / "lessons", ignore=shutil.ignore_patterns("solutions"))
    lesson = tmp_path / "lessons" / "01-pin-host-memory.ipynb"
    nb = json.loads(lesson.read_text())
    nb["cells"].append({"cell_type": "markdown", "id": "zzlint01", "metadata": {},
                        "source": ["See [lesson 99](99-no-such-lesson.ipynb) and [00](00-start-here.ipynb)."]})
    lesson.write_text(json.dumps(nb))
    found = lint.links(tmp_path, [lesson])
    assert len(found) == 1 and "99-no-such-lesson.ipynb" in found[0] and "cell " in found[0], found


def test_bad_notebook_metadata_is_found(tmp_path):
    nb = json.loads((ROOT / "lessons" / "06-measure-bandwidth.ipynb").read_text())
    good = tmp_path / "06-good.ipynb"
    good.write_text(json.dumps(nb))
    assert lint.notebook_metadata(paths=[good]) == []
    nb["metadata"]["kernelspec"]["name"] = "python2"
    del nb["metadata"]["accelerator"]
    nb["cells"][1]["id"] = nb["cells"][0]["id"]
    nb["cells"][2].setdefault("metadata", {})["slideshow"] = {"slide_type": "slidez"}
    bad = tmp_path / "06-bad.ipynb"
    bad.write_text(json.dumps(nb))
    found = "\n".join(lint.notebook_metadata(paths=[bad]))
    for expected in ("kernelspec 'python2'", "Colab GPU request", "cell ids", "slide_type 'slidez'"):
        assert expected in found, found
