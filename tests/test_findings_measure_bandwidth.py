"""measure-bandwidth's narration (helpers.findings.measure_bandwidth) agrees with the rows it quotes, on the recorded
results and on changed copies of them: the numbers are the rows' and the words flip where the figures do."""

from __future__ import annotations

import copy
import dataclasses
from types import SimpleNamespace

import pytest

from helpers import experiments
from helpers.findings import measure_bandwidth as fb
from helpers.findings import measure_what_pinning_buys as pinning
from helpers.platform.pcie import Link


@pytest.fixture
def recorded():
    return experiments.reference("memcpy"), experiments.reference("kernel_bandwidth")


def _scaled(result, factor, **where):
    """A live-like copy of ``result`` whose rows matching ``where`` run ``factor`` times faster."""
    rows = copy.deepcopy(result.rows)
    for row in rows:
        if all(row.get(k) == v for k, v in where.items()):
            row["GBps"] *= factor
            row["seconds"] = [s / factor for s in row["seconds"]]
    return dataclasses.replace(result, rows=rows, live=True, provenance={"gpu": "Test GPU", "date": "2026-01-01"})


def _at_largest(result, **where):
    return result.one(nbytes=int(max(result.column("nbytes"))), **where)["GBps"]


def test_the_ratios_and_the_lore_quote_the_rows(recorded):
    memcpy, streams = recorded
    zc = _at_largest(streams, memory="zero_copy", op="read")
    pinned = _at_largest(memcpy, direction="htod", host_memory="pinned")
    pageable = _at_largest(memcpy, direction="htod", host_memory="pageable")
    table = fb.ratios(memcpy, streams)
    assert ["zero-copy read / pinned memcpy HtoD", f"{zc / pinned:.2f}"] in table.rows
    assert "recorded on NVIDIA H200" in table.caption
    text = fb.lore(memcpy, streams)
    assert f"{zc:.1f} GB/s" in text and f"{pinned:.1f} GB/s" in text and f"{pageable:.1f} GB/s" in text
    assert f"({zc / pinned:.0%} of its rate)" in text and f"({zc / pageable:.1f}x its rate)" in text
    assert ("does not beat it" in text) == (zc <= pinned) and "recorded on" in text


def test_the_words_flip_when_zero_copy_beats_the_pinned_copy(recorded):
    memcpy, streams = recorded
    faster = _scaled(streams, 1.5, memory="zero_copy", op="read")
    zc = _at_largest(faster, memory="zero_copy", op="read")
    pinned = _at_largest(memcpy, direction="htod", host_memory="pinned")
    assert zc > pinned
    text = fb.lore(memcpy, faster)
    assert "pinned copy: zero-copy beats it" in text and f"({zc / pinned:.0%} of its rate)" in text
    assert "live on Test GPU" in text
    checks = fb.expectations(memcpy, faster)
    assert checks[1][0] is (zc / pinned < 1.15) and checks[1][2] == f"{zc / pinned:.2f}x the copy"
    slower = _scaled(streams, 0.1, memory="zero_copy", op="read")
    assert "pageable copy: zero-copy does not beat it" in fb.lore(memcpy, slower)


def test_fixed_costs_follow_the_rows(recorded):
    memcpy, streams = recorded
    for result in (streams, _scaled(streams, 2.0)):
        table = fb.fixed_costs(memcpy, result)
        rows = sorted(result.select(memory="zero_copy", op="read"), key=lambda r: r["nbytes"])
        t0 = rows[0]["nbytes"] / (rows[0]["GBps"] * 1e9)
        row = next(r for r in table.rows if r[0] == "zero-copy read kernel")
        assert row[1] == f"{t0 * 1e6:.1f} us" and row[2] == f"{rows[-1]['GBps']:,.1f}"
        assert ("live on" in table.caption) == result.live


def test_the_l2_table_and_the_link(recorded):
    memcpy, streams = recorded
    session = SimpleNamespace(live=False, gpu="NVIDIA H200", attributes={"L2_CACHE_SIZE": 60 * 2**20},
                              link=Link(gen=4, width=16, max_gen=5, max_width=16, source="test"))
    shown = str(fb.l2_table(streams, session))
    assert "L2 = 60 MiB" in shown and "far above the L2: HBM" in shown and "recorded on" in shown
    small = SimpleNamespace(**{**vars(session), "attributes": {"L2_CACHE_SIZE": 2**20}})
    assert str(fb.l2_table(streams, small)).count("far above the L2: HBM") > shown.count("far above the L2: HBM")
    link = fb.link(session)
    assert "Gen4 x16" in link and "recorded" in link and "trains its link down" in link
    live = SimpleNamespace(**{**vars(session), "live": True, "link": Link(5, 16, 5, 16, "test")})
    assert "this GPU (live)" in fb.link(live) and "trains" not in fb.link(live)
    assert "could not be read" in fb.link(SimpleNamespace(**{**vars(session), "link": None}))
    share = fb.link_share(memcpy, session)
    pinned = _at_largest(memcpy, direction="htod", host_memory="pinned")
    assert f"{pinned:.1f} GB/s = {pinned / 63.0:.0%}" in share and "recorded on" in share


def test_what_you_saw_quotes_the_run(recorded):
    memcpy, streams = recorded
    for result in (streams, _scaled(streams, 3.0, memory="device")):
        text = fb.what_you_saw(memcpy, result)
        dev = _at_largest(result, memory="device", op="read")
        zc = _at_largest(result, memory="zero_copy", op="read")
        assert f"read at {dev:,.0f} GB/s, {dev / zc:.0f}x the zero-copy read" in text
    factors = pinning.rates_across_records(int(max(memcpy.column("nbytes"))))
    assert f"factors ran {factors['htod factor'].words('x')} (HtoD)" in fb.what_you_saw(memcpy, streams)
