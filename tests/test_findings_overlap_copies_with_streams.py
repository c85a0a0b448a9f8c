"""helpers.findings.overlap_copies_with_streams: the figures it quotes are the rows' own, on the replayed results
and on changed copies of them, and its words follow the results."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from helpers import experiments
from helpers.findings import overlap_copies_with_streams as findings


@pytest.fixture(scope="module")
def e2e():
    return experiments.reference("end_to_end")


@pytest.fixture(scope="module")
def memcpy():
    return experiments.reference("memcpy")


@pytest.fixture(scope="module")
def pipelined():
    return experiments.reference("out_of_core")


def _slower(result, k, **where):
    rows = [{**r, "seconds": [s * k for s in r["seconds"]]} if all(r.get(a) == b for a, b in where.items()) else r
            for r in result.rows]
    return replace(result, rows=rows)


def _rate(e2e, method):
    n = max(int(v) for v in e2e.column("n"))
    return 12 * n / float(np.median(e2e.one(method=method, n=n)["seconds"])) / 1e9


def test_directions_quote_the_rates_and_flip(e2e, memcpy):
    link = float(max(memcpy.column("GBps", direction="htod", host_memory="pinned")))
    text = str(findings.directions(e2e, memcpy))
    assert f"zero-copy {_rate(e2e, 'zero_copy'):.1f} GB/s" in text and f"{link:.1f} GB/s" in text
    assert ("more bytes per second than one direction" in text) == (_rate(e2e, "zero_copy") > 1.05 * link)
    slow = _slower(e2e, 3.0, method="zero_copy")
    text = str(findings.directions(slow, memcpy))
    assert f"zero-copy {_rate(slow, 'zero_copy'):.1f} GB/s" in text and "stayed within" in text
    assert "(recorded)" in text and "(live)" in str(findings.directions(replace(e2e, live=True), memcpy))


def test_sizes_count_the_wins(e2e):
    table = findings.sizes(e2e)
    assert "17 of 17" in table.caption or "of 17" in table.caption
    slow = _slower(e2e, 10.0, method="zero_copy")
    assert "faster at 0 of" in findings.sizes(slow).caption


def test_two_stream_speedup_follows_the_rows(pipelined):
    one = min(pipelined.select(method="chunked"), key=lambda r: np.median(r["seconds"]))
    two = min(pipelined.select(method="chunked_overlap"), key=lambda r: np.median(r["seconds"]))
    want = np.median(one["seconds"]) / np.median(two["seconds"])
    assert findings.two_stream_speedup(pipelined) == pytest.approx(want)
    slower = _slower(pipelined, 2.0, method="chunked_overlap")
    assert findings.two_stream_speedup(slower) == pytest.approx(want / 2)
    text = str(findings.seen(experiments.reference("end_to_end"), experiments.reference("memcpy"), slower))
    assert f"{want / 2:.2f}x the bytes per second of one stream" in text


def test_against_and_baselines_quote_the_rows(e2e, pipelined):
    text = str(findings.against(e2e, pipelined))
    assert f"{_rate(e2e, 'zero_copy') / _rate(e2e, 'copy'):.2f}x" in text
    shown = str(findings.baselines(e2e, pipelined))
    assert f"{_rate(e2e, 'copy'):.1f}" in shown
