"""The Python strings of the Chinese edition (helpers.i18n): every marked string has a current translation, the
language is chosen once, start-here's checks speak Chinese with the same figures, a fuzzy translation is never shown."""

from __future__ import annotations

import re

import polib
import pytest

import helpers.i18n as i18n
from helpers.exercises import lesson00
from helpers.i18n import catalogs, strings


@pytest.fixture(autouse=True)
def english_afterwards(monkeypatch):
    monkeypatch.delenv("ZC_LANG", raising=False)
    yield
    i18n._chosen = None


def test_every_marked_string_has_a_current_translation():
    left = strings.untranslated()
    assert not left, ("marked strings without a current translation (helpers/locale/zh_CN/LC_MESSAGES/helpers.po, "
                      "after `python -m helpers i18n extract`):\n" + "\n".join(left))


def _fields(text: str) -> set[str]:
    return set(re.findall(r"\{[^{}]*\}", text))


def test_translations_keep_every_field_of_the_english():
    # (a lesson's cells hold code with braces; their one field, {minutes}, is checked by catalogs.status)
    wrong = [e.msgid[:60] for e in catalogs.current(catalogs.read(i18n.STRINGS_CATALOG))
             if _fields(e.msgid) != _fields(e.msgstr)]
    assert not wrong, f"translations that drop or add a {{field}}: {wrong}"


def test_the_language_is_english_until_chosen_and_then_chinese():
    placeholder = lesson00.check_bus_bytes(...)
    assert placeholder.message.startswith("define bus_bytes") and i18n.language() == "en"
    assert i18n.use_language("zh") == "zh_CN"
    chinese = lesson00.check_bus_bytes(...)
    assert chinese.status == "not yet" and re.search(r"[\u4e00-\u9fff]", chinese.message)
    assert chinese._repr_markdown_().startswith("**还没有**。")
    i18n.use_language("en")
    assert lesson00.check_bus_bytes(...).message == placeholder.message


def test_zc_lang_chooses_chinese_for_a_whole_server(monkeypatch):
    monkeypatch.setenv("ZC_LANG", "zh")
    assert i18n.language() == "zh_CN" and i18n.gettext("Correct") == "正确"


def test_an_unknown_language_says_which_there_are():
    with pytest.raises(ValueError, match="'en', 'zh'"):
        i18n.use_language("fr")


def _numbers(text: str) -> list[str]:
    """The figures a message quotes (not the digits of a name such as L2 or float32)."""
    return re.findall(r"(?<![\w.])\d+(?:[.,]\d+)*", text)


def test_start_here_checks_carry_the_same_figures_in_both_languages():
    answers = [lambda a: a["L2_CACHE_SIZE"] / 2**20, lambda a: a["L2_CACHE_SIZE"], lambda a: a["L2_CACHE_SIZE"] / 1e6,
               lambda a: 60, "60"]
    english = [lesson00.check_l2_mib(answer).message for answer in answers]
    i18n.use_language("zh")
    chinese = [lesson00.check_l2_mib(answer).message for answer in answers]
    for en, zh in zip(english, chinese):
        assert en != zh and sorted(_numbers(en)) == sorted(_numbers(zh)), (en, zh)


def test_a_fuzzy_or_obsolete_translation_is_not_shown(tmp_path):
    po = polib.POFile()
    po.append(polib.POEntry(msgid="Correct", msgstr="正确", flags=["fuzzy"]))
    po.append(polib.POEntry(msgid="Hint", msgstr="提示", obsolete=True))
    po.append(polib.POEntry(msgid="Not yet", msgstr="还没有"))
    po.save(str(tmp_path / "helpers.po"))
    assert i18n.translations(tmp_path / "helpers.po") == {"Not yet": "还没有"}


def test_a_changed_string_keeps_its_old_translation_as_fuzzy(tmp_path):
    package = tmp_path / "helpers"
    package.mkdir()
    module = package / "m.py"
    module.write_text('from .i18n import _\nA = _("Pinned memory stays put.")\n', encoding="utf-8")
    catalog = tmp_path / "helpers.po"
    catalog.write_text(strings.extract(catalog, package), encoding="utf-8")
    found = catalogs.read(catalog)
    found[0].msgstr = "锁页内存不会被移动。"
    catalog.write_text(catalogs.render(found, "test"), encoding="utf-8")
    assert strings.untranslated(catalog, package) == []
    module.write_text('from .i18n import _\nA = _("Pinned memory stays put, always.")\n', encoding="utf-8")
    catalog.write_text(strings.extract(catalog, package), encoding="utf-8")
    entry = [e for e in catalogs.read(catalog) if not e.obsolete][0]
    assert entry.fuzzy and entry.previous_msgid == "Pinned memory stays put." and entry.msgstr
    assert strings.untranslated(catalog, package) == ["helpers/m.py: 'Pinned memory stays put, always.'"]


def test_start_here_findings_carry_the_same_figures_in_both_languages():
    import helpers as zc
    from helpers.findings import start_here

    course = zc.session()
    shown = [lambda: start_here.essentials(course.attributes), lambda: start_here.what_you_saw(course),
             lambda: start_here.headline(course), start_here.course_plan]
    english = [str(show()._repr_markdown_()) for show in shown]
    i18n.use_language("zh")
    chinese = [str(show()._repr_markdown_()) for show in shown]
    for en, zh in zip(english, chinese):
        assert en != zh and re.search(r"[\u4e00-\u9fff]{4}", zh)
        assert sorted(_numbers(en)) == sorted(_numbers(zh)), (en[:300], zh[:300])


def _names_in_scope(node):
    """The names a function binds or reads itself: comprehensions, lambdas and nested functions have their own."""
    import ast

    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda,
                              ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(child, ast.Name):
            yield child
        yield from _names_in_scope(child)


def test_no_function_hides_the_translation_function_behind_a_throwaway_name():
    """`record, _ = ...` in a function that also calls `_("...")` makes `_` local to it: the call then raises
    (UnboundLocalError before the assignment, TypeError after). Two such slips were made and caught late."""
    import ast
    from pathlib import Path

    found = []
    for path in sorted(Path(i18n.__file__).parents[1].rglob("*.py")):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            binds = any(n.id == "_" and isinstance(n.ctx, ast.Store) for n in _names_in_scope(function))
            calls = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "_"
                        for n in ast.walk(function))
            if binds and calls:
                found.append(f"{path.name}:{function.lineno} {function.name}")
    assert not found, found
