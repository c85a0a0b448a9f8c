"""The instructor's record of a class: this GPU's figures, measured today, shown to every learner (measure-bandwidth).

Under the class setting (``ZC_CLASS_GPU_SECONDS``) an experiment too long for N learners to run one after another
is shown from a record the instructor made on this GPU at the start of the class (``python -m helpers
class-record``), not from data/'s reference, which another board measured on another day. The file is shared,
so it is trusted only as far as the kernel vouches for it, the same rules as the queue's folder:

- opened without following a symbolic link, a regular file;
- owned by root, by the reader, or by the instructor (``ZC_CLASS_INSTRUCTOR``, a user name or uid), and not
  writable by group or others; with ``ZC_CLASS_RECORD_READONLY=1`` (a hub whose learners share one uid) it must
  also sit on a read-only mount;
- its content a valid record (:func:`helpers.records.validate`) marked as a class record, measured on a GPU of
  this name and board (``gpu_board``, a hash of its UUID, else the PCI bus id) at most ``ZC_CLASS_RECORD_MAX_HOURS``
  (default 12) hours ago.

A learner can only fool themself: whatever a learner writes, another learner's check refuses it. Nothing here
touches the GPU: the caller (:mod:`helpers.experiments.result`) says which GPU it is on.
"""

from __future__ import annotations

import json
import os
import pwd
import stat
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from .. import records
from ..errors import CourseError
from ..i18n import _

__all__ = ["ClassRecordProblem", "ClassRecord", "record_path", "trusted_owners", "load", "save", "MARK",
           "CLASS_RECORD", "INSTRUCTOR", "READONLY", "MAX_HOURS"]

CLASS_RECORD = "ZC_CLASS_RECORD"        # the file's path (default: <lock folder>/<gpu key>.class-record.json)
INSTRUCTOR = "ZC_CLASS_INSTRUCTOR"      # the user (name or uid) whose record the class trusts, besides root
READONLY = "ZC_CLASS_RECORD_READONLY"   # 1: the file must sit on a read-only mount (learners sharing one uid)
MAX_HOURS = "ZC_CLASS_RECORD_MAX_HOURS"  # how old the record may be (default 12 hours: the day of the class)
MARK = "class_record"                   # the provenance key that marks a class record
MAX_BYTES = 64 << 20
FUTURE_SLACK = timedelta(minutes=10)


class ClassRecordProblem(CourseError):
    """The instructor's record cannot be shown: why, in a sentence (measure-bandwidth)."""


@dataclass(frozen=True)
class ClassRecord:
    """A checked class record, where it lies and when it was measured."""

    record: dict[str, Any]
    path: Path
    measured_at: datetime

    def clock(self) -> str:
        """The local time it was measured, ``HH:MM``."""
        return self.measured_at.astimezone().strftime("%H:%M")


def record_path(key: str, lock_folder: Path | None = None) -> Path:
    """``$ZC_CLASS_RECORD``, else ``<lock folder>/<key>.class-record.json`` (one per physical GPU)."""
    named = os.environ.get(CLASS_RECORD, "").strip()
    if named:
        return Path(named)
    if lock_folder is None:
        from .gpu_queue import lock_dir

        lock_folder = lock_dir()
    return lock_folder / f"{key}.class-record.json"


def _uid(name: str) -> int | None:
    if name.isdigit():
        return int(name)
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def trusted_owners() -> set[int]:
    """Root, this process's user, and ``$ZC_CLASS_INSTRUCTOR``'s (a name or uid) when it names one."""
    owners = {0, os.getuid()}
    named = os.environ.get(INSTRUCTOR, "").strip()
    uid = _uid(named) if named else None
    if uid is not None:
        owners.add(uid)
    return owners


def max_age() -> timedelta:
    """``$ZC_CLASS_RECORD_MAX_HOURS`` (default 12) as a time span."""
    text = os.environ.get(MAX_HOURS, "").strip()
    try:
        hours = float(text) if text else 12.0
    except ValueError:
        hours = -1.0
    if not 0 < hours <= 24 * 7:
        raise ClassRecordProblem(f"{MAX_HOURS}={text!r} is not a number of hours between 0 and 168.")
    return timedelta(hours=hours)


def _check_file(st: os.stat_result, fd: int, path: Path) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ClassRecordProblem(_("{path} is not a regular file").format(path=path))
    if st.st_uid not in trusted_owners():
        raise ClassRecordProblem(_("{path} belongs to uid {uid}, not to root, you or the instructor ({setting}="
                                   "{instructor!r}): anyone could have written it").format(
            path=path, uid=st.st_uid, setting=INSTRUCTOR, instructor=os.environ.get(INSTRUCTOR, "")))
    if st.st_mode & 0o022:
        raise ClassRecordProblem(_("{path} is writable by group or others (mode {mode:o})").format(
            path=path, mode=st.st_mode & 0o777))
    if os.environ.get(READONLY, "") not in ("", "0") and not os.fstatvfs(fd).f_flag & os.ST_RDONLY:
        raise ClassRecordProblem(_("{path} is not on a read-only mount, and {setting} asks for one (learners who "
                                   "share one uid could have written it)").format(path=path, setting=READONLY))
    if st.st_size > MAX_BYTES:
        raise ClassRecordProblem(_("{path} is larger than {mib} MiB").format(path=path, mib=MAX_BYTES >> 20))


def _read(path: Path) -> tuple[dict[str, Any], os.stat_result]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ClassRecordProblem(_("there is no instructor's record at {path}").format(path=path)) from None
    except OSError as exc:
        raise ClassRecordProblem(_("{path} cannot be opened ({error}; a symbolic link is refused)").format(
            path=path, error=exc.strerror or exc)) from None
    try:
        st = os.fstat(fd)
        _check_file(st, fd, path)
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(MAX_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return json.loads(data), st
    except (ValueError, RecursionError):
        raise ClassRecordProblem(_("{path} is not JSON").format(path=path)) from None


def load(path: Path, *, gpu: str, board: str | None, key: str, now: datetime | None = None) -> ClassRecord:
    """The class record at ``path``, checked (module docstring) against this GPU's name, board and queue key;
    :class:`ClassRecordProblem` says why it cannot be shown."""
    record, _stat = _read(path)
    try:
        records.validate(record, str(path))
    except records.RecordError as exc:
        raise ClassRecordProblem(str(exc)) from None
    prov = record["provenance"]
    mark = prov.get(MARK)
    if not isinstance(mark, dict):
        raise ClassRecordProblem(_("{path} is a record but not a class record (`python -m helpers class-record`)")
                                 .format(path=path))
    if prov["gpu"] != gpu:
        raise ClassRecordProblem(_("{path} was measured on {theirs}, not on this {gpu}").format(
            path=path, theirs=prov["gpu"], gpu=gpu))
    theirs = prov.get("gpu_board")
    if board and theirs and theirs != "unknown":
        if theirs != board:
            raise ClassRecordProblem(_("{path} was measured on another board ({theirs}, this is {board})").format(
                path=path, theirs=theirs, board=board))
    elif mark.get("gpu_key") != key:
        raise ClassRecordProblem(_("{path} was measured on the GPU at {theirs!r}, this is {key!r}").format(
            path=path, theirs=mark.get("gpu_key"), key=key))
    measured = records.parse_date(prov["date"])
    now = now or datetime.now(timezone.utc)
    if measured > now + FUTURE_SLACK:
        raise ClassRecordProblem(_("{path} is dated in the future ({date})").format(path=path, date=prov["date"]))
    if now - measured > max_age():
        raise ClassRecordProblem(_("{path} was measured at {date}, more than {age} ago: run `python -m helpers "
                                   "class-record` again today").format(path=path, date=prov["date"], age=max_age()))
    return ClassRecord(record, path, measured)


def save(record: dict[str, Any], path: Path) -> Path:
    """Write the class record atomically, mode 0644, replacing the previous one of the same owner."""
    records.validate(record, "the class record to save")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=".class-record-", suffix=".json")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w") as handle:
            os.fchmod(handle.fileno(), 0o644)
            handle.write(records.dumps(record))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.replace(tmp, path)
        except PermissionError:
            raise ClassRecordProblem(f"{path} belongs to another user in a sticky folder: remove it as root "
                                     f"(`sudo rm {path}`), or set {CLASS_RECORD} to a file in a folder of "
                                     "your own") from None
    finally:
        tmp.unlink(missing_ok=True)
    return path
