"""Lesson 14's exercises give the specific hint for typical wrong answers, and its prediction comparison works
on the untouched placeholder (issue 10). Replay mode: the kernel runs on the CPU backend and its order is
checked in the source; the generic tests are in test_exercises.py."""

from __future__ import annotations

import numpy as np
import pytest

from helpers import exercises
from helpers.exercises import lesson14
from typical_wrong import Typical, edited, fixed


def _shared_register(schedule):
    counter = register = 0
    for _, step in schedule:
        if step == "read":
            register = counter
        else:
            counter = register + 1
    return counter


def test_final_count_placeholder_and_rule():
    def final_count(schedule):
        ...
    assert exercises.check("14", "final_count", final_count).status == "not yet"
    assert all(lesson14.race_rule(s) == want for s, want in lesson14.RACE_CASES)


def _wait_solution() -> str:
    namespace: dict = {}
    exec(exercises.solution("14", "wait_for_flag"), namespace)
    return namespace["WAIT_SOURCE"]


FLAG_PARAM = "const volatile unsigned int *flag"
WAIT_FENCE = "        __threadfence_system();   // the payload loads below come after the flag load above\n"


@pytest.mark.parametrize("intrinsic", ["__ldcv", "__ldcg"])
def test_wait_for_flag_accepts_the_solution_and_refuses_a_cache_hint_spin(intrinsic):
    """Live on the H200 (CUDA 13.0) an __ldcv spin ran out of spins without seeing the host's flag: ptxas issued the
    weak load once, before the loop (the spin_loop experiment and the SASS); __ldcg the same. The check says so in both
    modes, from the source, and calls it a weak load, not an asm statement."""
    text = _wait_solution()
    assert exercises.check("14", "wait_for_flag", text).correct
    hinted = text.replace(FLAG_PARAM, "const unsigned int *flag").replace("now = *flag;", f"now = {intrinsic}(flag);")
    assert f"now = {intrinsic}(flag);" in hinted
    feedback = exercises.check("14", "wait_for_flag", hinted)
    assert feedback.status == "hint" and intrinsic in feedback.message and "before the loop" in feedback.message
    assert "weak load" in feedback.message and "asm" not in feedback.message


def _atomic(name: str) -> str:
    namespace: dict = {}
    exec(exercises.solution("14", name), namespace)
    return namespace["WAIT_SOURCE_ATOMIC_REF" if name == "wait_for_flag" else "PUBLISH_SOURCE_ATOMIC_REF"]


@pytest.mark.parametrize("name", ["wait_for_flag", "publish"])
def test_the_atomic_ref_forms_pass_on_the_cpu_backend(name):
    """cuda::atomic_ref<unsigned int, cuda::thread_scope_system> with acquire / release: <cuda/atomic> builds on the CPU
    backend, the host thread's flag is seen, and no fence is asked for."""
    text = _atomic(name)
    assert "#include <cuda/atomic>" in text and "__threadfence" not in text
    feedback = exercises.check("14", name, text)
    assert feedback.correct, feedback


def test_a_relaxed_atomic_flag_with_a_system_fence_passes():
    text = _atomic("publish").replace("memory_order_release", "memory_order_relaxed")
    text = text.replace("        cuda::atomic_ref", "        __threadfence_system();\n        cuda::atomic_ref")
    assert exercises.check("14", "publish", text).correct


def _solution() -> str:
    namespace: dict = {}
    exec(exercises.solution("14", "publish"), namespace)
    return namespace["PUBLISH_SOURCE"]


LOOP = "        for (unsigned long long i = 0; i < n; ++i) {\n            payload[i] = value;\n        }\n"
FENCE = "        __threadfence_system();   // every payload write is seen, by the host too, before the flag\n"
FLAG = "        *flag = raise;            // volatile: a real store, now\n"


def test_publish_accepts_other_spellings():
    text = _solution().replace("volatile unsigned int *flag", "unsigned int volatile * flag")
    text = text.replace("payload[i] = value;", "*(payload + i) = value;")
    assert exercises.check("14", "publish", text).correct


def test_compare_prediction():
    assert "No prediction" in lesson14.compare_prediction(..., 600.0)
    assert "600x" in lesson14.compare_prediction(..., 600.0)
    assert "within a factor of 2" in lesson14.compare_prediction(500, 600.0)
    assert "Far more than you guessed" in lesson14.compare_prediction(10, 600.0)
    assert "Less than you guessed" in lesson14.compare_prediction(5000, 600.0)
    for typed in ("50", -5):      # what was typed is named, with what to type instead: not "no prediction"
        said = lesson14.compare_prediction(typed, 600.0)
        assert f"you gave {typed!r}" in said and "positive number" in said and "No prediction" not in said


def test_compare_prediction_from_the_results():
    from helpers import experiments
    from helpers.findings import avoid_hazards_on_mapped_memory as found

    atomics, latency = experiments.atomics(), experiments.reference("latency")
    said = str(exercises.compare("14", 10, atomics, latency))
    assert f"{found.atomic_ratio(atomics):,.0f}x" in said and "round trip" in said, said
    assert "no prediction" in str(exercises.compare("14", ..., atomics, latency)).lower()


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

def _publish(old: str, new: str, phrase: str, keys: tuple[str, ...] = ()) -> Typical:
    return Typical(edited("14", "publish", "PUBLISH_SOURCE", old, new), keys, variable="PUBLISH_SOURCE",
                   phrase=phrase)


def _wait(old: str, new: str, phrase: str, keys: tuple[str, ...] = ()) -> Typical:
    return Typical(edited("14", "wait_for_flag", "WAIT_SOURCE", old, new), keys, variable="WAIT_SOURCE",
                   phrase=phrase)


def _atomic_ref(name: str, old: str, new: str, phrase: str) -> Typical:
    """The cuda::atomic_ref form of the solution with a weak order or a narrow scope."""
    variable = "WAIT_SOURCE_ATOMIC_REF" if name == "wait_for_flag" else "PUBLISH_SOURCE_ATOMIC_REF"
    return Typical(edited("14", name, variable, old, new), variable=variable, phrase=phrase)


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("14", "final_count"): [
        Typical(fixed(lambda schedule: sum(step == "write" for _, step in schedule)), ("register[thread] + 1",),
                lambda: [(s,) for s, _ in lesson14.RACE_CASES], phrase="number of writes"),
        Typical(fixed(_shared_register), phrase="its own copy"),
        Typical(fixed(lambda schedule: float(lesson14.race_rule(schedule))), phrase="whole number")],
    ("14", "publish"): [
        _publish(FENCE, "", "no fence", ("__threadfence_system()",)),
        _publish("__threadfence_system();", "__threadfence();", "Is the host inside its scope",
                 ("__threadfence_system()",)),
        _publish(LOOP + FENCE, FENCE + LOOP, "fence comes before the payload"),
        _publish(FENCE + FLAG, FLAG + FENCE, "fence comes after the flag"),
        _publish(LOOP + FENCE + FLAG, FLAG + LOOP + FENCE, "flag is written before the payload"),
        _publish(LOOP + FENCE + FLAG, "        for (unsigned long long i = 0; i < n; ++i) {\n"
                 "            payload[i] = value;\n" + FENCE + FLAG + "        }\n", "inside the loop"),
        _publish("volatile unsigned int *flag", "unsigned int *flag", "not volatile"),
        _publish("i < n;", "i <= n;", "last element of the payload"),
        _publish("payload[i] = value;", "payload[0] = value;", "loop over all n"),
        _publish("*flag = raise;", "*flag = 1;", "*flag = raise"),
        _publish("void publish(", "void publish_kernel(", "no kernel named publish"),
        _publish("*flag = raise;", "*flag = raise", "did not build"),
        _atomic_ref("publish", "memory_order_release", "memory_order_relaxed", "relaxed"),
        _atomic_ref("publish", "thread_scope_system", "thread_scope_block", "Is the host")],
    ("14", "wait_for_flag"): [
        _wait(FLAG_PARAM, "const unsigned int *flag", "plain load", ("volatile",)),
        _wait("__threadfence_system();", "__threadfence();", "Is the host", ("__threadfence_system()",)),
        _wait(FLAG_PARAM, "const unsigned int *__restrict__ flag", "read-only data path"),
        _wait(WAIT_FENCE, "", "nothing comes between the flag load and the payload loads"),
        _wait("now != expected && spins < max_spins", "now != expected", "still spinning"),
        _wait("now != expected && spins < max_spins", "false", "Did the kernel wait"),
        _wait("i < n;", "i <= n;", "past the end"),
        _wait("void wait_for_flag(", "void wait_kernel(", "no kernel named wait_for_flag"),
        _atomic_ref("wait_for_flag", "memory_order_acquire", "memory_order_relaxed", "relaxed"),
        _atomic_ref("wait_for_flag", "thread_scope_system", "thread_scope_device", "Is the host")],
}
