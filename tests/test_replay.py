"""Replay mode: every experiment returns what the H200 recorded, and says so (helpers.experiments)."""

from __future__ import annotations

import copy

import pytest

from helpers import experiments, mode, records
from helpers.analysis import summary
from helpers.errors import RecordError


@pytest.fixture(autouse=True)
def replay(monkeypatch):
    """Replay even on a GPU machine, so that these run everywhere."""
    monkeypatch.setattr(mode, "_detected", mode.Mode(False, "forced by the test", "forced"))


@pytest.mark.parametrize("name", sorted(experiments.ALL))
def test_each_experiment_replays_the_recorded_rows(name, reference):
    record, path = reference
    result = experiments.ALL[name]()
    assert not result.live
    if name not in record["experiments"]:  # added after the record: a model of it, labelled as one
        assert name in experiments.MODELLED_UNTIL_RECORDED and "MODELLED" in result.describe()
        return
    assert result.rows == record["experiments"][name]["rows"]
    assert result.params == record["experiments"][name]["params"]
    assert "REPLAY" in result.describe() and path.name in result.describe() and "H200" in result.describe()


def test_an_experiment_missing_from_the_record_is_a_clear_error(tmp_path, monkeypatch, reference):
    partial = copy.deepcopy(reference[0])
    del partial["experiments"]["latency"]
    records.save_record(partial, tmp_path / "partial.json")
    monkeypatch.setenv("ZC_DATA_DIR", str(tmp_path))
    with pytest.raises(RecordError, match="holds no 'latency' experiment"):
        experiments.latency()


def test_no_data_at_all_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ZC_DATA_DIR", str(tmp_path))
    with pytest.raises(RecordError, match="git checkout -- data/"):
        experiments.memcpy()


def test_selection_helpers(reference):
    result = experiments.memcpy()
    rows = result.select(direction="htod", host_memory="pinned")
    assert rows and all(r["direction"] == "htod" for r in rows)
    assert len(result.column("GBps", direction="htod", host_memory="pinned")) == len(rows)
    with pytest.raises(LookupError):
        result.one(direction="htod")


REQUIRED = ("gpu", "zero_copy_read_GBps", "zero_copy_write_GBps", "memcpy_htod_pinned_GBps",
            "memcpy_dtoh_pinned_GBps", "memcpy_htod_pageable_GBps", "device_read_GBps",
            "zero_copy_latency_ns", "device_latency_ns")


def test_headline_figures_of_the_reference(reference):
    figures = summary.headline(reference[0])
    for key in REQUIRED:
        assert figures[key] is not None, key
    # relations any healthy PCIe GPU shows; the exact figures live in the record and the notes
    assert figures["device_read_GBps"] > 10 * figures["zero_copy_read_GBps"]
    assert figures["memcpy_htod_pinned_GBps"] > figures["memcpy_htod_pageable_GBps"]
    assert figures["zero_copy_latency_ns"] > figures["device_latency_ns"]
