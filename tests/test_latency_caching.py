"""Lessons 07 and 08: the other-SM caching control and the chase findings, decided from rows (CPU only)."""

from __future__ import annotations

import numpy as np
import pytest

from helpers.experiments import Result
from helpers.experiments.latency import compare_rows, footprint_change, load_ns_spread
from helpers.experiments.transfer import (REREAD_DESIGN, caching_findings, reread_rotation, reread_schedule,
                                          sm_rereads)


def test_other_sm_schedule_gives_every_block_every_chunk_once() -> None:
    schedule = reread_schedule(132, 132, reread_rotation("other_sm"))
    assert all(sorted(row) == list(range(132)) for row in schedule)  # each block reads each chunk once
    assert all(sorted(col) == list(range(132)) for col in schedule.T)  # each pass reads every chunk once
    assert np.all(reread_schedule(5, 3, reread_rotation("same_sm")) == np.arange(5)[:, None])


def test_sm_rereads_catches_an_sm_that_ran_two_blocks() -> None:
    assert sm_rereads(list(range(8)), 8, 1) == 0
    assert sm_rereads([0, 1, 2, 3, 4, 5, 6, 0], 8, 1) == 8  # SM 0 read all 8 chunks twice
    assert sm_rereads(list(range(8)), 4, 0) == 8 * 3  # same_sm: each block re-reads its chunk 3 times
    with pytest.raises(ValueError, match="Unknown re-read pattern"):
        reread_rotation("any_sm")


def _caching(rates: dict[tuple[str, str, str], float], rereads: int = 0, link: float = 55.0) -> Result:
    rows = [{"memory": "memcpy_htod_pinned", "nbytes": 1 << 28, "passes": 1, "seconds": [0.005],
             "delivered_GBps": link}]
    for (memory, load, pattern), rate in rates.items():
        rows.append({"memory": memory, "design": REREAD_DESIGN, "nbytes": 8 << 20, "load": load, "pattern": pattern,
                     "rotate": reread_rotation(pattern), "passes": 132, "grid": 132, "block": 1024,
                     "seconds": [0.02] * 9, "delivered_GBps": rate, "distinct_sms": [132] * 9,
                     "sm_rereads": [rereads if pattern == "other_sm" else 131 * 132] * 9, "placement_retries": 0,
                     "dynamic_shared_bytes": 117760, "read_bytes": 8380416, "sm_of_block": list(range(132))})
    return Result("caching", {}, rows, True, {"gpu": "test GPU"})


def _rates(zero_copy: dict[tuple[str, str], float], device: float = 3000.0) -> dict[tuple[str, str, str], float]:
    rates = {("zero_copy", load, pattern): zero_copy.get((load, pattern), 51.0)
             for load in ("ldg", "ldca", "ldcg", "ldcv") for pattern in ("same_sm", "other_sm")}
    rates.update({("device", load, pattern): device for load in ("ldg", "ldca", "ldcg", "ldcv")
                  for pattern in ("same_sm", "other_sm")})
    return rates


def test_caching_findings_l1_not_l2() -> None:
    found = caching_findings(_caching(_rates({("ldg", "same_sm"): 4000.0, ("ldca", "same_sm"): 3900.0})))
    assert found["controlled"] and found["valid_other_sm"] and found["other_sm_within_link"]
    assert found["l1"] and not found["l2"] and found["device_l2"]


def test_caching_findings_see_an_l2_and_a_broken_control() -> None:
    found = caching_findings(_caching(_rates({("ldg", "same_sm"): 4000.0, ("ldcg", "other_sm"): 400.0})))
    assert found["l2"] and not found["other_sm_within_link"]
    assert not caching_findings(_caching(_rates({}), rereads=132))["valid_other_sm"]


def test_caching_findings_on_a_record_made_before_the_control() -> None:
    old = _caching(_rates({}))
    for row in old.rows:
        row.pop("design", None)
    assert caching_findings(old) == {"controlled": False, "link_GBps": 55.0}


def _chase(memory: str, nbytes: int, ns: list[float], warm: bool, steps: int = 1000) -> dict:
    return {"memory": memory, "nbytes": nbytes, "warm": warm, "warm_steps": nbytes // 128 if warm else 0,
            "steps": steps, "seconds": [n * steps * 1e-9 for n in ns], "load_ns": float(np.median(ns)), "sm": [3] * len(ns)}


def test_compare_rows_needs_bands_apart() -> None:
    a = _chase("device", 1 << 26, [300, 301, 302, 303, 304], False)
    assert load_ns_spread(a) == pytest.approx((300, 302, 304))
    assert not compare_rows(a, _chase("device", 1 << 34, [303, 305, 306, 307, 308], False))["beyond_spread"]
    apart = compare_rows(a, _chase("device", 1 << 34, [330, 331, 333, 334, 335], False))
    assert apart["beyond_spread"] and apart["change"] == pytest.approx(333 / 302 - 1)


def test_footprint_findings_on_a_gpu_with_no_record_judge_by_the_repeats_alone() -> None:
    """A live run on a GPU with no committed record (helpers.analysis.spread.same_gpu): its own repeats decide."""
    from helpers.findings.measure_latency import footprint_findings

    KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
    rows = [_chase("device", 64 * KiB, [35, 35, 36], True), _chase("device", MiB, [150, 151, 152], True),
            _chase("device", 64 * MiB, [300, 302, 304], False), _chase("device", GiB, [301, 303, 305], False),
            _chase("zero_copy", 64 * KiB, [35, 36, 36], True), _chase("zero_copy", MiB, [1195, 1200, 1205], True),
            _chase("zero_copy", 64 * MiB, [1190, 1200, 1210], False), _chase("zero_copy", GiB, [1400, 1420, 1440], False)]
    text = footprint_findings(Result("latency_footprint", {}, rows, True, {"gpu": "test GPU"}))
    assert "a step down at the smallest size" in text and "L1" not in text   # the step, not its cause
    assert "something on the GPU kept them" in text                          # 64 KiB mapped: a fraction of a trip
    assert "every load crossed the link" in text                             # 1 MiB mapped: within the spread
    assert "no effect of footprint to explain" in text                       # device cold: within the spread
    assert "not why" in text                                                 # zero-copy cold grew: no cause named
    change = footprint_change(Result("latency_footprint", {}, rows, True), "zero_copy")
    assert change is not None and change["beyond_spread"] and change["monotonic"]
