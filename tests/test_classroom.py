"""The simulated classroom's command, the lessons' checks of measured figures, and contention notes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

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


# --------------------------------------------------------------------------- nobody stalls (issue 32)
def test_a_cell_past_its_timeout_is_reported_with_its_stack_and_the_run_goes_on(tmp_path, monkeypatch):
    import nbformat

    stuck, next_one = tmp_path / "05-stuck.ipynb", tmp_path / "06-next.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_code_cell("import time\n\ndef wait_for_the_gpu():\n    time.sleep(60)\n\nwait_for_the_gpu()"),
        nbformat.v4.new_code_cell("y = 2")]), stuck)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("z = 3")]), next_one)
    monkeypatch.setenv("ZC_QUEUE_TAG", "learner-07")
    t0 = time.monotonic()
    report = classroom.run_learner([stuck, next_one], tmp_path / "learner.json", cell_timeout=6)
    assert time.monotonic() - t0 < 90
    [late] = report["timed_out_cells"]
    assert (late["learner"], late["lesson"], late["cell"], late["source"]) == ("learner-07", "05-stuck", 1,
                                                                              "import time")
    assert "wait_for_the_gpu" in late["stack"] and "line 4" in late["stack"], late["stack"]
    assert [f["error"] for f in report["failed_cells"]] == ["CellTimeoutError"]
    assert set(report["lessons"]) == {"05-stuck", "06-next"}  # the next lesson ran
    assert json.loads((tmp_path / "learner.json").read_text())["timed_out_cells"][0]["cell"] == 1


def test_the_stack_is_written_a_little_before_the_timeout_and_a_silent_learner_is_stalled_after_it():
    assert classroom.stack_after(300) == 295 and classroom.stack_after(6) == pytest.approx(5.4)
    assert classroom.stall_limit(300) == 300 + classroom.STALL_GRACE_S
    assert classroom.stall_limit(10) == classroom.STARTUP_TIMEOUT_S + classroom.STALL_GRACE_S


def _silent_learner(tmp_path, tag):
    """A learner process whose kernel (a child of it, with the cell watchdog) hangs; its heartbeat is old."""
    stack = tmp_path / f"{tag}.stack"
    code = textwrap.dedent(f"""
        import faulthandler, os, signal, subprocess, sys, time
        faulthandler.register(signal.SIGUSR1)  # as run_learner does: its stacks into its log
        kernel = subprocess.Popen([sys.executable, "-c", "import time\\n"
            "from helpers.tools import cell_watchdog\\n"
            "cell_watchdog.install(shell=None)\\n"
            "def stuck_in_a_cell():\\n    time.sleep(120)\\n"
            "stuck_in_a_cell()\\n"], env={{**os.environ, "ZC_STACK_FILE": {str(stack)!r}}})
        time.sleep(1.5)
        print(kernel.pid, flush=True)
        time.sleep(120)
    """)
    learner = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                               start_new_session=True, cwd=os.getcwd())
    kernel = int(learner.stdout.readline())
    (tmp_path / f"{tag}.heartbeat").write_text(json.dumps({
        "t": time.time() - 1000, "lesson": "07-measure-latency", "cell": 12, "kernel_pid": kernel,
        "stack": str(stack), "stack_offset": 0}))
    return learner, kernel


def test_a_silent_learner_s_kernel_is_ended_with_its_stack_then_the_learner_if_still_silent(tmp_path):
    learner, kernel = _silent_learner(tmp_path, "learner-03")
    stalls, handled = [], {}
    try:
        classroom.check_stalls(tmp_path, {"learner-03": learner}, 60.0, time.time(), stalls, handled)
        [stall] = stalls
        assert (stall["learner"], stall["lesson"], stall["cell"], stall["ended"]) == (
            "learner-03", "07-measure-latency", 12, "kernel")
        assert "stuck_in_a_cell" in stall["stack"] and stall["silent_seconds"] > 900
        assert _gone(kernel) and learner.poll() is None  # the learner goes on with its next lesson
        classroom.check_stalls(tmp_path, {"learner-03": learner}, 60.0, time.time(), stalls, handled)
        assert stalls[-1]["ended"] == "learner" and learner.wait(timeout=10) == -9
    finally:
        if learner.poll() is None:
            learner.kill()


def _gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return True
        if "State:\tZ" in status:
            return True
        time.sleep(0.05)
    return False


def test_a_learner_that_beats_is_left_alone(tmp_path):
    learner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        (tmp_path / "learner-01.heartbeat").write_text(json.dumps({"t": time.time(), "lesson": "06", "cell": 3}))
        stalls = []
        classroom.check_stalls(tmp_path, {"learner-01": learner}, 60.0, time.time() - 1000, stalls, {})
        assert stalls == [] and learner.poll() is None
    finally:
        learner.kill()
        learner.wait()


def test_the_record_counts_what_each_learner_was_shown_from_another_machine(tmp_path):
    log = tmp_path / "learner.results.jsonl"
    entries = [{"name": "managed", "source": "reference"}, {"name": "managed", "source": "reference"},
               {"name": "stride", "source": "class-record"}, {"name": "latency", "params": {}, "rows": []}]
    log.write_text("".join(json.dumps(e) + "\n" for e in entries))
    assert classroom.shown_from(log) == {"class-record": ["stride"], "live": ["latency"], "reference": ["managed"]}
    learners = [{"shown_from": classroom.shown_from(log)}, {"shown_from": {"reference": ["managed", "offset"]}}]
    assert classroom._by_name(learners, "reference") == {"managed": 2, "offset": 1}
