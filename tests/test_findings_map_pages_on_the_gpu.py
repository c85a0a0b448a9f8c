"""map-pages-on-the-gpu's findings agree with the results they quote, replayed and changed (a live-like copy with
other rows): the counts are the rows' own, and the words flip with the figures ("equal"/"different", "live"/
"recorded", "As expected"/"Unexpected")."""

from __future__ import annotations

import dataclasses

import pytest

import helpers as zc
from helpers import experiments
from helpers.lessons import LESSONS
from helpers.findings import map_pages_on_the_gpu as findings

REGISTERED = "registered (cuMemHostRegister)"


@pytest.fixture(scope="module")
def identity():
    return experiments.reference("address_identity")


@pytest.fixture(scope="module")
def pagemap():
    return experiments.reference("pagemap_pinned")


def _live_copy(result, **changes):
    return dataclasses.replace(result, live=True, provenance={"gpu": "Some GPU"}, **changes)


def _registered_apart(identity):
    """A run on which registered memory got another device address and its kernel failed."""
    rows = [dict(row, equal=False, device_pointer="0x1304800000", kernel_through_host_pointer_ok=False)
            if row["allocation"] == REGISTERED else dict(row) for row in identity.rows]
    return _live_copy(identity, rows=rows)


def test_the_attributes_come_from_the_session():
    course = zc.session()
    shown = findings.attributes(course)._repr_markdown_()
    for name in findings.ATTRIBUTES:
        assert f"| {name} | {course.attributes[name]} |" in shown
    assert course.attributes_source in shown


def test_promises_count_the_rows(identity):
    """Issue 31: write-combined memory is promised no host address (the documents give it a distinct one), so with
    both attributes set four of the five kinds are promised it."""
    attrs = identity.provenance["attributes"]
    ok, _, got = findings.promises(identity, attrs)
    n = len(identity.rows) - 1
    assert attrs["UNIFIED_ADDRESSING"] and attrs["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]
    assert ok and f"{n} of {n} promised kinds" in got and "recorded on" in got
    apart = _registered_apart(identity)
    ok, _, got = findings.promises(apart, attrs)         # the live copy has no recorded attributes: these are used
    assert not ok and f"{n - 1} of {n} promised kinds" in got and "live on Some GPU" in got
    ok, _, got = findings.promises(apart, dict(attrs, CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM=0))
    assert ok and f"{n - 1} of {n - 1} promised kinds" in got
    ok, expected, got = findings.promises(apart, dict(attrs, UNIFIED_ADDRESSING=0))
    assert ok and "0 of 0" in got and "ask the driver" in expected


def test_promises_show_as_a_figure_check(identity, monkeypatch):
    monkeypatch.delenv("ZC_STRICT_FIGURES", raising=False)
    attrs = identity.provenance["attributes"]
    assert "As expected" in zc.experiments.expect(findings.promises(identity, attrs))
    assert "Unexpected" in zc.experiments.expect(findings.promises(_registered_apart(identity), attrs))


def test_the_write_combined_sentence_names_the_call_the_lesson_taught(identity):
    """Issue 31 (fourth walk): "ask the driver" names `zc.gpu.device_pointer` (and the driver call it makes), not a
    PyCUDA method the lesson never shows."""
    row = identity.one(allocation="mapped + write-combined")
    kept = dataclasses.replace(identity, rows=[dict(r, equal=True) if r is row else r for r in identity.rows])
    said = findings.write_combined_address(kept)
    assert "`zc.gpu.device_pointer`, which calls `cuMemHostGetDevicePointer`" in said
    assert "get_device_pointer()" not in said


def test_the_second_look_reads_the_rows(identity):
    text = findings.second_look(identity)
    assert "equal to the host pointer" in text and "FAILED" not in text and "recorded on" in text
    text = findings.second_look(_registered_apart(identity))
    assert "different from the host pointer" in text and "FAILED" in text and "live on Some GPU" in text


def test_the_buffer_says_equal_or_different_and_where(pagemap):
    host = 0x7F0000000000
    text = findings.buffer(host, host, [1, 2, 3], pagemap)
    assert "**equal**" in text and f"`{host:#x}`" in text and "recorded on" in text
    assert "hidden" not in text
    live = _live_copy(pagemap)
    text = findings.buffer(host, host + 4096, [None, 2], live)
    assert "**different**" in text and "live on Some GPU" in text and "hidden" in text
    assert "recorded on" in findings.figure_title(pagemap, 8, 16) and "live on" in findings.figure_title(live, 8, 16)
    assert "the first 8 of its 16 pages" in findings.figure_title(pagemap, 8, 16)   # issue 31: it says what it draws


def test_what_you_saw_counts_the_rows(identity, pagemap):
    n = len(identity.rows)
    equal = sum(row["equal"] for row in identity.rows)
    worked = sum(row["kernel_through_host_pointer_ok"] for row in identity.rows)
    text = str(findings.what_you_saw(identity, 0x1000, 0x1000, pagemap))
    assert f"{equal} of {n} kinds" in text and f"worked for {worked} of {n}" in text and "(recorded)" in text
    text = str(findings.what_you_saw(_registered_apart(identity), 0x1000, 0x2000, _live_copy(pagemap)))
    assert f"{equal - 1} of {n} kinds" in text and f"worked for {worked - 1} of {n}" in text and "(live)" in text
    assert REGISTERED not in text.split("kinds had")[1].split("\n")[0]


def test_what_you_saw_says_where_its_figures_come_from(identity, pagemap):
    """Issue 31: the list is "from this run" only live; in replay it comes from the record."""
    text = str(findings.what_you_saw(identity, 0x1000, 0x1000, pagemap))
    assert text.startswith("Computed from the record (replay):") and "this run" not in text
    text = str(findings.what_you_saw(_live_copy(identity), 0x1000, 0x1000, _live_copy(pagemap)))
    assert text.startswith("Computed from this run:")


def _what_you_saw_calls():
    """Each lesson's "What you saw" call on the reference record's results, its first argument the result whose
    origin the head names (issue 31: a lesson does not type "Computed from this run" above replayed figures)."""
    from helpers import findings

    ref = experiments.reference
    model = findings.model_zero_copy_reads
    return {
        "start-here": lambda first: findings.start_here.what_you_saw(first),
        "measure-what-pinning-buys": lambda first: findings.measure_what_pinning_buys.what_you_saw(
            ref("pagemap_pinned"), first),
        "measure-bandwidth": lambda first: findings.measure_bandwidth.what_you_saw(first, ref("kernel_bandwidth")),
        "measure-latency": lambda first: findings.measure_latency.what_you_saw(first),
        "keep-enough-bytes-in-flight": lambda first: findings.keep_enough_bytes_in_flight.what_you_saw(
            first, ref("memcpy"), ref("latency"), ref("caching"), zc.session().attributes),
        "coalesce-and-align-accesses": lambda first: findings.coalesce_and_align_accesses.what_you_saw(
            first, ref("offset"), ref("vector_width")),
        "model-zero-copy-reads": lambda first: model.seen(first, model.counters(), model.fit()),
        "overlap-copies-with-streams": lambda first: findings.overlap_copies_with_streams.seen(
            first, ref("memcpy"), ref("out_of_core")),
        "decide-when-zero-copy-wins": lambda first: findings.decide_when_zero_copy_wins.summary(
            first, ref("out_of_core"), ref("read_once_strided")),
    }


FIRST = {"start-here": None, "measure-what-pinning-buys": "memcpy", "measure-bandwidth": "memcpy",
         "measure-latency": "latency", "keep-enough-bytes-in-flight": "inflight",
         "coalesce-and-align-accesses": "stride", "model-zero-copy-reads": "stride",
         "overlap-copies-with-streams": "end_to_end", "decide-when-zero-copy-wins": "reuse"}


@pytest.mark.parametrize("slug", sorted(FIRST))
def test_every_what_you_saw_says_where_its_figures_come_from(slug):
    """The sibling lessons' lists say "from the record (replay)" in replay and "this run" only live."""
    from helpers.mode import Mode
    from helpers.course import Session

    if FIRST[slug] is None:                     # start-here: the session itself, replayed and live-like
        first = Session(Mode(False, "ZC_FORCE_REPLAY is set", "forced"))
        live = Session(Mode(True, "a GPU that can map host memory", "live"))
        live.__dict__.update(gpu="Test GPU", attributes=first.attributes, headline=dict(first.headline),
                             reference=first.reference)
    else:
        first = experiments.reference(FIRST[slug])
        live = dataclasses.replace(first, live=True)
    said = str(_what_you_saw_calls()[slug](first))
    assert said.startswith("Computed from the record (replay):") and "this run" not in said.splitlines()[0]
    assert str(_what_you_saw_calls()[slug](live)).startswith("Computed from this run:")


# ----------------------------------------------------------------------------- the lessons' own words (issue 31)
def _markdown(slug: str) -> list[str]:
    import nbformat

    from helpers import lessons

    notebook = nbformat.read(lessons.lesson(slug).notebook(), as_version=4)
    return [cell.source for cell in notebook.cells if cell.cell_type == "markdown"]


def test_section_1_names_both_deciding_attributes_and_registered_memory_before_the_table():
    """The attributes table shows CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: the text above it names both attributes
    that decide the device address, and says what registered memory is, before the table shows it."""
    above = "\n".join(_markdown("map-pages-on-the-gpu")[:2])      # the title cell and section 1, before the table
    said = above.split("Two attributes of the GPU bear on it")[1].split("A third")[0]
    assert "`UNIFIED_ADDRESSING`" in said and "`CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM`" in said
    assert "**registered** memory" in said and "cuMemHostRegister" in said


def test_the_iommu_claim_is_scoped_and_cited():
    """A passed-through GPU sits behind an IOMMU where VFIO assigns it; VFIO's no-IOMMU mode exists but cannot assign
    a device to a virtual machine (drivers/vfio/Kconfig): no unscoped "always". The Kconfig aside sits in Going deeper
    (issue 31, fifth walk), where the claim points."""
    text = " ".join(" ".join(_markdown("map-pages-on-the-gpu")).split())
    claim = text.split("A GPU that VFIO")[1].split("Three caveats")[0]
    assert "always" not in claim and "(*Going deeper*)" in claim and "no-IOMMU mode" not in claim
    deeper = text[text.index("## Going deeper"):]
    assert "no-IOMMU mode" in deeper and "drivers/vfio/Kconfig" in deeper and "always" not in deeper


@pytest.mark.parametrize("slug", [entry.slug for entry in LESSONS])
def test_the_lessons_name_the_machine_not_the_host(slug):
    """Issue 31: "host" is CUDA's CPU side; a machine is "the recording VM" or "the physical host", and the text does
    not type "Computed from this run" above a list that replay computes from the record (every lesson)."""
    import re

    text = " ".join(" ".join(_markdown(slug)).split())
    assert not re.search(r"\bthe host's IOMMU\b|\bwhere the host placed\b", text)
    assert "Computed from this run" not in text


def test_the_glossary_defines_registered_memory_as_lesson_13_shows_it():
    """The recorded driver accepted ranges that start or end inside a page (lesson 13's probes): the glossary does not
    define registered memory as page-aligned, and says what an unaligned range pins."""
    from helpers import paths

    entry = next(line for line in (paths.LESSONS / "glossary.md").read_text().splitlines()
                 if line.startswith("| registered memory |"))
    probes = experiments.reference("registered").select(allocation="alignment probe (cuMemHostRegister)")
    assert any(r["works"] and r["page_offset"] for r in probes)
    assert "page-aligned range" not in entry and "pins whole pages" in entry and "accepted" in entry


def test_kept_promises_credits_each_kind_to_its_reference_and_a_broken_promise_is_unexpected(replay, monkeypatch):
    """Issue 31: the Unified Addressing section promises three kinds, the attribute the registered one; the
    write-combined row is set against the documented distinct address."""
    monkeypatch.delenv("ZC_STRICT_FIGURES", raising=False)
    identity = zc.experiments.address_identity()
    attrs = dict(identity.provenance["attributes"])
    said = " ".join(str(findings.kept_promises(identity, attrs)).split())
    kept = sum(bool(identity.one(allocation=k)["equal"]) for k in findings.UNIFIED_KINDS)
    assert f"Unified Addressing section promises the host address to `cudaHostAlloc` memory" in said
    assert f"{kept} of 3 such kinds kept it" in said and "5 of 5" not in said and "As expected" not in said
    assert "`CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM` = 1 (Driver API, `cuMemHostGetDevicePointer`)" in said
    assert "a distinct host and device address" in said
    assert "Unexpected" in str(findings.kept_promises(_registered_apart(identity), attrs))


def test_the_write_combined_row_is_set_against_the_documentation_and_scoped(identity):
    """Issue 31: where the run kept the host address for write-combined memory, the sentence says the measurement
    contradicts the documentation, names the GPU and driver, and says to ask the driver; otherwise it agrees."""
    row = identity.one(allocation="mapped + write-combined")
    said = " ".join(findings.write_combined_address(identity).split())
    if row["equal"]:
        assert "contradicts the documentation" in said and identity.gpu in said
        assert identity.provenance["driver_version"] in said and "must not rely on it" in said
        assert "`cuMemHostGetDevicePointer`" in said
    rows = [dict(r, equal=False, device_pointer="0x1304800000") if r["allocation"] == "mapped + write-combined"
            else dict(r) for r in identity.rows]
    apart = " ".join(findings.write_combined_address(dataclasses.replace(identity, rows=rows)).split())
    assert "as the Unified Addressing section documents" in apart and "contradicts" not in apart


def test_the_buffer_sentence_calls_the_device_address_derived(replay):
    pagemap = zc.experiments.pagemap_pinned()
    said = str(findings.buffer(0x7f0000000000, 0x7f0000000000, [1, 2], pagemap))
    assert "derived from section 2's rule" in said and said.index("(") < said.index("device pointer")
