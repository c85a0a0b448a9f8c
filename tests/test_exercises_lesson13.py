"""Lesson 13's exercises give the specific hint for typical wrong answers, and its prediction comparison works
on the untouched placeholder (issue 10). Replay mode; the generic tests are in test_exercises.py."""

from __future__ import annotations

import dataclasses
import math

import pytest

from helpers import exercises, experiments
from helpers.exercises import lesson13
from typical_wrong import Typical, fixed


def test_reads_needed_reports_the_measured_answer():
    reg = experiments.registered()
    per_gib, read = lesson13.registration_seconds(reg)
    solution = lambda r, t, share=0.1: math.ceil(r * (1 - share) / (share * t))  # noqa: E731
    feedback = exercises.check("13", "reads_needed", solution, measured=reg)
    assert feedback.correct and f"{lesson13.reads_needed_rule(per_gib, read)} reads" in feedback.message, feedback


PAGE = 4096


def test_neighbours_pinned_placeholder_and_the_recorded_probes():
    assert exercises.check("13", "neighbours_pinned", ...).status == "not yet"
    assert exercises.check("13", "neighbours_pinned", lambda a, n, page_size=4096: None).status == "not yet"
    feedback = exercises.check("13", "neighbours_pinned", lesson13.neighbours_pinned_rule,
                               measured=experiments.registered())
    assert feedback.correct and "pinned bytes that were not theirs" in feedback.message
    tried = experiments.registered().select(allocation="alignment probe (cuMemHostRegister)")
    probes = [r for r in tried if r["works"]]
    odd = [r for r in probes if any(lesson13.neighbours_pinned_rule(r["page_offset"], r["nbytes"]))]
    # issue 31: one clause says how many the driver accepted, the next how many of those pinned others' bytes
    accepted = f"all {len(tried)}" if len(probes) == len(tried) else f"{len(probes)} of the {len(tried)}"
    assert (f"The driver accepted {accepted} alignment probes; as pages are pinned whole, {len(odd)} of them pinned "
            "bytes") in feedback.message
    refused = dataclasses.replace(experiments.registered(), rows=[
        dict(r, works=False) if r.get("page_offset") == 4095 else r for r in experiments.registered().rows])
    message = exercises.check("13", "neighbours_pinned", lesson13.neighbours_pinned_rule, measured=refused).message
    assert f"accepted {len(tried) - 1} of the {len(tried)} alignment probes; as pages are pinned whole, {len(odd) - 1} of" in message


def test_reads_needed_counts_equality_as_enough():
    """Issue 31: "at most `share`" includes equality; one case's bound is a whole number exact in binary floating
    point, where the solution's ceil gives it and `int(x) + 1` one more."""
    whole = [(r, t, s) for r, t, s in lesson13.READ_CASES if (r * (1 - s) / (s * t)).is_integer()]
    assert whole and all(lesson13.reads_needed_rule(r, t, s) == r * (1 - s) / (s * t) for r, t, s in whole)
    r, t, s = whole[0]
    assert r / (r + lesson13.reads_needed_rule(r, t, s) * t) == s
    assert "ceil" in exercises.solution("13", "reads_needed")


def test_the_refusal_says_which_rule_the_array_breaks():
    """Issue 31: the refusal names what is wrong, the start, the size or both, never "one or the other"."""
    from helpers import errors
    from helpers.memory import gpu
    from helpers.memory.pages import page_aligned_empty

    said = {}
    for name, array in (("start", page_aligned_empty(2048)[1:1025]), ("size", page_aligned_empty(2048)[:1000]),
                        ("both", page_aligned_empty(2048)[1:])):
        with pytest.raises(errors.RegistrationError) as caught:
            gpu._check_registrable(array)
        said[name] = str(caught.value)
    first = {name: text.split(".")[0] for name, text in said.items()}   # the sentence that says what is wrong
    assert "past a page boundary" in first["start"] and "size" not in first["start"]
    assert "not a multiple" in first["size"] and "past a page" not in first["size"]
    assert "past a page boundary, and its size" in said["both"]
    assert all(" or " not in text.split(".")[0] for text in said.values())


def test_the_rule_agrees_with_registered_array():
    """An array pins nothing of its neighbours exactly when RegisteredArray accepts it (contiguous arrays)."""
    from helpers import errors
    from helpers.memory import gpu
    from helpers.memory.pages import page_aligned_empty

    base = page_aligned_empty(4096)
    for array in (base, base[1:1025], base[:1000], base[1024:2048], base[4:1028]):
        try:
            gpu._check_registrable(array)
            accepted = True
        except errors.RegistrationError:
            accepted = False
        assert accepted == (lesson13.neighbours_pinned_rule(array.ctypes.data, array.nbytes) == (0, 0))


def test_registered_array_refuses_before_it_needs_a_gpu():
    """Issue 31: the refusals section 3 shows, and self-check 3's array, raise RegistrationError without a GPU (the
    array is checked before the driver is called), not NoGPUError."""
    from helpers import errors
    from helpers.memory import gpu
    from helpers.memory.pages import page_aligned_empty

    for array in (page_aligned_empty(2048)[1:], page_aligned_empty(2048)[::2]):
        with pytest.raises(errors.RegistrationError, match="page|contiguous"):
            gpu.RegisteredArray(array)


def test_the_verdict_counts_the_runs_it_judges_over(replay):
    """Issue 31: the write-combined verdict says how many recorded runs of the machine it read, in short sentences."""
    from helpers.findings import use_write_combined_and_registered_memory as found

    wc = experiments.write_combined()
    said = found.describe_write_combined(wc)
    runs = lesson13.machine_runs(wc)
    assert f"every recorded run of that machine ({runs} runs: the machine's committed records in data/)" in said
    assert lesson13.machine_runs(dataclasses.replace(wc, live=True)) >= 1
    live = found.runs_said(dataclasses.replace(wc, live=True))      # issue 31: where the runs can be seen
    assert live == "1 run, this one" or "this one and the machine's committed records in data/" in live
    assert max(len(sentence.split()) for sentence in said.split(". ")) < 45, said


def test_the_probes_table_shows_the_error_column_only_where_a_probe_failed():
    from helpers.findings import use_write_combined_and_registered_memory as found

    reg = experiments.registered()
    assert "error" not in found.probes(reg).header
    failed = dataclasses.replace(reg, rows=[dict(r, works=False, error="CUDA_ERROR_INVALID_VALUE")
                                            if r.get("page_offset") == 4095 else r for r in reg.rows])
    assert "error" in found.probes(failed).header


def test_compare_prediction(replay):
    wc = experiments.write_combined()
    ratio = (wc.one(allocation="mapped + write-combined", side="cpu", op="read")["GBps"]
             / wc.one(allocation="mapped", side="cpu", op="read")["GBps"])
    assert "No prediction" in lesson13.compare_prediction(..., wc)
    assert f"{1 / ratio:.2f}x" in lesson13.compare_prediction(..., wc)
    said = str(lesson13.compare_prediction(10, wc))      # replay names the recording VM, not "the host"
    assert f"did not show in {lesson13.recording_machine(wc.provenance)}" in said and "'s host" not in said
    assert "did not show on this machine" in lesson13.compare_prediction(10, dataclasses.replace(wc, live=True))
    assert "within 50%" in lesson13.compare_prediction(1 / ratio, wc)
    assert "you gave 'fast'" in lesson13.compare_prediction("fast", wc)   # issue 31: named, not "no prediction"
    slow = dataclasses.replace(wc, rows=[dict(r, GBps=r["GBps"] / 20) if r["allocation"] != "mapped" else r
                                         for r in wc.rows])
    assert "slower than you expected" in lesson13.compare_prediction(2, slow)



# Typical inputs of the prediction cell that are not a prediction, and the words the reply must say for each: it
# names what was typed and asks for a positive number; only the untouched `...` is "no prediction" (issue 31).
PREDICTIONS = [("10x", "you gave '10x'"), (0, "you gave 0"), (-2, "you gave -2"), (True, "you gave True"),
               (float("nan"), "you gave nan"), ([10], "you gave [10]")]


@pytest.mark.parametrize("typed, said", PREDICTIONS, ids=[repr(t) for t, _ in PREDICTIONS])
def test_a_prediction_that_is_not_a_positive_number_is_named_and_asked_again(typed, said):
    reply = str(exercises.compare("13", typed, experiments.write_combined()))
    assert said in reply and "a positive number" in reply and "No prediction" not in reply


def test_a_too_low_guess_gets_the_reason_the_verdict_gives():
    """Issue 31: "slower than you expected" gives the verdict's reason: an ordinary cached mapping where the verdict
    says the CPU got one, uncached loads only where the flag reached the CPU."""
    from helpers.findings import use_write_combined_and_registered_memory as found

    wc = experiments.write_combined()
    said = str(lesson13.compare_prediction(0.5, wc))
    assert not lesson13.write_combined_verdict(wc)["cpu_wc_honoured"]
    assert "ordinary cached mapping" in said and "own trip to memory" not in said
    assert "did not give the CPU a write-combined mapping" in found.describe_write_combined(wc)
    slow = dataclasses.replace(wc, rows=[dict(r, GBps=r["GBps"] / 20, seconds=[t * 20 for t in r["seconds"]])
                                         if (r["allocation"], r["side"], r["op"]) ==
                                         ("mapped + write-combined", "cpu", "read") else r for r in wc.rows])
    verdict = lesson13.write_combined_verdict(slow)
    said = str(lesson13.compare_prediction(2, slow))
    assert "slower than you expected" in said
    assert ("own trip to memory" in said) == verdict["cpu_wc_honoured"] and "ordinary cached mapping" not in said


def test_the_reads_needed_message_names_the_run_it_quotes(replay):
    """Issue 31: "On the recorded run" in replay, "On this run" only live."""
    reg = experiments.registered()
    rule = lesson13.reads_needed_rule
    said = exercises.check("13", "reads_needed", rule, measured=reg).message
    assert "On the recorded run: registering and unregistering 1 GiB" in said   # section 3's words for the figure
    live = exercises.check("13", "reads_needed", rule, measured=dataclasses.replace(reg, live=True)).message
    assert "On this run: registering and unregistering 1 GiB" in live


def _lesson13_markdown() -> dict[str, str]:
    import nbformat

    from helpers.paths import LESSONS

    nb = nbformat.read(LESSONS / "13-use-write-combined-and-registered-memory.ipynb", as_version=4)
    return {cell.id: cell.source for cell in nb.cells}


def test_self_check_3_agrees_with_neighbours_pinned():
    """Issue 31: the self-check names only the neighbours the rule finds for `page_aligned_empty(2048)[1:]`."""
    from helpers.memory.pages import page_aligned_empty

    array = page_aligned_empty(2048)[1:]
    before, after = lesson13.neighbours_pinned_rule(array.ctypes.data, array.nbytes)
    answer = next(text for text in _lesson13_markdown().values() if "page_aligned_empty(2048)[1:]</code>" in text)
    answer = " ".join(answer.split("page_aligned_empty(2048)[1:]</code>")[1].split())
    assert f"pin the {before} bytes before it" in answer
    assert ("after it" in answer) == bool(after) and ("ends on one" in answer) == (not after)


def test_the_text_names_the_run_and_the_machine_not_here():
    """Issue 31: the text says nothing of "this run" or "here" that replay would make false."""
    import re

    text = " ".join(" ".join(_lesson13_markdown().values()).split())
    assert not re.search(r"this run's|measured it here|what this machine|this driver", text), re.findall(r".{40}this run's", text)
    assert "this machine" not in _lesson13_markdown()["f93a3997"]

# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.

TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("13", "reads_needed"): [
        Typical(fixed(lambda r, t, share=0.1: math.ceil(r / (share * t))), ("share) / (share *",),
                lambda: lesson13.READ_CASES, phrase="TOTAL time"),
        Typical(fixed(lambda r, t, share=0.1: math.ceil(r / t)), ("share) / (share *",), lambda: lesson13.READ_CASES,
                phrase="whatever `share` is"),
        Typical(fixed(lambda r, t, share=0.1: r * (1 - share) / (share * t)), phrase="whole number"),
        Typical(fixed(lambda r, t, share=0.1: math.floor(r * (1 - share) / (share * t))), phrase="round up"),
        Typical(fixed(lambda r, t, share=0.1: math.ceil(r * (1 - share) / (share * t)) + 5), phrase="the fewest"),
        # issue 31: `int(x) + 1` is right unless the bound is whole; READ_CASES holds one exact in binary floats
        Typical(fixed(lambda r, t, share=0.1: int(r * (1 - share) / (share * t)) + 1), phrase="Equal is enough"),
        # issue 31 (fifth walk): every slip its own hint, judged on the other cases where one result cannot tell
        Typical(fixed(lambda r, t, share=0.1: next(k for k in range(10**6) if r / (r + k * t) < share)),
                phrase="Equal is enough"),     # a loop `while ... >= share` stops one read late
        Typical(fixed(lambda r, t, share=0.1: math.ceil((r - share * r) / share * t)), phrase="divide by both"),
        Typical(fixed(lambda r, t, share=0.1: math.ceil(r * share / ((1 - share) * t))),
                phrase="the registration the rest"),
        Typical(fixed(lambda r, t, share=0.1: round(r * (1 - share) / (share * t))), phrase="nearest"),
        Typical(fixed(lambda r, t, share=0.1: next(k for k in range(10**6) if r / (r + (k + 1) * t) <= share)),
                phrase="one read early"),
        Typical(fixed(lambda r, t, share=0.1: math.ceil(r * (1 - share) / (share * t)) + 1),
                phrase="one read more than the fewest")],
    ("13", "neighbours_pinned"): [
        Typical(fixed(lambda a, n, page_size=4096: (a % page_size, page_size - (a + n) % page_size)),
                ("-(address + nbytes) % page_size",), lambda: lesson13.NEIGHBOUR_CASES,
                phrase="exactly on a page boundary"),
        Typical(fixed(lambda a, n, page_size=4096: (a % page_size, (a + n) % page_size)),
                ("-(address + nbytes) % page_size",), lambda: lesson13.NEIGHBOUR_CASES,
                phrase="not what is left of that page"),
        Typical(fixed(lambda a, n, page_size=4096: (a % page_size, -n % page_size)),
                ("-(address + nbytes) % page_size",), lambda: lesson13.NEIGHBOUR_CASES, phrase="length only"),
        Typical(fixed(lambda a, n, page_size=4096: ((page_size - a % page_size) % page_size, -(a + n) % page_size)),
                phrase="first byte"),
        Typical(fixed(lambda a, n, page_size=4096: (a % 4096, -(a + n) % 4096)), phrase="page_size argument"),
        Typical(fixed(lambda a, n, page_size=4096: (-(a + n) % page_size, a % page_size)), phrase="swapped"),
        Typical(fixed(lambda a, n, page_size=4096: a % page_size + -(a + n) % page_size),
                phrase="pair of whole numbers"),
        # issue 31 (fifth walk): the stub's `last = address + nbytes - 1` counted itself; off by one each side
        Typical(fixed(lambda a, n, page_size=4096: (a % page_size, page_size - (a + n - 1) % page_size)),
                phrase="one byte too many after it. The last byte belongs to the range"),
        Typical(fixed(lambda a, n, page_size=4096: (a % page_size, -(a + n) % page_size - 1)),
                phrase="one byte too few after it"),
        Typical(fixed(lambda a, n, page_size=4096: (a % page_size + 1, -(a + n) % page_size)),
                phrase="one byte too many before it"),
        Typical(fixed(lambda a, n, page_size=4096: (a % page_size - 1, -(a + n) % page_size)),
                phrase="one byte too few before it"),
        Typical(fixed(lambda a, n, page_size=4096: (page_size - -a % page_size, -(a + n) % page_size)),
                phrase="starts exactly on a page boundary")],
}


SOLUTION_ALOUD = ("ceil", "<=", "share) / (share", "% page_size", "address % page")
WRONG_13 = [(name, i) for (lesson, name), typical in TYPICAL.items() for i in range(len(typical))]


@pytest.mark.parametrize("name, i", WRONG_13, ids=[f"{name}-{i}" for name, i in WRONG_13])
def test_every_slip_gets_its_own_hint_and_a_smaller_step(name, i):
    """Issue 31 (fifth walk): each typical wrong answer is refused; its first hint names its slip, with counts in
    the singular where they are 1; the second step differs from every other slip's and does not read the solution
    aloud (tests/test_hints.py checks the grading itself)."""
    import re

    exercises.reset_tries()
    answer = TYPICAL[("13", name)][i].wrong()
    first = exercises.check("13", name, answer)
    second = exercises.check("13", name, answer)
    exercises.reset_tries()
    assert first.status == "hint" and TYPICAL[("13", name)][i].phrase in first.message, first
    assert not re.search(r"\b1 (reads|bytes)\b", first.message), first
    step = second.message.split("Next step:")[1]
    assert not any(words in step for words in SOLUTION_ALOUD), step
    others = set()
    for j, other in enumerate(TYPICAL[("13", name)]):
        if j != i and other.phrase != TYPICAL[("13", name)][i].phrase:
            exercises.check("13", name, other.wrong())
            others.add(exercises.check("13", name, other.wrong()).message.split("Next step:")[1])
            exercises.reset_tries()
    assert step not in others, step


def _markdown_13() -> str:
    import nbformat

    from helpers.paths import LESSONS

    cells = nbformat.read(LESSONS / "13-use-write-combined-and-registered-memory.ipynb", as_version=4).cells
    return " ".join(" ".join(cell.source for cell in cells if cell.cell_type == "markdown").split())


def test_the_summary_says_what_section_1_found_and_where_the_guide_holds(replay):
    """Issue 31: the summary's first point is computed from section 1's result: the machine, the CPU's read rate of
    write-combined memory against ordinary memory, and where the Programming Guide's "prohibitively slow" holds."""
    from helpers.findings import use_write_combined_and_registered_memory as found

    wc = experiments.write_combined()
    verdict = lesson13.write_combined_verdict(wc)
    reg = experiments.registered()
    said = " ".join(str(found.in_short(wc, reg)).split())
    assert lesson13.recording_machine(wc.provenance) in said and "Section 1, on" in said
    if not verdict["cpu_wc_honoured"] and verdict["cpu_read_ratio"] >= 0.5:
        assert f"at {verdict['cpu_read_ratio']:.0%} of the ordinary rate" in said
        # issue 31 (fourth walk): the Guide's words unconditioned; the condition is the course's, said so
        assert '"prohibitively slow", with no condition' in said and "is the course's reasoning" in said
        assert "hold where the CPU maps" not in said and "without a hypervisor" not in said
    slow = dataclasses.replace(wc, rows=[dict(r, GBps=r["GBps"] / 10, seconds=[t * 10 for t in r["seconds"]])
                                         if (r["allocation"], r["side"], r["op"]) ==
                                         ("mapped + write-combined", "cpu", "read") else r for r in wc.rows],
                               provenance={"gpu": "Test GPU"}, live=True)
    assert "this machine (live)" in str(found.in_short(slow, reg))
    text = _markdown_13()
    summary = text[text.index("## Summary"):text.index("## What's next")]
    assert "prohibitively" not in summary and "SDM" not in text      # the computed point says it, with the machine


def test_lesson_13_sets_write_combined_addresses_against_the_documents(replay):
    """Issue 31: section 2 no longer says every cudaHostAlloc allocation keeps its host address: it names
    write-combined memory as the documented exception, and the sentence under the table says what the record did."""
    from helpers.findings import use_write_combined_and_registered_memory as found

    text = _markdown_13()
    assert "every `cudaHostAlloc` allocation, even one made" not in text
    assert 'two exceptions with *"a distinct host and device address"*: write-combined memory and memory registered' \
        in text and '"* (lesson 04)' not in text     # issue 31 (fourth walk): both exceptions; the quote is the API's
    summary = str(found.in_short(experiments.write_combined(), experiments.registered()))
    assert "except write-combined memory, documented as distinct" in summary
    identity = experiments.address_identity()
    said = str(found.addresses(identity, identity.provenance["attributes"]))
    if identity.one(allocation="mapped + write-combined")["equal"]:
        assert "though the documents give it a distinct one: do not rely on it" in said


def test_going_deeper_says_what_the_page_attribute_table_holds():
    """Issue 31: the guest's PAT is named with what it holds, cited to Intel's manual."""
    text = _markdown_13()
    pat = text[text.index("page attribute table"):][:260]
    assert "memory types" in pat and "Vol. 3A, *Page Attribute Table*" in pat


def test_the_summary_is_one_list_and_the_text_predicts_nothing_unmeasured():
    """Issue 31 (fourth walk): the summary's points render as one list (the computed output, no Markdown bullets
    after it); no sentence predicts what bare metal shows; the self-check gives the Guide's words and says whose
    reasoning the condition is; section 3 names its subjects and columns as shown."""
    from helpers.findings import use_write_combined_and_registered_memory as found

    text = _markdown_13()
    summary = text[text.index("## Summary"):text.index("## What's next")]
    assert "- " not in summary
    reg = experiments.registered()
    points = str(found.in_short(experiments.write_combined(), reg)).splitlines()
    assert len(points) == 4 and all(point.startswith("- ") for point in points)
    refused = dataclasses.replace(reg, rows=[dict(r, works=False) if r.get("page_offset") == 4095 else r
                                             for r in reg.rows])
    assert "refused 1 of its" in str(found.in_short(experiments.write_combined(), refused))
    assert "bare metal" not in text and "without a hypervisor" not in text
    check1 = text[text.index("1. When is write-combined memory"):text.index("2. On a GPU")]
    assert '*"prohibitively slow"*' in check1 and "the course's reasoning" in check1
    assert "It also times" not in text and "`zc.experiments.registered()` also times registering" in text
    assert "the italic line above the table names it" in text and "`works` column" in text
    assert "caption names it" not in text


def test_the_reads_needed_hints_leave_the_learner_the_algebra_and_the_function():
    """Issue 31 (fourth walk): no second step writes the inequality out or names math.ceil."""
    wrong = [lambda r, t, share=0.1: math.ceil(r / (share * t)),
             lambda r, t, share=0.1: math.floor(r * (1 - share) / (share * t)),
             lambda r, t, share=0.1: r * (1 - share) / (share * t),
             lambda r, t, share=0.1: math.ceil(r * (1 - share) / (share * t)) + 5]
    for answer in wrong:
        exercises.reset_tries()
        exercises.check("13", "reads_needed", answer)
        step = exercises.check("13", "reads_needed", answer).message.split("Next step:")[1]
        assert "ceil" not in step and "<=" not in step and "register / (register" not in step, step
    exercises.reset_tries()
