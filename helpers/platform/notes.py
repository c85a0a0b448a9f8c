"""The sentence a lesson shows about this machine, where its platform changes the lesson.

``platform_note("keep-enough-bytes-in-flight")`` (or its id) reads this machine once
(:func:`helpers.platform.facts.current`) and returns what differs here from the reference GPU the lesson was written on:
an integrated GPU, HMM, WSL2, native host atomics, no /proc, a small page-locked memory limit. Pass ``facts`` to see
another platform's note.
"""

from __future__ import annotations

from functools import lru_cache

from .. import records
from ..i18n import N_, _
from ..lessons import find, ids, lesson_id
from .doctor import PROC_LESSONS, diagnose, gpu_effects, lesson_effects, shows_gpu_measurements
from .facts import Facts, GpuFacts, current, gpu_from_record

__all__ = ["platform_note", "reference_gpu", "recorded_linux_view", "HOLDS", "holds"]

# the replay note's sentence where the recorded GPU changes nothing, up to the GPU's name and a full stop
HOLDS = "This lesson's conclusions hold as written for the "
_STATUS = {"blocked": N_("blocked"), "changed": N_("changed")}   # how _overview names a lesson's state
_HOLDS_SENTENCE = N_("This lesson's conclusions hold as written for the {gpu}.")


def holds() -> str:
    """:data:`HOLDS` in the chosen language, up to the GPU's name (use-write-combined-and-registered-memory)."""
    return _(_HOLDS_SENTENCE).split("{gpu}")[0]


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


def _sentences(*texts: str) -> str:
    """Sentences one after another: a space between them in English, none in Chinese."""
    joined = texts[0]
    for text in texts[1:]:
        joined = _("{sentence} {next}").format(sentence=joined, next=text)
    return joined


def _where(facts: Facts, plain: bool = False) -> str:
    """The machine in a few names; ``plain`` (a lesson's note) leaves out a container and a VM's hypervisor, which
    no lesson defines: a VM that changes a lesson says so in its own sentence."""
    plat = diagnose(facts)["platform"]
    names = [_("container") if name == "container" else _("VM ({name})").format(name=name[4:-1])
             if name.startswith("VM (") else name for name in plat["names"]
             if not (plain and (name == "container" or name.startswith("VM (")))]
    if facts.gpu is not None and facts.mode == "live":
        names.insert(0, facts.gpu.name)
    return _(", ").join(names)


def _overview(facts: Facts, reference: GpuFacts | None) -> str:
    lessons = diagnose(facts, reference)["lessons"]
    odd = _(", ").join(_("{lesson} ({status})").format(lesson=lesson, status=_(_STATUS.get(e["status"], e["status"])))
                       for lesson, e in lessons.items() if e["status"] not in ("live", "replay"))
    if facts.mode == "live":
        head = (_("lessons run live, except {odd}").format(odd=odd) if odd
                else _("every lesson runs live as written"))
    else:
        gpu = reference.name if reference else "GPU"
        head = (_("every GPU measurement replays the recorded {gpu}; besides, {odd}").format(gpu=gpu, odd=odd)
                if odd else _("every GPU measurement replays the recorded {gpu}").format(gpu=gpu))
    return _("{head}. Each lesson concerned says why; `python -m helpers doctor` lists everything.").format(head=head)


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
    where = _("On this machine ({where}): ").format(where=_where(facts))
    parts = []
    if start:
        parts.append(where + _overview(facts, reference))
    if (facts.mode != "live" and reference is not None and not start and shows_gpu_measurements(key)
            and not _os_only(key)):
        recorded = [e.text for e in gpu_effects(reference, None) if e.lesson == key]
        parts.append(_sentences(
            _("Replay: the GPU measurements shown are those of the recorded {gpu}.").format(gpu=reference.name),
            _("For the {gpu}: {notes}").format(gpu=reference.name, notes=_sentences(*recorded)) if recorded
            else _(_HOLDS_SENTENCE).format(gpu=reference.name)))
    texts = [e.text for e in found]
    if texts:
        parts.append(_sentences(*texts) if start else   # a sentence of its own: each text starts with a capital
                     _sentences(_("This machine: {where}.").format(where=_where(facts, plain=True)), *texts))
    elif facts.mode == "live" and not start:
        parts.append(where + _("nothing in this lesson depends on a difference from the reference {gpu}; it runs "
                               "as written.").format(gpu=reference.name if reference else "GPU"))
    if key in PROC_LESSONS and not facts.proc_available:
        parts.append(recorded_linux_view())
    return "\n".join(parts)
