"""measure-what-pinning-buys's narration agrees with the rows it quotes, on the recorded run and on changed copies of
it: the numbers are the rows' own, and the words flip where the rows do ("live"/"recorded", "does not explain"/
"explains", a counter that moved or not, pinned faster or not)."""

from __future__ import annotations

import dataclasses
import copy
import re

import numpy as np
import pytest

from helpers import experiments
from helpers.analysis import spread
from helpers.findings import measure_what_pinning_buys as said
from helpers.findings.map_pages_on_the_cpu import neighbours
from helpers.tables import Text


@pytest.fixture(scope="module")
def copies():
    return experiments.reference("memcpy")


@pytest.fixture(scope="module")
def pinning():
    return experiments.reference("pagemap_pinned")


def _markdown(value) -> str:
    return value._repr_markdown_()


def _scaled(result, factor, **where):
    """A copy of ``result`` whose rows matching ``where`` run ``factor`` times faster (GBps up, seconds down)."""
    rows = copy.deepcopy(result.rows)
    for row in rows:
        if all(row.get(k) == v for k, v in where.items()):
            row["GBps"] *= factor
            row["seconds"] = [s / factor for s in row["seconds"]]
    return dataclasses.replace(result, rows=rows)


def _rate(copies, direction, memory, nbytes):
    return copies.one(direction=direction, host_memory=memory, nbytes=nbytes)["GBps"]


def test_speedups_quote_the_rows_and_say_recorded_or_live(copies):
    n = int(max(copies.column("nbytes")))
    text = _markdown(said.speedups(copies))
    for direction in ("htod", "dtoh"):
        pinned, pageable = _rate(copies, direction, "pinned", n), _rate(copies, direction, "pageable", n)
        assert f"| {direction} | {pinned:.1f} | {pageable:.1f} | {pinned / pageable:.1f}x |" in text
    assert "recorded" in text and "As expected" in text
    live = _markdown(said.speedups(dataclasses.replace(copies, live=True)))
    assert "live" in live and "recorded" not in live


def test_speedups_say_so_when_pageable_wins(copies, monkeypatch):
    monkeypatch.delenv("ZC_STRICT_FIGURES", raising=False)
    n = int(max(copies.column("nbytes")))
    fast = _scaled(copies, 40.0, host_memory="pageable")
    text = _markdown(said.speedups(fast))
    ratio = _rate(fast, "htod", "pinned", n) / _rate(fast, "htod", "pageable", n)
    assert ratio < 1 and f"{ratio:.1f}x" in text and "Unexpected figure" in text


def test_staging_quotes_the_medians(copies):
    n = int(max(copies.column("nbytes")))
    median = {k: float(np.median(copies.one(direction=d, host_memory=m, nbytes=n)["seconds"]))
              for k, d, m in (("host", "htoh", "host_memcpy"), ("dma", "htod", "pinned"),
                              ("pageable", "htod", "pageable"))}
    text = said.staging(copies)
    assert isinstance(text, Text)
    assert f"measured pageable: {median['pageable'] * 1e3:.1f} ms" in text
    assert f"one after the other: {(median['host'] + median['dma']) * 1e3:.1f} ms" in text
    assert "recorded" in text and "live" in said.staging(dataclasses.replace(copies, live=True))


def test_staging_is_judged_against_the_committed_records(copies):
    """The verdict is the spread rule's: the gap in every committed record, and this run's own repeats (issue 30)."""
    across = said.staging_across_records()
    gap, _, verdict = said.staging_verdict(copies)
    own = said._own_spread_ms(copies, gap)[2]
    expected = ("cannot tell" if not spread.beyond_spread(gap, across, own)
                else "does not explain" if gap > 0 else "explains")
    assert verdict == expected
    text = said.staging(copies)
    assert f"across the {across.count} committed H200 records that hold the host copy" in text and f"from {across.low:+.1f} to {across.high:+.1f} ms" in text
    assert f"**{verdict}**" in text


@pytest.mark.parametrize("factor, verdict", [(3.0, "does not explain"), (1 / 3, "explains")])
def test_staging_flips_only_where_every_record_agrees(copies, factor, verdict):
    """Pageable 3x slower (or faster): a gap far beyond its repeats. It is a verdict only where the records' range
    keeps one sign; a range on both sides of zero says the records cannot tell."""
    changed = _scaled(copies, 1 / factor, host_memory="pageable")
    gap = said.staging_gap_ms(changed)
    agree = spread.Range(min(gap, gap / 2), max(gap, gap / 2), ("a", "b"))
    assert f"**{verdict}**" in said.staging(changed, across=agree)
    mixed = spread.Range(-abs(gap), abs(gap), ("a", "b"))
    assert "**cannot tell**" in said.staging(changed, across=mixed)


def test_a_gap_within_the_pageable_repeats_cannot_tell(copies):
    """A pageable copy as fast as the two in series: a gap of 0, within its repeats, whatever the records say."""
    times = said.staging_times(copies)
    even = _scaled(copies, times["pageable"] / times["serial"], host_memory="pageable")
    assert abs(said.staging_gap_ms(even)) < 1e-6
    for agree in (spread.Range(1.0, 2.0, ("a", "b")), spread.Range(-2.0, -1.0, ("a", "b"))):
        text = said.staging(even, across=agree)
        assert "**cannot tell**" in text and "within the pageable copy's own repeats" in text


def test_the_rates_are_scoped_to_the_records(copies):
    n = int(max(copies.column("nbytes")))
    ranges = said.rates_across_records(n)
    text = _markdown(said.speedups(copies))
    for key in ("htod pageable", "dtoh pageable", "htod factor", "dtoh factor", "htoh host_memcpy"):
        assert ranges[key].words("x" if "factor" in key else "GB/s") in text
    pinned = max((r.high - r.low) / r.low for r in (ranges["htod pinned"], ranges["dtoh pinned"]))
    assert f"pinned ones stayed within {pinned:.0%}" in text
    for direction in ("htod", "dtoh"):
        pageable = _rate(copies, direction, "pageable", n)
        assert ranges[f"{direction} pageable"].low <= pageable <= ranges[f"{direction} pageable"].high
    assert f"factor ran {ranges['htod factor'].words('x')}" in said.what_you_saw(experiments.reference(
        "pagemap_pinned"), copies)


def test_locked_says_whether_a_counter_moved(pinning):
    text = said.locked(pinning)
    held = pinning.one(allocation="process, while the buffers above are held")
    assert f"VmLck = {held['VmLck']} KiB" in text and f"VmPin = {held['VmPin']} KiB" in text
    assert ("Neither counter moved" in text) == (not held["VmLck"] and not held["VmPin"])
    rows = copy.deepcopy(pinning.rows)
    next(r for r in rows if r["allocation"].startswith("process"))["VmLck"] = 192
    moved = said.locked(dataclasses.replace(pinning, rows=rows, live=True))
    assert "VmLck = 192 KiB" in moved and "A counter moved" in moved and "live" in moved


def test_buffers_count_runs_and_fall_back_to_the_record_where_frames_are_hidden(pinning):
    text = _markdown(said.buffers(pinning))
    for row in pinning.rows:
        if row.get("pfns") and None not in row["pfns"]:
            assert neighbours(row["pfns"]) in text
    assert "recorded" in text and "Frames are hidden here" not in text
    rows = copy.deepcopy(pinning.rows)
    for row in rows:
        if "pfns" in row and row["present_pages"]:
            row["pfns"] = [None] * len(row["pfns"])
    hidden = _markdown(said.buffers(dataclasses.replace(pinning, rows=rows, live=True)))
    assert "frames hidden (not root)" in hidden and "Frames are hidden here" in hidden and "live" in hidden


def test_frames_in_plain_words_as_lesson_03_says_them(pinning):
    """Issue 31: no "16 runs: 16 single; longest 1 page"; the table and What you saw use lesson 03's words, and the
    caveat above the table names no term lesson 02 has not taught (DMA, IOMMU, hypervisor)."""
    text = _markdown(said.buffers(pinning)) + str(said.what_you_saw(pinning, experiments.reference("memcpy")))
    assert "single" not in text and "runs:" not in text and "longest 1 page" not in text
    scattered = [row for row in pinning.rows if row.get("pfns") and None not in row["pfns"]
                 and all(abs(a - b) != 1 for a, b in zip(row["pfns"], row["pfns"][1:]))]
    assert not scattered or "no two neighbouring pages got neighbouring frames" in text
    caveat = text.split("|")[0]
    assert not re.search(r"\b(DMA|IOMMU|hypervisor)\b", caveat) and "lesson 00, *Going deeper*" in caveat


def test_the_reference_record_backs_the_lesson_s_words():
    recorded = experiments.reference("pagemap_pinned")
    assert "/dev/zero" in recorded.one(allocation="cudaHostAlloc mapped")["maps_line"]
    assert "/dev/nvidiactl" in recorded.one(allocation="cudaHostAlloc mapped + write-combined")["maps_line"]


def test_what_you_saw_quotes_the_same_figures(pinning, copies):
    n = int(max(copies.column("nbytes")))
    text = said.what_you_saw(pinning, copies)
    pinned, pageable = _rate(copies, "htod", "pinned", n), _rate(copies, "htod", "pageable", n)
    assert f"pinned {pinned:.1f} GB/s against pageable {pageable:.1f} GB/s" in text
    assert f"a factor of {pinned / pageable:.1f}" in text and "recorded" in text
