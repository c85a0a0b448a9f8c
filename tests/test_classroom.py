"""The simulated classroom's command, the lessons' checks of measured figures, and contention notes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers.tools import classroom
from helpers import lessons, records
from helpers.experiments import FigureCheckError, Result, check_figure


def test_classroom_refuses_in_replay_mode():
    done = subprocess.run([sys.executable, "-m", "helpers", "classroom", "--learners", "2"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "ZC_FORCE_REPLAY": "1"})
    assert done.returncode == 1
    assert done.stderr.startswith("error: python -m helpers classroom needs a CUDA GPU")
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_lessons_are_chosen_by_number_or_name():
    chosen = classroom.resolve_lessons(["05", "8", "00-start-here"])
    assert [p.name[:2] for p in chosen] == ["05", "08", "00"]
    every = classroom.resolve_lessons(None)
    assert every == lessons.notebooks(), "the classroom runs every lesson helpers/lessons.py registers, in order"
    with pytest.raises(classroom.ClassroomError, match="06-measure-bandwidth.ipynb"):
        classroom.resolve_lessons(["42"])


def test_the_estimate_serialises_only_the_timed_part():
    assert classroom.estimate_wall(65.0, 20.0, 1) == 65.0
    assert classroom.estimate_wall(65.0, 20.0, 16) == 45.0 + 16 * 20.0


def test_failed_cells_and_unexpected_figures_are_found_in_outputs():
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("1", outputs=[nbformat.v4.new_output("stream", name="stdout",
                                                                       text="Unexpected figure: expected x\n")]),
        nbformat.v4.new_code_cell("2", outputs=[nbformat.v4.new_output("error", ename="AssertionError",
                                                                       evalue="no", traceback=[])]),
    ])
    failed, unexpected = classroom._failed_cells(nb, "05-x")
    assert failed == [{"lesson": "05-x", "cell": 1, "error": "AssertionError", "message": "no"}]
    assert unexpected[0]["cell"] == 0


def test_a_classroom_file_in_data_is_not_taken_for_a_record(tmp_path, monkeypatch):
    monkeypatch.setenv("ZC_DATA_DIR", str(tmp_path))
    (tmp_path / "classroom-nvidia-h200-2026-12-02.json").write_text("{}")
    assert records.list_records() == []


def test_check_figure_explains_and_carries_on(monkeypatch):
    monkeypatch.setenv("ZC_STRICT_FIGURES", "0")
    assert check_figure(True, "more than 0.5x", "0.93x").startswith("As expected")
    sentence = check_figure(False, "more than 0.5x the copy", "0.31x the copy")
    assert "expected more than 0.5x the copy, measured 0.31x the copy" in sentence
    assert "shared" in sentence and "carries on" in sentence
    assert "a noisy row" in check_figure(False, "a", "b", why="a noisy row")


def test_check_figure_fails_in_the_tests():
    assert os.environ["ZC_STRICT_FIGURES"] == "1"  # tests/conftest.py sets it, for nbval's kernels too
    with pytest.raises(FigureCheckError, match="measured 0.31x"):
        check_figure(False, "more than 0.5x", "0.31x")


def test_a_live_result_names_other_processes_on_the_gpu():
    quiet = Result("kernel_bandwidth", {}, [], True, {"gpu": "NVIDIA H200"}, other_gpu_processes=[])
    assert "Note" not in quiet.describe()
    busy = Result("kernel_bandwidth", {}, [], True, {"gpu": "NVIDIA H200"},
                  other_gpu_processes=[{"pid": 4242, "name": "train.py", "gpu_memory_bytes": 1 << 30}])
    assert "1 process(es) outside the course's measurement queue" in busy.describe()
    assert "pid 4242 (train.py)" in busy.describe()


def test_a_kernel_that_dies_at_start_is_started_again_and_recorded(tmp_path, monkeypatch):
    import nbclient
    import nbformat
    from nbclient.exceptions import DeadKernelError

    lesson = tmp_path / "05-x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")]), lesson)
    attempts = []

    class FlakyClient:
        def __init__(self, nb, **kwargs):
            self.nb = nb

        def execute(self):
            attempts.append(1)
            if len(attempts) == 1:  # the first kernel dies before replying to kernel_info
                raise RuntimeError("Kernel died before replying to kernel_info")
            self.nb.cells[0]["metadata"]["execution"] = {"iopub.execute_input": "now"}

    monkeypatch.setattr(nbclient, "NotebookClient", FlakyClient)
    report = classroom.run_learner([lesson], tmp_path / "learner.json", cell_timeout=10)
    assert len(attempts) == 2 and report["failed_cells"] == []
    assert report["kernel_restarts"][0]["lesson"] == "05-x" and "kernel_info" in report["kernel_restarts"][0]["error"]
    # a kernel that dies in the middle of a lesson is a failed cell, not retried
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1")])
    nb.cells[0]["metadata"]["execution"] = {"iopub.execute_input": "now"}
    assert not classroom.died_at_start(DeadKernelError("Kernel died"), nb)
    assert classroom.died_at_start(DeadKernelError("Kernel died"), nbformat.v4.new_notebook())


# --------------------------------------------------------------------------- the class setting (issue 20)
def test_the_class_setting_replays_only_experiments_that_held_the_gpu_longer(monkeypatch):
    from helpers.experiments import result

    held = records.reference_record()[0]["provenance"]["experiment_wall_seconds"]
    long_one, short_one = max(held, key=held.get), min(held, key=held.get)
    monkeypatch.delenv(result.CLASS_SETTING, raising=False)
    assert result.class_replay_reason(long_one) == ""
    monkeypatch.setenv(result.CLASS_SETTING, "2")
    assert f"held the GPU for {held[long_one]:g} s" in result.class_replay_reason(long_one)
    assert result.class_replay_reason(short_one) == ""


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf"])
def test_a_bad_class_setting_is_a_clear_error(monkeypatch, value):
    from helpers.errors import CourseError
    from helpers.experiments import result

    monkeypatch.setenv(result.CLASS_SETTING, value)
    with pytest.raises(CourseError, match="ZC_CLASS_GPU_SECONDS"):
        result.class_limit()


def test_under_the_class_setting_a_live_run_replays_a_long_sweep_and_says_why(monkeypatch):
    from helpers.experiments import result
    from helpers.mode import Mode

    monkeypatch.setattr(result, "detect", lambda: Mode(True, "a GPU (pretended)"))
    monkeypatch.setenv(result.CLASS_SETTING, "2")

    def measure(**params):
        raise AssertionError("a long sweep must not be measured under the class setting")

    replayed = result.run("managed", {}, measure)
    assert not replayed.live and replayed.rows == result.reference("managed").rows
    assert "ZC_CLASS_GPU_SECONDS=2" in replayed.describe()


def test_record_refuses_under_the_class_setting(monkeypatch, tmp_path):
    from helpers import mode
    from helpers.tools import record as cli

    monkeypatch.setattr(mode, "require_live", lambda what: None)
    monkeypatch.setenv("ZC_CLASS_GPU_SECONDS", "2")
    with pytest.raises(SystemExit, match="Unset it"):
        cli.record(str(tmp_path / "r.json"), None)


def test_a_learner_s_zero_copy_read_falls_back_to_the_live_experiments(tmp_path):
    rows = {"vector_width": [{"memory": "zero_copy", "useful_GBps": 50.5}, {"memory": "device", "useful_GBps": 4000.0}],
            "registered": [{"allocation": "cudaHostAlloc mapped", "GBps": 50.1}]}
    log = tmp_path / "learner.results.jsonl"
    log.write_text("".join(json.dumps({"name": n, "params": {}, "rows": r}) + "\n" for n, r in rows.items()))
    figures = classroom._figures(log, "NVIDIA H200")
    assert figures["zero_copy_read_GBps"] == 50.5 and figures["zero_copy_read_from"] == "vector_width"


def _part(lessons, ratio, waits, failed=0):
    return {"format": "zero-copy-course classroom", "version": 1, "gpu": "NVIDIA H200", "date": "2026-12-04T05:00:00+00:00",
            "command": "python -m helpers classroom", "learners": 32, "lessons": lessons, "class_gpu_seconds": 2.0,
            "wall_seconds": 100.0, "solo_wall_seconds": 20.0, "solo_failed_cells": [], "failed_cell_count": failed,
            "unexpected_figure_count": 0, "kernel_restart_count": 1, "worst_zero_copy_read_ratio": ratio,
            "longest_wait_seconds": max(waits), "peak_pinned_bytes": 1 << 30,
            "queue": {"slots": len(waits), "mean_wait_seconds": sum(waits) / len(waits)}}


def test_parts_of_one_class_merge_into_one_record(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(_part(["00-x", "01-y"], 0.99, [1.0, 3.0])))
    b.write_text(json.dumps(_part(["02-z"], 0.97, [2.0], failed=1)))
    merged = json.loads(classroom.merge_parts([a, b], str(tmp_path / "m.json")).read_text())
    assert merged["lessons"] == ["00-x", "01-y", "02-z"] and merged["learners"] == 32
    assert merged["wall_seconds"] == 200.0 and merged["failed_cell_count"] == 1 and merged["kernel_restart_count"] == 2
    assert merged["worst_zero_copy_read_ratio"] == 0.97 and merged["longest_wait_seconds"] == 3.0
    assert merged["mean_wait_seconds"] == 2.0 and merged["measurement_slots"] == 3 and len(merged["parts"]) == 2
    c = tmp_path / "c.json"
    c.write_text(json.dumps(_part(["03-w"], None, [1.0])))
    merged = json.loads(classroom.merge_parts([a, c], str(tmp_path / "m3.json")).read_text())
    assert merged["worst_zero_copy_read_ratio"] == 0.99 and merged["zero_copy_read_ratio_by_part"] == [0.99, None]


def test_parts_of_different_classes_or_sharing_a_lesson_are_refused(tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    a.write_text(json.dumps(_part(["00-x"], 0.99, [1.0])))
    b.write_text(json.dumps({**_part(["01-y"], 0.99, [1.0]), "learners": 16}))
    c.write_text(json.dumps(_part(["00-x"], 0.99, [1.0])))
    with pytest.raises(classroom.ClassroomError, match="learners"):
        classroom.merge_parts([a, b], str(tmp_path / "m.json"))
    with pytest.raises(classroom.ClassroomError, match="share lessons"):
        classroom.merge_parts([a, c], str(tmp_path / "m2.json"))
