"""Lesson 10's PCIe model (helpers.analysis.pcie_model) and its command, ``python -m helpers model``."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from helpers.analysis import pcie_model
from helpers import records
from helpers.__main__ import main


# ---------------------------------------------------------------------------- traces and counts
def test_strided_trace_cache_key_includes_warps() -> None:
    four = pcie_model.strided_trace(1, 0, warps=4)
    eight = pcie_model.strided_trace(1, 0, warps=8)
    assert (four.requests, eight.requests) == (4, 8)  # one load per warp that reads
    assert (four.useful_bytes, eight.useful_bytes) == (4 * 128, 8 * 128)
    assert pcie_model.strided_trace(1, 0, warps=4) is four  # cached
    assert pcie_model.strided_trace(1, 0, warps=4, kernel="read_strided_float4").useful_bytes == 4 * four.useful_bytes


def test_counts_charge_shared_lines_once_on_the_link_and_twice_against_the_rate() -> None:
    def counts(offset: int) -> pcie_model.Counts:
        return pcie_model.launch_counts(lambda w: pcie_model.strided_trace(1, offset, warps=w), 128.0 * 1000)

    aligned, misaligned, sector_aligned = counts(0), counts(1), counts(8)
    assert (aligned.lines, aligned.span_sectors, aligned.line_requests) == (1000, 4000, 1000)
    # a misaligned warp touches two lines, but its second line is the next warp's first one
    assert (misaligned.lines, misaligned.span_sectors, misaligned.line_requests) == (1000, 4000, 2000)
    assert (sector_aligned.lines, sector_aligned.span_sectors, sector_aligned.line_requests) == (1000, 4000, 2000)
    stride32 = pcie_model.launch_counts(lambda w: pcie_model.strided_trace(32, 0, warps=w), 4.0 * 1000)
    assert (stride32.lines, stride32.span_sectors, stride32.line_requests) == (1000, 1000, 1000)


# ---------------------------------------------------------------------------- fitting
def _synthetic_record(truth: pcie_model.Model, noise: float = 0.05) -> dict:
    """A record whose sweep times come from ``truth`` with +-``noise`` scatter: made up, to test the fit."""
    rng = np.random.default_rng(1)
    count = 1 << 22
    experiments: dict = {}
    for kind, points in (("stride", [(s, 0) for s in (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)]),
                         ("offset", [(1, o) for o in range(33)])):
        rows = []
        for s, o in points:
            c = pcie_model.launch_counts(lambda w: pcie_model.strided_trace(s, o, warps=w), 4.0 * count)
            sec = truth.cost(c)[0] * rng.uniform(1 - noise, 1 + noise)
            rows.append({"memory": "zero_copy", "stride": s, "offset_floats": o, "count": count, "grid": 1056,
                         "seconds": [sec], "useful_GBps": 4 * count / sec / 1e9})
        experiments[kind] = {"params": {"kernel": "read_strided", "block": 256, "count": count}, "rows": rows}
    experiments["memcpy"] = {"params": {}, "rows": [
        {"direction": "htod", "host_memory": "pinned", "nbytes": 1 << 26, "seconds": [1.0], "GBps": truth.link_GBps},
        {"direction": "htod", "host_memory": "pageable", "nbytes": 1 << 26, "seconds": [1.0], "GBps": 99.0}]}
    experiments["kernel_bandwidth"] = {"params": {}, "rows": [
        {"memory": "zero_copy", "op": "read", "kernel": "read_float4_x4", "nbytes": n, "grid": 1056, "block": 256,
         "seconds": [t], "GBps": n / t / 1e9} for n, t in ((4096, truth.launch_floor_seconds), (1 << 30, 0.02))]}
    return {"format": records.FORMAT, "version": records.VERSION,
            "provenance": {"gpu": "synthetic", "date": "2000-01-01T00:00:00+00:00"}, "experiments": experiments}


def test_calibration_recovers_a_synthetic_link() -> None:
    truth = pcie_model.Model(link_GBps=53.0, overhead_bytes=40.0, request_rate=4e8, launch_seconds=2e-5,
                             launch_floor_seconds=1e-5)
    record = _synthetic_record(truth)
    fitted = pcie_model.calibrate(record)
    assert fitted.link_GBps == 53.0  # the pinned htod row, not the faster pageable one
    assert fitted.launch_floor_seconds == 1e-5
    rows = pcie_model.compare_with_record(record, fitted)
    assert len(rows) == 12 + 33 and {r.kind for r in rows} == {"stride", "offset"}
    assert [r.fitted for r in rows] == [r.kind == "stride" for r in rows]
    assert max(abs(r.rel_error) for r in rows) < 0.08
    assert abs(fitted.request_rate / truth.request_rate - 1) < 0.15
    bad = pcie_model.Model(link_GBps=53.0, overhead_bytes=0.0, request_rate=1e12, launch_seconds=0.0)
    assert max(abs(r.rel_error) for r in pcie_model.compare_with_record(record, bad)) > 0.25


def test_launch_time_is_bounded_below_by_the_records_smallest_zero_copy_launch(reference) -> None:
    record = reference[0]
    floor = pcie_model.launch_floor_seconds(record)
    smallest = min((r for r in record["experiments"]["kernel_bandwidth"]["rows"]
                    if r["memory"] == "zero_copy" and r["op"] == "read"), key=lambda r: r["nbytes"])
    assert floor == float(np.median(smallest["seconds"])) > 0
    assert pcie_model.calibrate(record).launch_seconds >= floor
    # raise the floor (a made-up 60 us launch, not a measurement): the fit must follow it
    slow = copy.deepcopy(record)
    for row in slow["experiments"]["kernel_bandwidth"]["rows"]:
        if row["memory"] == "zero_copy" and row["op"] == "read" and row["nbytes"] == smallest["nbytes"]:
            row["seconds"] = [60e-6] * len(row["seconds"])
    assert pcie_model.calibrate(slow).launch_seconds >= 60e-6


def test_a_record_without_what_the_model_needs_is_refused_clearly(reference) -> None:
    record = copy.deepcopy(reference[0])
    del record["experiments"]["kernel_bandwidth"]
    with pytest.raises(pcie_model.ModelError, match="kernel_bandwidth"):
        pcie_model.calibrate(record)


def test_held_out_check_of_the_reference_record_counts_every_held_out_point(reference) -> None:
    """Fitted on the stride sweep, judged on the offset and vector-width sweeps of the same record.

    Whether the errors meet the targets is a benchmark (``python -m helpers model`` reports
    ``meets_targets``), not a unit test: it depends on the measurements, not on the code."""
    result = pcie_model.check(reference[0], reference[0], allow_same=True)
    assert result["same_run"] and result["points"] == sum(
        1 for kind in ("offset", "vector_width") for r in reference[0]["experiments"][kind]["rows"]
        if r["memory"] == "zero_copy")
    assert 0 <= result["median_abs_error"] <= result["max_abs_error"] < 1, result
    assert result["meets_targets"] == (result["median_abs_error"] <= pcie_model.TARGET_MEDIAN
                                       and result["max_abs_error"] <= pcie_model.TARGET)


# ---------------------------------------------------------------------------- python -m helpers model
def _second_run(record: dict) -> dict:
    """The reference with a later date and its zero-copy times scaled by 0.97-1.03: a MADE-UP second run
    that lets the command be tested while data/ holds one H200 record. Not a measurement."""
    rng = np.random.default_rng(7)
    other = copy.deepcopy(record)
    # after the reference (whichever record is newest in data/), not in the future
    later = records.parse_date(record["provenance"]["date"]) + timedelta(minutes=30)
    other["provenance"]["date"] = later.isoformat()
    for kind in pcie_model.CHECK_SWEEPS:
        for row in other["experiments"][kind]["rows"]:
            k = float(rng.uniform(0.97, 1.03))
            row["seconds"] = [s * k for s in row["seconds"]]
            row["useful_GBps"] /= k
    return other


@pytest.fixture
def two_runs(tmp_path: Path, reference, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.setenv("ZC_DATA_DIR", str(tmp_path))
    # file names sort the other way round from the dates: the command must go by date
    newer = records.save_record(_second_run(reference[0]), tmp_path / "a-later-run.json")
    older = records.save_record(reference[0], tmp_path / "b-reference.json")
    return older, newer


def _model(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict | None, str]:
    code = main(["model", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else None), err


def test_model_fits_on_the_oldest_and_checks_on_the_newest_by_default(two_runs, capsys) -> None:
    older, newer = two_runs
    code, result, err = _model(capsys)
    assert code == 0, err
    assert (result["fit_file"], result["check_file"]) == (str(older), str(newer))
    for key in ("points", "median_abs_error", "max_abs_error", "parameters", "worst", "meets_targets", "by_sweep"):
        assert key in result
    params = result["parameters"]
    for key in ("link_GBps", "overhead_bytes", "request_rate_per_s", "launch_seconds", "launch_floor_seconds"):
        assert isinstance(params[key], float)
    assert params["launch_seconds"] >= params["launch_floor_seconds"] > 0
    zero_copy = {kind: sum(r["memory"] == "zero_copy" for r in records.load_record(older)["experiments"][kind]["rows"])
                 for kind in pcie_model.CHECK_SWEEPS}
    # held out: offset + vector width of the fit record, every sweep of the check record
    assert result["points"] == zero_copy["offset"] + zero_copy["vector_width"] + sum(zero_copy.values())
    assert not result["same_run"] and "check record: stride" in result["by_sweep"]
    assert result["max_abs_error"] >= result["median_abs_error"] > 0


def test_model_refuses_to_check_a_record_against_itself(two_runs, capsys, tmp_path) -> None:
    older, _ = two_runs
    code, _, err = _model(capsys, "--fit", str(older), "--check", str(older))
    assert code == 1 and "same file" in err and "--allow-same" in err and err.count("\n") == 1
    copied = tmp_path / "copy-of-the-reference.json"
    copied.write_text(older.read_text())
    code, _, err = _model(capsys, "--fit", str(older), "--check", str(copied))
    assert code == 1 and "same run" in err and "--allow-same" in err
    code, result, err = _model(capsys, "--fit", str(older), "--check", str(older), "--allow-same")
    assert code == 0 and result["same_run"] and "check record: stride" not in result["by_sweep"]


def test_model_command_refuses_by_default_while_data_holds_one_h200_record() -> None:
    h200 = records.matching_records()
    if len(h200) != 1:
        pytest.skip("data/ holds more than one H200 record: the default compares the oldest with the newest")
    done = subprocess.run([sys.executable, "-m", "helpers", "model"], capture_output=True, text=True, timeout=120,
                          env={**os.environ})
    assert done.returncode == 1 and done.stdout == ""
    assert "only one H200 record" in done.stderr and done.stderr.count("\n") == 1


def test_run_to_run_measures_how_far_two_runs_of_the_same_points_differ(reference) -> None:
    record = reference[0]
    assert pcie_model.run_to_run(record, record)["max_abs_difference"] == 0
    slower = copy.deepcopy(record)
    for kind in pcie_model.CHECK_SWEEPS:  # every zero-copy point 10 % slower: a made-up second run
        for row in slower["experiments"][kind]["rows"]:
            row["seconds"] = [s * 1.1 for s in row["seconds"]]
    spread = pcie_model.run_to_run(record, slower)
    assert spread["points"] == len(pcie_model.sweep_points(record))
    assert spread["median_abs_difference"] == pytest.approx(1 - 1 / 1.1)
    assert spread["worst"]["difference"] == pytest.approx(1 / 1.1 - 1)
    other = copy.deepcopy(slower)
    other["provenance"]["date"] = "2030-01-01T00:00:00+00:00"
    assert pcie_model.check(record, other)["run_to_run"]["points"] == spread["points"]


# ---------------------------------------------------------------------------- counts before times (issue 19)
def _per_line(stride: int, offset: int, race: pcie_model.Race) -> pcie_model.Counts:
    """Counts of 1000 lines' worth of a pattern (1000 warps of useful floats at stride 1)."""
    return pcie_model.pattern_counts("read_strided", stride, offset, 4.0 * 32 * 1000 / min(stride, 32), race)


@pytest.mark.parametrize("stride, sectors", [(1, 4), (2, 4), (8, 4), (16, 3), (32, 1), (64, 1)])
def test_aligned_patterns_make_one_request_per_line_carrying_its_span(stride, sectors) -> None:
    for race in (pcie_model.Race(0.0, 0.0), pcie_model.Race(1.0, 1.0)):  # no two warps share a line: no race
        c = _per_line(stride, 0, race)
        assert c.requests == pytest.approx(c.lines) and c.request_sectors == pytest.approx(sectors * c.lines)
        assert c.completion_bytes == pytest.approx((32 * sectors + pcie_model.COMPLETION_HEADER_BYTES) * c.lines)


def test_a_line_two_warps_share_costs_one_or_two_requests_by_the_race() -> None:
    lower_first, upper_first = pcie_model.Race(1.0, 0.0), pcie_model.Race(0.0, 0.0)
    # offset 1: the lower warp needs sector 0 only, the upper warp all four; the narrow one first -> 2 requests
    assert _per_line(1, 1, lower_first).requests == pytest.approx(2000)
    assert _per_line(1, 1, upper_first).requests == pytest.approx(1000)
    assert _per_line(1, 1, pcie_model.Race(0.6, 0.0)).requests == pytest.approx(1600)
    # offset 25: now the lower warp is the wide one, so the race runs the other way
    assert _per_line(1, 25, lower_first).requests == pytest.approx(1000)
    assert _per_line(1, 25, upper_first).requests == pytest.approx(2000)
    # offsets 8 and 16: the two warps ask for disjoint sectors, two requests whatever the order
    for offset in (8, 16):
        for race in (lower_first, upper_first):
            c = _per_line(1, offset, race)
            assert c.requests == pytest.approx(2000) and c.request_sectors == pytest.approx(4000)
    # a refetch asks again for a sector already asked for: more bytes, not more requests
    assert _per_line(1, 1, pcie_model.Race(1.0, 1.0)).request_sectors == pytest.approx(5000)
    assert _per_line(1, 1, pcie_model.Race(1.0, 1.0)).requests == pytest.approx(2000)


def _counted_record(race: pcie_model.Race) -> dict:
    """A record whose counters are what ``race`` predicts, plus 0.5 % of other traffic: MADE UP, to test the fit."""
    rows = []
    for p in __import__("helpers.experiments.counters", fromlist=["x"]).default_patterns(1 << 22):
        useful = p["count"] * (16 if p["kernel"].endswith("float4") else 4)
        c = pcie_model.pattern_counts(p["kernel"], p["stride"], p["offset_floats"], useful, race)
        rows.append({**p, "useful_bytes": useful, "pcie__write_bytes": 16 * c.requests * 1.005,
                     "pcie__read_bytes": c.completion_bytes * 1.005,
                     "lts__t_requests_aperture_sysmem_op_read": 1.5 * c.requests,
                     "lts__t_sectors_aperture_sysmem_op_read": 4.0 * c.requests})
    return {"experiments": {"counters": {"params": {}, "rows": rows}}}


def test_the_race_is_recovered_from_counters_and_the_counts_are_checked_against_them() -> None:
    truth = pcie_model.Race(0.57, 0.2)
    record = _counted_record(truth)
    fitted = pcie_model.fit_race(record)
    assert fitted.lower_first == pytest.approx(0.57, abs=0.02) and fitted.refetch == pytest.approx(0.2, abs=0.1)
    summary = pcie_model.counts_summary(pcie_model.compare_counts(record, fitted))
    assert summary["within_target"] and summary["l2_per_pcie_request"] == pytest.approx(1.5 / 1.005)
    wrong = pcie_model.counts_summary(pcie_model.compare_counts(record, pcie_model.Race(0.0, 0.0)))
    assert not wrong["within_target"]  # the upper warp always first: offsets 1..7 off by far more than 2 %


def test_the_counters_of_every_committed_record_are_predicted_within_two_percent() -> None:
    """The trace's counts, with the race fitted on the same record, against what Nsight Compute counted."""
    counted = [(r, p) for r, p in records.matching_records() if r["experiments"].get("counters")]
    if not counted:
        pytest.skip("no H200 record in data/ carries counters")
    for record, path in counted:
        summary = pcie_model.counts_summary(pcie_model.compare_counts(record, pcie_model.fit_race(record)))
        assert summary["within_target"], (path.name, summary)


def test_a_record_without_counters_is_refused_for_counts(reference) -> None:
    bare = copy.deepcopy(reference[0])
    bare["experiments"].pop("counters", None)
    with pytest.raises(pcie_model.ModelError, match="--only counters"):
        pcie_model.fit_race(bare)
    assert "no counters" in pcie_model.calibrate(bare).calibrated_on


def _quiet_copy(record: dict, date: str) -> dict:
    """The record with every sweep point made 64 times longer at the same rate and timed 9 times: a MADE-UP
    quiet run, to test how the command chooses and labels records."""
    other = copy.deepcopy(record)
    other["provenance"]["date"] = date
    for kind in pcie_model.CHECK_SWEEPS:
        experiment = other["experiments"][kind]
        experiment["params"].update(repeats=9, nbytes=1 << 30, device_nbytes=1 << 30)
        for row in experiment["rows"]:
            for key in ("count", "nbytes"):
                if key in row:
                    row[key] *= 64
            row["seconds"] = [float(np.median(row["seconds"])) * 64] * 9
    return other


def test_model_fits_on_a_quiet_record_and_labels_the_others(tmp_path, reference, monkeypatch, capsys) -> None:
    monkeypatch.setenv("ZC_DATA_DIR", str(tmp_path))
    old_loud = records.load_record(Path(__file__).resolve().parent.parent / "data" / "nvidia-h200-2026-12-02-3.json")
    loud = records.save_record(old_loud, tmp_path / "a-loud.json")
    quiet_one = records.save_record(_quiet_copy(reference[0], "2026-12-03T00:00:00+00:00"), tmp_path / "b.json")
    quiet_two = records.save_record(_quiet_copy(_second_run(reference[0]), "2026-12-03T12:00:00+00:00"),
                                    tmp_path / "c.json")
    code, result, err = _model(capsys)
    assert code == 0, err
    assert result["fit_file"] == str(quiet_one) and result["check_file"] == str(quiet_two)
    labels = {c["check_file"]: c["quiet"] for c in result["checks"]}
    assert labels == {str(loud): False, str(quiet_two): True}
    assert result["quiet"] == {"fit record": True, "check record": True}
    assert result["all_quiet_checks_meet_targets"] == next(c["meets_targets"] for c in result["checks"] if c["quiet"])
    assert result["counts"]["check record"]["launches"] == len(reference[0]["experiments"]["counters"]["rows"])
    quiet_check = next(c for c in result["checks"] if c["quiet"])
    assert quiet_check["points"] == len(pcie_model.sweep_points(reference[0]))  # that record's own points alone


# ---------------------------------------------------------------------------- the third term: 64-byte halves
@pytest.mark.parametrize("stride, offset, per_line", [(1, 0, 2.0), (1, 16, 2.0), (1, 8, 3.0), (1, 1, 3.0), (1, 25, 3.0),
                                                      (16, 0, 2.0), (24, 0, 4 / 3), (32, 0, 1.0)])
def test_half_lines_count_the_64_byte_halves_each_warp_needs_before_merging(stride, offset, per_line) -> None:
    for race in (pcie_model.Race(0.0, 0.0), pcie_model.Race(1.0, 1.0), pcie_model.Race(0.4, 0.3, 0.3)):
        c = _per_line(stride, offset, race)
        assert c.half_lines == pytest.approx(per_line * c.lines)  # no race: counted before the L2 merges
    float4 = pcie_model.pattern_counts("read_strided_float4", 1, 0, 16.0 * 32 * 1000)
    assert float4.half_lines == pytest.approx(2 * float4.lines)


def test_the_half_line_term_tells_offset_16_from_offset_8() -> None:
    """Same PCIe requests and bytes; offset 8's 96-byte request straddles the middle of the line, offset 16's do not."""
    eight, sixteen = _per_line(1, 8, pcie_model.Race()), _per_line(1, 16, pcie_model.Race())
    assert eight.requests == pytest.approx(sixteen.requests)
    assert eight.completion_bytes == pytest.approx(sixteen.completion_bytes)
    two_terms = pcie_model.Model(55.0, 11.0, 7e8, 1e-5)
    assert two_terms.cost(eight) == two_terms.cost(sixteen)  # lesson 10's formula cannot tell them apart
    link = (32 * eight.request_sectors + 11.0 * eight.requests) / 55e9
    assert two_terms.cost(eight)[0] == pytest.approx(max(link, eight.requests / 7e8) + 1e-5)
    three = pcie_model.Model(55.0, 11.0, 7e8, 1e-5, half_line_rate=8.4e8)
    assert three.cost(eight) == (pytest.approx(eight.half_lines / 8.4e8 + 1e-5), "half_lines")
    assert three.cost(sixteen)[0] < three.cost(eight)[0]
    assert three.predict(sixteen).bound == "requests"
    assert "halves" in three.describe() and "halves" not in two_terms.describe()
    assert three.parameters()["half_line_GBps"] == pytest.approx(64 * 8.4e8 / 1e9)


def test_calibration_recovers_a_synthetic_half_line_rate() -> None:
    truth = pcie_model.Model(link_GBps=55.0, overhead_bytes=11.0, request_rate=7e8, launch_seconds=1.5e-5,
                             launch_floor_seconds=1.5e-5, half_line_rate=8.4e8)
    record = _synthetic_record(truth, noise=0.01)
    fitted = pcie_model.calibrate(record)
    assert fitted.half_line_rate == pytest.approx(truth.half_line_rate, rel=0.05)
    assert fitted.request_rate == pytest.approx(truth.request_rate, rel=0.05)
    offsets = [r for r in pcie_model.compare_with_record(record, fitted) if r.kind == "offset"]
    assert max(abs(r.rel_error) for r in offsets) < 0.04  # held out: the offsets follow from the stride sweep


# ---------------------------------------------------------------------------- the noise floor
def test_the_targets_stay_where_issue_19_put_them() -> None:
    assert (pcie_model.TARGET_MEDIAN, pcie_model.TARGET) == (0.05, 0.10)


def test_the_floor_of_a_run_against_itself_is_zero_and_reachable(reference) -> None:
    floor = pcie_model.run_to_run(reference[0], reference[0])
    assert floor["reproducible_points"] == floor["points"] and floor["not_reproducible"] == []
    assert floor["first_as_model"]["max_abs_error"] == 0 and floor["targets_reachable"] and floor["why"] is None
    assert floor["spread"]["first"] == floor["spread"]["second"]
    assert 0 <= floor["spread"]["first"]["median"] <= floor["spread"]["first"]["max"]


def test_a_floor_above_the_targets_says_they_cannot_be_reached(reference) -> None:
    record = reference[0]
    slower = copy.deepcopy(record)  # every zero-copy repeat 25 % longer: a made-up second run
    for kind in pcie_model.CHECK_SWEEPS:
        for row in slower["experiments"][kind]["rows"]:
            row["seconds"] = [s * 1.25 for s in row["seconds"]]
    floor = pcie_model.run_to_run(record, slower)
    # the first run's rates, taken as the prediction of the second's, are 25 % too high at every point
    assert floor["first_as_model"]["median_abs_error"] == pytest.approx(0.25)
    assert floor["first_as_model"]["by_sweep"]["offset"]["max_abs_error"] == pytest.approx(0.25)
    spread = max(floor["spread"]["first"]["max"], floor["spread"]["second"]["max"])
    if spread < 0.2:  # repeats 25 % apart cannot overlap unless a point's own repeats spread that far
        assert floor["reproducible_points"] == 0 and len(floor["not_reproducible"]) == floor["points"]
    assert not floor["targets_reachable"] and "25.0%" in floor["why"] and "noise floor" in floor["why"]


def test_check_reports_the_models_error_beside_the_floor(reference) -> None:
    other = _second_run(reference[0])
    result = pcie_model.check(reference[0], other)
    floor, verdict = result["noise_floor"], result["run_to_run"]["model_vs_floor"]
    own = result["check_record_only"]
    assert (verdict["model_median_abs_error"], verdict["model_max_abs_error"]) == \
        (own["median_abs_error"], own["max_abs_error"])
    assert verdict["within_floor"] == (verdict["median_within_floor"] and verdict["max_within_floor"])
    assert verdict["median_within_floor"] == (own["median_abs_error"] <= verdict["floor_median_abs_error"])
    assert floor["within_floor"] == verdict["within_floor"] and "floor" in floor["verdict"]
    assert floor["check_record"]["max_abs_error"] == result["run_to_run"]["first_as_model"]["max_abs_error"]
    assert 0 <= verdict["points_within_floor"] <= verdict["points"] == len(pcie_model.sweep_points(other))
    assert verdict["largest_excess"] == max(verdict["model_max_abs_error"] - verdict["floor_max_abs_error"], 0)
    assert verdict["fit_record_same_counts"] == floor["same_counts"]["fit record"]["max_abs_error"]
    # the made-up run is within 3 % of the reference: the floor is within the targets, so a miss is the model's
    assert floor["targets_reachable"]
    if not result["meets_targets"]:
        assert "model's form or its fitted numbers" in floor["why"]
    alone = pcie_model.check(reference[0], reference[0], allow_same=True)["noise_floor"]
    assert alone["check_record"] is None and alone["within_floor"] is None and "one run only" in alone["why"]


def test_model_command_reports_the_floor_for_every_check(two_runs, capsys) -> None:
    code, result, err = _model(capsys)
    assert code == 0, err
    assert {"targets_reachable", "within_floor", "verdict", "why", "check_record"} <= set(result["noise_floor"])
    for check in result["checks"]:
        assert "model_vs_floor" in check["run_to_run"] and "first_as_model" in check["run_to_run"]


def test_the_committed_quiet_records_are_judged_against_their_floor() -> None:
    """A benchmark of the committed records, kept as a test: the third term must keep explaining the fit record's
    own offset sweep (held out) within the targets, and every check record's verdict must name its floor."""
    found = records.matching_records()
    (fit, _), others = pcie_model.choose_records(found)
    quiet = [(rec, path) for rec, path in others if pcie_model.is_quiet(rec)]
    if not pcie_model.is_quiet(fit) or not quiet:
        pytest.skip("data/ holds fewer than two quiet H200 records")
    for rec, path in quiet:
        result = pcie_model.check(fit, rec)
        own = result["by_sweep"]["fit record: offset"]
        assert own["max_abs_error"] <= pcie_model.TARGET, own
        floor = result["noise_floor"]
        assert floor["targets_reachable"] == (floor["check_record"]["median_abs_error"] <= pcie_model.TARGET_MEDIAN
                                              and floor["check_record"]["max_abs_error"] <= pcie_model.TARGET)
        if not result["meets_targets"]:
            assert floor["why"], path.name


def _with_rates(record: dict, rates: dict[int, float]) -> dict:
    """The record with the zero-copy stride points ``rates`` (stride: useful GB/s) timed exactly so: MADE UP."""
    other = copy.deepcopy(record)
    for p, row in zip(pcie_model.sweep_points(record, ("stride",)),
                      [r for r in other["experiments"]["stride"]["rows"] if r["memory"] == "zero_copy"]):
        if p.stride in rates:
            row["seconds"] = [p.useful_bytes / (rates[p.stride] * 1e9)] * len(row["seconds"])
            if "allocation_seconds" in row:  # a record timed over fresh allocations: each allocation's median too
                row["allocation_seconds"] = [row["seconds"][0]] * len(row["allocation_seconds"])
    return other


def test_points_with_the_same_counts_bound_any_model_of_the_counts(reference) -> None:
    """Strides 32, 48 and 64 make the same requests per useful byte: one prediction for all three."""
    record = _with_rates(reference[0], {32: 2.5, 48: 3.0, 64: 2.5})
    floor = pcie_model.same_counts_floor(record, pcie_model.fit_race(record))
    assert floor["group"] == ["stride 32", "stride 48", "stride 64"]
    assert floor["max_abs_error"] == pytest.approx(0.5 / 5.5)  # the best single rate, 2 x 2.5 x 3 / 5.5, misses both
    even = pcie_model.same_counts_floor(_with_rates(reference[0], {32: 2.5, 48: 2.5, 64: 2.5}))
    assert even["max_abs_error"] < floor["max_abs_error"] and even["points"] == len(pcie_model.sweep_points(record))


def test_a_check_record_whose_same_counts_disagree_cannot_meet_the_largest_error_target(reference) -> None:
    other = _with_rates(_second_run(reference[0]), {32: 2.0, 48: 3.0, 64: 2.0})  # 20 % apart, same counts
    result = pcie_model.check(reference[0], other)
    inside = result["noise_floor"]["same_counts"]["check record"]
    assert inside["max_abs_error"] > pcie_model.TARGET and "stride 48" in inside["group"]
    assert not result["noise_floor"]["targets_reachable"]
    assert "any model of the counts" in result["noise_floor"]["why"] and f"{inside['max_abs_error']:.1%}" in \
        result["noise_floor"]["why"]


def test_lesson_10s_table_puts_the_floor_beside_the_error(reference) -> None:
    other = _second_run(reference[0])
    shown = str(pcie_model.check_table({"later.json": pcie_model.check(reference[0], other),
                                        "same.json": pcie_model.check(reference[0], reference[0], allow_same=True)}))
    assert "as the prediction" in shown and "model within that prediction's error?" in shown and "one run: none" in shown
    floor = pcie_model.run_to_run(reference[0], other)["first_as_model"]
    assert f"{floor['median_abs_error']:.1%} / {floor['max_abs_error']:.1%}" in shown


def _request_bound_slower(record: dict, factor: float) -> dict:
    """A made-up run whose points the reference's model calls request-bound take ``factor`` times as long."""
    model = pcie_model.calibrate(record)
    bound = {(p.kind, p.kernel, p.stride, p.offset): model.cost(pcie_model._counts(p, model.race))[1]
             for p in pcie_model.sweep_points(record)}
    other = copy.deepcopy(record)
    other["provenance"]["date"] = "2031-01-01T00:00:00+00:00"
    for kind in pcie_model.CHECK_SWEEPS:
        for row in other["experiments"][kind]["rows"]:
            key = (kind, row.get("kernel", other["experiments"][kind]["params"].get("kernel", "read_strided")),
                   row.get("stride", 1), row.get("offset_floats", 0))
            if row["memory"] == "zero_copy" and bound.get(key) != "link":
                row["seconds"] = [s * factor for s in row["seconds"]]
    return other


@pytest.mark.parametrize("factor, same", [(1.0, True), (1.02, True), (1.08, False)])
def test_levels_split_link_bound_from_request_bound_points(reference, factor: float, same: bool) -> None:
    record = reference[0]
    result = pcie_model.check(record, _request_bound_slower(record, factor))
    found = result["levels"]
    assert found["link_bound"]["median_ratio"] == pytest.approx(1.0)
    assert found["link_bound"]["max_abs_difference"] == pytest.approx(0.0, abs=1e-12)
    assert found["request_bound"]["median_ratio"] == pytest.approx(1 / factor)
    assert found["same_level"] is same
    groups = pcie_model.level_groups({"made-up.json": result})
    assert groups["same" if same else "other"]["records"] == ["made-up.json"]
    assert groups["same" if same else "other"]["ratios"] == [pytest.approx(1 / factor)]


def test_level_groups_leave_out_records_whose_sweeps_are_not_quiet(reference) -> None:
    result = pcie_model.check(reference[0], _request_bound_slower(reference[0], 1.08))
    result["quiet"]["check record"] = False
    groups = pcie_model.level_groups({"loud.json": result})
    assert groups["same"]["records"] == groups["other"]["records"] == []


def test_records_say_whether_their_sweeps_were_timed_in_rounds(reference) -> None:
    record = copy.deepcopy(reference[0])
    for kind in ("stride", "offset"):
        record["experiments"][kind]["params"]["order"] = "rounds"
    assert pcie_model.timed_in_rounds(record)
    del record["experiments"]["offset"]["params"]["order"]
    assert not pcie_model.timed_in_rounds(record)


# ---------------------------------------------------------------------------- the floor: fresh allocations
def _over_allocations(record: dict, spread: dict[int, tuple[float, float, float]]) -> dict:
    """The record with its zero-copy stride points timed over three allocations whose rates are ``spread`` (stride:
    three GB/s): MADE UP, to test the floor's arithmetic."""
    other = copy.deepcopy(record)
    for kind in pcie_model.CHECK_SWEEPS:
        for p, row in zip(pcie_model.sweep_points(record, (kind,)),
                          [r for r in other["experiments"][kind]["rows"] if r["memory"] == "zero_copy"]):
            rates = spread.get(p.stride, (1.0, 1.0, 1.0)) if kind == "stride" else (1.0, 1.0, 1.0)
            base = p.seconds if kind != "stride" or p.stride not in spread else None
            row["allocation_seconds"] = [base if base else p.useful_bytes / (g * 1e9) for g in rates]
            row["seconds"] = [s for s in row["allocation_seconds"] for _ in range(3)]
    return other


def test_the_allocation_floor_is_each_points_spread_over_its_allocations(reference) -> None:
    record = _over_allocations(reference[0], {32: (2.0, 2.2, 2.4), 1: (50.0, 50.0, 50.0)})
    floor = pcie_model.allocation_floor(record)
    assert floor["allocations"] == 3 and pcie_model.allocations(record) == 3
    assert floor["by_point"]["stride 32"] == pytest.approx(0.4 / 2.2, rel=1e-9)
    assert floor["by_point"]["stride 1"] == 0 and floor["worst"] == "stride 32"
    # the point's time is the median of its allocations' medians
    point = next(p for p in pcie_model.sweep_points(record, ("stride",)) if p.stride == 32)
    assert point.useful_bytes / point.seconds / 1e9 == pytest.approx(2.2)
    old = copy.deepcopy(reference[0])  # timed on one allocation: no floor of its own
    for kind in pcie_model.CHECK_SWEEPS:
        for row in old["experiments"][kind]["rows"]:
            row.pop("allocation_seconds", None)
    assert pcie_model.allocation_floor(old) is None and pcie_model.allocations(old) == 1


def test_a_point_beyond_its_allocations_spread_plus_the_margin_misses_the_target(reference) -> None:
    model = pcie_model.calibrate(reference[0])
    stride32 = next(r for r in pcie_model.compare_with_record(reference[0], model) if r.stride == 32
                    and r.kind == "stride")
    predicted = stride32.predicted_GBps
    # allocations within 2 % of the prediction: within the floor; 10 % below with a 1 % spread: beyond it
    near = _over_allocations(reference[0], {32: (predicted * 0.99, predicted, predicted * 1.01)})
    far = _over_allocations(reference[0], {32: (predicted * 0.895, predicted * 0.9, predicted * 0.905)})
    rows_near = [r for r in pcie_model.compare_with_record(near, model) if r.kind == "stride" and r.stride == 32]
    rows_far = [r for r in pcie_model.compare_with_record(far, model) if r.kind == "stride" and r.stride == 32]
    assert pcie_model._floor_verdict(rows_near, pcie_model.allocation_floor(near))["points_beyond_floor"] == []
    verdict = pcie_model._floor_verdict(rows_far, pcie_model.allocation_floor(far))
    assert verdict["points_beyond_floor"] == ["stride 32"] and not verdict["meets_targets"]
    assert "allocations' spread + 3%" in verdict["judged_by"]


def test_the_fit_prefers_a_record_timed_over_fresh_allocations(reference) -> None:
    one = copy.deepcopy(reference[0])
    for kind in pcie_model.CHECK_SWEEPS:
        for row in one["experiments"][kind]["rows"]:
            row.pop("allocation_seconds", None)
    over = _over_allocations(reference[0], {32: (2.0, 2.2, 2.4)})
    fit, checks = pcie_model.choose_records([(one, Path("a-older.json")), (over, Path("b-newer.json"))])
    assert fit[1] == Path("b-newer.json") and [p for _, p in checks] == [Path("a-older.json")]


def test_allocations_apart_are_points_whose_allocations_lie_beyond_the_margin(reference) -> None:
    near = _over_allocations(reference[0], {32: (2.0, 2.1, 2.2)})
    far = _over_allocations(reference[0], {32: (2.3, 2.35, 2.4)})   # 4.5 % above near's fastest allocation
    touching = _over_allocations(reference[0], {32: (2.2, 2.25, 2.3)})
    assert pcie_model.allocations_apart(near, far) == ["stride 32"]
    assert pcie_model.allocations_apart(near, touching) == []
    assert pcie_model.allocations_apart(near, near) == []


def test_compact_writes_points_as_a_learner_reads_them() -> None:
    labels = ["stride 12", "stride 16", "offset 2", "offset 3", "offset 4", "offset 9", "vector_width float4"]
    assert pcie_model.compact(labels) == "strides 12, 16; offsets 2-4, 9; vector_width float4"
    assert pcie_model.compact(["offset 16"]) == "offset 16"


def test_the_fit_points_are_the_same_in_both_languages():
    """The model's note reads 拟合于 {record} 的步长扫描 in Chinese; the points it was fitted on are still found, so
    both editions of model-zero-copy-reads hold out the same points and quote the same errors."""
    from helpers import i18n

    (fit, _path), _others = pcie_model.choose_records(records.matching_records())
    fitted = {}
    try:
        for language in ("en", "zh"):
            i18n.use_language(language)
            model = pcie_model.calibrate(fit)
            fitted[language] = [r.fitted for r in pcie_model.compare_with_record(fit, model)]
        assert "步长扫描" in model.calibrated_on and "stride" not in model.calibrated_on
    finally:
        i18n.use_language("en")
    assert fitted["zh"] == fitted["en"] and any(fitted["en"])
