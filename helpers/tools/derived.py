"""What other files repeat of the registry (helpers/lessons.py), written by one command: ``python -m helpers sync``.

A new lesson is its own files (notebook, registry entry, exercise module and solution, findings module, their
tests); :func:`sync` then writes everything that follows from them:

- each notebook's ``**Time to complete:** N minutes`` and Colab's GPU metadata, and the registry's minutes, from the
  estimate (helpers.tools.lesson_times; the words a lesson's outputs show are counted again first, in replay, for
  the lessons whose code changed: lessons/.output-words.json);
- between markers, the README's lesson table, its Colab badges and its course length;
- the instructor guide's lesson headings (a stub section for a lesson it lacks) and, between markers, its plans;
- data/README.md's lessons column of the experiments table.

:func:`stale` says, file and line, what :func:`sync` would change (``python -m helpers check``, the tests).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import lessons, paths
from ..lessons import PLANS, Plan, plans   # kept beside the lessons: the Chinese guide reads them too
from . import lesson_times, repository

__all__ = ["Plan", "PLANS", "Problem", "plans", "sync", "stale", "COMMAND"]

COMMAND = "python -m helpers sync"
COLAB_METADATA = {"accelerator": "GPU", "colab": {"provenance": []}}
_TIME = re.compile(r"(\*\*Time to complete:\*\*\s*)(\d+)(\s*minutes)")
_HEADING = re.compile(r"^### (\d\d) · .*$", re.M)


@dataclass(frozen=True)
class Problem:
    """Something behind the registry: the file, its line (1-based) and what to do there."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


def _hours(minutes: int) -> str:
    return f"{minutes / 60:g} hours" if minutes % 30 == 0 else f"{minutes // 60} h {minutes % 60} min"


# --------------------------------------------------------------------------- the blocks between markers
def _readme_lessons() -> str:
    rows = [f"| [{e.name}](lessons/{e.name}.ipynb) | {e.minutes} min | {e.does} |" for e in lessons.LESSONS]
    return "\n".join(["| Lesson | Time (estimate) | What you do |", "|---|---|---|", *rows])


def _readme_colab() -> str:
    badge = "[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
    rows = [f"| {e.name} | {badge}({repository.lesson_links(e.name)['Colab']}) |" for e in lessons.LESSONS]
    return "\n".join(["| Lesson | Colab |", "|---|---|", *rows])


def _total() -> str:
    total = lessons.total_minutes()
    return (f"{len(lessons.LESSONS)} lessons that take {total} minutes, {_hours(total)}, in all; the course promises "
            f"at most {lessons.COURSE_MINUTES} minutes and no lesson over {lessons.LESSON_MINUTES}")


def _readme_length() -> str:
    rows = []
    for row in plans():
        plan = row["plan"]
        budget = f" (about {_hours(plan.budget)})" if plan.budget else ""
        rows.append(f"- **{plan.name}**{budget}: lessons {row['ids']}, {row['minutes']} minutes: {plan.covers}.")
    return "\n".join([f"By the table's time estimates ({_total()}):", "", *rows])


def _guide_plans() -> str:
    rows = []
    for row in plans():
        plan = row["plan"]
        budget = f" ({_hours(plan.budget)})" if plan.budget else ""
        rows.append(f"| {plan.name}{budget} | {row['ids']} | {row['minutes']} | {plan.covers} |")
    return "\n".join([f"By the estimates ({_total()}; exercises included):", "",
                      "| Plan | Lessons | Minutes | What it covers |", "|---|---|---|---|", *rows])


BLOCKS: dict[str, tuple[tuple[str, Callable[[], str]], ...]] = {
    "README.md": (("lessons", _readme_lessons), ("course length", _readme_length), ("colab", _readme_colab)),
    "lessons/instructor-guide.md": (("plans", _guide_plans),),
}


def begin_marker(name: str) -> str:
    return f"<!-- {name}: written by `{COMMAND}` from helpers/lessons.py; edit there, not here -->"


def end_marker(name: str) -> str:
    return f"<!-- end of {name} -->"


def _with_block(text: str, file: str, name: str, body: str) -> str:
    begin, end = begin_marker(name), end_marker(name)
    if begin not in text or end not in text:
        raise ValueError(f"{file} lacks the markers of its {name} block: put the lines {begin!r} and {end!r} "
                         f"where {COMMAND} should write it")
    head, rest = text.split(begin, 1)
    return f"{head}{begin}\n{body}\n{end}{rest.split(end, 1)[1]}"


# --------------------------------------------------------------------------- the instructor guide's headings
def _guide_headings(text: str) -> str:
    """Each lesson's heading with the registry's minutes (its title may be shortened by hand); a stub section for a
    lesson without one, after the lesson before it, with the registry's title."""
    for entry in lessons.LESSONS:
        heading = f"### {entry.id} · {entry.title} ({entry.minutes} min)"
        found = re.search(rf"^### {entry.id} · (.*?)(?: \(\d+ min\))?$", text, re.M)
        if found:
            text = f"{text[:found.start()]}### {entry.id} · {found.group(1)} ({entry.minutes} min){text[found.end():]}"
            continue
        later = [m for m in _HEADING.finditer(text) if m.group(1) > entry.id]
        at = later[0].start() if later else text.index("\n## Plans") + 1
        stub = f"{heading}\n\nObjectives: {entry.does}.\n\n"
        text = text[:at] + stub + text[at:]
    return text


# --------------------------------------------------------------------------- data/README.md's lessons column
def _data_readme(text: str) -> str:
    from .. import experiments

    def column(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in experiments.ALL:
            return match.group(0)
        shown = ", ".join(lessons.showing(name)) or "—"
        return f"| `{name}` | {shown} |"

    return re.sub(r"^\| `(\w+)` \| [^|]* \|", column, text, flags=re.M)


# --------------------------------------------------------------------------- notebooks and the registry's minutes
def _notebook_text(entry: lessons.Lesson) -> str:
    import nbformat

    nb = nbformat.read(entry.notebook(), as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and _TIME.search(cell.source):
            cell.source = _TIME.sub(rf"\g<1>{entry.minutes}\g<3>", cell.source, count=1)
            break
    for key, value in COLAB_METADATA.items():
        nb.metadata.setdefault(key, value)
    nb.metadata["accelerator"] = "GPU"
    return nbformat.writes(nb) + "\n"


def _minutes_argument(source: str) -> dict[str, tuple[int, int, int]]:
    """Per lesson id: (line, start column, end column) of its minutes in helpers/lessons.py."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Lesson" and len(node.args) >= 4:
            first, minutes = node.args[0], node.args[3]
            if isinstance(first, ast.Constant) and isinstance(minutes, ast.Constant):
                found[first.value] = (minutes.lineno, minutes.col_offset, minutes.end_col_offset)
    return found


def registry_with_minutes(source: str, minutes: dict[str, int]) -> str:
    """helpers/lessons.py's text with these lessons' minutes written in."""
    lines = source.split("\n")
    for lesson_id, (line, start, end) in _minutes_argument(source).items():
        if lesson_id in minutes:   # ast's columns count UTF-8 bytes
            text = lines[line - 1].encode()
            lines[line - 1] = (text[:start] + str(minutes[lesson_id]).encode() + text[end:]).decode()
    return "\n".join(lines)


def registry_line(lesson_id: str) -> int:
    """The line of ``lesson_id``'s minutes in helpers/lessons.py (1 when not found)."""
    source = (paths.PACKAGE / "lessons.py").read_text(encoding="utf-8")
    return _minutes_argument(source).get(lesson_id, (1, 0, 0))[0]


# --------------------------------------------------------------------------- what the files should say
def _expected() -> dict[Path, str]:
    """Every derived file's text as the registry says (the registry's own minutes as they are)."""
    root = paths.ROOT
    texts: dict[Path, str] = {}
    for file, blocks in BLOCKS.items():
        text = (root / file).read_text(encoding="utf-8")
        for name, render in blocks:
            text = _with_block(text, file, name, render())
        texts[root / file] = text
    guide = root / "lessons" / "instructor-guide.md"
    texts[guide] = _guide_headings(texts[guide])
    data = root / "data" / "README.md"
    texts[data] = _data_readme(data.read_text(encoding="utf-8"))
    for entry in lessons.LESSONS:
        texts[entry.notebook()] = _notebook_text(entry)
    from ..i18n import workflow   # the Chinese edition: its catalogs follow the English cells, its notebooks both

    return {**texts, **workflow.expected(), **workflow.built()}


def _estimates() -> dict[str, int]:
    return {e.id: lesson_times.estimate_minutes(e.notebook()) for e in lessons.LESSONS}


def _first_difference(old: str, new: str) -> tuple[int, str]:
    a, b = old.split("\n"), new.split("\n")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i + 1, y
    return min(len(a), len(b)) + 1, (b[len(a)] if len(b) > len(a) else "")


def stale() -> list[Problem]:
    """What ``python -m helpers sync`` would change, file and line first: output words counted for other code,
    registry minutes that are not the estimate, derived files behind the registry."""
    problems = []
    for entry in lessons.LESSONS:
        if lesson_times.stored_output_words(entry.notebook()) is None:
            problems.append(Problem("lessons/.output-words.json", 1, f"the output words of {entry.name} were counted "
                                    f"for other code, or never: run `{COMMAND}` (it runs the lesson in replay)"))
    for lesson_id, estimate in _estimates().items():
        entry = lessons.lesson(lesson_id)
        if estimate != entry.minutes:
            problems.append(Problem("helpers/lessons.py", registry_line(lesson_id), f"{entry.name} takes {estimate} "
                                    f"minutes by the estimate, not {entry.minutes}: run `{COMMAND}`, which writes "
                                    f"{estimate} here and everywhere the time is repeated"))
    for path, text in _expected().items():
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old != text:
            line, want = _first_difference(old, text)
            file = path.relative_to(paths.ROOT).as_posix()
            problems.append(Problem(file, line, f"behind helpers/lessons.py: run `{COMMAND}` (this line should "
                                    f"read {want[:160]!r})"))
    return problems


def sync(count_output: bool = True) -> list[str]:
    """Count the output words of lessons whose code changed (when ``count_output``), write the estimates into the
    registry, then every derived file; the files changed, relative to the repository."""
    import importlib

    changed = []
    if count_output:
        behind = [e.notebook() for e in lessons.LESSONS if lesson_times.stored_output_words(e.notebook()) is None]
        if behind:
            lesson_times.update_output_words(behind)
            changed.append("lessons/.output-words.json")
    registry = paths.PACKAGE / "lessons.py"
    source = registry.read_text(encoding="utf-8")
    written = registry_with_minutes(source, _estimates())
    if written != source:
        registry.write_text(written, encoding="utf-8")
        importlib.reload(lessons)
        changed.append("helpers/lessons.py")
    # a derived file can follow another (the guide's catalog its English, the Chinese guide that catalog): write
    # until nothing changes, so one command is enough
    for _ in range(4):
        written = []
        for path, text in _expected().items():
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                written.append(path.relative_to(paths.ROOT).as_posix())
        changed += [file for file in written if file not in changed]
        if not written:
            break
    return changed
