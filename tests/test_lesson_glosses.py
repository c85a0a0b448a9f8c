"""The English lessons gloss a term in Chinese with the glossary's one form (lessons/glossary.md), never with another
rendering the literature uses (helpers.i18n.glossary.OTHER_FORMS): issue 31 found 统一虚拟地址 for UVA in lessons 03,
04 and 13 where the glossary and lesson 00 say 统一虚拟寻址."""

from __future__ import annotations

import nbformat
import pytest

from helpers import lessons
from helpers.i18n import glossary


def other_forms(markdown: str) -> list[str]:
    """The renderings in ``markdown`` that the glossary names as not the course's, with the form to write."""
    found = []
    for form, others in glossary.OTHER_FORMS.items():
        rest = glossary.prose(markdown).replace(form, " ")
        found += [f"{other} (write {form})" for other in others if other in rest]
    return found


@pytest.mark.parametrize("entry", lessons.LESSONS, ids=lambda e: e.name)
def test_each_english_lesson_glosses_with_the_glossary_form(entry):
    cells = nbformat.read(entry.notebook(), as_version=4).cells
    markdown = "\n\n".join(c.source for c in cells if c.cell_type == "markdown")
    assert not other_forms(markdown), f"lessons/{entry.name}.ipynb: {other_forms(markdown)}"


def test_another_rendering_is_found_and_the_glossary_form_is_not():
    assert other_forms("unified virtual addressing (UVA, 统一虚拟地址)") == ["统一虚拟地址 (write 统一虚拟寻址)"]
    assert other_forms("unified virtual addressing (UVA, 统一虚拟寻址)") == []
