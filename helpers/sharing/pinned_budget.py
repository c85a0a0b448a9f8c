"""A machine-wide budget of page-locked memory that every learner's process shares (measure-what-pinning-buys).

Each process already refuses to pin more than three quarters of RAM by itself (helpers.memory.gpu), but
sixteen learners on one server could still pin it dry together. Every pinning helper therefore
reserves its bytes here first: one JSON file in the queue's folder (``ZC_LOCK_DIR``), changed under
``flock``, records each process's pinned bytes under its pid; entries of processes that have ended are
dropped. ``ZC_PINNED_BUDGET`` sets the budget: bytes (``68719476736``), with a unit (``64G``, ``512M``),
or a fraction of the machine's RAM (``0.5``). The default is three quarters of RAM.
"""

from __future__ import annotations

import json
import os
import re
import threading
from typing import Any

from ..errors import PinningError

__all__ = ["budget_bytes", "reserve", "release", "usage", "parse_budget"]

FILE_NAME = "pinned-memory.json"
DEFAULT_FRACTION = 0.75
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}

_own = 0                    # bytes this process has reserved
_lock = threading.Lock()    # one update of the file at a time within this process


def ram_bytes() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def parse_budget(text: str, ram: int) -> int:
    """``ZC_PINNED_BUDGET``'s value in bytes: ``0.5`` (of RAM), ``64G``, ``512MiB`` or plain bytes."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", text)
    if not m:
        raise PinningError(f"ZC_PINNED_BUDGET={text!r} is not a size: write bytes (68719476736), a size with a unit "
                           "(64G, 512M) or a fraction of RAM (0.5).")
    value, unit = float(m[1]), m[2].lower()
    if not unit and value <= 1.0 and "." in m[1]:
        return int(value * ram)
    return int(value * _UNITS[unit])


def budget_bytes() -> int:
    """The machine-wide budget in bytes (``ZC_PINNED_BUDGET``, default three quarters of RAM)."""
    text = os.environ.get("ZC_PINNED_BUDGET", "").strip()
    return parse_budget(text, ram_bytes()) if text else int(DEFAULT_FRACTION * ram_bytes())


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks (/proc/PID/stat field 22): with the pid, it names a process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[19].decode()
    except (OSError, IndexError):
        return None


def _real_uid(pid: int) -> int | None:
    """The real uid of process ``pid`` (/proc/PID/status, line Uid), or None."""
    from .gpu_queue import status_field

    return status_field(pid, "Uid")


def resident_bytes(pid: int) -> int:
    """The resident memory of process ``pid`` (/proc/PID/status, VmRSS), 0 when unreadable.

    Page-locked memory is resident, so an honest entry never holds more. VmLck and VmPin cannot serve:
    the NVIDIA driver pins without mlock, and both stayed 0 while a process held 256 MiB from
    cuMemHostAlloc on the course's H200 machine, whose VmRSS grew by 256 MiB (issue 20)."""
    from .gpu_queue import status_field

    kib = status_field(pid, "VmRSS")
    return 0 if kib is None else kib * 1024


def counted_bytes(pid: str, entry: dict[str, Any]) -> int:
    """What another process's valid entry counts against the budget: its bytes, at most its resident
    memory, so a believable entry written for one's own idle process cannot block everyone's pinning."""
    return min(int(entry["bytes"]), resident_bytes(int(pid)))


def _valid(pid: object, entry: object) -> bool:
    """An entry of the shared file counts only if it names a live process (pid and start time), its
    uid is that process's real owner, and its bytes are a whole number between 1 and the machine's RAM:
    a forged, negative or absurd entry (the file is writable by every learner) is dropped."""
    if not (isinstance(pid, str) and pid.isdigit() and len(pid) < 10 and isinstance(entry, dict)):
        return False
    nbytes, uid = entry.get("bytes"), entry.get("uid")
    if type(nbytes) is not int or not 0 < nbytes <= ram_bytes() or type(uid) is not int:
        return False
    if _start_time(int(pid)) != entry.get("start") or entry.get("start") is None:
        return False
    return _real_uid(int(pid)) == uid


def _path() -> Any:
    from .gpu_queue import lock_dir

    return lock_dir() / FILE_NAME


def _update(change: int, *, check: bool) -> dict[str, Any]:
    """Under the file's flock: drop ended processes, then add ``change`` to this process's bytes,
    refusing (when ``check``) if the machine-wide total would pass the budget. Returns the table."""
    global _own
    from .gpu_queue import flock_shared_file, open_shared

    budget = budget_bytes()
    path = _path()
    fd = open_shared(path)
    try:
        flock_shared_file(fd, path, what="the pinned-memory budget's lock")  # a holder that never lets go: an error
        raw = os.pread(fd, 1 << 20, 0)
        try:
            table = json.loads(raw) if raw.strip() else {}
        except ValueError:  # a torn write by a killed process: start again from the live ones
            table = {}
        live = {pid: entry for pid, entry in (table.items() if isinstance(table, dict) else ())
                if _valid(pid, entry)}
        me = str(os.getpid())
        others = sum(counted_bytes(pid, entry) for pid, entry in live.items() if pid != me)
        wanted = _own + change
        if check and change > 0 and others + wanted > budget:
            raise PinningError(
                f"Refusing to pin {change / 2**30:.2f} GiB: the learners on this machine hold "
                f"{others / 2**30:.2f} GiB of page-locked memory in other processes and this one "
                f"{_own / 2**30:.2f} GiB, and the machine-wide budget is {budget / 2**30:.2f} GiB "
                "(ZC_PINNED_BUDGET). Free buffers you no longer need (helpers.memory.gpu.free), restart kernels you are "
                "not using (Kernel > Shut Down Kernel), use a smaller size, or ask the instructor to raise "
                "ZC_PINNED_BUDGET.")
        _own = max(0, _own + change)  # _own may have dropped meanwhile (a finalizer's release)
        if _own:
            live[me] = {"bytes": _own, "start": _start_time(os.getpid()), "uid": os.getuid()}
        else:
            live.pop(me, None)
        data = json.dumps(live, sort_keys=True).encode()
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
        return live
    finally:
        os.close(fd)  # releases the flock


def reserve(nbytes: int) -> None:
    """Count ``nbytes`` against the machine-wide budget before pinning them; raise if they do not fit."""
    with _lock:
        _update(int(nbytes), check=True)


def release(nbytes: int) -> None:
    """Give ``nbytes`` back (safe from a finalizer: if this thread is already updating, only the
    in-process count changes, and the file catches up at the next update)."""
    global _own
    if not _lock.acquire(blocking=False):
        _own = max(0, _own - int(nbytes))
        return
    try:
        _update(-int(nbytes), check=False)
    except Exception:  # never raise from a free or a garbage collection
        _own = max(0, _own - int(nbytes))
    finally:
        _lock.release()


def usage() -> dict[str, int]:
    """Bytes pinned machine-wide by live course processes, by pid, with the budget (measure-what-pinning-buys)."""
    with _lock:
        table = _update(0, check=False)
    return {"budget": budget_bytes(), **{pid: int(entry["bytes"]) for pid, entry in table.items()}}
