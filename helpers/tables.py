"""Rich values a lesson shows: a small table and a piece of Markdown text (most lessons).

Both render as Markdown in Jupyter (``_repr_markdown_``) and as plain text elsewhere, so a function can return one
and the lesson shows it as a cell's last expression, never through ``print``.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

# A record's field names carry their unit as the last word (useful_GBps, offset_floats, after_launch_ms); a table's
# header says it in words (issue 33: no raw field names in what a learner reads). Counter names (lts__t_...) stay.
_UNITS = {"GBps": "GB/s", "ns": "ns", "us": "µs", "ms": "ms", "s": "s", "bytes": "bytes", "B": "B", "KiB": "KiB",
          "MiB": "MiB", "GiB": "GiB", "floats": "floats", "pct": "%"}
_WORDS = {"cpu": "CPU", "gpu": "GPU", "sm": "SM", "sms": "SMs", "l2": "L2", "numa": "NUMA", "pcie": "PCIe", "id": "ID"}
_FIELD = re.compile(r"^[a-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+$")


def column_name(key: str, note: str = "") -> str:
    """A record's field name as a table header: ``useful_GBps`` -> "useful (GB/s)", ``offset_floats`` ->
    "offset (floats)"; ``note`` joins the unit in the brackets. Other headers are kept as they are."""
    if not _FIELD.match(key):
        return f"{key} ({note})" if note else key
    words = key.split("_")
    units = [_UNITS[w] for w in words if w in _UNITS]
    name = " ".join(_WORDS.get(w, w) for w in words if w not in _UNITS) or key
    inside = ", ".join(units[:1] + ([note] if note else []))
    return f"{name} ({inside})" if inside else name


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


class Table:
    """Rows of cells under a header; ``display(table)`` in a notebook shows a Markdown table."""

    def __init__(self, header: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "") -> None:
        self.header = [column_name(str(h)) for h in header]
        self.rows = [[_cell(v) for v in row] for row in rows]
        self.caption = caption
        if any(len(row) != len(self.header) for row in self.rows):
            raise ValueError("every row needs one cell per header column")

    def _repr_markdown_(self) -> str:
        lines = [self.caption, ""] if self.caption else []
        lines += ["| " + " | ".join(_escape(h) for h in self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(_escape(cell) for cell in row) + " |" for row in self.rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        widths = [max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))]
        out = [self.caption] if self.caption else []
        out += ["  ".join(h.ljust(w) for h, w in zip(self.header, widths))]
        out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in self.rows]
        return "\n".join(out)

    __repr__ = __str__


def _escape(cell: str) -> str:
    return cell.replace("|", "\\|").replace("\n", " ")


def table(header: Sequence[str], rows: Sequence[Sequence[Any]], caption: str = "") -> Table:
    """A :class:`Table`; floats are shown with three significant digits unless you format them first."""
    return Table(header, rows, caption)


class Text(str):
    """A string that a notebook shows as Markdown: what a helper returns for a lesson to show (narration that
    depends on measured values, a verdict on a prediction, a check of a figure). Still a ``str`` everywhere else."""

    def _repr_markdown_(self) -> str:
        return str(self)

    def __add__(self, other: str) -> "Text":
        return Text(str(self) + str(other))


def bullets(items: Iterable[str], head: str = "") -> Text:
    """A Markdown list of ``items`` (empty ones left out), under ``head`` when given."""
    lines = [f"- {item}" for item in items if item]
    return Text("\n".join(([head, ""] if head else []) + lines))


def join(*parts: Any) -> "Shown":
    """Several rich values shown one after another in one output (a text, then a table...)."""
    return Shown(parts)


class Shown:
    """Rich values shown one after another: what :func:`join` returns."""

    def __init__(self, parts: Sequence[Any]) -> None:
        self.parts = [p for p in parts if p is not None and p != ""]

    def _repr_markdown_(self) -> str:
        return "\n\n".join(p._repr_markdown_() if hasattr(p, "_repr_markdown_") else str(p) for p in self.parts)

    def __str__(self) -> str:
        return "\n\n".join(str(p) for p in self.parts)

    __repr__ = __str__
