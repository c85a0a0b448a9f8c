"""The course's lessons, in one table: id, slug, title, time, the kernels and experiments each runs, what the
learner does in it; and the course-length promise they keep.

Everything that lists or names lessons reads it: the doctor and the lesson notes (which lessons compile
kernels, read /proc, pin a gibibyte), the book's table of contents, the slides, the classroom, the lesson
times, the exercises and the quiet-sweep rule (which lessons rest on a sweep). ``python -m helpers sync``
(helpers.tools.derived) writes from it what other files repeat: each notebook's "Time to complete", the README's
lesson and Colab tables and course length, the instructor guide's lesson headings and plans, data/README.md's
lessons column; ``python -m helpers check`` (and the tests) say which file and line are behind.

Code names a lesson by its slug (``lesson_id("measure-bandwidth")``), so the numbers live here alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import paths

__all__ = ["Lesson", "LESSONS", "Plan", "PLANS", "plans", "COURSE_MINUTES", "LESSON_MINUTES", "ids", "total_minutes", "last", "find", "lesson",
           "lesson_id", "ids_of", "showing", "needing", "notebooks"]

# What a lesson asks of the machine besides a GPU (the doctor reads them):
PROC = "proc"      # it reads /proc/self/pagemap, maps and status
CXX = "cxx"        # it compiles the course's kernels with the C++ compiler (the CPU backend), in both modes
PINNED = "pinned"  # an experiment holds a 1 GiB page-locked buffer at once (memcpy's largest size, the latency
                   # chase's zero-copy footprint, the out-of-core data set)


@dataclass(frozen=True)
class Lesson:
    """One lesson: ``lessons/<id>-<slug>.ipynb``."""

    id: str                              # two digits, the order of the course
    slug: str                            # the file name after the id, verb first
    title: str                           # the notebook's title after "<id> · "
    minutes: int                         # its time: helpers.tools.lesson_times' estimate (`python -m helpers sync`
                                         # writes it here and into the notebook)
    kernels: tuple[str, ...] = ()        # helpers/kernels/<name>.cu it runs live, itself or through its experiments
    experiments: tuple[str, ...] = ()    # helpers.experiments it runs or shows the record of
    needs: frozenset[str] = frozenset()  # PROC, CXX, PINNED
    does: str = ""                       # what the learner does in it, in one line (start-here's course table)

    @property
    def name(self) -> str:
        """The notebook's file stem, ``06-measure-bandwidth``."""
        return f"{self.id}-{self.slug}"

    @property
    def label(self) -> str:
        """How the course's text calls it: ``lesson 06`` (第 06 课 in the Chinese edition)."""
        from .i18n import _

        return _("lesson {id}").format(id=self.id)

    def notebook(self, folder: Path | None = None) -> Path:
        """Its notebook in ``folder`` (default: the repository's lessons/)."""
        return (folder or paths.LESSONS) / f"{self.name}.ipynb"


LESSONS: tuple[Lesson, ...] = (
    Lesson("00", "start-here", "Start here: find your mode and meet your GPU", 30,
           does="See the mode, the GPU and its attributes; zero-copy in one paragraph"),
    Lesson("01", "pin-host-memory", "Pin host memory", 35,
           needs=frozenset({PROC}),
           does="Pageable vs page-locked (锁页内存) memory: frames, first touch, `mlock`"),
    Lesson("02", "measure-what-pinning-buys", "Measure what pinning buys", 30,
           experiments=("pagemap_pinned", "memcpy"), needs=frozenset({PROC, PINNED}),
           does="CUDA's pinning seen from `/proc`, and what it buys: copy bandwidth, why DMA needs pinned pages"),
    Lesson("03", "map-pages-on-the-cpu", "Map pages on the CPU", 35,
           experiments=("pagemap_pinned",), needs=frozenset({PROC}),
           does=("Virtual to physical translation on the CPU: pages, page tables (页表), "
                 "the TLB (translation lookaside buffer)")),
    Lesson("04", "map-pages-on-the-gpu", "Map pages on the GPU", 35,
           kernels=("vector_add",), experiments=("address_identity", "pagemap_pinned"),
           does="The GPU MMU maps the same pages; unified virtual addressing"),
    Lesson("05", "write-your-first-zero-copy-kernel", "Write your first zero-copy kernel", 45,
           kernels=("vector_add",), experiments=("contexts", "pass_by_value"), needs=frozenset({CXX}),
           does="A vector add on mapped memory in raw PyCUDA, which prints \"Test passed!\""),
    Lesson("06", "measure-bandwidth", "Measure bandwidth: zero-copy against copies and device memory", 35,
           kernels=("bandwidth",), experiments=("memcpy", "kernel_bandwidth"), needs=frozenset({PINNED}),
           does="The PCIe link; zero-copy vs memcpy vs device-memory bandwidth"),
    Lesson("07", "measure-latency", "Measure latency: one dependent load after another", 40,
           kernels=("latency",), experiments=("latency", "latency_footprint"), needs=frozenset({PINNED}),
           does="Dependent-load latency, against footprint, CPU caches and load"),
    Lesson("08", "keep-enough-bytes-in-flight", "Keep enough bytes in flight: Little's law for zero-copy reads", 45,
           kernels=("bandwidth", "latency"),
           experiments=("memcpy", "latency", "inflight", "loaded_latency", "caching", "kernel_bandwidth"),
           does="Bytes in flight (Little's law); which cache keeps mapped memory; your GPU against the reference"),
    Lesson("09", "coalesce-and-align-accesses", "Coalesce and align accesses (合并访问)", 40,
           kernels=("access_pattern",), experiments=("stride", "memcpy", "latency", "offset", "vector_width"),
           needs=frozenset({CXX}),
           does="Stride, offset and vector width (合并访问, coalesced access), traced on the CPU"),
    Lesson("10", "model-zero-copy-reads", "Model zero-copy reads", 40,
           kernels=("access_pattern",), experiments=("stride", "offset", "counters", "latency", "vector_width"),
           needs=frozenset({CXX}),
           does="Hardware counters of zero-copy reads, predicted from traces, then a PCIe timing model"),
    Lesson("11", "overlap-copies-with-streams", "Overlap copies with streams", 35,
           kernels=("vector_add",), experiments=("end_to_end", "memcpy", "out_of_core"), needs=frozenset({PINNED}),
           does="Streams, asynchronous copies and events; the vector add end to end"),
    Lesson("12", "decide-when-zero-copy-wins", "Decide when zero-copy wins", 40,
           kernels=("vector_add", "access_pattern"),
           experiments=("reuse", "out_of_core", "read_once_strided", "end_to_end", "latency", "stride",
                        "offset", "inflight", "managed", "memcpy"),
           needs=frozenset({PINNED}),
           does="When zero-copy wins: read once or k times, data larger than the GPU, the decision table"),
    Lesson("13", "use-write-combined-and-registered-memory", "Use write-combined and registered memory", 35,
           kernels=("bandwidth", "vector_add"),
           experiments=("write_combined", "pagemap_pinned", "address_identity", "registered"),
           does="Write-combined, portable and registered memory"),
    Lesson("14", "avoid-hazards-on-mapped-memory", "Avoid hazards on mapped memory", 45,
           kernels=("hazards",), experiments=("stale_read", "atomics", "handshake", "spin_loop", "latency"),
           does="Reading before sync, atomics on mapped memory, flags between GPU and CPU"),
    Lesson("15", "take-zero-copy-beyond-one-pcie-gpu", "Take zero-copy beyond one PCIe GPU", 35,
           kernels=("bandwidth",),
           experiments=("managed", "read_only_registration", "cpu_traffic", "pageable_access", "numa_topology"),
           does=("Other platforms: managed memory as zero-copy, read-only registration, CPU traffic, HMM/ATS, NUMA, "
                 "Jetson and Grace Hopper")),
)

# The course-length promise, stated here once: by the estimate (helpers.tools.lesson_times) the lessons add up to at
# most COURSE_MINUTES (ten hours: the instructor guide's plans and the README are built on it) and none is longer
# than LESSON_MINUTES. A lesson that does not fit is trimmed (optional asides move below its "## Going deeper"
# heading, which the estimate does not count), split in two, or made room for by trimming another; raising
# COURSE_MINUTES is the maintainers' decision, asked for in an issue, since workshops are planned by it.
COURSE_MINUTES = 600
LESSON_MINUTES = 45


def total_minutes() -> int:
    """The course's minutes: the lessons' times added up (at most :data:`COURSE_MINUTES`)."""
    return sum(entry.minutes for entry in LESSONS)


def last() -> Lesson:
    """The course's last lesson (texts that say "the last lesson" ask here)."""
    return LESSONS[-1]


def ids() -> tuple[str, ...]:
    """Every lesson's id, in course order."""
    return tuple(entry.id for entry in LESSONS)


def find(key: str | int) -> Lesson | None:
    """The lesson ``key`` names: its id (``06``, ``6``, 6), slug, file stem or file name; None if none."""
    text = str(key).strip()
    if text.endswith(".ipynb"):
        text = text[:-len(".ipynb")]
    for entry in LESSONS:
        if text in (entry.id, entry.slug, entry.name) or (text.isdigit() and int(text) == int(entry.id)):
            return entry
    return None


def lesson(key: str | int) -> Lesson:
    """The lesson ``key`` names (see :func:`find`); a LookupError that lists the lessons when none."""
    found = find(key)
    if found is None:
        raise LookupError(f"No lesson {key!r}; the lessons are {', '.join(ids())}.")
    return found


def lesson_id(slug: str) -> str:
    """The id of the lesson with this slug (code names lessons by slug, so a renumbering changes this file alone)."""
    return lesson(slug).id


def ids_of(*slugs: str) -> tuple[str, ...]:
    """The ids of these lessons, in the order given."""
    return tuple(lesson_id(slug) for slug in slugs)


def showing(experiment: str) -> tuple[str, ...]:
    """The ids of the lessons that run ``experiment`` or show its record."""
    return tuple(entry.id for entry in LESSONS if experiment in entry.experiments)


def needing(what: str) -> tuple[str, ...]:
    """The ids of the lessons that need ``what`` (PROC, CXX or PINNED) of the machine."""
    return tuple(entry.id for entry in LESSONS if what in entry.needs)


def notebooks(folder: Path | None = None) -> list[Path]:
    """Every lesson's notebook in ``folder`` (default: lessons/), in course order."""
    return [entry.notebook(folder) for entry in LESSONS]


def chosen_notebooks(names: list[str] | None, folder: Path | None = None) -> list[Path]:
    """The notebooks of the lessons ``names`` (id, number, slug or file stem: :func:`find`), in the order given;
    every lesson's when ``names`` is empty. A name no lesson has raises :class:`LookupError` naming it."""
    if not names:
        return notebooks(folder)
    found = []
    for name in names:
        entry = find(name)
        if entry is None:
            raise LookupError(name)
        found.append(entry.notebook(folder))
    return found


# --------------------------------------------------------------------------- workshop plans (the instructor guide)
@dataclass(frozen=True)
class Plan:
    """A workshop plan: the lessons from ``first`` to ``last`` (slugs; None: to the course's last lesson), what they
    cover, and the time it promises (minutes; None: no promise)."""

    name: str
    first: str
    last: str | None
    covers: str
    budget: int | None = None


PLANS = (
    Plan("Half a day", "start-here", "map-pages-on-the-gpu", "pinning, frames and both page tables, and the same "
         "address on both sides", 180),
    Plan("A full day (breaks apart)", "start-here", "coalesce-and-align-accesses", "adds the first zero-copy "
         "kernel, bandwidth, latency, bytes in flight and access patterns", 390),
    Plan("Afterwards, or a second day", "model-zero-copy-reads", None, "the PCIe model and its counters, streams "
         "and the decision, write-combined and registered memory, the hazards and the other platforms"),
)


def plans() -> list[dict[str, object]]:
    """Each plan's lessons (first and last id), minutes and budget, from the registry."""
    rows = []
    for plan in PLANS:
        first = LESSONS.index(lesson(plan.first))
        end = LESSONS.index(lesson(plan.last) if plan.last else last())
        chosen = LESSONS[first:end + 1]
        rows.append({"plan": plan, "ids": f"{chosen[0].id}–{chosen[-1].id}",
                     "minutes": sum(e.minutes for e in chosen)})
    return rows
