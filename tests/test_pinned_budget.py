"""The machine-wide pinned-memory budget (helpers.sharing.pinned_budget): processes share it through one file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

import pytest

from helpers.sharing import pinned_budget
from helpers.errors import PinningError


@pytest.fixture
def budget(tmp_path, monkeypatch):
    monkeypatch.setenv("ZC_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv("ZC_PINNED_BUDGET", "1000")
    monkeypatch.setattr(pinned_budget, "_own", 0)


def _holder(nbytes: int) -> subprocess.Popen:
    """Another learner's process that reserves ``nbytes`` and keeps them until killed."""
    code = f"""
        import time
        from helpers.sharing import pinned_budget
        pinned_budget.reserve({nbytes})
        print("reserved", flush=True)
        time.sleep(120)
    """
    process = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().strip() == "reserved"
    return process


def test_two_processes_share_one_budget(budget):
    other = _holder(600)
    try:
        assert pinned_budget.usage()[str(other.pid)] == 600
        with pytest.raises(PinningError) as refused:
            pinned_budget.reserve(500)
        message = str(refused.value)
        for advice in ("helpers.memory.gpu.free", "restart kernels", "ZC_PINNED_BUDGET", "instructor"):
            assert advice in message
        pinned_budget.reserve(400)  # what is left fits
        assert pinned_budget.usage()[str(os.getpid())] == 400
        pinned_budget.release(400)
        assert str(os.getpid()) not in pinned_budget.usage()
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()


def test_a_dead_process_gives_its_share_back(budget):
    other = _holder(900)
    with pytest.raises(PinningError):
        pinned_budget.reserve(200)
    other.send_signal(signal.SIGKILL)  # a kernel killed without freeing anything
    other.wait()
    pinned_budget.reserve(200)
    assert pinned_budget.usage() == {"budget": 1000, str(os.getpid()): 200}


def test_a_release_from_a_finalizer_during_an_update_is_not_lost(budget, monkeypatch):
    pinned_budget.reserve(300)
    with pinned_budget._lock:  # as when garbage collection frees an array inside reserve()
        pinned_budget.release(300)
    assert pinned_budget._own == 0
    pinned_budget.reserve(1000)  # the file catches up at the next update


@pytest.mark.parametrize("text, expected", [("4096", 4096), ("64G", 64 << 30), ("512MiB", 512 << 20),
                                            ("0.5", 500), ("1.5k", 1536)])
def test_budget_values(text, expected):
    assert pinned_budget.parse_budget(text, ram=1000) == expected


def test_a_bad_budget_says_how_to_write_one():
    with pytest.raises(PinningError, match="fraction of RAM"):
        pinned_budget.parse_budget("lots", ram=1000)


def test_the_default_is_three_quarters_of_ram(monkeypatch):
    monkeypatch.delenv("ZC_PINNED_BUDGET", raising=False)
    assert pinned_budget.budget_bytes() == int(0.75 * pinned_budget.ram_bytes())


# ---------------------------------------------------------------------------- issue 20: a forged budget file
def _forge(table: dict) -> None:
    import json as _json
    pinned_budget.usage()  # creates the file
    pinned_budget._path().write_text(_json.dumps(table))


def test_a_forged_huge_entry_for_pid_1_is_dropped(budget):
    _forge({"1": {"bytes": 10**30, "start": pinned_budget._start_time(1), "uid": 0}})
    pinned_budget.reserve(500)  # not refused
    assert "1" not in pinned_budget.usage()
    pinned_budget.release(500)


def test_an_entry_with_the_wrong_owner_is_dropped(budget):
    other = _holder(100)
    try:
        pinned_budget.usage()
        _forge({str(other.pid): {"bytes": 900, "start": pinned_budget._start_time(other.pid), "uid": os.getuid() + 1}})
        pinned_budget.reserve(500)
        assert str(other.pid) not in pinned_budget.usage()
        pinned_budget.release(500)
    finally:
        other.kill()
        other.wait()


@pytest.mark.parametrize("bad", [-10**12, 1.5, "900", True, None])
def test_negative_or_non_integer_entries_are_dropped(budget, bad):
    other = _holder(600)
    try:
        table = {str(other.pid): {"bytes": 600, "start": pinned_budget._start_time(other.pid), "uid": os.getuid()},
                 str(os.getppid()): {"bytes": bad, "start": pinned_budget._start_time(os.getppid()), "uid": os.getuid()}}
        _forge(table)
        with pytest.raises(PinningError):  # the real entry still counts: the budget is not lifted
            pinned_budget.reserve(500)
        assert str(os.getppid()) not in pinned_budget.usage()
    finally:
        other.kill()
        other.wait()


def test_a_believable_entry_for_an_idle_own_process_counts_only_its_resident_memory(tmp_path, monkeypatch):
    """The forged file names a live process of the learner's own (right uid and start time) with a whole
    gibibyte: it counts only what that process really holds, so the budget is not used up."""
    monkeypatch.setenv("ZC_LOCK_DIR", str(tmp_path / "locks"))
    monkeypatch.setenv("ZC_PINNED_BUDGET", str(1 << 30))
    monkeypatch.setattr(pinned_budget, "_own", 0)
    idle = subprocess.Popen(["sleep", "60"])
    try:
        _forge({str(idle.pid): {"bytes": 1 << 30, "start": pinned_budget._start_time(idle.pid), "uid": os.getuid()}})
        assert 0 < pinned_budget.resident_bytes(idle.pid) < 64 << 20
        pinned_budget.reserve(512 << 20)  # refused before: the forged gibibyte filled the budget
        assert pinned_budget.usage()[str(idle.pid)] == 1 << 30  # kept in the file, counted at its resident size
        pinned_budget.release(512 << 20)
    finally:
        idle.kill()
        idle.wait()


def test_resident_bytes_of_a_process_that_is_gone_is_zero():
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert pinned_budget.resident_bytes(gone.pid) == 0
    assert pinned_budget.resident_bytes(os.getpid()) > 1 << 20


def test_a_process_that_holds_the_budget_file_s_lock_forever_is_an_error_naming_it(budget, monkeypatch):
    from helpers.sharing.gpu_queue import QueueError

    pinned_budget.usage()  # creates the file
    code = f"""
        import fcntl, os, time
        fd = os.open({str(pinned_budget._path())!r}, os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print("locked", flush=True)
        time.sleep(60)
    """
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        monkeypatch.setenv("ZC_QUEUE_META_TIMEOUT", "0.5")
        with pytest.raises(QueueError, match=f"pid {holder.pid}"):
            pinned_budget.reserve(100)
    finally:
        holder.kill()
        holder.wait()
