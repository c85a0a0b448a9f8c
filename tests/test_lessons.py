"""One registry knows the lessons (helpers/lessons.py): the files agree with it, what repeats it is written from it by
``python -m helpers sync`` and current (each failure names the file, the line and what to write), and helpers name
lessons by slug, so a lesson number appears in the code only a few times."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from helpers import experiments, lessons, paths
from helpers.tools import book, consistency, derived, lesson_times

ROOT = Path(__file__).resolve().parents[1]


def _notebook(entry: lessons.Lesson) -> nbformat.NotebookNode:
    return nbformat.read(entry.notebook(), as_version=4)


def test_the_registry_lists_every_lesson_file_in_order():
    found = consistency.registry_and_notebooks()
    assert not found, consistency.report(found)
    assert paths.LESSONS == ROOT / "lessons" and paths.ROOT == ROOT


def test_every_lesson_brings_its_own_files():
    found = consistency.missing_files()
    assert not found, consistency.report(found)


def test_every_file_derived_from_the_registry_is_current():
    """The registry's minutes are the estimate, and what repeats the registry (each notebook's time, the README's
    tables and course length, the guide's headings and plans, data/README.md's lessons column, the output words) is
    as ``python -m helpers sync`` writes it."""
    found = derived.stale()
    assert not found, consistency.report(found)


def test_the_course_keeps_its_length_promise():
    found = consistency.promise()
    assert not found, consistency.report(found)


def test_a_stale_file_is_named_with_its_line_and_the_command():
    text = derived._with_block("a\n" + derived.begin_marker("x") + "\nold\n" + derived.end_marker("x") + "\nb\n",
                               "F.md", "x", "new")
    assert text.split("\n")[2] == "new" and derived._first_difference("a\nb\nold", "a\nb\nnew") == (3, "new")
    with pytest.raises(ValueError, match="F.md lacks the markers of its y block"):
        derived._with_block("a\n", "F.md", "y", "new")
    problem = consistency.Problem("README.md", 60, "behind helpers/lessons.py: run `python -m helpers sync`")
    assert str(problem).startswith("README.md:60: ")


def test_sync_writes_the_estimate_into_the_registry_source():
    source = (paths.PACKAGE / "lessons.py").read_text(encoding="utf-8")
    coalesce = lessons.lesson("coalesce-and-align-accesses")   # its title holds Chinese: columns count bytes
    written = derived.registry_with_minutes(source, {coalesce.id: 5, "00": 7})
    assert written.count("\n") == source.count("\n")
    assert f'"{coalesce.title}", 5,' in written and '"Start here: find your mode and meet your GPU", 7,' in written


def test_the_plans_cover_the_course_from_the_registry():
    rows = derived.plans()
    assert rows[-1]["ids"].endswith(lessons.last().id) and rows[0]["ids"].startswith(lessons.ids()[0])
    assert all(row["minutes"] > 0 for row in rows)


@pytest.mark.parametrize("entry", lessons.LESSONS, ids=lambda e: e.name)
def test_the_registry_names_the_experiments_a_lesson_runs(entry):
    code = "\n".join(c.source for c in _notebook(entry).cells if c.cell_type == "code")
    called = set(re.findall(r"experiments\.(\w+)\(", code)) | set(re.findall(r"reference\(\"(\w+)\"", code))
    called &= set(experiments.ALL)
    assert called <= set(entry.experiments), f"add {sorted(called - set(entry.experiments))} to {entry.name}"
    assert set(entry.experiments) <= set(experiments.ALL)


@pytest.mark.parametrize("entry", lessons.LESSONS, ids=lambda e: e.name)
def test_the_registry_names_the_kernels_a_lesson_shows(entry):
    code = "\n".join(c.source for c in _notebook(entry).cells if c.cell_type == "code")
    shown = set(re.findall(r"(?:kernels\.\w+|load_kernel)\(\s*\"(\w+)\"", code))
    assert shown <= set(entry.kernels), f"add {sorted(shown - set(entry.kernels))} to {entry.name}"
    assert all((paths.KERNELS / f"{k}.cu").exists() for k in entry.kernels)


def test_a_lesson_is_found_by_id_number_slug_or_file():
    bandwidth = lessons.lesson("measure-bandwidth")
    for key in ("06", "6", 6, "06-measure-bandwidth", "06-measure-bandwidth.ipynb"):
        assert lessons.find(key) is bandwidth
    assert lessons.find("99") is None and lessons.find("measure") is None
    with pytest.raises(LookupError, match="the lessons are 00, 01"):
        lessons.lesson("99")
    assert bandwidth.label == "lesson 06" and lessons.lesson_id("start-here") == "00"


def test_who_derives_from_the_registry():
    from helpers import exercises
    from helpers.experiments import quiet
    from helpers.platform import doctor
    from helpers.tools import classroom, lint, slides

    assert doctor.LESSONS == lessons.ids()
    assert set(doctor.KERNEL_LESSONS) == {e.id for e in lessons.LESSONS if e.kernels}
    assert book.lesson_paths() == lessons.notebooks() == classroom.resolve_lessons(None) == slides.lessons()
    assert lint.lessons() == lessons.notebooks()
    assert list(lesson_times.table()) == [e.name for e in lessons.LESSONS]
    assert set(exercises.LESSONS_WITH_EXERCISES) <= set(lessons.ids())
    assert quiet.lessons("caching") == lessons.showing("caching") == ("08",)


# --------------------------------------------------------------------------- lesson numbers in helpers
_IDS = "|".join(lessons.ids())
_LIST = rf"(?:{_IDS})(?:\s*(?:,|and|to|or|-|–|/)\s*(?:{_IDS})(?![\d.]))*"
LESSON_NUMBER = (
    re.compile(rf"\b[Ll]essons?\s+({_LIST})\b"),                  # lesson 06, lessons 01 to 03
    re.compile(rf"""["']({_IDS})["']"""),                         # "06"
    re.compile(rf"(?<![\w.-])({_IDS})-[a-z]+-[a-z]"),             # 06-measure-bandwidth
)  # not exercises.lesson06: the exercise modules are named by their lesson's number
# The registry holds the numbers.
NOT_COUNTED = (r"helpers/lessons\.py",)
MOST_LESSON_NUMBERS = 30


def lesson_numbers(root: Path = ROOT) -> dict[str, int]:
    """How many lesson numbers each counted helpers file holds."""
    found = {}
    for path in sorted((root / "helpers").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if any(re.fullmatch(pattern, name) for pattern in NOT_COUNTED):
            continue
        text = path.read_text(encoding="utf-8")
        count = sum(len(re.findall(_IDS, m.group(1))) for pattern in LESSON_NUMBER for m in pattern.finditer(text))
        if count:
            found[name] = count
    return found


def test_the_counter_sees_each_form():
    text = 'lesson 06; (lessons 01 to 03, 05 and 11-14); "12"; 09-coalesce-and-align; 32-byte; 2026-12-04'
    assert sum(len(re.findall(_IDS, m.group(1))) for p in LESSON_NUMBER for m in p.finditer(text)) == 8


def test_helpers_name_lessons_by_slug():
    found = lesson_numbers()
    assert sum(found.values()) <= MOST_LESSON_NUMBERS, (
        f"{sum(found.values())} lesson numbers in helpers (at most {MOST_LESSON_NUMBERS}): name a lesson by its slug "
        f"(measure-bandwidth), or take its id from helpers.lessons; by file: {found}")
