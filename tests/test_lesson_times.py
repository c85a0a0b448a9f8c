"""Lesson times are computed by one stated estimate (issue 9), which the lessons keep within the course's promise.
That the registry, the notebooks, the README and the guide give the estimate is tests/test_lessons.py's
test_every_file_derived_from_the_registry_is_current (``python -m helpers sync`` writes them)."""

from pathlib import Path

from helpers import lessons
from helpers.tools import lesson_times

README = Path(__file__).resolve().parent.parent / "README.md"


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
    assert lesson_times.estimate_minutes(notebook(0, 0), output_words=1000) == 5   # 1000 words at 200 a minute


def test_the_estimate_counts_tries_predictions_and_not_going_deeper(tmp_path):
    import json

    def code(source, tags=()):
        return {"cell_type": "code", "source": [source], "metadata": {"tags": list(tags)}, "outputs": []}

    cells = [code("answer = ...", ["exercise"]),                                   # 2 tries x 2 min
             code('SOURCE = r"""__global__ void k() {}"""', ["exercise"]),         # 3 tries x 2 min
             code("predicted_ratio = ...  # your guess"),                          # 2 min
             {"cell_type": "markdown", "source": ["## Going deeper"]},
             {"cell_type": "markdown", "source": ["word " * 3000]},
             code("x = 1\n" * 100, ["exercise"])]
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"cells": cells}))
    parts = lesson_times.parts(path, output_words=0)
    assert (parts["tries"], parts["predictions"], parts["prose_words"], parts["exercises"]) == (5, 1, 0, 2)
    assert parts["minutes"] == 3 * 0.25 + 5 * 2 + 2


def test_output_words_come_from_text_outputs_only():
    executed = {"cells": [
        {"cell_type": "code", "source": ["x"], "outputs": [
            {"output_type": "stream", "name": "stdout", "text": ["one two three\n"]},
            {"output_type": "display_data", "data": {"text/markdown": "**four** five", "text/plain": "<Text>"}},
            {"output_type": "display_data", "data": {"image/png": "AAAA", "text/plain": "<Figure size 640x480>"}}]},
        {"cell_type": "markdown", "source": ["## Going deeper"]},
        {"cell_type": "code", "source": ["y"], "outputs": [{"output_type": "stream", "text": ["not counted"]}]}]}
    assert lesson_times.count_output_words(executed) == 5


def test_each_lesson_and_the_course_keep_the_promise_by_the_estimate():
    """helpers/lessons.py states the promise (COURSE_MINUTES, LESSON_MINUTES) and what to do when a lesson does not
    fit; here the estimates themselves are held to it, whatever the registry says."""
    estimates = {stem: estimate for stem, (estimate, _) in lesson_times.table().items()}
    long = {stem: minutes for stem, minutes in estimates.items() if minutes > lessons.LESSON_MINUTES}
    assert not long, (f"over {lessons.LESSON_MINUTES} minutes by the estimate: {long}; trim or split them as "
                      "helpers/lessons.py's comment above COURSE_MINUTES says")
    total = sum(estimates.values())
    assert total <= lessons.COURSE_MINUTES, (
        f"the lessons add up to {total} minutes by the estimate, over helpers/lessons.py's COURSE_MINUTES = "
        f"{lessons.COURSE_MINUTES}: trim or split lessons as the comment above it says")


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


def test_a_lesson_that_reads_frames_counts_the_longer_of_its_two_paths():
    """Issue 31 (fourth walk): lesson 03's outputs were counted as root (frames shown), while the ordinary learner,
    frames hidden, reads more; as root a lesson that reads frames runs again without CAP_SYS_ADMIN, and the longer
    count is kept; not as root, or with neither tool, one count stands."""
    assert lesson_times.longer_path(458, 578) == 578 and lesson_times.longer_path(600, 578) == 600
    assert lesson_times.longer_path(458, None) == 458
    argv = ["python", "-c", "print(1)"]
    both = {"setpriv": "/usr/bin/setpriv", "capsh": "/usr/sbin/capsh"}
    setpriv = lesson_times.unprivileged_command(argv, euid=0, which=both.get)
    assert setpriv == ["setpriv", "--inh-caps=-sys_admin", "--bounding-set=-sys_admin", *argv]
    capsh = lesson_times.unprivileged_command(argv, euid=0, which={"capsh": "/usr/sbin/capsh"}.get)
    assert capsh == ["capsh", "--drop=cap_sys_admin", "--", "-c", "python -c 'print(1)'"]
    assert lesson_times.unprivileged_command(argv, euid=0, which={}.get) is None
    assert lesson_times.unprivileged_command(argv, euid=1000, which=both.get) is None
    assert set(lessons.needing(lessons.PROC)) >= {"01", "02", "03"}
