"""The value every experiment returns, and the one place that chooses live or replay."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

import numpy as np

from .. import records
from ..errors import RecordError
from ..mode import detect

Row = dict[str, Any]


@dataclass
class Result:
    """An experiment's parameters and rows, and where they came from."""

    name: str
    params: dict[str, Any]
    rows: list[Row]
    live: bool
    provenance: dict[str, Any] = field(default_factory=dict)
    record_file: str | None = None

    def select(self, **where: Any) -> list[Row]:
        """Rows whose fields equal every ``key=value`` given."""
        return [row for row in self.rows if all(row.get(k) == v for k, v in where.items())]

    def column(self, key: str, **where: Any) -> np.ndarray:
        """One field of the selected rows, as an array."""
        return np.array([row[key] for row in self.select(**where)])

    def one(self, **where: Any) -> Row:
        """The single row that matches; an error if none or several do."""
        rows = self.select(**where)
        if len(rows) != 1:
            raise LookupError(f"{len(rows)} rows of {self.name!r} match {where}, expected exactly one.")
        return rows[0]

    def need(self, **where: Any) -> Row:
        """The first row that matches; when a replayed record predates that row, a :class:`RecordError`
        that says how to record it (lesson 09). Experiments that keep one row per repeat have several."""
        rows = self.select(**where)
        if not rows and not self.live:
            raise RecordError(
                f"data/{self.record_file} has no row of '{self.name}' with {where}: it was recorded before "
                f"this row existed. On a GPU, run `python -m helpers record --only {self.name}`."
            )
        if not rows:
            raise LookupError(f"0 rows of {self.name!r} match {where}.")
        return rows[0]

    @property
    def gpu(self) -> str:
        return str(self.provenance.get("gpu", "unknown GPU"))

    def describe(self) -> str:
        """One sentence that says where the numbers come from."""
        if self.live:
            return f"{self.name}: measured live on {self.gpu} just now."
        p = self.provenance
        return (f"{self.name}: REPLAY of a measurement recorded on {self.gpu} on {p.get('date', '?')[:10]} "
                f"(driver {p.get('driver_version')}, CUDA {p.get('cuda_version')}, PyCUDA {p.get('pycuda_version')}; "
                f"data/{self.record_file}), not on this machine.")


def reference(name: str) -> Result:
    """The recorded H200 result of experiment ``name``, in either mode (to plot beside a live run)."""
    record, path = records.reference_record()
    experiment = record["experiments"].get(name)
    if experiment is None:
        raise RecordError(
            f"{path.name} holds no '{name}' experiment (it has {', '.join(record['experiments'])}). "
            "Record a complete set on a GPU with `python -m helpers record`."
        )
    return Result(name, experiment["params"], experiment["rows"], False, record["provenance"], path.name)


def run(name: str, params: dict[str, Any], measure: Callable[..., list[Row]]) -> Result:
    """Measure live, or replay the recording of ``name``: the mode is decided in one place."""
    if not detect().live:
        return reference(name)
    from .. import gpu

    rows = measure(**params)
    provenance = {"gpu": gpu.device_name(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    return Result(name, params, rows, True, provenance)
