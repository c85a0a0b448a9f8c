"""A new lesson is its own files and one command (issue 34). In a scratch copy of the course, a small lesson 16 is
added by writing only what CONTRIBUTING's "Add a lesson" lists (its notebook, its registry entry, its exercise module
and solution, its findings module and their tests); ``python -m helpers sync`` writes the rest; then ``python -m
helpers check`` and the consistency tests pass in the copy. The copy's git status then shows only those files."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from helpers import lessons
from helpers.tools import consistency

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("helpers", "lessons", "tests", "data", ".ci", "README.md", "README.zh-CN.md", "CONTRIBUTING.md", "Makefile",
          "pyproject.toml", "CITATION.cff")
ID, SLUG = "16", "review-the-costs"
MODULE = SLUG.replace("-", "_")
# What sync may write besides the lesson's own files (CONTRIBUTING, step 6); the guide's Chinese catalog and twin
# follow the English guide (the new lesson's section stays English there until the lesson is translated).
DERIVED = {"README.md", "lessons/instructor-guide.md", "data/README.md", "lessons/.output-words.json",
           "lessons/locale/zh_CN/LC_MESSAGES/instructor-guide.po", "lessons/zh/instructor-guide.md"}

NOTEBOOK = [
    ("markdown", "# 16 · Review the costs\n\n**What you will learn**\n\n- to turn a recorded copy rate into "
     "seconds, and pinned against pageable into a factor.\n\n**Prerequisites:** lesson 02. "
     "**Time to complete:** 99 minutes", []),
    ("code", "%matplotlib inline\nimport helpers as zc\nzc.start()", []),
    ("markdown", "## 1. Predict, then measure\n\nHow many times faster than a pageable copy is a pinned one?", []),
    ("code", "predicted_factor = ...  # pinned over pageable, host to device, largest size", ["predict"]),
    ("code", "memcpy = zc.experiments.memcpy()\nmemcpy", []),
    ("code", 'zc.exercises.compare("16", predicted_factor, memcpy)', []),
    ("code", f"zc.findings.{MODULE}.factor(memcpy)", []),
    ("markdown", "## 2. Exercises", []),
    ("code", "def pinned_over_pageable(memcpy, nbytes):\n    ...", ["exercise"]),
    ("code", 'zc.exercises.check("16", "pinned_over_pageable", pinned_over_pageable)', []),
    ("code", "def copy_seconds(nbytes, GBps):\n    ...", ["exercise"]),
    ("code", 'zc.exercises.check("16", "copy_seconds", copy_seconds)', []),
    ("markdown", "## Summary\n\nA rate in GB/s moves 10⁹ bytes a second.\n\n## What's next\n\n"
     "Back to the [README](../README.md).", []),
]

EXERCISES = '''"""The review lesson's exercises (review-the-costs): a copy's seconds, pinned over pageable."""

from __future__ import annotations

import math
from typing import Any, Callable

from . import Feedback, correct, hint, is_placeholder, not_yet

SECONDS_CASES = ((1 << 30, 55.0), (4096, 7.0), (10**9, 1.0))


def _rate(memcpy: Any, memory: str, nbytes: int) -> float:
    return memcpy.one(direction="htod", host_memory=memory, nbytes=nbytes)["GBps"]


def factor(memcpy: Any, nbytes: int) -> float:
    """Pinned over pageable, host to device, at ``nbytes``."""
    return _rate(memcpy, "pinned", nbytes) / _rate(memcpy, "pageable", nbytes)


def check_copy_seconds(copy_seconds: Callable[[int, float], Any]) -> Feedback:
    """review-the-costs: ``copy_seconds(nbytes, GBps)``."""
    if is_placeholder(copy_seconds):
        return not_yet("define copy_seconds(nbytes, GBps): the seconds one copy of nbytes takes at that rate.")
    for nbytes, rate in SECONDS_CASES:
        got = copy_seconds(nbytes, rate)
        if is_placeholder(got):
            return not_yet("copy_seconds returns nothing yet: return the seconds.")
        if math.isclose(got, nbytes / (rate * 2**30), rel_tol=1e-6):
            return hint("you took a GB as a power of two. What does the G of a rate in GB/s stand for?",
                        "the G of GB/s is decimal, as in PCIe's rates.")
        if not math.isclose(got, nbytes / (rate * 1e9), rel_tol=1e-6):
            return hint("the seconds are off. Which unit is the rate in?", "turn GB/s into bytes a second first.")
    return correct("bytes over bytes a second; a GB/s is 10**9 bytes a second.")


def check_pinned_over_pageable(pinned_over_pageable: Callable[[Any, int], Any]) -> Feedback:
    """review-the-costs: ``pinned_over_pageable(memcpy, nbytes)``."""
    from ..experiments import reference

    if is_placeholder(pinned_over_pageable):
        return not_yet("define pinned_over_pageable(memcpy, nbytes) with memcpy.one(...).")
    memcpy = reference("memcpy")
    for nbytes in sorted({int(n) for n in memcpy.column("nbytes")}):
        got = pinned_over_pageable(memcpy, nbytes)
        if is_placeholder(got):
            return not_yet("pinned_over_pageable returns nothing yet: return the factor.")
        if math.isclose(got, 1 / factor(memcpy, nbytes), rel_tol=1e-6):
            return hint("your factor is below one. Which copy is faster, and which goes on top?",
                        "divide the faster rate by the slower.")
        if not math.isclose(got, factor(memcpy, nbytes), rel_tol=1e-6):
            return hint("that is not the factor. Which direction and which host memory?",
                        "take direction htod for both rates.")
    return correct("pinned over pageable, host to device, at every size.")


CHECKS = {"pinned_over_pageable": check_pinned_over_pageable, "copy_seconds": check_copy_seconds}


def compare_prediction(predicted: Any, memcpy: Any) -> str:
    """The prediction against the factor at the largest size."""
    if is_placeholder(predicted):
        return "No prediction: set predicted_factor to a number and run the cell again."
    largest = max(int(n) for n in memcpy.column("nbytes"))
    return f"You said {predicted:g}; the run gives {factor(memcpy, largest):.1f}."
'''

SOLUTIONS = '''# Solutions to lesson 16's exercises (16-review-the-costs.ipynb).

# exercise: pinned_over_pageable
def pinned_over_pageable(memcpy, nbytes):
    """Pinned over pageable, host to device."""
    rate = lambda memory: memcpy.one(direction="htod", host_memory=memory, nbytes=nbytes)["GBps"]
    return rate("pinned") / rate("pageable")

# exercise: copy_seconds
def copy_seconds(nbytes, GBps):
    """Seconds for one copy."""
    return nbytes / (GBps * 1e9)
'''

FINDINGS = '''"""review-the-costs's narration: pinned over pageable, from the run's result (live or recorded)."""

from __future__ import annotations

from ..exercises.lesson16 import factor as _factor
from ..experiments.result import Result
from ..tables import Text


def factor(memcpy: Result) -> Text:
    """The factor at the largest size, and where it was measured."""
    largest = max(int(n) for n in memcpy.column("nbytes"))
    return Text(f"At {largest / 2**30:g} GiB a pinned copy ran {_factor(memcpy, largest):.1f} times as fast as a "
                f"pageable one ({memcpy.origin(dated=True)}).")
'''

TESTS = '''"""review-the-costs's exercises."""

from helpers import exercises
from typical_wrong import Typical, fixed


def _inverted(memcpy, nbytes):
    rate = lambda memory: memcpy.one(direction="htod", host_memory=memory, nbytes=nbytes)["GBps"]
    return rate("pageable") / rate("pinned")


TYPICAL = {
    ("16", "copy_seconds"): [Typical(fixed(lambda n, r: n / (r * 2**30)), ("GBps * 1e9",), phrase="power of two")],
    ("16", "pinned_over_pageable"): [Typical(fixed(_inverted), ('rate("pinned") / rate("pageable")',))],
}
'''

FINDINGS_TESTS = f'''"""review-the-costs's sentence quotes the factor of the result it is given."""

import dataclasses

from helpers import experiments
from helpers.findings import {MODULE} as said


def test_the_factor_follows_the_result():
    memcpy = experiments.memcpy()
    text = str(said.factor(memcpy))
    assert "recorded on" in text and "times as fast" in text
    rows = [{{**r, "GBps": r["GBps"] * 2}} if r["host_memory"] == "pinned" else r for r in memcpy.rows]
    doubled = str(said.factor(dataclasses.replace(memcpy, rows=rows, live=True)))
    assert "live on" in doubled and doubled != text
'''

ENTRY = (f'    Lesson("{ID}", "{SLUG}", "Review the costs", 0,\n'
         '           experiments=("memcpy",), does="Pinned against pageable copies, in seconds and as a factor"),\n')


def _copy(to: Path) -> None:
    ignored = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "*.pyc", "build", "sass")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, to / name, ignore=ignored)
        else:
            shutil.copy2(source, to / name)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts}


def _own_files(root: Path) -> dict[str, str]:
    """Write lesson 16's own files, as CONTRIBUTING's steps 1 to 5 say; their paths."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    for kind, source, tags in NOTEBOOK:
        cell = nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_code_cell(source)
        cell.metadata["tags"] = tags
        nb.cells.append(cell)
    files = {f"lessons/{ID}-{SLUG}.ipynb": nbformat.writes(nb) + "\n",
             f"helpers/exercises/lesson{ID}.py": EXERCISES, f"lessons/solutions/lesson{ID}.py": SOLUTIONS,
             f"tests/test_exercises_lesson{ID}.py": TESTS, f"helpers/findings/{MODULE}.py": FINDINGS,
             f"tests/test_findings_{MODULE}.py": FINDINGS_TESTS}
    for path, text in files.items():
        (root / path).write_text(text, encoding="utf-8")
    registry = root / "helpers" / "lessons.py"
    source = registry.read_text(encoding="utf-8")
    end = source.index("\n)\n", source.index("LESSONS: tuple[Lesson, ...] = ("))
    registry.write_text(source[:end + 1] + ENTRY + source[end + 1:], encoding="utf-8")
    return files


def _run(root: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    # the copy's helpers first; packages found through PYTHONPATH (not a venv) stay found
    path = os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH", "")]))
    env = {**os.environ, "PYTHONPATH": path, "ZC_FORCE_REPLAY": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_contributing_lists_a_new_lesson_s_own_files_in_order():
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    steps = text.split("## Add a lesson", 1)[1].split("\n## ", 1)[0]
    entry = lessons.Lesson(ID, SLUG, "Review the costs", 5)
    where = [steps.find(f"`{path}`") for path in consistency.own_files(entry)]
    assert all(at >= 0 for at in where), (f"CONTRIBUTING.md's 'Add a lesson' must name each of "
                                          f"{list(consistency.own_files(entry))}")
    assert where == sorted(where), "CONTRIBUTING.md names a lesson's own files in another order than they are checked"
    assert "python -m helpers sync" in steps and "python -m helpers check" in steps


def test_a_new_lesson_is_its_own_files_and_one_command(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    _copy(root)
    before = _snapshot(root)
    own = set(_own_files(root)) | {"helpers/lessons.py"}

    synced = _run(root, "-m", "helpers", "sync")
    course_line = next(n for n, line in enumerate((root / "helpers/lessons.py").read_text().splitlines(), 1)
                       if line.startswith("COURSE_MINUTES ="))
    # sixteen lessons fill the promise: the command says where it is stated and what to do, and nothing else is left
    assert synced.returncode == 1, synced.stdout + synced.stderr
    left = [line for line in synced.stderr.splitlines() if re.match(r"[\w./-]+:\d+: ", line)]
    assert len(left) == 1 and left[0].startswith(f"helpers/lessons.py:{course_line}: the lessons add up to"), \
        synced.stderr
    # the maintainers' decision, taken in an issue: the course grows, and the texts that quote the promise follow
    registry = root / "helpers" / "lessons.py"
    registry.write_text(re.sub(r"^COURSE_MINUTES = \d+", "COURSE_MINUTES = 700", registry.read_text(), flags=re.M))
    synced = _run(root, "-m", "helpers", "sync")
    assert synced.returncode == 0, synced.stdout + synced.stderr

    checked = _run(root, "-m", "helpers", "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr

    after = _snapshot(root)
    changed = {path for path in set(before) | set(after) if before.get(path) != after.get(path)}
    assert changed <= own | DERIVED, f"files a new lesson should not need to touch: {sorted(changed - own - DERIVED)}"
    assert {"README.md", "lessons/instructor-guide.md", "lessons/.output-words.json"} <= changed
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert f"[{ID}-{SLUG}](lessons/{ID}-{SLUG}.ipynb)" in readme and f"blob/main/lessons/{ID}-{SLUG}.ipynb" in readme
    minutes = re.search(rf'Lesson\("{ID}", "{SLUG}", "Review the costs", (\d+),', registry.read_text()).group(1)
    assert f"**Time to complete:** {minutes} minutes" in (root / f"lessons/{ID}-{SLUG}.ipynb").read_text()
    assert json.loads((root / "lessons/.output-words.json").read_text())[f"{ID}-{SLUG}"]["words"] > 0

    tests = _run(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                 "tests/test_lessons.py", "tests/test_lesson_times.py", f"tests/test_exercises_lesson{ID}.py",
                 f"tests/test_findings_{MODULE}.py", "tests/test_hints.py", "tests/test_open_course.py",
                 "tests/test_records.py", "tests/test_classroom.py", "tests/test_exercises.py",
                 "-k", f"{ID} or registry or derived or promise or own_files or every_exercise or colab or "
                 "data_readme or chosen or every_registered or estimate", timeout=240)
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
