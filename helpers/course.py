"""The first cell of every lesson: decide the mode once and say it (start-here)."""

from __future__ import annotations

from . import records
from .mode import detect


def start() -> str:
    """Decide the mode, set up the GPU when there is one, and return a sentence about both.

    Safe to call again when a notebook's cells are re-run: the context is created once.
    """
    from .platform.linux_only import register

    register()  # %%linux_only, for the cells of pin-host-memory and map-pages-on-the-cpu that read /proc
    from .display.alt_text import register as alt_text

    alt_text()  # every figure shown gets alt text in its output metadata (the book's and slides' <img alt>)
    mode = detect()
    if mode.live:
        from .memory import gpu

        gpu.context()
        return f"{mode.describe()} Recorded reference: {_reference_line()}"
    return f"{mode.describe()}\nEvery measurement below is a replay of {_reference_line()}"


def _reference_line() -> str:
    try:
        record, path = records.reference_record()
    except records.RecordError as exc:
        return f"(no recorded reference: {exc})"
    p = record["provenance"]
    return (f"{p['gpu']} recorded on {p['date'][:10]} (driver {p['driver_version']}, CUDA {p['cuda_version']}, "
            f"PyCUDA {p['pycuda_version']}), data/{path.name}."
            )
