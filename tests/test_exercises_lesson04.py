"""Lesson 04's exercises (map-pages-on-the-gpu) give the specific hint for typical wrong answers, judge the device
address by what a kernel writes through it, and its prediction says "no prediction" on the untouched placeholder.
Replay mode (the CPU backend); the generic tests are in test_exercises.py and test_hints.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from helpers import exercises, experiments
from helpers.exercises import lesson04
from typical_wrong import Typical, edited, fixed


@pytest.fixture(autouse=True)
def _fresh_tries():
    exercises.reset_tries()
    yield
    exercises.reset_tries()


def _solution(name: str):
    namespace = exercises.namespace("04")
    exec(compile(exercises.solution("04", name), "<solution>", "exec"), namespace)
    return namespace[name]


def test_the_solution_passes_and_says_why_uva_makes_the_addresses_equal():
    feedback = exercises.check("04", "device_address", _solution("device_address"))
    assert feedback.correct, feedback
    assert "A kernel wrote through your address" in feedback.message
    assert "same virtual page numbers" in feedback.message and "offset" in feedback.message


@pytest.mark.usefixtures("replay")
def test_a_correct_address_in_replay_names_the_cpu_backend_as_what_gave_d_a():
    """Issue 31: in replay no driver gave d_a; the message says the CPU backend did, and what the driver does live."""
    feedback = exercises.check("04", "device_address", _solution("device_address"))
    assert feedback.correct and "the CPU backend gave the host address" in feedback.message, feedback
    assert "Here the driver's d_a" not in feedback.message


def test_strides_are_accepted_too():
    feedback = exercises.check("04", "device_address", lambda a, i, d_a: d_a + i * a.strides[0])
    assert feedback.correct, feedback


def test_the_untouched_placeholder_is_not_yet():
    assert exercises.check("04", "device_address", ...).status == "not yet"
    assert exercises.check("04", "device_address", lambda a, i, d_a: ...).status == "not yet"


def test_a_wrong_address_on_mapped_memory_never_reaches_the_kernel():
    calls = []

    def only_wrong_on_mapped_memory(a, i, d_a):
        calls.append(d_a)
        right = d_a + i * a.itemsize
        arithmetic = 2 * len(lesson04.address_cases())   # each case twice: as given, and with other values stored
        return right if len(calls) <= arithmetic else d_a + 10 * a.nbytes

    feedback = exercises.check("04", "device_address", only_wrong_on_mapped_memory)
    assert feedback.status == "hint" and "outside the array" in feedback.message, feedback


def _agreeing(identity) -> int:
    attrs = lesson04.ran_with(identity)     # the record's in replay, this GPU's live
    return sum(lesson04.same_address_rule(r["allocation"], attrs) == bool(r["equal"]) for r in identity.rows)


def test_same_address_takes_the_result_itself():
    """Issue 31: the rule follows the documents; where the run kept an address no document promises (write-combined
    on the recorded driver), the message says the rule is right not to count on it."""
    identity = experiments.address_identity()
    feedback = exercises.check("04", "same_address", _solution("same_address"), measured=identity)
    n = len(identity.rows)
    assert feedback.correct and f"{_agreeing(identity)} of {n} kinds" in feedback.message, feedback
    if identity.one(allocation="mapped + write-combined")["equal"]:
        assert "(mapped + write-combined), the driver kept the host address" in feedback.message
        assert "right not to count on it" in feedback.message


def test_the_rule_promises_write_combined_memory_no_host_address():
    """Issue 31: the Unified Addressing section gives write-combined memory a distinct address; the rule (and so the
    findings' promises) never promises equality for it, and the solution agrees."""
    solution = _solution("same_address")
    for uva in (0, 1):
        attrs = {"UNIFIED_ADDRESSING": uva, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": 1}
        assert not lesson04.same_address_rule("mapped + write-combined", attrs)
        assert not solution("mapped + write-combined", attrs)
    assert lesson04.same_address_rule("mapped + portable", {"UNIFIED_ADDRESSING": 1})


def test_the_lesson_quotes_the_documented_exceptions():
    """Issue 31: section 1 quotes the Unified Addressing section's note and its disjoint-addressing exceptions;
    section 3 lists write-combined memory among the cases; VFIO is defined where it is first named."""
    text = " ".join(" ".join(_markdown_04()).split())
    section3 = text[text.index("## 3."):text.index("## 4.")]
    assert ('"Note that this is not the case for memory allocated using the flag cudaHostAllocWriteCombined"'
            in text)
    assert '"there exists a distinct host and device address for the memory"' in text
    assert "three cases where equality is not promised" in section3 and "**Write-combined memory.**" in section3
    assert "contradicts the documentation" in section3 and "two cases" not in text
    first = text.index("VFIO")
    assert text[first:first + 80].startswith("VFIO, the Linux kernel's framework that hands a whole device")
    assert "device-passthrough" not in text


def test_the_prediction_says_no_prediction_on_the_placeholder_and_compares_a_number():
    identity = experiments.address_identity()
    equal = sum(row["equal"] for row in identity.rows)
    untouched = exercises.compare("04", ..., identity)
    assert "no prediction" in untouched and f"{equal} of {len(identity.rows)}" in untouched
    assert "Right" in exercises.compare("04", equal, identity)
    more = exercises.compare("04", equal - 1, identity)
    assert "More than you expected" in more and "Section 1 names what decides each" in more   # issue 31: where it is
    assert "the next section says" in more and "section 3" not in more   # issue 31 (fifth walk): it is just below
    assert "section 3" not in exercises.compare("04", equal + 1, identity)
    assert "whole number" in exercises.compare("04", "five", identity)
    assert isinstance(lesson04.compare_prediction(..., identity), str)


def test_the_prediction_follows_a_run_with_fewer_equal_kinds():
    identity = experiments.address_identity()
    rows = [dict(row, equal=row["allocation"] != "registered (cuMemHostRegister)") for row in identity.rows]
    live = dataclasses.replace(identity, rows=rows, live=True, provenance={"gpu": "Some GPU"})
    said = exercises.compare("04", len(rows), live)
    assert f"{len(rows) - 1} of {len(rows)}" in said and "live on Some GPU" in said and "Fewer" in said



def test_a_right_prediction_names_the_gpu_the_addresses_come_from(replay):
    """Issue 31: in replay the "Right." names the recorded GPU, never "this GPU" under a banner that says none."""
    identity = experiments.address_identity()
    said = exercises.compare("04", len(identity.rows), identity)
    assert f"on the recorded {identity.gpu}," in said and "this GPU" not in said
    assert "no document promises" in said     # issue 31: the write-combined equality is the driver's, not a promise
    assert "on this GPU," in exercises.compare("04", len(identity.rows), dataclasses.replace(identity, live=True))


@pytest.mark.parametrize("rule", [
    lambda allocation, a: a["UNIFIED_ADDRESSING"] and allocation != "mapped + write-combined" and (
        a["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"] if allocation.startswith("registered") else 1),
    lambda allocation, a: int(lesson04.same_address_rule(allocation, a)),
    lambda allocation, a: np.bool_(lesson04.same_address_rule(allocation, a)),
], ids=["U and C", "0/1", "np.bool_"])
def test_same_address_judges_what_the_rule_decides_not_its_type(rule):
    """Issue 31: a rule that decides right with 1/0 (`return U and C` on integer attributes) is right."""
    identity = experiments.address_identity()
    feedback = exercises.check("04", "same_address", rule, measured=identity)
    n = len(identity.rows)
    assert feedback.correct and f"{_agreeing(identity)} of {n} kinds" in feedback.message, feedback


def _markdown_04() -> list[str]:
    import nbformat

    from helpers.paths import LESSONS

    return [cell.source for cell in nbformat.read(LESSONS / "04-map-pages-on-the-gpu.ipynb", as_version=4).cells
            if cell.cell_type == "markdown"]


def test_hypervisor_and_devicemap_are_explained_where_first_used():
    """Issue 31: "hypervisor" is glossed in section 1, before cell 12's output and the figure use it; `DEVICEMAP`
    is named as PyCUDA's `cudaHostAllocMapped` where it first appears."""
    import re

    text = " ".join(" ".join(_markdown_04()).split())
    first = text.lower().index("hypervisor")
    assert text[first - 2:first + 12] == "**hypervisor**" and first < text.index("## 2.")
    assert re.search(r"the software on the physical host\b.{0,60}that runs virtual machines", text[first:first + 200])
    devicemap = text.index("`DEVICEMAP`")
    assert "PyCUDA's name for `cudaHostAllocMapped`" in text[devicemap:devicemap + 60]

def test_one_account_of_what_translates_the_gpus_dma_addresses_in_a_vm():
    """Issue 31: the lesson, the caveat under its buffer (machine.py) and the figure's footnote say it one way: the
    physical host's IOMMU, with mappings the hypervisor sets up (not the hypervisor's page tables, which are the
    CPU's second translation)."""
    from helpers.display import plots
    from helpers.platform import machine

    account = "the physical host's IOMMU"
    lesson = " ".join(" ".join(_markdown_04()).split())
    caveat = machine.address_caveat({"virtualization": "kvm", "gpu": "GPU", "date": "2026-12-04"})
    figure = plots.page_mapping([1, 2], [3, 4], gpu_pages=[1, 2])
    footnote = " ".join(" ".join(t.get_text() for t in figure.axes[0].texts if "DMA (bus)" in t.get_text()).split())
    for where, text in (("lesson", lesson), ("address_caveat", caveat), ("footnote", footnote)):
        said = text[text.index(account):text.index(account) + 100]
        assert "with mappings the hypervisor sets up" in said, (where, said)
    assert "hypervisor's page tables" not in caveat + footnote


def test_the_figure_is_backed_by_a_kernel_on_the_same_kind_of_allocation_not_this_buffer():
    """Issue 31: section 2's kernel ran on address_identity's allocations, not on the buffer drawn."""
    text = " ".join(" ".join(_markdown_04()).split())
    assert "a CUDA kernel worked through an allocation of the same kind" in text
    assert "read the result from those frames" not in text


def test_the_registered_rules_second_hint_leaves_the_learner_a_step():
    """Issue 31: the smaller step for a rule that reads only UNIFIED_ADDRESSING does not dictate the missing line."""
    def unified_only(allocation, attributes):
        return bool(attributes["UNIFIED_ADDRESSING"])

    exercises.check("04", "same_address", unified_only)
    second = exercises.check("04", "same_address", unified_only).message
    step = second.split("Next step:")[1]
    assert "a case of its own" in step and "return what it says" not in step and "startswith" not in step, second


def test_the_lesson_speaks_of_promises_where_the_table_shows_equality():
    """Issue 31 (fourth walk): the recorded write-combined row is equal, so the text says where equality is promised,
    not where it holds or fails; the portable kind is glossed with its source at first use; the buffer drawn names
    the one kind by both experiments' names; the GPU's page size is not claimed."""
    text = " ".join(" ".join(_markdown_04()).split())
    check3 = text[text.index("3. Why still call"):]
    assert "promise them equal only under conditions" in check3 and "equal only under" not in check3.replace(
        "promise them equal only under", "")
    assert "where it fails" not in text and "may map host memory with larger pages" not in text
    portable = text[text.index("**portable** memory"):][:200]
    assert "pinned for every GPU, not only the current one" in portable and "#portable-memory" in portable
    assert text.index("**portable** memory") < text.index("mapped + portable")
    section4 = text[text.index("## 4."):]
    assert "`cudaHostAlloc mapped`" in section4[:600] and "`mapped (DEVICEMAP)`" in section4[:600]


def test_the_figure_and_the_text_say_the_iommu_translates_where_one_is_in_use():
    """Issue 31 (fourth walk): the footnote scopes the IOMMU as the text does."""
    from helpers.display import plots

    text = " ".join(" ".join(_markdown_04()).split())
    figure = plots.page_mapping([1, 2], [3, 4], gpu_pages=[1, 2])
    footnote = " ".join(" ".join(t.get_text() for t in figure.axes[0].texts if "DMA (bus)" in t.get_text()).split())
    assert "where an IOMMU is in use, it translates them to memory" in footnote
    assert "where an IOMMU is in use, it translates them to memory" in text and "to DRAM" not in footnote


def test_the_untouched_rule_is_asked_for_from_the_allocation_and_the_attributes():
    """Issue 31 (fourth walk): the rule depends on the allocation too."""
    said = exercises.check("04", "same_address", lambda allocation, attributes: ...).message
    assert "from the allocation and the two attributes" in said, said


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.


def _same_address_cases() -> list[tuple]:
    return [(kind, {"UNIFIED_ADDRESSING": uva, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": can})
            for uva in (0, 1) for can in (1, 0) for kind in lesson04.KINDS]


def _every_cudahostalloc_kind(allocation, attributes):
    """The old rule: unified addressing gives every cudaHostAlloc kind the host address, write-combined too."""
    if not attributes["UNIFIED_ADDRESSING"]:
        return False
    if allocation.startswith("registered"):
        return bool(attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"])
    return True


def _attribute_access(allocation, attributes):
    """The walk's answer: the attributes read as an object's attributes, not a dict's keys."""
    return bool(attributes.UNIFIED_ADDRESSING)


def test_reading_the_attributes_with_a_dot_is_told_they_are_a_dict():
    """Issue 31: `attributes.UNIFIED_ADDRESSING` raised AttributeError and the learner got nothing more."""
    said = exercises.check("04", "same_address", _attribute_access).message
    assert "AttributeError" in said and "is a dict" in said, said
    said = exercises.check("04", "same_address", _attribute_access).message
    assert "square brackets" in said and 'attributes["UNIFIED_ADDRESSING"]' not in said, said


def test_hints_and_correct_start_with_a_capital_after_the_label():
    """Issue 31: "**Hint.** You predicted…", "**Correct.** Equality…"; an identifier first stays as written."""
    hint = exercises.check("04", "same_address", _every_cudahostalloc_kind)._repr_markdown_()
    assert hint.startswith("**Hint.** You predicted"), hint
    assert str(exercises.check("04", "same_address", _solution("same_address"))).startswith("Correct [04/same_address]: Equality")
    said = exercises.check("04", "device_address", lambda a, i, d_a: ...)._repr_markdown_()
    assert said.startswith("**Not yet.** device_address returns"), said
    assert exercises.capitalised("a.itemsize is") == "a.itemsize is" and exercises.capitalised("a page") == "A page"


def _misspelled_registered(allocation, attributes):
    if not attributes["UNIFIED_ADDRESSING"]:
        return False
    if allocation == "registered":
        return bool(attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"])
    return True


def test_the_misspelled_name_hint_quotes_the_name_passed_and_says_it_never_matched():
    feedback = exercises.check("04", "same_address", _misspelled_registered)
    assert feedback.status == "hint", feedback
    assert "'registered (cuMemHostRegister)'" in feedback.message and "never matched" in feedback.message


def _no_else(allocation, attributes):
    """The walk's answer: only the unified-addressing branch returns; without it the function returns None."""
    if attributes["UNIFIED_ADDRESSING"]:
        return lesson04.same_address_rule(allocation, attributes)


def test_a_function_that_returns_none_is_told_so_and_the_untouched_stub_is_not_yet():
    no_return = edited("04", "device_address", "device_address", "return d_a", "d_a")()
    said = exercises.check("04", "device_address", no_return)
    assert said.status == "hint" and "device_address returned None" in said.message, said
    said = exercises.check("04", "same_address", _no_else)
    assert said.status == "hint" and "UNIFIED_ADDRESSING = 0" in said.message and "left out" in said.message, said

    def device_address(a, i, d_a):
        """The untouched stub's docstring."""
        return ...
    assert exercises.check("04", "device_address", device_address).status == "not yet"


def _compares(names: tuple[str, str, str, str], otherwise: bool):
    """A rule right in its logic that compares the allocation with ``names`` (mapped, portable, pinned, write-combined),
    tests registered memory by its start and answers ``otherwise`` for the rest: a misspelled name never matches."""
    mapped, portable, pinned, write_combined = names

    def same_address(allocation, attributes):
        if not attributes["UNIFIED_ADDRESSING"]:
            return False
        if allocation == write_combined:
            return False
        if allocation in (mapped, portable, pinned):
            return True
        if allocation.startswith("registered"):
            return bool(attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"])
        return otherwise
    return same_address


_TABLE = ("mapped (DEVICEMAP)", "mapped + portable", "pinned, no DEVICEMAP flag", "mapped + write-combined")


def _misspelled(position: int, name: str):
    names = tuple(name if k == position else kind for k, kind in enumerate(_TABLE))
    return _compares(names, otherwise=_TABLE[position] == "mapped + write-combined")   # the misspelled kind falls through


def _registered_before_unified(allocation, attributes):
    """The walk's order: registered memory decided first, so it follows its attribute without unified addressing."""
    if allocation.startswith("registered"):
        return bool(attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"])
    return bool(attributes["UNIFIED_ADDRESSING"]) and allocation != "mapped + write-combined"


def _registered_attribute_everywhere(allocation, attributes):
    """CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM read for every kind, not only registered memory."""
    both = attributes["UNIFIED_ADDRESSING"] and attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]
    return bool(both) and allocation != "mapped + write-combined"


def _third_attribute(allocation, attributes):
    """Section 1's third attribute, which the check does not pass: KeyError."""
    return bool(attributes["CAN_MAP_HOST_MEMORY"] and attributes["UNIFIED_ADDRESSING"])


def _own_table(allocation, attributes):
    """The learner's own dict of allocations, its names not the table's: KeyError on the name the check passes."""
    promised = {"mapped": True, "portable": True, "pinned": True, "write-combined": False}
    return bool(attributes["UNIFIED_ADDRESSING"]) and promised[allocation]


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("04", "device_address"): [
        Typical(fixed(lambda a, i, d_a: d_a + i), ("i * a.itemsize",), lambda: lesson04.address_cases(),
                phrase="Addresses count bytes"),
        Typical(fixed(lambda a, i, d_a: a.ctypes.data + i * a.itemsize), ("d_a + i * a.itemsize", "i * a.itemsize"),
                lambda: lesson04.address_cases(), phrase="host address"),
        Typical(fixed(lambda a, i, d_a: d_a + 4 * i), ("i * a.itemsize",), phrase="assume float32"),
        Typical(fixed(lambda a, i, d_a: d_a), ("i * a.itemsize",), phrase="every element got the address of a[0]"),
        Typical(fixed(lambda a, i, d_a: d_a + i * a.itemsize / 1), ("i * a.itemsize",),
                phrase="not a whole number"),
        Typical(fixed(lambda a, i, d_a: d_a + 2 * i * a.itemsize), ("i * a.itemsize",),
                phrase="does the mapping change that distance"),
        # the element's value, not its position
        Typical(fixed(lambda a, i, d_a: d_a + a[i]), ("i * a.itemsize",), phrase="not where it lies"),
        Typical(fixed(lambda a, i, d_a: hex(d_a + i * a.itemsize)), ("i * a.itemsize",),
                phrase="return the int, not its hex text"),
        # the `return` left out: the last line computes the address and drops it
        Typical(edited("04", "device_address", "device_address", "return d_a", "d_a"), ("i * a.itemsize",),
                phrase="returned None: is a `return` missing"),
        # d_a left out: the distance from a[0] returned as the address
        Typical(fixed(lambda a, i, d_a: i * a.itemsize), ("d_a + i * a.itemsize",), lambda: lesson04.address_cases(),
                phrase="a distance, not an address"),
        # one element too far, and one too near
        Typical(fixed(lambda a, i, d_a: d_a + (i + 1) * a.itemsize), ("i * a.itemsize",),
                lambda: lesson04.address_cases(), phrase="is one element off: it is where a[6] starts"),
        Typical(fixed(lambda a, i, d_a: d_a + (i - 1) * a.itemsize), ("i * a.itemsize",),
                lambda: lesson04.address_cases(), phrase="is one element off: it is where a[4] starts"),
        # the whole array's size per index
        Typical(fixed(lambda a, i, d_a: d_a + i * a.nbytes), ("i * a.itemsize",), lambda: lesson04.address_cases(),
                phrase="the whole array's size in bytes")],
    ("04", "same_address"): [
        Typical(fixed(lambda allocation, attributes: True), ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',),
                _same_address_cases, phrase="returned True for every allocation"),
        Typical(fixed(lambda allocation, attributes: False), ('attributes["UNIFIED_ADDRESSING"]',),
                _same_address_cases, phrase="returned False for every allocation"),
        Typical(fixed(lambda allocation, attributes: bool(attributes["UNIFIED_ADDRESSING"])),
                ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',), _same_address_cases,
                phrase="follows UNIFIED_ADDRESSING alone"),
        # registered memory given the host address whatever its attribute says
        Typical(fixed(lambda allocation, attributes: bool(attributes["UNIFIED_ADDRESSING"])
                      and allocation != "mapped + write-combined"),
                ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',), _same_address_cases,
                phrase="for registered memory with CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 0 you predicted True"),
        Typical(fixed(_registered_before_unified), ('attributes["UNIFIED_ADDRESSING"]',), _same_address_cases,
                phrase="before it asks whether addressing is unified"),
        Typical(fixed(_registered_attribute_everywhere), ('allocation.startswith("registered")',),
                _same_address_cases, phrase="which is not registered memory"),
        # a name the check never passes, for each kind the rule compares
        Typical(fixed(_misspelled(3, "write-combined")), ('allocation == "mapped + write-combined"',),
                _same_address_cases, phrase="'write-combined', a name the check never passes"),
        Typical(fixed(_misspelled(0, "mapped")), ("return True",), _same_address_cases,
                phrase="'mapped', a name the check never passes"),
        Typical(fixed(_misspelled(1, "mapped + portabel")), ("return True",), _same_address_cases,
                phrase="'mapped + portabel', a name the check never passes"),
        Typical(fixed(_misspelled(2, "pinned (no DEVICEMAP)")), ("return True",), _same_address_cases,
                phrase="'pinned (no DEVICEMAP)', a name the check never passes"),
        # kinds the documents promise the host address, each given False
        Typical(fixed(lambda allocation, attributes: lesson04.same_address_rule(allocation, attributes)
                      and allocation != "mapped + portable"), ("return True",), _same_address_cases,
                phrase="Portable memory is pinned for every GPU"),
        Typical(fixed(lambda allocation, attributes: lesson04.same_address_rule(allocation, attributes)
                      and allocation != "mapped (DEVICEMAP)"), ("return True",), _same_address_cases,
                phrase="What does unified addressing give memory from cudaHostAlloc"),
        # keys the check does not pass: section 1's third attribute, and the learner's own names as keys
        Typical(fixed(_third_attribute), ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',),
                _same_address_cases, phrase="two keys only, 'UNIFIED_ADDRESSING', "
                                            "'CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM'"),
        Typical(fixed(_own_table), ('allocation.startswith("registered")',), _same_address_cases,
                phrase="a dict of yours has no entry for 'registered (cuMemHostRegister)'"),
        Typical(fixed(lambda allocation, attributes: lesson04.same_address_rule(allocation, attributes)
                      and not allocation.startswith("pinned, no DEVICEMAP")),
                phrase="Section 2's table"),
        # reads the attribute, but under a name the check never passes: the hint quotes both names
        Typical(fixed(_misspelled_registered), ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',),
                _same_address_cases, phrase="'registered', a name the check never passes"),
        # no else branch: without unified addressing the function returns None
        Typical(fixed(_no_else), ("return False",), phrase="with UNIFIED_ADDRESSING = 0"),
        # write-combined memory given the host address: the documents give it a distinct one
        Typical(fixed(_every_cudahostalloc_kind), ('allocation == "mapped + write-combined"',), _same_address_cases,
                phrase="cudaHostAllocWriteCombined"),
        # the attributes read with a dot: a dict has no such attribute
        Typical(fixed(_attribute_access), ('attributes["UNIFIED_ADDRESSING"]',), phrase="is a dict")],
}


@pytest.mark.parametrize("name", ["device_address", "same_address"])
def test_every_wrong_answer_family_has_its_own_first_hint_and_a_smaller_step(name):
    """Issue 31 (fifth walk): each family of wrong answers (TYPICAL, the lesson's one table of them) is refused with
    a first hint that names its slip, a first hint no other family gets, and a second step that differs from it and
    does not read the solution's key expression aloud."""
    firsts = {}
    for typical in TYPICAL[("04", name)]:
        exercises.reset_tries()
        answer = typical.wrong()
        first = exercises.check("04", name, answer)
        assert first.status == "hint" and typical.phrase in first.message, (typical.phrase, first)
        second = exercises.check("04", name, answer).message
        step = second.split("Next step:")[1]
        assert second != first.message and step.strip(), second
        assert not [key for key in typical.keys if "".join(key.split()) in "".join(step.split())], second
        firsts.setdefault(first.message, []).append(typical.phrase)
    shared = {message: phrases for message, phrases in firsts.items() if len(phrases) > 1}
    assert not shared, f"families that share a first hint: {shared}"


def test_a_correct_address_says_both_kinds_of_d_a_were_tried():
    """Issue 31 (fifth walk): the check tried d_a equal to the host address and a different one; Correct says both."""
    said = exercises.check("04", "device_address", _solution("device_address")).message
    assert "the host address itself (UVA) and a different one (a GPU without UVA)" in said, said


def test_the_fifth_walks_text_says_what_is_there():
    """Issue 31 (fifth walk): exercise 2 names the two keys the check passes; section 4 credits the name to lesson 02's
    table; the two C interfaces and the two names of the device-pointer call are said at first use; the column is
    named as its header reads; the VFIO no-IOMMU aside is in Going deeper; the goal reads a drawing."""
    cells = _markdown_04()
    text = " ".join(" ".join(cells).split())
    exercise2 = text[text.index("**Exercise 2"):]
    assert "`UNIFIED_ADDRESSING` and `CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`" in exercise2[:500]
    assert "lesson 02's table names it `cudaHostAlloc mapped`" in text and "which names it" not in text
    first = text.index("Runtime API")
    assert "CUDA has two C interfaces: the Runtime API (functions `cuda…`) and the lower-level Driver API" in text[
        first - 60:first + 80]
    assert "the Driver API's name for the runtime's `cudaHostGetDevicePointer`" in text
    assert "**kernel through host pointer ok**" in text and "`kernel_through_host_pointer_ok`" not in text
    deeper = text.index("## Going deeper")
    assert text.index("VFIO_NOIOMMU") > deeper and "how to read a drawing of both mappings" in text


def test_the_buffer_sentence_points_back_to_section_1_instead_of_repeating_it():
    """Issue 31 (fifth walk): section 1 explains guest-physical frames and the IOMMU once; the cell under section 4
    points back to it."""
    from helpers.findings import map_pages_on_the_gpu as findings

    pagemap = experiments.pagemap_pinned()
    row = pagemap.one(allocation="cudaHostAlloc mapped")
    host = int(row["address"], 16)
    said = str(findings.buffer(host, host, row["pfns"], pagemap))
    assert "(section 1)" in said and "IOMMU" not in said and "hypervisor" not in said, said


def test_a_misspelled_name_is_named_even_beside_a_second_slip():
    """Issue 31 (seventh walk): a rule that misspells 'registered' AND decides registered memory before unified
    addressing answers otherwise under its own name than under the check's: the hint names the name first, not the
    attribute the learner's own line already returns."""
    from helpers.exercises import lesson04

    def rule(allocation, attributes):
        if allocation == "registered":
            return bool(attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"])
        if allocation == "mapped + write-combined":
            return False
        return bool(attributes["UNIFIED_ADDRESSING"])

    feedback = lesson04.check_same_address(rule)
    assert feedback.status == "hint"
    assert "'registered', a name the check never passes" in feedback.message
