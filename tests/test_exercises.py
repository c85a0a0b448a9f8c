"""Every exercise check works (issue 10): it passes with its solution, says "not yet" on the notebook's own
placeholder, and gives the specific hint for a typical wrong answer.

The placeholders are read from the notebooks' cells tagged ``exercise`` and the solutions from
lessons/solutions/, so a notebook and its check cannot drift apart unnoticed. Runs in replay mode
(the CPU backend); live, the same checks run on the GPU.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from helpers import exercises
from helpers.cpu import driver as cpu_driver

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "lessons"
CHECK_CALL = re.compile(r'exercises\.check\("(\d\d)",\s*"(\w+)",\s*(\w+)')


def _namespace(lesson: str) -> dict:
    return exercises.namespace(lesson)


def _exercise_cells() -> list[tuple[str, str, str, str, str]]:
    """(notebook, lesson, name, variable, placeholder source) of every exercise cell and its check."""
    found = []
    for path in sorted(LESSONS.glob("[0-9][0-9]-*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        for i, cell in enumerate(cells):
            if "exercise" not in cell.get("metadata", {}).get("tags", []):
                continue
            assert i + 1 < len(cells), f"{path.name}: the exercise cell {cell['id']} has no check after it"
            match = CHECK_CALL.search("".join(cells[i + 1]["source"]))
            assert match, f"{path.name}: the cell after exercise {cell['id']} must call exercises.check(...)"
            found.append((path.name, *match.groups(), "".join(cell["source"])))
    return found


CELLS = _exercise_cells()
IDS = [f"{lesson}-{name}" for _, lesson, name, _, _ in CELLS]


def _run(text: str, variable: str, lesson: str = "05"):
    namespace = _namespace(lesson)
    exec(compile(text, "<exercise>", "exec"), namespace)
    return namespace[variable]


def test_every_lesson_with_exercises_has_at_least_two():
    for lesson in exercises.LESSONS_WITH_EXERCISES:
        assert sum(cell[1] == lesson for cell in CELLS) >= 2, f"lesson {lesson} needs two exercises"


@pytest.mark.parametrize("notebook, lesson, name, variable, placeholder", CELLS, ids=IDS)
def test_the_untouched_placeholder_is_not_yet(notebook, lesson, name, variable, placeholder):
    feedback = exercises.check(lesson, name, _run(placeholder, variable, lesson))
    assert feedback.status == "not yet", f"{notebook}: {feedback}"
    assert str(feedback) and feedback._repr_markdown_()


@pytest.mark.parametrize("notebook, lesson, name, variable, placeholder", CELLS, ids=IDS)
def test_the_solution_is_correct(notebook, lesson, name, variable, placeholder):
    text = exercises.solution(lesson, name)
    assert "not here" not in text and "no solution" not in text, text
    feedback = exercises.check(lesson, name, _run(text, variable, lesson))
    assert feedback.correct, f"{notebook}: {feedback}"


def test_every_registered_exercise_is_in_a_notebook_and_every_notebook_exercise_is_registered():
    assert set(exercises.registered()) == {(lesson, name) for _, lesson, name, _, _ in CELLS}


# --------------------------------------------------------------------------- checks on recorded results
# (the typical wrong answers and their hints are each lesson's TYPICAL, in tests/test_exercises_lessonNN.py)
def _solution_text(lesson: str, name: str) -> str:
    return exercises.solution(lesson, name)


def test_same_address_compares_with_the_recorded_measurement():
    from helpers import experiments

    identity = experiments.address_identity()
    if identity.live:  # a live result's provenance has no attributes: the lesson reads them from the GPU
        from helpers.memory import gpu

        attributes = gpu.device_attributes()
    else:
        attributes = identity.provenance["attributes"]
    rule = _run(_solution_text("04", "same_address"), "same_address")
    feedback = exercises.check("04", "same_address", rule, measured=identity.rows, attributes=attributes)
    agree = sum(rule(r["allocation"], dict(attributes)) == bool(r["equal"]) for r in identity.rows)
    assert feedback.correct and f"{agree} of {len(identity.rows)} kinds" in feedback.message   # issue 31: documented


# --------------------------------------------------------------------------- the framework
def test_a_check_never_raises():
    def raises(*args):
        raise ZeroDivisionError("boom")

    feedback = exercises.check("04", "device_address", raises)
    assert feedback.status == "hint" and "ZeroDivisionError" in feedback.message
    assert exercises.check("99", "nothing", None).status == "hint"


def test_placeholders_are_recognised():
    assert exercises.is_placeholder(...) and exercises.is_placeholder(None)
    assert exercises.is_placeholder('extern "C" __global__ void k(int n) {\n    // TODO: fill me in\n}\n')
    assert exercises.is_placeholder('__global__ void k(int n) { /* TODO */ }')
    assert not exercises.is_placeholder('__global__ void k(int n, float *y) { y[0] = n; }')


def test_solution_says_plainly_when_the_folder_was_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(exercises, "SOLUTIONS", tmp_path / "missing")
    assert "removed" in exercises.solution("05", "saxpy")
    monkeypatch.setattr(exercises, "SOLUTIONS", tmp_path)
    assert "no solution file" in exercises.solution("05", "saxpy").lower()


def test_every_lesson_with_exercises_has_a_solution_file():
    for lesson in {cell[1] for cell in CELLS}:
        assert (exercises.SOLUTIONS / f"lesson{lesson}.py").is_file()


def test_lesson_09_exercise_through_the_common_check():
    from helpers.exercises import coalescing as ex

    assert exercises.check("09", "coalesce", ex.BROKEN_SOURCE).status == "not yet"
    assert exercises.check("09", "coalesce", _run(_solution_text("09", "coalesce"), "COPY_SOURCE", "09")).correct


def test_the_cpu_driver_stand_in_frees_like_pycuda():
    from helpers import cpu

    h = cpu_driver.pagelocked_empty(8, np.float32, mem_flags=cpu_driver.host_alloc_flags.DEVICEMAP)
    assert h.base.get_device_pointer() == h.ctypes.data
    h.base.free()
    h.base.free()  # twice is safe, as in PyCUDA
    with pytest.raises(cpu_driver.LogicError):
        h.base.get_device_pointer()
    with pytest.raises(cpu.UnknownPointerError):
        cpu.memory.lookup(h.ctypes.data)


def test_every_lesson_after_00_has_two_exercises_and_06_to_14_predict_first():
    for path in sorted(LESSONS.glob("[0-9][0-9]-*.ipynb")):
        lesson = path.name[:2]
        if lesson == "00":
            continue
        cells = json.loads(path.read_text())["cells"]
        tags = [cell.get("metadata", {}).get("tags", []) for cell in cells]
        assert sum("exercise" in t for t in tags) >= 2, f"{path.name} needs at least two exercises"
        if lesson >= "06":
            assert any("predict" in t for t in tags), f"{path.name} needs a predict cell before its main measurement"


def test_the_course_asks_for_seven_kernels():
    """At least seven exercises in which the learner writes a CUDA kernel (issue 22)."""
    kernels = [(path, name) for path, _, name, _, source in CELLS if "__global__" in source]
    assert len(kernels) >= 7, f"kernel-writing exercises: {kernels}"


def test_every_lesson_from_pin_host_memory_on_asks_for_a_prediction():
    """A prediction before the measurement in every lesson from 01 on, compared by zc.exercises.compare (issue 22)."""
    import nbformat

    from helpers import lessons

    missing = []
    for path in lessons.notebooks()[1:]:
        cells = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
        predicted = [i for i, c in enumerate(cells) if re.search(r"^predict\w*\s*=\s*\.\.\.", c.source, re.M)]
        compared = [i for i, c in enumerate(cells) if "exercises.compare(" in c.source]
        if not predicted or not compared or min(predicted) > min(compared):
            missing.append(path.stem)
    assert not missing, f"no prediction (predict... = ... before zc.exercises.compare) in {missing}"
