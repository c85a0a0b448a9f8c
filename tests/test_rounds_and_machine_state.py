"""Sweeps timed in rounds, and the machine's state around each recorded experiment (model-zero-copy-reads)."""

from __future__ import annotations

import copy

import pytest

from helpers import records
from helpers.experiments.buffers import seconds_row
from helpers.memory.timing import RoundTiming, Timing, rounds
from helpers.platform import machine_state


@pytest.mark.parametrize("points, repeats", [(1, 9), (12, 9), (33, 9), (3, 10)])
def test_every_round_visits_every_point_once(points: int, repeats: int) -> None:
    order = rounds(points, repeats)
    assert len(order) == repeats
    for visit in order:
        assert sorted(visit) == list(range(points))


def test_rounds_rotate_so_no_point_is_always_first() -> None:
    order = rounds(33, 9)
    firsts = [visit[0] for visit in order]
    assert len(set(firsts)) == 9  # nine different points open the nine rounds
    positions = [[visit.index(p) for visit in order] for p in range(33)]
    assert all(max(pos) - min(pos) >= 20 for pos in positions)  # every point is timed early and late


def test_rounds_refuse_an_empty_sweep() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        rounds(0, 9)


def test_a_row_timed_in_rounds_keeps_when_each_repeat_started() -> None:
    row = seconds_row(RoundTiming((0.02, 0.03), (0.0, 1.25)), stride=1)
    assert row == {"stride": 1, "seconds": [0.02, 0.03], "started_s": [0.0, 1.25]}
    assert "started_s" not in seconds_row(Timing((0.02,)), stride=1)


def test_records_accept_start_times_and_refuse_negative_ones() -> None:
    record = copy.deepcopy(records.reference_record()[0])
    row = record["experiments"]["offset"]["rows"][0]
    row["started_s"] = [0.0] * len(row["seconds"])
    records.validate(record)
    row["started_s"] = [-1.0]
    with pytest.raises(records.RecordError, match="started_s"):
        records.validate(record)


def test_a_snapshot_without_a_gpu_still_reads_the_host() -> None:
    state = machine_state.snapshot()
    assert state["monotonic_s"] > 0
    assert "steal_seconds" in state and state["steal_seconds"] >= 0  # Linux: /proc/stat


def test_change_reports_steal_share_replays_and_moved_clocks(monkeypatch) -> None:
    monkeypatch.setattr(machine_state.os, "cpu_count", lambda: 4)
    before = {"monotonic_s": 10.0, "steal_seconds": 1.0, "pcie_replays": 3, "sm_clock_MHz": 1980,
              "memory_clock_MHz": 3201}
    after = {"monotonic_s": 20.0, "steal_seconds": 5.0, "pcie_replays": 5, "sm_clock_MHz": 1755,
             "memory_clock_MHz": 3201}
    moved = machine_state.change(before, after)
    assert moved == {"steal_share": pytest.approx(0.1), "pcie_replays": 2, "sm_clock_MHz": [1980, 1755]}
    assert machine_state.change({}, {}) == {}


def test_records_refuse_a_machine_state_that_is_not_an_object() -> None:
    record = copy.deepcopy(records.reference_record()[0])
    record["provenance"]["machine_state"] = ["not", "an", "object"]
    with pytest.raises(records.RecordError, match="machine_state"):
        records.validate(record)


def test_board_is_none_without_nvml(monkeypatch) -> None:
    from helpers.sharing import contention

    monkeypatch.setattr(contention, "nvml_handle", lambda: None)
    assert machine_state.board() is None


def test_summary_reads_the_sweeps_snapshots() -> None:
    snap = {"sm_clock_MHz": 1980, "memory_clock_MHz": 3201, "clock_event_reasons": 0, "pcie_gen": 5, "pcie_width": 16}
    slow = dict(snap, sm_clock_MHz=1755, clock_event_reasons=4)
    provenance = {"machine_state": {
        "stride": {"before": snap, "after": snap, "change": {"pcie_replays": 1, "steal_share": 0.001}},
        "offset": {"before": snap, "after": slow, "change": {"pcie_replays": 2, "steal_share": 0.004}},
        "memcpy": {"before": dict(snap, sm_clock_MHz=900), "after": snap, "change": {}}}}
    assert machine_state.summary(provenance) == {
        "board": None, "sm_clock_MHz": [1755, 1980], "memory_clock_MHz": [3201], "clock_event_reasons": [0, 4],
        "pcie_link": ["Gen5 x16"], "pcie_replays": 3, "steal_share": 0.004}
    assert machine_state.summary({}) is None
