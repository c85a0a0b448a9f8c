"""start-here's narration (helpers.findings.start_here) agrees with the values it quotes, for the replayed session
and for changed copies of it: a live-like session, other attributes, scaled headline figures."""

from __future__ import annotations

import re

import pytest

from helpers import lessons
from helpers.course import Session
from helpers.findings import start_here
from helpers.mode import Mode


def _replayed() -> Session:
    return Session(Mode(False, "ZC_FORCE_REPLAY is set", "forced"))


def _live_like(**attributes: int) -> Session:
    """A session that says it is live, with the recorded figures standing in for the GPU's (no GPU needed)."""
    replayed = _replayed()
    live = Session(Mode(True, "a GPU that can map host memory", "live"))
    live.__dict__.update(gpu="Test GPU", attributes={**replayed.attributes, **attributes},
                         headline=dict(replayed.headline), reference=replayed.reference)
    return live


def test_the_attribute_table_lists_every_attribute_with_its_value_and_says_where_they_came_from():
    course = _replayed()
    shown = start_here.attributes(course)._repr_markdown_()
    assert "REPLAY: recorded on" in shown and "live" not in shown.split("\n")[0]
    for name, value in course.attributes.items():
        assert f"| `{name}` | {value:,} |" in shown
    live = start_here.attributes(_live_like())._repr_markdown_()
    assert live.startswith("**Attributes:** live, read from Test GPU") and "REPLAY" not in live


@pytest.mark.parametrize("uva, integrated, pageable", [(1, 0, 0), (0, 1, 1)])
def test_the_essentials_flip_with_the_attributes(uva, integrated, pageable):
    attributes = {**_replayed().attributes, "UNIFIED_ADDRESSING": uva, "INTEGRATED": integrated,
                  "PAGEABLE_MEMORY_ACCESS": pageable, "L2_CACHE_SIZE": 50 * 2**20, "MULTIPROCESSOR_COUNT": 7}
    text = start_here.essentials(attributes)
    assert f"`UNIFIED_ADDRESSING` = {uva}): {'yes' if uva else 'NO'}" in text
    assert f"`INTEGRATED` = {integrated}): {'yes' if integrated else 'no, a discrete GPU'}" in text
    assert f"`PAGEABLE_MEMORY_ACCESS` = {pageable}): {'yes' if pageable else 'no'}" in text
    assert "L2 cache: 50 MiB (52.4 MB) on 7 SMs" in text


def test_the_course_plan_is_the_registry_s():
    shown = str(start_here.course_plan())
    for entry in lessons.LESSONS:
        assert entry.name in shown and entry.does and entry.does in shown
    total = sum(entry.minutes for entry in lessons.LESSONS) / 60
    assert f"In all about {total:g} hours." in shown


def test_the_reference_record_is_the_session_s():
    course = _replayed()
    text = start_here.reference_record(course)
    p = course.provenance
    assert f"data/{course.reference[1].name}" in text and p["gpu"] in text and p["date"] in text
    assert f"{len(course.record['experiments'])} experiments" in text
    assert f"{sum(p['experiment_wall_seconds'].values()):.0f} s of GPU time" in text


def _value(table, figure: str) -> str:
    return next(row[1] for row in table.rows if row[0] == figure)


@pytest.mark.parametrize("scale", [1.0, 0.5])
def test_the_headline_quotes_the_session_s_figures(scale):
    course = _live_like()
    head = course.headline
    for key in ("memcpy_htod_pinned_GBps", "zero_copy_read_GBps", "zero_copy_latency_ns"):
        head[key] *= scale
    head["zero_copy_read_over_memcpy_htod"] = head["zero_copy_read_GBps"] / head["memcpy_htod_pinned_GBps"]
    table = start_here.headline(course)
    assert _value(table, "pinned memcpy host->device") == f"{head['memcpy_htod_pinned_GBps']:.1f} GB/s"
    assert _value(table, "zero-copy kernel read") == f"{head['zero_copy_read_GBps']:.1f} GB/s"
    assert f"zero-copy {head['zero_copy_latency_ns']:.0f} ns" in _value(table, "one dependent load")
    assert f"{head['zero_copy_read_over_memcpy_htod']:.0%} of pinned memcpy" in str(table)
    head["device_read_GBps"] = None
    assert _value(start_here.headline(course), "device-memory kernel read") == "not recorded"


def test_the_headline_notes_say_the_convention_and_the_pageable_range():
    """Best over sizes beside the 1 GiB figure lessons 02 and 06 quote; the pageable rate with its range across the
    committed records (issue 30 §5)."""
    course = _replayed()
    table = start_here.headline(course)
    notes = {row[0]: row[2] for row in table.rows}
    rows = course.record["experiments"]["kernel_bandwidth"]["rows"]
    read = max((r for r in rows if r["memory"] == "zero_copy" and r["op"] == "read"), key=lambda r: r["nbytes"])
    assert "the best over the sizes and kernels" in notes["zero-copy kernel read"]
    assert f"{lessons.lesson('measure-bandwidth').label}'s figure" in notes["zero-copy kernel read"]
    assert f": {read['GBps']:.1f} GB/s" in notes["zero-copy kernel read"]
    n = max(r["nbytes"] for r in course.record["experiments"]["memcpy"]["rows"])
    assert start_here.pageable_range(n) and start_here.pageable_range(n) in notes["pageable memcpy host->device"]
    assert "committed H200 records" in start_here.pageable_range(n)


def test_what_you_saw_says_live_or_replay_and_quotes_the_ratios():
    replayed, live = _replayed(), _live_like(UNIFIED_ADDRESSING=0)
    assert "runs **in replay**" in start_here.what_you_saw(replayed)
    text = start_here.what_you_saw(live)
    assert "runs **live**" in text and "`UNIFIED_ADDRESSING` = 0" in text
    head = live.headline
    head["zero_copy_latency_ns"] *= 2
    text = start_here.what_you_saw(live)
    assert f"{head['zero_copy_latency_ns'] / head['device_latency_ns']:.1f}x as long" in text
    assert f"{head['zero_copy_read_over_memcpy_htod']:.0%} of the pinned memcpy rate" in text


def test_the_address_caveat_adds_this_machine_only_live():
    replayed = start_here.address_caveat(_replayed())
    assert replayed.startswith("The recording machine") and "This machine" not in replayed
    assert "This machine" in start_here.address_caveat(_live_like())
    assert re.search(r"\w", str(start_here.this_machine()))


def test_the_session_table_has_no_empty_header_cell():
    """Issue 33: zc.start()'s table names both of its columns (a blank header reads as a broken table)."""
    header = _replayed()._repr_markdown_().splitlines()[0]
    assert all(cell.strip() for cell in header.strip("|").split("|")), header
