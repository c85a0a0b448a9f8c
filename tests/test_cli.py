"""The command line: python -m helpers summary / record (helpers.__main__)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from test_replay import REQUIRED


def _run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "helpers", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


def test_summary_prints_the_headline_json():
    done = _run("summary")
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert all(figures[key] is not None for key in REQUIRED)
    assert "H200" in figures["gpu"]


def test_summary_of_a_corrupt_file_fails_clearly(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    done = _run("summary", str(bad))
    assert done.returncode == 1 and "not a valid measurement record" in done.stderr
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, "one line, no traceback"
    assert done.stdout == ""


def test_summary_of_a_record_with_negative_bandwidths_fails_clearly(tmp_path):
    import copy

    from helpers import records

    record = copy.deepcopy(records.reference_record()[0])
    record["experiments"]["memcpy"]["rows"][3]["GBps"] = -55.0
    bad = tmp_path / "negative.json"
    bad.write_text(json.dumps(record))
    done = _run("summary", str(bad))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, "one line, no traceback"
    assert "row 3 of 'memcpy': 'GBps' should be a rate above 0, found -55.0" in done.stderr


def test_summary_of_a_missing_file_fails_clearly(tmp_path):
    done = _run("summary", str(tmp_path / "nowhere.json"))
    assert done.returncode == 1 and "No measurement record at" in done.stderr and done.stderr.count("\n") == 1


def test_record_without_a_gpu_fails_clearly():
    done = _run("record", env={"ZC_FORCE_REPLAY": "1"})
    assert done.returncode == 1
    assert "needs a CUDA GPU" in done.stderr


def test_targets_report_each_target_and_fail_when_one_is_missed(tmp_path):
    import copy

    from helpers import records

    record = copy.deepcopy(records.reference_record()[0])
    for row in record["experiments"]["kernel_bandwidth"]["rows"]:
        if row["memory"] == "device":
            row["GBps"] = 1.0  # far below the 4000 GB/s floor
    path = tmp_path / "slow.json"
    records.save_record(record, path)
    done = _run("targets", str(path))
    assert done.returncode == 1
    assert "MISSED device-memory read: 1.000" in done.stdout
    assert done.stdout.count("\n") == 3


def test_record_refuses_an_existing_output_before_measuring(tmp_path, monkeypatch):
    """Issue 20: the check comes before the first measurement (here before the live-mode check too)."""
    from helpers.tools import record as cli
    from helpers.errors import RecordError

    existing = tmp_path / "old.json"
    existing.write_text("{}")
    monkeypatch.setattr("helpers.mode.require_live", lambda what: pytest.fail("measuring began"))
    with pytest.raises(RecordError, match="exists"):
        cli.record(str(existing), None)
    assert existing.read_text() == "{}"


def test_record_refuses_a_read_only_folder_before_measuring(tmp_path, monkeypatch):
    from helpers.tools import record as cli
    from helpers.errors import RecordError

    folder = tmp_path / "ro"
    folder.mkdir()
    os.chmod(folder, 0o555)
    if os.geteuid() == 0:  # root writes anywhere: make the folder's writes fail as a read-only disk would
        import tempfile as _tempfile

        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied")
        monkeypatch.setattr(_tempfile, "mkstemp", refuse)
    monkeypatch.setattr("helpers.mode.require_live", lambda what: pytest.fail("measuring began"))
    try:
        with pytest.raises(RecordError, match="before the first measurement"):
            cli.record(str(folder / "new.json"), None)
    finally:
        os.chmod(folder, 0o755)
