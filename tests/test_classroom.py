"""The simulated classroom's command, the lessons' checks of measured figures, and contention notes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from helpers import classroom, records
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
    assert len(classroom.resolve_lessons(None)) == 16
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
