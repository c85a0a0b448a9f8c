"""Lesson 11's exercises: the typical wrong answers get their specific hints (issue 10).

The generic tests in test_exercises.py cover placeholder -> "not yet" and solution -> "correct".
"""

from __future__ import annotations

import numpy as np

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


def test_transfer_seconds_compares_with_the_recorded_run(replay):
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
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

def _loop(old: str, new: str, phrase: str, keys: tuple[str, ...] = ()) -> Typical:
    return Typical(edited("11", "double_buffered_add", "double_buffered_add", old, new), keys, phrase=phrase)


def _transfer_cases() -> list[tuple]:
    return [(n, rate, both) for n, rate in lesson11.TRANSFER_CASES for both in (False, True)]


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("11", "double_buffered_add"): [
        _loop("range(0, a.size, chunk)", "range(0, a.size // chunk * chunk, chunk)", "partial chunk",
              ("min(first + chunk",)),
        _loop("grid=((m + 255) // 256, 1)", "grid=(m // 256, 1)", "Round up", ("(m + 255) // 256",)),
        _loop("    for s in streams:\n        s.synchronize()                                     # c is complete "
              "only now\n", "", "no synchronisation"),
        _loop("    for s in streams:\n        s.synchronize() ", "    for s in streams[:1]:\n        s.synchronize() ",
              "Did you wait for every stream"),
        _loop("m, s = last - first, streams[i % 2]", "m, s = last - first, streams[0]", "one stream"),
        _loop("da, db, dc = buffers[i % 2]", "da, db, dc = buffers[0]", "one device buffer at the same time"),
        _loop("stream=s)", ")", "default stream"),
        _loop("add(da, db, dc, np.int32(m)", "add(a[first:last], b[first:last], c[first:last], np.int32(m)",
              "host array"),
        _loop("np.int32(m)", "m", "np.int32"),
        _loop("drv.memcpy_dtoh_async(c[first:last], dc, s)", "drv.memcpy_dtoh_async(dc, c[first:last], s)",
              "swapped"),
        _loop("drv.memcpy_htod_async(da, a[first:last], s)", "drv.memcpy_htod_async(da, a, s)", "one chunk")],
    ("11", "transfer_seconds"): [
        Typical(fixed(lambda n, r, both: 12 * n / (r * 1e9)), ("max(bytes_in, bytes_out)",), _transfer_cases,
                phrase="busier one"),
        Typical(fixed(lambda n, r, both: 10 * n / (r * 1e9)), ("max(bytes_in, bytes_out)",), _transfer_cases),
        Typical(fixed(lambda n, r, both: (8 * n if both else 12 * n) / 4 / (r * 1e9)),
                phrase="quarter of the right one"),
        Typical(fixed(lambda n, r, both: (8 * n if both else 12 * n) / (r * 1e6)), phrase="milliseconds"),
        Typical(fixed(lambda n, r, both: (8 * n if both else 12 * n) / (r * 2**30)), phrase="not 2^30"),
        Typical(fixed(lambda n, r, both: 8 * n / (r * 1e9)), phrase="12 bytes per element, not 8"),
        Typical(fixed(lambda n, r, both: (6 * n if both else 12 * n) / (r * 1e9)), phrase="do not carry half each"),
        Typical(fixed(lambda n, r, both: (4 * n if both else 12 * n) / (r * 1e9)), phrase="not by c's 4 bytes")],
}
