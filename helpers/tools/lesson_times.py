"""How long a lesson takes a learner, estimated from what it asks them to read and run (README, lesson headers).

The estimate, stated so it can be checked and changed rather than guessed:

- prose is read at ``WORDS_PER_MINUTE`` words per minute (150: slower than the ~240 words per minute
  of ordinary non-fiction reading, since this is technical text read while thinking; Brysbaert 2019,
  "How many words do we read per minute?", J. Memory and Language 109);
- every line of code is read, run and its output looked at in ``MINUTES_PER_CODE_LINE`` (0.25 min);
- rounded up to 5 minutes.

A learner's real time can be measured too: ``make lab`` turns on JupyterLab's "record timing", so every cell a
learner runs keeps when it started and finished in the saved notebook, and :func:`measured_minutes` (``python -m
helpers times``) adds up the time from the first run cell to the last, leaving out pauses longer than
``IDLE_GAP_MINUTES`` (a break, not reading).

Checked against the one timing of a real learner the project has (issue 9: the old bandwidth and coalescing lessons,
since split into measure-bandwidth and keep-enough-bytes-in-flight, and into coalesce-and-align-accesses and
model-zero-copy-reads, took about 70 minutes each, exercises included, before this estimate existed).
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from pathlib import Path

from .. import lessons as course_lessons, paths

WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_LINE = 0.25
LESSONS = paths.LESSONS
_WORD = re.compile(r"[A-Za-z0-9_']+|[\u4e00-\u9fff]{1,2}")
IDLE_GAP_MINUTES = 15
_STAMPS = ("iopub.execute_input", "shell.execute_reply", "iopub.status.busy", "iopub.status.idle",
           "shell.execute_reply.started")
_ANNOUNCED = re.compile(r"\*\*Time to complete:\*\*\s*(\d+)\s*minutes")


def estimate_minutes(notebook: Path) -> int:
    """Minutes a learner needs for ``notebook`` under the module's stated assumptions."""
    cells = json.loads(Path(notebook).read_text())["cells"]
    words = sum(len(_WORD.findall("".join(c["source"]))) for c in cells if c["cell_type"] == "markdown")
    code_lines = sum(len("".join(c["source"]).splitlines()) for c in cells if c["cell_type"] == "code")
    minutes = words / WORDS_PER_MINUTE + code_lines * MINUTES_PER_CODE_LINE
    return int(5 * math.ceil(minutes / 5))


def announced_minutes(notebook: Path) -> int | None:
    """The "Time to complete" a lesson's header announces, or None."""
    match = _ANNOUNCED.search(Path(notebook).read_text())
    return int(match.group(1)) if match else None


def table() -> dict[str, tuple[int, int | None]]:
    """Every lesson's (estimate, announced) minutes, by file stem."""
    return {p.stem: (estimate_minutes(p), announced_minutes(p)) for p in course_lessons.notebooks(LESSONS)}


def _stamp(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (TypeError, ValueError):
        return None


def measured_minutes(notebook: Path, idle_gap_minutes: float = IDLE_GAP_MINUTES) -> float | None:
    """Minutes a learner spent in a saved notebook, from the cell timings JupyterLab recorded (``make lab`` turns
    them on): first run cell to last, without pauses longer than ``idle_gap_minutes``. None without timings."""
    cells = json.loads(Path(notebook).read_text())["cells"]
    stamps = sorted(t for cell in cells for key, value in cell.get("metadata", {}).get("execution", {}).items()
                    if key in _STAMPS and (t := _stamp(value)) is not None)
    if len(stamps) < 2:
        return None
    seconds = sum(min(gap, idle_gap_minutes * 60) if gap <= idle_gap_minutes * 60 else 0.0
                  for gap in ((b - a).total_seconds() for a, b in zip(stamps, stamps[1:])))
    return round(seconds / 60, 1)


def report(notebooks: list[Path] | None = None) -> list[dict[str, object]]:
    """Per lesson: the estimate, the announced time and, where the saved notebook holds timings, the measured time
    (``python -m helpers times``)."""
    chosen = notebooks or course_lessons.notebooks(LESSONS)
    return [{"lesson": Path(p).stem, "estimate_minutes": estimate_minutes(p), "announced_minutes": announced_minutes(p),
             "measured_minutes": measured_minutes(p)} for p in chosen]
