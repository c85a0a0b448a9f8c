"""The measurement queue: timed sections of every process on the machine take turns on a GPU (measure-bandwidth).

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

Nobody can stall the others for long. A ``.meta`` lock held past ``ZC_QUEUE_META_TIMEOUT`` is an error that
names the holder (pid and user, from ``/proc/locks``). A slot held past ``ZC_QUEUE_HOLD_TIMEOUT`` (each
waiter times the head of the queue on its own clock) is passed: the waiter leaves a ``<ticket>.passed``
notice, which later learners honour too, and the stuck holder gets a :class:`SlotHeldTooLong` warning.

``ZC_QUEUE=0`` turns the queue off (a machine with one user who wants no files in /tmp).
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import json
import os
import pwd
import re
import stat
import sys
import threading
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, NamedTuple, TextIO

from ..errors import CourseError
from ..i18n import N_, _
from ..mode import require_live

__all__ = ["QueueError", "SlotHeldTooLong", "lock_dir", "measurement_slot", "gpu_key", "course_pids", "read_log",
           "uncontended_overhead", "open_shared", "meta_timeout", "hold_timeout", "DEFAULT_LOCK_DIR"]

DEFAULT_LOCK_DIR = "/tmp/zero-copy-course-locks"
SHOW_AFTER_S = 0.3      # a wait shorter than this prints nothing
UPDATE_EVERY_S = 0.5    # how often the waiting line is rewritten
LOG_LIMIT_BYTES = 64 << 20  # the shared log is emptied when it grows past this
LOOK_EVERY_S = 0.25     # how often a waiter looks at the whole queue ahead (its clock on the head)
DEFAULT_HOLD_TIMEOUT_S = 600.0  # all sixteen lessons hold the slot 96.7 s in all (652 slots): far above any one
PROC_LOCKS = "/proc/locks"
WHAT_CHARS = 40         # how much of a ticket's "what" a waiting line shows
WHY = N_("learners take turns so each times the GPU's link alone")


class QueueError(CourseError):
    """The queue's folder cannot be used (measure-bandwidth)."""


class SlotHeldTooLong(UserWarning):
    """This process held the GPU slot past ``ZC_QUEUE_HOLD_TIMEOUT`` and others went on (measure-bandwidth)."""


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
    ``CUDA_VISIBLE_DEVICES`` differ still share one queue per physical GPU. It needs the driver, not a
    context: the GPU helpers, a layer above, join the queue when they make theirs (:func:`register_member`)."""
    global _key
    if _key is None:
        require_live("The measurement queue")
        import pycuda.driver as drv

        drv.init()
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


# --------------------------------------------------------------------------- who holds a lock
def _proc_text(path: str) -> str | None:
    """A /proc file's text, or None when it cannot be read (hidepid, another namespace, a process gone)."""
    try:
        with open(path, "rb") as f:
            return f.read().decode("ascii", "replace")
    except OSError:
        return None


def _user_name(uid: int) -> str:
    """``user NAME``, or ``uid N`` when the account has no name here."""
    try:
        return f"user {pwd.getpwuid(uid).pw_name}"
    except (KeyError, OverflowError):
        return f"uid {uid}"


def status_field(pid: int, field: str) -> int | None:
    """The first number of line ``field`` of /proc/PID/status (readable by every user), or None."""
    m = re.search(rf"^{field}:\s+(\d+)", _proc_text(f"/proc/{pid}/status") or "", re.M)
    return int(m[1]) if m else None


def _user_of_pid(pid: int) -> str:
    """The owner (real uid) of a process, from /proc/PID/status; ``unknown user`` when it is not visible."""
    uid = status_field(pid, "Uid")
    return "unknown user" if uid is None else _user_name(uid)


def _lock_holders(fd: int) -> list[int]:
    """Pids that hold a lock on ``fd``'s file (same device and inode in /proc/locks); empty when unreadable."""
    text = _proc_text(PROC_LOCKS)
    try:
        st = os.fstat(fd)
    except OSError:
        return []
    want = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    pids: list[int] = []
    for line in (text or "").splitlines():
        fields = line.split()
        if len(fields) < 6 or fields[1] == "->":  # "->": a process blocked on the lock, not one holding it
            continue
        try:
            major, minor, inode = fields[5].split(":")
            found, pid = (int(major, 16), int(minor, 16), int(inode)), int(fields[4])
        except ValueError:
            continue
        if found == want and pid > 0 and pid not in pids:  # pid 0 or -1: another pid namespace, an OFD lock
            pids.append(pid)
    return pids


def _describe_holders(fd: int) -> str:
    """``pid 123 of user alice`` for each process holding ``fd``'s lock, else ``an unknown process``."""
    pids = _lock_holders(fd)
    return ", ".join(f"pid {pid} of {_user_of_pid(pid)}" for pid in pids) or "an unknown process"


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
    so that :mod:`helpers.sharing.contention` does not count it as an outsider."""
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


# --------------------------------------------------------------------------- the waiting lines
def _write_line(stream: TextIO | None, text: str) -> None:
    """Rewrite the waiting learner's one line in place with ``\r`` (stderr by default)."""
    stream = stream or sys.stderr
    try:
        stream.write("\r" + text.ljust(100))
        stream.flush()
    except (OSError, ValueError):
        pass


def _ticket_what(path: Path) -> str:
    """What a ticket's measurement is, as its owner wrote it: printable characters only (any user can write
    into a ticket: it is only shown, never trusted)."""
    fd = _open_ticket(path)
    if fd is None:
        return ""
    try:
        raw = os.read(fd, WHAT_CHARS)
    except OSError:
        return ""
    finally:
        os.close(fd)
    return "".join(c for c in raw.decode(errors="replace") if c.isprintable() and c != "\ufffd").strip()


class _Ahead(NamedTuple):
    """A ticket ahead of this process's whose owner still holds it."""

    seq: int
    pid: int
    name: str
    uid: int  # the ticket file's owner: the kernel's word, unlike the pid in its name

    def who(self) -> str:
        return _("pid {pid} of {user}").format(pid=self.pid, user=_user_name(self.uid))


class _WaitLine:
    """The one line a waiting learner sees, rewritten in place; the waiting loop tells it what it sees."""

    def __init__(self, key: str, stream: TextIO | None, folder: Path | None = None) -> None:
        self.key, self.stream, self.folder = key, stream, folder or lock_dir()
        self.started = time.monotonic()
        self.shown = False
        self.ahead = 0                  # the most measurements seen ahead at once
        self.now: list[_Ahead] = []     # the tickets ahead now, the head of the queue first
        self.passed: list[str] = []     # the stuck holders passed, and for how long they had held the slot
        self._stop = threading.Event()
        self._refresh = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zc-queue-line", daemon=True)
        self._thread.start()

    def update(self, ahead: list[_Ahead]) -> None:
        self.now = ahead
        self.ahead = max(self.ahead, len(ahead))

    def passing(self, head: _Ahead, held: float, limit: float) -> None:
        """Say at once that this learner passes a holder stuck in its slot."""
        self.passed.append(_("{who}, stuck in the GPU slot for {held:.1f} s (ZC_QUEUE_HOLD_TIMEOUT is {limit:g} s)")
                           .format(who=head.who(), held=held, limit=limit))
        self._refresh.set()

    def _text(self) -> str:
        ahead = self.now
        mean = _mean_hold(self.key)
        eta = _(", about {seconds:.1f} s more").format(seconds=len(ahead) * mean) if mean and ahead else ""
        what = _ticket_what(self.folder / ahead[0].name) if ahead else ""
        held = ((_(" (pid {pid} is measuring {what})") if what else _(" (pid {pid} is measuring)")).format(
            pid=ahead[0].pid, what=what) if ahead else "")
        passing = _("; passing {who}").format(who=self.passed[-1]) if self.passed else ""
        return _("GPU queue: {count} measurement(s) ahead of yours{eta}{held}{passing}; waited {waited:.1f} s: "
                 "{why}").format(count=len(ahead), eta=eta, held=held, passing=passing,
                                 waited=time.monotonic() - self.started, why=_(WHY))

    def _run(self) -> None:
        self._refresh.wait(SHOW_AFTER_S)
        while not self._stop.is_set():
            self._refresh.clear()
            _write_line(self.stream, self._text())
            self.shown = True
            self._refresh.wait(UPDATE_EVERY_S)

    def finish(self) -> None:
        self._stop.set()
        self._refresh.set()
        self._thread.join()
        if self.shown or self.passed:
            passed = _("; passed {who}").format(who="; ".join(self.passed)) if self.passed else ""
            _write_line(self.stream, _("GPU queue: waited {waited:.1f} s for the GPU (up to {count} measurement(s) "
                                       "ahead: {why}){passed}; measuring now.").format(
                waited=time.monotonic() - self.started, count=self.ahead, why=_(WHY), passed=passed))


# --------------------------------------------------------------------------- settings
def _seconds_setting(name: str, default: float) -> float:
    """A number of seconds from the environment variable ``name`` (``default`` when unset or empty)."""
    text = os.environ.get(name, "").strip()
    try:
        value = float(text) if text else default
    except ValueError:
        value = -1.0
    if not (0 < value < 1e6):
        raise QueueError(f"{name}={text!r} is not a number of seconds between 0 and 1e6.")
    return value


def meta_timeout() -> float:
    """Seconds to wait for the ``.meta`` file's short lock: ``$ZC_QUEUE_META_TIMEOUT``, else 30."""
    return _seconds_setting("ZC_QUEUE_META_TIMEOUT", 30.0)


def hold_timeout() -> float:
    """Seconds a slot may hold the GPU before the next learner passes it: ``$ZC_QUEUE_HOLD_TIMEOUT``, else 600
    (all sixteen lessons together hold the slot about 97 s, so no single timed section comes near it)."""
    return _seconds_setting("ZC_QUEUE_HOLD_TIMEOUT", DEFAULT_HOLD_TIMEOUT_S)


# --------------------------------------------------------------------------- taking a ticket
_held = threading.local()
_meta_fds: dict[Path, int] = {}
_meta_mutex = threading.Lock()  # threads share the process's .meta descriptor, and its flock does not part them


def _forget_files_after_fork() -> None:
    """A forked child shares its parent's open files, and with them their flocks: it opens its own."""
    global _meta_mutex
    _meta_fds.clear()
    _log_fds.clear()
    _members.clear()
    _held.depth = 0
    _meta_mutex = threading.Lock()  # a thread of the parent may have held it at the fork


os.register_at_fork(after_in_child=_forget_files_after_fork)


def _take_ticket(folder: Path, key: str, stream: TextIO | None = None, what: str = "") -> tuple[int, int, Path]:
    """A new ticket (number, locked fd, path), numbered after every ticket taken before; it holds ``what`` the
    measurement is, for the waiting lines of those behind it."""
    meta_path = folder / f"{key}.meta"
    with _meta_mutex:
        meta = _meta_fds.get(meta_path)
        if meta is None:
            meta = _meta_fds[meta_path] = open_shared(meta_path)
        flock_shared_file(meta, meta_path, stream)
        try:
            seq = _next_number(os.pread(meta, 64, 0), folder, key)
            os.pwrite(meta, f"{seq:020d}\n".encode(), 0)
            os.ftruncate(meta, 21)
            # lock it under a private name first, so nobody sees the ticket unlocked and takes it for a dead one
            temporary = folder / f"{key}.new.{os.getpid()}.{threading.get_ident()}"
            _unlink_quietly(temporary)
            fd = open_shared(temporary)
            fcntl.flock(fd, fcntl.LOCK_EX)
            if what:
                os.write(fd, what[:WHAT_CHARS].encode(errors="replace"))
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


def flock_shared_file(fd: int, path: Path, stream: TextIO | None = None, what: str = "the queue's lock") -> None:
    """The lock of a shared file held only for a moment by a well-behaved process (the queue's ``.meta``, the
    pinned-memory budget's file). A longer wait shows one line naming the holder (pid and user); a holder
    that keeps it past :func:`meta_timeout` is an error."""
    limit = meta_timeout()
    start = time.monotonic()
    shown_at: float | None = None
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            waited = time.monotonic() - start
            if waited >= limit:
                raise _meta_held_error(fd, path, limit) from None
            if waited >= SHOW_AFTER_S and (shown_at is None or time.monotonic() - shown_at >= UPDATE_EVERY_S):
                _write_line(stream, f"GPU queue: waiting for {what} {path}, held by "
                                    f"{_describe_holders(fd)}; waited {waited:.1f} s (an error after {limit:g} s)")
                shown_at = time.monotonic()
            time.sleep(0.01)
    if shown_at is not None:
        _write_line(stream, f"GPU queue: {what} {path} was free after {time.monotonic() - start:.1f} s.")


def _meta_held_error(fd: int, path: Path, limit: float) -> QueueError:
    owner = os.fstat(fd).st_uid
    return QueueError(f"Another process ({_describe_holders(fd)}) has held the lock of {path} (file owner uid "
                      f"{owner}) for more than {limit:g} s; it only takes a moment normally. The instructor can "
                      f"find it with `sudo fuser {path}` or `cat /proc/locks`, and remove the file.")


# --------------------------------------------------------------------------- waiting in turn
def _notice_path(ticket: Path) -> Path:
    """Where a waiter says it passed ``ticket``'s holder, stuck in its slot."""
    return ticket.with_name(ticket.name + ".passed")


def _open_ticket(path: Path) -> int | None:
    """A read-only descriptor to lock a ticket by, or None when it is gone or is not a plain file one can
    open (a FIFO or an unreadable file put there by someone else must not block anyone)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _holding(folder: Path, ticket: tuple[int, int, str]) -> _Ahead | None:
    """The ticket, if its owner still holds its lock and no waiter has passed it; else None (a dead
    process's ticket is removed)."""
    path = folder / ticket[2]
    if os.path.lexists(_notice_path(path)):
        return None
    fd = _open_ticket(path)
    if fd is None:
        return None
    try:
        uid = os.fstat(fd).st_uid
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _Ahead(*ticket, uid)
    except OSError:
        return None
    finally:
        os.close(fd)
    if not _alive(ticket[1]):
        _unlink_quietly(path)  # left by a killed process
    return None


def _ahead_of(folder: Path, key: str, seq: int, done: set[int]) -> list[_Ahead]:
    """The tickets numbered below ``seq`` still held, in queue order; those found done join ``done``."""
    ahead = []
    for ticket in _tickets(folder, key):
        if ticket[0] >= seq or ticket[0] in done:
            continue
        held = _holding(folder, ticket)
        if held is None:
            done.add(ticket[0])
        else:
            ahead.append(held)
    return ahead


class _Release:
    """Wakes the waiting loop the moment one ticket's owner lets go of it: a thread blocked on its lock."""

    def __init__(self, folder: Path, ticket: _Ahead) -> None:
        self.seq = ticket.seq
        self.event = threading.Event()
        fd = _open_ticket(folder / ticket.name)
        if fd is not None:  # else the waiting loop just looks again every LOOK_EVERY_S
            threading.Thread(target=self._run, args=(fd,), name="zc-queue-watch", daemon=True).start()

    def _run(self, fd: int) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # a passed holder's lock may keep this thread until that holder ends
        except OSError:
            pass
        finally:
            os.close(fd)
            self.event.set()


def _wait_for_turn(folder: Path, key: str, seq: int, limit: float, line: _WaitLine | None = None) -> None:
    """Block until no ticket numbered below ``seq`` is held. The head of the queue is timed on this process's
    own clock from when it became the head; past ``limit`` seconds it is passed (see :func:`_pass`)."""
    done: set[int] = set()
    head_seq, since = -1, time.monotonic()
    watch: _Release | None = None
    while True:
        ahead = _ahead_of(folder, key, seq, done)
        if not ahead:
            return
        if line:
            line.update(ahead)
        if ahead[0].seq != head_seq:
            head_seq, since = ahead[0].seq, time.monotonic()
        held = time.monotonic() - since
        if held > limit:
            _pass(folder, key, ahead[0], held, limit, line)
            done.add(ahead[0].seq)
            continue
        if watch is None or watch.seq != ahead[-1].seq:
            watch = _Release(folder, ahead[-1])  # the ticket just ahead: its release is this one's turn
        watch.event.wait(min(LOOK_EVERY_S, limit - held))


def _pass(folder: Path, key: str, head: _Ahead, held: float, limit: float, line: _WaitLine | None) -> None:
    """Go on past a head of the queue stuck in its slot, leaving a notice that every later waiter honours
    and that the stuck holder reads when its slot ends."""
    _leave_notice(folder, head, held, limit)
    _sweep_notices(folder, key)
    if line:
        line.passing(head, held, limit)


def _leave_notice(folder: Path, head: _Ahead, held: float, limit: float) -> None:
    text = json.dumps({"t": time.time(), "by_pid": os.getpid(), "held_s": round(held, 3), "limit_s": limit})
    try:
        fd = os.open(_notice_path(folder / head.name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                     | os.O_CLOEXEC, 0o644)
    except OSError:  # another waiter left it first, or the disk is full: the pass goes on all the same
        return
    try:
        os.write(fd, text.encode() + b"\n")
    except OSError:
        pass
    finally:
        os.close(fd)


def _sweep_notices(folder: Path, key: str) -> None:
    """Remove the notices whose ticket is gone (only one's own can go: the folder is sticky)."""
    for name in os.listdir(folder):
        if name.startswith(f"{key}.") and name.endswith(".ticket.passed") and not os.path.lexists(
                folder / name[:-len(".passed")]):
            _unlink_quietly(folder / name)


def _was_passed(path: Path, hold_s: float, limit: float) -> bool:
    """Whether a waiter passed this slot: it held past ``limit`` and a notice names its ticket."""
    return hold_s > limit and os.path.lexists(_notice_path(path))


def _warn_held_too_long(hold_s: float, limit: float, what: str) -> None:
    label = f" ({what})" if what else ""
    warnings.warn(SlotHeldTooLong(
        f"Your measurement{label} held the GPU slot for {hold_s:.1f} s, more than ZC_QUEUE_HOLD_TIMEOUT "
        f"({limit:g} s); other learners went on, so your figures may include their work."), stacklevel=4)


# --------------------------------------------------------------------------- the slot
@contextmanager
def measurement_slot(key: str | None = None, *, what: str = "", stream: TextIO | None = None) -> Iterator[None]:
    """Hold this GPU's measurement slot for the timed work inside the ``with`` block (measure-bandwidth).

    Re-entrant: a slot taken inside another in the same thread is the outer one. Waits in turn
    (first come, first served) behind other processes' slots; a wait longer than a moment shows one
    line on stderr. ``key`` names the GPU (default: this process's GPU 0, by PCI bus id). A slot held
    longer than :func:`hold_timeout` is passed by the next learner, and warns (:class:`SlotHeldTooLong`).
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
    limit = hold_timeout()
    register_member(key)
    t0 = time.monotonic()
    seq, fd, path = _take_ticket(folder, key, stream, what)
    line: _WaitLine | None = None
    t1 = t2 = None
    ahead = 0
    try:
        ahead = sum(1 for t in _tickets(folder, key) if t[0] < seq)
        if ahead:
            line = _WaitLine(key, stream, folder)
            try:
                _wait_for_turn(folder, key, seq, limit, line)
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
        hold = t2 - t1 if t1 is not None and t2 is not None else None
        passed = hold is not None and _was_passed(path, hold, limit)
        _unlink_quietly(path)
        os.close(fd)  # releases the flock: the next ticket's owner goes on
        if t1 is not None and t2 is not None:
            entry = {"t": time.time(), "pid": os.getpid(), "tag": os.environ.get("ZC_QUEUE_TAG", ""),
                     "what": what, "wait_s": round(t1 - t0, 6), "hold_s": round(t2 - t1, 6),
                     "ahead": max(ahead, line.ahead if line else 0), "release_s": round(time.monotonic() - t2, 6)}
            _append_log(key, {**entry, "passed": True} if passed else entry)
        if passed and hold is not None:
            _unlink_quietly(_notice_path(path))
            _warn_held_too_long(hold, limit, what)


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
