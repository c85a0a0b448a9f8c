"""Progress with an estimate of the time left, for ``python -m helpers record`` (long runs on a GPU).

Each experiment counts for the seconds it took in the newest H200 record (its
``experiment_wall_seconds``), so the estimate weighs a long sweep more than a short check;
an experiment that record lacks counts for the median of the others. Output goes to stderr.
"""

from __future__ import annotations

import statistics
import sys
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from .. import records


def expected_seconds(names: Sequence[str]) -> dict[str, float]:
    """Seconds each experiment took in the reference record; 1.0 each when it holds no timings."""
    try:
        record, _ = records.reference_record()
        known = {k: float(v) for k, v in record["provenance"].get("experiment_wall_seconds", {}).items() if v > 0}
    except (records.RecordError, AttributeError, TypeError, ValueError):
        known = {}
    default = statistics.median(known.values()) if known else 1.0
    return {name: known.get(name, default) for name in names}


class _Bar:
    def __init__(self, bar: Any, weights: dict[str, float]) -> None:
        self._bar, self._weights = bar, weights

    def write(self, message: str, file: Any = None) -> None:
        """Print a line above the bar (tqdm.write), keeping the bar at the bottom."""
        self._bar.write(message, file=file or sys.stderr)

    def done(self, name: str) -> None:
        """Advance by the experiment's weight and name the next one."""
        self._bar.update(self._weights.get(name, 0.0))
        self._bar.set_postfix_str(f"done: {name}")


@contextmanager
def progress_bar(names: Sequence[str], disable: bool | None = None) -> Iterator[_Bar]:
    """A tqdm bar over ``names`` weighted by :func:`expected_seconds`, on stderr."""
    from tqdm import tqdm

    weights = expected_seconds(names)
    fmt = "{l_bar}{bar}| {percentage:3.0f}% [{elapsed}<{remaining}{postfix}]"
    with tqdm(total=sum(weights.values()), desc="recording", bar_format=fmt, file=sys.stderr,
              disable=disable) as bar:
        yield _Bar(bar, weights)
