"""The course's rule for saying that two figures differ (helpers.analysis.spread, issue 30 §5): beyond this run's
own spread, and of one sign in every committed record. Every findings verdict that compares two figures of a run,
or two states, is held to it here: add yours to VERDICTS (lesson slug, function, a call on the reference record).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from helpers import experiments, records
from helpers.analysis import spread


def test_beyond_spread_needs_both_the_run_s_own_spread_and_one_sign_across_records():
    positive, mixed = spread.Range(1.0, 40.0, ("a", "b")), spread.Range(-6.0, 40.0, ("a", "b"))
    assert spread.beyond_spread(5.0, positive, own=2.0)
    assert not spread.beyond_spread(5.0, positive, own=8.0)        # within the run's own repeats
    assert not spread.beyond_spread(5.0, mixed, own=0.0)           # the records change sign
    assert not spread.beyond_spread(-5.0, positive, own=0.0)       # this run against every record
    assert spread.beyond_spread(-5.0, spread.Range(-9.0, -1.0, ("a",)), own=1.0)


def test_a_range_widens_to_take_a_live_run_in_and_says_itself():
    span = spread.Range(3.75, 10.56, ("a", "b")).including(12.0)
    assert (span.low, span.high, span.count) == (3.75, 12.0, 3)
    assert span.words("GB/s") == "3.8-12.0 GB/s" and spread.Range(2.0, 2.0, ("a",)).words("x") == "2.0x"
    assert not spread.Range(-1.0, 1.0, ("a",)).one_sign() and spread.Range(0.5, 1.0, ("a",)).one_sign()


def test_across_records_reads_every_committed_record_that_holds_the_figure():
    holding = [path.name for record, path in records.matching_records() if "memcpy" in record["experiments"]]
    span = spread.across_records("memcpy", lambda r: r.one(direction="htod", host_memory="pinned",
                                                           nbytes=int(max(r.column("nbytes"))))["GBps"])
    assert sorted(span.records) == sorted(holding) and 0 < span.low <= span.high
    reference = experiments.reference("memcpy")
    n = int(max(reference.column("nbytes")))
    assert span.low <= reference.one(direction="htod", host_memory="pinned", nbytes=n)["GBps"] <= span.high
    with pytest.raises(LookupError):
        spread.across_records("memcpy", lambda r: None)


def _reference(module: str, name: str, *experiment_names: str) -> Callable[[], Any]:
    """A call of ``helpers.findings.<module>.<name>`` on the reference record's results."""
    def call() -> Any:
        import importlib
        function = getattr(importlib.import_module(f"helpers.findings.{module}"), name)
        return function(*(experiments.reference(e) for e in experiment_names))
    return call


# (lesson slug, verdict function, a call of it on the reference record): each compares two figures of one run or
# two states. Add a verdict here when a findings function says that two figures differ (or do not).
VERDICTS: list[tuple[str, str, Callable[[], Any]]] = [
    ("measure-what-pinning-buys", "staging", _reference("measure_what_pinning_buys", "staging", "memcpy")),
    ("measure-what-pinning-buys", "speedups", _reference("measure_what_pinning_buys", "speedups", "memcpy")),
    ("measure-latency", "cpu_state", _reference("measure_latency", "cpu_state", "latency")),
    ("coalesce-and-align-accesses", "misalignment",
     _reference("coalesce_and_align_accesses", "misalignment", "offset")),
    ("coalesce-and-align-accesses", "vector_width",
     _reference("coalesce_and_align_accesses", "vector_width", "vector_width")),
    ("decide-when-zero-copy-wins", "out_of_core", _reference("decide_when_zero_copy_wins", "out_of_core", "out_of_core")),
    ("measure-bandwidth", "lore", _reference("measure_bandwidth", "lore", "memcpy", "kernel_bandwidth")),
    ("overlap-copies-with-streams", "sizes", _reference("overlap_copies_with_streams", "sizes", "end_to_end")),
]


@pytest.mark.parametrize("slug, name, call", VERDICTS, ids=[f"{s}.{n}" for s, n, _ in VERDICTS])
def test_every_comparing_verdict_is_judged_by_the_spread_rule(slug, name, call, monkeypatch):
    seen: list[tuple[float, spread.Range]] = []
    rule = spread.beyond_spread

    def counted(difference: float, across: spread.Range, own: float = 0.0) -> bool:
        seen.append((difference, across))
        return rule(difference, across, own)

    monkeypatch.setattr(spread, "beyond_spread", counted)
    shown = call()
    assert seen, f"{slug}'s {name} compares two figures without helpers.analysis.spread.beyond_spread"
    assert str(shown)
    assert all(across.count >= 1 for _, across in seen)


def test_across_record_pairs_reads_both_experiments_of_each_record():
    holding = [path.name for record, path in records.matching_records()
               if {"memcpy", "kernel_bandwidth"} <= set(record["experiments"])]
    span = spread.across_record_pairs("kernel_bandwidth", "memcpy",
                                      lambda k, m: float(len(k.rows)) - float(len(m.rows)))
    assert sorted(span.records) == sorted(holding)
    with pytest.raises(LookupError):
        spread.across_record_pairs("kernel_bandwidth", "memcpy", lambda k, m: None)
