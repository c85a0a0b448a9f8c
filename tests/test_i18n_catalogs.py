"""The Chinese edition's lesson catalogs (helpers.i18n): a declared lesson's every Markdown cell has a current
translation, the built notebooks follow their catalogs, lessons not yet translated are reported (skipped, with their
state), and the merge marks a changed English cell stale, a new one untranslated, a removed one obsolete."""

from __future__ import annotations

import nbformat
import pytest

from helpers import lessons, paths
from helpers.i18n import catalogs, edition, notebooks, workflow


@pytest.mark.parametrize("slug", edition.TRANSLATED)
def test_a_declared_lesson_has_a_current_translation_of_every_cell(slug):
    entry = lessons.lesson(slug)
    state = catalogs.status(entry, edition.catalog(entry))
    assert state.complete, (f"{state.words()}: translate them in {edition.catalog(entry).relative_to(paths.ROOT)} "
                            "(CONTRIBUTING.md, The Chinese edition), then `python -m helpers sync`")


@pytest.mark.parametrize("slug", [e.slug for e in edition.undeclared()])
def test_a_lesson_not_declared_is_reported_not_passed(slug):
    entry = lessons.lesson(slug)
    if not edition.catalog(entry).exists():
        pytest.skip(f"{entry.name}: no Chinese edition yet (`python -m helpers i18n extract {entry.id}` starts it)")
    pytest.skip(f"{entry.name}: translation started, not declared: "
                f"{catalogs.status(entry, edition.catalog(entry)).words()}")


def test_the_chinese_notebooks_are_built_from_the_catalogs_as_they_are():
    behind = [path.relative_to(paths.ROOT).as_posix() for path, text in workflow.built().items()
              if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not behind, f"behind their catalogs: {behind}; run `python -m helpers sync`"


def test_no_chinese_notebook_lacks_its_lesson_and_catalog():
    started = {edition.notebook(e).name for e in workflow.started()}
    extra = sorted(p.name for p in edition.NOTEBOOKS.glob("*.ipynb") if p.name not in started)
    assert not extra, f"lessons/zh/ holds notebooks of no started lesson: {extra}"


def test_the_catalogs_are_in_step_with_the_english_cells():
    behind = [path.relative_to(paths.ROOT).as_posix() for path, text in workflow.expected().items()
              if not path.exists() or path.read_text(encoding="utf-8") != text]
    assert not behind, f"behind the English lessons: {behind}; run `python -m helpers sync`"


# --------------------------------------------------------------------------- the merge, on a lesson of its own
def _lesson(tmp_path, monkeypatch, cells):
    """A one-lesson course in tmp_path: lessons/00-start-here.ipynb with these (id, type, source) cells."""
    folder = tmp_path / "lessons"
    folder.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [(nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(source, id=cid)
                for cid, kind, source in cells]
    nbformat.write(nb, folder / "00-start-here.ipynb")
    monkeypatch.setattr(paths, "LESSONS", folder)
    monkeypatch.setattr(edition, "CATALOGS", folder / "locale" / "zh_CN" / "LC_MESSAGES")
    monkeypatch.setattr(edition, "NOTEBOOKS", folder / "zh")
    monkeypatch.setattr(edition, "TRANSLATED", ("start-here",))
    return lessons.lesson("start-here")


def _translate(entry, chinese):
    """Fill the catalog's msgstr by cell id, as a translator does."""
    path = edition.catalog(entry)
    found = catalogs.read(path)
    for entry_ in found:
        if entry_.msgctxt in chinese:
            entry_.msgstr, entry_.flags, entry_.previous_msgid = chinese[entry_.msgctxt], [], None
    path.write_text(catalogs.render(found, "test"), encoding="utf-8")


def _extract(entry):
    path = edition.catalog(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(workflow.catalog_text(entry), encoding="utf-8")


CELLS = [("t", "markdown", "# 00 · Start\n\n**Time to complete:** 30 minutes."),
         ("c", "code", "%matplotlib inline\nimport helpers as zc\nzc.start()"),
         ("a", "markdown", "Zero-copy skips the copies ([glossary](glossary.md), [next](01-pin-host-memory.ipynb))."),
         ("b", "markdown", "Pinned memory stays put.")]
CHINESE = {"t": "# 00 · 开始\n\n**完成时间：** {minutes} 分钟。",
           "a": "零拷贝省掉了拷贝（[术语表](glossary.md)，[下一课](01-pin-host-memory.ipynb)）。",
           "b": "锁页内存不会被移动。"}


def test_a_translated_lesson_builds_in_chinese_with_its_code_and_links_intact(tmp_path, monkeypatch):
    entry = _lesson(tmp_path, monkeypatch, CELLS)
    _extract(entry)
    assert catalogs.status(entry, edition.catalog(entry)).untranslated == ["t", "a", "b"]
    _translate(entry, CHINESE)
    assert catalogs.status(entry, edition.catalog(entry)).complete
    cells = nbformat.reads(notebooks.build(entry), as_version=4).cells
    assert cells[0].source == "# 00 · 开始\n\n**完成时间：** 30 分钟。"
    assert cells[1].source.splitlines()[-1] == 'zc.start(language="zh")'
    assert "(../glossary.md)" in cells[2].source and "(../01-pin-host-memory.ipynb)" in cells[2].source, \
        "a link to a lesson not started points to the English one"
    assert [c.id for c in cells] == ["t", "c", "a", "b"]


def test_a_changed_english_cell_is_stale_and_shows_in_english(tmp_path, monkeypatch):
    entry = _lesson(tmp_path, monkeypatch, CELLS)
    _extract(entry)
    _translate(entry, CHINESE)
    changed = [*CELLS[:3], ("b", "markdown", "Pinned memory stays put, unless it is unpinned.")]
    _lesson(tmp_path / "again", monkeypatch, changed)
    edition_catalog = edition.catalog(entry)
    edition_catalog.parent.mkdir(parents=True)
    edition_catalog.write_text((tmp_path / "lessons/locale/zh_CN/LC_MESSAGES/00-start-here.po").read_text("utf-8"),
                               encoding="utf-8")
    state = catalogs.status(entry, edition_catalog)
    assert state.stale == ["b"] and not state.complete
    assert nbformat.reads(notebooks.build(entry), as_version=4).cells[3].source == changed[3][2]
    _extract(entry)
    message = {e.msgctxt: e for e in catalogs.read(edition_catalog) if e.msgid}["b"]
    assert message.fuzzy and message.previous_msgid == "Pinned memory stays put." and message.msgstr == CHINESE["b"]
    assert catalogs.status(entry, edition_catalog).stale == ["b"]


def test_new_removed_and_moved_cells(tmp_path, monkeypatch):
    entry = _lesson(tmp_path, monkeypatch, CELLS)
    _extract(entry)
    _translate(entry, CHINESE)
    moved = [CELLS[0], CELLS[1], ("new", "markdown", "A new paragraph."), ("b2", "markdown", CELLS[3][2])]
    old = catalogs.read(edition.catalog(entry))
    merged = catalogs.extract([(cid, src) for cid, kind, src in moved if kind == "markdown"], old)
    by_id = {e.msgctxt: e for e in merged if e.msgid and not e.obsolete}
    assert by_id["new"].msgstr == "" and by_id["b2"].msgstr == CHINESE["b"] and not by_id["b2"].fuzzy
    assert {e.msgctxt for e in merged.obsolete_entries()} == {"a", "b"}


def test_a_new_time_estimate_does_not_make_the_first_cell_stale(tmp_path, monkeypatch):
    entry = _lesson(tmp_path, monkeypatch, CELLS)
    _extract(entry)
    _translate(entry, CHINESE)
    catalog_text = edition.catalog(entry).read_text(encoding="utf-8")
    entry = _lesson(tmp_path / "later", monkeypatch, [("t", "markdown", CELLS[0][2].replace("30", "35")), *CELLS[1:]])
    edition.catalog(entry).parent.mkdir(parents=True)
    edition.catalog(entry).write_text(catalog_text, encoding="utf-8")
    assert catalogs.status(entry, edition.catalog(entry)).complete
    assert "**完成时间：** 35 分钟。" in nbformat.reads(notebooks.build(entry), as_version=4).cells[0].source


def test_a_translation_that_drops_the_minutes_is_reported(tmp_path, monkeypatch):
    entry = _lesson(tmp_path, monkeypatch, CELLS)
    _extract(entry)
    _translate(entry, {**CHINESE, "t": "# 00 · 开始\n\n**完成时间：** 30 分钟。"})
    assert catalogs.status(entry, edition.catalog(entry)).broken == ["t"]


def test_the_status_command_names_each_lesson_and_passes_while_the_declared_are_current(capsys):
    from helpers.__main__ import main

    assert main(["i18n", "status"]) == 0
    shown = capsys.readouterr().out
    assert all(entry.name in shown for entry in lessons.LESSONS) and "[declared] 00-start-here" in shown


def test_an_exercise_translation_may_change_comments_and_docstrings_only():
    from helpers.i18n.code import skeleton

    english = 'def f(x):\n    """Twice x."""\n    return ...   # replace ... (one line)\nK = r"""\n{ // TODO\n}\n"""'
    chinese = 'def f(x):\n    """x 的两倍。"""\n    return ...   # 替换 ...（一行）\nK = r"""\n{ // 待完成\n}\n"""'
    assert skeleton(english) == skeleton(chinese) and catalogs.fits(english, chinese, code=True)
    assert not catalogs.fits(english, chinese.replace("return ...", "return 2 * x"), code=True)
    assert not catalogs.fits(english, chinese.replace("{ //", "{ y = 1; //"), code=True)
    joined = chinese.replace('(x):\n    """', '(x): """')    # the docstring moved onto the def line
    assert not catalogs.fits(english, joined, code=True), "lines and blocks are code too"


def test_an_exercise_cell_whose_code_a_translation_changed_stays_english(tmp_path, monkeypatch):
    english = "def f(x):\n    return ...   # replace ... (one line)"
    entry = _lesson(tmp_path, monkeypatch, [*CELLS, ("x", "code", english)])
    nb = nbformat.read(entry.notebook(), as_version=4)
    nb.cells[-1].metadata["tags"] = ["exercise"]
    nbformat.write(nb, entry.notebook())
    _extract(entry)
    _translate(entry, {**CHINESE, "x": "def f(x):\n    return 2 * x   # 替换 ...（一行）"})
    assert catalogs.status(entry, edition.catalog(entry)).broken == ["x"]
    assert nbformat.reads(notebooks.build(entry), as_version=4).cells[-1].source == english
    _translate(entry, {"x": "def f(x):\n    return ...   # 替换 ...（一行）"})
    assert catalogs.status(entry, edition.catalog(entry)).complete
    assert "替换" in nbformat.reads(notebooks.build(entry), as_version=4).cells[-1].source


def test_every_code_cell_with_a_comment_or_docstring_is_in_the_catalog_and_its_code_is_kept():
    from helpers.i18n.code import has_comments, skeleton

    assert has_comments("x = 1   # one") and has_comments('def f():\n    """Doc."""\n    return 1')
    assert has_comments('K = r"""\n{ /* a */ }\n"""') and not has_comments("x = n // 2\nurl = 'https://a.b'")
    assert not has_comments('labels = {"x": "bytes"}'), "a dict's value is code, not a docstring"
    assert skeleton('labels = {"x": "bytes"}') != skeleton('labels = {"x": "字节"}')


def test_a_translated_first_cell_still_starts_the_session_in_chinese(tmp_path, monkeypatch):
    first = "import helpers as zc   # the course's helpers\nzc.start()"
    entry = _lesson(tmp_path, monkeypatch, [*CELLS, ("s", "code", first)])
    _extract(entry)
    assert "s" in catalogs.code_ids(entry.notebook())
    _translate(entry, {**CHINESE, "s": "import helpers as zc   # 课程的辅助包\nzc.start()"})
    cell = nbformat.reads(notebooks.build(entry), as_version=4).cells[-1]
    assert cell.source == 'import helpers as zc   # 课程的辅助包\nzc.start(language="zh")'
