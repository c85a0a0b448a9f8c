"""The platforms lesson's exercises give the specific hint for typical wrong answers, and its prediction comparison
works on the untouched placeholder. Replay mode; the generic tests are in test_exercises.py."""

from __future__ import annotations

from helpers import exercises
from helpers.exercises import lesson15
from typical_wrong import Typical, fixed


def _class_ignoring(*ignored: str):
    def platform_class(a):
        if a["INTEGRATED"] and "integrated" not in ignored:
            return "integrated"
        if "hmm" in ignored and a["PAGEABLE_MEMORY_ACCESS"]:
            return "coherent_c2c"
        if "atomics" in ignored and a["HOST_NATIVE_ATOMIC_SUPPORTED"]:
            return "coherent_c2c"
        if a["PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES"] and a["HOST_NATIVE_ATOMIC_SUPPORTED"] \
                and "coherent" not in ignored:
            return "coherent_c2c"
        return "discrete_pcie"
    return platform_class


def test_platform_class_matches_the_doctor():
    from helpers.platform import doctor
    from helpers.platform.facts import GpuFacts

    for what, attributes, want in lesson15.PLATFORM_CASES:
        assert doctor.platform_class(GpuFacts("test", (9, 0), attributes)) == want, what


def test_no_first_hint_gives_the_answer_away():
    """The hints name the concept to revisit, never the cases' answers."""
    for typical in TYPICAL[("15", "platform_class")]:
        exercises.reset_tries()
        message = exercises.check("15", "platform_class", typical.wrong()).message
        assert "return 'coherent_c2c'" not in message and "USES_HOST_PAGE_TABLES and" not in message
    message = exercises.check("15", "passes_until_migration_wins", TYPICAL[("15", "passes_until_migration_wins")][0]
                              .wrong()).message
    assert "7" not in message.split("returned 8")[1], message


def test_passes_reports_the_measured_answer():
    rows = [{"memory": kind, "nbytes": 1 << 30, "passes": k, "seconds": [s]} for kind, k, s in (
        ("mapped", 1, 0.021), ("mapped", 8, 0.168), ("managed, migrating", 1, 0.3), ("managed, migrating", 8, 0.31))]
    solution = lambda z, m: lesson15.passes_rule(z, m)  # noqa: E731
    feedback = exercises.check("15", "passes_until_migration_wins", solution, measured=rows, nbytes=1 << 30)
    assert feedback.correct and "from 16 passes on" in feedback.message, feedback


def test_compare_prediction():
    assert "No prediction" in lesson15.compare_prediction(..., 0.97)
    assert "within 10 points" in lesson15.compare_prediction(0.9, 0.97)
    assert "less than you expected" in lesson15.compare_prediction(0.5, 0.97)
    assert "more than you expected" in lesson15.compare_prediction(1.0, 0.6)
    for typed in ("80%", -0.5):   # what was typed is named, with what to type instead: not "no prediction"
        said = lesson15.compare_prediction(typed, 0.97)
        assert f"you gave {typed!r}" in said and "e.g. 0.8" in said and "No prediction" not in said


def test_compare_prediction_from_the_result():
    from helpers import experiments
    from helpers.findings import take_zero_copy_beyond_one_pcie_gpu as found

    traffic = experiments.cpu_traffic()
    said = str(exercises.compare("15", 0.5, traffic))
    where = "live on" if traffic.live else "recorded on"
    assert f"{found.share_with_threads(traffic):.0%}" in said and where in said, said
    assert "no prediction" in str(exercises.compare("15", ..., traffic)).lower()


def test_a_percentage_typed_as_a_number_is_read_as_one():
    """Issue 35's walk: 88 meant 88 %, not 8,800 % and "lost more than you expected"; the reading is said."""
    share = 0.88
    said = exercises.compare("15", 88, share)
    assert "(read 88 as 88 %, i.e. 0.88) You predicted 88%" in said and "within 10" in said
    assert "read" not in exercises.compare("15", 0.88, share).split("You predicted")[0]


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("15", "platform_class"): [
        Typical(fixed(lambda a: "integrated" if a["INTEGRATED"] else
                      "coherent_c2c" if a["PAGEABLE_MEMORY_ACCESS"] else "discrete_pcie"),
                ('USES_HOST_PAGE_TABLES"] and attributes["HOST_NATIVE_ATOMIC_SUPPORTED',),
                lambda: [(dict(a),) for _, a, _ in lesson15.PLATFORM_CASES]),
        Typical(fixed(_class_ignoring("integrated")), phrase="one DRAM"),
        Typical(fixed(_class_ignoring("coherent")), phrase="page tables"),
        Typical(fixed(_class_ignoring("hmm")), phrase="HMM"),
        Typical(fixed(_class_ignoring("atomics")), phrase="AtomicOps")],
    ("15", "passes_until_migration_wins"): [
        Typical(fixed(lambda z, m: 8), ("m_step >= z_step",), lambda: lesson15.MIGRATION_CASES,
                phrase="only where the lines are pinned"),
        Typical(fixed(lambda z, m: 3), ("m_step >= z_step",), lambda: lesson15.MIGRATION_CASES, phrase="FIRST whole k"),
        Typical(fixed(lambda z, m: lesson15.passes_rule(z, m) or 99), phrase="can it ever catch up"),
        Typical(fixed(lambda z, m: None if lesson15.passes_rule(z, m) == 7 else lesson15.passes_rule(z, m)),
                phrase="does catch up"),
        # issue 35's walk: the slopes compared, the 1-pass times not: None where migrating wins from the first pass
        Typical(fixed(lambda z, m: None if (m[1] - m[0]) >= (z[1] - z[0]) else lesson15.passes_rule(z, m)),
                phrase="already takes less time for one pass"),
        Typical(fixed(lambda z, m: (lesson15.passes_rule(z, m) or 0) - 0.5 if lesson15.passes_rule(z, m) else None),
                phrase="whole passes"),
        # the crossing rounded to the nearest pass instead of the first whole pass past it (a learner's walk)
        Typical(fixed(lambda z, m: round(1 + (m[0] - z[0]) / ((z[1] - z[0]) / 7 - (m[1] - m[0]) / 7))
                      if (m[1] - m[0]) < (z[1] - z[0]) else None), phrase="FIRST whole k"),
        # the 8-pass point taken as 8 extra passes instead of 7 (a learner's walk)
        Typical(fixed(lambda z, m: lesson15._passes_with(z, m, 8)), phrase="how many extra passes")],
}
