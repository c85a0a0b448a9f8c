"""The measurement queue: timed sections of every process on the machine take turns on a GPU (lesson 06).

Learners who share a GPU server press Run All at the same moments. If their bandwidth measurements ran
over one PCIe link together, each would see a fraction of the link. :func:`measurement_slot` makes the
timed part of an experiment wait until no other course process (any user of the machine) is timing on
the same GPU; allocation, compilation and CPU work run outside it, in parallel.

How it works: a first-come, first-served queue of ticket files in a shared folder (``ZC_LOCK_DIR``,
default ``/tmp/zero-copy-course-locks``, created world-writable and sticky like /tmp). A process takes
the next number under a short lock (``flock`` on ``<gpu>.meta``), holds an exclusive ``flock`` on its own
ticket for as long as it waits and measures, and waits for the ticket just before its own. The kernel
drops a process's ``flock`` when the process ends in any way (an error, Ctrl-C, ``kill -9``), so a dead
learner never blocks the others. Each slot, when done, appends one line to ``<gpu>.log`` (its wait and
hold times), which gives waiting learners an estimate and ``python -m helpers classroom`` its figures.

``ZC_QUEUE=0`` turns the queue off (a machine with one user who wants no files in /tmp).
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import json
import os
import re
import stat
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, TextIO

from .errors import CourseError

__all__ = ["QueueError", "lock_dir", "measurement_slot", "gpu_key", "course_pids", "read_log",
           "uncontended_overhead", "open_shared", "DEFAULT_LOCK_DIR"]

DEFAULT_LOCK_DIR = "/tmp/zero-copy-course-locks"
SHOW_AFTER_S = 0.3      # a wait shorter than this prints nothing
UPDATE_EVERY_S = 0.5    # how often the waiting line is rewritten
LOG_LIMIT_BYTES = 64 << 20  # the shared log is emptied when it grows past this


class QueueError(CourseError):
    """The queue's folder cannot be used (lesson 06)."""


def enabled() -> bool:
    return os.environ.get("ZC_QUEUE", "1").lower() not in ("0", "off", "no", "false")


_checked_dirs: set[Path] = set()


def _folder_problem(folder: Path, what: str) -> QueueError:
    return QueueError(f"The course's lock folder {folder} {what}. The instructor can remove it and let the course "
                      f"create it (`sudo rm -rf {folder}`), or create it as root: `sudo install -d -m 1777 -o root "
                      f"{folder}`; or every learner can set the same ZC_LOCK_DIR to such a folder.")


def check_folder(folder: Path, st: os.stat_result, uid: int | None = None) -> None:
    """Refuse a shared folder others could abuse: not a folder, or writable by others yet owned by
    another user without the sticky bit (anyone could delete anyone's tickets)."""
    uid = os.getuid() if uid is None else uid
    if not stat.S_ISDIR(st.st_mode):
        raise _folder_problem(folder, "is not a folder (a symbolic link or a file)")
    mode = st.st_mode & 0o7777
    if st.st_uid not in (uid, 0) and mode & 0o022 and not mode & stat.S_ISVTX:
        raise _folder_problem(folder, f"belongs to another user (uid {st.st_uid}) and is writable by others without "
                                      f"the sticky bit (mode {mode:o}): anyone could delete anyone's tickets")


def lock_dir() -> Path:
    """The shared folder of the queue and the pinned-memory budget, created ``1777`` if missing.

    Never through a symbolic link, never chmod-ing a folder the course did not just create."""
    folder = Path(os.environ.get("ZC_LOCK_DIR") or DEFAULT_LOCK_DIR)
    if folder in _checked_dirs:
        return folder
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        created = False
        try:
            os.mkdir(folder, 0o700)  # private until chmod-ed: nobody can swap it in between
            created = True
        except FileExistsError:
            pass
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if isinstance(exc, (NotADirectoryError,)) or exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise _folder_problem(folder, "is not a folder (a symbolic link or a file)") from exc
        raise QueueError(f"Cannot create the course's lock folder {folder}: {exc}. Set ZC_LOCK_DIR to a folder "
                         "every learner of this machine can write (chmod 1777), or ask the instructor.") from exc
    try:
        st = os.fstat(fd)
        if created and st.st_uid == os.getuid():
            os.fchmod(fd, 0o1777)  # every user may add files; only owners remove theirs
            st = os.fstat(fd)
        check_folder(folder, st)
    finally:
        os.close(fd)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise QueueError(f"The course's lock folder {folder} is not writable by you (mode "
                         f"{st.st_mode & 0o7777:o}). The instructor can run `sudo chmod 1777 {folder}`, "
                         "or every learner can set the same ZC_LOCK_DIR to a folder all can write.")
    return folder


def open_shared(path: Path, flags: int = os.O_RDWR) -> int:
    """Open (creating if needed) a file that every user of the machine can lock and write: mode 0666
    whatever the umask; never through a symbolic link."""
    fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    try:
        st = os.fstat(fd)
        if st.st_uid == os.getuid() and (st.st_mode & 0o777) != 0o666:
            os.fchmod(fd, 0o666)
    except OSError:
        os.close(fd)
        raise
    return fd


_key: str | None = None


def gpu_key() -> str:
    """The queue's name for this process's GPU 0: its PCI bus id, so that learners whose
    ``CUDA_VISIBLE_DEVICES`` differ still share one queue per physical GPU."""
    global _key
    if _key is None:
        from . import gpu

        gpu.context()
        import pycuda.driver as drv

        try:
            bus = drv.Device(0).pci_bus_id()
        except Exception:  # an old PyCUDA: fall back to the device index
            bus = "device-0"
        _key = "gpu-" + re.sub(r"[^0-9A-Za-z.]+", "-", bus).lower()
    return _key


# --------------------------------------------------------------------------- process liveness
def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


_TICKET = re.compile(r"^(?P<key>.+)\.(?P<seq>\d{20})\.(?P<pid>\d+)\.ticket$")


def _tickets(folder: Path, key: str) -> list[tuple[int, int, str]]:
    """(number, pid, file name) of every ticket of ``key`` in the folder, in queue order."""
    found = []
    for name in os.listdir(folder):
        m = _TICKET.match(name)
        if m and m["key"] == key:
            found.append((int(m["seq"]), int(m["pid"]), name))
    return sorted(found)


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:  # gone already, or another user's file in the sticky folder
        pass


# --------------------------------------------------------------------------- members (for NVML)
_members: set[Path] = set()


def register_member(key: str | None = None) -> None:
    """Say in the lock folder that this process is a course process using ``key``'s GPU (once per process),
    so that :mod:`helpers.contention` does not count it as an outsider."""
    if not enabled():
        return
    path = lock_dir() / f"{key or gpu_key()}.member.{os.getpid()}"
    if path in _members:
        return
    os.close(open_shared(path))
    _members.add(path)
    atexit.register(_unlink_quietly, path)


def course_pids(key: str | None = None) -> set[int]:
    """Live pids of course processes using ``key``'s GPU: members and ticket holders."""
    key = key or gpu_key()
    folder = lock_dir()
    pids = {pid for _, pid, _ in _tickets(folder, key)}
    prefix = f"{key}.member."
    pids |= {int(name[len(prefix):]) for name in os.listdir(folder)
             if name.startswith(prefix) and name[len(prefix):].isdigit()}
    return {pid for pid in pids if _alive(pid)}


# --------------------------------------------------------------------------- the log
def _log_path(key: str) -> Path:
    return lock_dir() / f"{key}.log"


def read_log(key: str | None = None, *, since: float = 0.0, tail_bytes: int | None = None) -> list[dict[str, Any]]:
    """The slots logged for ``key``'s GPU that ended after ``since`` (a ``time.time()``), oldest first."""
    path = _log_path(key or gpu_key())
    try:
        with open(path, "rb") as f:
            if tail_bytes:
                f.seek(max(0, os.fstat(f.fileno()).st_size - tail_bytes))
            data = f.read()
    except FileNotFoundError:
        return []
    entries = []
    for line in data.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:  # a partial first line of a tail, or a torn write
            continue
        if isinstance(entry, dict) and entry.get("t", 0) >= since:
            entries.append(entry)
    return entries


def _mean_hold(key: str) -> float | None:
    holds = [e["hold_s"] for e in read_log(key, tail_bytes=16384)[-50:] if "hold_s" in e]
    return sum(holds) / len(holds) if holds else None


_log_fds: dict[Path, int] = {}


def _append_log(key: str, entry: dict[str, Any]) -> None:
    try:
        path = _log_path(key)
        fd = _log_fds.get(path)
        if fd is None:
            fd = _log_fds[path] = open_shared(path, os.O_WRONLY | os.O_APPEND)
        if os.fstat(fd).st_size > LOG_LIMIT_BYTES:
            os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(entry, separators=(",", ":")) + "\n").encode())
    except OSError:
        pass  # the log only informs; a full disk must not stop a measurement


# --------------------------------------------------------------------------- the waiting line
class _WaitLine:
    """The one line a waiting learner sees, rewritten in place with ``\\r`` (stderr)."""

    def __init__(self, key: str, folder: Path, seq: int, stream: TextIO | None) -> None:
        self.key, self.folder, self.seq, self.stream = key, folder, seq, stream
        self.started = time.monotonic()
        self.shown = False
        self.ahead = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zc-queue-line", daemon=True)
        self._thread.start()

    def _ahead(self) -> list[tuple[int, int, str]]:
        return [t for t in _tickets(self.folder, self.key) if t[0] < self.seq and _alive(t[1])]

    def _write(self, text: str) -> None:
        stream = self.stream or sys.stderr
        try:
            stream.write("\r" + text.ljust(100))
            stream.flush()
        except (OSError, ValueError):
            pass

    def _run(self) -> None:
        if self._stop.wait(SHOW_AFTER_S):
            return
        while True:
            ahead = self._ahead()
            self.ahead = max(self.ahead, len(ahead))
            mean = _mean_hold(self.key)
            eta = f", about {len(ahead) * mean:.1f} s" if mean else ""
            held = f" (pid {ahead[0][1]} is measuring)" if ahead else ""
            self._write(f"GPU queue: {len(ahead)} measurement(s) ahead of yours{eta}{held}; "
                        f"waited {time.monotonic() - self.started:.1f} s")
            self.shown = True
            if self._stop.wait(UPDATE_EVERY_S):
                return

    def finish(self) -> None:
        self._stop.set()
        self._thread.join()
        if self.shown:
            self._write(f"GPU queue: waited {time.monotonic() - self.started:.1f} s for the GPU "
                        f"(up to {self.ahead} measurement(s) ahead); measuring now.")


# --------------------------------------------------------------------------- the slot
_held = threading.local()
_meta_fds: dict[Path, int] = {}


def _forget_files_after_fork() -> None:
    """A forked child shares its parent's open files, and with them their flocks: it opens its own."""
    _meta_fds.clear()
    _log_fds.clear()
    _members.clear()
    _held.depth = 0


os.register_at_fork(after_in_child=_forget_files_after_fork)


def _take_ticket(folder: Path, key: str) -> tuple[int, int, Path]:
    """A new ticket (number, locked fd, path), numbered after every ticket taken before."""
    meta_path = folder / f"{key}.meta"
    meta = _meta_fds.get(meta_path)
    if meta is None:
        meta = _meta_fds[meta_path] = open_shared(meta_path)
    _flock_meta(meta, meta_path)
    try:
        seq = _next_number(os.pread(meta, 64, 0), folder, key)
        os.pwrite(meta, f"{seq:020d}\n".encode(), 0)
        os.ftruncate(meta, 21)
        # lock it under a private name first, so nobody sees the ticket unlocked and takes it for a dead one
        temporary = folder / f"{key}.new.{os.getpid()}.{threading.get_ident()}"
        _unlink_quietly(temporary)
        fd = open_shared(temporary)
        fcntl.flock(fd, fcntl.LOCK_EX)
        path = folder / f"{key}.{seq:020d}.{os.getpid()}.ticket"
        os.rename(temporary, path)
    finally:
        fcntl.flock(meta, fcntl.LOCK_UN)
    return seq, fd, path


MAX_SEQ = 10**20 - 1


def _next_number(raw: bytes, folder: Path, key: str) -> int:
    """The next ticket number after the ``.meta`` file's content; garbage or a number too large for a
    ticket name is repaired from the tickets in the folder, so mutual exclusion holds for any content."""
    text = raw.strip()
    last = int(text) if text.isdigit() and len(text) <= 20 else -1
    highest = max((t[0] for t in _tickets(folder, key)), default=0)
    if last < 0 or last >= MAX_SEQ:
        last = highest
    seq = max(last, highest) + 1
    if seq > MAX_SEQ:
        raise QueueError(f"The queue's tickets in {folder} are numbered up to the largest a ticket name holds; remove "
                         f"{folder}/{key}.* (the instructor: `sudo rm {folder}/{key}.*`).")
    return seq


def meta_timeout() -> float:
    """Seconds to wait for the ``.meta`` file's short lock: ``$ZC_QUEUE_META_TIMEOUT``, else 30."""
    text = os.environ.get("ZC_QUEUE_META_TIMEOUT", "").strip()
    try:
        value = float(text) if text else 30.0
    except ValueError:
        value = -1.0
    if not (0 < value < 1e6):
        raise QueueError(f"ZC_QUEUE_META_TIMEOUT={text!r} is not a number of seconds between 0 and 1e6.")
    return value


def _flock_meta(fd: int, path: Path) -> None:
    """The ``.meta`` file's lock, held only for a moment by a well-behaved process: a holder that keeps
    it longer than :func:`meta_timeout` is an error that names the file and its owner."""
    limit = meta_timeout()
    end = time.monotonic() + limit
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= end:
                owner = os.fstat(fd).st_uid
                raise QueueError(f"Another process has held the lock of {path} (file owner uid {owner}) for more than "
                                 f"{limit:g} s; it only takes a moment normally. The instructor can find it with "
                                 f"`sudo fuser {path}` or `cat /proc/locks`, and remove the file.") from None
            time.sleep(0.01)


def _wait_for_turn(folder: Path, key: str, seq: int) -> None:
    """Block until no live ticket numbered below ``seq`` is left."""
    done: set[int] = set()
    while True:
        before = [t for t in _tickets(folder, key) if t[0] < seq and t[0] not in done]
        if not before:
            return
        number, pid, name = before[-1]  # the ticket just ahead: it is done when its lock is free
        try:
            fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            done.add(number)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
        finally:
            os.close(fd)
        done.add(number)
        if not _alive(pid):
            _unlink_quietly(folder / name)  # left by a killed process


@contextmanager
def measurement_slot(key: str | None = None, *, what: str = "", stream: TextIO | None = None) -> Iterator[None]:
    """Hold this GPU's measurement slot for the timed work inside the ``with`` block (lesson 06).

    Re-entrant: a slot taken inside another in the same thread is the outer one. Waits in turn
    (first come, first served) behind other processes' slots; a wait longer than a moment shows one
    line on stderr. ``key`` names the GPU (default: this process's GPU 0, by PCI bus id).
    """
    if getattr(_held, "depth", 0) or not enabled():
        _held.depth = getattr(_held, "depth", 0) + 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    key = key or gpu_key()
    folder = lock_dir()
    register_member(key)
    t0 = time.monotonic()
    seq, fd, path = _take_ticket(folder, key)
    line: _WaitLine | None = None
    t1 = t2 = None
    ahead = 0
    try:
        ahead = sum(1 for t in _tickets(folder, key) if t[0] < seq)
        if ahead:
            line = _WaitLine(key, folder, seq, stream)
            try:
                _wait_for_turn(folder, key, seq)
            finally:
                line.finish()
        t1 = time.monotonic()
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0
            t2 = time.monotonic()
    finally:
        _unlink_quietly(path)
        os.close(fd)  # releases the flock: the next ticket's owner goes on
        if t1 is not None and t2 is not None:
            _append_log(key, {"t": time.time(), "pid": os.getpid(), "tag": os.environ.get("ZC_QUEUE_TAG", ""),
                              "what": what, "wait_s": round(t1 - t0, 6), "hold_s": round(t2 - t1, 6),
                              "ahead": max(ahead, line.ahead if line else 0), "release_s": round(time.monotonic() - t2, 6)})


def uncontended_overhead(key: str = "overhead-check", slots: int = 200,
                         clock: Callable[[], float] = time.perf_counter) -> float:
    """Mean seconds one empty slot costs when nobody else waits (take, log and release)."""
    with measurement_slot(key):  # the first slot opens the files
        pass
    t0 = clock()
    for _ in range(slots):
        with measurement_slot(key):
            pass
    return (clock() - t0) / slots
