"""The instructor's record of a class (helpers.sharing.class_record, helpers.tools.class_record, the class setting
in helpers.experiments.result): a learner is shown this GPU's figures of today, and nobody can show others forged
ones."""

from __future__ import annotations

import copy
import json
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from helpers import records
from helpers.sharing import class_record as shared
from helpers.tools.class_record import readable_by_all, shared_experiments

GPU, BOARD, KEY = "NVIDIA H200", "b0a4d0000001", "gpu-0000-c1-00.0"


def class_record_like(date: datetime | None = None, **provenance) -> dict:
    """The reference record made into a class record of this (pretended) GPU, measured at ``date`` (now)."""
    record = copy.deepcopy(records.reference_record()[0])
    when = date or datetime.now(timezone.utc)
    record["provenance"].update({"gpu": GPU, "gpu_board": BOARD, "date": when.isoformat(timespec="seconds"),
                                 shared.MARK: {"gpu_key": KEY, "by": "teacher", "uid": 0}, **provenance})
    return record


def write(path: Path, record: dict, mode: int = 0o644) -> Path:
    path.write_text(json.dumps(record))
    path.chmod(mode)
    return path


def load(path: Path, **kwargs):
    return shared.load(path, **{"gpu": GPU, "board": BOARD, "key": KEY, **kwargs})


@pytest.fixture(autouse=True)
def _no_class_environment(monkeypatch):
    for name in (shared.CLASS_RECORD, shared.INSTRUCTOR, shared.READONLY, shared.MAX_HOURS):
        monkeypatch.delenv(name, raising=False)


def test_a_class_record_of_this_gpu_from_today_is_shown_with_its_time(tmp_path):
    found = load(write(tmp_path / "class.json", class_record_like()))
    assert found.record["provenance"]["gpu_board"] == BOARD
    assert found.clock() == found.measured_at.astimezone().strftime("%H:%M")


@pytest.mark.parametrize("change, words", [
    (dict(gpu="NVIDIA A100-SXM4-80GB"), "not on this NVIDIA H200"),
    (dict(gpu_board="0123456789ab"), "another board"),
    ({shared.MARK: "yes"}, "not a class record"),
])
def test_a_record_of_another_gpu_or_not_made_for_the_class_is_refused(tmp_path, change, words):
    with pytest.raises(shared.ClassRecordProblem, match=words):
        load(write(tmp_path / "class.json", class_record_like(**change)))


def test_without_a_board_the_pci_bus_id_decides(tmp_path):
    path = write(tmp_path / "class.json", class_record_like(gpu_board="unknown"))
    assert load(path, board=None).path == path
    with pytest.raises(shared.ClassRecordProblem, match="measured on the GPU at"):
        load(path, board=None, key="gpu-0000-c2-00.0")


def test_a_record_from_another_day_or_the_future_is_refused(tmp_path, monkeypatch):
    old = datetime.now(timezone.utc) - timedelta(hours=13)
    with pytest.raises(shared.ClassRecordProblem, match="run `python -m helpers class-record` again"):
        load(write(tmp_path / "old.json", class_record_like(old)))
    monkeypatch.setenv(shared.MAX_HOURS, "24")
    assert load(tmp_path / "old.json")
    with pytest.raises(shared.ClassRecordProblem, match="future"):
        load(write(tmp_path / "late.json", class_record_like(datetime.now(timezone.utc) + timedelta(hours=1))))
    monkeypatch.setenv(shared.MAX_HOURS, "soon")
    with pytest.raises(shared.ClassRecordProblem, match="ZC_CLASS_RECORD_MAX_HOURS"):
        load(tmp_path / "old.json")


def test_a_file_others_could_write_or_a_link_is_refused(tmp_path):
    with pytest.raises(shared.ClassRecordProblem, match="writable by group or others"):
        load(write(tmp_path / "open.json", class_record_like(), 0o664))
    good = write(tmp_path / "good.json", class_record_like())
    (tmp_path / "link.json").symlink_to(good)
    with pytest.raises(shared.ClassRecordProblem, match="symbolic link"):
        load(tmp_path / "link.json")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(shared.ClassRecordProblem, match="not a regular file"):
        load(tmp_path / "folder.json")
    with pytest.raises(shared.ClassRecordProblem, match="no instructor's record"):
        load(tmp_path / "missing.json")


def test_only_root_the_reader_or_the_named_instructor_may_own_it(tmp_path, monkeypatch):
    path = write(tmp_path / "class.json", class_record_like())
    owner = path.stat().st_uid
    assert {0, os.getuid()} <= shared.trusted_owners()
    monkeypatch.setattr(shared.os, "getuid", lambda: 54321)  # another learner reads a file of this user
    if owner != 0:
        with pytest.raises(shared.ClassRecordProblem, match=f"belongs to uid {owner}"):
            load(path)
    monkeypatch.setenv(shared.INSTRUCTOR, str(owner))  # the instructor's uid, set for the whole class
    assert owner in shared.trusted_owners() and load(path)
    monkeypatch.setenv(shared.INSTRUCTOR, "root")  # a user name works as well
    assert 0 in shared.trusted_owners()
    monkeypatch.setattr(shared, "trusted_owners", lambda: {54321})
    with pytest.raises(shared.ClassRecordProblem, match=f"belongs to uid {owner}, not to root, you or the instructor"):
        load(path)


def test_learners_who_share_one_uid_need_the_record_on_a_read_only_mount(tmp_path, monkeypatch):
    path = write(tmp_path / "class.json", class_record_like())
    monkeypatch.setenv(shared.READONLY, "1")
    with pytest.raises(shared.ClassRecordProblem, match="not on a read-only mount"):
        load(path)


def test_forged_content_is_refused(tmp_path):
    bad = class_record_like()
    bad["experiments"]["memcpy"]["rows"][0]["seconds"] = [-1.0]
    with pytest.raises(shared.ClassRecordProblem, match="memcpy"):
        load(write(tmp_path / "class.json", bad))
    (tmp_path / "text.json").write_text("not json")
    (tmp_path / "text.json").chmod(0o644)
    with pytest.raises(shared.ClassRecordProblem, match="not JSON"):
        load(tmp_path / "text.json")


def test_save_replaces_the_previous_record_readable_by_all_whatever_the_umask(tmp_path):
    path = tmp_path / "class.json"
    old = os.umask(0o077)
    try:
        shared.save(class_record_like(), path)
        first = path.stat().st_ino
        shared.save(class_record_like(), path)
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o644 and path.stat().st_ino != first
    assert load(path) and not list(tmp_path.glob(".class-record-*"))
    tmp_path.chmod(0o755)
    assert readable_by_all(path) == all(p.stat().st_mode & 0o001 for p in path.resolve().parents)
    tmp_path.chmod(0o700)
    assert not readable_by_all(path)


def test_the_default_place_is_the_lock_folder_one_file_per_gpu(tmp_path, monkeypatch):
    assert shared.record_path(KEY, tmp_path) == tmp_path / f"{KEY}.class-record.json"
    monkeypatch.setenv(shared.CLASS_RECORD, str(tmp_path / "mine.json"))
    assert shared.record_path(KEY, tmp_path) == tmp_path / "mine.json"


def test_the_class_is_shown_the_experiments_that_held_the_gpu_longer_than_the_setting():
    record = class_record_like()
    held = record["provenance"]["experiment_wall_seconds"]
    assert shared_experiments(record, 0.5) == sorted(n for n in record["experiments"] if held.get(n, 0) > 0.5)
    assert set(shared_experiments(record, 2)) < set(shared_experiments(record, 0.5))


# --------------------------------------------------------------------------- what a learner is shown
@pytest.fixture
def a_class(tmp_path, monkeypatch):
    """A pretended live learner on GPU KEY under ZC_CLASS_GPU_SECONDS=2, with a result log; returns the log."""
    from helpers.experiments import result
    from helpers.memory import gpu
    from helpers.mode import Mode
    from helpers.platform import machine_state
    from helpers.sharing import contention, gpu_queue

    monkeypatch.setattr(result, "detect", lambda: Mode(True, "a GPU (pretended)"))
    monkeypatch.setattr(gpu_queue, "gpu_key", lambda: KEY)
    monkeypatch.setattr(gpu, "device_name", lambda: GPU)
    monkeypatch.setattr(machine_state, "board", lambda: BOARD)
    monkeypatch.setattr(contention, "outsiders", lambda: None)
    monkeypatch.setenv("ZC_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv(result.CLASS_SETTING, "2")
    monkeypatch.setenv("ZC_RESULT_LOG", str(tmp_path / "results.jsonl"))
    result._class_cache.clear()
    return tmp_path / "results.jsonl"


def _sources(log: Path) -> list[tuple[str, str]]:
    return [(e["name"], e["source"]) for e in map(json.loads, log.read_text().splitlines())]


def test_in_a_class_a_long_sweep_comes_from_the_instructor_s_record_and_says_so(a_class):
    from helpers.experiments import result
    from helpers.sharing.gpu_queue import lock_dir

    record = class_record_like()
    record["experiments"]["managed"]["rows"][0] = {**record["experiments"]["managed"]["rows"][0], "marker": 1}
    found = shared.save(record, shared.record_path(KEY, lock_dir()))

    def never(**params):
        raise AssertionError("a long sweep must not be measured by each learner")

    shown = result.run("managed", {}, never)
    assert shown.rows == record["experiments"]["managed"]["rows"] and not shown.live
    clock = shown.class_record
    assert f"measured on this GPU ({GPU}) at {clock} by the instructor's run ({found})" in shown.describe()
    assert shown.origin() == f"measured on this GPU at {clock} by the instructor's run"
    assert result.reference("memcpy").rows == record["experiments"]["memcpy"]["rows"]  # comparisons too
    light = min(record["provenance"]["experiment_wall_seconds"].items(), key=lambda kv: kv[1])[0]
    measured = result.run(light, {}, lambda: [{"x": 1.0}])
    assert measured.live and measured.rows == [{"x": 1.0}]
    assert _sources(a_class) == [("managed", "class-record"), ("memcpy", "class-record"), (light, "live")]


def test_in_a_class_a_forged_record_is_not_shown_and_the_replay_says_why(a_class):
    from helpers.experiments import result
    from helpers.sharing.gpu_queue import lock_dir

    forged = class_record_like()
    forged["experiments"]["managed"]["rows"] = [{**row, "GBps": row["GBps"] * 10}
                                                for row in forged["experiments"]["managed"]["rows"]]
    path = shared.record_path(KEY, lock_dir())
    shared.save(forged, path)
    path.chmod(0o666)  # as a learner would leave it for others to "fix"
    shown = result.run("managed", {}, lambda: [])
    assert shown.rows == result._reference("managed").rows and not shown.class_record
    assert "the instructor's record of this GPU was not used" in shown.describe()
    assert "writable by group or others" in shown.describe()
    assert _sources(a_class) == [("managed", "reference")]


def test_in_a_chinese_class_the_shared_and_replayed_sweeps_say_why_in_chinese(a_class):
    """Issue 35: the class setting's sentences (shared from the instructor's record, replayed without one) are
    translated: a Chinese learner in a class reads no English sentence beside the figures."""
    from helpers import i18n
    from helpers.experiments import result
    from helpers.i18n import english
    from helpers.sharing.gpu_queue import lock_dir

    i18n.use_language("zh")
    try:
        missing = result.run("managed", {}, lambda: []).describe()
        assert "没有使用讲师在这块 GPU 上的记录" in missing and "处没有讲师的记录" in missing
        path = shared.save(class_record_like(), shared.record_path(KEY, lock_dir()))
        path.chmod(0o666)
        writable = result.run("managed", {}, lambda: []).describe()
        assert "可被同组用户或其他用户写入（权限 666）" in writable, writable
        path.chmod(0o644)
        shown = result.run("managed", {}, lambda: []).describe()
        assert "它由全班共用" in shown
        held = records.reference_record()[0]["provenance"]["experiment_wall_seconds"]
        replays = result.class_replay_reason(max(held, key=held.get))
        assert replays.startswith("它是回放的")
        for said in (missing, writable, shown, replays):
            assert english.english_runs(said) == [], said
    finally:
        i18n.use_language("en")
