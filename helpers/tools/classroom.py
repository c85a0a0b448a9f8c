"""A simulated classroom: every lesson run live by N learners at once on one GPU (``python -m helpers classroom``).

Each simulated learner is a process that executes the chosen lessons one after another, each in its own
kernel, as nbclient (and nbval) would; all learners start together, like a class pressing Run All. One
learner alone runs first (the solo run) to give the figures each learner is compared with. The result
goes to ``data/classroom-<gpu>-<date>.json``: failed cells, each learner's headline figures, the worst
zero-copy read bandwidth against the solo run's, wall times and the longest wait in the measurement queue.

Every live result a learner's kernels produce is appended to a per-learner file (``ZC_RESULT_LOG``), and
every measurement slot is logged by the queue with the learner's tag (``ZC_QUEUE_TAG``): the figures
come from the runs themselves, not from the notebooks' printed text.
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
           "zero_copy_reads", "merge_parts"]

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


def run_learner(lessons: list[Path], out: Path, cell_timeout: int, start_attempts: int = 3) -> dict[str, Any]:
    """Execute ``lessons`` one after another, each in a fresh kernel, and save what happened to ``out``.

    A kernel that dies before its first cell is started again (at most ``start_attempts`` times in all); each
    such restart is recorded in ``kernel_restarts`` with its error. Kernels write their stderr to this process's
    (the learner's log), where a line marks the start of each lesson and attempt."""
    import nbformat
    from nbclient import NotebookClient

    report: dict[str, Any] = {"lessons": {}, "failed_cells": [], "unexpected_figures": [], "kernel_restarts": []}
    t0 = time.monotonic()
    for path in lessons:
        started = time.monotonic()
        for attempt in range(1, start_attempts + 1):
            print(f"=== {path.stem}: kernel start {attempt}", file=sys.stderr, flush=True)
            nb = nbformat.read(path, as_version=4)
            client = NotebookClient(nb, timeout=cell_timeout, startup_timeout=120, kernel_name="python3",
                                    allow_errors=True, resources={"metadata": {"path": str(path.parent)}})
            try:
                client.execute()
                failed, unexpected = _failed_cells(nb, path.stem)
            except Exception as exc:  # a cell timed out or the kernel died: the lesson failed there
                if attempt < start_attempts and died_at_start(exc, nb):
                    report["kernel_restarts"].append({"lesson": path.stem, "attempt": attempt,
                                                      "error": f"{type(exc).__name__}: {str(exc)[:300]}"})
                    time.sleep(1.0 * attempt)
                    continue
                failed, unexpected = _failed_cells(nb, path.stem)
                failed.append({"lesson": path.stem, "cell": _last_started(nb),
                               "error": type(exc).__name__, "message": str(exc)[:300]})
            break
        report["lessons"][path.stem] = round(time.monotonic() - started, 2)
        report["failed_cells"] += failed
        report["unexpected_figures"] += unexpected
        with open(out.with_suffix(".progress"), "a") as f:
            f.write(f"{path.stem} {len(failed)}\n")
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
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=str(LESSONS_DIR))


def _figures(results_file: Path, gpu: str) -> dict[str, Any]:
    """A learner's headline figures, from every live result its lessons produced (rows of repeated calls merged)."""
    experiments: dict[str, dict[str, Any]] = {}
    if results_file.exists():
        for line in results_file.read_text().splitlines():
            entry = json.loads(line)
            experiments.setdefault(entry["name"], {"params": entry["params"], "rows": []})["rows"] += entry["rows"]
    figures = headline({"provenance": {"gpu": gpu, "date": ""}, "experiments": experiments})
    figures = {key: value for key, value in figures.items() if key not in ("gpu", "date")}
    if figures.get("zero_copy_read_GBps") is None:  # the headline's experiments replayed (the class setting)
        reads = zero_copy_reads(experiments)
        if reads:
            figures["zero_copy_read_GBps"] = max(reads.values())
            figures["zero_copy_read_from"] = max(reads, key=reads.__getitem__)
    return figures


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
    processes = {tag: _spawn(tag, lessons, folder, cell_timeout) for tag in tags}
    last = 0.0
    peak_pinned = 0
    while any(p.poll() is None for p in processes.values()):
        time.sleep(0.5)
        held = pinned_budget.usage()
        peak_pinned = max(peak_pinned, sum(v for k, v in held.items() if k != "budget"))
        if time.monotonic() - last >= 10:
            last = time.monotonic()
            waits = [e["wait_s"] for e in read_log(key, since=since) if e.get("tag") in processes]
            say(f"  {time.monotonic() - t0:5.0f} s: {_progress(folder, tags)}/{len(tags) * len(lessons)} lessons done, "
                f"{len(waits)} measurements, longest wait {max(waits, default=0):.1f} s")
    wall = time.monotonic() - t0
    reports = {}
    for tag, process in processes.items():
        out = folder / f"{tag}.json"
        if out.exists():
            reports[tag] = json.loads(out.read_text())
            if reports[tag]["failed_cells"] or reports[tag].get("kernel_restarts"):
                reports[tag]["log_tail"] = _log_tail(folder / f"{tag}.log")
        else:  # the learner's process itself died: say so, with the end of its log
            tail = _log_tail(folder / f"{tag}.log")
            reports[tag] = {"lessons": {}, "unexpected_figures": [], "wall_seconds": None, "kernel_restarts": [],
                            "failed_cells": [{"lesson": None, "cell": None, "error": f"exit {process.returncode}",
                                              "message": tail[-300:]}], "log_tail": tail}
    return wall, reports, peak_pinned


def _log_tail(log: Path, chars: int = 4000) -> str:
    """The end of a learner's log (its kernels' stderr included), kept in the record when something failed."""
    return log.read_text(errors="replace")[-chars:] if log.exists() else ""


def _queue_stats(entries: list[dict[str, Any]]) -> dict[str, Any]:
    waits = [e["wait_s"] for e in entries]
    return {"slots": len(entries), "timed_seconds": round(sum(e["hold_s"] for e in entries), 3),
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


def run_classroom(learners: int, lessons: list[str] | None = None, *, solo: bool = True, output: str | None = None,
                  cell_timeout: int = 300, max_seconds: float | None = None, class_gpu_seconds: float | None = None,
                  say: Any = print) -> Path:
    """Run the classroom live and write its record; return the file's path.

    ``class_gpu_seconds`` sets the class setting (``ZC_CLASS_GPU_SECONDS``) for every learner: experiments that
    held the GPU longer than that in the reference record's run replay it. A solo run with a failed cell stops
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
