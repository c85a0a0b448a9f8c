"""Lesson times are computed by one stated estimate, and the lessons and README announce them (issue 9)."""

import re
from pathlib import Path

from helpers.tools import lesson_times

README = Path(__file__).resolve().parent.parent / "README.md"


def test_every_lesson_announces_the_estimated_time():
    wrong = {stem: times for stem, times in lesson_times.table().items() if times[0] != times[1]}
    assert not wrong, ("(estimate, announced) minutes disagree; set each lesson's '**Time to complete:** N minutes' "
                       f"to the estimate: {wrong}")


def test_the_readme_table_gives_the_same_times():
    text = README.read_text()
    for stem, (estimate, _) in lesson_times.table().items():
        row = re.search(rf"\[{re.escape(stem)}\]\([^)]*\)\s*\|\s*(\d+) min", text)
        assert row and int(row.group(1)) == estimate, f"README's row for {stem} should say {estimate} min"


def test_the_estimate_grows_with_prose_and_code(tmp_path):
    import json

    def notebook(words, lines):
        cells = [{"cell_type": "markdown", "source": ["word " * words]},
                 {"cell_type": "code", "source": ["x = 1\n" * lines]}]
        path = tmp_path / f"n{words}-{lines}.ipynb"
        path.write_text(json.dumps({"cells": cells}))
        return path

    assert lesson_times.estimate_minutes(notebook(0, 0)) == 0
    assert lesson_times.estimate_minutes(notebook(1500, 0)) == 10   # 1500 words at 150 words a minute
    assert lesson_times.estimate_minutes(notebook(0, 41)) == 15     # 10.25 minutes, rounded up to 5


def test_no_lesson_is_longer_than_45_minutes():
    long = {stem: times[0] for stem, times in lesson_times.table().items() if times[0] > 45}
    assert not long, f"split or trim these lessons to at most 45 minutes (issue 9): {long}"


def test_measured_time_comes_from_the_saved_cell_timings(tmp_path):
    import json

    def cell(start, end):
        return {"cell_type": "code", "source": ["x = 1"], "metadata": {"execution": {
            "iopub.execute_input": f"2026-12-03T10:{start}Z", "shell.execute_reply": f"2026-12-03T10:{end}Z"}}}

    path = tmp_path / "06-x.ipynb"
    # 10:00 to 10:12 working, a 30-minute break, then 10:42 to 10:50: 20 minutes, the break left out
    path.write_text(json.dumps({"cells": [cell("00:00", "00:05"), cell("12:00", "12:01"), cell("42:00", "50:00")]}))
    assert lesson_times.measured_minutes(path) == 20.0
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": ["x"], "metadata": {}}]}))
    assert lesson_times.measured_minutes(path) is None


def test_make_lab_records_cell_timings():
    overrides = Path(__file__).resolve().parent.parent / ".ci" / "lab-overrides.json"
    import json

    assert json.loads(overrides.read_text())["@jupyterlab/notebook-extension:tracker"]["recordTiming"] is True
    assert "lab-overrides.json" in (README.parent / "Makefile").read_text()


def test_the_instructor_guide_gives_the_same_times():
    guide = (README.parent / "lessons" / "instructor-guide.md").read_text()
    for stem, (estimate, _) in lesson_times.table().items():
        heading = re.search(rf"^### {stem[:2]} · .*\((\d+) min\)$", guide, re.M)
        assert heading and int(heading.group(1)) == estimate, f"the guide's heading for {stem} should say {estimate} min"
