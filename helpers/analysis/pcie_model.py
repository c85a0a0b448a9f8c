"""A model of what zero-copy reads cost over PCIe: counts first, then time (model-zero-copy-reads).

Counts
------
The CPU backend traces a launch (``helpers.cpu``, ``fn.trace(...)``). Per warp-level load and per
128-byte line it touches, the trace gives the set of 32-byte sectors the warp needs. The model plays
those requests through the L2 as the H200's Nsight Compute counters show it works:

* a request whose sectors are all already asked for by a request on its way **merges** (no packet);
* any other becomes one PCIe **read request** (a 16-byte packet, ``pcie__write_bytes / 16``) for the
  span from the first to the last sector it still needs (gaps included), answered by one
  **completion** of that many sectors plus a 12-byte header (``pcie__read_bytes``);
* when two warps share a line, the order in which their requests reach the L2 decides between one
  and two requests: a race no trace can time. :class:`Race` holds the fraction of such lines in which
  the lower warp comes first, and the fraction of partly merged requests that ask for their whole span
  again; :func:`fit_race` reads both from a record's counters. They are the only fitted counts.

:func:`compare_counts` holds the predicted requests and completion bytes against the counters of
every profiled launch (target :data:`COUNT_TARGET`, 2 %). The L2's own sysmem request counter
(``lts__t_requests_aperture_sysmem_op_read``) runs at about 1.5 times the PCIe requests whatever the
pattern: bookkeeping inside the L2, not requests on the bus; the model does not use it.

Time
----
From the counts (``requests``, ``request_sectors``, ``half_lines``)::

    t = max((32 B * request_sectors + h * requests) / link,   requests / r,   half_lines / q)  +  t_launch

``link`` is not fitted: it is the fastest pinned host-to-device copy in the same record.
:func:`calibrate` fits ``h`` (bytes per request on the link beyond its data), ``r`` (requests per
second), ``q`` (64-byte halves of lines per second) and ``t_launch`` to the zero-copy rows of the
record's **stride** sweep only. Stores, which the records do not calibrate, are charged
``32 B * span + h`` per warp line on the other direction of the link (PCIe is full duplex; writes are
posted, nothing comes back) and are an extrapolation. Assumptions (labelled, not facts): the terms
overlap completely (the largest sets the pace), and ``h`` is the same for every request.

The third term, ``half_lines``: per warp-level line request, the 64-byte halves of the 128-byte line
its threads need (a need inside one half counts 1, a need in both halves 2), counted from the trace
*before* the L2 merges anything, so no race enters it. What the quiet H200 records (1 GiB a point) show,
and the two-term form cannot: offsets 8 and 16 make the same PCIe requests and completion bytes (the
counters agree to 0.1 %), yet offset 16 (two 64-byte requests, each inside one half: 2 halves a line)
runs 24 % faster than offset 8 (a 32-byte and a 96-byte request that straddles the middle: 3 halves a
line); and offsets 1-7 and 25-31, where the counters show a fifth fewer PCIe requests than at offsets
9-23 (the L2 merged them), take the same time (within 1.5 % in the quietest record): merging saves a
packet, not this cost. The stride sweep alone pins ``q``: strides 12 and 16 (one request of 2 halves
per line) and 24 (4 halves per 3 lines) sit on it. Which unit works in 64-byte pieces the fit does not
show: an x86 host reads its memory in 64-byte cache lines, and the GPU's L2 may move sectors in pairs;
both are hypotheses. The records of 2026-12-02 (16 MiB a point) show another regime - offsets 1-7 and
25-31 ran 5-10 % faster than 9-23 there (and faster than in any 1 GiB record) - so the term may belong
to large footprints on that machine, not to every read. Without ``q`` (``Model.half_line_rate`` = 0)
:meth:`Model.cost` is the two-term form model-zero-copy-reads writes out.

``h`` against the counted header: the counters put exactly 12 bytes of header on every completion
(PCIe Base Specification 5.0, sect. 2.2.9: a 3-DW completion header). ``h`` is measured against a
pinned copy's *payload* rate, whose own completions pay a header and framing once per (larger) packet,
so ``h`` = 12 B + the per-packet framing no counter sees (at 8 GT/s and above a 4-byte start-of-packet
token carrying the sequence number and a 4-byte LCRC) - the share of overhead the copy's payload rate
already absorbed. It can come out above or below 12 B.

What limits ``r`` is not shown by the fit. One candidate is the requester's tags: every outstanding read
carries one; 10-bit tags (PCIe 4.0 on, sect. 2.2.6.2) allow up to 768 outstanding reads per requester,
8-bit tags 256. By Little's law a tag limit caps ``r`` at tags / (time a tag is held); the time a
dependent load takes (measure-latency) is longer than that, as it includes the path inside the GPU, so ``r`` x
load latency can exceed 768 without refuting a tag limit.

Held out, honestly
------------------
The form (merging, the race, the larger of two terms) was chosen while looking at the offset sweeps and
the counters of the H200 records of 2026-12-02; the third term while looking at the offset sweeps of
the first three quiet records of 2026-12-04 (up to nvidia-h200-2026-12-04-3, 04:47 UTC). Their offset sweeps
therefore test only the fitted numbers (the numbers are fitted on the stride sweep alone); the records made
after them (-4 to -8) test the form.
``python -m helpers model`` fits on the oldest H200 record with quiet sweeps and counters
(helpers/experiments/quiet.py) and checks on every other H200 record; records whose sweeps are not quiet
(16 MiB, 5 repeats) are reported, labelled, and do not decide.

The floor. Beside the errors, :func:`run_to_run` reports how much two runs' own measurements of the same
points differ: per point, each run's spread (longest minus shortest repeat, over the median), whether the
two runs agree within it (their repeats overlap: *reproducible*), and the error of the fit record's own
measurements taken as the prediction of the check record's (``first_as_model``). No model fitted on one
run can be expected to do better than that run itself; :func:`check` says whether the model's error is
within that floor (``noise_floor``), and, when the floor itself exceeds :data:`TARGET_MEDIAN` or
:data:`TARGET`, that the targets cannot be reached on that record and why. On the quiet H200 records the
first (02:20) differs from the two later ones (02:31, 04:47) in every request-bound point (strides 24-64,
offsets 1-31): they agree within their repeats at 13 and 5 of 47 points, the first predicting them with
median 5.5 % / 6.5 % and up to 17.5 % / 22.9 % error (stride 32); the two later ones agree at 38 of 47,
median 1.7 %, up to 10.3 %.

The launch time is bounded below by the median time of the smallest zero-copy read in the record's
``kernel_bandwidth`` experiment (4 KiB, launched with the same grid as the sweeps): the launch, the
scheduling of the grid and one round trip over PCIe, which every sweep launch pays too.

PCIe terms (PCI Express Base Specification, Rev. 5.0, PCI-SIG 2019): Max Read Request Size and Max Payload
Size (Device Control register, sect. 7.5.3.4); Read Completion Boundary (sect. 2.3.1.1: 64 or 128 bytes, where
a completer may split a read's answer); tags (sect. 2.2.6.2); writes are posted: no tag, no completion.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..cpu.trace import LINE_BYTES, SECTOR_BYTES, Trace
from ..errors import CourseError
from ..i18n import N_, _
from ..records import parse_date

__all__ = ["Model", "Counts", "Prediction", "Row", "ModelError", "calibrate", "compare_with_record", "check",
           "Race", "CountRow", "pattern_counts", "compare_counts", "fit_race", "counts_summary",
           "counts_table", "header_bytes", "counter_rows", "is_quiet", "choose_records", "read_counts",
           "header_table", "explain_h", "check_table", "run_to_run", "same_counts_floor",
           "link_GBps", "launch_floor_seconds", "sweep_points", "strided_trace", "launch_counts",
           "levels", "level_groups", "timed_in_rounds", "LEVEL_TOLERANCE", "allocation_floor", "allocations",
           "public_floor", "allocations_apart", "compact", "FIT_SWEEPS", "CHECK_SWEEPS", "TARGET", "TARGET_MEDIAN", "FLOOR_MARGIN", "MIN_ALLOCATIONS"]

FIT_SWEEPS = ("stride",)                               # what :func:`calibrate` fits on
CHECK_SWEEPS = ("stride", "offset", "vector_width")    # every sweep the model predicts
# The sweeps as the lessons name them (model-zero-copy-reads): the record keys them by identifier.
SWEEP_NAMES = {"stride": N_("stride"), "offset": N_("offset"), "vector_width": N_("vector width")}
TARGET = 0.10         # largest |error| allowed at a held-out point of a record timed on one allocation (issue 19)
TARGET_MEDIAN = 0.05  # median |error| allowed over the held-out points
# A record timed over several fresh allocations (helpers/experiments/access.py) carries its own floor: how far the
# allocations' medians of one point lie from one another. There no held-out point may lie further from the model than
# its allocations' spread plus FLOOR_MARGIN (issue 30): a fixed 10 % sat below what two allocations disagree by.
FLOOR_MARGIN = 0.03
MIN_ALLOCATIONS = 3   # allocations a record's sweeps need for their spread to serve as that floor
_ELEMENT_BYTES = {"read_strided": 4, "read_strided_float4": 16}  # the kernels of access_pattern.cu
# PCI Express Base Specification 5.0, sect. 2.2.9: a completion's header is 3 DW (12 bytes) whatever the
# address width; sect. 2.2.7: a memory read request with a 64-bit address is a 4-DW (16-byte) header and no data.
COMPLETION_HEADER_BYTES = 12
READ_REQUEST_BYTES = 16
COUNT_TARGET = 0.02   # largest |error| of a predicted count against Nsight Compute's
HALF_LINE_BYTES = 64  # half a 128-byte line; an x86 host's cache line


class ModelError(CourseError):
    """A record lacks what the PCIe model needs, or a check would not be a check (model-zero-copy-reads)."""


# ---------------------------------------------------------------------- counting
@dataclass(frozen=True)
class Counts:
    """What a launch asks of the link, as the module docstring counts it."""

    useful_bytes: float
    line_requests: float          # warp-level load line requests (the rate term)
    lines: float                  # distinct lines the loads touch (one read over the link each)
    span_sectors: float           # per distinct line, first to last touched sector
    store_lines: float = 0.0      # warp-level store line requests
    store_span_sectors: float = 0.0
    requests: float = 0.0         # PCIe read requests, after the L2 merges what it can (the race of :class:`Race`)
    request_sectors: float = 0.0  # per PCIe read request, first to last sector it asks for, summed
    half_lines: float = 0.0       # per warp-level load line request, the 64-byte halves of the line it needs, summed
                                  # (before any merging: no race)

    @property
    def completion_bytes(self) -> float:
        """Bytes of the completions of the read requests, as ``pcie__read_bytes`` counts them: data plus a
        12-byte header each."""
        return SECTOR_BYTES * self.request_sectors + COMPLETION_HEADER_BYTES * self.requests

    def times(self, k: float) -> "Counts":
        """The counts of a launch ``k`` times as large."""
        return Counts(*(k * getattr(self, f) for f in self.__dataclass_fields__))


@dataclass(frozen=True)
class Race:
    """What the trace cannot say: the order in which two warps' requests for one line reach the L2.

    When two warps touch the same 128-byte line and one asks for sectors the other's request already
    covers, the L2 merges the later one if the wider request came first. ``lower_first`` is the
    fraction of such lines in which the lower-numbered warp's request arrives first; ``refetch`` the
    fraction of partly covered requests that ask again for their whole span rather than only the
    sectors not yet asked for. Both are fitted on a record's Nsight Compute counters
    (:func:`fit_race`); nothing else in the counts is fitted."""

    lower_first: float = 0.5
    refetch: float = 0.0
    # when the lower warp needs only sectors the upper warp needs too: the fraction of such lines in which the
    # upper warp's request comes first (so the lower one merges); None: 1 - lower_first, one race for both cases.
    # The H200's counters tell the two cases apart (offsets 1-7 against 25-31 of the offset sweep).
    upper_first_when_lower_covered: float | None = None


def _request_counts(trace: Trace, race: Race) -> tuple[float, float]:
    """(PCIe read requests, their requested sectors) of the loads of ``trace``, expected under ``race``.

    Per line, the warp requests (one per warp-level load, with the set of sectors it needs) are
    played in warp order (weight ``race.lower_first``) and in reverse order: a request whose sectors
    are all already asked for merges; any other becomes a PCIe request for the span of the sectors
    not yet asked for (or, with weight ``race.refetch`` when some were, of all its sectors)."""
    a = trace.accesses[trace.accesses["flags"] == 0]
    if not len(a):
        return 0.0, 0.0
    first = (a["addr"] // np.uint64(SECTOR_BYTES)).astype(np.int64)
    last = ((a["addr"] + a["size"].astype(np.uint64) - np.uint64(1)) // np.uint64(SECTOR_BYTES)).astype(np.int64)
    per_line = LINE_BYTES // SECTOR_BYTES
    masks: dict[tuple[int, int, int], int] = {}  # (line, warp, seq) -> sector bit mask
    for f, l, w, q in zip(first.tolist(), last.tolist(), a["warp"].tolist(), a["seq"].tolist()):
        for sector in range(f, l + 1):
            key = (sector // per_line, w, q)
            masks[key] = masks.get(key, 0) | (1 << (sector % per_line))
    by_line: dict[int, list[tuple[int, int, int]]] = {}
    for (line, w, q), mask in masks.items():
        by_line.setdefault(line, []).append((w, q, mask))

    def span(mask: int) -> int:
        return mask.bit_length() - ((mask & -mask).bit_length() - 1)

    def play(order: list[int]) -> tuple[float, float]:
        pending, requests, sectors = 0, 0.0, 0.0
        for mask in order:
            new = mask & ~pending
            if new:
                requests += 1
                sectors += span(new) if new == mask else (1 - race.refetch) * span(new) + race.refetch * span(mask)
            pending |= mask
        return requests, sectors

    requests = sectors = 0.0
    for entries in by_line.values():
        order = [m for _, _, m in sorted(entries)]
        if len(order) == 1:
            requests, sectors = requests + 1, sectors + span(order[0])
            continue
        (r1, s1), (r2, s2) = play(order), play(order[::-1])
        weight = race.lower_first
        if len(order) == 2 and order[0] & ~order[1] == 0 and order[0] != order[1] \
                and race.upper_first_when_lower_covered is not None:
            weight = 1 - race.upper_first_when_lower_covered
        requests += weight * r1 + (1 - weight) * r2
        sectors += weight * s1 + (1 - weight) * s2
    return requests, sectors


def _trace_counts(trace: Trace, race: Race = Race()) -> Counts:
    """Counts of a whole (unsampled) trace."""
    rows = trace.instructions
    loads = rows[~rows["is_store"] & ~rows["is_atomic"]]
    stores = rows[rows["is_store"]]
    a = trace.accesses[trace.accesses["flags"] == 0]
    lines = span = 0
    if len(a):
        first = (a["addr"] // np.uint64(SECTOR_BYTES)).astype(np.int64)
        last = ((a["addr"] + a["size"].astype(np.uint64) - np.uint64(1)) // np.uint64(SECTOR_BYTES)).astype(np.int64)
        width = last - first + 1
        sectors = np.unique(np.repeat(first, width) + (np.arange(width.sum()) - np.repeat(np.cumsum(width) - width, width)))
        per_line = LINE_BYTES // SECTOR_BYTES
        line, starts = np.unique(sectors // per_line, return_index=True)
        ends = np.r_[starts[1:], len(sectors)] - 1
        lines, span = len(line), int((sectors[ends] - sectors[starts] + 1).sum())
    requests, request_sectors = _request_counts(trace, race)
    return Counts(float(rows["useful_bytes"].sum()), float(loads["lines"].sum()), float(lines), float(span),
                  float(stores["lines"].sum()), float(stores["span_sectors"].sum()), requests, request_sectors,
                  float(_half_lines(a)))


def _half_lines(a: np.ndarray) -> int:
    """Per warp-level load (warp, seq), the distinct 64-byte halves of 128-byte lines its accesses ``a`` touch,
    summed: a line whose needed sectors lie in one half counts 1, in both halves 2."""
    if not len(a):
        return 0
    half = 2 * SECTOR_BYTES
    first = (a["addr"] // np.uint64(half)).astype(np.int64)
    last = ((a["addr"] + a["size"].astype(np.uint64) - np.uint64(1)) // np.uint64(half)).astype(np.int64)
    width = last - first + 1
    units = np.repeat(first, width) + (np.arange(width.sum()) - np.repeat(np.cumsum(width) - width, width))
    keys = np.stack([np.repeat(a["warp"].astype(np.int64), width), np.repeat(a["seq"].astype(np.int64), width),
                     units], axis=1)
    return int(len(np.unique(keys, axis=0)))


def launch_counts(make_trace: Callable[[int], Trace], useful_bytes: float, warps: int = 16,
                  race: Race = Race()) -> Counts:
    """Counts of a launch asking for ``useful_bytes``, from traces of ``warps`` and ``2 * warps`` warps.

    ``make_trace(w)`` traces the pattern's first ``w`` warps. The difference of the two traces is the
    steady state, free of the edges of a short trace (a misaligned run of ``w`` warps touches one
    line more than ``w`` lines' worth)."""
    small, big = _trace_counts(make_trace(warps), race), _trace_counts(make_trace(2 * warps), race)
    step = Counts(*(getattr(big, f) - getattr(small, f) for f in Counts.__dataclass_fields__))
    if step.useful_bytes <= 0:
        raise ModelError("the traced pattern asks for no bytes, so the model has nothing to count")
    return step.times(useful_bytes / step.useful_bytes)


@lru_cache(maxsize=512)
def strided_trace(stride: int, offset: int, block: int = 256, warps: int = 16,
                  kernel: str = "read_strided") -> Trace:
    """Trace ``warps`` warps of ``kernel`` (access_pattern.cu) on the CPU: thread t reads element
    ``offset + t * stride`` once. Cached on every argument."""
    from ..cpu import load_kernel

    if kernel not in _ELEMENT_BYTES:
        raise ModelError(f"the model knows the kernels {', '.join(_ELEMENT_BYTES)}, not {kernel!r}")
    threads = warps * 32
    src = np.ones((offset + threads * stride + 1) * _ELEMENT_BYTES[kernel] // 4, np.float32)
    sink = np.zeros(1, np.float32)
    fn = load_kernel("access_pattern", kernel)
    return fn.trace(src, np.uint64(threads), np.int32(stride), np.int32(offset), np.float32(-1.0), sink,
                    block=(block, 1, 1), grid=((threads + block - 1) // block, 1))


_CUBE = tuple((p, f, q) for p in (0.0, 1.0) for f in (0.0, 1.0) for q in (0.0, 1.0))


@lru_cache(maxsize=1024)
def _corners(kernel: str, stride: int, offset: int, block: int) -> tuple[Counts, ...]:
    """Counts per useful byte at the eight corners of :class:`Race` (lower_first, refetch,
    upper_first_when_lower_covered in {0, 1}): every count is linear in each of the three, so any race is a
    trilinear mix of these."""
    return tuple(launch_counts(lambda w: strided_trace(stride, offset, block, w, kernel), 1.0, race=Race(p, f, q))
                 for p, f, q in _CUBE)


def pattern_counts(kernel: str, stride: int, offset: int, useful_bytes: float, race: Race = Race(),
                   block: int = 256) -> Counts:
    """The counts of a ``read_strided``/``read_strided_float4`` launch reading ``useful_bytes``
    (model-zero-copy-reads)."""
    corners = _corners(kernel, stride, offset, block)
    p, f = race.lower_first, race.refetch
    q = 1 - p if race.upper_first_when_lower_covered is None else race.upper_first_when_lower_covered
    weights = [(p if cp else 1 - p) * (f if cf else 1 - f) * (q if cq else 1 - q) for cp, cf, cq in _CUBE]
    mixed = {name: sum(w * getattr(c, name) for w, c in zip(weights, corners))
             for name in Counts.__dataclass_fields__}
    return Counts(**mixed).times(useful_bytes)


@dataclass(frozen=True)
class CountRow:
    """One profiled launch: the counts the trace predicts against those Nsight Compute counted."""

    kernel: str
    stride: int
    offset_floats: int
    lines: float                    # distinct 128-byte lines the launch touches (from the trace)
    predicted_requests: float
    counted_requests: float         # pcie__write_bytes / 16: one 16-byte read request each
    predicted_completion_bytes: float
    counted_completion_bytes: float  # pcie__read_bytes
    l2_requests: float              # lts__t_requests_aperture_sysmem_op_read

    @property
    def requests_error(self) -> float:
        return self.predicted_requests / self.counted_requests - 1

    @property
    def bytes_error(self) -> float:
        return self.predicted_completion_bytes / self.counted_completion_bytes - 1


def counter_rows(record: Any) -> list[dict[str, Any]]:
    """The ``counters`` rows of a record (or of a ``counters`` Result, or the rows themselves), or
    ModelError saying how to record them."""
    if hasattr(record, "rows") and getattr(record, "name", "counters") == "counters":
        rows = list(record.rows)
    elif isinstance(record, list):
        rows = record
    else:
        rows = _as_record(record)["experiments"].get("counters", {}).get("rows", [])
    if not rows:
        raise ModelError("the record has no hardware counters (its `counters` experiment), which the model's counts "
                         "are checked against; record them with `python -m helpers record --only counters` on a GPU "
                         "with Nsight Compute (ncu)")
    return rows


def compare_counts(record: Any, race: Race) -> list[CountRow]:
    """Predicted against counted requests and completion bytes, for every profiled launch (model-zero-copy-reads)."""
    out = []
    for row in counter_rows(record):
        c = pattern_counts(row["kernel"], int(row["stride"]), int(row["offset_floats"]), float(row["useful_bytes"]),
                           race)
        out.append(CountRow(row["kernel"], int(row["stride"]), int(row["offset_floats"]), c.lines, c.requests,
                            row["pcie__write_bytes"] / READ_REQUEST_BYTES, c.completion_bytes,
                            row["pcie__read_bytes"], row["lts__t_requests_aperture_sysmem_op_read"]))
    return out


def fit_race(record: Any) -> Race:
    """The :class:`Race` that best predicts the record's counted requests and completion bytes."""
    rows = counter_rows(record)
    cube = [(p, f, q) for p in (0, 1) for f in (0, 1) for q in (0, 1)]
    corners = [[pattern_counts(r["kernel"], int(r["stride"]), int(r["offset_floats"]), float(r["useful_bytes"]),
                               Race(p, f, q)) for p, f, q in cube] for r in rows]
    counted_req = np.array([r["pcie__write_bytes"] / READ_REQUEST_BYTES for r in rows])
    counted_bytes = np.array([r["pcie__read_bytes"] for r in rows])
    req = np.array([[c.requests for c in cs] for cs in corners])            # rows x 8 corners
    byt = np.array([[c.completion_bytes for c in cs] for cs in corners])
    grid = np.linspace(0, 1, 51)
    ps, fs, qs = np.meshgrid(grid, grid, grid, indexing="ij")
    # the counts are linear in each of the three fractions, so the corners interpolate them exactly
    w = np.stack([(ps if p else 1 - ps) * (fs if f else 1 - fs) * (qs if q else 1 - qs) for p, f, q in cube], axis=-1)
    err = np.maximum(np.abs(w @ req.T / counted_req - 1).max(axis=-1), np.abs(w @ byt.T / counted_bytes - 1).max(axis=-1))
    i, j, k = np.unravel_index(int(np.argmin(err)), err.shape)
    return Race(float(ps[i, j, k]), float(fs[i, j, k]), float(qs[i, j, k]))


def counts_table(rows: list[CountRow]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the counts table (model-zero-copy-reads): per launch, counted against predicted, per line."""
    header = ["load", "stride", "offset", "lines touched", "requests / line: counted", "predicted",
              "completion bytes / line: counted", "predicted", "L2 sysmem requests / PCIe request"]
    body = [[r.kernel.replace("read_strided", "float").replace("_float4", "4"), r.stride, r.offset_floats,
             f"{r.lines:,.0f}", f"{r.counted_requests / r.lines:.3f}", f"{r.predicted_requests / r.lines:.3f}",
             f"{r.counted_completion_bytes / r.lines:.1f}", f"{r.predicted_completion_bytes / r.lines:.1f}",
             f"{r.l2_requests / r.counted_requests:.2f}"] for r in rows]
    return header, body


def header_bytes(record: Any) -> list[dict[str, float]]:
    """Per aligned ``read_strided`` launch: ``pcie__read_bytes / (32 B x span)`` and the bytes per counted
    completion beyond the data the trace says it carries (model-zero-copy-reads reads a 12-byte header in them)."""
    out = []
    for row in counter_rows(record):
        if row["kernel"] != "read_strided" or row["offset_floats"]:
            continue
        c = pattern_counts("read_strided", int(row["stride"]), 0, float(row["useful_bytes"]))
        data = SECTOR_BYTES * c.request_sectors
        requests = row["pcie__write_bytes"] / READ_REQUEST_BYTES
        out.append({"stride": int(row["stride"]), "sectors_per_line": c.request_sectors / c.lines,
                    "read_over_span": row["pcie__read_bytes"] / data,
                    "bytes_per_completion_beyond_data": (row["pcie__read_bytes"] - data) / requests})
    return out


def counts_summary(rows: list[CountRow]) -> dict[str, Any]:
    """Largest and median |error| of the predicted counts, and the L2-to-PCIe request ratio (model-zero-copy-reads)."""
    req = np.abs([r.requests_error for r in rows])
    byt = np.abs([r.bytes_error for r in rows])
    return {"launches": len(rows), "max_abs_requests_error": float(req.max()), "max_abs_bytes_error": float(byt.max()),
            "median_abs_requests_error": float(np.median(req)), "median_abs_bytes_error": float(np.median(byt)),
            "target": COUNT_TARGET, "within_target": bool(max(req.max(), byt.max()) <= COUNT_TARGET),
            "l2_per_pcie_request": float(np.median([r.l2_requests / r.counted_requests for r in rows]))}


# ---------------------------------------------------------------------- the model
@dataclass(frozen=True)
class Prediction:
    """A predicted kernel time and the useful bandwidth it implies."""

    seconds: float
    useful_GBps: float
    payload_bytes: float
    requests: float
    bound: str  # "link", "requests", "half_lines" or "writes"


@dataclass(frozen=True)
class Model:
    """The PCIe cost model of the module docstring; :func:`calibrate` makes one (model-zero-copy-reads)."""

    link_GBps: float
    overhead_bytes: float
    request_rate: float
    launch_seconds: float
    launch_floor_seconds: float = 0.0
    calibrated_on: str = "not calibrated"
    race: Race = Race()
    # 64-byte halves of lines per second (the third term of the module docstring); 0: no such term, the two-term
    # form model-zero-copy-reads writes out (its exercise builds such models)
    half_line_rate: float = 0.0

    def cost(self, c: Counts) -> tuple[float, str]:
        """(seconds, bound) of a launch with counts ``c``: its PCIe read requests and the sectors they ask for, and
        (with a ``half_line_rate``) the 64-byte halves of lines its warps' loads need."""
        link = self.link_GBps * 1e9
        terms = {"link": (SECTOR_BYTES * c.request_sectors + self.overhead_bytes * c.requests) / link,
                 "requests": c.requests / self.request_rate,
                 "writes": (SECTOR_BYTES * c.store_span_sectors + self.overhead_bytes * c.store_lines) / link}
        if self.half_line_rate > 0:
            terms["half_lines"] = c.half_lines / self.half_line_rate
        bound = max(terms, key=terms.__getitem__)
        return float(terms[bound] + self.launch_seconds), bound

    def predict(self, c: Counts) -> Prediction:
        """Predicted time and useful bandwidth of a launch with counts ``c``."""
        seconds, bound = self.cost(c)
        return Prediction(seconds, c.useful_bytes / seconds / 1e9,
                          SECTOR_BYTES * (c.request_sectors + c.store_span_sectors), c.requests + c.store_lines, bound)

    def describe(self) -> str:
        """One line with the parameters, for a lesson to print."""
        halves = "" if self.half_line_rate <= 0 else _(
            "at most {rate:.3g} G 64-byte halves of lines/s ({gbps:.1f} GB/s in whole halves), ").format(
            rate=self.half_line_rate / 1e9, gbps=HALF_LINE_BYTES * self.half_line_rate / 1e9)
        return _("link {link:.1f} GB/s, {h:.0f} bytes per read request beyond its data, at most {rate:.3g} G read "
                 "requests/s, {halves}launch {launch:.1f} us (at least {floor:.1f} us; {fitted})").format(
            link=self.link_GBps, h=self.overhead_bytes, rate=self.request_rate / 1e9, halves=halves,
            launch=self.launch_seconds * 1e6, floor=self.launch_floor_seconds * 1e6, fitted=self.calibrated_on)

    def parameters(self) -> dict[str, Any]:
        """The parameters as a JSON-ready dict."""
        return {"link_GBps": self.link_GBps, "overhead_bytes": self.overhead_bytes,
                "request_rate_per_s": self.request_rate, "launch_seconds": self.launch_seconds,
                "launch_floor_seconds": self.launch_floor_seconds, "calibrated_on": self.calibrated_on,
                "race_lower_first": self.race.lower_first, "race_refetch": self.race.refetch,
                "overhead_beyond_counted_header_bytes": self.overhead_bytes - COMPLETION_HEADER_BYTES,
                "half_line_rate_per_s": self.half_line_rate,
                "half_line_GBps": HALF_LINE_BYTES * self.half_line_rate / 1e9}


# ---------------------------------------------------------------------- records
def _as_record(record: Any) -> dict[str, Any]:
    if isinstance(record, (str, Path)):
        from ..records import load_record
        return load_record(record)
    return record


def _identity(record: dict[str, Any]) -> str:
    """The run a record holds, as a reader names it: "NVIDIA H200 2026-12-04 19:22 UTC" (not an ISO timestamp)."""
    prov = record.get("provenance", {})
    date = prov.get("date", "")
    try:
        date = parse_date(date).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        pass  # none, or not a date: as recorded
    return f"{prov.get('gpu', 'a record')} {date}".strip()


def is_quiet(record: Any) -> bool:
    """True when the record's stride, offset and vector_width sweeps meet the quiet-sweep rule
    (helpers/experiments/quiet.py); the first H200 records' 16 MiB, 5-repeat sweeps do not."""
    from ..experiments.quiet import record_violations

    return not record_violations(_as_record(record), CHECK_SWEEPS)


def choose_records(found: list[tuple[dict[str, Any], Path]]) -> tuple[tuple[dict[str, Any], Path],
                                                                     list[tuple[dict[str, Any], Path]]]:
    """(fit, checks) among ``found`` (records.matching_records()): fit on the oldest record with quiet sweeps,
    counters and sweeps timed over :data:`MIN_ALLOCATIONS` fresh allocations (else the oldest quiet one with
    counters, else the oldest with counters, else the oldest); check on every other one (model-zero-copy-reads)."""
    if not found:
        raise ModelError("no record to fit the model on")
    with_counters = [f for f in found if f[0]["experiments"].get("counters")]
    quiet = [f for f in with_counters if is_quiet(f[0])]
    fit = ([f for f in quiet if allocations(f[0]) >= MIN_ALLOCATIONS] or quiet or with_counters or found)[0]
    return fit, [f for f in found if f[1] != fit[1]]


def link_GBps(record: Any) -> float:
    """The link rate: the fastest pinned host-to-device copy in the record's memcpy rows."""
    rows = _as_record(record)["experiments"].get("memcpy", {}).get("rows", [])
    rates = [r["GBps"] for r in rows if r.get("direction") == "htod" and r.get("host_memory") == "pinned"]
    if not rates:
        raise ModelError("the record has no pinned host-to-device memcpy rows, which give the model its link rate; "
                         "record them with `python -m helpers record --only memcpy` on the GPU")
    return float(max(rates))


def launch_floor_seconds(record: Any) -> float:
    """The lower bound of the launch time: median time of the smallest zero-copy read of ``kernel_bandwidth``."""
    rows = [r for r in _as_record(record)["experiments"].get("kernel_bandwidth", {}).get("rows", [])
            if r.get("memory") == "zero_copy" and r.get("op") == "read"]
    if not rows:
        raise ModelError("the record has no zero-copy reads in its kernel_bandwidth experiment, which bound the "
                         "model's launch time from below; record them with "
                         "`python -m helpers record --only kernel_bandwidth` on the GPU")
    smallest = min(rows, key=lambda r: r["nbytes"])
    return float(np.median(smallest["seconds"]))


@dataclass(frozen=True)
class Point:
    """One zero-copy sweep point of a record."""

    kind: str
    kernel: str
    stride: int
    offset: int
    block: int
    useful_bytes: float
    seconds: float


def _timed_rows(record: Any, kinds: tuple[str, ...] = CHECK_SWEEPS) -> list[tuple[tuple[str, str, int, int], float,
                                                                                   np.ndarray]]:
    """((kind, kernel, stride, offset), useful bytes, every repeat's seconds) of the record's zero-copy sweep rows."""
    experiments = _as_record(record)["experiments"]
    out = []
    for kind in kinds:
        if kind not in experiments:
            continue
        params = experiments[kind]["params"]
        for row in experiments[kind]["rows"]:
            if row.get("memory", "zero_copy") != "zero_copy":
                continue
            kernel = row.get("kernel", params.get("kernel", "read_strided"))
            if "nbytes" in row and "count" not in row:
                useful = float(row["nbytes"])
            else:
                useful = float(_ELEMENT_BYTES.get(kernel, 4) * int(row.get("count", params.get("count", 0))))
            out.append(((kind, kernel, int(row.get("stride", 1)), int(row.get("offset_floats", 0))), useful,
                        np.asarray(row["seconds"], float)))
    return out


def _allocation_seconds(record: Any, kinds: tuple[str, ...] = CHECK_SWEEPS) -> dict[tuple[str, str, int, int],
                                                                                 np.ndarray]:
    """Each zero-copy sweep point's median seconds on each fresh allocation it was timed on (a row timed on one
    allocation, as the records before 2026-12-05 were: its median alone), keyed (kind, kernel, stride, offset)."""
    experiments = _as_record(record)["experiments"]
    out = {}
    rows = [row for kind in kinds if kind in experiments for row in experiments[kind]["rows"]
            if row.get("memory", "zero_copy") == "zero_copy"]
    for (key, _, seconds), row in zip(_timed_rows(record, kinds), rows):
        out[key] = np.asarray(row.get("allocation_seconds") or [float(np.median(seconds))], float)
    return out


def allocations(record: Any) -> int:
    """The fewest fresh allocations any zero-copy sweep point of the record was timed on (1 for older records)."""
    found = _allocation_seconds(record)
    return min((len(v) for v in found.values()), default=0)


def sweep_points(record: Any, kinds: tuple[str, ...] = CHECK_SWEEPS) -> list[Point]:
    """The zero-copy rows of the record's sweeps ``kinds`` (those it has), in order; a point's time is the median of
    its allocations' medians (of its repeats, for a record timed on one allocation)."""
    block = {kind: int(e["params"].get("block", 256)) for kind, e in _as_record(record)["experiments"].items()}
    per_allocation = _allocation_seconds(record, kinds)
    return [Point(kind, kernel, stride, offset, block[kind], useful,
                  float(np.median(per_allocation[(kind, kernel, stride, offset)])))
            for (kind, kernel, stride, offset), useful, _ in _timed_rows(record, kinds)]


def allocation_floor(record: Any) -> dict[str, Any] | None:
    """How far one record's allocations disagree, point by point (model-zero-copy-reads): per zero-copy sweep point,
    (fastest - slowest allocation median) / the point's rate; ``median``, ``max`` and the ``worst`` point over all.
    None for a record timed on fewer than :data:`MIN_ALLOCATIONS` allocations: no floor to judge a model against."""
    per_allocation = _allocation_seconds(record)
    n = min((len(v) for v in per_allocation.values()), default=0)
    if n < MIN_ALLOCATIONS:
        return None
    spread = {key: float((1 / seconds.min() - 1 / seconds.max()) * np.median(seconds))  # rates, over the point's
              for key, seconds in per_allocation.items()}
    worst = max(spread, key=spread.__getitem__)
    return {"allocations": n, "points": len(spread), "median": float(np.median(list(spread.values()))),
            "max": spread[worst], "worst": _label(worst), "by_point": {_label(k): v for k, v in spread.items()},
            "_keys": spread}


def _floor_verdict(rows: list["Row"], floor: dict[str, Any] | None) -> dict[str, Any]:
    """``rows`` judged against a record's :func:`allocation_floor`: median |error| within :data:`TARGET_MEDIAN` and
    no point further from the model than its allocations' spread plus :data:`FLOOR_MARGIN`. Without a floor (one
    allocation), the fixed targets :data:`TARGET_MEDIAN` and :data:`TARGET`."""
    errors = {(r.kind, r.kernel, r.stride, r.offset_floats): abs(r.rel_error) for r in rows}
    median = float(np.median(list(errors.values())))
    if floor is None:
        largest = max(errors.values())
        return {"judged_by": "fixed targets (one allocation a point: no floor of its own)",
                "meets_targets": median <= TARGET_MEDIAN and largest <= TARGET, "points_beyond_floor": None}
    spread = floor["_keys"]
    beyond = [_label(k) for k, e in errors.items() if k in spread and e > spread[k] + FLOOR_MARGIN]
    return {"judged_by": f"its {floor['allocations']} allocations' spread + {FLOOR_MARGIN:.0%}",
            "meets_targets": median <= TARGET_MEDIAN and not beyond, "points_beyond_floor": beyond}


def allocations_apart(first: Any, second: Any, margin: float = FLOOR_MARGIN) -> list[str]:
    """The sweep points at which two records' allocations lie more than ``margin`` apart: the slowest allocation of one
    is that much faster than the fastest of the other (model-zero-copy-reads). There the level moved between the two
    runs by more than any allocation of either moved it, so a model fitted on one run cannot be held to the other's
    floor plus ``margin``."""
    a, b = _allocation_seconds(first), _allocation_seconds(second)

    def gap(x: np.ndarray, y: np.ndarray) -> float:  # how far y's slowest allocation is faster than x's fastest
        return float((x.min() - y.max()) / np.median(np.concatenate([x, y])))

    return [_label(k) for k in a if k in b and max(gap(a[k], b[k]), gap(b[k], a[k])) > margin]


def compact(labels: list[str]) -> str:
    """Point labels as a learner reads them: ``stride 12, 16; offsets 2-7, 9-11``."""
    groups: dict[str, list[int]] = {}
    rest = []
    for label in labels:
        kind, _, number = label.rpartition(" ")
        if kind in ("stride", "offset") and number.isdigit():
            groups.setdefault(kind, []).append(int(number))
        else:
            rest.append(label)
    parts = []
    for kind, numbers in groups.items():
        numbers, runs = sorted(numbers), []
        for n in numbers:
            if runs and n == runs[-1][1] + 1 and kind == "offset":
                runs[-1][1] = n
            else:
                runs.append([n, n])
        said = ", ".join(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in runs)
        parts.append(f"{kind}{'s' if len(numbers) > 1 else ''} {said}")
    return "; ".join(parts + rest)


def public_floor(floor: dict[str, Any] | None) -> dict[str, Any] | None:
    """:func:`allocation_floor` without its internal keys, as JSON."""
    return None if floor is None else {k: v for k, v in floor.items() if not k.startswith("_")}


def _counts(point: Point, race: Race = Race()) -> Counts:
    return pattern_counts(point.kernel, point.stride, point.offset, point.useful_bytes, race, point.block)


# ---------------------------------------------------------------------- fitting
def _fit(link: float, seconds: np.ndarray, payload: np.ndarray, requests: np.ndarray, half_lines: np.ndarray,
         floor: float) -> tuple[float, float, float, float]:
    # payload: 32 B x requested sectors; requests: the PCIe read requests; half_lines: what the third term counts
    """(overhead_bytes, request_rate, half_line_rate, launch_seconds) minimising the largest |log(predicted/measured)|
    (plus a tenth of the rms), with launch_seconds in [floor, max(floor, 0.9 x the shortest time)]."""
    log_meas = np.log(seconds)
    # The launch time is fitted only where the sweep can tell it apart: with quiet sweeps every point lasts
    # milliseconds, hundreds of times a launch, and a fitted launch time only soaks up the other terms' misfit;
    # there it stays at the record's measured floor (the smallest zero-copy read's time).
    t_max = floor if float(seconds.min()) > 100 * floor else max(floor, 0.9 * float(seconds.min()))

    def best(hs: np.ndarray, rs: np.ndarray, qs: np.ndarray, ts: np.ndarray) -> tuple[float, float, float, float]:
        H, R, Q, T = (x.ravel() for x in np.meshgrid(hs, rs, qs, ts, indexing="ij"))
        on_link = (payload + H[:, None] * requests) / (link * 1e9)
        predicted = np.maximum(np.maximum(on_link, requests / R[:, None]), half_lines / Q[:, None]) + T[:, None]
        err = np.abs(np.log(predicted) - log_meas)
        score = err.max(axis=-1) + 0.1 * np.sqrt((err ** 2).mean(axis=-1))
        i = int(np.argmin(score))
        return float(H[i]), float(R[i]), float(Q[i]), float(T[i])

    steps = 1 if t_max == floor else 7
    h, r, q, t0 = best(np.linspace(0.0, 256.0, 33), np.logspace(7, 11, 41), np.logspace(7, 11, 41),
                       np.linspace(floor, t_max, steps))
    dh, dr, dt = 8.0, 0.1, (t_max - floor) / max(steps - 1, 1)
    for _round in range(16):  # shrink the grid around the best point
        around = np.linspace(-2, 2, 9)
        h, r, q, t0 = best(np.clip(h + dh * around, 0, None), r * 10 ** (dr * around), q * 10 ** (dr * around),
                           np.clip(t0 + dt * around, floor, t_max))
        dh, dr, dt = dh / 2, dr / 2, dt / 2
    return h, r, q, t0


def calibrate(record: Any) -> Model:
    """Fit overhead_bytes, request_rate, half_line_rate and launch_seconds to the record's zero-copy stride sweep
    (model-zero-copy-reads)."""
    rec = _as_record(record)
    link, floor = link_GBps(rec), launch_floor_seconds(rec)
    points = sweep_points(rec, FIT_SWEEPS)
    if len(points) < 3:
        raise ModelError("the record needs at least 3 zero-copy rows in its stride sweep to fit 3 parameters; "
                         "record it with `python -m helpers record --only stride` on the GPU")
    race, counted = (fit_race(rec), "counted") if rec["experiments"].get("counters") else (Race(), "not counted")
    counts = [_counts(p, race) for p in points]
    # fitted on every allocation's median of every point (one per point for a record timed on one allocation)
    per_allocation = _allocation_seconds(rec, FIT_SWEEPS)
    observed = [per_allocation[(p.kind, p.kernel, p.stride, p.offset)] for p in points]
    take = [i for i, o in enumerate(observed) for _ in o]
    h, r, q, t0 = _fit(link, np.concatenate(observed),
                       np.array([SECTOR_BYTES * counts[i].request_sectors for i in take]),
                       np.array([counts[i].requests for i in take]), np.array([counts[i].half_lines for i in take]),
                       floor)
    return Model(link, h, r, t0, floor,
                 _("fitted on the {sweeps} sweep of {record}").format(
                     sweeps="+".join(_(SWEEP_NAMES[k]) for k in FIT_SWEEPS), record=_identity(rec))
                 + ("" if counted == "counted"
                    else _(" (the record has no counters: race of two warps assumed 50/50)")),
                 race, q)


@dataclass(frozen=True)
class Row:
    """One sweep point: measured against predicted useful bandwidth."""

    kind: str            # "stride", "offset" or "vector_width"
    kernel: str
    stride: int
    offset_floats: int
    measured_GBps: float
    predicted_GBps: float
    rel_error: float     # (predicted - measured) / measured
    fitted: bool         # the model was fitted on this very point


def compare_with_record(record: Any, model: Model | None = None) -> list[Row]:
    """Measured against predicted useful bandwidth at every zero-copy sweep point (model-zero-copy-reads).

    Without ``model`` the model is calibrated on ``record`` itself (its stride sweep); the rows
    the model was fitted on have ``fitted`` set."""
    rec = _as_record(record)
    model = model or calibrate(rec)
    # the note names the fit record in either language (拟合于 {record} 的步长扫描): look for it, not for " of ..."
    same = _identity(rec) in model.calibrated_on and "date" in rec.get("provenance", {})
    rows = []
    for p in sweep_points(rec):
        seconds, _bound = model.cost(_counts(p, model.race))
        measured, predicted = p.useful_bytes / p.seconds / 1e9, p.useful_bytes / seconds / 1e9
        rows.append(Row(p.kind, p.kernel, p.stride, p.offset, float(measured), float(predicted),
                        float((predicted - measured) / measured), same and p.kind in FIT_SWEEPS))
    return rows


def _summary(rows: list[Row]) -> dict[str, Any]:
    errors = np.abs([r.rel_error for r in rows])
    worst = rows[int(np.argmax(errors))]
    return {"points": len(rows), "median_abs_error": float(np.median(errors)), "max_abs_error": float(errors.max()),
            "worst": {"kind": worst.kind, "kernel": worst.kernel, "stride": worst.stride,
                      "offset_floats": worst.offset_floats, "measured_GBps": worst.measured_GBps,
                      "predicted_GBps": worst.predicted_GBps, "rel_error": worst.rel_error}}


def _repeats(record: Any) -> dict[tuple[str, str, int, int], np.ndarray]:
    """Every timed repeat of every zero-copy sweep point as a useful rate (bytes/s), keyed (kind, kernel, stride,
    offset)."""
    return {key: useful / seconds for key, useful, seconds in _timed_rows(record)}


def _median_rate(rates: np.ndarray) -> float:
    """The rate at the median time, as the records' ``useful_GBps`` (not the median of the rates)."""
    return float(1 / np.median(1 / rates))


def _label(key: tuple[str, str, int, int]) -> str:
    kind, kernel, stride, offset = key
    return {"stride": f"stride {stride}", "offset": f"offset {offset}"}.get(
        kind, f"{kind} {kernel.replace('read_strided', 'float').replace('_float4', '4')}")


def _spread(rates: np.ndarray) -> float:
    """A point's spread in one record: (longest - shortest repeat) / median time."""
    seconds = 1 / rates
    return float((seconds.max() - seconds.min()) / np.median(seconds))


def run_to_run(first: Any, second: Any) -> dict[str, Any] | None:
    """How much the same sweep points' measured rates differ between two runs (model-zero-copy-reads): the noise floor.

    ``median_abs_difference``/``max_abs_difference``: |rate in ``second`` / rate in ``first`` - 1|.
    ``first_as_model``: the errors made predicting ``second`` by ``first``'s own measurements, in the model's
    convention ((predicted - measured) / measured): no model fitted on ``first`` can be expected to predict
    ``second`` more closely, as its best is to reproduce ``first``. ``spread``: per point, (slowest - fastest
    repeat) / median in each run. A point is **reproducible** when the two runs' repeats overlap (the fastest
    repeat of each is no faster than the slowest of the other). ``targets_reachable``: whether ``first_as_model``
    itself meets :data:`TARGET_MEDIAN` and :data:`TARGET`; ``why`` says, when not. None when they share no point."""
    a, b = _repeats(first), _repeats(second)
    shared = [key for key in a if key in b]
    if not shared:
        return None
    rate_a = np.array([_median_rate(a[k]) for k in shared])
    rate_b = np.array([_median_rate(b[k]) for k in shared])
    differences = rate_b / rate_a - 1    # as model-zero-copy-reads prints it: the second run against the first
    as_model = rate_a / rate_b - 1       # the first run's rate as the prediction of the second's
    i = int(np.argmax(np.abs(differences)))
    j = int(np.argmax(np.abs(as_model)))
    overlap = [bool(a[k].min() <= b[k].max() and b[k].min() <= a[k].max()) for k in shared]
    spread = {name: {"median": float(np.median([_spread(r[k]) for k in shared])),
                     "max": float(max(_spread(r[k]) for k in shared))} for name, r in (("first", a), ("second", b))}
    by_sweep = {}
    for kind in CHECK_SWEEPS:
        chosen = np.abs([e for e, k in zip(as_model, shared) if k[0] == kind])
        if len(chosen):
            by_sweep[kind] = {"points": len(chosen), "median_abs_error": float(np.median(chosen)),
                              "max_abs_error": float(chosen.max()),
                              "reproducible_points": sum(o for o, k in zip(overlap, shared) if k[0] == kind)}
    floor_median, floor_max = float(np.median(np.abs(as_model))), float(np.abs(as_model).max())
    reachable = floor_median <= TARGET_MEDIAN and floor_max <= TARGET
    why = None if reachable else (
        f"the targets (median {TARGET_MEDIAN:.0%}, largest {TARGET:.0%}) lie below the noise floor: the fit record's "
        f"own measurements predict the check record's with median |error| {floor_median:.1%} and up to "
        f"{floor_max:.1%} ({_label(shared[j])}), and only {sum(overlap)} of {len(shared)} points agree within "
        "their repeats; a model fitted on the one record cannot be expected to meet them on the other")
    return {"points": len(shared), "median_abs_difference": float(np.median(np.abs(differences))),
            "max_abs_difference": float(np.abs(differences).max()),
            "worst": {"kind": shared[i][0], "kernel": shared[i][1], "stride": shared[i][2],
                      "offset_floats": shared[i][3], "difference": float(differences[i])},
            "first_as_model": {"median_abs_error": floor_median, "max_abs_error": floor_max,
                               "worst": {"kind": shared[j][0], "kernel": shared[j][1], "stride": shared[j][2],
                                         "offset_floats": shared[j][3], "rel_error": float(as_model[j])},
                               "by_sweep": by_sweep},
            "spread": spread, "reproducible_points": int(sum(overlap)),
            "not_reproducible": [_label(k) for k, o in zip(shared, overlap) if not o],
            "targets_reachable": reachable, "why": why}


def _against_floor(rows: list[Row], floor: dict[str, Any], fit_record: Any, check_record: Any,
                   fit_same: dict[str, Any]) -> dict[str, Any]:
    """The model's errors on the check record's points beside the floor (:func:`run_to_run`); ``fit_same``: the fit
    record's :func:`same_counts_floor`."""
    a, b = _repeats(fit_record), _repeats(check_record)
    model = {(r.kind, r.kernel, r.stride, r.offset_floats): abs(r.rel_error) for r in rows}
    shared = [k for k in model if k in a and k in b]
    record = {k: abs(_median_rate(a[k]) / _median_rate(b[k]) - 1) for k in shared}
    errors = np.array([model[k] for k in shared])
    fm, fx = floor["first_as_model"]["median_abs_error"], floor["first_as_model"]["max_abs_error"]
    median, largest = float(np.median(errors)), float(errors.max())
    within = median <= fm and largest <= fx
    return {"points": len(shared), "model_median_abs_error": median, "model_max_abs_error": largest,
            "floor_median_abs_error": fm, "floor_max_abs_error": fx,
            "median_within_floor": median <= fm, "max_within_floor": largest <= fx, "within_floor": within,
            # per point: the model no further from the check record than the fit record's own measurement is
            "points_within_floor": int(sum(model[k] <= record[k] for k in shared)),
            # what the largest error exceeds the floor by, against what the fit record's own points with the same
            # counts force on any model of the counts fitted there
            "largest_excess": max(largest - fx, 0.0), "fit_record_same_counts": fit_same["max_abs_error"],
            "verdict": _verdict(median, largest, fm, fx, fit_same)}


def _verdict(median: float, largest: float, floor_median: float, floor_max: float, fit_same: dict[str, Any]) -> str:
    def part(name: str, model: float, floor: float) -> str:
        return f"{name} {model:.1%} {'within' if model <= floor else 'above'} the floor's {floor:.1%}"

    text = (f"{part('median', median, floor_median)}, {part('largest', largest, floor_max)} (the floor: the fit "
            "record's own measurements as the prediction)")
    excess = largest - floor_max
    if 0 < excess <= fit_same["max_abs_error"]:
        text += (f"; the excess, {excess:.1%}, is no more than the {fit_same['max_abs_error']:.1%} that the fit "
                 f"record's own points with the same counts ({', '.join(fit_same['group'])}) force on any model of "
                 "the counts fitted there")
    return text


LEVEL_TOLERANCE = 0.03  # two runs' request-bound points at "the same level": median ratio within 3 % (issue 19's goal)


def levels(fit_record: Any, check_record: Any, model: Model) -> dict[str, Any]:
    """The check record's rates against the fit record's, split by what bounds each point in ``model``:
    ``link_bound`` (the link term is the largest) and ``request_bound`` (requests or halves of lines are), each
    with its points, the median ratio (check / fit) and the largest |difference| (model-zero-copy-reads).

    On the lent H200 the link-bound points of every quiet record agree within about 1 %, while the request-bound
    points differ from one device call to another by up to 9 % (calls land on different boards and hosts)."""
    a, b = _repeats(fit_record), _repeats(check_record)
    bound = {(p.kind, p.kernel, p.stride, p.offset): model.cost(_counts(p, model.race))[1]
             for p in sweep_points(fit_record)}
    found: dict[str, Any] = {}
    for name, wanted in (("link_bound", {"link"}), ("request_bound", {"requests", "half_lines"})):
        keys = [k for k in a if k in b and bound.get(k) in wanted]
        if not keys:
            continue
        ratios = np.array([_median_rate(b[k]) / _median_rate(a[k]) for k in keys])
        found[name] = {"points": len(keys), "median_ratio": float(np.median(ratios)),
                       "max_abs_difference": float(np.abs(ratios - 1).max())}
    request = found.get("request_bound")
    found["same_level"] = bool(request and abs(request["median_ratio"] - 1) <= LEVEL_TOLERANCE)
    return found


def check(fit_record: Any, check_record: Any, *, allow_same: bool = False) -> dict[str, Any]:
    """Fit on ``fit_record``'s stride sweep; judge on the points it was not fitted on (model-zero-copy-reads).

    Held out: the other sweeps of ``fit_record`` and every sweep of ``check_record``. Refuses
    (ModelError) when both are the same run (same GPU and date), unless ``allow_same``."""
    fit_rec, check_rec = _as_record(fit_record), _as_record(check_record)
    if _identity(fit_rec) == _identity(check_rec) and not allow_same:
        raise ModelError(f"the fit and check records are the same run ({_identity(fit_rec)}): a model checked on the "
                         "data it was fitted on proves little. Record a second run on the GPU with "
                         "`python -m helpers record`, pass --fit/--check, or --allow-same to compare anyway.")
    model = calibrate(fit_rec)
    fitted = compare_with_record(fit_rec, model)
    held = [r for r in fitted if not r.fitted]
    checked = compare_with_record(check_rec, model)
    held_out = held + ([r for r in checked if not r.fitted] if _identity(fit_rec) != _identity(check_rec) else [])
    if not held_out:
        raise ModelError("no held-out points: the records have no zero-copy offset, vector_width or stride rows "
                         "beyond those the model was fitted on")
    result = {"same_run": _identity(fit_rec) == _identity(check_rec), **_summary(held_out),
              "targets": {"median_abs_error": TARGET_MEDIAN, "max_abs_error": TARGET,
                          "beyond_allocation_spread": FLOOR_MARGIN}}
    fit_floor, check_floor = allocation_floor(fit_rec), allocation_floor(check_rec)
    result["allocation_floor"] = {"fit record": public_floor(fit_floor), "check record": public_floor(check_floor)}
    # each record's points judged against that record's own floor (or the fixed targets where it has none)
    own_held = _floor_verdict(held, fit_floor) if held else None
    result["meets_targets"] = bool((own_held is None or own_held["meets_targets"])
                                   and result["median_abs_error"] <= TARGET_MEDIAN)
    result["parameters"] = model.parameters()
    if not result["same_run"]:  # the check record's points alone: how the model does on a run it never saw
        alone = _summary(checked)
        verdict = _floor_verdict(checked, check_floor)
        result["check_record_only"] = {**alone, **verdict}
        result["meets_targets"] = bool(result["meets_targets"] and verdict["meets_targets"])
    elif own_held is not None:
        result.update({k: v for k, v in own_held.items() if k != "meets_targets"})
    result["fit_points"] = _summary([r for r in fitted if r.fitted]) if any(r.fitted for r in fitted) else None
    by_sweep: dict[str, Any] = {}
    for label, rows in (("fit record", held), ("check record", [] if result["same_run"] else checked)):
        for kind in CHECK_SWEEPS:
            chosen = [r for r in rows if r.kind == kind and not r.fitted]
            if chosen:
                by_sweep[f"{label}: {kind}"] = {k: v for k, v in _summary(chosen).items() if k != "worst"}
    result["by_sweep"] = by_sweep
    # the measurements' own repeatability across the two runs: the floor under any held-out error
    result["run_to_run"] = None if result["same_run"] else run_to_run(fit_rec, check_rec)
    fit_same = same_counts_floor(fit_rec, model.race)
    if result["run_to_run"]:
        result["run_to_run"]["model_vs_floor"] = _against_floor(checked, result["run_to_run"], fit_rec, check_rec,
                                                                fit_same)
    result["noise_floor"] = _noise_floor(result, held, fit_rec, check_rec, model.race, fit_same)
    # counts before times: the trace's counts (with the fit record's race) against each record's counters
    result["counts"] = {label: counts_summary(compare_counts(rec, model.race))
                        for label, rec in (("fit record", fit_rec), ("check record", check_rec))
                        if rec["experiments"].get("counters")}
    result["quiet"] = {label: is_quiet(rec) for label, rec in (("fit record", fit_rec), ("check record", check_rec))}
    result["levels"] = None if result["same_run"] else levels(fit_rec, check_rec, model)
    result["timed_in_rounds"] = {label: timed_in_rounds(rec)
                                 for label, rec in (("fit record", fit_rec), ("check record", check_rec))}
    return result


def timed_in_rounds(record: Any) -> bool:
    """True when the record's stride and offset sweeps were timed in rounds (helpers/experiments/access.py), so a
    drift during a sweep reached every point alike; earlier records timed each point's repeats back to back."""
    experiments = _as_record(record)["experiments"]
    return all(experiments.get(k, {}).get("params", {}).get("order") == "rounds" for k in ("stride", "offset"))


def level_groups(checks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The held-out records split by the level of their request-bound points against the fit record's
    (:func:`levels`): ``same`` (within :data:`LEVEL_TOLERANCE`) and ``other``, each with the records' names, their
    request-bound ratios, and the names of those on which the model meets both targets; ``link`` the largest
    link-bound |difference| over all. Only records with quiet sweeps are grouped (model-zero-copy-reads)."""
    groups: dict[str, Any] = {"same": {"records": [], "ratios": [], "meets": []},
                              "other": {"records": [], "ratios": [], "meets": []}, "link": 0.0}
    for name, c in checks.items():
        found = c.get("levels")
        if not found or "request_bound" not in found or not c["quiet"]["check record"]:
            continue
        group = groups["same" if found["same_level"] else "other"]
        group["records"].append(name)
        group["ratios"].append(found["request_bound"]["median_ratio"])
        if c.get("check_record_only", c)["meets_targets"]:
            group["meets"].append(name)
        if "link_bound" in found:
            groups["link"] = max(groups["link"], found["link_bound"]["max_abs_difference"])
    return groups



def same_counts_floor(record: Any, race: Race = Race()) -> dict[str, Any]:
    """Within one record: the largest |error| any prediction made from the counts must make (model-zero-copy-reads).

    Points whose counts per useful byte are the same (strides 32, 48 and 64; offsets 1 to 7; ...) get the same
    predicted rate from any model of the counts, however it is fitted, even on this very record. Where their
    measured rates differ, the best single prediction, 2 x fastest x slowest / (fastest + slowest), still misses
    both by (fastest - slowest) / (fastest + slowest). ``max_abs_error`` is the largest such miss over the groups,
    ``group`` the points of that group."""
    groups: dict[tuple[float, ...], list[tuple[str, float]]] = {}
    for p in sweep_points(record):
        c = _counts(p, race)
        key = tuple(round(getattr(c, f) / c.useful_bytes * 1e6, 3) for f in Counts.__dataclass_fields__
                    if f != "useful_bytes")
        groups.setdefault(key, []).append((_label((p.kind, p.kernel, p.stride, p.offset)), p.useful_bytes / p.seconds))
    best, worst = 0.0, []
    for members in groups.values():
        rates = [rate for _, rate in members]
        miss = (max(rates) - min(rates)) / (max(rates) + min(rates))
        if len(members) > 1 and miss > best:
            best, worst = miss, [label for label, _ in members]
    return {"max_abs_error": float(best), "group": worst,
            "groups": sum(len(m) > 1 for m in groups.values()), "points": sum(len(m) for m in groups.values())}


def _noise_floor(result: dict[str, Any], held: list[Row], fit_rec: dict[str, Any], check_rec: dict[str, Any],
                 race: Race, fit_same: dict[str, Any]) -> dict[str, Any]:
    """What :func:`check` reports beside the model's errors: the floor, whether the error is within it, and whether
    the targets are reachable at all."""
    spread = [_spread(s) for s in _repeats(fit_rec).values()]
    out: dict[str, Any] = {"fit_record_spread": {"median": float(np.median(spread)), "max": float(max(spread))}}
    same = {"fit record": fit_same}
    if not result["same_run"]:
        same["check record"] = same_counts_floor(check_rec, race)
    out["same_counts"] = same
    floor = result["run_to_run"]
    if floor is None:  # one run: only its repeats' own spread bounds the error on its held-out sweeps
        out.update(check_record=None, targets_reachable=None, within_floor=None,
                   why="one run only: no second run to measure the floor between runs; the repeats' spread above "
                       "bounds only the error on its own held-out sweeps")
        return out
    verdict = floor["model_vs_floor"]
    out.update(check_record={"median_abs_error": floor["first_as_model"]["median_abs_error"],
                             "max_abs_error": floor["first_as_model"]["max_abs_error"],
                             "worst": floor["first_as_model"]["worst"],
                             "reproducible_points": floor["reproducible_points"], "points": floor["points"],
                             "check_record_spread": floor["spread"]["second"]},
               targets_reachable=floor["targets_reachable"], within_floor=verdict["within_floor"],
               verdict=verdict["verdict"], why=floor["why"])
    inside = same["check record"]
    if inside["max_abs_error"] > TARGET:
        out["targets_reachable"] = False
        out["why"] = ((out["why"] + "; moreover ") if out["why"] else "") + (
            f"within the check record alone, points with the same counts ({', '.join(inside['group'])}) differ so "
            f"much that any model of the counts, even one fitted on that record, misses one of them by "
            f"{inside['max_abs_error']:.1%}, above the largest error allowed ({TARGET:.0%})")
    if not result["meets_targets"] and out["targets_reachable"]:
        out["why"] = ("the floor is within the targets, so the model's form or its fitted numbers miss what the "
                      "check record shows")
    return out


# ---------------------------------------------------------------------- narration for model-zero-copy-reads
def _per_line(rows: list[CountRow], offsets: Any) -> tuple[float, float] | None:
    values = [r.counted_requests / r.lines for r in rows if r.kernel == "read_strided" and r.stride == 1
              and r.offset_floats in set(offsets)]
    return (min(values), max(values)) if values else None


def read_counts(rows: list[CountRow]) -> str:
    """The reading of the counters (model-zero-copy-reads), as Markdown bullets computed from ``rows`` (no figure
    typed)."""
    aligned = [r.counted_requests / r.lines for r in rows if r.offset_floats % 32 == 0]
    out = [_("- Aligned patterns (every stride, `float` and `float4`): {low:.3f}-{high:.3f} PCIe read requests "
             "per line touched.").format(low=min(aligned), high=max(aligned))]
    groups = ((_("offsets 1 to 7 (the lower warp needs only a sector the upper warp needs too)"), range(1, 8)),
              (_("offsets 8, 16, 24 (the two warps need disjoint sectors)"), (8, 16, 24)),
              (_("other offsets 9 to 23 (overlapping spans)"), [o for o in range(9, 24) if o % 8]),
              (_("offsets 25 to 31 (the upper warp needs only a sector the lower warp needs too)"), range(25, 32)))
    for label, offsets in groups:
        found = _per_line(rows, offsets)
        if found:
            out.append(_("- {label}: {low:.3f}-{high:.3f} requests per line, {low2:.3f}-{high2:.3f} per warp-line "
                         "(a warp's share of a line: two warps share every line).").format(
                label=label, low=found[0], high=found[1], low2=found[0] / 2, high2=found[1] / 2))
    ratios = [r.l2_requests / r.counted_requests for r in rows]
    out.append(_("- The L2's sysmem request counter: {low:.2f}-{high:.2f}x the PCIe read requests, for every "
                 "pattern.").format(low=min(ratios), high=max(ratios)))
    return "\n".join(out)


def header_table(record: Any) -> tuple[Any, float]:
    """(table, median bytes per completion beyond its data) of :func:`header_bytes`, for model-zero-copy-reads."""
    from ..tables import table

    rows = header_bytes(record)
    shown = table([_("stride"), _("sectors per line (trace)"), _("pcie__read_bytes / (32 B x span)"),
                   _("bytes per completion beyond its data")],
                  [(h["stride"], f"{h['sectors_per_line']:.0f}", f"{h['read_over_span']:.4f}",
                    f"{h['bytes_per_completion_beyond_data']:.2f}") for h in rows])
    return shown, float(np.median([h["bytes_per_completion_beyond_data"] for h in rows]))


def explain_h(model: Model, header: float) -> str:
    """The fitted ``h`` against the counted completion header, in words (model-zero-copy-reads)."""
    text = _("Fitted h = {h:.1f} B per request, in units of the pinned copy's payload ({link:.1f} GB/s); counted: "
             "{header:.1f} B of header per completion. A 128-byte line costs {fitted:.3f}x its data in the copy's "
             "units, {counted:.3f}x counted by pcie__read_bytes. ").format(
        h=model.overhead_bytes, link=model.link_GBps, header=header, fitted=(128 + model.overhead_bytes) / 128,
        counted=(128 + header) / 128)
    if model.overhead_bytes < header:
        return text + _("h is below the counted header: the copy's own packets carry more than 128 bytes each, so "
                        "its payload rate is further below the wire rate than a small completion's uncounted framing "
                        "costs.")
    return text + _("h exceeds the counted header by {extra:.1f} B: per-packet framing no counter here sees, less "
                    "what the copy's payload rate already absorbed.").format(extra=model.overhead_bytes - header)


def check_table(checks: dict[str, dict[str, Any]]) -> Any:
    """One row per held-out record: quiet or not, points, errors, the floor beside them, counts within target
    (model-zero-copy-reads)."""
    from ..tables import table

    def counts(c: dict[str, Any]) -> str:
        found = c["counts"].get("check record")
        return _("no counters") if found is None else (_("yes") if found["within_target"] else _("no"))

    def floor(c: dict[str, Any]) -> tuple[str, str]:
        found = (c.get("noise_floor") or {}).get("check_record")
        if not found:
            return _("one run: none"), "-"
        verdict = c["run_to_run"]["model_vs_floor"]
        said = {True: _("yes"), False: _("no")}
        return (f"{found['median_abs_error']:.1%} / {found['max_abs_error']:.1%}",
                _("median {median}, largest {largest}").format(median=said[bool(verdict["median_within_floor"])],
                                                               largest=said[bool(verdict["max_within_floor"])]))

    rows = []
    for name, c in checks.items():
        own = c.get("check_record_only", c)  # the same run: its own held-out sweeps
        quiet = (_("no (16 MiB, 5 repeats)") if not c["quiet"]["check record"]
                 else _("yes, in rounds") if c.get("timed_in_rounds", {}).get("check record") else _("yes"))
        level = (c.get("levels") or {}).get("request_bound")
        rows.append((name, quiet, own["points"], f"{own['median_abs_error']:.1%}", f"{own['max_abs_error']:.1%}",
                     *floor(c), "-" if level is None else f"{level['median_ratio'] - 1:+.1%}", counts(c)))
    return table([_("held out: record (its points only)"), _("quiet sweeps?"), _("points"), _("median abs. error"),
                  _("largest abs. error"), _("the fit record's own points as the prediction (median / largest)"),
                  _("model within that prediction's error?"),
                  _("request-bound points against the fit record (median)"), _("counts within 2 %?")], rows)
