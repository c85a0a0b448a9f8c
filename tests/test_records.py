"""The record format: validation on load, atomic save, choosing the reference (helpers.records)."""

from __future__ import annotations

import copy
import json
import multiprocessing
import os
import stat
from pathlib import Path

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
    from helpers.experiments import MODELLED_UNTIL_RECORDED

    missing = set(ALL) - set(record["experiments"]) - set(MODELLED_UNTIL_RECORDED)
    assert not missing, f"the reference must hold every experiment; it lacks {sorted(missing)}"


def test_missing_file_says_how_to_restore(tmp_path):
    with pytest.raises(RecordError, match="git checkout -- data/"):
        records.load_record(tmp_path / "nope.json")


@pytest.mark.parametrize("damage, message", [
    (lambda r: "not json {", "not JSON"),
    (lambda r: json.dumps({**r, "format": "other"}), "'format'"),
    (lambda r: json.dumps({**r, "version": 99}), "version"),
    (lambda r: json.dumps({**r, "provenance": {"gpu": "X"}}), "provenance lacks"),
    (lambda r: json.dumps({**r, "experiments": {}}), "experiments"),
    (lambda r: json.dumps(_with_value(r, "memcpy", "seconds", [-1.0])), "times above 0"),
    (lambda r: json.dumps(_with_value(r, "memcpy", "seconds", [])), "non-empty list"),
    (lambda r: json.dumps(_with_value(r, "memcpy", "GBps", "fast")), "'GBps' should be a rate above 0"),
    (lambda r: json.dumps(_with_value(r, "kernel_bandwidth", "GBps", -51.2)), "'GBps' should be a rate above 0, found -51.2"),
    (lambda r: json.dumps(_with_value(r, "caching", "delivered_GBps", 0.0)), "rate above 0"),
    (lambda r: json.dumps(_with_value(r, "latency", "load_ns", float("nan"))), "rate above 0"),
    (lambda r: json.dumps(_with_value(r, "memcpy", "nbytes", -4096)), "byte count"),
    (lambda r: json.dumps(_with_value(r, "out_of_core", "budget_bytes", -1)), "byte count"),
    (lambda r: json.dumps(_with_value(r, "memcpy", "direction", 1)), "'direction' should be a string"),
    (lambda r: json.dumps(_with_value(r, "stride", "stride", "8")), "'stride' should be an integer"),
    (lambda r: json.dumps(_with_value(r, "address_identity", "equal", "yes")), "'equal' should be true or false"),
    (lambda r: json.dumps(_without_key(r, "memcpy", "host_memory")), "lacks host_memory"),
    (lambda r: json.dumps(_without_key(r, "stride", "useful_GBps")), "lacks useful_GBps"),
    (lambda r: json.dumps(_with_provenance(r, "date", "last Tuesday")), "ISO 8601"),
    (lambda r: json.dumps(_with_provenance(r, "date", "2026-13-45T00:00:00")), "ISO 8601"),
    (lambda r: json.dumps(_with_provenance(r, "date", 20261202)), "string"),
    (lambda r: json.dumps(_with_provenance(r, "gpu", ["NVIDIA H200"])), "'gpu' should be a string"),
])
def test_corrupt_records_are_rejected_with_a_reason(tmp_path, reference, damage, message):
    path = tmp_path / "bad.json"
    path.write_text(damage(copy.deepcopy(reference[0])))
    with pytest.raises(RecordError, match=message) as info:
        records.load_record(path)
    assert "python -m helpers record" in str(info.value)


def _with_value(record, experiment, key, value, row=0):
    record["experiments"][experiment]["rows"][row][key] = value
    return record


def _without_key(record, experiment, key, row=-1):
    del record["experiments"][experiment]["rows"][row][key]
    return record


def _with_provenance(record, key, value):
    record["provenance"][key] = value
    return record


def test_a_record_with_negative_bandwidths_does_not_load(tmp_path, reference):
    record = copy.deepcopy(reference[0])
    for row in record["experiments"]["kernel_bandwidth"]["rows"]:
        row["GBps"] = -row["GBps"]
    path = tmp_path / "negative.json"
    path.write_text(json.dumps(record))
    with pytest.raises(RecordError, match="rate above 0"):
        records.load_record(path)


def test_unknown_experiments_get_the_generic_checks_only(reference):
    record = copy.deepcopy(reference[0])
    record["experiments"]["a_new_sweep"] = {"params": {}, "rows": [{"whatever": [1, "x"], "label": 3, "GBps": 1.5,
                                                                      "nbytes": 0, "seconds": [1e-3]}]}
    records.validate(record)
    record["experiments"]["a_new_sweep"]["rows"][0]["GBps"] = -1.5
    with pytest.raises(RecordError, match="'a_new_sweep'.*'GBps' should be a rate above 0"):
        records.validate(record)


def test_every_schema_matches_the_reference_record(reference):
    """Each schema entry names keys the reference's rows have (a typo would make a key required that no row has).

    A schema for an experiment the reference does not hold yet is checked once a record has it."""
    held = [name for name in records.SCHEMAS if name in reference[0]["experiments"]]
    assert len(held) >= 10
    for name in held:
        schema = records.SCHEMAS[name]
        rows = reference[0]["experiments"][name]["rows"]
        for key in schema:
            assert any(key.rstrip("?") in row for row in rows), f"{name}: no row has {key!r}"


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


def _save_after(barrier, directory, record):
    os.environ["ZC_DATA_DIR"] = directory
    barrier.wait()
    records.save_record(record)


def test_processes_saving_at_once_each_keep_their_record(tmp_path, reference):
    context = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
    barrier = context.Barrier(8)
    workers = [context.Process(target=_save_after, args=(barrier, str(tmp_path), reference[0])) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [worker.exitcode for worker in workers] == [0] * 8
    saved = sorted(tmp_path.glob("*.json"))
    assert len(saved) == 8, [p.name for p in saved]
    assert all(records.load_record(p) == reference[0] for p in saved)
    assert not list(tmp_path.glob(".record-*")), "no temporary file may be left behind"


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_saved_record_has_the_permissions_the_umask_gives(tmp_path, reference, umask):
    old = os.umask(umask)
    try:
        path = records.save_record(reference[0], tmp_path / "r.json")
        replaced = records.save_record(reference[0], path, overwrite=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IMODE(replaced.stat().st_mode) == 0o666 & ~umask


def test_reference_breaks_a_tie_of_dates_by_file_name(tmp_path, reference):
    for name in ("b.json", "a.json", "c.json"):
        records.save_record(reference[0], tmp_path / name)
    assert records.reference_record("H200", tmp_path)[1].name == "c.json"
    assert [p.name for _, p in records.matching_records("H200", tmp_path)] == ["a.json", "b.json", "c.json"]


def test_invalid_record_is_not_saved(tmp_path):
    with pytest.raises(RecordError):
        records.save_record({"format": records.FORMAT}, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_reference_picks_the_newest_matching_record(tmp_path, reference):
    older = copy.deepcopy(reference[0])
    newer = copy.deepcopy(reference[0])
    older["provenance"]["date"] = "2020-01-01T00:00:00+00:00"
    newer["provenance"]["date"] = "2025-06-01T00:00:00+00:00"
    other = copy.deepcopy(reference[0])
    other["provenance"]["gpu"] = "NVIDIA A100"
    other["provenance"]["date"] = "2025-07-01T00:00:00+00:00"
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


# ---------------------------------------------------------------------------- issue 20: hostile files and settings
def test_deeply_nested_json_is_a_record_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(RecordError, match="nested too deeply"):
        records.load_record(path)


def test_a_record_dated_in_the_future_is_never_the_reference(tmp_path, reference):
    good = copy.deepcopy(reference[0])
    future = copy.deepcopy(reference[0])
    future["provenance"]["date"] = "2999-01-01T00:00:00+00:00"
    (tmp_path / "good.json").write_text(records.dumps(good))
    (tmp_path / "future.json").write_text(records.dumps(future))
    record, path = records.reference_record(directory=tmp_path)
    assert path.name == "good.json"
    (tmp_path / "good.json").unlink()
    with pytest.raises(RecordError, match="future"):
        records.reference_record(directory=tmp_path)


def test_data_readme_names_the_lessons_that_show_each_experiment():
    """The experiments table of data/README.md gives, per experiment, the lessons that run or show it, as the
    registry says (helpers/lessons.py): numbers written by hand went stale when the lessons were renumbered."""
    import re

    from helpers import experiments, lessons, paths

    text = (paths.ROOT / "data" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| ([^|]*) \|", text, re.M)
    checked = 0
    for name, column in rows:
        slugs = lessons.showing(name)
        if name in experiments.ALL and slugs:
            want = ", ".join(lessons.lesson(s).id for s in slugs)
            line = text[:text.index(f"| `{name}` |")].count("\n") + 1
            assert column.strip() == want, (f"data/README.md:{line}: the lessons column of `{name}` should read "
                                            f"'{want}' (helpers/lessons.py): run `python -m helpers sync`")
            checked += 1
    assert checked >= 20

