"""The measurement queue (helpers.sharing.gpu_queue): timed sections of different processes never overlap,
the slot is released however its holder ends, a waiting learner sees a line, every user can lock."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from helpers.sharing import gpu_queue

KEY = "test-gpu"


@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    folder = tmp_path / "locks"
    monkeypatch.setenv("ZC_LOCK_DIR", str(folder))
    monkeypatch.delenv("ZC_QUEUE", raising=False)
    return folder


def _child(code: str, env_extra: dict[str, str] | None = None, **kwargs) -> subprocess.Popen:
    """A Python process that runs ``code`` with the test's ZC_LOCK_DIR; its stdout is a pipe."""
    prelude = "import os, sys, time, json\nfrom helpers.sharing.gpu_queue import measurement_slot\n"
    return subprocess.Popen([sys.executable, "-c", prelude + textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, **(env_extra or {})}, **kwargs)


def _wait_for_line(process: subprocess.Popen, expected: str, timeout: float = 20) -> None:
    line = process.stdout.readline()
    assert line.strip() == expected, (line, process.stderr.read() if process.poll() is not None else "")


def _meta_lock_holder() -> subprocess.Popen:
    """Another process that takes the ``.meta`` file's flock of KEY and keeps it (prints "locked" once it holds it)."""
    return _child(f"""
        import fcntl
        fd = os.open(os.path.join(os.environ["ZC_LOCK_DIR"], {KEY + '.meta'!r}), os.O_RDWR)
        fcntl.flock(fd, fcntl.LOCK_EX)
        print('locked', flush=True)
        time.sleep(120)
    """)


def _intervals(env_extra: dict[str, str]) -> list[tuple[float, float]]:
    """Four processes, each timing 8 sections of 20 ms; the (start, end) of every section."""
    code = f"""
        spans = []
        for _ in range(8):
            with measurement_slot({KEY!r}):
                start = time.monotonic()
                time.sleep(0.02)
                spans.append((start, time.monotonic()))
        print(json.dumps(spans))
    """
    children = [_child(code, env_extra) for _ in range(4)]
    spans = []
    for child in children:
        out, err = child.communicate(timeout=60)
        assert child.returncode == 0, err
        spans += [tuple(s) for s in json.loads(out)]
    return sorted(spans)


def _overlaps(spans: list[tuple[float, float]]) -> int:
    return sum(1 for (_, end), (start, _) in zip(spans, spans[1:]) if start < end)


def test_timed_sections_of_different_processes_never_overlap(lock_dir):
    spans = _intervals({})
    assert len(spans) == 32
    assert _overlaps(spans) == 0
    log = gpu_queue.read_log(KEY)
    assert len(log) == 32 and max(e["wait_s"] for e in log) > 0.01  # they did have to wait for each other
    assert not list(lock_dir.glob("*.ticket"))


def test_without_the_queue_the_same_sections_overlap(lock_dir):
    """The control: the check above can fail (ZC_QUEUE=0 turns the queue off)."""
    assert _overlaps(_intervals({"ZC_QUEUE": "0"})) > 0


def test_the_slot_is_released_on_an_exception(lock_dir):
    with pytest.raises(ValueError):
        with gpu_queue.measurement_slot(KEY):
            raise ValueError("a failed measurement")
    child = _child(f"with measurement_slot({KEY!r}): print('got it', flush=True)")
    out, _ = child.communicate(timeout=20)
    assert out.strip() == "got it"
    assert not list(lock_dir.glob("*.ticket"))


def test_the_slot_is_released_when_its_holder_is_killed(lock_dir):
    holder = _child(f"""
        with measurement_slot({KEY!r}):
            print('holding', flush=True)
            time.sleep(120)
    """)
    _wait_for_line(holder, "holding")
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    t0 = time.monotonic()
    with gpu_queue.measurement_slot(KEY, stream=io.StringIO()):
        waited = time.monotonic() - t0
    assert waited < 5
    assert not any(str(holder.pid) in p.name for p in lock_dir.glob("*.ticket"))


def test_ctrl_c_releases_a_holder_and_a_waiter(lock_dir):
    holder = _child(f"""
        try:
            with measurement_slot({KEY!r}):
                print('holding', flush=True)
                time.sleep(120)
        except KeyboardInterrupt:
            print('interrupted', flush=True)
    """)
    _wait_for_line(holder, "holding")
    waiter = _child(f"""
        print('queued', flush=True)
        try:
            with measurement_slot({KEY!r}):
                print('measuring', flush=True)
        except KeyboardInterrupt:
            print('interrupted', flush=True)
    """)
    _wait_for_line(waiter, "queued")
    deadline = time.monotonic() + 10
    while len(list(lock_dir.glob("*.ticket"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(list(lock_dir.glob("*.ticket"))) == 2, "the waiter should be queued behind the holder"
    waiter.send_signal(signal.SIGINT)  # Ctrl-C while waiting in the queue
    assert waiter.communicate(timeout=10)[0].strip() == "interrupted"
    holder.send_signal(signal.SIGINT)  # Ctrl-C while measuring
    assert holder.communicate(timeout=10)[0].strip() == "interrupted"
    assert not list(lock_dir.glob("*.ticket"))
    with gpu_queue.measurement_slot(KEY):
        pass


def _holding_latency():
    """Another process in the GPU slot, measuring 'latency' for 1.5 s: the wait line's subject."""
    holder = _child(f"""
        with measurement_slot({KEY!r}, what='latency'):
            print('holding', flush=True)
            time.sleep(1.5)
    """)
    _wait_for_line(holder, "holding")
    return holder


def test_a_waiting_learner_sees_one_updated_line(lock_dir):
    holder = _holding_latency()
    stream = io.StringIO()
    with gpu_queue.measurement_slot(KEY, stream=stream):
        pass
    holder.communicate(timeout=20)
    text = stream.getvalue()
    assert "1 measurement(s) ahead of yours" in text and "waited" in text
    assert f"(pid {holder.pid} is measuring latency)" in text, "what the learner waits for"
    assert "learners take turns so each times the GPU's link alone" in text, "and why"
    assert "\n" not in text and text.startswith("\r"), "one line, rewritten in place"
    mine = [e for e in gpu_queue.read_log(KEY) if e["pid"] == os.getpid()]
    assert mine[-1]["ahead"] == 1 and mine[-1]["wait_s"] > 0.5


def test_a_chinese_learner_waits_with_a_chinese_line(lock_dir):
    """Issue 35, found live on the H200: the wait line spoke English in every Chinese lesson that measured while
    another learner held the GPU."""
    from helpers import i18n
    from helpers.i18n import english

    holder = _holding_latency()
    stream = io.StringIO()
    i18n.use_language("zh")
    try:
        with gpu_queue.measurement_slot(KEY, stream=stream):
            pass
    finally:
        i18n.use_language("en")
    holder.communicate(timeout=20)
    text = stream.getvalue()
    assert "GPU 队列：你前面有 1 项测量" in text and f"（pid {holder.pid} 正在测量 latency）" in text
    assert "学员轮流使用 GPU" in text and "现在开始测量" in text
    assert english.english_runs(text) == [], text


def test_what_a_ticket_says_is_shown_printable_and_short(lock_dir):
    lock_dir.mkdir(mode=0o700)
    ticket = lock_dir / f"{KEY}.{1:020d}.{os.getpid()}.ticket"
    ticket.write_bytes(b"\x1b[2J\x1b[31mstride sweep\r\n" + b"x" * 100)
    shown = gpu_queue._ticket_what(ticket)
    assert shown.startswith("[2J[31mstride sweep") and len(shown) <= gpu_queue.WHAT_CHARS
    assert all(c.isprintable() for c in shown)
    assert gpu_queue._ticket_what(lock_dir / "missing.ticket") == ""


def test_a_short_wait_prints_nothing_and_slots_nest(lock_dir):
    stream = io.StringIO()
    with gpu_queue.measurement_slot(KEY, stream=stream):
        with gpu_queue.measurement_slot(KEY, stream=stream):  # re-entrant: the same slot
            pass
    assert stream.getvalue() == ""
    assert len(gpu_queue.read_log(KEY)) == 1


def test_files_are_shared_whatever_the_umask(lock_dir):
    child = _child(f"""
        os.umask(0o077)
        with measurement_slot({KEY!r}):
            folder = os.environ["ZC_LOCK_DIR"]
            print(json.dumps({{name: os.stat(os.path.join(folder, name)).st_mode & 0o7777
                               for name in os.listdir(folder)}}))
    """)
    out, err = child.communicate(timeout=20)
    assert child.returncode == 0, err
    modes = json.loads(out)
    assert stat.S_IMODE(lock_dir.stat().st_mode) == 0o1777
    assert any(name.endswith(".ticket") for name in modes)
    assert all(mode == 0o666 for mode in modes.values()), modes
    assert stat.S_IMODE((lock_dir / f"{KEY}.log").stat().st_mode) == 0o666


def closed_to_others(path: Path) -> Path | None:
    """The first folder on the way to ``path`` (or ``path`` itself) that a user who is neither its owner nor in
    its group cannot pass (folders need o+x; ``path`` needs o+r, and o+x when a folder); None when all are open."""
    path = path.resolve()
    for step in [*reversed(path.parents), path]:
        mode = step.stat().st_mode
        need = (0o005 if step.is_dir() else 0o004) if step == path else 0o001
        if mode & need != need:
            return step
    return None


def test_a_folder_closed_to_others_is_found_on_the_way(tmp_path):
    inner = tmp_path / "home" / "clone" / "helpers"
    inner.mkdir(parents=True)
    for folder in (tmp_path, tmp_path / "home", tmp_path / "home" / "clone", inner):
        folder.chmod(0o755)
    open_all_the_way = closed_to_others(tmp_path) is None  # pytest's own folders may be private
    assert closed_to_others(inner) == (None if open_all_the_way else closed_to_others(tmp_path))
    (tmp_path / "home").chmod(0o700)  # a clone under a private home, run as root
    assert closed_to_others(inner) in (tmp_path / "home", closed_to_others(tmp_path))
    (tmp_path / "home").chmod(0o755)
    (inner / "gpu_queue.py").write_text("")
    (inner / "gpu_queue.py").chmod(0o600)
    if open_all_the_way:
        assert closed_to_others(inner / "gpu_queue.py") == inner / "gpu_queue.py"


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv to act as nobody")
def test_another_user_queues_behind_this_one(monkeypatch):
    checkout = Path(__file__).resolve().parents[1]
    closed = next(filter(None, (closed_to_others(p) for p in (checkout / "helpers" / "sharing" / "gpu_queue.py",
                                                            Path(sys.executable), Path(sys.prefix)))), None)
    if closed is not None:
        pytest.skip(f"nobody cannot reach this checkout's helpers or Python: {closed} is mode "
                    f"{closed.stat().st_mode & 0o777:o} (e.g. a clone under a private home); clone it under a "
                    "folder others can enter to run this test")
    folder = Path(tempfile.mkdtemp(prefix="zc-queue-users-"))  # pytest's tmp_path is private to root
    os.chmod(folder, 0o755)
    locks = folder / "locks"
    monkeypatch.setenv("ZC_LOCK_DIR", str(locks))
    try:
        with gpu_queue.measurement_slot(KEY):  # root creates the folder and the files
            pass
        holder = _child(f"""
            with measurement_slot({KEY!r}):
                print('holding', flush=True)
                time.sleep(1.0)
        """)
        _wait_for_line(holder, "holding")
        nobody = subprocess.run(
            ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable, "-c",
             "import io, time; from helpers.sharing.gpu_queue import measurement_slot\n"
             f"t0 = time.monotonic()\nwith measurement_slot({KEY!r}, stream=io.StringIO()): print(time.monotonic() - t0)"],
            capture_output=True, text=True, timeout=30, cwd="/",  # this checkout's helpers, not an installed copy
            env={**os.environ, "HOME": "/tmp", "PYTHONPATH": os.pathsep.join(
                p for p in (str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH")) if p)})
        holder.communicate(timeout=20)
        assert nobody.returncode == 0, nobody.stderr
        assert float(nobody.stdout) > 0.5, "nobody waited for root's slot"
        assert {e["pid"] for e in gpu_queue.read_log(KEY)} >= {holder.pid}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_an_unwritable_lock_folder_is_a_clear_error(tmp_path, monkeypatch):
    target = tmp_path / "not-a-folder"
    target.write_text("")
    monkeypatch.setenv("ZC_LOCK_DIR", str(target / "locks"))
    with pytest.raises(gpu_queue.QueueError, match="ZC_LOCK_DIR"):
        with gpu_queue.measurement_slot(KEY):
            pass


def test_an_uncontended_slot_costs_little(lock_dir):
    """A learner alone pays one take-log-release per timed section: well under a millisecond on a quiet
    machine; a loose bound here, as the test machine may be busy (the classroom record has the real figure)."""
    assert gpu_queue.uncontended_overhead(KEY, slots=100) < 0.005


# --------------------------------------------------------------------------- issue 20: a shared machine, one hostile learner
def test_a_lock_folder_that_is_a_symbolic_link_is_refused_and_its_target_untouched(tmp_path, monkeypatch):
    victim = tmp_path / "victim-home"
    victim.mkdir(mode=0o700)
    os.chmod(victim, 0o700)
    link = tmp_path / "locks"
    link.symlink_to(victim)
    monkeypatch.setenv("ZC_LOCK_DIR", str(link))
    with pytest.raises(gpu_queue.QueueError, match="symbolic link"):
        with gpu_queue.measurement_slot(KEY):
            pass
    assert stat.S_IMODE(victim.stat().st_mode) == 0o700, "the link's target was chmod-ed"
    assert not list(victim.iterdir())


def test_an_existing_folder_of_ones_own_is_not_chmod_ed(tmp_path, monkeypatch):
    folder = tmp_path / "locks"
    folder.mkdir()
    os.chmod(folder, 0o755)
    monkeypatch.setenv("ZC_LOCK_DIR", str(folder))
    with gpu_queue.measurement_slot(KEY):
        pass
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_another_users_world_writable_folder_without_sticky_bit_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "locks"
    folder.mkdir()
    os.chmod(folder, 0o777)
    monkeypatch.setenv("ZC_LOCK_DIR", str(folder))
    if os.geteuid() == 0:
        os.chown(folder, 65534, 65534)  # as another user (nobody) would have made it
    else:
        real = os.stat
        monkeypatch.setattr(gpu_queue.os, "getuid", lambda: real(folder).st_uid + 1)
    with pytest.raises(gpu_queue.QueueError, match="sticky") as info:
        with gpu_queue.measurement_slot(KEY):
            pass
    assert "install -d -m 1777" in str(info.value)
    os.chmod(folder, 0o1777)  # the same folder with the sticky bit is accepted
    with gpu_queue.measurement_slot(KEY):
        pass


@pytest.mark.parametrize("content", [b"garbage\n", b"-5\n", b"\x00\xff", b"9" * 20 + b"\n", b"1" * 40])
def test_any_meta_content_keeps_mutual_exclusion(lock_dir, content):
    with gpu_queue.measurement_slot(KEY):  # creates the folder and the files
        pass
    (lock_dir / f"{KEY}.meta").write_bytes(content)
    spans = _intervals({})
    assert len(spans) == 32 and _overlaps(spans) == 0
    assert not list(lock_dir.glob("*.ticket"))


def test_a_meta_lock_held_forever_is_a_clear_error(lock_dir, monkeypatch):
    with gpu_queue.measurement_slot(KEY):
        pass
    holder = _meta_lock_holder()
    try:
        _wait_for_line(holder, "locked")
        monkeypatch.setenv("ZC_QUEUE_META_TIMEOUT", "0.5")
        gpu_queue._meta_fds.clear()
        t0 = time.monotonic()
        with pytest.raises(gpu_queue.QueueError, match="held the lock") as info:
            with gpu_queue.measurement_slot(KEY):
                pass
        assert time.monotonic() - t0 < 5 and "fuser" in str(info.value)
    finally:
        holder.kill()
        holder.wait()
    with gpu_queue.measurement_slot(KEY):
        pass


def test_a_bad_meta_timeout_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("ZC_QUEUE_META_TIMEOUT", "inf")
    with pytest.raises(gpu_queue.QueueError, match="ZC_QUEUE_META_TIMEOUT"):
        gpu_queue.meta_timeout()


def test_a_meta_lock_held_names_its_holder_while_waiting_and_in_the_error(lock_dir, monkeypatch):
    """Another user holds the ``.meta`` flock: the waiting learner's line names the holder (pid and user,
    from /proc/locks) after a moment, and the error after ZC_QUEUE_META_TIMEOUT names it too."""
    with gpu_queue.measurement_slot(KEY):
        pass
    holder = _meta_lock_holder()
    stream = io.StringIO()
    try:
        _wait_for_line(holder, "locked")
        monkeypatch.setenv("ZC_QUEUE_META_TIMEOUT", "1.5")
        t0 = time.monotonic()
        with pytest.raises(gpu_queue.QueueError, match="held the lock") as info:
            with gpu_queue.measurement_slot(KEY, stream=stream):
                pass
        waited = time.monotonic() - t0
    finally:
        holder.kill()
        holder.wait()
    who = f"pid {holder.pid} of user {pwd.getpwuid(os.getuid()).pw_name}"
    assert f"held by {who}" in stream.getvalue() and "waited" in stream.getvalue()
    assert who in str(info.value) and "fuser" in str(info.value)
    assert 1.5 <= waited < 5
    with gpu_queue.measurement_slot(KEY, stream=io.StringIO()):
        pass


def test_the_holder_is_unknown_when_proc_cannot_be_read(tmp_path, monkeypatch):
    fd = os.open(tmp_path / "file", os.O_CREAT | os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        monkeypatch.setattr(gpu_queue, "PROC_LOCKS", str(tmp_path / "no-such-file"))
        assert gpu_queue._describe_holders(fd) == "an unknown process"
        st = os.fstat(fd)
        fake = tmp_path / "locks"
        fake.write_text("garbage\n1: FLOCK ADVISORY WRITE x y 0 EOF\n"
                        f"1: -> FLOCK  ADVISORY  WRITE 77 {os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino} 0 EOF\n"
                        f"2: OFDLCK ADVISORY  WRITE -1 {os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino} 0 EOF\n"
                        f"3: FLOCK  ADVISORY  WRITE 4242 {os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino} 0 EOF\n")
        monkeypatch.setattr(gpu_queue, "PROC_LOCKS", str(fake))
        assert gpu_queue._lock_holders(fd) == [4242], "waiters (->), unknown pids and garbage are skipped"
    finally:
        os.close(fd)
    assert gpu_queue._user_of_pid(2**22 + 1) == "unknown user"  # above any pid_max: no /proc entry
    assert gpu_queue._user_name(2**31 - 7) == f"uid {2**31 - 7}"


def test_a_slot_held_too_long_is_passed_and_its_holder_told(lock_dir, monkeypatch):
    """A holder keeps the slot past ZC_QUEUE_HOLD_TIMEOUT: the next learner goes on after about the timeout
    (its line says whom it passes), a later learner does not wait for the stuck one again, the stuck
    holder's block ends with a warning (its result still returned), and a normal slot goes at once after."""
    monkeypatch.setenv("ZC_QUEUE_HOLD_TIMEOUT", "1.0")
    stuck = _child(f"""
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with measurement_slot({KEY!r}):
                print('holding', flush=True)
                time.sleep(4.0)
                result = 42
        print(json.dumps({{"result": result, "warnings": [[w.category.__name__, str(w.message)] for w in caught]}}))
    """)
    _wait_for_line(stuck, "holding")
    stream = io.StringIO()
    t0 = time.monotonic()
    with gpu_queue.measurement_slot(KEY, stream=stream):
        waited = time.monotonic() - t0
    assert 0.95 < waited < 2.5, waited
    assert stuck.poll() is None, "the stuck holder was still in its slot"
    text = stream.getvalue()
    assert f"passed pid {stuck.pid} of user {pwd.getpwuid(os.getuid()).pw_name}, stuck in the GPU slot" in text
    assert "(ZC_QUEUE_HOLD_TIMEOUT is 1 s); measuring now." in text

    t0 = time.monotonic()
    with gpu_queue.measurement_slot(KEY, stream=io.StringIO()):
        later = time.monotonic() - t0
    assert later < 0.5 and stuck.poll() is None, "a later learner timed the stuck holder again"

    out, err = stuck.communicate(timeout=20)
    assert stuck.returncode == 0, err
    report = json.loads(out)
    assert report["result"] == 42
    [[category, message]] = report["warnings"]
    assert category == "SlotHeldTooLong"
    assert "held the GPU slot for 4." in message and "more than ZC_QUEUE_HOLD_TIMEOUT (1 s)" in message
    assert "other learners went on" in message

    t0 = time.monotonic()
    with gpu_queue.measurement_slot(KEY, stream=io.StringIO()):
        assert time.monotonic() - t0 < 0.5
    assert not list(lock_dir.glob("*.ticket")) and not list(lock_dir.glob("*.passed"))
    assert [e.get("passed") for e in gpu_queue.read_log(KEY) if e["pid"] == stuck.pid] == [True]


def test_two_learners_behind_a_stuck_holder_pass_it_one_after_the_other(lock_dir, monkeypatch):
    """Both waiters' clocks on the stuck head run out at about the same moment: they still take turns."""
    monkeypatch.setenv("ZC_QUEUE_HOLD_TIMEOUT", "1.0")
    stuck = _child(f"""
        with measurement_slot({KEY!r}):
            print('holding', flush=True)
            time.sleep(4.0)
    """)
    _wait_for_line(stuck, "holding")
    code = f"""
        import io
        t0 = time.monotonic()
        with measurement_slot({KEY!r}, stream=io.StringIO()):
            start = time.monotonic()
            time.sleep(0.3)
            print(json.dumps([start, time.monotonic(), start - t0]))
    """
    waiters = [_child(code) for _ in range(2)]
    spans = []
    for waiter in waiters:
        out, err = waiter.communicate(timeout=20)
        assert waiter.returncode == 0, err
        spans.append(json.loads(out))
    assert stuck.poll() is None, "both went while the stuck holder still held its slot"
    stuck.communicate(timeout=20)
    (first_start, first_end, first_wait), (second_start, _, second_wait) = sorted(spans)
    assert second_start >= first_end, "the two waiters measured at the same time"
    assert 0.95 < first_wait < 2.5 and second_wait < first_wait + 1.5, spans


def test_a_short_hold_timeout_keeps_mutual_exclusion_among_well_behaved_learners(lock_dir):
    spans = _intervals({"ZC_QUEUE_HOLD_TIMEOUT": "0.5"})
    assert len(spans) == 32 and _overlaps(spans) == 0
    assert not any(e.get("passed") for e in gpu_queue.read_log(KEY))


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-3", "ten", "1e6"])
def test_a_bad_hold_timeout_is_a_clear_error(lock_dir, monkeypatch, value):
    monkeypatch.setenv("ZC_QUEUE_HOLD_TIMEOUT", value)
    with pytest.raises(gpu_queue.QueueError, match="ZC_QUEUE_HOLD_TIMEOUT"):
        with gpu_queue.measurement_slot(KEY):
            pass
    assert not list(lock_dir.glob("*.ticket")) if lock_dir.exists() else True


def test_a_fifo_posing_as_a_ticket_blocks_nobody(lock_dir):
    with gpu_queue.measurement_slot(KEY):
        pass
    os.mkfifo(lock_dir / f"{KEY}.{1:020d}.{os.getpid()}.ticket")  # ahead of every new ticket; opening it would block
    child = _child(f"t0 = time.monotonic()\nwith measurement_slot({KEY!r}): print(time.monotonic() - t0)")
    try:
        out, err = child.communicate(timeout=20)
    finally:
        child.kill()
        child.wait()
    assert child.returncode == 0, err
    assert float(out) < 1.0


def test_threads_of_one_process_take_distinct_tickets(lock_dir):
    """Threads share the process's ``.meta`` descriptor, whose flock does not exclude one another."""
    spans: list[tuple[float, float]] = []

    def work() -> None:
        for _ in range(25):
            with gpu_queue.measurement_slot(KEY):
                start = time.monotonic()
                time.sleep(0.002)
                spans.append((start, time.monotonic()))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert len(spans) == 150 and _overlaps(sorted(spans)) == 0
