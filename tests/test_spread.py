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
    ("measure-latency", "footprint_findings",
     _reference("measure_latency", "footprint_findings", "latency_footprint")),
    ("use-write-combined-and-registered-memory", "describe_write_combined",
     _reference("use_write_combined_and_registered_memory", "describe_write_combined", "write_combined")),
    ("use-write-combined-and-registered-memory", "registration",
     _reference("use_write_combined_and_registered_memory", "registration", "registered")),
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


def _records_say(monkeypatch, low: float, high: float) -> None:
    """Every committed record's difference lies in [low, high] (whatever the figure)."""
    monkeypatch.setattr(spread, "across_records", lambda name, figure, **kw: spread.Range(low, high, ("a", "b")))


def _line(text: Any, start: str) -> str:
    return next(line for line in str(text).splitlines() if start in line)


def _footprint(large_ns: float, live: bool = False, gpu: str = "NVIDIA H200") -> Any:
    """Zero-copy chased cold over 64 MiB (1,190-1,210 ns) and over 1 GiB (``large_ns``, 1% either side)."""
    from helpers.experiments.result import Result

    def chase(nbytes: int, ns: list[float]) -> dict[str, Any]:
        return {"memory": "zero_copy", "cpu_cache": "evicted", "nbytes": nbytes, "warm": False, "warm_steps": 0,
                "steps": 1000, "seconds": [n * 1e-6 for n in ns], "load_ns": float(sorted(ns)[1])}

    rows = [chase(64 << 20, [1190.0, 1200.0, 1210.0]), chase(1 << 30, [large_ns * 0.99, large_ns, large_ns * 1.01])]
    return Result("latency_footprint", {}, rows, live, {"gpu": gpu})


def test_the_footprint_verdict_says_within_where_the_difference_is_inside_the_spread(monkeypatch):
    from helpers.findings.measure_latency import footprint_findings

    def said(result: Any) -> str:
        return _line(footprint_findings(result), "Zero-copy, cold")

    _records_say(monkeypatch, 100.0, 300.0)                        # every record: 1 GiB slower by 100-300 ns
    assert "beyond the spread" in said(_footprint(1400.0)) and "changed the latency" in said(_footprint(1400.0))
    inside = said(_footprint(1215.0))                              # the bands of this run's repeats overlap
    assert "within the spread" in inside and "changed" not in inside
    _records_say(monkeypatch, -20.0, 300.0)                        # the records change sign
    assert "within the spread" in said(_footprint(1400.0)) and "changed" not in said(_footprint(1400.0))
    _records_say(monkeypatch, 100.0, 300.0)                        # a live run is one more record: its sign counts
    assert "within the spread" in said(_footprint(1100.0, live=True))


def test_a_live_footprint_on_a_gpu_without_records_is_judged_by_its_repeats():
    from helpers.findings.measure_latency import footprint_findings

    assert "beyond the spread" in _line(footprint_findings(_footprint(1400.0, True, "Test GPU")), "Zero-copy")
    assert "within the spread" in _line(footprint_findings(_footprint(1215.0, True, "Test GPU")), "Zero-copy")


def _write_combined(cpu_wc_GBps: float, gpu_wc_GBps: float = 50.0, virtualization: str = "kvm") -> Any:
    """CPU reads of ordinary mapped memory at 10 GB/s, GPU reads at 50, the write-combined ones as given; every
    repeat within 1% of its median."""
    from helpers.experiments.result import Result

    rows = []
    for allocation, cpu, gpu in (("mapped", 10.0, 50.0), ("mapped + write-combined", cpu_wc_GBps, gpu_wc_GBps)):
        for side, rate in (("cpu", cpu), ("gpu", gpu)):
            seconds = [0.256 / rate * f for f in (0.99, 1.0, 1.01)]
            rows.append({"allocation": allocation, "side": side, "op": "read", "nbytes": 256 << 20,
                         "seconds": seconds, "GBps": 0.256 / seconds[1]})
    return Result("write_combined", {}, rows, False, {"gpu": "NVIDIA H200", "virtualization": virtualization})


def test_the_write_combined_verdict_says_within_where_the_difference_is_inside_the_spread(monkeypatch):
    from helpers.findings.use_write_combined_and_registered_memory import describe_write_combined as said

    _records_say(monkeypatch, -9.0, -1.0)                          # every record of the machine: WC reads slower
    assert "reached the CPU's page tables" in said(_write_combined(0.5))
    assert "That is within their spread" in said(_write_combined(9.9))   # 1% slower, inside this run's repeats
    assert "That is beyond their spread" in said(_write_combined(8.0))   # slower, but far from many times
    assert "beyond their spread" in _line(said(_write_combined(10.0, gpu_wc_GBps=45.0)).replace(". ", ".\n"),
                                          "The GPU")
    _records_say(monkeypatch, -9.0, 1.0)                           # the machine's records change sign
    mixed = said(_write_combined(0.5))
    assert "cannot tell" in mixed and "warns" not in mixed and "as long" not in mixed
    assert "within their spread" in said(_write_combined(10.0, gpu_wc_GBps=45.0))
    assert "That is within their spread" in said(_write_combined(8.0))


def test_a_write_combined_run_on_bare_metal_is_judged_by_its_own_repeats():
    from helpers.findings.use_write_combined_and_registered_memory import describe_write_combined as said

    assert "reached the CPU's page tables" in said(_write_combined(0.5, virtualization="none"))
    assert "That is within their spread" in said(_write_combined(9.9, virtualization="none"))


def test_registered_against_allocated_reads_says_within_inside_the_spread(monkeypatch):
    import dataclasses

    from helpers.findings.use_write_combined_and_registered_memory import registration

    reg = experiments.reference("registered")
    slower = dataclasses.replace(reg, rows=[dict(r, GBps=r["GBps"] * 0.8, seconds=[t / 0.8 for t in r["seconds"]])
                                            if r["allocation"] == "registered" else r for r in reg.rows])
    _records_say(monkeypatch, -12.0, -8.0)                         # every record: registered reads slower
    assert "20% slower, beyond their spread" in _line(registration(slower), "read_float4_x4")
    _records_say(monkeypatch, -12.0, 1.0)                          # the records change sign
    assert "as fast, within their spread" in _line(registration(slower), "read_float4_x4")
