"""Command line: ``python -m helpers record | summary | targets | model | doctor | classroom | book | times``.

record   runs every experiment live on this machine's GPU and writes one record into data/
summary  prints one JSON object of headline figures (default: the newest H200 record in data/)
targets  checks a record against the course's H200 performance targets; exits 1 if one is missed
classroom runs every lesson live in N learners' processes at once on this GPU (after one learner alone) and
         writes data/classroom-<gpu>-<date>.json: failed cells, figures against the solo run, waits in the queue
model    fits lesson 10's PCIe model on one record's stride sweep (and its race on the record's counters) and
         prints, as one JSON object, its errors on the points it was not fitted on and its counts against each
         record's Nsight Compute counters (default: fit on the oldest H200 record with quiet sweeps and counters,
         check on every other H200 record, labelling those whose sweeps are not quiet; a record is not checked
         against itself unless --allow-same)
doctor   says what this machine is for the course: mode, GPU, toolkit, platform, page-locked memory, and what
         each lesson does here (--json for one JSON object)
book     executes every lesson and builds the course's website into build/book/ (make book)
times    per lesson: the estimated time and, from the cell timings JupyterLab saved in a learner's notebooks,
         the time the learner actually spent (first run cell to last, without breaks)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from . import records
from .errors import CourseError, ProfilerUnavailableError
from .progress import progress_bar
from .summary import headline


def record(output: str | None, only: list[str] | None) -> Path:
    """Run every experiment (or ``only`` those) live and save the record; return its path."""
    from . import experiments
    from .mode import require_live

    from .experiments.result import CLASS_SETTING, class_limit

    records.check_can_save(output)  # a run of minutes must not be lost at the end (issue 20)
    require_live("python -m helpers record")
    if class_limit() is not None:
        raise SystemExit(f"{CLASS_SETTING} is set: some experiments would replay instead of being measured. "
                         f"Unset it (`unset {CLASS_SETTING}`) to record.")
    new = records.new_record(records.command_line())
    names = only or list(experiments.ALL)
    unknown = sorted(set(names) - set(experiments.ALL))
    if unknown:
        raise SystemExit(f"Unknown experiment(s): {', '.join(unknown)}. Known: {', '.join(experiments.ALL)}")
    elapsed = {}
    with progress_bar(names) as bar:
        for name in names:
            t0 = time.perf_counter()
            try:
                result = experiments.ALL[name]()
            except ProfilerUnavailableError as exc:  # counters need ncu; the rest of the record does not
                bar.write(f"skipped {name}: {exc}", file=sys.stderr)
                bar.done(name)
                continue
            elapsed[name] = round(time.perf_counter() - t0, 2)
            new["experiments"][name] = {"params": result.params, "rows": result.rows}
            bar.write(f"recorded {name} in {elapsed[name]} s", file=sys.stderr)
            bar.done(name)
    new["provenance"]["experiment_wall_seconds"] = elapsed
    return records.save_record(new, output)


def model(fit: str | None, check: list[str] | str | None, allow_same: bool) -> dict[str, Any]:
    """The ``model`` command's JSON: fit file, held-out errors on each check file, the fitted parameters.

    The top-level errors are those of the first check record whose sweeps are quiet (else the first),
    together with the fit record's other sweeps; ``checks`` lists every check file with the errors on
    its own points alone, its counts against its counters, and its quiet label."""
    from . import pcie_model

    checks = [check] if isinstance(check, str) else list(check or [])
    if fit is None or not checks:
        found = records.matching_records()
        if not found:
            records.reference_record()  # raises the RecordError that says how to restore data/
        fit_path = Path(fit) if fit else pcie_model.choose_records(found)[0][1]
        check_paths = [Path(c) for c in checks] or [p for _, p in found if p.resolve() != fit_path.resolve()] \
            or [found[-1][1]]
    else:
        fit_path, check_paths = Path(fit), [Path(c) for c in checks]
    for check_path in check_paths:
        if fit_path.resolve() == check_path.resolve() and not allow_same:
            raise pcie_model.ModelError(
                f"the model would be fitted and checked on the same file, {fit_path}"
                + (" (data/ holds only one H200 record)" if fit is None and not checks else "")
                + ": a model checked on the data it was fitted on proves little. Record a second run on an H200 with "
                "`python -m helpers record`, pass --fit FILE and --check FILE, or --allow-same to compare anyway.")
    fit_record = records.load_record(fit_path)
    results = [pcie_model.check(fit_record, records.load_record(c), allow_same=allow_same) for c in check_paths]
    quiet = [i for i, r in enumerate(results) if r["quiet"]["check record"]]
    head = (quiet or [0])[0]
    summary = []
    for c, r in zip(check_paths, results):
        own = r.get("check_record_only", r)  # that record's points alone (a same-run check: its held-out sweeps)
        summary.append({"check_file": str(c), "quiet": r["quiet"]["check record"], "points": own["points"],
                        "median_abs_error": own["median_abs_error"], "max_abs_error": own["max_abs_error"],
                        "meets_targets": own["meets_targets"] if "meets_targets" in own else r["meets_targets"],
                        "counts": r["counts"].get("check record"), "run_to_run": r["run_to_run"]})
    deciding = [s for s in summary if s["quiet"]] or summary
    return {"fit_file": str(fit_path), "check_file": str(check_paths[head]), **results[head],
            "checks": summary, "all_quiet_checks_meet_targets": all(s["meets_targets"] for s in deciding)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="record every experiment on this GPU into data/")
    rec.add_argument("--output", help="file to write (default: data/<gpu>-<date>.json, never overwriting)")
    rec.add_argument("--only", nargs="+", metavar="EXPERIMENT", help="record only these experiments")
    summ = commands.add_parser("summary", help="headline figures of a record as JSON")
    summ.add_argument("file", nargs="?", help="record file (default: newest H200 record in data/)")
    targ = commands.add_parser("targets", help="check a record against the H200 performance targets")
    targ.add_argument("file", nargs="?", help="record file (default: newest H200 record in data/)")
    mod = commands.add_parser("model", help="fit lesson 10's PCIe model on one record, check it on another")
    mod.add_argument("--fit", metavar="FILE",
                     help="record to fit on (default: the oldest H200 record in data/ with quiet sweeps and counters)")
    mod.add_argument("--check", metavar="FILE", nargs="+",
                     help="records to check on (default: every other H200 record in data/)")
    mod.add_argument("--allow-same", action="store_true", help="allow fitting and checking on the same run")
    room = commands.add_parser("classroom", help="run the lessons live as N learners at once; record what happened")
    room.add_argument("--learners", type=int, help="simulated learners running at once (required unless --merge)")
    room.add_argument("--lessons", nargs="+", metavar="LESSON", help="lesson numbers or files (default: all)")
    room.add_argument("--solo", action=argparse.BooleanOptionalAction, default=True,
                      help="run one learner alone first, for the ratios and the time estimate (default: yes)")
    room.add_argument("--output", help="file to write (default: data/classroom-<gpu>-<date>.json, never overwriting)")
    room.add_argument("--cell-timeout", type=int, default=300, help="seconds one cell may run (default 300)")
    room.add_argument("--max-seconds", type=float,
                      help="stop after the solo run if the classroom is estimated to take longer than this")
    room.add_argument("--class-gpu-seconds", type=float, metavar="S",
                      help="the class setting ZC_CLASS_GPU_SECONDS: experiments that held the GPU longer than S "
                           "seconds in the reference record's run replay it (default: the environment's, else off)")
    room.add_argument("--merge", nargs="+", metavar="FILE",
                      help="instead of running: merge classroom files of one class, each over other lessons")
    doc = commands.add_parser("doctor", help="what this machine is for the course, and what each lesson does here")
    doc.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    book = commands.add_parser("book", help="execute every lesson and build the website into build/book/")
    book.add_argument("--output", metavar="DIR", help="folder of the site (default: build/book)")
    times = commands.add_parser("times", help="estimated and measured (from saved cell timings) time per lesson")
    times.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="saved lessons (default: lessons/*.ipynb)")
    args = parser.parse_args(argv)
    try:
        if args.command == "times":
            from .lesson_times import report

            for row in report([Path(p) for p in args.notebooks] or None):
                measured = "no timings saved" if row["measured_minutes"] is None else f"{row['measured_minutes']:g} min"
                print(f"{row['lesson']:48s} estimate {row['estimate_minutes']:3d} min   measured {measured}")
            return 0
        if args.command == "book":
            from .book import build

            print(build(Path(args.output).resolve() if args.output else None))
            return 0
        if args.command == "classroom":
            from .classroom import ClassroomError, merge_parts, run_classroom

            if args.merge:
                print(merge_parts([Path(p) for p in args.merge], args.output))
                return 0
            if args.learners is None:
                raise ClassroomError("--learners N is required (or --merge FILE FILE ...).")
            run_classroom(args.learners, args.lessons, solo=args.solo, output=args.output,
                          cell_timeout=args.cell_timeout, max_seconds=args.max_seconds,
                          class_gpu_seconds=args.class_gpu_seconds,
                          say=lambda line: print(line, file=sys.stderr, flush=True))
        elif args.command == "doctor":
            from .doctor import diagnose, render
            from .platform_facts import gather
            from .platform_notes import reference_gpu

            report = diagnose(gather(), reference_gpu())
            print(json.dumps(report, indent=1) if args.json else render(report))
        elif args.command == "model":
            print(json.dumps(model(args.fit, args.check, args.allow_same), indent=1))
        elif args.command == "record":
            path = record(args.output, args.only)
            print(json.dumps({"saved": str(path), **headline(records.load_record(path))}, indent=1))
        else:
            chosen = records.load_record(args.file) if args.file else records.reference_record()[0]
            if args.command == "summary":
                print(json.dumps(headline(chosen), indent=1))
            else:
                from .targets import check

                rows = check(chosen)
                for row in rows:
                    value = "missing" if row["value"] is None else f"{row['value']:.3f}"
                    print(f"{'met   ' if row['met'] else 'MISSED'} {row['target']}: {value} "
                          f"(floor {row['floor']:g}{' ' + row['unit'] if row['unit'] else ''})")
                return 0 if all(row["met"] for row in rows) else 1
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
