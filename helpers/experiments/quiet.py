"""The quiet-sweep rule, as a table the tests and the model check read (the lessons that rest on a
sweep: :func:`lessons`).

A sweep that a lesson's conclusion rests on is *quiet* when every point is timed at least
:data:`MIN_REPEATS` times and reads at least :data:`MIN_BYTES` (or, where a point must read less,
takes at least :data:`MIN_SECONDS` a repeat). A 16 MiB zero-copy read is a 0.36 ms kernel: four
H200 records gave the same offset point 17 % apart, more than the effects coalesce-and-align-accesses compares.

:data:`QUIET_SWEEPS` names each such experiment and the parameters that must meet the rule.
For a size sweep (``sizes``), whose small sizes are the point of the sweep (measure-bandwidth shows the
launch and the round trip at 4 KiB), the rule asks: every size gets every repeat, and the sweep
reaches at least :data:`MIN_BYTES`: the sizes the conclusions quote (the link rate, the plateau)
are the large ones. Extend the table with one line per experiment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from .. import lessons as course_lessons

MIN_REPEATS = 9
MIN_BYTES = 256 << 20
MIN_SECONDS = 0.020


@dataclass(frozen=True)
class QuietSweep:
    """Which parameters of an experiment the quiet-sweep rule applies to (the lessons that rest on the sweep
    are those that run it or show its record: :func:`lessons`)."""

    repeats: str = "repeats"                 # timed repeats of every point
    sizes: tuple[str, ...] = ("nbytes",)     # bytes a point reads; a list parameter: its largest entry
    seconds: str | None = None               # a parameter that, when >= MIN_SECONDS, lets a row read less
    rows: bool = True                        # each recorded row reads >= MIN_BYTES or takes >= MIN_SECONDS
                                             # (not for size sweeps); every row's repeats are checked always


QUIET_SWEEPS: dict[str, QuietSweep] = {
    "stride": QuietSweep(),
    "offset": QuietSweep(),
    "vector_width": QuietSweep(sizes=("nbytes", "device_nbytes")),
    "memcpy": QuietSweep(sizes=("sizes",), rows=False),
    "kernel_bandwidth": QuietSweep(sizes=("sizes",), rows=False),
    "inflight": QuietSweep(seconds="min_seconds"),
    # Each cold or warm chase lasts about ``target_seconds``; the buffer sizes are the sweep itself.
    "latency_footprint": QuietSweep(sizes=(), seconds="target_seconds", rows=False),
    # The buffer must fit the caches it tests (8 MiB), so the rule's bytes cannot apply: each repeat re-reads it
    # for as many passes as there are SMs (about 1 GB delivered, about 20 ms for mapped memory); repeats only.
    "caching": QuietSweep(sizes=(), rows=False),
    "managed": QuietSweep(sizes=("sizes",), rows=False),
    "write_combined": QuietSweep(sizes=("gpu_bytes", "cpu_bytes"), rows=False),
    "registered": QuietSweep(rows=False),
    "cpu_traffic": QuietSweep(),
    "read_only_registration": QuietSweep(rows=False),
    # copy-then-read against zero-copy by stride: every point spans the whole 256 MiB array
    "read_once_strided": QuietSweep(),
}


def lessons(name: str) -> tuple[str, ...]:
    """The lessons whose conclusions rest on sweep ``name``: those that run it or show its record."""
    return course_lessons.showing(name)


# Sweeps other changes own (issue 19): each moves into QUIET_SWEEPS once its experiment meets the
# rule; tests/test_quiet_sweeps.py marks them as expected to fail until then (strictly: when one
# passes, the test says to move it).
PENDING: dict[str, QuietSweep] = {
}


def violations(name: str, params: dict[str, Any], spec: QuietSweep | None = None) -> list[str]:
    """What in ``params`` of experiment ``name`` breaks the quiet-sweep rule; empty when quiet."""
    spec = spec or QUIET_SWEEPS.get(name) or PENDING[name]
    found = []
    repeats = params.get(spec.repeats)
    allocations = params.get("allocations", 1)  # a sweep over fresh buffers: its repeats on each, times the buffers
    if not isinstance(repeats, int) or not isinstance(allocations, int) or repeats * allocations < MIN_REPEATS:
        over = "" if allocations == 1 else f" on each of {allocations!r} allocations"
        found.append(f"{name}: {spec.repeats}={repeats!r}{over}, the rule asks >= {MIN_REPEATS} in all")
    for key in spec.sizes:
        value = params.get(key)
        largest = max(value) if isinstance(value, (list, tuple)) and value else value
        if not isinstance(largest, (int, float)) or largest < MIN_BYTES:
            found.append(f"{name}: {key}={value!r} reads under {MIN_BYTES >> 20} MiB")
    if spec.seconds is not None:
        seconds = params.get(spec.seconds)
        if not isinstance(seconds, (int, float)) or seconds < MIN_SECONDS:
            found.append(f"{name}: {spec.seconds}={seconds!r}, the rule asks >= {MIN_SECONDS} s")
    return found


def _row_bytes(row: dict[str, Any]) -> float:
    if "nbytes" in row:
        return float(row["nbytes"])
    return float(row.get("count", 0)) * int(row.get("stride", 1)) * 4


def row_violations(name: str, rows: Iterable[dict[str, Any]], sizes: bool = True) -> list[str]:
    """Rows of a recorded sweep with fewer than MIN_REPEATS times, or (with ``sizes``) under MIN_BYTES
    and MIN_SECONDS."""
    found = []
    for row in rows:
        if "seconds" not in row:  # an untimed row (a registration refused, a probe): no repeats to judge
            continue
        seconds = row["seconds"]
        short = sizes and _row_bytes(row) < MIN_BYTES and float(np.median(seconds)) < MIN_SECONDS
        if len(seconds) < MIN_REPEATS or short:
            what = {k: row[k] for k in ("memory", "kernel", "stride", "offset_floats", "threads") if k in row}
            found.append(f"{name} {what}: {len(seconds)} repeats, {_row_bytes(row) / (1 << 20):.0f} MiB, "
                         f"{float(np.median(seconds)) * 1e3:.2f} ms a repeat")
    return found


def record_violations(record: dict[str, Any], names: Iterable[str] | None = None) -> list[str]:
    """Every break of the rule in a record's sweeps ``names`` (default: all of QUIET_SWEEPS it has)."""
    found = []
    for name in names or QUIET_SWEEPS:
        experiment = record.get("experiments", {}).get(name)
        if experiment is None:
            continue
        spec = QUIET_SWEEPS.get(name) or PENDING[name]
        found += violations(name, experiment["params"], spec)
        found += row_violations(name, experiment["rows"], sizes=spec.rows)
    return found


def band(row: dict[str, Any], key: str) -> tuple[float, float, float]:
    """(lowest, median, highest) of the rate ``key`` (a ``*GBps`` column, taken at the median time) over
    the row's repeats: the spread a plot draws as a band and a comparison must beat (coalesce-and-align-accesses)."""
    seconds = np.asarray(row["seconds"], float)
    median = float(np.median(seconds))
    return float(row[key] * median / seconds.max()), float(row[key]), float(row[key] * median / seconds.min())


def differ(a: dict[str, Any], b: dict[str, Any], key: str) -> bool:
    """True when two rows' rates differ by more than their spreads: their bands do not overlap."""
    (a_lo, _, a_hi), (b_lo, _, b_hi) = band(a, key), band(b, key)
    return a_hi < b_lo or b_hi < a_lo
