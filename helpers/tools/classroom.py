"""A simulated classroom: every lesson run live by N learners at once on one GPU (``python -m helpers classroom``).

Each simulated learner is a process that executes the chosen lessons one after another, each in its own
kernel, as nbclient (and nbval) would; all learners start together, like a class pressing Run All. One
learner alone runs first (the solo run) to give the figures each learner is compared with. The result
goes to ``data/classroom-<gpu>-<date>.json``: failed cells, each learner's headline figures, the worst
zero-copy read bandwidth against the solo run's, wall times and the longest wait in the measurement queue.

Every live result a learner's kernels produce is appended to a per-learner file (``ZC_RESULT_LOG``), and
every measurement slot is logged by the queue with the learner's tag (``ZC_QUEUE_TAG``): the figures
come from the runs themselves, not from the notebooks' printed text. Results shown from the instructor's record
or from data/'s reference are logged too, and counted (``figures_from_other_machine``).

Nobody stalls the run: a cell past ``--cell-timeout`` ends its lesson and is recorded with the learner, lesson,
cell and the kernel's stacks (:mod:`helpers.tools.cell_watchdog`); a learner silent longer than
:func:`stall_limit` has its kernel ended (then itself), with the stacks, and the others go on.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import lessons as course_lessons, paths, records
from ..analysis.summary import headline
from ..errors import CourseError

__all__ = ["ClassroomError", "resolve_lessons", "estimate_wall", "died_at_start", "run_learner", "run_classroom",
           "zero_copy_reads", "merge_parts", "check_stalls", "stack_after", "stall_limit", "shown_from"]

LESSONS_DIR = paths.LESSONS
BANDWIDTH_FIGURES = ("zero_copy_read_GBps", "zero_copy_write_GBps", "memcpy_htod_pinned_GBps",
                     "memcpy_dtoh_pinned_GBps", "device_read_GBps")
# Zero-copy reads of large mapped buffers in experiments other than the headline's (kernel_bandwidth,
# inflight): under the class setting those two replay, and these (each under 2 s of GPU) still run live.
ZERO_COPY_READS: dict[str, tuple[str, dict[str, Any]]] = {
    "vector_width": ("useful_GBps", {"memory": "zero_copy"}),
    "registered": ("GBps", {"allocation": "cudaHostAlloc mapped"}),
    "read_only_registration": ("GBps", {"memory": "anonymous memory"}),
}


class ClassroomError(CourseError):
    """The classroom cannot run as asked (python -m helpers classroom)."""


def resolve_lessons(chosen: list[str] | None, folder: Path = LESSONS_DIR) -> list[Path]:
    """The lesson notebooks named by number (``05``, ``5``) or file name; all of them when ``chosen`` is empty."""
    try:
        return course_lessons.chosen_notebooks(chosen, folder)
    except LookupError as exc:
        raise ClassroomError(f"No single lesson matches {exc.args[0]!r}; use a number (05) or one of: "
                             + ", ".join(p.name for p in course_lessons.notebooks(folder))) from None


def estimate_wall(solo_wall: float, solo_timed: float, learners: int) -> float:
    """Lower-bound estimate of the classroom's wall time: the learners' timed sections take turns on the GPU,
    the rest of each learner's run (compiling, allocating, plotting) overlaps with the others'."""
    return max(solo_wall, solo_wall - solo_timed + learners * solo_timed)


# --------------------------------------------------------------------------- one learner (a worker process)
def _failed_cells(nb: Any, lesson: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Cells whose outputs hold an error, and the figures a lesson's checks called unexpected."""
    failed, unexpected = [], []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                failed.append({"lesson": lesson, "cell": index, "error": output.get("ename", "?"),
                               "message": str(output.get("evalue", ""))[:300]})
            text = output.get("text", "") if output.get("output_type") == "stream" else ""
            for line in str(text).splitlines():
                if "Unexpected figure:" in line:
                    unexpected.append({"lesson": lesson, "cell": index, "text": line.strip()[:300]})
    return failed, unexpected


def _last_started(nb: Any) -> int | None:
    """The index of the last cell the kernel began to run (the one that timed out or killed it)."""
    started = [i for i, cell in enumerate(nb.cells) if "iopub.execute_input" in cell.get("metadata", {}).get("execution", {})]
    return started[-1] if started else None


def died_at_start(exc: BaseException, nb: Any) -> bool:
    """Whether a lesson's kernel died (or never answered) before its first cell began: a start-up failure
    (for example a port another kernel took a moment earlier) that a fresh kernel can retry, not the lesson's fault."""
    text = f"{type(exc).__name__}: {exc}"
    starting = ("kernel_info" in text or "Kernel didn't respond" in text or "Kernel died" in text
                or type(exc).__name__ == "DeadKernelError")
    return starting and _last_started(nb) is None


STALL_GRACE_S = 60.0   # a learner silent this long past a cell's timeout (or a kernel's start) is stalled
STARTUP_TIMEOUT_S = 120
# each lesson's kernel arms a faulthandler watchdog around every cell (helpers/tools/cell_watchdog.py)
WATCHDOG = "--IPKernelApp.exec_lines=import helpers.tools.cell_watchdog as _zc_w; _zc_w.install(); del _zc_w"


def stack_after(cell_timeout: float) -> float:
    """Seconds into a cell at which its kernel writes its stacks: a little before the classroom's cell timeout."""
    return max(0.5, cell_timeout - min(5.0, 0.1 * cell_timeout))


def stall_limit(cell_timeout: float) -> float:
    """Seconds without a sign of life (a cell or a kernel starting) after which a learner counts as stalled."""
    return max(cell_timeout, STARTUP_TIMEOUT_S) + STALL_GRACE_S


def _tail_from(path: Path, offset: int, chars: int = 6000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")[-chars:]
    except OSError:
        return ""


def _beat(out: Path, **state: Any) -> None:
    """Say that this learner is alive and what it runs (``<out>.heartbeat``, read by the classroom's watchdog)."""
    tmp = out.with_suffix(".heartbeat.tmp")
    tmp.write_text(json.dumps({"t": time.time(), **state}))
    os.replace(tmp, out.with_suffix(".heartbeat"))


def _kernel_pid(client: Any) -> int | None:
    pid = getattr(getattr(getattr(client, "km", None), "provisioner", None), "pid", None)
    return pid if isinstance(pid, int) else None


def _source_line(nb: Any, index: int | None) -> str:
    if index is None or not 0 <= index < len(nb.cells):
        return ""
    return next((line for line in str(nb.cells[index].get("source", "")).splitlines() if line.strip()), "")[:120]


def _run_lesson(path: Path, out: Path, cell_timeout: int, tag: str, report: dict[str, Any],
                start_attempts: int) -> list[dict[str, Any]]:
    """One lesson in a fresh kernel (started again if it dies before its first cell); its failed cells, a
    timed-out cell with the kernel's stacks at the timeout (``report["timed_out_cells"]``)."""
    import nbformat
    from nbclient import NotebookClient

    from .cell_watchdog import STACK_AFTER, STACK_FILE
    from .kernel_sockets import SocketFolderKernelManager

    stack = out.with_name(f"{out.stem}.{path.stem}.stack")
    os.environ[STACK_FILE], os.environ[STACK_AFTER] = str(stack), f"{stack_after(cell_timeout):g}"
    for attempt in range(1, start_attempts + 1):
        print(f"=== {path.stem}: kernel start {attempt}", file=sys.stderr, flush=True)
        _beat(out, lesson=path.stem, cell=None, attempt=attempt)
        nb = nbformat.read(path, as_version=4)
        client = NotebookClient(nb, timeout=cell_timeout, startup_timeout=STARTUP_TIMEOUT_S, kernel_name="python3",
                                allow_errors=True, resources={"metadata": {"path": str(path.parent)}},
                                extra_arguments=[WATCHDOG], kernel_manager_class=SocketFolderKernelManager)
        where = {"cell": None, "offset": 0}

        def started(cell: Any = None, cell_index: int | None = None, **_: Any) -> None:
            where.update(cell=cell_index, offset=stack.stat().st_size if stack.exists() else 0)
            _beat(out, lesson=path.stem, cell=cell_index, kernel_pid=_kernel_pid(client), stack=str(stack),
                  stack_offset=where["offset"])

        client.on_cell_start = started
        try:
            client.execute()
            failed, unexpected = _failed_cells(nb, path.stem)
        except Exception as exc:  # a cell timed out or the kernel died: the lesson failed there, the run goes on
            if attempt < start_attempts and died_at_start(exc, nb):
                report["kernel_restarts"].append({"lesson": path.stem, "attempt": attempt,
                                                  "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
                time.sleep(1.0 * attempt)
                continue
            failed, unexpected = _failed_cells(nb, path.stem)
            cell = where["cell"] if where["cell"] is not None else _last_started(nb)
            failed = [f for f in failed if f["cell"] != cell]  # e.g. the KeyboardInterrupt of the kernel's shutdown
            failed.append({"lesson": path.stem, "cell": cell, "error": type(exc).__name__,
                           "message": str(exc)[:300]})
            if isinstance(exc, TimeoutError):
                report["timed_out_cells"].append({
                    "learner": tag, "lesson": path.stem, "cell": cell, "source": _source_line(nb, cell),
                    "timeout_seconds": cell_timeout, "stack": _tail_from(stack, int(where["offset"]))})
        report["unexpected_figures"] += unexpected
        return failed
    return []


def run_learner(lessons: list[Path], out: Path, cell_timeout: int, start_attempts: int = 3) -> dict[str, Any]:
    """Execute ``lessons`` one after another, each in a fresh kernel, and save what happened to ``out``.

    A kernel that dies before its first cell is started again (at most ``start_attempts`` times in all); each
    such restart is recorded in ``kernel_restarts`` with its error. A cell past ``cell_timeout`` ends its lesson
    (recorded in ``timed_out_cells`` with the kernel's stacks) and the next lesson starts. Kernels write their
    stderr to this process's (the learner's log), where a line marks the start of each lesson and attempt;
    ``SIGUSR1`` writes this process's own stacks there. The report is saved after every lesson."""
    import faulthandler
    import signal

    faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
    tag = os.environ.get("ZC_QUEUE_TAG") or out.stem
    report: dict[str, Any] = {"lessons": {}, "failed_cells": [], "unexpected_figures": [], "kernel_restarts": [],
                              "timed_out_cells": []}
    t0 = time.monotonic()
    for path in lessons:
        started = time.monotonic()
        failed = _run_lesson(path, out, cell_timeout, tag, report, start_attempts)
        report["lessons"][path.stem] = round(time.monotonic() - started, 2)
        report["failed_cells"] += failed
        with open(out.with_suffix(".progress"), "a") as f:
            f.write(f"{path.stem} {len(failed)}\n")
        out.write_text(json.dumps(report))
    _beat(out, lesson=None, cell=None, done=True)
    report["wall_seconds"] = round(time.monotonic() - t0, 2)
    out.write_text(json.dumps(report))
    return report


# --------------------------------------------------------------------------- the classroom
def _spawn(tag: str, lessons: list[Path], folder: Path, cell_timeout: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, ZC_QUEUE_TAG=tag, ZC_RESULT_LOG=str(folder / f"{tag}.results.jsonl"),
               ZC_STRICT_FIGURES="0", PYTHONUNBUFFERED="1")  # the class setting (ZC_CLASS_GPU_SECONDS) is inherited
    command = [sys.executable, "-m", "helpers.tools.classroom", "--out", str(folder / f"{tag}.json"),
               "--cell-timeout", str(cell_timeout), *map(str, lessons)]
    log = open(folder / f"{tag}.log", "wb")
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=str(LESSONS_DIR),
                            start_new_session=True)  # its own process group: a stalled learner can be ended


def _parent_pid(pid: int) -> int | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(r"^PPid:\s+(\d+)", text, re.M)
    return int(found[1]) if found else None


def _signal(pid: int | None, number: int) -> None:
    if pid:
        try:
            os.kill(pid, number)
        except OSError:
            pass


def _end_stall(tag: str, process: subprocess.Popen[bytes], beat: dict[str, Any], silent: float,
               folder: Path, whole: bool) -> dict[str, Any]:
    """A learner silent too long: write the stacks of its kernel and its own process (SIGUSR1), then end the
    kernel (the learner goes on with its next lesson) or, with ``whole`` or no kernel running, the learner."""
    import signal

    kernel = beat.get("kernel_pid")
    kernel = kernel if isinstance(kernel, int) and _parent_pid(kernel) == process.pid else None
    _signal(kernel, signal.SIGUSR1)
    _signal(process.pid, signal.SIGUSR1)
    time.sleep(1.0)
    stack = _tail_from(Path(beat["stack"]), int(beat.get("stack_offset", 0))) if beat.get("stack") else ""
    ended = "learner" if whole or kernel is None else "kernel"
    if ended == "kernel":
        _signal(kernel, signal.SIGKILL)
    else:
        _signal(kernel, signal.SIGKILL)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
    return {"learner": tag, "lesson": beat.get("lesson"), "cell": beat.get("cell"),
            "silent_seconds": round(silent, 1), "ended": ended, "stack": stack,
            "learner_stack": _log_tail(folder / f"{tag}.log", 3000)}


def check_stalls(folder: Path, processes: dict[str, subprocess.Popen[bytes]], limit: float, since: float,
                 stalls: list[dict[str, Any]], handled: dict[str, float]) -> None:
    """End what keeps a learner silent (no cell or kernel start) for more than ``limit`` seconds, recording each
    stall in ``stalls`` with the learner, lesson, cell and stacks; a learner still silent ``STALL_GRACE_S`` after
    its kernel was ended is ended itself. ``handled`` maps a learner to the heartbeat already acted on."""
    now = time.time()
    for tag, process in processes.items():
        if process.poll() is not None:
            continue
        try:
            beat = json.loads((folder / f"{tag}.heartbeat").read_text())
        except (OSError, ValueError):
            beat = {"t": since}
        last = float(beat.get("t", since))
        silent = now - last
        if silent <= limit:
            continue
        if tag in handled and handled[tag] == last:
            if silent > limit + STALL_GRACE_S:
                stalls.append(_end_stall(tag, process, beat, silent, folder, whole=True))
                handled[tag] = -1.0
            continue
        if handled.get(tag) != -1.0:
            stalls.append(_end_stall(tag, process, beat, silent, folder, whole=False))
            handled[tag] = last


def _figures(results_file: Path, gpu: str) -> dict[str, Any]:
    """A learner's headline figures, from every live result its lessons produced (rows of repeated calls merged)."""
    experiments: dict[str, dict[str, Any]] = {}
    if results_file.exists():
        for line in results_file.read_text().splitlines():
            entry = json.loads(line)
            if entry.get("source", "live") != "live":
                continue
            experiments.setdefault(entry["name"], {"params": entry["params"], "rows": []})["rows"] += entry["rows"]
    figures = headline({"provenance": {"gpu": gpu, "date": ""}, "experiments": experiments})
    figures = {key: value for key, value in figures.items() if key not in ("gpu", "date")}
    if figures.get("zero_copy_read_GBps") is None:  # the headline's experiments replayed (the class setting)
        reads = zero_copy_reads(experiments)
        if reads:
            figures["zero_copy_read_GBps"] = max(reads.values())
            figures["zero_copy_read_from"] = max(reads, key=reads.__getitem__)
    return figures


def shown_from(results_file: Path) -> dict[str, list[str]]:
    """The experiments a learner was shown, by where their figures came from: ``live``, ``class-record`` (the
    instructor's record of this GPU today) or ``reference`` (data/'s record: another machine, another day)."""
    found: dict[str, set[str]] = {}
    if results_file.exists():
        for line in results_file.read_text().splitlines():
            entry = json.loads(line)
            found.setdefault(entry.get("source", "live"), set()).add(entry["name"])
    return {source: sorted(names) for source, names in sorted(found.items())}


def zero_copy_reads(experiments: dict[str, dict[str, Any]]) -> dict[str, float]:
    """The best zero-copy read bandwidth of each experiment of :data:`ZERO_COPY_READS` among ``experiments``."""
    found = {}
    for name, (key, where) in ZERO_COPY_READS.items():
        values = [row[key] for row in experiments.get(name, {}).get("rows", [])
                  if isinstance(row.get(key), (int, float)) and all(row.get(k) == v for k, v in where.items())]
        if values:
            found[name] = max(values)
    return found


def _progress(folder: Path, tags: list[str]) -> int:
    done = 0
    for tag in tags:
        progress = folder / f"{tag}.progress"
        if progress.exists():
            done += len(progress.read_text().splitlines())
    return done


def _run_group(tags: list[str], lessons: list[Path], folder: Path, cell_timeout: int, key: str, since: float,
               say: Any) -> tuple[float, dict[str, dict[str, Any]], int]:
    """Run one learner per tag at once; print a progress line every 10 s; return wall seconds, reports and
    the most page-locked memory the machine-wide budget saw held at once (sampled every half second)."""
    from ..sharing import pinned_budget
    from ..sharing.gpu_queue import read_log

    t0 = time.monotonic()
    started = time.time()
    processes = {tag: _spawn(tag, lessons, folder, cell_timeout) for tag in tags}
    last = 0.0
    peak_pinned = 0
    stalls: list[dict[str, Any]] = []
    handled: dict[str, float] = {}
    while any(p.poll() is None for p in processes.values()):
        time.sleep(0.5)
        held = pinned_budget.usage()
        peak_pinned = max(peak_pinned, sum(v for k, v in held.items() if k != "budget"))
        check_stalls(folder, processes, stall_limit(cell_timeout), started, stalls, handled)
        if time.monotonic() - last >= 10:
            last = time.monotonic()
            waits = [e["wait_s"] for e in read_log(key, since=since) if e.get("tag") in processes]
            say(f"  {time.monotonic() - t0:5.0f} s: {_progress(folder, tags)}/{len(tags) * len(lessons)} lessons done, "
                f"{len(waits)} measurements, longest wait {max(waits, default=0):.1f} s, {len(stalls)} stall(s)")
    wall = time.monotonic() - t0
    reports = {}
    for tag, process in processes.items():
        out = folder / f"{tag}.json"
        mine = [stall for stall in stalls if stall["learner"] == tag]
        if out.exists():
            reports[tag] = json.loads(out.read_text())
            if process.returncode:  # ended after some lessons: the report holds those
                reports[tag]["failed_cells"].append({"lesson": None, "cell": None, "error": f"exit {process.returncode}",
                                                     "message": _log_tail(folder / f"{tag}.log")[-300:]})
            if reports[tag]["failed_cells"] or reports[tag].get("kernel_restarts"):
                reports[tag]["log_tail"] = _log_tail(folder / f"{tag}.log")
        else:  # the learner's process itself died: say so, with the end of its log
            tail = _log_tail(folder / f"{tag}.log")
            reports[tag] = {"lessons": {}, "unexpected_figures": [], "wall_seconds": None, "kernel_restarts": [],
                            "failed_cells": [{"lesson": None, "cell": None, "error": f"exit {process.returncode}",
                                              "message": tail[-300:]}], "log_tail": tail}
        reports[tag]["stalls"] = mine
    return wall, reports, peak_pinned


def _log_tail(log: Path, chars: int = 4000) -> str:
    """The end of a learner's log (its kernels' stderr included), kept in the record when something failed."""
    return log.read_text(errors="replace")[-chars:] if log.exists() else ""


def _by_name(per_learner: list[dict[str, Any]], source: str) -> dict[str, int]:
    """How many learners were shown each experiment from ``source``."""
    counts: dict[str, int] = {}
    for learner in per_learner:
        for name in learner["shown_from"].get(source, []):
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def _queue_stats(entries: list[dict[str, Any]]) -> dict[str, Any]:
    waits = [e["wait_s"] for e in entries]
    longest = max(entries, key=lambda e: e["hold_s"], default=None)
    return {"slots": len(entries), "timed_seconds": round(sum(e["hold_s"] for e in entries), 3),
            "longest_hold_seconds": round(longest["hold_s"], 3) if longest else 0.0,
            "longest_hold_what": longest.get("what", "") if longest else "",
            "longest_wait_seconds": round(max(waits, default=0.0), 3),
            "mean_wait_seconds": round(sum(waits) / len(waits), 4) if waits else None,
            "queue_overhead_seconds": round(sum(e["wait_s"] + e.get("release_s", 0) for e in entries
                                                if not e.get("ahead")), 4)}


def _save(result: dict[str, Any], output: str | None) -> Path:
    gpu = re.sub(r"[^a-z0-9]+", "-", result["gpu"].lower()).strip("-")
    directory = Path(output).parent if output else records.data_dir()
    first = Path(output) if output else directory / f"classroom-{gpu}-{result['date'][:10]}.json"
    fd, name = tempfile.mkstemp(dir=directory, prefix=".classroom-", suffix=".json")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w") as handle:
            os.fchmod(handle.fileno(), 0o644)
            handle.write(json.dumps(result, indent=1) + "\n")
        for n in range(1, 1000):
            candidate = first if n == 1 else first.with_name(f"{first.stem}-{n}.json")
            if records._publish(tmp, candidate):
                return candidate
            if output:
                raise ClassroomError(f"{candidate} exists; choose another --output.")
        raise ClassroomError(f"Too many classroom files named like {first.name} in {directory}.")
    finally:
        tmp.unlink(missing_ok=True)


def _class_record_state(record_first: bool, say: Any) -> dict[str, Any]:
    """The instructor's record the class will be shown (made now with ``record_first``), or why there is none."""
    from ..experiments.result import class_record
    from .class_record import record_class

    if record_first:
        say("instructor's record: every experiment once on this GPU (python -m helpers class-record)...")
        t0 = time.monotonic()
        record_class()
        say(f"instructor's record: {time.monotonic() - t0:.1f} s")
    shared, problem = class_record()
    if shared is None:
        say(f"note: no instructor's record is shown to the class ({problem}); long experiments replay data/.")
        return {"problem": problem}
    held = shared.record["provenance"].get("experiment_wall_seconds", {})
    return {"path": str(shared.path), "date": shared.record["provenance"]["date"],
            "experiments": sorted(shared.record["experiments"]), "seconds": round(sum(held.values()), 2),
            "made_in_this_run": record_first}


def run_classroom(learners: int, lessons: list[str] | None = None, *, solo: bool = True, output: str | None = None,
                  cell_timeout: int = 300, max_seconds: float | None = None, class_gpu_seconds: float | None = None,
                  record_first: bool = False, say: Any = print) -> Path:
    """Run the classroom live and write its record; return the file's path.

    ``class_gpu_seconds`` sets the class setting (``ZC_CLASS_GPU_SECONDS``) for every learner: experiments that
    held the GPU longer than that are shown from the instructor's record of this GPU (made first with
    ``record_first``, as ``python -m helpers class-record`` does), else replay data/'s reference record. A solo run with a failed cell stops
    the command before the class starts (the class would only repeat the failure, at N times the GPU time)."""
    from ..experiments.result import CLASS_SETTING, class_limit
    from ..memory import gpu
    from ..mode import require_live
    from ..sharing.gpu_queue import enabled, gpu_key, read_log
    from ..sharing.pinned_budget import budget_bytes as pinned_budget_bytes

    require_live("python -m helpers classroom")
    if class_gpu_seconds is not None:
        os.environ[CLASS_SETTING] = f"{class_gpu_seconds:g}"
    class_setting = class_limit()
    if learners < 1:
        raise ClassroomError("--learners must be at least 1.")
    if not enabled():
        raise ClassroomError("ZC_QUEUE is off: the classroom measures the measurement queue; unset ZC_QUEUE.")
    chosen = resolve_lessons(lessons)
    key, gpu_name = gpu_key(), gpu.device_name()
    run_id = datetime.now().strftime("%Y%m%d-%H%M%S")
    folder = Path(tempfile.mkdtemp(prefix=f"zc-classroom-{run_id}-"))
    since = time.time()
    say(f"classroom {run_id}: {learners} learner(s) x {len(chosen)} lesson(s) on {gpu_name} ({key}); work in {folder}")
    result: dict[str, Any] = {
        "format": "zero-copy-course classroom", "version": 1, "gpu": gpu_name,
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "command": records.command_line(),
        "learners": learners, "lessons": [p.stem for p in chosen], "cpu_count": os.cpu_count(),
        "cell_timeout_seconds": cell_timeout, "class_gpu_seconds": class_setting,
        # the record whose own times decide, under the class setting, which experiments replay
        "reference_record": records.reference_record()[1].name,
    }
    if class_setting is not None:
        result["class_record"] = _class_record_state(record_first, say)
    solo_figures: dict[str, Any] = {}
    if solo:
        say("solo run: one learner alone (it also fills the kernel caches)...")
        tag = f"classroom-{run_id}-solo"
        wall, reports, solo_pinned = _run_group([tag], chosen, folder, cell_timeout, key, since, say)
        entries = [e for e in read_log(key, since=since) if e.get("tag") == tag]
        stats = _queue_stats(entries)
        solo_figures = _figures(folder / f"{tag}.results.jsonl", gpu_name)
        estimate = estimate_wall(wall, stats["timed_seconds"], learners)
        result.update(solo_wall_seconds=round(wall, 2), solo_failed_cells=reports[tag]["failed_cells"],
                      solo_timed_out_cells=reports[tag].get("timed_out_cells", []), solo_stalls=reports[tag]["stalls"],
                      solo_longest_hold_seconds=stats["longest_hold_seconds"],
                      predicted_longest_wait_seconds=round((learners - 1) * stats["longest_hold_seconds"], 1),
                      solo_kernel_restarts=reports[tag].get("kernel_restarts", []),
                      solo_unexpected_figures=reports[tag]["unexpected_figures"], solo_figures=solo_figures,
                      solo_lesson_seconds=reports[tag]["lessons"], solo_queue=stats,
                      solo_peak_pinned_bytes=solo_pinned,
                      solo_queue_overhead_fraction=round(stats["queue_overhead_seconds"] / wall, 5),
                      estimated_wall_seconds=round(estimate, 1),
                      estimate_by_learners={n: round(estimate_wall(wall, stats["timed_seconds"], n), 1)
                                            for n in (1, 4, 8, 16, 32)})
        say(f"solo: {wall:.1f} s, of which {stats['timed_seconds']:.1f} s in {stats['slots']} measurement slots; "
            f"queue overhead {stats['queue_overhead_seconds'] * 1e3:.1f} ms "
            f"({100 * result['solo_queue_overhead_fraction']:.3f}% of the run); "
            f"{len(reports[tag]['failed_cells'])} failed cell(s)")
        say(f"estimated classroom wall time for {learners} learners: at least {estimate:.0f} s "
            f"(by learners: {result['estimate_by_learners']})")
        cores = os.cpu_count() or 1
        if learners > cores:
            say(f"note: {learners} learners on {cores} CPU cores: the estimate assumes their untimed work (kernels "
                "starting, compiling, plotting) overlaps, which it cannot fully do with more learners than cores; "
                "expect longer.")
        if reports[tag]["failed_cells"]:
            result["stopped"] = "the solo run had failed cells"
            path = _save(result, output)
            raise ClassroomError(f"The solo run had {len(reports[tag]['failed_cells'])} failed cell(s) (first: "
                                 f"{reports[tag]['failed_cells'][0]}); the class would repeat them. Saved {path}.")
        if max_seconds is not None and estimate > max_seconds:
            raise ClassroomError(
                f"{learners} learners would take at least {estimate:.0f} s, more than --max-seconds {max_seconds:.0f}: "
                "their timed sections take turns on the GPU. Choose fewer lessons (--lessons 06 11), fewer learners, "
                "or raise --max-seconds.")
    tags = [f"classroom-{run_id}-learner-{i:02d}" for i in range(1, learners + 1)]
    class_since = time.time()
    say(f"classroom: {learners} learners at once...")
    wall, reports, peak_pinned = _run_group(tags, chosen, folder, cell_timeout, key, class_since, say)
    entries = [e for e in read_log(key, since=class_since) if e.get("tag") in tags]
    per_learner = []
    for tag in tags:
        figures = _figures(folder / f"{tag}.results.jsonl", gpu_name)
        report = reports[tag]
        mine = [e for e in entries if e.get("tag") == tag]
        per_learner.append({"learner": tag.rsplit("-", 1)[1], "wall_seconds": report["wall_seconds"],
                            "timed_out_cells": report.get("timed_out_cells", []), "stalls": report["stalls"],
                            "shown_from": shown_from(folder / f"{tag}.results.jsonl"),
                            "lesson_seconds": report["lessons"], "failed_cells": report["failed_cells"],
                            "unexpected_figures": report["unexpected_figures"], "figures": figures,
                            "kernel_restarts": report.get("kernel_restarts", []),
                            **({"log_tail": report["log_tail"]} if report.get("log_tail") else {}),
                            "queue": _queue_stats(mine)})

    def worst(figure: str) -> float | None:
        base = solo_figures.get(figure)
        ratios = [p["figures"].get(figure) / base for p in per_learner if base and p["figures"].get(figure)]
        return round(min(ratios), 4) if ratios and len(ratios) == len(per_learner) else None

    result.update(
        wall_seconds=round(wall, 2),
        failed_cells=[p["failed_cells"] for p in per_learner],
        failed_cell_count=sum(len(p["failed_cells"]) for p in per_learner),
        timed_out_cell_count=sum(len(p["timed_out_cells"]) for p in per_learner),
        stall_count=sum(len(p["stalls"]) for p in per_learner),
        # experiments shown from data/'s reference (another machine, another day), counted once per learner
        figures_from_other_machine=sum(len(p["shown_from"].get("reference", [])) for p in per_learner),
        figures_from_other_machine_by_experiment=_by_name(per_learner, "reference"),
        figures_from_class_record=sum(len(p["shown_from"].get("class-record", [])) for p in per_learner),
        unexpected_figure_count=sum(len(p["unexpected_figures"]) for p in per_learner),
        kernel_restart_count=sum(len(p["kernel_restarts"]) for p in per_learner),
        worst_zero_copy_read_ratio=worst("zero_copy_read_GBps") if solo else None,
        worst_ratio_by_figure={f: worst(f) for f in BANDWIDTH_FIGURES} if solo else None,
        queue=_queue_stats(entries),
        longest_wait_seconds=_queue_stats(entries)["longest_wait_seconds"],
        peak_pinned_bytes=peak_pinned, pinned_budget_bytes=pinned_budget_bytes(),
        per_learner=per_learner,
        work_folder=str(folder),
    )
    path = _save(result, output)
    say(f"classroom: {wall:.1f} s for {learners} learners, {result['failed_cell_count']} failed cell(s), "
        f"{result['timed_out_cell_count']} timed out, {result['stall_count']} stall(s) ended, "
        f"{result['figures_from_other_machine']} figure(s) from another machine, "
        f"{result['kernel_restart_count']} kernel(s) restarted at start, "
        f"worst zero-copy read ratio {result['worst_zero_copy_read_ratio']}, longest wait "
        f"{result['longest_wait_seconds']:.1f} s; saved {path}")
    return path


def merge_parts(paths: list[Path], output: str | None = None) -> Path:
    """One classroom record from parts run one after another on the same GPU by the same number of learners,
    each over different lessons (a class too long for one sitting, or for one loan of a machine); return its path.

    The parts are kept whole under ``parts``; the totals are the sums (failed cells, restarts, wall time),
    the worst ratio (over the parts that measured a zero-copy read live), the longest wait and the mean wait
    over every measurement slot."""
    parts = [json.loads(Path(p).read_text()) for p in paths]
    if len(parts) < 2:
        raise ClassroomError("--merge needs at least two classroom files.")
    for key in ("gpu", "learners", "class_gpu_seconds"):
        values = {json.dumps(part.get(key)) for part in parts}
        if len(values) != 1:
            raise ClassroomError(f"The parts differ in {key} ({', '.join(sorted(values))}); merge only parts of one class.")
    lessons = [lesson for part in parts for lesson in part["lessons"]]
    if len(set(lessons)) != len(lessons):
        raise ClassroomError("The parts share lessons; each lesson must be in one part only.")
    if any("wall_seconds" not in part for part in parts):
        raise ClassroomError("A part did not finish (no wall_seconds); run it again before merging.")
    slots = sum(part["queue"]["slots"] for part in parts)
    waited = sum(part["queue"]["mean_wait_seconds"] * part["queue"]["slots"] for part in parts
                 if part["queue"]["mean_wait_seconds"] is not None)
    ratios = [part.get("worst_zero_copy_read_ratio") for part in parts]
    measured = [r for r in ratios if r is not None]  # a part whose lessons' zero-copy reads all replayed has none
    merged = {
        "format": "zero-copy-course classroom", "version": 1, "gpu": parts[0]["gpu"], "date": parts[0]["date"],
        "command": [part["command"] for part in parts], "learners": parts[0]["learners"], "lessons": lessons,
        "cpu_count": parts[0].get("cpu_count"), "class_gpu_seconds": parts[0].get("class_gpu_seconds"),
        "merged_from": [Path(p).name for p in paths],
        "wall_seconds": round(sum(part["wall_seconds"] for part in parts), 2),
        "solo_wall_seconds": round(sum(part.get("solo_wall_seconds") or 0 for part in parts), 2),
        "failed_cell_count": sum(part["failed_cell_count"] for part in parts),
        "solo_failed_cell_count": sum(len(part.get("solo_failed_cells", [])) for part in parts),
        "unexpected_figure_count": sum(part["unexpected_figure_count"] for part in parts),
        "kernel_restart_count": sum(part["kernel_restart_count"] for part in parts),
        **{key: sum(part.get(key, 0) for part in parts)
           for key in ("timed_out_cell_count", "stall_count", "figures_from_other_machine", "figures_from_class_record")},
        "worst_zero_copy_read_ratio": min(measured) if measured else None,
        "zero_copy_read_ratio_by_part": ratios,
        "longest_wait_seconds": max(part["longest_wait_seconds"] for part in parts),
        "mean_wait_seconds": round(waited / slots, 4) if slots else None,
        "measurement_slots": slots,
        "peak_pinned_bytes": max(part.get("peak_pinned_bytes", 0) for part in parts),
        "parts": parts,
    }
    return _save(merged, output)


def _worker(argv: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m helpers.tools.classroom", description="one simulated learner")
    parser.add_argument("--out", required=True)
    parser.add_argument("--cell-timeout", type=int, default=300)
    parser.add_argument("lessons", nargs="+")
    args = parser.parse_args(argv)
    run_learner([Path(p) for p in args.lessons], Path(args.out), args.cell_timeout)
    return 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1:]))
