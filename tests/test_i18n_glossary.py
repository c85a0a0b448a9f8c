"""The glossary (lessons/glossary.md) is the Chinese edition's reference for terms: every Chinese lesson uses a
term's glossary form wherever its English twin uses the term, and no other rendering of it (helpers.i18n.glossary)."""

from __future__ import annotations

import nbformat
import pytest

from helpers.i18n import edition, glossary, workflow


def _markdown(path) -> str:
    return "\n\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")


@pytest.mark.parametrize("slug", [e.slug for e in workflow.started()])
def test_each_chinese_lesson_uses_the_glossary_terms(slug):
    entry = next(e for e in workflow.started() if e.slug == slug)
    found = glossary.problems(_markdown(entry.notebook()), _markdown(edition.notebook(entry)))
    assert not found, f"lessons/zh/{entry.name}.ipynb:\n" + "\n".join(found)


@pytest.mark.parametrize("slug", [e.slug for e in edition.declared()])
def test_each_declared_lesson_gives_the_english_term_at_a_terms_first_use(slug):
    entry = next(e for e in edition.declared() if e.slug == slug)
    found = glossary.first_uses(_markdown(entry.notebook()), _markdown(edition.notebook(entry)))
    assert not found, f"lessons/zh/{entry.name}.ipynb (the English term in parentheses, CONTRIBUTING.md):\n" + \
        "\n".join(found)


def test_the_helpers_strings_use_no_other_form_of_a_term():
    """Findings, check messages and figure labels (helpers.po) use the glossary's forms too."""
    import polib

    from helpers import i18n

    found = [f"{other!r} in {e.msgid[:50]!r}: write {form}" for e in polib.pofile(str(i18n.STRINGS_CATALOG))
             if not e.obsolete for form, others in glossary.OTHER_FORMS.items()
             for other in others if other in e.msgstr.replace(form, " ")]
    assert not found, "\n".join(found)


def _other_forms(catalog) -> list[str]:
    """Each translation in ``catalog`` that holds a rendering the glossary names as not the course's."""
    import polib

    return [f"{other!r} in {e.msgctxt or e.msgid[:50]!r}: write {form}" for e in polib.pofile(str(catalog))
            if not e.obsolete for form, others in glossary.OTHER_FORMS.items()
            for other in others if other in e.msgstr.replace(form, " ")]


@pytest.mark.parametrize("name", sorted(p.stem for p in edition.CATALOGS.glob("*.po")))
def test_every_catalog_uses_no_other_form_of_a_term(name):
    """Every lesson's catalog (code comments too), the solutions and the documents (README, instructor guide,
    glossary) use the glossary's forms: the guide once said 有效带宽 for 有用带宽."""
    found = _other_forms(edition.CATALOGS / f"{name}.po")
    assert not found, f"lessons/locale/zh_CN/LC_MESSAGES/{name}.po:\n" + "\n".join(found)


def test_another_form_in_a_catalog_is_caught(tmp_path):
    import polib

    po = polib.POFile()
    po.append(polib.POEntry(msgctxt="09--x/2", msgid="useful bandwidth", msgstr="步长 32 时的有效带宽"))
    po.append(polib.POEntry(msgctxt="09--x/3", msgid="useful bandwidth", msgstr="步长 32 时的有用带宽"))
    po.save(str(tmp_path / "guide.po"))
    assert _other_forms(tmp_path / "guide.po") == ["'有效带宽' in '09--x/2': write 有用带宽"]


def test_a_first_use_without_its_english_is_caught():
    english = "Zero-copy reads mapped memory. The SM runs it; DMA moves it."
    assert glossary.first_uses(english, "零拷贝（zero-copy）读取映射内存（mapped memory）。**SM**（streaming "
                                        "multiprocessor，流式多处理器）；DMA（直接内存访问）。") == []
    found = glossary.first_uses(english, "零拷贝读取映射内存（mapped memory）。零拷贝（zero-copy）。")
    assert len(found) == 1 and found[0].startswith("零拷贝 (zero-copy)")


def test_the_glossary_pairs_terms_one_for_one():
    pairs = {(t.english, t.chinese) for t in glossary.terms()}
    assert {("thread", "线程"), ("block", "线程块"), ("zero-copy", "零拷贝"), ("page-locked memory", "锁页内存"),
            ("L2 cache", "二级缓存"), ("VM", "虚拟机"), ("guest-physical", "客户机物理地址")} <= pairs
    assert not any(t.english == "lowest to highest" for t in glossary.terms()), "an aside is not a term"


def test_a_missing_term_and_another_rendering_are_caught():
    english = "Zero-copy needs page-locked memory; `grid` in code is not prose."
    assert glossary.problems(english, "零拷贝需要锁页内存。") == []
    missing = glossary.problems(english, "零拷贝需要固定的内存。")
    assert missing == ["the English uses 'page-locked memory': the Chinese must say 锁页内存 (lessons/glossary.md)"]
    other = glossary.problems(english, "零复制需要锁页内存。")
    assert any("'零复制' is not the course's term" in line for line in other)
    assert glossary.problems("pageable memory", "可分页内存") == [], "a form inside the right one is not another"
    assert glossary.problems("useful bandwidth", "有用带宽") == [], "bandwidth inside useful bandwidth is that term"
    assert glossary.problems("useful bandwidth and bandwidth", "有用带宽") == [
        "the English uses 'bandwidth': the Chinese must say 带宽 (lessons/glossary.md)"]


def test_a_form_inside_a_longer_term_is_not_that_term():
    english = "Each thread of a warp loads one float."
    assert any("线程 (thread)" in line for line in glossary.first_uses(english, "线程束（warp）中每个线程加载一个 float。"))
    missing = glossary.problems(english, "线程束（warp）加载一个 float。")
    assert missing == ["the English uses 'thread': the Chinese must say 线程 (lessons/glossary.md)"]


def _rows(path) -> list[list[str]]:
    """The cells of each table row of a glossary page, header rows and rules aside."""
    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 4 and cells[0] not in {"term", "术语"} and set(cells[0]) != {"-"}:
            found.append(cells)
    return found


def test_each_term_of_the_chinese_glossary_is_the_english_glossarys_chinese_term():
    """The Chinese glossary (lessons/zh/glossary.md) lists the 中文 column's term first (its asides may read
    differently) and the English term beside it, row for row; a term with no Chinese form keeps its English."""
    english, chinese = _rows(glossary.GLOSSARY), _rows(edition.NOTEBOOKS / "glossary.md")
    assert len(chinese) == len(english) > 60
    for (term, form, _, lesson), (zh_term, zh_english, _, zh_lesson) in zip(english, chinese):
        assert (zh_english, zh_lesson) == (term, lesson), f"{zh_term}: expected the English term {term!r}"
        assert glossary._forms(zh_term) == glossary._forms(form or term), (
            f"{term}: the Chinese glossary says {zh_term!r}, the 中文 column {form!r} (lessons/glossary.md is the "
            "source of the terms; translate the row in lessons/locale/zh_CN/LC_MESSAGES/glossary.po, then sync)")
