"""The record format: validation on load, atomic save, choosing the reference (helpers.records)."""

from __future__ import annotations

import copy
import json

import pytest

from helpers import records
from helpers.errors import RecordError


def test_every_shipped_record_is_valid():
    paths = records.list_records()
    assert paths, "data/ must ship at least one record"
    for path in paths:
        record = records.load_record(path)
        command = record["provenance"]["command"]
        assert "helpers" in command and " record" in command, "data/ holds only what `python -m helpers record` wrote"


def test_reference_is_an_h200_record_with_every_experiment(reference):
    from helpers.experiments import ALL

    record, path = reference
    assert "H200" in record["provenance"]["gpu"]
    assert path.parent == records.data_dir()
    assert set(ALL) <= set(record["experiments"]), "the reference must hold every experiment"


def test_missing_file_says_how_to_restore(tmp_path):
    with pytest.raises(RecordError, match="git checkout -- data/"):
        records.load_record(tmp_path / "nope.json")


@pytest.mark.parametrize("damage, message", [
    (lambda r: "not json {", "not JSON"),
    (lambda r: json.dumps({**r, "format": "other"}), "'format'"),
    (lambda r: json.dumps({**r, "version": 99}), "version"),
    (lambda r: json.dumps({**r, "provenance": {"gpu": "X"}}), "provenance lacks"),
    (lambda r: json.dumps({**r, "experiments": {}}), "experiments"),
    (lambda r: json.dumps(_with_row(r, {"seconds": [-1.0]})), "not positive"),
    (lambda r: json.dumps(_with_row(r, {"seconds": []})), "non-empty list"),
    (lambda r: json.dumps(_with_row(r, {"GBps": "fast"})), "finite number"),
])
def test_corrupt_records_are_rejected_with_a_reason(tmp_path, reference, damage, message):
    path = tmp_path / "bad.json"
    path.write_text(damage(copy.deepcopy(reference[0])))
    with pytest.raises(RecordError, match=message) as info:
        records.load_record(path)
    assert "python -m helpers record" in str(info.value)


def _with_row(record, row):
    record["experiments"]["memcpy"]["rows"].append(row)
    return record


def test_save_is_atomic_and_never_overwrites(tmp_path, reference, monkeypatch):
    monkeypatch.setenv("ZC_DATA_DIR", str(tmp_path))
    record = copy.deepcopy(reference[0])
    first = records.save_record(record)
    second = records.save_record(record)
    assert first != second and second.name.endswith("-2.json")
    assert records.load_record(first) == records.load_record(second) == record
    with pytest.raises(FileExistsError):
        records.save_record(record, first)
    records.save_record(record, first, overwrite=True)
    assert not list(tmp_path.glob(".record-*")), "no temporary file may be left behind"


def test_invalid_record_is_not_saved(tmp_path):
    with pytest.raises(RecordError):
        records.save_record({"format": records.FORMAT}, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_reference_picks_the_newest_matching_record(tmp_path, reference):
    older = copy.deepcopy(reference[0])
    newer = copy.deepcopy(reference[0])
    older["provenance"]["date"] = "2020-01-01T00:00:00+00:00"
    newer["provenance"]["date"] = "2030-01-01T00:00:00+00:00"
    other = copy.deepcopy(reference[0])
    other["provenance"]["gpu"] = "NVIDIA A100"
    other["provenance"]["date"] = "2040-01-01T00:00:00+00:00"
    for name, rec in (("a.json", older), ("b.json", newer), ("c.json", other)):
        records.save_record(rec, tmp_path / name)
    record, path = records.reference_record("H200", tmp_path)
    assert path.name == "b.json"
    with pytest.raises(RecordError, match="No recorded measurements"):
        records.reference_record("MI300", tmp_path)


def test_dumps_writes_one_row_per_line(reference):
    text = records.dumps(reference[0])
    assert json.loads(text) == reference[0]
    rows = sum(len(e["rows"]) for e in reference[0]["experiments"].values())
    assert text.count("\n") >= rows
