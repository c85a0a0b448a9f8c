"""measure-latency's narration (helpers.findings.measure_latency) agrees with the rows it quotes, on the recorded
results and on changed copies of them: the numbers are the rows' and the words flip where the figures do; no
sentence names a cause the figures do not show."""

from __future__ import annotations

import copy
import dataclasses
import math
from types import SimpleNamespace

import numpy as np
import pytest

from helpers import exercises, experiments
from helpers.experiments.latency import load_ns_spread
from helpers.findings import measure_latency as fl


@pytest.fixture
def latency():
    return experiments.reference("latency")


@pytest.fixture
def footprint():
    return experiments.reference("latency_footprint")


def _scaled(result, factor, **where):
    """A live-like copy of ``result`` whose rows matching ``where`` take ``factor`` times as long a load."""
    rows = copy.deepcopy(result.rows)
    for row in rows:
        if all(row.get(k) == v for k, v in where.items()):
            row["load_ns"] *= factor
            row["seconds"] = [s * factor for s in row["seconds"]]
    return dataclasses.replace(result, rows=rows, live=True, provenance={"gpu": "Test GPU", "date": "2026-01-01"})


def _ns(result, memory):
    rows = [r for r in result.select(memory=memory) if r.get("cpu_cache", "evicted") == "evicted"]
    return rows[0]["load_ns"]


def test_the_ratios_quote_the_rows_and_the_verdict_flips(latency):
    factor = _ns(latency, "zero_copy") / _ns(latency, "device")
    text = str(fl.ratios(latency))
    assert f"{factor:.1f}x" in text and f"{math.log10(factor):.2f}" in text and "recorded on" in text
    assert "does not hold here" in text
    slow = _scaled(latency, 500.0, memory="zero_copy")
    slow_factor = _ns(slow, "zero_copy") / _ns(slow, "device")
    text = str(fl.ratios(slow))
    assert f"{slow_factor:.0f}x" in text and "here the claim holds" in text and "live on Test GPU" in text
    ok, _, got = fl.ordering(latency)
    assert ok and f"{_ns(latency, 'device'):,.0f} ns" in got
    assert not fl.ordering(_scaled(latency, 0.1, memory="zero_copy"))[0]


def test_trip_to_host_and_what_you_saw_quote_the_rows(latency):
    for result in (latency, _scaled(latency, 2.0, memory="zero_copy")):
        zc, dev = _ns(result, "zero_copy"), _ns(result, "device")
        trip = fl.trip_to_host(result)
        assert f"= {zc - dev:,.0f} ns more" in trip and f"{50 * zc / 1024:,.0f} KiB" in trip
        saw = fl.what_you_saw(result)
        assert f"zero-copy {zc:,.0f} ns" in saw and f"{1e6 * zc * 1e-9:.2f} s in mapped memory" in saw


def test_the_cpu_state_verdict_judges_the_difference_against_the_records(latency, monkeypatch):
    """Issue 30 §5: "just written" minus "evicted" counts only beyond the run's spread AND of one sign in every
    committed record; the sentence quotes the range across the records, computed from data/."""
    from helpers import records
    from helpers.analysis import spread

    diffs, levels = [], []
    for record, _ in records.matching_records():
        rows = record["experiments"].get("latency", {}).get("rows", [])
        by = {r.get("cpu_cache"): r for r in rows if r["memory"] == "zero_copy"}
        if "just_written" in by and "evicted" in by:
            diffs.append(load_ns_spread(by["just_written"])[1] - load_ns_spread(by["evicted"])[1])
            levels.append(load_ns_spread(by["evicted"])[1])
    text = fl.cpu_state(latency)
    assert f"Across {len(diffs)} H200 runs" in text
    assert f"from {round(min(diffs)):+,d} to {round(max(diffs)):+,d} ns" in text
    assert f"from {min(levels):,.0f} to {max(levels):,.0f} ns" in text
    if not (min(diffs) > 0 or max(diffs) < 0):      # the sign changes across the records: no verdict of a cause
        assert "mattered" not in text
    low, median, high = load_ns_spread(latency.one(memory="zero_copy", cpu_cache="just_written"))
    assert f"just written by the CPU: {median:,.0f} ns per load" in text
    # live runs far apart: one sign in the records and this run -> it mattered; the sign changes -> cannot tell
    monkeypatch.setattr(spread, "across_records", lambda name, figure, **kw: spread.Range(100.0, 300.0, ("a", "b")))
    slow = _scaled(latency, 1.5, memory="zero_copy", cpu_cache="just_written")
    assert "mattered" in fl.cpu_state(slow) and ", and this run" in fl.cpu_state(slow)
    fast = _scaled(latency, 0.5, memory="zero_copy", cpu_cache="just_written")
    text = fl.cpu_state(fast)
    assert "mattered" not in text and "changes sign" in text and "cannot tell" in text
    session = SimpleNamespace(attributes={"L2_CACHE_SIZE": 50 * 2**20})
    assert "L2 holds 50 MiB" in str(fl.chases(latency, session))


def test_the_footprint_findings_claim_no_cause(footprint):
    text = fl.footprint_findings(footprint)
    for cause in ("L1", "TLB", "translation", "because"):
        assert cause not in text, cause
    assert "not why" in text and "does not show" in text
    flat = _scaled(footprint, 1.0)   # every cold zero-copy row like the smallest: no footprint effect to explain
    cold = sorted((r for r in flat.rows if r["memory"] == "zero_copy" and not r["warm"]), key=lambda r: r["nbytes"])
    for r in cold[1:]:
        r["seconds"], r["load_ns"] = list(cold[0]["seconds"]), cold[0]["load_ns"]
    assert "Zero-copy, cold" in fl.footprint_findings(flat) and "no effect of footprint" in \
        [line for line in fl.footprint_findings(flat).splitlines() if "Zero-copy, cold" in line][0]
    assert "live on Test GPU" in str(fl.footprint(flat))


def test_the_prediction_and_the_ratios_agree_with_the_run(latency):
    factor = _ns(latency, "zero_copy") / _ns(latency, "device")
    from helpers.analysis.cpu_cache import hot_minus_cold

    diff = hot_minus_cold(latency)
    assert f"{round(diff):+,d} ns" in exercises.compare("07", ..., latency)
    assert np.isclose(fl.ratio_values(latency)["zero-copy / device memory"], factor)
