"""The course's performance targets for the H200, checked against a record (``python -m helpers targets``).

Targets are benchmarks, not unit tests: a record made on another GPU, or on a busy one, may
miss them without anything being broken. The measure-bandwidth lesson shows the same figures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ..records import Record
from .summary import headline


@dataclass(frozen=True)
class Target:
    name: str
    figure: Callable[[dict[str, Any]], float | None]
    floor: float
    unit: str


# The read floor is 0.92: three records and seven read mechanisms (keep-enough-bytes-in-flight's `inflight`) show
# GPU-initiated reads of host memory plateau at 0.92-0.93 of the copy engine on the H200's link.
TARGETS = (
    Target("best zero-copy read / pinned memcpy HtoD (same run)",
           lambda h: h.get("zero_copy_read_over_memcpy_htod"), 0.92, ""),
    Target("best zero-copy write / pinned memcpy DtoH (same run)",
           lambda h: h.get("zero_copy_write_over_memcpy_dtoh"), 0.93, ""),
    Target("device-memory read", lambda h: h.get("device_read_GBps"), 4000.0, "GB/s"),
)


def check(record: Record) -> list[dict[str, Any]]:
    """One row per target: the figure the record gives, the floor, and whether it is met."""
    figures = headline(record)
    rows = []
    for target in TARGETS:
        value = target.figure(figures)
        rows.append({"target": target.name, "value": value, "floor": target.floor, "unit": target.unit,
                     "met": value is not None and value >= target.floor})
    return rows
