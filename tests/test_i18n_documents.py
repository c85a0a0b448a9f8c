"""The Chinese README start section and instructor guide (helpers.i18n.documents, issue 35): each document's catalog is
complete where it is declared and current everywhere, a changed English block turns stale, the twins link to each
other, and the Chinese book and slides hold the translated lessons with a link from every page to its twin
(helpers.tools.book, helpers.tools.slides)."""

from __future__ import annotations

import re

import pytest

from helpers import paths
from helpers.i18n import catalogs, documents, edition
from helpers.tools import book, slides


@pytest.mark.parametrize("doc", documents.DOCUMENTS, ids=lambda d: d.name)
def test_a_documents_translation_is_current_and_complete_outside_its_pending_sections(doc):
    state = documents.status(doc)
    assert state.complete, (f"{state.words()}: translate them in {doc.catalog().relative_to(paths.ROOT)} "
                            "(CONTRIBUTING.md, The Chinese edition), then `python -m helpers sync`")


def test_every_heading_of_the_guide_is_required_even_where_its_section_is_pending():
    headings = [key for key, block in documents.keyed(documents._english(documents.GUIDE)) if key.endswith("/0")]
    every = tuple(key.split("/", 1)[0] for key in headings)        # as if every section were still pending
    assert headings and all(documents._in(every, key) for key in headings)
    assert not documents._in(every, "rehearse-a-simulated-classroom/1")


def test_the_readme_and_the_guide_link_to_their_chinese_twins_and_back():
    for doc in documents.DOCUMENTS:
        english = doc.source.read_text(encoding="utf-8")
        assert doc.twin in english.split("\n## ", 1)[0], f"{doc.source.name} lacks {doc.twin!r} under its title"
        chinese = doc.target.read_text(encoding="utf-8")
        assert doc.back() in chinese.split("\n## ", 1)[0]
        assert (doc.target.parent / re.search(r"\]\(([^)]+)\)", doc.back()).group(1)).resolve() == doc.source
        assert (doc.source.parent / re.search(r"\]\(([^)]+)\)", doc.twin).group(1)).resolve() == doc.target


def test_the_chinese_readme_says_how_to_open_the_chinese_lessons():
    text = documents.README.target.read_text(encoding="utf-8")
    assert "make lab ZC_LANG=zh" in text and "中文" in text and "## 从这里开始" in text


def _tmp_document(tmp_path, monkeypatch, text):
    monkeypatch.setattr(edition, "CATALOGS", tmp_path / "locale")
    source = tmp_path / "guide.md"
    source.write_text(text, encoding="utf-8")
    return documents.Document("guide", source, tmp_path / "zh" / "guide.md")


def test_a_changed_english_paragraph_turns_stale_and_shows_in_english(tmp_path, monkeypatch):
    doc = _tmp_document(tmp_path, monkeypatch, "# Guide\n\nFirst paragraph.\n\n## Part\n\nSecond paragraph.\n")
    doc.catalog().parent.mkdir(parents=True)
    doc.catalog().write_text(documents.catalog_text(doc), encoding="utf-8")
    assert documents.status(doc).untranslated == ["guide/0", "guide/1", "part/0", "part/1"]
    found = catalogs.read(doc.catalog())
    for entry, chinese in zip(found, ["# 指南", "第一段。", "## 部分", "第二段。"]):
        entry.msgstr = chinese
    doc.catalog().write_text(catalogs.render(found, "test"), encoding="utf-8")
    assert documents.status(doc).complete and documents.build(doc) == "# 指南\n\n第一段。\n\n## 部分\n\n第二段。\n"

    doc.source.write_text("# Guide\n\nFirst paragraph, changed.\n\n## Part\n\nSecond paragraph.\n", encoding="utf-8")
    doc.catalog().write_text(documents.catalog_text(doc), encoding="utf-8")
    state = documents.status(doc)
    assert state.stale == ["guide/1"] and not state.complete
    assert "First paragraph, changed." in documents.build(doc) and "第二段。" in documents.build(doc)


def test_a_guide_section_of_an_undeclared_lesson_is_pending_and_of_a_declared_one_required(tmp_path, monkeypatch):
    doc = _tmp_document(tmp_path, monkeypatch, "# Guide\n\n### 00 · Start here (30 min)\n\nText.\n\n"
                        "### 15 · Go beyond (35 min)\n\nMore.\n")
    doc = documents.Document(doc.name, doc.source, doc.target, lesson_sections=True)
    monkeypatch.setattr(edition, "TRANSLATED", tuple(s for s in edition.TRANSLATED
                                                     if s != "take-zero-copy-beyond-one-pcie-gpu"))
    assert documents.undeclared_sections(doc) == ("15--go-beyond",)
    state = documents.status(doc)
    assert state.untranslated == ["guide/0", "00--start-here/0", "00--start-here/1"] and not state.complete
    assert documents.untranslated(doc)[-2:] == ["15--go-beyond/0", "15--go-beyond/1"]
    doc.catalog().parent.mkdir(parents=True)
    found = catalogs.extract(documents._entries(doc), [])
    for entry, chinese in zip(found, ["# 指南", "### 00 · 从这里开始（{minutes} 分钟）", "正文。"]):
        entry.msgstr = chinese
    doc.catalog().write_text(catalogs.render(found, "test"), encoding="utf-8")
    assert documents.status(doc).complete, documents.status(doc).words()
    monkeypatch.setattr(edition, "TRANSLATED", (*edition.TRANSLATED, "take-zero-copy-beyond-one-pcie-gpu"))
    state = documents.status(doc)
    assert state.untranslated == ["15--go-beyond/0", "15--go-beyond/1"] and not state.complete


def test_a_glossary_row_is_its_own_entry_keyed_by_its_term(tmp_path, monkeypatch):
    table = "| term | 中文 | what | lesson |\n|---|---|---|---|\n| page | 页 | A unit. | 01 |\n| warp | 线程束 | 32. | 08 |"
    doc = _tmp_document(tmp_path, monkeypatch, f"# Terms\n\n## Memory\n\n{table}\n\nAfter.\n")
    doc = documents.Document(doc.name, doc.source, doc.target, rows=True)
    keys = [key for key, _ in documents._entries(doc)]
    assert keys == ["terms/0", "memory/0", "memory/1", "memory/page", "memory/warp", "memory/2"]
    doc.catalog().parent.mkdir(parents=True)
    found = catalogs.extract(documents._entries(doc), [])
    for entry, chinese in zip(found, ["# 术语", "## 内存", "| 术语 | 英文 | 含义 | 课 |\n|---|---|---|---|",
                                      "| 页 | page | 单位。 | 01 |", "| 线程束 | warp | 32 个。 | 08 |", "之后。"]):
        entry.msgstr = chinese
    doc.catalog().write_text(catalogs.render(found, "test"), encoding="utf-8")
    assert documents.build(doc) == ("# 术语\n\n## 内存\n\n| 术语 | 英文 | 含义 | 课 |\n|---|---|---|---|\n"
                                    "| 页 | page | 单位。 | 01 |\n| 线程束 | warp | 32 个。 | 08 |\n\n之后。\n")
    doc.source.write_text(doc.source.read_text(encoding="utf-8").replace(
        "| warp |", "| TLB | 快表 | A cache. | 03 |\n| warp |").replace("A unit.", "The unit."), encoding="utf-8")
    doc.catalog().write_text(documents.catalog_text(doc), encoding="utf-8")
    state = documents.status(doc)
    assert state.untranslated == ["memory/tlb"] and state.stale == ["memory/page"], state.words()
    rows = "| page | 页 | The unit. | 01 |\n| TLB | 快表 | A cache. | 03 |\n| 线程束 | warp | 32 个。 | 08 |\n\n之后。"
    assert rows in documents.build(doc), "a stale or new row shows in English, in its place in the table"


def test_a_lesson_headings_minutes_stay_out_of_the_catalog(tmp_path, monkeypatch):
    doc = _tmp_document(tmp_path, monkeypatch, "# Guide\n\n### 06 · Measure bandwidth (35 min)\n\nText.\n")
    assert ("06--measure-bandwidth/0", "### 06 · Measure bandwidth ({minutes} min)") in documents.keyed(
        doc.source.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- the book and the slides of both editions
def test_the_chinese_site_holds_the_translated_lessons_and_every_page_names_its_twin():
    notebooks, pages, twin = book._edition("zh", None)
    names = {p.name for p in notebooks}
    assert {edition.notebook(e).name for e in edition.declared()} <= names
    assert documents.GUIDE.target in pages and documents.GLOSSARY.target in pages
    assert paths.LESSONS / "glossary.md" not in pages, "the Chinese site shows the Chinese glossary"
    for path in [*notebooks, documents.GUIDE.target, documents.GLOSSARY.target]:
        assert twin(path) == f"../../lessons/{path.stem}.html", path.name
    english, english_pages, english_twin = book._edition("en", None)
    for path in english:
        assert (english_twin(path) is not None) == (path.name in names), path.name
    assert english_twin(documents.GUIDE.source) == "../zh/lessons/instructor-guide.html"
    assert english_twin(documents.GLOSSARY.source) == "../zh/lessons/glossary.html"
    assert 'href="../zh/lessons/x.html"' in book.page_note("../zh/lessons/x.html") and "中文" in book.page_note("x")
    assert "English" in book.page_note("../../lessons/x.html", "English")


def test_the_site_front_pages_link_to_each_other():
    chinese = book._index_zh([(p.stem, "t", 30) for p in book._edition("zh", None)[0]])
    assert 'href="../index.html"' in chinese and "make lab ZC_LANG=zh" in chinese
    assert 'href="zh/index.html"' in book._index([])


def test_the_slides_of_both_editions_link_their_twins():
    chosen, guide, twin = slides._edition(None, "zh")
    assert guide == documents.GUIDE.target and chosen
    assert all(twin(p) == f"../{p.stem}.slides.html" for p in chosen)
    english, _, english_twin = slides._edition(None, "en")
    assert {p.stem for p in english if english_twin(p)} == {p.stem for p in chosen}
    assert "中文" in slides.twin_link("zh/x.slides.html") and "English" in slides.twin_link("../x.slides.html")


BUILT = paths.BUILD / "book"


@pytest.mark.skipif(not (BUILT / "zh" / "index.html").exists(), reason="no built book: `make book` builds both "
                    "editions into build/book/ and build/book/zh/")
def test_in_the_built_site_every_page_with_a_twin_links_to_it():
    chinese = {p.stem for p in (BUILT / "zh" / "lessons").glob("*.html")}
    assert {edition.notebook(e).stem for e in edition.declared()} | {"instructor-guide", "glossary"} <= chinese
    for page in (BUILT / "lessons").glob("*.html"):
        if page.stem in chinese:
            assert f'href="../zh/lessons/{page.stem}.html"' in page.read_text(encoding="utf-8"), page.name
    for stem in chinese:
        text = (BUILT / "zh" / "lessons" / f"{stem}.html").read_text(encoding="utf-8")
        assert f'href="../../lessons/{stem}.html"' in text, stem


def test_each_edition_of_the_book_declares_its_language():
    """Sphinx writes ``language`` into every page's <html lang>: zh-CN for the Chinese site, so browsers and screen
    readers choose Chinese fonts and voices; en for the English one."""
    from helpers.tools import book

    assert "language: zh_CN" in book._config("t", "zh")
    assert "language: en" in book._config("t")


@pytest.mark.skipif(not (BUILT / "zh" / "index.html").exists(), reason="no built book: `make book` builds both "
                    "editions into build/book/ and build/book/zh/")
def test_the_built_chinese_pages_say_they_are_chinese():
    for page in [BUILT / "zh" / "index.html", *(BUILT / "zh" / "lessons").glob("*.html")]:
        assert '<html lang="zh-CN"' in page.read_text(encoding="utf-8"), page.name
    assert '<html lang="en"' in (BUILT / "index.html").read_text(encoding="utf-8")
