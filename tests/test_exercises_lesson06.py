"""Lesson 06's exercises give the specific hint for typical wrong answers, and its prediction text works untouched
(issue 10). The generic tests (placeholder -> "not yet", solution -> "correct") are in tests/test_exercises.py."""

from __future__ import annotations

from helpers import exercises, experiments
from helpers.exercises import lesson06
from typical_wrong import Typical, fixed


def _ratio(kernel: str = "read", **copy):
    where = dict(direction="htod", host_memory="pinned") | copy

    def fraction_of_copy(memcpy, streams, nbytes):
        return (streams.one(nbytes=nbytes, memory="zero_copy", op=kernel)["GBps"]
                / memcpy.one(nbytes=nbytes, **where)["GBps"])
    return fraction_of_copy


def test_fraction_of_copy_uses_the_results_it_is_given():
    memcpy, streams = experiments.reference("memcpy"), experiments.reference("kernel_bandwidth")
    feedback = exercises.check("06", "fraction_of_copy", _ratio(), memcpy=memcpy, streams=streams)
    assert feedback.correct and "%" in feedback.message


def test_compare_prediction_untouched_and_answered():
    assert "no prediction" in lesson06.verdict(..., 0.93, 2**30)
    assert "0.93" in lesson06.verdict(..., 0.93, 2**30)
    assert "Close" in lesson06.verdict(0.9, 0.93, 2**30)
    assert "same PCIe link" in lesson06.verdict(1.5, 0.93, 2**30)
    assert "Higher than you expected" in lesson06.verdict(0.3, 0.93, 2**30)
    assert "Lower than you expected" in lesson06.verdict(0.9, 0.5, 2**30)
    assert "a fraction" in lesson06.verdict("half", 0.93, 2**30)


def test_compare_is_the_one_shape_of_the_prediction():
    memcpy, streams = experiments.reference("memcpy"), experiments.reference("kernel_bandwidth")
    size = int(max(memcpy.column("nbytes")))
    measured = (streams.one(nbytes=size, memory="zero_copy", op="read")["GBps"]
                / memcpy.one(nbytes=size, direction="htod", host_memory="pinned")["GBps"])
    untouched = exercises.compare("06", ..., memcpy, streams)
    assert isinstance(untouched, str) and "no prediction" in untouched and f"{measured:.2f}" in untouched
    assert "You predicted 0.20" in exercises.compare("06", 0.2, memcpy, streams)


def test_a_field_that_is_not_there_gets_the_real_fields():
    """Issue 31: a lookup by the figure's "series" column named no real field; the hint lists each result's own."""
    def by_series(memcpy, streams, nbytes):
        return streams.one(nbytes=nbytes, series="zero-copy read kernel")["GBps"]

    feedback = exercises.check("06", "fraction_of_copy", by_series)
    assert feedback.status == "hint" and "LookupError" in feedback.message
    for field in ("direction", "host_memory", "'htod'", "'pinned'", "memory", "op", "'zero_copy'", "'read'"):
        assert field in feedback.message, field
    assert "series (" not in feedback.message

    def wrong_key(memcpy, streams, nbytes):
        return streams.one(nbytes=nbytes, memory="zero_copy", op="read")["gbps"]

    feedback = exercises.check("06", "fraction_of_copy", wrong_key)
    assert feedback.status == "hint" and "'GBps'" in feedback.message


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.


def _fraction_cases() -> list[tuple]:
    memcpy, streams = experiments.reference("memcpy"), experiments.reference("kernel_bandwidth")
    return [(memcpy, streams, n) for n in sorted({int(n) for n in memcpy.column("nbytes")})]


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("06", "model_GBps"): [
        Typical(fixed(lambda nbytes, t0, peak_GBps: peak_GBps * nbytes / (nbytes + 1e6 * t0)),
                ("t0 + nbytes / (peak_GBps * 1e9)",), lambda: lesson06.MODEL_CASES),
        Typical(fixed(lambda nbytes, t0, peak_GBps: nbytes / t0 / 1e9 + peak_GBps),
                ("t0 + nbytes / (peak_GBps * 1e9)",), lambda: lesson06.MODEL_CASES, phrase="rates do not add"),
        Typical(fixed(lambda nbytes, t0, peak_GBps: peak_GBps), phrase="leaves out the fixed cost"),
        Typical(fixed(lambda nbytes, t0, peak_GBps: nbytes / t0 / 1e9), phrase="never flattens"),
        Typical(fixed(lambda nbytes, t0, peak_GBps: nbytes / (t0 + nbytes / peak_GBps) / 1e9), phrase="units"),
        Typical(fixed(lambda nbytes, t0, peak_GBps: nbytes / (t0 + nbytes / (peak_GBps * 1e9))), phrase="units"),
        # GB/s taken as bytes/s and the rate left in bytes/s: the slips cancel to about the peak (a learner's walk)
        Typical(fixed(lambda nbytes, t0, peak_GBps: nbytes / (t0 + nbytes / peak_GBps)), phrase="not in seconds")],
    ("06", "fraction_of_copy"): [
        Typical(fixed(lambda memcpy, streams, nbytes: streams.one(nbytes=nbytes, memory="zero_copy", op="read")["GBps"]
                      / memcpy.one(nbytes=nbytes, direction="htod", host_memory="pageable")["GBps"]),
                ('host_memory="pinned"',), _fraction_cases),
        Typical(fixed(lambda memcpy, streams, nbytes: streams.one(nbytes=nbytes, memory="device", op="read")["GBps"]
                      / memcpy.one(nbytes=nbytes, direction="htod", host_memory="pinned")["GBps"]),
                ('memory="zero_copy", op="read"', 'host_memory="pinned"'), _fraction_cases),
        Typical(fixed(_ratio(host_memory="pageable")), phrase="pageable copy"),
        Typical(fixed(_ratio(direction="dtoh")), phrase="wrong direction"),
        Typical(fixed(_ratio(kernel="write")), phrase="WRITE kernel"),
        Typical(fixed(lambda memcpy, streams, nbytes: 1 / _ratio()(memcpy, streams, nbytes)), phrase="upside down"),
        Typical(fixed(lambda memcpy, streams, nbytes: _ratio()(memcpy, streams, 2**30)), phrase="nbytes=nbytes"),
        Typical(fixed(lambda memcpy, streams, nbytes: memcpy.select(nbytes=nbytes)), phrase="return one number")],
}
