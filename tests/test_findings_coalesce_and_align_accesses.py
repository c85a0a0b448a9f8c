"""coalesce-and-align-accesses's findings quote the figures of the results they are given, replayed or changed; the
4- vs 5-sector sentence agrees with the rows it compares."""

from __future__ import annotations

import dataclasses

import pytest

from helpers import experiments
from helpers.analysis.sector_explorer import warp_pattern
from helpers.findings import coalesce_and_align_accesses as f


class _Trace:   # the counts of one warp's trace, from the sector explorer's traced pattern
    def __init__(self, stride, offset):
        p = warp_pattern(stride, offset, 1)
        self.requests, self.sectors, self.lines, self.useful_bytes = 1, int(p.sectors), int(p.lines), 128


def _scaled(result, factor, live=False, **where):
    rows = [dict(r, useful_GBps=r["useful_GBps"] * factor) if all(r.get(k) == v for k, v in where.items())
            else dict(r) for r in result.rows]
    return dataclasses.replace(result, rows=rows, live=live)


@pytest.fixture(scope="module")
def offset():
    return experiments.reference("offset")


def test_stride_quotes_the_rows_and_flips_below_the_sector_bound():
    stride, memcpy = experiments.reference("stride"), experiments.reference("memcpy")
    shown = str(f.stride(stride, memcpy))
    zc32 = stride.one(memory="zero_copy", stride=32)["useful_GBps"]
    assert f"{zc32:.2f} GB/s" in shown and "recorded on" in shown
    link = max(memcpy.column("GBps", direction="htod", host_memory="pinned"))
    below = zc32 < link / 8
    assert ("**below** that" in shown) == below
    lifted = _scaled(stride, (link / 8) * 2 / zc32 if below else 0.01, live=True, memory="zero_copy", stride=32)
    changed = str(f.stride(lifted, memcpy))
    assert ("**below** that" in changed) != below and "live on" in changed


def test_sectors_by_offset_agrees_with_the_rows(offset, monkeypatch):
    groups = f.sector_groups(_Trace)
    assert groups[(4, 1)] == [0, 32] and set(groups[(4, 2)]) == {8, 16, 24} and len(groups[(5, 2)]) == 28
    found = f.four_against_five(offset, groups)
    for row in found:
        assert row["GBps"] == offset.one(memory="zero_copy", offset_floats=row["offset"])["useful_GBps"]
        assert row["slower"] + row["faster"] + row["within"] == row["of"] == 28
    text = str(f.sectors_by_offset(offset, _Trace))
    beat = [r["offset"] for r in found if r["faster"] == r["of"]]
    assert ("no 4-sector offset beat every 5-sector one" in text) == (not beat)
    # every 4-sector offset made far faster, and (made up) every record agreeing: the words flip
    from helpers.experiments.quiet import differ

    monkeypatch.setattr(f, "apart", lambda result, name, first, second, key="useful_GBps": differ(
        result.one(**first), result.one(**second), key))
    fast = offset
    for o in (8, 16, 24):
        fast = _scaled(fast, 10.0, live=True, memory="zero_copy", offset_floats=o)
    changed = str(f.sectors_by_offset(fast, _Trace))
    assert "every 4-sector offset beat every 5-sector one" in changed and "live on" in changed
    slow = offset
    for o in (8, 16, 24):
        slow = _scaled(slow, 0.1, memory="zero_copy", offset_floats=o)
    assert "no 4-sector offset beat" in str(f.sectors_by_offset(slow, _Trace))


def test_misalignment_width_and_summary_quote_the_rows(offset):
    width, stride = experiments.reference("vector_width"), experiments.reference("stride")
    assert "recorded on" in str(f.misalignment(offset))
    v = width.one(memory="device", vector_bytes=16)["useful_GBps"] / width.one(memory="device", vector_bytes=4)["useful_GBps"]
    assert f"{v:.2f}x" in str(f.vector_width(width))
    assert f"device memory {v:.2f}x" in f.what_you_saw(stride, offset, width)


def test_requests_in_flight_quote_littles_law_and_say_when_tags_do_not_account_for_it():
    from dataclasses import replace

    from helpers import experiments
    from helpers.findings import coalesce_and_align_accesses as found

    stride, latency = experiments.reference("stride"), experiments.reference("latency")
    rate = found.useful(stride, "zero_copy", stride=32) * 1e9 / 4
    load_ns = float(latency.select(memory="zero_copy")[0]["load_ns"])
    text = str(found.requests_in_flight(stride, latency))
    assert f"{rate / 1e9:.2f} G requests/s" in text and f"about {rate * load_ns * 1e-9:,.0f}" in text
    near = 0.8 <= rate * load_ns * 1e-9 / 768 <= 1.25
    assert ("fits the figures" in text) == near and ("do not account for it" in text) == (not near)
    rows = [dict(r, load_ns=r["load_ns"] / 3) if r.get("memory") == "zero_copy" else r for r in latency.rows]
    assert "do not account for it" in str(found.requests_in_flight(stride, replace(latency, rows=rows)))


def test_device_baselines_quote_the_three_sweeps_and_say_a_gap_as_a_hypothesis():
    from helpers import experiments
    from helpers.findings import coalesce_and_align_accesses as found

    s, o, w = (experiments.reference(n) for n in ("stride", "offset", "vector_width"))
    rates = [found.useful(s, "device", stride=1), found.useful(o, "device", offset_floats=0),
             found.useful(w, "device", vector_bytes=4)]
    text = found.device_baselines(s, o, w)
    assert all(f"{r:,.0f}" in text for r in rates)
    assert ("likely cause" in text) == (max(rates) / min(rates) >= 1.05)
    even = _scaled(o, rates[0] / rates[1], live=False, memory="device", offset_floats=0)
    even_w = _scaled(w, rates[0] / rates[2], live=False, memory="device", vector_bytes=4)
    assert "within 5 % of one another" in found.device_baselines(s, even, even_w)
