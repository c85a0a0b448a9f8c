"""map-pages-on-the-cpu's narration: page walks of this machine's arrays (read live from /proc, on any Linux) and of
the pinned CUDA buffer recorded by ``pagemap_pinned`` (live on a GPU), as Markdown for the lesson to show.

Each function takes what the lesson measured (page walks, :class:`helpers.memory.pages.Frame` lists, or a result)
and says what it shows, so the sentence beside a figure is computed from the very frames the figure draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import lessons
from ..experiments.result import Result, reference
from ..memory import pages
from ..platform import machine
from ..platform.notes import platform_note
from ..i18n import N_, _
from ..tables import Shown, Table, Text, bullets, join

LESSON = "map-pages-on-the-cpu"
_DIRECTIONS = (N_("ascending"), N_("descending"))   # the directions of pages.frame_runs, shown translated


def size_in_words(nbytes: int) -> str:
    """A size in one unit per scale: "1 GiB", "2 MiB", "64 KiB" (never "2048 KiB")."""
    if nbytes and nbytes % (1 << 30) == 0:
        return f"{nbytes >> 30} GiB"
    return f"{nbytes >> 20} MiB" if nbytes and nbytes % (1 << 20) == 0 else f"{nbytes // 1024} KiB"


def neighbours(pfns: Sequence[int]) -> str:
    """Which neighbouring pages got neighbouring frames, in plain words (the figures' and the pinned buffer's)."""
    found = pages.frame_runs(list(pfns))
    if all(r.length == 1 for r in found):
        return _("no two neighbouring pages got neighbouring frames")
    if len(found) == 1:
        return _("all {n_pfns} pages got neighbouring frames, in {direction} order").format(
                   n_pfns=len(pfns), direction=_(found[0].direction))
    largest = max(r.length for r in found)
    return (_("the {n_pfns} pages got {n_found} stretches of neighbouring frames, the longest {largest} pages").format(
                n_pfns=len(pfns), n_found=len(found), largest=largest))


def this_machine() -> Shown:
    """What this machine changes in the lesson, its page size, and whether it shows frame numbers: where they are
    hidden, why, said once here (the tables below then leave their frame columns out)."""
    visible = pages.pfns_visible()
    return join(Text(platform_note(LESSON)),
                Text((_("Page size {size} bytes; physical frame numbers visible to this process") if visible else
                      _("Page size {size} bytes; physical frame numbers hidden from this process")).format(
                          size=pages.PAGE_SIZE)
                     + (_(".") if visible else _(HIDDEN) if pages.proc_available() else _(" (no /proc here)."))))


HIDDEN = N_(": since Linux 4.2 only root (CAP_SYS_ADMIN) reads them, because knowing where data sit physically helps "
            "attacks on memory ([pagemap documentation](https://docs.kernel.org/admin-guide/mm/pagemap.html)). "
            "Presence bits stay visible; the tables leave frames out.")


def walk(frames: Sequence[pages.Frame], per_page: int = pages.PAGE_SIZE // 4) -> Table:
    """An array's page walk, one row per page: its elements (float32), virtual page, frame and physical address."""
    visible = any(f.pfn for f in frames)   # hidden: this_machine() said why, once; no columns of "hidden"
    rows = [[f"{i * per_page}-{(i + 1) * per_page - 1}", f"{frame.virtual_page:#x}"]
            + ([f"{frame.pfn:#x}", f"{frame.physical_address:#x}"] if visible else []) for i, frame in enumerate(frames)]
    head = [_("elements"), _("virtual page")] + ([_("frame (PFN)"), _("physical address")] if visible else [])
    return Table(head, rows)


@dataclass(frozen=True)
class Drawn:
    """Pages and the frames to draw for them, and where the frames come from."""

    virtual_pages: list[int]
    pfns: list[int]
    live: bool
    source: str

    @property
    def title(self) -> str:
        what = _("A NumPy array's pages on this machine") if self.live else _("An ordinary buffer")
        return f"{what} ({self.source})"


def drawable(array: np.ndarray) -> Drawn:
    """The frames of ``array`` where this process may read them (live), else the 8 first pages of the touched pageable
    buffer recorded in the recording VM (frames read as root there)."""
    if pages.pfns_visible():
        found = pages.frames_of(array)
        return Drawn([f.virtual_page for f in found], [f.pfn for f in found], True, "live")  # type: ignore[misc]
    recorded = reference("pagemap_pinned")
    row = recorded.one(allocation="pageable, touched")
    first = int(row["address"], 16) // pages.PAGE_SIZE
    vm = recorded.provenance.get("virtualization") not in (None, "", "none")
    where = _("in the recording VM") if vm else _("on the {gpu}'s recording machine").format(gpu=recorded.gpu)
    return Drawn([first + i for i in range(8)], list(row["pfns"][:8]), False,
                 _("the first 8 of its {total} pages, read as root {where}; frames are hidden here").format(
                     total=len(row["pfns"]), where=where))


def crossings(pfns: Sequence[int]) -> int:
    """How many pairs of the figure's arrows cross. The figure stacks the frames in ascending order, so the arrows
    of pages i < j cross exactly where page i's frame is larger than page j's (an inversion), adjacent or not."""
    return sum(a > b for i, a in enumerate(pfns) for b in pfns[i + 1:])


def arrows(drawn: Drawn) -> Text:
    """What the figure of ``drawn`` shows: the runs of consecutive frames, and how many pairs of its arrows cross
    (:func:`crossings`); the title says where the frames come from, the sentence only whether live or recorded."""
    pfns = drawn.pfns
    crossed, pairs = crossings(pfns), len(pfns) * (len(pfns) - 1) // 2
    if crossed == 0:
        crossing = _("the arrows run parallel")
    elif crossed == pairs:
        crossing = _("every frame is smaller than all before it, so every arrow crosses every other one")
    else:
        crossing = _("{crossed} of the {pairs} pairs of arrows cross (a pair crosses wherever the earlier page has "
                     "the larger frame)").format(crossed=crossed, pairs=pairs)
    return Text(_("In the drawing ({source}), {neighbours}: {crossing}.").format(
        source=_("live") if drawn.live else _("recorded"), neighbours=neighbours(pfns), crossing=crossing))


def _distinct(frames: Sequence[pages.Frame]) -> int:
    return len({f.pfn for f in frames if f.pfn})


def first_touch(untouched: Sequence[pages.Frame], read: Sequence[pages.Frame],
                written: Sequence[pages.Frame]) -> Table:
    """Section 3's three walks of one private mapping: pages present and distinct frames, untouched, read, written."""
    visible = any(f.pfn for walk_ in (untouched, read, written) for f in walk_)
    rows = [[_(label), _("{present} of {n}").format(present=sum(f.present for f in walk_), n=len(walk_))]
            + ([_distinct(walk_)] if visible else [])
            for label, walk_ in ((N_("never touched"), untouched), (N_("after reading"), read),
                                 (N_("after writing"), written))]
    head = [_("the 8 private pages"), _("present")] + ([_("distinct frames")] if visible else [])
    return Table(head, rows, caption=_("*live, this machine*"))


def shares_a_frame(read: Sequence[pages.Frame]) -> bool:
    """Whether reading mapped several pages to one frame (which only a process that sees frames can tell)."""
    frames = [f.pfn for f in read if f.present and f.pfn]
    return len(frames) == len(read) > 0 and len(set(frames)) < len(frames)


def zero_page(read: Sequence[pages.Frame]) -> Text:
    """What the read-only walk shows about the shared zero page."""
    if shares_a_frame(read):
        if _distinct(read) == 1:
            return Text(_("Read but never written, the {n_read} pages all map one frame: the OS kernel's shared "
                          "zero page (drawn below).").format(n_read=len(read)))
        return Text(_("Read but never written, the {n_read} pages map only {distinct} frames: the OS kernel's "
                      "shared zero page among them (drawn below).").format(n_read=len(read), distinct=_distinct(read)))
    if any(f.present for f in read) and not any(f.pfn for f in read):
        return Text(_("Without root, whether the read pages share one frame (the shared zero page) cannot be "
                      "seen here; run as root on Linux to see it drawn."))
    if not any(f.present for f in read):
        return Text(_("Reading mapped no pages on this machine (the OS kernel gave read faults no frame), so there "
                      "is nothing to draw: the presence bits above say what happened."))
    return Text(_("Read but never written, the {n_read} pages map {distinct} distinct frames: on this machine "
                  "reading did not share one frame between them.").format(n_read=len(read), distinct=_distinct(read)))


def zero_page_title(read: Sequence[pages.Frame]) -> str:
    """The title of the read-only walk's figure, drawn live when :func:`shares_a_frame`."""
    if _distinct(read) == 1:
        return _("Read, never written: every page maps one frame (live)")
    return _("Read, never written: {n_read} pages map {distinct} frames (live)").format(
        n_read=len(read), distinct=_distinct(read))


def two_views(view1: np.ndarray, view2: np.ndarray) -> Table:
    """Section 4's two mappings of one memfd: their addresses, first values and frames."""
    frames = [pages.frames_of(v) for v in (view1, view2)]
    visible = any(f.pfn for walk_ in frames for f in walk_)
    if visible:
        assert [f.pfn for f in frames[0]] == [f.pfn for f in frames[1]], "two mappings of one file, other frames"
    rows = [[name, f"{v.ctypes.data:#x}", f"{v[0]:g}"] + ([", ".join(f"{f.pfn:#x}" for f in walk_)] if visible else [])
            for name, v, walk_ in (("view1", view1, frames[0]), ("view2", view2, frames[1]))]
    head = [_("view"), _("virtual address"), _("first element")] + ([_("frames")] if visible else [])
    return Table(head, rows, caption=_("*live, this machine*"))


_THP_MODES = {   # /sys/kernel/mm/transparent_hugepage/enabled's modes, as the transhuge documentation gives them
    "always": N_("huge pages wherever the OS kernel can"),
    "madvise": N_("huge pages only where a program asks with `madvise(MADV_HUGEPAGE)`"),
    "never": N_("no huge pages"),
}


def _pool(folder: Path) -> str:
    count = folder / "nr_hugepages"
    return count.read_text().strip() if count.exists() else "?"


def huge_page_settings(root: Path = Path("/")) -> Text:
    """This machine's transparent-huge-page mode, in words, and the explicit huge-page sizes its OS kernel offers
    (/sys/kernel/mm/hugepages/: one folder per size), 1 GiB among them or not."""
    thp = root / "sys/kernel/mm/transparent_hugepage/enabled"
    setting = thp.read_text().strip() if thp.exists() else ""
    mode = setting.split("[")[1].split("]")[0] if "[" in setting else ""
    items = [(_("transparent huge pages: `{setting}`; the bracketed one is active: {meaning} "
                "([transhuge](https://docs.kernel.org/admin-guide/mm/transhuge.html))").format(
                  setting=setting, meaning=_(_THP_MODES[mode])) if mode in _THP_MODES
              else _("transparent huge pages: not available"))]
    folders = root / "sys/kernel/mm/hugepages"
    sizes = {int(f.name[10:-2]) * 1024: f for f in (folders.iterdir() if folders.is_dir() else ())
             if f.name.startswith("hugepages-") and f.name.endswith("kB") and f.name[10:-2].isdigit()}
    offered = _(", ").join(_("{size} ({count} set aside)").format(size=size_in_words(size), count=_pool(sizes[size]))
                           for size in sorted(sizes))
    items.append(_("explicit huge pages (hugetlbfs) offered in `/sys/kernel/mm/hugepages/`: {offered}{no_gib}").format(
        offered=offered or _("none"), no_gib="" if 1 << 30 in sizes else _("; no 1 GiB pages")))
    return bullets(items)


def _pinned(pinning: Result) -> dict[str, Any]:
    return pinning.one(allocation="cudaHostAlloc mapped")


def pinned_pages(pinning: Result) -> tuple[list[int], list[int | None], str]:
    """Every virtual page of the recorded (or live) pinned buffer, their frames, and a figure title that says how
    many pages and bytes it draws."""
    row = _pinned(pinning)
    first, count = int(row["address"], 16) // pages.PAGE_SIZE, int(row["pages"])
    title = (_("A {size_in_words} cudaHostAlloc'd buffer, all {count} pages, in the CPU's page table ({gpu}, "
               "{value})").format(
                 size_in_words=size_in_words(count * pages.PAGE_SIZE), count=count, gpu=pinning.gpu, value=_("live") if pinning.live else _("recorded")))
    return [first + i for i in range(count)], list(row["pfns"][:count]), title


def pinned_buffer(pinning: Result) -> Text:
    """The pinned buffer as the CPU's page table holds it: alignment, mapping, runs, and whether one 2 MiB page is
    ruled out (the verdict only: exercise 2 has the learner derive the conditions, issue 31)."""
    row = _pinned(pinning)
    start, pfns = int(row["address"], 16), row["pfns"]
    aligned = _("aligned") if start % pages.HUGE_PAGE_SIZE == 0 else _("not aligned")
    size = row["pages"] * pages.PAGE_SIZE
    items = [_("a {size_in_words} buffer ({pages} pages) at address {start:#x}, {aligned} to 2 MiB; "
               "{present_pages} of {pages} pages present").format(
                 size_in_words=size_in_words(size), pages=row['pages'], start=start, aligned=aligned, present_pages=row['present_pages']),
             _("the driver's mapping around it (its range in `/proc/self/maps`, {lesson}): {size_in_words}").format(
                 lesson=lessons.lesson("pin-host-memory").label, size_in_words=size_in_words(row['mapping_bytes']))
             + (_(" (more than was asked for)")
                if row["mapping_bytes"] > size else "")]
    if None in pfns:
        items.append(_("frames physically consecutive: unknown (frames hidden)"))
    else:
        items.append(_("frames: {neighbours}").format(neighbours=neighbours(pfns)))
    huge = pages.huge_page_possible(start, pfns)
    items.append(_("one 2 MiB huge page behind it: {value}").format(value=_("not ruled out") if huge else _("ruled out")))
    head = (f"**{pinning.describe()}** {machine.address_caveat(pinning.provenance, live=pinning.live, brief=True)}")
    return Text(head + "\n\n" + bullets(items))
