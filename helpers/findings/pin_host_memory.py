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
from ..exercises.lesson13 import recording_machine
from ..i18n import _
from ..platform.notes import platform_note
from ..tables import Text, bullets


def this_machine() -> Text:
    """What this machine changes in pin-host-memory: it reads /proc and runs live; no GPU measurement."""
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
        frames = _("the frames after the write (this process reads them, as root): {pfns}").format(pfns=pfns)
    else:
        if recorded is None:
            from ..experiments import reference

            recorded = reference("pagemap_pinned")
        frames = _("frame numbers are hidden from this process (not root: the OS kernel zeroes them; the presence "
                   "bits stay real). Read as root in {machine} for a touched 64 KiB pageable buffer: {pfns}").format(
                       machine=recording_machine(recorded.provenance),
                       pfns=recorded.one(allocation="pageable, touched")["pfns"])
    touched = _("every") if _present(after) == n else _("{present} of {n}").format(present=_present(after), n=n)
    return bullets([
        _("{nbytes} bytes at `{address:#x}`, {n} pages of {page} bytes.").format(
            nbytes=array.nbytes, address=array.ctypes.data, n=n, page=pages.PAGE_SIZE),
        _("present before the first write: **{before} of {total}** pages; after it: **{after} of {n}** ({touched} "
          "page faulted in at its first touch).").format(before=_present(before), total=len(before),
                                                          after=_present(after), n=n, touched=touched),
        frames + _("."),
        _("its line in /proc/self/maps: `{line}`").format(line=pages.mapping_of(array.ctypes.data).line),
    ])


def _limit(value: int | None) -> str:
    return _("unlimited") if value is None else f"{value // 1024} KiB"


def mlocked(vmlck_kib: Sequence[int], present: int, total: int,
            limit: tuple[int | None, int | None] | None = None) -> Text:
    """What ``mlock`` did to ``total`` untouched pages: ``VmLck`` before, while locked and after ``munlock``
    (``vmlck_kib``), and how many pages had a frame right after it, without a touch (``present``)."""
    soft, hard = limit if limit is not None else pages.memlock_limit()
    before, locked, after = vmlck_kib
    back = _("back to where it was") if after == before else _("not back to {before} KiB").format(before=before)
    return bullets([
        _("`RLIMIT_MEMLOCK` (`ulimit -l`): soft {soft}, the most an unprivileged process may lock (one with "
          "`CAP_IPC_LOCK`, root usually, has no limit: [mlock(2)](https://man7.org/linux/man-pages/man2/mlock.2.html)); "
          "hard {hard}, the most a process without privilege may raise it to "
          "([getrlimit(2)](https://man7.org/linux/man-pages/man2/getrlimit.2.html))."
          ).format(soft=_limit(soft), hard=_limit(hard)),
        _("`VmLck`: {before} KiB before, **{locked} KiB** while locked ({change:+d} KiB), {after} KiB after munlock "
          "({back}).").format(before=before, locked=locked, change=locked - before, after=after, back=back),
        _("pages with a frame right after mlock, without any touch: **{present} of {total}**.").format(
            present=present, total=total),
    ])


def compaction(setting: str | None) -> Text:
    """What ``/proc/sys/vm/compact_unevictable_allowed`` (its text, or None where it is absent) says about
    mlocked pages."""
    if setting is None:
        return Text(_("This OS kernel has no `compact_unevictable_allowed` setting (built without compaction)."))
    value = setting.strip()
    verdict = (_("compaction **may move** mlocked pages to other frames on this machine") if value == "1" else
               _("compaction **may not move** mlocked pages on this machine"))
    return Text(_("`compact_unevictable_allowed` = {value}: {verdict}.").format(value=value, verdict=verdict))
