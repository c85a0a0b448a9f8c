"""One registry knows the lessons (helpers/lessons.py): the files, the README, the notebooks and the guide agree
with it, and helpers name lessons by slug, so a lesson number appears in the code only a few times."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from helpers import experiments, lessons, paths
from helpers.tools import book, lesson_times

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _notebook(entry: lessons.Lesson) -> nbformat.NotebookNode:
    return nbformat.read(entry.notebook(), as_version=4)


def test_the_registry_lists_every_lesson_file_in_order():
    on_disk = sorted(p.stem for p in (ROOT / "lessons").glob("[0-9][0-9]-*.ipynb"))
    assert [entry.name for entry in lessons.LESSONS] == on_disk
    assert list(lessons.ids()) == [f"{n:02d}" for n in range(len(lessons.LESSONS))]
    assert paths.LESSONS == ROOT / "lessons" and paths.ROOT == ROOT


@pytest.mark.parametrize("entry", lessons.LESSONS, ids=lambda e: e.name)
def test_each_notebook_has_the_registry_s_title_and_time(entry):
    nb = _notebook(entry)
    assert book.lesson_title(nb) == f"{entry.id} · {entry.title}"
    assert book.lesson_minutes(nb, entry.name) == entry.minutes, (
        f"{entry.name} announces {book.lesson_minutes(nb, entry.name)} minutes, helpers/lessons.py says {entry.minutes}")
    assert lesson_times.estimate_minutes(entry.notebook()) == entry.minutes, (
        f"the estimate of {entry.name} changed: set its minutes in helpers/lessons.py, the notebook, the README and "
        "the instructor guide to it")


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


def test_the_readme_table_agrees_with_the_registry():
    rows = re.findall(r"^\| \[(\d\d-[\w-]+)\]\(lessons/([\w-]+)\.ipynb\) \| (\d+) min \|", README, re.M)
    assert [(name, minutes) for name, _, minutes in rows] == [(e.name, str(e.minutes)) for e in lessons.LESSONS]
    assert all(name == target for name, target, _ in rows)


def test_the_instructor_guide_agrees_with_the_registry():
    guide = (ROOT / "lessons" / "instructor-guide.md").read_text(encoding="utf-8")
    for entry in lessons.LESSONS:
        heading = re.search(rf"^### {entry.id} · .*\((\d+) min\)$", guide, re.M)
        assert heading and int(heading.group(1)) == entry.minutes, entry.name


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
