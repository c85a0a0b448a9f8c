"""Command line: ``python -m helpers record | summary | targets | model | doctor | classroom | class-record | book |
times | sass | sync | check | i18n``.

record   runs every experiment live on this machine's GPU and writes one record into data/
summary  prints one JSON object of headline figures (default: the newest H200 record in data/)
targets  checks a record against the course's H200 performance targets; exits 1 if one is missed
classroom runs every lesson live in N learners' processes at once on this GPU (after one learner alone) and
         writes data/classroom-<gpu>-<date>.json: failed cells, figures against the solo run, waits in the queue
class-record  the instructor records every experiment on this GPU into the class's shared record: under the class
         setting (ZC_CLASS_GPU_SECONDS) learners are shown its long experiments instead of data/'s reference
model    fits the PCIe model (model-zero-copy-reads) on one record's stride sweep (and its race on the record's
         counters) and prints, as one JSON object, its errors on the points it was not fitted on and its counts
         against each record's Nsight Compute counters (default: fit on the oldest H200 record with quiet sweeps
         and counters, check on every other H200 record, labelling those whose sweeps are not quiet; a record is
         not checked against itself unless --allow-same)
doctor   says what this machine is for the course: mode, GPU, toolkit, platform, page-locked memory, and what
         each lesson does here (--json for one JSON object)
book     executes every lesson and builds the course's website into build/book/ (make book)
times    per lesson: the estimated time and, from the cell timings JupyterLab saved in a learner's notebooks,
         the time the learner actually spent (first run cell to last, without breaks)
sass     builds hazards.cu's spin kernels as the lessons do, disassembles them (cuobjdump -sass) and writes the
         listing with its provenance into data/sass/, which avoid-hazards-on-mapped-memory replays
sync     writes what follows from the lessons and the registry (helpers/lessons.py): output words, estimated
         minutes, each notebook's "Time to complete", the README's tables and course length, the instructor
         guide's lesson headings and plans, data/README.md's lessons column
check    the consistency checks: each problem as file:line and what to write there; exits 1 if there is one
i18n     the Chinese edition: `extract` brings the catalogs (lessons/locale/zh_CN/LC_MESSAGES/) in step with the
         English lessons (`extract 07` starts lesson 07's), `build` writes lessons/zh/, `status` says where each
         lesson stands (exits 1 if a declared lesson or a marked string lacks a current translation)
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import records
from .errors import CourseError
from .lessons import lesson

Setup = Callable[[argparse.ArgumentParser], None]
Handler = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Command:
    """One subcommand: its one-line help, the arguments it takes, and what it does (returns the exit status)."""

    help: str
    setup: Setup
    run: Handler


# --------------------------------------------------------------------------- record
def _record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", help="file to write (default: data/<gpu>-<date>.json, never overwriting)")
    parser.add_argument("--only", nargs="+", metavar="EXPERIMENT", help="record only these experiments")


def _record(args: argparse.Namespace) -> int:
    from .analysis.summary import headline
    from .tools.record import record

    path = record(args.output, args.only)
    print(json.dumps({"saved": str(path), **headline(records.load_record(path))}, indent=1))
    return 0


# --------------------------------------------------------------------------- summary and targets
def _record_file_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", nargs="?", help="record file (default: newest H200 record in data/)")


def _chosen_record(args: argparse.Namespace) -> records.Record:
    return records.load_record(args.file) if args.file else records.reference_record()[0]


def _summary(args: argparse.Namespace) -> int:
    from .analysis.summary import headline

    print(json.dumps(headline(_chosen_record(args)), indent=1))
    return 0


def _targets(args: argparse.Namespace) -> int:
    from .analysis.targets import check

    rows = check(_chosen_record(args))
    for row in rows:
        value = "missing" if row["value"] is None else f"{row['value']:.3f}"
        print(f"{'met   ' if row['met'] else 'MISSED'} {row['target']}: {value} "
              f"(floor {row['floor']:g}{' ' + row['unit'] if row['unit'] else ''})")
    return 0 if all(row["met"] for row in rows) else 1


# --------------------------------------------------------------------------- model
def _model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fit", metavar="FILE",
                        help="record to fit on (default: the oldest H200 record in data/ with quiet sweeps and counters)")
    parser.add_argument("--check", metavar="FILE", nargs="+",
                        help="records to check on (default: every other H200 record in data/)")
    parser.add_argument("--allow-same", action="store_true", help="allow fitting and checking on the same run")


def _model(args: argparse.Namespace) -> int:
    from .tools.model_check import model

    print(json.dumps(model(args.fit, args.check, args.allow_same), indent=1))
    return 0


# --------------------------------------------------------------------------- classroom
def _classroom_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--learners", type=int, help="simulated learners running at once (required unless --merge)")
    parser.add_argument("--lessons", nargs="+", metavar="LESSON", help="lesson numbers or files (default: all)")
    parser.add_argument("--solo", action=argparse.BooleanOptionalAction, default=True,
                        help="run one learner alone first, for the ratios and the time estimate (default: yes)")
    parser.add_argument("--output", help="file to write (default: data/classroom-<gpu>-<date>.json, never overwriting)")
    parser.add_argument("--cell-timeout", type=int, default=300, help="seconds one cell may run (default 300)")
    parser.add_argument("--max-seconds", type=float,
                        help="stop after the solo run if the classroom is estimated to take longer than this")
    parser.add_argument("--class-gpu-seconds", type=float, metavar="S",
                        help="the class setting ZC_CLASS_GPU_SECONDS: experiments that held the GPU longer than S "
                             "seconds are shown from the instructor's record of this GPU (python -m helpers "
                             "class-record), else replay data/'s reference (default: the environment's, else off)")
    parser.add_argument("--class-record-first", action="store_true",
                        help="first make the instructor's record of this GPU (python -m helpers class-record), "
                             "which the class setting then shows")
    parser.add_argument("--merge", nargs="+", metavar="FILE",
                        help="instead of running: merge classroom files of one class, each over other lessons")


def _classroom(args: argparse.Namespace) -> int:
    from .tools.classroom import ClassroomError, merge_parts, run_classroom

    if args.merge:
        print(merge_parts([Path(p) for p in args.merge], args.output))
        return 0
    if args.learners is None:
        raise ClassroomError("--learners N is required (or --merge FILE FILE ...).")
    run_classroom(args.learners, args.lessons, solo=args.solo, output=args.output,
                  cell_timeout=args.cell_timeout, max_seconds=args.max_seconds,
                  class_gpu_seconds=args.class_gpu_seconds, record_first=args.class_record_first,
                  say=lambda line: print(line, file=sys.stderr, flush=True))
    return 0


def _class_record_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", help="file to write (default: $ZC_CLASS_RECORD, else <ZC_LOCK_DIR>/<gpu>.class-record.json)")
    parser.add_argument("--only", nargs="+", metavar="EXPERIMENT", help="record only these experiments")


def _class_record(args: argparse.Namespace) -> int:
    from .tools.class_record import record_class

    print(json.dumps(record_class(args.output, args.only)[1], indent=1))
    return 0


# --------------------------------------------------------------------------- doctor
def _doctor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of text")


def _doctor(args: argparse.Namespace) -> int:
    from .platform.doctor import diagnose, render
    from .platform.facts import gather
    from .platform.notes import reference_gpu

    report = diagnose(gather(), reference_gpu())
    print(json.dumps(report, indent=1) if args.json else render(report))
    return 0


# --------------------------------------------------------------------------- book and times
def _book_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", metavar="DIR", help="folder of the site (default: build/book)")
    parser.add_argument("--language", choices=("en", "zh", "both"), default="both",
                        help="which edition: en, zh (build/book/zh/, the Chinese lessons) or both (default)")


def _book(args: argparse.Namespace) -> int:
    from .tools.book import build

    for language in (("en", "zh") if args.language == "both" else (args.language,)):
        output = Path(args.output).resolve() if args.output else None
        print(build(output / "zh" if output and language == "zh" else output, language=language))
    return 0


def _times_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("notebooks", nargs="*", metavar="NOTEBOOK", help="saved lessons (default: lessons/*.ipynb)")
    parser.add_argument("--count-output", action="store_true",
                        help="run the lessons in replay and store the words their outputs show (lessons/.output-words.json)")


def _times(args: argparse.Namespace) -> int:
    from .tools.lesson_times import report, update_output_words

    if args.count_output:
        for stem, words in update_output_words([Path(p) for p in args.notebooks] or None).items():
            print(f"{stem:48s} {words:5d} output words")

    for row in report([Path(p) for p in args.notebooks] or None):
        measured = "no timings saved" if row["measured_minutes"] is None else f"{row['measured_minutes']:g} min"
        print(f"{row['lesson']:48s} estimate {row['estimate_minutes']:3d} min   measured {measured}")
    return 0


# --------------------------------------------------------------------------- sass
def _sass_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", help="file to write (default: data/sass/<gpu>-<date>.json, never overwriting)")


def _sass(args: argparse.Namespace) -> int:
    from .experiments import sass
    from .mode import require_live

    require_live("python -m helpers sass")
    result = sass.spin_sass()
    print(json.dumps({"saved": str(sass.save(result, args.output)), **sass.summary(result)}, indent=1))
    return 0


# --------------------------------------------------------------------------- sync and check
def _sync_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-count-output", action="store_true",
                        help="do not run changed lessons to count their output words (the estimate uses the stored)")


def _sync(args: argparse.Namespace) -> int:
    from .tools.consistency import problems, report
    from .tools.derived import sync

    for path in sync(count_output=not args.no_count_output):
        print(f"wrote {path}")
    left = problems()
    print(report(left), file=sys.stderr if left else sys.stdout)
    return 1 if left else 0


def _check_arguments(parser: argparse.ArgumentParser) -> None:
    """``check`` takes no arguments."""


def _check(args: argparse.Namespace) -> int:
    from .tools.consistency import problems, report

    found = problems()
    print(report(found), file=sys.stderr if found else sys.stdout)
    return 1 if found else 0


# --------------------------------------------------------------------------- i18n
def _i18n_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("extract", "build", "status"),
                        help="extract: bring the catalogs in step with the English lessons (LESSON starts one); "
                             "build: write the Chinese notebooks, lessons/zh/; status: each lesson's translation")
    parser.add_argument("lessons", nargs="*", metavar="LESSON", help="extract: lessons to start translating (id)")


def _i18n(args: argparse.Namespace) -> int:
    from .i18n import workflow

    if args.action == "status":
        print("\n".join(workflow.report()))
        return 1 if workflow.problems() else 0
    if args.action == "extract":
        written = workflow.write(workflow.expected([lesson(name) for name in args.lessons]))
    else:
        written = workflow.write(workflow.built())
    for path in written:
        print(f"wrote {path}")
    return 0


COMMANDS: dict[str, Command] = {
    "record": Command("record every experiment on this GPU into data/", _record_arguments, _record),
    "summary": Command("headline figures of a record as JSON", _record_file_argument, _summary),
    "targets": Command("check a record against the H200 performance targets", _record_file_argument, _targets),
    "model": Command(f"fit {lesson('model-zero-copy-reads').label}'s PCIe model on one record, check it on another",
                     _model_arguments, _model),
    "classroom": Command("run the lessons live as N learners at once; record what happened",
                         _classroom_arguments, _classroom),
    "class-record": Command("the instructor records this GPU's figures for a class (the class setting shows them)",
                            _class_record_arguments, _class_record),
    "doctor": Command("what this machine is for the course, and what each lesson does here",
                      _doctor_arguments, _doctor),
    "book": Command("execute every lesson and build the website into build/book/", _book_arguments, _book),
    "times": Command("estimated and measured (from saved cell timings) time per lesson", _times_arguments, _times),
    "sass": Command(f"the SASS of {lesson('avoid-hazards-on-mapped-memory').label}'s spin kernels, into data/sass/",
                    _sass_arguments, _sass),
    "sync": Command("write what follows from the lessons and the registry (tables, times, plans, output words)",
                    _sync_arguments, _sync),
    "check": Command("the consistency checks: file, line and what to write", _check_arguments, _check),
    "i18n": Command("the Chinese edition: extract catalogs, build lessons/zh/, status per lesson",
                    _i18n_arguments, _i18n),
}


def parser() -> argparse.ArgumentParser:
    """The command line: one subparser per entry of :data:`COMMANDS`, in its order."""
    top = argparse.ArgumentParser(prog="python -m helpers", description=__doc__,
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = top.add_subparsers(dest="command", required=True)
    for name, command in COMMANDS.items():
        command.setup(commands.add_parser(name, help=command.help))
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command].run(args)
    except CourseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
