"""The sentence a lesson shows about this machine, where its platform changes the lesson.

``platform_note("keep-enough-bytes-in-flight")`` (or its id) reads this machine once
(:func:`helpers.platform.facts.current`) and returns what differs here from the reference GPU the lesson was written on:
an integrated GPU, HMM, WSL2, native host atomics, no /proc, a small page-locked memory limit. Pass ``facts`` to see
another platform's note.
"""

from __future__ import annotations

from functools import lru_cache

from .. import records
from ..lessons import find, ids, lesson_id
from .doctor import PROC_LESSONS, diagnose, gpu_effects, lesson_effects, shows_gpu_measurements
from .facts import Facts, GpuFacts, current, gpu_from_record

__all__ = ["platform_note", "reference_gpu", "recorded_linux_view", "HOLDS"]

# the replay note's sentence where the recorded GPU changes nothing, up to the GPU's name and a full stop
HOLDS = "This lesson's conclusions hold as written for the "


@lru_cache(maxsize=1)
def reference_gpu() -> GpuFacts | None:
    """The reference record's GPU (the H200), or None when data/ holds no record."""
    try:
        record, _ = records.reference_record()
    except records.RecordError:
        return None
    return gpu_from_record(record["provenance"])


def recorded_linux_view() -> str:
    """The reference record's page-table view of a few buffers, one line each (the /proc lessons without /proc)."""
    try:
        record, path = records.reference_record()
    except records.RecordError as exc:
        return f"(no recorded view: {exc})"
    rows = record["experiments"].get("pagemap_pinned", {}).get("rows", [])
    lines = [f"Recorded on {record['provenance']['gpu']}'s Linux host ({record['provenance']['date'][:10]}, "
             f"data/{path.name}), /proc/self/pagemap and maps:"]
    for row in rows:
        if "pages" in row:
            lines.append(f"  {row['allocation']:38s} {row['present_pages']:2d} of {row['pages']} pages present; "
                         f"maps: {' '.join(row['maps_line'].split())}")
    return "\n".join(lines)


_HOST_WALKS = frozenset({"pagemap_pinned"})   # recorded experiments that read the host's page tables, not the GPU


def _os_only(lesson: str) -> bool:
    """Whether a lesson's conclusions are about this machine's OS pages, not the recorded GPU (map-pages-on-the-cpu:
    no kernel, and its only recording is a host page walk)."""
    entry = find(lesson)
    return entry is not None and not entry.kernels and set(entry.experiments) <= _HOST_WALKS


def _lesson(lesson: str | int) -> str:
    found = find(lesson)
    if found is None:
        raise ValueError(f"No lesson {lesson!r}; the lessons are {', '.join(ids())}.")
    return found.id


def _where(facts: Facts) -> str:
    plat = diagnose(facts)["platform"]
    gpu = f"{facts.gpu.name}, " if facts.gpu is not None and facts.mode == "live" else ""
    return f"{gpu}{', '.join(plat['names'])}"


def _overview(facts: Facts, reference: GpuFacts | None) -> str:
    lessons = diagnose(facts, reference)["lessons"]
    odd = [f"{lesson} ({entry['status']})" for lesson, entry in lessons.items()
           if entry["status"] not in ("live", "replay")]
    if facts.mode == "live":
        head = "every lesson runs live as written" if not odd else "lessons run live, except " + ", ".join(odd)
    else:
        head = "every GPU measurement replays the recorded " + (reference.name if reference else "GPU") + (
            "" if not odd else "; besides, " + ", ".join(odd))
    return f"{head}. Each lesson concerned says why; `python -m helpers doctor` lists everything."


def platform_note(lesson: str | int, facts: Facts | None = None, reference: GpuFacts | None = None) -> str:
    """What this machine changes in ``lesson``, as a few sentences (by id or slug).

    Live, the notes come from this GPU's attributes and this platform; in replay, from the recorded GPU's
    attributes (what the figures shown hold for) and this platform (no /proc, no compiler).
    """
    key = _lesson(lesson)
    start = key == lesson_id("start-here")
    facts = facts or current()
    reference = reference or reference_gpu()
    found = lesson_effects(facts, reference)[key]
    where = f"On this machine ({_where(facts)})"
    parts = []
    if start:
        parts.append(f"{where}: {_overview(facts, reference)}")
    if (facts.mode != "live" and reference is not None and not start and shows_gpu_measurements(key)
            and not _os_only(key)):
        recorded = [e.text for e in gpu_effects(reference, None) if e.lesson == key]
        parts.append(f"Replay: the GPU measurements shown are those of the recorded {reference.name}. "
                     + (f"For the {reference.name}: {' '.join(recorded)}" if recorded
                        else f"{HOLDS}{reference.name}."))
    texts = [e.text for e in found]
    if texts:
        parts.append(("" if start else f"{where}: ") + " ".join(texts))
    elif facts.mode == "live" and not start:
        parts.append(f"{where}: nothing in this lesson depends on a difference from the reference "
                     f"{reference.name if reference else 'GPU'}; it runs as written.")
    if key in PROC_LESSONS and not facts.proc_available:
        parts.append(recorded_linux_view())
    return "\n".join(parts)
