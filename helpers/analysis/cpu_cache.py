"""measure-latency: did the CPU's cache state change a zero-copy load? A chase over a table the CPU has just written
against one pushed out of its caches, judged by the course's rule for two figures
(:func:`helpers.analysis.spread.beyond_spread`): beyond this run's own spread, and of one sign in every committed
record. The findings sentence and the prediction's answer both come from :func:`judge`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..experiments.latency import load_ns_spread
from . import spread


def _rows(latency: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    hot = latency.select(memory="zero_copy", cpu_cache="just_written")
    cold = latency.select(memory="zero_copy", cpu_cache="evicted")
    return (hot[0], cold[0]) if hot and cold else None


def hot_minus_cold(latency: Any) -> float | None:
    """Median ns per zero-copy load over a table just written by the CPU minus over one pushed out of its caches
    (None when the run has not both)."""
    rows = _rows(latency)
    return load_ns_spread(rows[0])[1] - load_ns_spread(rows[1])[1] if rows else None


def evicted_ns(latency: Any) -> float | None:
    """Median ns per zero-copy load over a table pushed out of the CPU's caches (None when the run has none)."""
    cold = latency.select(memory="zero_copy", cpu_cache="evicted")
    return load_ns_spread(cold[0])[1] if cold else None


def own_spread(cold: dict[str, Any], hot: dict[str, Any]) -> float:
    """The ns by which the median of ``hot`` must move from that of ``cold`` before the two rows' bands (lowest to
    highest repeat) part, in the direction it moved: this run's own spread in the difference."""
    (c_low, c_mid, c_high), (h_low, h_mid, h_high) = load_ns_spread(cold), load_ns_spread(hot)
    return (c_high - c_mid) + (h_mid - h_low) if h_mid >= c_mid else (c_mid - c_low) + (h_high - h_mid)


@dataclass(frozen=True)
class Judged:
    """The two chases, the difference, its range and the evicted figure's range across runs, and the verdict."""

    hot_ns: float
    cold_ns: float
    difference: float
    across: spread.Range
    levels: spread.Range
    bands_part: bool          # this run's bands (lowest to highest repeat) do not overlap
    real: bool                # beyond this run's spread and of one sign across the runs

    @property
    def answer(self) -> str:
        """"faster" or "slower" (a just-written table against an evicted one) where the difference is real, else
        "same"."""
        return ("faster" if self.difference < 0 else "slower") if self.real else "same"


def judge(latency: Any, directory: Path | None = None) -> Judged | None:
    """The CPU-cache comparison of ``experiments.latency()`` against the committed records (``directory``: data/
    unless given); a live run is counted among the runs. None when the run has not both chases."""
    rows = _rows(latency)
    if rows is None:
        return None
    hot, cold = rows
    difference = float(hot_minus_cold(latency))
    across = spread.across_records("latency", hot_minus_cold, directory=directory)
    levels = spread.across_records("latency", evicted_ns, directory=directory)
    if latency.live:
        across, levels = across.including(difference), levels.including(float(evicted_ns(latency)))
    (c_low, _, c_high), (h_low, _, h_high) = load_ns_spread(cold), load_ns_spread(hot)
    return Judged(load_ns_spread(hot)[1], load_ns_spread(cold)[1], difference, across, levels,
                  h_low > c_high or h_high < c_low,
                  spread.beyond_spread(difference, across, own_spread(cold, hot)))
