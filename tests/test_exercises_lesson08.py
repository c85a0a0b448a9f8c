"""Lesson 08's exercises: typical wrong answers get their specific hints; the load counting; the prediction text."""

from __future__ import annotations

import math

import pytest

from helpers import exercises
from helpers.exercises import lesson08
from typical_wrong import Typical, edited, fixed


def _solution() -> str:
    namespace = exercises.namespace("08")
    exec(exercises.solution("08", "read_inflight"), namespace)
    return namespace["READ_INFLIGHT_SOURCE"]


FOUR = """        float4 a = src[i];
        float4 b = src[i + step];
        float4 c = src[i + 2 * step];
        float4 d = src[i + 3 * step];
        sum += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w))
             + ((c.x + c.y) + (c.z + c.w)) + ((d.x + d.y) + (d.z + d.w));
"""
TAIL = """    for (; i < n4; i += step) {                      // the tail: what is left of n4
        float4 a = src[i];
        sum += (a.x + a.y) + (a.z + a.w);
    }
"""


def test_read_inflight_uncoalesced_runs_get_the_coalescing_hint():
    source = r"""
extern "C" __global__ void read_inflight(const float4 *__restrict__ src, unsigned long long n4, float *partial) {
    unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long threads = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long per = (n4 + threads - 1) / threads;
    float sum = 0.0f;
    for (unsigned long long k = tid * per; k < (tid + 1) * per && k < n4; k += 4) {
        float4 a = src[k];
        float4 b = k + 1 < n4 && k + 1 < (tid + 1) * per ? src[k + 1] : make_float4(0, 0, 0, 0);
        float4 c = k + 2 < n4 && k + 2 < (tid + 1) * per ? src[k + 2] : make_float4(0, 0, 0, 0);
        float4 d = k + 3 < n4 && k + 3 < (tid + 1) * per ? src[k + 3] : make_float4(0, 0, 0, 0);
        sum += ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w))
             + ((c.x + c.y) + (c.z + c.w)) + ((d.x + d.y) + (d.z + d.w));
    }
    partial[tid] = sum;
}
"""
    feedback = exercises.check("08", "read_inflight", source)
    assert feedback.status == "hint" and "consecutive threads" in feedback.message, feedback


def test_loads_are_counted_in_the_loop_body():
    assert lesson08.independent_loads(_solution()) == 4
    one = _solution().replace(FOUR, "        float4 a = src[i]; sum += (a.x + a.y) + (a.z + a.w);\n")
    assert lesson08.independent_loads(one) == 1
    assert lesson08.independent_loads(one.replace("    for (; i + 3", "    #pragma unroll 4\n    for (; i + 3")) == 4
    inner = one.replace("        float4 a = src[i]; sum += (a.x + a.y) + (a.z + a.w);\n",
                        "        for (int k = 0; k < 8; ++k) { float4 a = src[i + k * step]; sum += a.x; }\n")
    assert lesson08.independent_loads(inner) == 8


def test_read_inflight_solution_passes_little_s_law_with_the_record(replay):
    need, link, latency, which = lesson08.needed_bytes()
    from helpers.findings import keep_enough_bytes_in_flight as said
    from helpers import experiments

    # the figures the check uses are section 1's (issue 31: not a loaded latency taught only in Going deeper)
    assert latency == said.latency_ns(experiments.latency()) and link == said.link_GBps(experiments.memcpy())
    assert f"{latency:.0f} ns" in said.little(experiments.memcpy(), experiments.latency())
    margin = lesson08.MARGIN * need
    assert lesson08.THREADS * 16 < margin < lesson08.THREADS * 16 * 4, "the check's grid must make the exercise bite"
    assert exercises.check("08", "read_inflight", _solution()).correct


def test_prediction_text_without_and_with_a_guess():
    assert "No prediction made" in lesson08.fraction_text(..., 0.77, 0.98)
    text = lesson08.fraction_text(0.5, 0.77, 0.98)
    assert "You predicted 50%" in text and "77%" in text and "fell short" in text


def test_a_percentage_typed_as_a_number_is_read_as_one():
    """Issue 35's walk: 74 meant 74 % of the link, not 7,400 % and "100.5x less than your guess"."""
    said = lesson08.fraction_text(74, 0.74, 0.98)
    assert said.startswith("(read 74 as 74 %, i.e. 0.74) You predicted 74%") and "Within 25%" in said, said
    assert not lesson08.fraction_text(0.74, 0.74, 0.98).startswith("(read")


def test_prediction_through_compare_takes_the_results(replay):   # words, not a measurement
    from helpers import experiments
    runs = experiments.inflight(), experiments.memcpy(), experiments.latency()
    untouched = exercises.compare("08", ..., *runs)
    assert "No prediction made" in untouched
    link = float(max(runs[1].column("GBps", direction="htod", host_memory="pinned")))
    measured = runs[0].one(kernel="read_float4", threads=lesson08.THREADS)["GBps"] / link
    assert f"{measured:.0%}" in untouched and isinstance(lesson08.compare_prediction(0.5, *runs), str)


# --------------------------------------------------------------------------- reread_load
def _reread() -> str:
    namespace = exercises.namespace("08")
    exec(exercises.solution("08", "reread_load"), namespace)
    return namespace["REREAD_SOURCE"]


PLACEHOLDER = r"""
extern "C" __global__ void reread(const float4 *src, unsigned long long chunk4, int passes, float *partial) {
    // TODO
}
"""


def test_reread_solution_is_served_on_the_gpu_and_the_placeholder_is_not_yet():
    exercises.reset_tries()
    good = exercises.check("08", "reread_load", _reread())
    assert good.correct and "__ldg" in good.message, good
    assert exercises.check("08", "reread_load", PLACEHOLDER).status == "not yet"


@pytest.mark.parametrize("load", ["__ldca(&base[i])", "base[i]"])
def test_reread_judges_where_the_rereads_were_served(load):
    """Loads the L1 serves pass; __ldcg and __ldcv, which skip it, are typical wrong answers (TYPICAL below)."""
    exercises.reset_tries()
    feedback = exercises.check("08", "reread_load", _reread().replace("__ldg(&base[i])", load))
    assert feedback.correct, feedback


def test_reread_judges_the_load_that_ran_not_the_text():
    # an __ldg that never runs does not count: the re-reads went through __ldcg
    dead = _reread().replace("float4 v = __ldg(&base[i]);",
                             "float4 v = passes < 0 ? __ldg(&base[i]) : __ldcg(&base[i]);")
    exercises.reset_tries()
    assert exercises.check("08", "reread_load", dead).status == "hint"


def test_non_consecutive_float4s_get_a_hint_for_that_mistake_not_the_tail():
    """Issue 31: a kernel whose four loads read a thread's own consecutive float4s (i, i + 1, i + 2, i + 3) got the
    tail-loop hint; its mistake is the pattern, and the hint must say so."""
    source = _solution()
    for old, new in (("unsigned long long i = tid;", "unsigned long long i = 4 * tid;"),
                     ("i + 3 * step < n4", "i + 3 < n4"), ("src[i + step]", "src[i + 1]"),
                     ("src[i + 2 * step]", "src[i + 2]"), ("src[i + 3 * step]", "src[i + 3]")):
        assert old in source, old
        source = source.replace(old, new)
    exercises.reset_tries()
    feedback = exercises.check("08", "read_inflight", source)
    assert feedback.status == "hint" and "consecutive threads" in feedback.message, feedback
    assert "tail" not in feedback.message
    # the four loads one float4 apart from i = tid overlap the next thread's: read twice, and said so
    overlap = _solution()
    for old, new in (("src[i + step]", "src[i + 1]"), ("src[i + 2 * step]", "src[i + 2]"),
                     ("src[i + 3 * step]", "src[i + 3]")):
        overlap = overlap.replace(old, new)
    exercises.reset_tries()
    assert "read twice" in exercises.check("08", "read_inflight", overlap).message


def test_second_hints_leave_the_learner_a_step():
    """Graded hints: the second wrong answer gets a smaller step, not the code of the answer."""
    for step in (lesson08.ONE_LOAD_STEP, lesson08.SCATTERED_STEP):
        assert "i + step" not in step and "i + 2*step" not in step and "[" not in step
    one_load = _solution().replace(
        "    for (; i + 3 * step < n4; i += 4 * step) {      // four independent loads in flight per thread\n" + FOUR
        + "    }\n", "")
    exercises.reset_tries()
    exercises.check("08", "read_inflight", one_load)
    second = exercises.check("08", "read_inflight", one_load)
    assert "i + step" not in second.message and "i + 2*step" not in second.message, second


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

def _inflight_edit(old: str, new: str, phrase: str, keys: tuple[str, ...] = ()) -> Typical:
    return Typical(edited("08", "read_inflight", "READ_INFLIGHT_SOURCE", old, new), keys,
                   variable="READ_INFLIGHT_SOURCE", phrase=phrase)


def _reread_edit(old: str, new: str, phrase: str | None = None, keys: tuple[str, ...] = ()) -> Typical:
    return Typical(edited("08", "reread_load", "REREAD_SOURCE", old, new), keys, variable="REREAD_SOURCE",
                   phrase=phrase)


ONE_LOAD_ONLY = ("    for (; i + 3 * step < n4; i += 4 * step) {      // four independent loads in flight per thread\n"
                 + FOUR + "    }\n")

TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("08", "threads_for_link"): [
        Typical(fixed(lambda link, lat, per: link * lat), ("link_GBps * latency_ns",),
                lambda: lesson08.THREADS_CASES, phrase="not the threads"),
        Typical(fixed(lambda link, lat, per: link * lat / per / 3), ("link_GBps * latency_ns",),
                lambda: lesson08.THREADS_CASES),
        Typical(fixed(lambda link, lat, per: link * 1e9 * lat / per), phrase="power of 10^9"),
        Typical(fixed(lambda link, lat, per: link * lat * 8 / per), phrase="not bits"),
        Typical(fixed(lambda link, lat, per: link / lat / per), phrase="multiplies"),
        Typical(fixed(lambda link, lat, per: math.floor(link * lat / per)), phrase="rounded down"),
        Typical(fixed(lambda link, lat, per: round(link * lat / per)), phrase="rounded down"),
        Typical(fixed(lambda link, lat, per: int(link * lat) // per), phrase="rounded down")],
    ("08", "read_inflight"): [
        # the missing bounds check of the last load
        _inflight_edit("i + 3 * step < n4", "i < n4", "read past the end", ("i + 3 * step < n4",)),
        _inflight_edit("i += 4 * step", "i += step", "read twice", ("i += 4 * step",)),   # an off-by-3x stride
        # one load per iteration: every element read, but too few bytes in flight for 4,096 threads
        _inflight_edit(ONE_LOAD_ONLY, "", "waits a whole round trip"),
        _inflight_edit(TAIL, "", "tail loop"),                        # the elements past the last group of four
        _inflight_edit("partial[tid] = sum;", "", "partial[] is all zero"),
        _inflight_edit("void read_inflight(", "void read_many(", "no kernel named read_inflight"),
        _inflight_edit("i += 4 * step) {", "i += 5 * step) {", "leave gaps")],   # a group of loads skipped each time
    ("08", "reread_load"): [
        # loads that skip the L1: the first hint asks about the cache, it does not name the load to use
        _reread_edit("__ldg(&base[i])", "__ldcg(&base[i])", "crossed the bus", ("__ldg(&base[i])", "__ldg")),
        _reread_edit("__ldg(&base[i])", "__ldcv(&base[i])", "crossed the bus", ("__ldg(&base[i])", "__ldg")),
        _reread_edit("p < passes", "p < 1", "the point is the re-read"),
        _reread_edit("src + blockIdx.x * chunk4", "src + 0 * chunk4", "its OWN chunk"),
        _reread_edit("i < chunk4", "i <= chunk4", "read past the end"),
        _reread_edit("partial[blockIdx.x * blockDim.x + threadIdx.x] = sum;", "", "all zero")],
}
