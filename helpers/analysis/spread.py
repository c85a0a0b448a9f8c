"""The spread across the committed records, and the one rule for saying that two figures differ (issue 30 §5).

A figure measured once is one draw: the same experiment in another record (another day, board, allocation or VM
state) lands elsewhere. So a verdict that compares two figures of one run (a pageable copy against a host copy plus
a DMA, measure-what-pinning-buys; a just-written table against an evicted one, measure-latency) says "they differ"
only when the difference is

- larger than this run's own spread (its repeats), and
- of the same sign in every committed record that holds both figures (the range of the difference across the
  records, this run's included, does not reach 0).

Otherwise the records cannot tell. :func:`beyond_spread` is that rule; :func:`across_records` computes any figure in
every committed record; a findings verdict that compares two figures calls :func:`beyond_spread`, most through
:func:`values_apart`, :func:`seconds_apart` or :func:`rates_apart` (``tests/test_spread.py`` lists the verdicts it
holds to this). A live run is one more record: its difference joins the committed records' (those of its GPU, with
:func:`same_gpu`), and where none holds the figure it is judged by its own repeats alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

from .. import records
from ..errors import RecordError
from ..experiments.result import Result


@dataclass(frozen=True)
class Range:
    """The lowest and highest value of one figure across records, and the records it was found in."""

    low: float
    high: float
    records: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.records)

    def including(self, value: float, name: str = "this run") -> Range:
        """The range widened to take ``value`` in (a live run that is not among the committed records)."""
        return Range(min(self.low, value), max(self.high, value), (*self.records, name))

    def one_sign(self) -> bool:
        """Whether every value lies on one side of 0 (none is 0)."""
        return self.low > 0 or self.high < 0

    def words(self, unit: str = "", digits: int = 1) -> str:
        """'3.7-10.6 GB/s' (one value: '3.7 GB/s')."""
        low, high = f"{self.low:.{digits}f}", f"{self.high:.{digits}f}"
        text = low if low == high else f"{low}-{high}"
        return text + unit if unit == "x" else f"{text} {unit}".strip()


@lru_cache(maxsize=4)
def _committed(gpu: str, directory: Path | None) -> tuple[tuple[str, Result], ...]:
    found = []
    for record, path in records.matching_records(gpu, directory):
        for name, experiment in record["experiments"].items():
            found.append((name, Result(name, experiment["params"], experiment["rows"], False,
                                       record["provenance"], path.name)))
    return tuple(found)


def across_records(name: str, figure: Callable[[Result], float | None], gpu: str = "H200",
                   directory: Path | None = None) -> Range:
    """``figure`` of experiment ``name`` in every committed record of ``gpu`` (data/) that holds it; a record for
    which ``figure`` returns None or raises LookupError or RecordError (it predates the row) is left out. Raises LookupError when
    no record gives a value."""
    values: list[tuple[float, str]] = []
    for experiment, result in _committed(gpu, directory):
        if experiment != name:
            continue
        try:
            value = figure(result)
        except (LookupError, RecordError):
            continue
        if value is not None and math.isfinite(value):
            values.append((float(value), str(result.record_file)))
    if not values:
        raise LookupError(f"No committed {gpu} record gives a value of {name!r} for this figure.")
    numbers = [v for v, _ in values]
    return Range(min(numbers), max(numbers), tuple(f for _, f in values))


def across_record_pairs(first: str, second: str, figure: Callable[[Result, Result], float | None],
                        gpu: str = "H200", directory: Path | None = None) -> Range:
    """As :func:`across_records`, for a figure that needs two experiments of the same record (a zero-copy kernel's
    rate against a copy's, measure-bandwidth): ``figure(first's result, second's result)`` in every committed record
    that holds both."""
    by_file: dict[str, dict[str, Result]] = {}
    for experiment, result in _committed(gpu, directory):
        by_file.setdefault(str(result.record_file), {})[experiment] = result
    values: list[tuple[float, str]] = []
    for name, found in by_file.items():
        if first not in found or second not in found:
            continue
        try:
            value = figure(found[first], found[second])
        except (LookupError, RecordError):
            continue
        if value is not None and math.isfinite(value):
            values.append((float(value), name))
    if not values:
        raise LookupError(f"No committed {gpu} record gives a value of {first!r} against {second!r} for this figure.")
    numbers = [v for v, _ in values]
    return Range(min(numbers), max(numbers), tuple(f for _, f in values))


def beyond_spread(difference: float, across: Range, own: float = 0.0) -> bool:
    """Whether this run's ``difference`` between two figures is real: larger than ``own`` (this run's spread in the
    difference's direction, from its repeats) and of one sign in every record (``across``, the difference in each
    committed record, this run's included by the caller where it is live)."""
    return abs(difference) > own and across.one_sign() and (difference > 0) == (across.low > 0)


def same_gpu(result: Result) -> Callable[[Result], bool]:
    """Which committed records count as runs of ``result``: those of the GPU it ran on (a live run on a GPU with no
    committed record is then judged by its own repeats alone)."""
    return lambda record: record.gpu == result.gpu


def _across(name: str, figure: Callable[[Result], float | None], difference: float, live: bool,
            like: Callable[[Result], bool] | None) -> Range:
    """The difference in every committed record of experiment ``name`` that ``like`` accepts (all H200 records
    when None), this run's included when it is live; this run's alone when no record holds it."""
    try:
        across = across_records(name, lambda r: figure(r) if like is None or like(r) else None)
    except LookupError:
        return Range(difference, difference, ("this run",))
    return across.including(difference) if live else across


def values_apart(result: Result, name: str, first: dict, second: dict,
                 per_repeat: Callable[[dict], Sequence[float]],
                 like: Callable[[Result], bool] | None = None) -> bool:
    """Whether row ``second`` of ``result`` differs from row ``first`` by the course's rule, in a figure each row
    gives once a repeat (``per_repeat``: seconds, or ns per load, measure-latency): the gap between the medians
    beyond both rows' repeats, and of one sign across the committed records of experiment ``name`` that ``like``
    accepts (this run's included when it is live). A row timed on fresh allocations has them among its repeats,
    and each record made its own, so the records' spread holds the allocations' too."""
    import numpy as np

    a = np.asarray(per_repeat(result.one(**first)), float)
    b = np.asarray(per_repeat(result.one(**second)), float)
    am, bm = float(np.median(a)), float(np.median(b))
    difference = bm - am
    own = (bm - b.min()) + (a.max() - am) if difference > 0 else (b.max() - bm) + (am - a.min())
    across = _across(name, lambda r: float(np.median(per_repeat(r.one(**second))))
                     - float(np.median(per_repeat(r.one(**first)))), difference,
                     bool(getattr(result, "live", False)), like)
    return beyond_spread(difference, across, own)


def seconds_apart(result: Result, name: str, first: dict, second: dict,
                  like: Callable[[Result], bool] | None = None) -> bool:
    """Whether row ``second`` of ``result`` took a different time from row ``first`` by the course's rule: the gap
    between their median seconds beyond both rows' repeats, and of one sign across the committed records of
    experiment ``name`` (this run's included when it is live)."""
    return values_apart(result, name, first, second, lambda row: row["seconds"], like)


def rates_apart(result: Result, name: str, first: dict, second: dict, key: str,
                like: Callable[[Result], bool] | None = None) -> bool:
    """As :func:`seconds_apart`, for rows that carry a rate ``key`` (GB/s at the median time) beside their repeats:
    the gap between the two rates beyond both rows' bands (slowest to fastest repeat), and of one sign across the
    committed records of experiment ``name`` that ``like`` accepts."""
    from ..experiments.quiet import band

    a, b = result.one(**first), result.one(**second)
    difference = float(b[key]) - float(a[key])
    (a_lo, a_mid, a_hi), (b_lo, b_mid, b_hi) = band(a, key), band(b, key)
    own = (b_mid - b_lo) + (a_hi - a_mid) if difference > 0 else (a_mid - a_lo) + (b_hi - b_mid)
    across = _across(name, lambda r: float(r.one(**second)[key]) - float(r.one(**first)[key]), difference,
                     bool(getattr(result, "live", False)), like)
    return beyond_spread(difference, across, own)
