"""The printed solutions in Chinese (helpers.i18n.solutions): every solution in lessons/solutions/ has a current
translation of its comments and docstring, its code unchanged; with Chinese chosen zc.exercises.solution prints it,
in English the English; a changed solution turns stale and prints in English until it is translated again."""

from __future__ import annotations

import pytest

from helpers import exercises, i18n, paths
from helpers.i18n import catalogs, code, solutions

SOLUTION = '''# Solutions to lesson 00's exercises.

# exercise: twice
def twice(x):
    """Twice x."""
    return 2 * x   # one line
'''


@pytest.fixture
def chinese():
    before = i18n.language()
    i18n.use_language("zh")
    yield
    i18n.use_language(before)


def test_every_solution_has_a_current_translation_that_keeps_its_code():
    state = solutions.status()
    assert state.current and state.complete, (f"{state.words()}: translate them in "
                                              f"{solutions.CATALOG.relative_to(paths.ROOT)}, then "
                                              "`python -m helpers sync`")
    for entry in catalogs.current(catalogs.read(solutions.CATALOG)):
        assert code.skeleton(entry.msgstr) == code.skeleton(entry.msgid), entry.msgctxt


def test_in_chinese_a_solution_prints_with_chinese_comments_and_the_same_code(chinese):
    shown = exercises.solution("00", "bus_bytes")
    assert any("\u4e00" <= ch <= "\u9fff" for ch in shown), "no Chinese in the printed solution"
    i18n.use_language("en")
    english = exercises.solution("00", "bus_bytes")
    assert english != shown and "copied in" in english
    assert code.skeleton(shown) == code.skeleton(english)


def _catalog(tmp_path, text):
    folder = tmp_path / "solutions"
    folder.mkdir(exist_ok=True)
    (folder / "lesson00.py").write_text(text, encoding="utf-8")
    path = tmp_path / "solutions.po"
    path.write_text(solutions.catalog_text(folder, path), encoding="utf-8")
    return folder, path


def _translate(path, chinese_text):
    found = catalogs.read(path)
    for entry in found:
        if entry.msgctxt == "00/twice":
            entry.msgstr, entry.flags, entry.previous_msgid = chinese_text, [], None
    found.save(str(path))


def test_a_changed_solution_is_stale_and_prints_in_english(tmp_path, chinese):
    folder, path = _catalog(tmp_path, SOLUTION)
    assert solutions.status(folder, path).untranslated == ["00/twice"]
    english = solutions.sections(SOLUTION)["twice"]
    _translate(path, english.replace("Twice x.", "x 的两倍。").replace("one line", "一行"))
    assert solutions.status(folder, path).complete
    assert "x 的两倍" in solutions.translate("00", "twice", english, path)
    changed = SOLUTION.replace("2 * x", "x + x")
    folder, path = _catalog(tmp_path, changed)
    assert solutions.status(folder, path).stale == ["00/twice"]
    new = solutions.sections(changed)["twice"]
    assert solutions.translate("00", "twice", new, path) == new


def test_a_translation_that_changes_the_code_is_broken_and_not_shown(tmp_path, chinese):
    folder, path = _catalog(tmp_path, SOLUTION)
    english = solutions.sections(SOLUTION)["twice"]
    _translate(path, english.replace("Twice x.", "x 的两倍。").replace("2 * x", "x + x"))
    assert solutions.status(folder, path).broken == ["00/twice"]
    assert solutions.translate("00", "twice", english, path) == english


def test_a_lesson_not_declared_translated_leaves_its_solutions_waiting(tmp_path):
    """A new lesson's solutions are not reported untranslated until the lesson is declared, as its cells are not."""
    folder = tmp_path / "solutions"
    folder.mkdir()
    (folder / "lesson99.py").write_text("# exercise: twice\ndef twice(x):\n    # double it\n    return 2 * x\n")
    path = tmp_path / "solutions.po"
    path.write_text(solutions.catalog_text(folder, path), encoding="utf-8")
    state = solutions.status(folder, path)
    assert state.complete and not state.untranslated
