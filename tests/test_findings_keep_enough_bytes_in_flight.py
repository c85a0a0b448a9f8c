"""keep-enough-bytes-in-flight's findings quote the figures of the results they are given, replayed or changed, and
say live or recorded from the result."""

from __future__ import annotations

import dataclasses

import pytest

from helpers import experiments
from helpers.findings import keep_enough_bytes_in_flight as f


def _scaled(result, key, factor, live=False):
    rows = [dict(r, **{key: r[key] * factor}) if key in r else dict(r) for r in result.rows]
    return dataclasses.replace(result, rows=rows, live=live)


@pytest.fixture(scope="module")
def runs():
    return experiments.reference("memcpy"), experiments.reference("latency"), experiments.reference("inflight"), experiments.reference("caching")


def test_little_quotes_the_rows_and_says_where(runs):
    memcpy, latency, _, _ = runs
    link = max(memcpy.column("GBps", direction="htod", host_memory="pinned"))
    lat = latency.one(memory="zero_copy", cpu_cache="evicted")["load_ns"]
    text = f.little(memcpy, latency)
    assert f"{lat:.0f} ns" in text and f"{link:.1f} GB/s" in text and f"{link * lat / 1024:.0f} KiB" in text
    assert "recorded on" in text and "live on" not in text
    faster = _scaled(memcpy, "GBps", 2.0, live=True)
    text = f.little(faster, latency)
    assert f"{2 * link:.1f} GB/s" in text and "live on" in text


def test_caching_verdict_flips_with_the_figures(runs):
    attributes = {"INTEGRATED": 0, "PAGEABLE_MEMORY_ACCESS": 0}
    caching = runs[3]
    shown = str(f.caching(caching, attributes))
    ldg = caching.one(memory="zero_copy", load="ldg", pattern="same_sm")["delivered_GBps"]
    assert f"{ldg:,.1f}" in shown and "recorded on" in shown and "right for the L2" in shown
    # a run in which the other-SM re-reads of mapped memory came faster than the link: the L2 served them
    rows = [dict(r, delivered_GBps=r["delivered_GBps"] * 100) if r.get("memory") == "zero_copy" else dict(r)
            for r in caching.rows]
    changed = str(f.caching(dataclasses.replace(caching, rows=rows, live=True), attributes))
    assert "live on" in changed and "the L2 served re-reads" in changed


def test_few_threads_and_full_gpu_quote_the_rows(runs):
    memcpy, latency, inflight, _ = runs
    shown = str(f.few_threads(inflight, memcpy, latency))
    row = inflight.one(kernel="read_float4", threads=4096)
    assert f"{row['GBps']:.2f}" in shown and "recorded on" in shown
    full = str(f.full_gpu(inflight, memcpy, latency))
    rates = inflight.column("GBps", threads=int(max(inflight.column("threads"))))
    assert f"{rates.min():.1f} to {rates.max():.1f} GB/s" in full
    doubled = str(f.full_gpu(_scaled(inflight, "GBps", 2.0, live=True), memcpy, latency))
    assert f"{2 * rates.min():.1f} to {2 * rates.max():.1f} GB/s" in doubled and "live on" in doubled


def test_loaded_and_against_reference_show(runs):
    memcpy, latency, inflight, _ = runs
    loaded = experiments.reference("loaded_latency")
    alone = loaded.one(load_threads=None)["load_ns"]
    assert f"{alone:,.0f}" in str(f.loaded(loaded, memcpy))
    shown = str(f.against_reference([memcpy, experiments.reference("kernel_bandwidth"), inflight, latency]))
    assert "pinned memcpy HtoD" in shown and "recorded on" in shown
