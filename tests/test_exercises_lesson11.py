"""Lesson 11's exercises: the typical wrong answers get their specific hints (issue 10).

The generic tests in test_exercises.py cover placeholder -> "not yet" and solution -> "correct".
"""

from __future__ import annotations

import numpy as np
import pytest

from helpers import exercises, experiments
from helpers.exercises import lesson11
from typical_wrong import Typical, edited, fixed


def _solution(name: str, edit: tuple[str, str] | None = None):
    text = exercises.solution("11", name)
    if edit:
        assert edit[0] in text, edit[0]
        text = text.replace(*edit)
    namespace = exercises.namespace("11")
    exec(compile(text, "<solution>", "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("edit, phrase", [
    (("    for s in streams:\n        s.synchronize()                                     # c is complete only now\n",
      ""), "no synchronisation"),
    (("    for s in streams:\n        s.synchronize() ", "    for s in streams[:1]:\n        s.synchronize() "),
     "Did you wait for every stream"),
    (("m, s = last - first, streams[i % 2]", "m, s = last - first, streams[0]"), "one stream"),
    (("da, db, dc = buffers[i % 2]", "da, db, dc = buffers[0]"), "one device buffer at the same time"),
    (("grid=((m + 255) // 256, 1)", "grid=(m // 256, 1)"), "Round up"),
    (("range(0, a.size, chunk)", "range(0, a.size // chunk * chunk, chunk)"), "partial chunk"),
    (("stream=s)", ")"), "default stream"),
    (("add(da, db, dc, np.int32(m)", "add(a[first:last], b[first:last], c[first:last], np.int32(m)"), "host array"),
    (("np.int32(m)", "m"), "np.int32"),
    (("drv.memcpy_dtoh_async(c[first:last], dc, s)", "drv.memcpy_dtoh_async(dc, c[first:last], s)"), "swapped"),
    (("drv.memcpy_htod_async(da, a[first:last], s)", "drv.memcpy_htod_async(da, a, s)"), "one chunk"),
])
def test_double_buffered_add_hints(edit, phrase):
    feedback = exercises.check("11", "double_buffered_add", _solution("double_buffered_add", edit))
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def test_double_buffered_add_kernel_before_its_copies():
    text = exercises.solution("11", "double_buffered_add")
    add = "        add(da, db, dc, np.int32(m), block=(256, 1, 1), grid=((m + 255) // 256, 1), stream=s)\n"
    assert add in text
    text = text.replace(add, "").replace("        drv.memcpy_htod_async(da,", add + "        drv.memcpy_htod_async(da,")
    namespace = exercises.namespace("11")
    exec(text, namespace)
    feedback = exercises.check("11", "double_buffered_add", namespace["double_buffered_add"])
    assert feedback.status == "hint" and "in which order" in feedback.message, feedback


def test_a_stream_per_chunk_is_not_double_buffering():
    wrong = _solution("double_buffered_add", ("m, s = last - first, streams[i % 2]", "m, s = last - first, drv.Stream()"))
    feedback = exercises.check("11", "double_buffered_add", wrong)
    assert feedback.status == "hint" and "How many streams does double buffering need" in feedback.message, feedback


def test_the_simulated_gpu_runs_work_only_when_synchronised():
    drv = lesson11.SimDriver()
    stream = drv.Stream()
    buf = lesson11.DeviceBuffer("d", 4)
    host = np.arange(4, dtype=np.float32)
    drv.memcpy_htod_async(buf, host, stream)
    assert np.isnan(buf.data).all()
    stream.synchronize()
    assert np.array_equal(buf.data, host)


@pytest.mark.parametrize("wrong, phrase", [
    (lambda n, r, both: (8 * n if both else 12 * n) / 4 / (r * 1e9), "quarter of the right one"),
    (lambda n, r, both: (8 * n if both else 12 * n) / (r * 1e6), "milliseconds"),
    (lambda n, r, both: (8 * n if both else 12 * n) / (r * 2**30), "not 2^30"),
    (lambda n, r, both: 8 * n / (r * 1e9), "12 bytes per element, not 8"),
    (lambda n, r, both: 12 * n / (r * 1e9), "busier one"),
    (lambda n, r, both: (6 * n if both else 12 * n) / (r * 1e9), "do not carry half each"),
    (lambda n, r, both: (4 * n if both else 12 * n) / (r * 1e9), "not by c's 4 bytes"),
])
def test_transfer_seconds_hints(wrong, phrase):
    feedback = exercises.check("11", "transfer_seconds", wrong)
    assert feedback.status == "hint" and phrase in feedback.message, feedback


def test_transfer_seconds_compares_with_the_recorded_run():
    e2e = experiments.end_to_end()
    feedback = exercises.check("11", "transfer_seconds", _solution("transfer_seconds"), measured=e2e, link_GBps=55.0)
    assert feedback.correct and "measured copy path" in feedback.message and "measured zero-copy" in feedback.message


def test_compare_prediction():
    untouched = lesson11.compare_prediction(..., 1.43)
    assert "no prediction" in untouched and "1.43" in untouched and "1.50" in untouched
    assert "Close" in lesson11.compare_prediction(1.4, 1.43)
    assert "more than overlap can give" in lesson11.compare_prediction(3, 1.43)
    assert "more than you expected" in lesson11.compare_prediction(1.0, 1.43)
    assert "number" in lesson11.compare_prediction("fast", 1.43)
    assert "positive" in lesson11.compare_prediction(0, 1.43)


def test_compare_prediction_takes_the_out_of_core_result():
    pipelined = experiments.reference("out_of_core")
    from helpers.findings.overlap_copies_with_streams import two_stream_speedup

    measured = two_stream_speedup(pipelined)
    assert f"{measured:.2f}" in lesson11.compare_prediction(..., pipelined)
    assert "**Prediction.**" in exercises.compare("11", 1.2, pipelined)


def test_a_correct_loop_written_in_the_exercise_cell_runs_as_given():
    """Issue 31: the text says to launch with np.int32(m); the cell itself imports numpy, so a correct loop written
    in it runs in a namespace that holds only what the lesson's cells define (not the tests' ``np``)."""
    import nbformat

    from helpers import lessons

    nb = nbformat.read(lessons.find("11").notebook(), as_version=4)
    cell, = [c for c in nb.cells if "exercise" in c.metadata.get("tags", []) and "def double_buffered_add" in c.source]
    imports = cell.source.split("def double_buffered_add")[0]
    namespace: dict = {}
    exec(compile(imports + exercises.solution("11", "double_buffered_add"), "<cell>", "exec"), namespace)
    assert exercises.check("11", "double_buffered_add", namespace["double_buffered_add"]).correct
    stub: dict = {}
    exec(compile(cell.source, "<cell>", "exec"), stub)
    assert exercises.check("11", "double_buffered_add", stub["double_buffered_add"]).status == "not yet"


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer, then a
# smaller step, then the way to the solution.

TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("11", "double_buffered_add"): [
        Typical(edited("11", "double_buffered_add", "double_buffered_add", "range(0, a.size, chunk)",
                       "range(0, a.size // chunk * chunk, chunk)"), ("min(first + chunk",)),
        Typical(edited("11", "double_buffered_add", "double_buffered_add", "grid=((m + 255) // 256, 1)",
                       "grid=(m // 256, 1)"), ("(m + 255) // 256",))],
    ("11", "transfer_seconds"): [
        Typical(fixed(lambda n, r, both: 12 * n / (r * 1e9)), ("max(bytes_in, bytes_out)",),
                lambda: [(n, rate, both) for n, rate in lesson11.TRANSFER_CASES for both in (False, True)]),
        Typical(fixed(lambda n, r, both: 10 * n / (r * 1e9)), ("max(bytes_in, bytes_out)",),
                lambda: [(n, rate, both) for n, rate in lesson11.TRANSFER_CASES for both in (False, True)])],
}
