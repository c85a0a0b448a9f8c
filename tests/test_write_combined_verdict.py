"""Lesson 13: whether the CPU got a write-combined mapping is decided from the rows by the course's spread rule (a GPU
with no committed record: by its own repeats alone)."""

from __future__ import annotations

from helpers.findings.use_write_combined_and_registered_memory import write_combined_verdict
from helpers.experiments.result import Result


def _result(cpu_wc_GBps: float, gpu_wc_GBps: float = 50.0) -> Result:
    rows = []
    for allocation, cpu, gpu in (("mapped", 7.0, 50.0), ("mapped + write-combined", cpu_wc_GBps, gpu_wc_GBps)):
        for side, rate in (("cpu", cpu), ("gpu", gpu)):
            nbytes = 256 << 20
            seconds = [nbytes / (rate * 1e9) * f for f in (0.99, 1.0, 1.01)]
            rows.append({"allocation": allocation, "side": side, "op": "read", "nbytes": nbytes, "seconds": seconds,
                         "GBps": nbytes / seconds[1] / 1e9})
    return Result("write_combined", {}, rows, False, {"gpu": "test"})


def test_a_vm_that_hides_the_memory_type():
    verdict = write_combined_verdict(_result(7.0))
    assert not verdict["cpu_wc_honoured"] and verdict["gpu_same"]
    assert abs(verdict["cpu_read_ratio"] - 1) < 0.01


def test_bare_metal_with_uncached_reads():
    verdict = write_combined_verdict(_result(0.1))
    assert verdict["cpu_wc_honoured"] and verdict["cpu_read_ratio"] < 0.05


def test_a_small_slowdown_within_the_spread_is_not_a_verdict():
    assert not write_combined_verdict(_result(6.96))["cpu_wc_honoured"]
    assert not write_combined_verdict(_result(50.0, gpu_wc_GBps=40.0))["gpu_same"]
