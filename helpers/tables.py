"""A small table that renders as Markdown in Jupyter and as aligned text elsewhere (most lessons)."""

from __future__ import annotations

from typing import Any, Sequence


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


class Table:
    """Rows of cells under a header; ``display(table)`` in a notebook shows a Markdown table."""

    def __init__(self, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
        self.header = [str(h) for h in header]
        self.rows = [[_cell(v) for v in row] for row in rows]
        if any(len(row) != len(self.header) for row in self.rows):
            raise ValueError("every row needs one cell per header column")

    def _repr_markdown_(self) -> str:
        lines = ["| " + " | ".join(h.replace("|", "\\|") for h in self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in self.rows]
        return "\n".join(lines)

    def __str__(self) -> str:
        widths = [max(len(r[i]) for r in [self.header, *self.rows]) for i in range(len(self.header))]
        out = ["  ".join(h.ljust(w) for h, w in zip(self.header, widths))]
        out += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in self.rows]
        return "\n".join(out)

    __repr__ = __str__


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    """A :class:`Table`; floats are shown with three significant digits unless you format them first."""
    return Table(header, rows)
