"""The course's consistency checks, each naming the file and line to change and what to write there (``python -m
helpers check``; tests/test_lessons.py and tests/test_lesson_times.py run the same functions).

A new lesson is its own files (CONTRIBUTING, "Add a lesson"): :func:`own_files` says which are missing,
:func:`registry_and_notebooks` whether the registry and the notebooks agree, :func:`promise` whether the course still
keeps its length (helpers/lessons.py's COURSE_MINUTES), and :func:`helpers.tools.derived.stale` what ``python -m
helpers sync`` would still write.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .. import lessons, paths
from .derived import COMMAND, Problem, plans, registry_line, stale

__all__ = ["Problem", "own_files", "missing_files", "registry_and_notebooks", "promise", "problems",
           "report"]

_TITLE = re.compile(r"^# (.*)$", re.M)


def _title(notebook: Path) -> str | None:
    """The notebook's title: the first ``# `` heading of its first Markdown cell."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] == "markdown":
            found = _TITLE.search("".join(cell["source"]))
            return found.group(1).strip() if found else None
    return None


def _relative(path: Path) -> str:
    return path.relative_to(paths.ROOT).as_posix()


def _line_of(path: Path, pattern: str) -> int:
    """The first line of ``path`` matching ``pattern`` (1 when none does)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if re.search(pattern, line):
            return number
    return 1


def own_files(entry: lessons.Lesson) -> dict[str, str]:
    """The files a lesson brings (relative path: what it holds), in CONTRIBUTING's order."""
    module = entry.slug.replace("-", "_")
    return {
        f"lessons/{entry.name}.ipynb": "the notebook",
        f"helpers/exercises/lesson{entry.id}.py": "the exercises' checks (its CHECKS) and the prediction's comparison",
        f"lessons/solutions/lesson{entry.id}.py": "a solution per exercise",
        f"tests/test_exercises_lesson{entry.id}.py": "the checks' tests and its TYPICAL wrong answers",
        f"helpers/findings/{module}.py": "the sentences that quote measured figures",
        f"tests/test_findings_{module}.py": "the findings' tests, live-like and replayed",
    }


def missing_files() -> list[Problem]:
    """The files of each lesson (:func:`own_files`) that are not there."""
    found = []
    for entry in lessons.LESSONS:
        for file, holds in own_files(entry).items():
            if not (paths.ROOT / file).exists():
                found.append(Problem(file, 1, f"missing: {entry.name} needs {holds} here (CONTRIBUTING.md, "
                                     "'Add a lesson')"))
    return found


def registry_and_notebooks() -> list[Problem]:
    """Every notebook in lessons/ is registered, in order, and announces the registry's title."""
    found = []
    registry = "helpers/lessons.py"
    on_disk = sorted(p.stem for p in paths.LESSONS.glob("[0-9][0-9]-*.ipynb"))
    registered = [entry.name for entry in lessons.LESSONS]
    for stem in sorted(set(on_disk) - set(registered)):
        found.append(Problem(registry, _line_of(paths.PACKAGE / "lessons.py", r"^\)$"), f"lessons/{stem}.ipynb is "
                             f"not registered: add Lesson(\"{stem[:2]}\", \"{stem[3:]}\", ...) to LESSONS, in order"))
    for stem in sorted(set(registered) - set(on_disk)):
        found.append(Problem(registry, registry_line(stem[:2]), f"lessons/{stem}.ipynb does not exist: add the "
                             "notebook, or fix the id and slug here"))
    want = [f"{n:02d}" for n in range(len(lessons.LESSONS))]
    if list(lessons.ids()) != want:
        found.append(Problem(registry, 1, f"the ids must run {want[0]} to {want[-1]} in order; they are "
                             f"{', '.join(lessons.ids())}"))
    for entry in lessons.LESSONS:
        path = entry.notebook()
        if not path.exists():
            continue
        want_title = f"{entry.id} · {entry.title}"
        if _title(path) != want_title:
            found.append(Problem(_relative(path), _line_of(path, r'"# '), f"the first cell's title must read "
                                 f"'# {want_title}' (helpers/lessons.py:{registry_line(entry.id)} holds the title)"))
    return found


def promise() -> list[Problem]:
    """No lesson over LESSON_MINUTES, the course within COURSE_MINUTES, each plan within its time."""
    found = []
    registry = paths.PACKAGE / "lessons.py"
    for entry in lessons.LESSONS:
        if entry.minutes > lessons.LESSON_MINUTES:
            found.append(Problem("helpers/lessons.py", registry_line(entry.id), f"{entry.name} takes {entry.minutes} "
                                 f"minutes, over the {lessons.LESSON_MINUTES} a lesson may: move optional asides "
                                 "below its '## Going deeper' heading, or split it"))
    total = lessons.total_minutes()
    if total > lessons.COURSE_MINUTES:
        found.append(Problem("helpers/lessons.py", _line_of(registry, r"^COURSE_MINUTES ="), f"the lessons add up "
                             f"to {total} minutes, over the course's {lessons.COURSE_MINUTES}: trim or split lessons "
                             "as the comment above says; only the maintainers raise COURSE_MINUTES, in an issue"))
    for row in plans():
        plan = row["plan"]
        if plan.budget and row["minutes"] > plan.budget:
            found.append(Problem("helpers/tools/derived.py", _line_of(paths.PACKAGE / "tools" / "derived.py",
                                                                      re.escape(f'Plan("{plan.name}"')),
                                 f"{plan.name}: lessons {row['ids']} take {row['minutes']} minutes, over its "
                                 f"{plan.budget}: end the plan at an earlier lesson"))
    return found


def problems() -> list[Problem]:
    """Every consistency problem: a lesson's missing files, registry against notebooks, the course-length promise,
    and what ``python -m helpers sync`` would still write."""
    return missing_files() + registry_and_notebooks() + promise() + stale() + translations()


def translations() -> list[Problem]:
    """The Chinese edition: a declared lesson's cells or a marked string without a current translation
    (helpers.i18n.workflow; ``python -m helpers i18n status`` says where each lesson stands)."""
    from ..i18n import workflow

    return [Problem(file, 1, message) for file, message in workflow.problems()]


def report(found: list[Problem]) -> str:
    """The problems, one a line, and the command that writes the derived files."""
    if not found:
        return "The registry, the lessons and every file derived from them agree."
    return "\n".join([*map(str, found), f"(`{COMMAND}` writes what derives from the registry; the rest is yours.)"])
