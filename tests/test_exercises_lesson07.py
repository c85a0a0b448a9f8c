"""Lesson 07's exercises: the chase kernel and the random cycle; typical wrong answers get their specific hints, the
placeholders say "not yet"; the prediction text (issue 10). The kernel runs on the CPU backend in replay."""

from __future__ import annotations

import numpy as np

from helpers import exercises, experiments
from helpers.exercises import lesson07
from typical_wrong import Typical, edited, fixed

LOOP = "        j = next[j];        // the next address is the value just loaded: this load waits for the last one\n"


def _source() -> str:
    namespace = exercises.namespace("07")
    exec(exercises.solution("07", "chase"), namespace)
    return namespace["CHASE_SOURCE"]


def test_the_chase_solution_runs_and_the_untouched_loop_is_not_yet():
    source = _source()
    assert exercises.check("07", "chase", source).correct
    untouched = source.replace("    for (unsigned long long s = 0; s < steps; ++s) {\n" + LOOP + "    }\n",
                               "    // TODO (about 3 lines)\n")
    assert untouched != source
    assert exercises.check("07", "chase", untouched).status == "not yet"


def _sequential(lines, seed):
    table = np.zeros(lines * 32, np.uint32)
    table[np.arange(lines) * 32] = (np.arange(1, lines + 1) % lines) * 32
    return table


def _permutation_as_map(lines, seed):
    table = np.zeros(lines * 32, np.uint32)
    table[np.arange(lines) * 32] = np.random.default_rng(seed).permutation(lines) * 32
    return table


def _element_stride(lines, seed):
    order = np.random.default_rng(seed).permutation(lines)
    table = np.zeros(lines * 32, np.uint32)
    table[order] = np.roll(order, -1)
    return table


def test_line_cycle_judges_behaviour_not_form():
    def by_loop(lines, seed):
        order = list(np.random.default_rng(seed + 100).permutation(lines))
        table = np.zeros(lines * 32, np.int64)
        for a, b in zip(order, order[1:] + order[:1]):
            table[a * 32] = b * 32
        return table
    assert exercises.check("07", "line_cycle", by_loop).correct
    assert exercises.check("07", "line_cycle", lambda lines, seed: ...).status == "not yet"


def test_the_prediction_asks_what_lesson_00_did_not_show_and_follows_the_records(monkeypatch):
    """The prediction is the CPU's cache state (lesson 00's headline already gave the zero-copy / device factor); its
    answer is "same" unless the difference is beyond the run's spread and of one sign across the records."""
    import dataclasses

    from helpers.analysis import cpu_cache, spread

    latency = experiments.reference("latency")
    answer, why = lesson07.cpu_cache_truth(latency)
    across = spread.across_records("latency", cpu_cache.hot_minus_cold)
    assert answer == ("same" if not across.one_sign() else answer)
    assert f"{round(cpu_cache.hot_minus_cold(latency)):+,d} ns" in why and f"from {round(across.low):+,d} to {round(across.high):+,d}" in why
    untouched = exercises.compare("07", ..., latency)
    assert "no prediction" in untouched and why in untouched
    assert f"says {answer!r}" in lesson07.compare_prediction(answer, latency)
    wrong = next(c for c in lesson07.CPU_CACHE_CHOICES if c != answer)
    assert f"You predicted {wrong!r}; the run with the records says {answer!r}" in \
        lesson07.compare_prediction(wrong, latency)
    assert "Predict one of" in lesson07.compare_prediction(3.6, latency)
    word = {"faster": "更快", "same": "一样", "slower": "更慢"}[answer]    # issue 35: the Chinese edition's gloss
    assert f"says {answer!r}" in lesson07.compare_prediction(word, latency)
    rows = [dict(r) for r in latency.rows]
    hot = next(r for r in rows if r.get("cpu_cache") == "just_written")
    cold = next(r for r in rows if r.get("cpu_cache") == "evicted")
    hot["seconds"] = [s * 0.5 * np.median(cold["seconds"]) / np.median(hot["seconds"]) for s in hot["seconds"]]
    faster = dataclasses.replace(latency, rows=rows)
    monkeypatch.setattr(spread, "across_records", lambda name, figure, **kw: spread.Range(-600.0, -500.0, ("a", "b")))
    assert lesson07.cpu_cache_truth(faster)[0] == "faster"
    assert "says 'faster'" in lesson07.compare_prediction("faster", faster)
    assert "No prediction made" in lesson07.compare_value(..., 0.5, "x") and "0.5" in lesson07.compare_value(..., 0.5, "x")


def test_the_line_cycle_stub_runs_as_given():
    """Exercise 2's stub imports what it uses: run as given it returns the placeholder, never a NameError."""
    import nbformat

    from helpers import paths

    nb = nbformat.read(paths.LESSONS / "07-measure-latency.ipynb", as_version=4)
    stub = next(c.source for c in nb.cells if "exercise" in c.metadata.get("tags", []) and "line_cycle" in c.source)
    namespace: dict = {}
    exec(stub, namespace)
    assert namespace["line_cycle"](8, 1) is Ellipsis
    assert exercises.check("07", "line_cycle", namespace["line_cycle"]).status == "not yet"


def test_the_live_path_of_the_chase_check(monkeypatch):
    """Live, the check also runs the source on the GPU and reports the ns it timed: here the CPU backend stands in
    for the GPU (the path, not the figure, is under test)."""
    from types import SimpleNamespace

    from helpers import cpu, mode
    from helpers.memory import gpu

    monkeypatch.setattr(mode, "detect", lambda: SimpleNamespace(live=True))
    monkeypatch.setattr(lesson07, "live_module", lambda source: cpu.SourceModule(source, name="live.cu"))
    for name in ("mapped_empty", "device_pointer", "free"):
        monkeypatch.setattr(gpu, name, getattr(cpu, name))
    monkeypatch.setattr(gpu, "synchronize", lambda: None)
    monkeypatch.setattr(lesson07, "LIVE_BYTES", 2**20)
    feedback = exercises.check("07", "chase", _source())
    assert feedback.correct and "on the GPU, where it timed 0 ns per load over 1 MiB" in feedback.message, feedback


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

def _chase(old: str, new: str, phrase: str, keys: tuple[str, ...] = ("j = next[j]",)) -> Typical:
    """The chase solution with its first ``old`` made ``new``: its first hint says ``phrase``, never the loop."""
    return Typical(edited("07", "chase", "CHASE_SOURCE", old, new, 1), keys, variable="CHASE_SOURCE", phrase=phrase)


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("07", "chase"): [
        _chase("j = next[j];", "j = next[start];", "never moved on"),
        _chase("s < steps", "s <= steps", "one load too many", ("s < steps", "j = next[j]")),
        _chase("j = next[j];", "j = next[s];", "loop counter"),
        _chase("s = 0", "s = 1", "one load too few"),
        _chase("j = next[j];", "j = next[j + 4096];", "outside the table"),
        _chase("void chase_timed(", "void chase(", "no kernel named chase_timed"),
        _chase("j = next[j];", "j = next[j]", "did not build")],
    ("07", "line_cycle"): [
        Typical(fixed(lambda lines, seed: np.roll(np.arange(lines * 32, dtype=np.uint32), -32) // 32 * 32),
                ("np.roll(order, -1)", "permutation(lines)", "np.roll"), lambda: lesson07.CYCLE_CASES),
        Typical(fixed(lambda lines, seed: np.repeat(np.random.default_rng(seed).permutation(lines) * 32, 32)),
                ("np.roll(order, -1)", "np.roll"), lambda: lesson07.CYCLE_CASES),
        Typical(fixed(_sequential), ("np.roll",), phrase="predictable"),
        Typical(fixed(_permutation_as_map), ("np.roll",), phrase="misses the other lines"),
        Typical(fixed(_element_stride), ("np.roll",), phrase="inside a line"),
        Typical(fixed(lambda lines, seed: np.zeros(lines, np.uint32)), ("np.roll",),
                phrase="how many uint32 elements")],
}
