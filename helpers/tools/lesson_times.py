"""How long a lesson takes a learner, estimated from what it asks them to read, run and try (README, lesson headers).

The estimate, stated so it can be checked and changed rather than guessed:

- prose is read at ``WORDS_PER_MINUTE`` words per minute (150: slower than the ~240 words per minute
  of ordinary non-fiction reading, since this is technical text read while thinking; Brysbaert 2019,
  "How many words do we read per minute?", J. Memory and Language 109);
- every line of code is read and run in ``MINUTES_PER_CODE_LINE`` (0.25 min);
- the text a lesson prints or shows (its outputs in a replay run, counted by :func:`count_output_words` and kept in
  ``lessons/.output-words.json``) is read at ``OUTPUT_WORDS_PER_MINUTE``; for the lessons that read frame numbers
  (those needing ``PROC``: pin-host-memory, measure-what-pinning-buys, map-pages-on-the-cpu), whose outputs differ
  for root and for an ordinary learner, the longer of the two paths counts (:func:`unprivileged_command`,
  :func:`longer_path`);
- an exercise takes ``EXPECTED_TRIES`` tries (more when the learner writes a kernel) of ``MINUTES_PER_TRY`` each;
- a prediction (a cell that sets ``predict...`` before a measurement) takes ``MINUTES_PER_PREDICTION``;
- what follows a ``## Going deeper`` heading is optional and not counted;
- rounded up to 5 minutes.

Calibrated on the one walk-through of the whole course by a new learner (issue 22: 12.5 hours in all; lessons
keep-enough-bytes-in-flight 65 min, model-zero-copy-reads 70, overlap-copies-with-streams 50,
avoid-hazards-on-mapped-memory 60): :data:`CALIBRATION` holds what this estimate gave on the notebooks as they were
then (commit 75a16f3), beside the walked times.

A learner's real time can be measured too: ``make lab`` turns on JupyterLab's "record timing", so every cell a
learner runs keeps when it started and finished in the saved notebook, and :func:`measured_minutes` (``python -m
helpers times``) adds up the time from the first run cell to the last, leaving out pauses longer than
``IDLE_GAP_MINUTES`` (a break, not reading).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shlex
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import lessons as course_lessons, paths

WORDS_PER_MINUTE = 150
MINUTES_PER_CODE_LINE = 0.25
OUTPUT_WORDS_PER_MINUTE = 200
MINUTES_PER_TRY = 2.0
EXPECTED_TRIES = {"exercise": 2, "kernel": 3}
MINUTES_PER_PREDICTION = 2.0
# lesson: (this estimate on the notebooks the learner walked, minutes the learner took). The four lessons sum to 250
# estimated against 245 walked; the fifteen lessons 00-14 to 870 estimated against 750 walked, so the estimate errs
# long, never short, and the constants were left as stated rather than scaled down to the total.
CALIBRATION = {"keep-enough-bytes-in-flight": (65, 65), "model-zero-copy-reads": (65, 70),
               "overlap-copies-with-streams": (50, 50), "avoid-hazards-on-mapped-memory": (70, 60),
               "all fifteen lessons": (870, 750)}
LESSONS = paths.LESSONS
OUTPUT_WORDS = LESSONS / ".output-words.json"
_WORD = re.compile(r"[A-Za-z0-9_']+|[\u4e00-\u9fff]{1,2}")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")      # HTML markup (<details>, <code>): seen, not read as words
_GOING_DEEPER = re.compile(r"^#+\s*Going deeper", re.I)
_PREDICTION = re.compile(r"^predict\w*\s*=", re.M)
IDLE_GAP_MINUTES = 15
_STAMPS = ("iopub.execute_input", "shell.execute_reply", "iopub.status.busy", "iopub.status.idle",
           "shell.execute_reply.started")
_ANNOUNCED = re.compile(r"\*\*Time to complete:\*\*\s*(\d+)\s*minutes")


def _source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def counted_cells(cells: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cells the estimate counts: those before a ``## Going deeper`` heading."""
    for i, cell in enumerate(cells):
        if cell["cell_type"] == "markdown" and _GOING_DEEPER.match(_source(cell).strip()):
            return cells[:i]
    return cells


def code_digest(notebook: Path) -> str:
    """A digest of a notebook's code, which is what its outputs depend on (the stored output counts are kept per
    digest)."""
    cells = json.loads(Path(notebook).read_text())["cells"]
    code = "\n\x00".join(_source(c) for c in cells if c["cell_type"] == "code")
    return hashlib.sha256(code.encode()).hexdigest()[:16]


def _output_text(output: dict[str, Any]) -> str:
    if "text" in output:
        return "".join(output["text"])
    data = output.get("data", {})
    for kind in ("text/markdown", "text/plain"):
        if kind in data and "image/png" not in data:
            return "".join(data[kind])
    return ""


def count_output_words(executed: dict[str, Any]) -> int:
    """Words of text an executed notebook shows in its counted cells (figures are not text)."""
    return sum(len(_WORD.findall(_output_text(o))) for c in counted_cells(executed["cells"]) if c["cell_type"] == "code"
               for o in c.get("outputs", []))


def stored_output_words(notebook: Path) -> int | None:
    """The output words stored for this notebook's code as it is now, or None (not counted, or the code changed)."""
    try:
        entry = json.loads(OUTPUT_WORDS.read_text()).get(Path(notebook).stem, {})
    except (OSError, ValueError):
        return None
    return entry.get("words") if entry.get("code") == code_digest(notebook) else None


def parts(notebook: Path, output_words: int | None = None) -> dict[str, float]:
    """The counts the estimate is made of, and its minutes before rounding."""
    cells = counted_cells(json.loads(Path(notebook).read_text())["cells"])
    words = sum(len(_WORD.findall(_TAG.sub(" ", _source(c)))) for c in cells if c["cell_type"] == "markdown")
    code = [c for c in cells if c["cell_type"] == "code"]
    lines = sum(len(_source(c).splitlines()) for c in code)
    exercises = [c for c in code if "exercise" in c.get("metadata", {}).get("tags", [])]
    tries = sum(EXPECTED_TRIES["kernel" if "__global__" in _source(c) else "exercise"] for c in exercises)
    predictions = sum(bool(_PREDICTION.search(_source(c))) for c in code)
    out = output_words if output_words is not None else (stored_output_words(notebook) or 0)
    minutes = (words / WORDS_PER_MINUTE + lines * MINUTES_PER_CODE_LINE + out / OUTPUT_WORDS_PER_MINUTE
               + tries * MINUTES_PER_TRY + predictions * MINUTES_PER_PREDICTION)
    return {"prose_words": words, "code_lines": lines, "output_words": out, "exercises": len(exercises),
            "tries": tries, "predictions": predictions, "minutes": minutes}


def estimate_minutes(notebook: Path, output_words: int | None = None) -> int:
    """Minutes a learner needs for ``notebook`` under the module's stated assumptions (output words: as given, else
    as stored for its current code, else none)."""
    return int(5 * math.ceil(parts(notebook, output_words)["minutes"] / 5))


def run_and_count(notebook: Path, timeout: int = 900) -> int:
    """Run one notebook in replay (nbclient) and count the words its outputs show."""
    import os

    import nbformat
    from nbclient import NotebookClient

    os.environ["ZC_FORCE_REPLAY"] = "1"
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(Path(notebook).parent)}}).execute()
    return count_output_words(nb)


def unprivileged_command(argv: list[str], euid: int | None = None,
                         which: Any = shutil.which) -> list[str] | None:
    """``argv`` run without CAP_SYS_ADMIN (frame numbers hidden, the ordinary learner's path) when this process is
    root: through ``setpriv``, else ``capsh``; None when not root (the one path is already the unprivileged one) or
    when neither tool exists (one count only)."""
    import os

    if (os.geteuid() if euid is None else euid) != 0:
        return None
    if which("setpriv"):
        return ["setpriv", "--inh-caps=-sys_admin", "--bounding-set=-sys_admin", *argv]
    if which("capsh"):
        return ["capsh", "--drop=cap_sys_admin", "--", "-c", shlex.join(argv)]
    return None


def longer_path(root_words: int, unprivileged_words: int | None) -> int:
    """The output words to count for a lesson that reads frames: the longer of its two paths, or the one counted."""
    return root_words if unprivileged_words is None else max(root_words, unprivileged_words)


def _unprivileged_words(notebook: Path, timeout: int) -> int | None:
    code = ("import sys; from helpers.tools import lesson_times as t; "
            "sys.stdout.write(str(t.run_and_count(sys.argv[1])))")
    command = unprivileged_command([sys.executable, "-c", code, str(notebook)])
    if command is None:
        return None
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=paths.ROOT)
    words = done.stdout.strip().splitlines()[-1:] if done.returncode == 0 else []
    return int(words[0]) if words and words[0].isdigit() else None


def update_output_words(notebooks: list[Path] | None = None, timeout: int = 900) -> dict[str, int]:
    """Run each notebook in replay and store the words its outputs show, keyed by its code's digest (``python -m
    helpers times --count-output``); a lesson that reads frames, run as root, runs a second time without
    CAP_SYS_ADMIN and keeps the longer count (:func:`longer_path`)."""
    stored = json.loads(OUTPUT_WORDS.read_text()) if OUTPUT_WORDS.exists() else {}
    counted = {}
    frames = set(course_lessons.needing(course_lessons.PROC))
    for path in notebooks or course_lessons.notebooks(LESSONS):
        words = run_and_count(path, timeout)
        if Path(path).stem[:2] in frames:
            words = longer_path(words, _unprivileged_words(Path(path), timeout))
        counted[Path(path).stem] = words
        stored[Path(path).stem] = {"code": code_digest(path), "words": words}
    OUTPUT_WORDS.write_text(json.dumps(dict(sorted(stored.items())), indent=1) + "\n")
    return counted


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
    return [{"lesson": Path(p).stem, "estimate_minutes": estimate_minutes(p), **parts(p), "announced_minutes": announced_minutes(p),
             "measured_minutes": measured_minutes(p)} for p in chosen]
