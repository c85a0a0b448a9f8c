"""pin-host-memory's narration: what this process's page table showed at a first touch and under ``mlock``, and the
compaction setting, computed from what the lesson's cells read in /proc (live on any Linux machine, in both modes).

Each function returns Markdown (:class:`helpers.tables.Text`, :func:`~helpers.tables.bullets`) that a lesson cell
shows as its last expression. Where frame numbers are hidden (not root), the frames shown are the ones recorded on
the reference machine, and the sentence says they are recorded.
"""

from __future__ import annotations

from typing import Any, Sequence

from .. import lessons
from ..memory import pages
from ..platform.notes import platform_note
from ..tables import Text, bullets


def this_machine() -> Text:
    """What this machine changes in this lesson, beside the reference GPU."""
    return Text(platform_note(lessons.lesson_id("pin-host-memory")))


def _present(frames: Sequence[pages.Frame]) -> int:
    return sum(1 for f in frames if f.present)


def first_touch(array: Any, before: Sequence[pages.Frame], after: Sequence[pages.Frame],
                recorded: Any = None) -> Text:
    """A fresh array's pages before and after its first write: how many had a frame, which frames (this process's
    where it may read them, else the ones ``recorded`` on the reference machine), and its /proc/self/maps line."""
    n = len(after)
    pfns = [f.pfn for f in after]
    if any(p is not None for p in pfns):
        frames = f"the frames after the write (this process reads them, as root): {pfns}"
    else:
        if recorded is None:
            from ..experiments import reference

            recorded = reference("pagemap_pinned")
        frames = ("frame numbers are hidden from this process (not root: the OS kernel zeroes them; the presence "
                  f"bits stay real). Recorded as root on {recorded.gpu}'s host for a touched 64 KiB pageable "
                  f"buffer: {recorded.one(allocation='pageable, touched')['pfns']}")
    touched = "every" if _present(after) == n else f"{_present(after)} of {n}"
    return bullets([
        f"{array.nbytes} bytes at `{array.ctypes.data:#x}`, {n} pages of {pages.PAGE_SIZE} bytes.",
        f"present before the first write: **{_present(before)} of {len(before)}** pages; after it: "
        f"**{_present(after)} of {n}** ({touched} page faulted in at its first touch).",
        frames + ".",
        f"its line in /proc/self/maps: `{pages.mapping_of(array.ctypes.data).line}`",
    ])


def _limit(value: int | None) -> str:
    return "unlimited" if value is None else f"{value // 1024} KiB"


def mlocked(vmlck_kib: Sequence[int], present: int, total: int,
            limit: tuple[int | None, int | None] | None = None) -> Text:
    """What ``mlock`` did to ``total`` untouched pages: ``VmLck`` before, while locked and after ``munlock``
    (``vmlck_kib``), and how many pages had a frame right after it, without a touch (``present``)."""
    soft, hard = limit if limit is not None else pages.memlock_limit()
    before, locked, after = vmlck_kib
    back = "back to where it was" if after == before else f"not back to {before} KiB"
    return bullets([
        f"`RLIMIT_MEMLOCK` (`ulimit -l`): soft {_limit(soft)}, hard {_limit(hard)}.",
        f"`VmLck`: {before} KiB before, **{locked} KiB** while locked ({locked - before:+d} KiB), "
        f"{after} KiB after munlock ({back}).",
        f"pages with a frame right after mlock, without any touch: **{present} of {total}**.",
    ])


def compaction(setting: str | None) -> Text:
    """What ``/proc/sys/vm/compact_unevictable_allowed`` (its text, or None where it is absent) says about
    mlocked pages."""
    if setting is None:
        return Text("This OS kernel has no `compact_unevictable_allowed` setting (built without compaction).")
    value = setting.strip()
    verdict = ("compaction **MAY move** mlocked pages to other frames on this machine" if value == "1" else
               "compaction **may not move** mlocked pages on this machine")
    return Text(f"`compact_unevictable_allowed` = {value}: {verdict}.")
