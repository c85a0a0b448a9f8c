"""The sector explorer: which 32-byte sectors and 128-byte lines one warp touches (coalesce-and-align-accesses).

:func:`warp_pattern` builds the trace of warps in which thread ``t`` loads ``width``
floats at element ``offset + t * stride`` (elements are ``width`` floats, as in
read_strided and read_strided_float4). :func:`draw_warp` draws one warp and returns a
matplotlib Figure (no display needed), with the prediction of :mod:`helpers.analysis.pcie_model`;
:func:`sector_explorer` wires sliders to it. It needs matplotlib, and ipywidgets for the sliders.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from .. import paths
from ..i18n import N_, _
from ..cpu.trace import LINE_BYTES, SECTOR_BYTES, Trace
from .pcie_model import Model, Prediction, calibrate, launch_counts

__all__ = ["warp_pattern", "predict_pattern", "draw_warp", "sector_explorer", "LAUNCH_THREADS"]

LAUNCH_THREADS = 1 << 24  # the predicted bandwidth is for a launch of this many threads with the pattern
_STYLE = paths.STYLE


def warp_pattern(stride: int, offset: int, width: int = 1, warps: int = 1) -> Trace:
    """The loads of ``warps`` warps: thread t reads ``4 * width`` bytes at element ``offset + t * stride``."""
    if width not in (1, 2, 4):
        raise ValueError("width is 1, 2 or 4 floats (float, float2, float4)")
    if stride < 0 or offset < 0:
        raise ValueError("stride and offset must not be negative")
    size = 4 * width
    addresses = (offset + np.arange(32 * warps) * stride) * size
    kind = f"float{width if width > 1 else ''}"
    return Trace.from_addresses(addresses, size, kernel=_("stride {stride}, offset {offset}, {kind}").format(
        stride=stride, offset=offset, kind=kind))


def default_model() -> Model:
    """The model model-zero-copy-reads fits: on the record :func:`helpers.analysis.pcie_model.choose_records` picks
    among the committed H200 records (the oldest with quiet sweeps, counters and fresh allocations), named by its file,
    so the drawing's preview is the very model model-zero-copy-reads shows."""
    from dataclasses import replace

    from ..records import matching_records, reference_record
    from .pcie_model import choose_records

    found = matching_records()
    if not found:
        return calibrate(reference_record()[0])  # raises the RecordError that says how to restore data/
    (record, path), _checks = choose_records(found)
    model = calibrate(record)
    return replace(model, calibrated_on=_("{fitted} (data/{file})").format(
        fitted=model.calibrated_on.split(" (")[0], file=path.name))


def predict_pattern(stride: int, offset: int, width: int = 1, model: Model | None = None) -> Prediction:
    """Predicted zero-copy time and useful bandwidth of a :data:`LAUNCH_THREADS`-thread launch with the pattern."""
    model = model or default_model()
    counts = launch_counts(lambda w: warp_pattern(stride, offset, width, w), LAUNCH_THREADS * 4.0 * width, warps=1)
    return model.predict(counts)


def draw_warp(stride: int, offset: int, width: int = 1, model: Model | None = None) -> Any:
    """A Figure of the lines one warp touches (coalesce-and-align-accesses).

    Requested bytes are dark, the rest of touched sectors light blue, and untouched sectors
    between touched ones in a line hatched grey: the model's read request for the line
    carries them too.
    """
    import matplotlib.style
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    trace = warp_pattern(stride, offset, width)
    size = 4 * width
    addr = trace.accesses["addr"].astype(np.int64)
    base = int(addr.min()) // LINE_BYTES * LINE_BYTES
    rel = addr - base
    lines = np.unique(np.concatenate([rel // LINE_BYTES, (rel + size - 1) // LINE_BYTES]))
    sectors = np.unique(np.concatenate([rel // SECTOR_BYTES, (rel + size - 1) // SECTOR_BYTES]))
    row_of = {int(line): i for i, line in enumerate(lines)}
    prediction = predict_pattern(stride, offset, width, model)

    context = matplotlib.style.context(str(_STYLE)) if _STYLE.is_file() else _null_context()
    with context:
        fig = Figure(figsize=(8, 1.7 + 0.28 * len(lines)))
        ax = fig.add_subplot()
        touched_set = set(sectors.tolist())
        for line, row in row_of.items():
            mine = [s for s in range(4) if line * 4 + s in touched_set]
            for s in range(4):
                touched = s in mine
                in_span = mine[0] <= s <= mine[-1]
                ax.add_patch(Rectangle((s * SECTOR_BYTES, row), SECTOR_BYTES, 0.8,
                                       facecolor="#9ecae1" if touched else ("#e0e0e0" if in_span else "white"),
                                       hatch=None if touched or not in_span else "//",
                                       edgecolor="black", linewidth=0.8))
        for r in rel:
            start = int(r)
            while start < r + size:  # an access may span two lines only if misaligned; split it
                line, col = divmod(start, LINE_BYTES)
                n = min(r + size, (line + 1) * LINE_BYTES) - start
                ax.add_patch(Rectangle((col, row_of[line] + 0.15), n, 0.5, facecolor="#08519c", edgecolor="none"))
                start += n
        ax.grid(False)
        ax.set_xlim(0, LINE_BYTES)
        ax.set_ylim(len(lines), -0.2)
        ax.set_xticks(range(0, LINE_BYTES + 1, SECTOR_BYTES))
        ax.set_xlabel(_("byte within a 128-byte line (boxes: 32-byte sectors)"))
        ax.set_yticks(np.arange(len(lines)) + 0.4)
        ax.set_yticklabels([_("line {n}").format(n=int(line)) for line in lines],
                           fontsize=7 if len(lines) > 12 else 9)
        gaps = int(lines[-1] - lines[0] + 1 - len(lines))
        t = trace.totals()
        ax.set_title(_title(trace.kernel, t, gaps, prediction), fontsize=9)
        if fig.get_layout_engine() is None:
            fig.tight_layout()
    return fig


# What limits a predicted rate, in words (helpers.analysis.pcie_model's ``bound``), for the drawing's title.
BOUNDS = {"link": N_("the link's bandwidth"), "requests": N_("the read-request rate"),
          "half_lines": N_("the rate of 64-byte halves"), "writes": N_("the write rate")}


def _title(kernel: str, t: dict[str, Any], gaps: int, prediction: Prediction) -> str:
    """The drawing's title: what one warp asks for, what the model reads, the rate it predicts."""
    lines = (_("{n} line") if t["lines"] == 1 else _("{n} lines")).format(n=t["lines"])
    requests = (_("{n} request") if t["lines"] == 1 else _("{n} requests")).format(n=t["lines"])
    untouched = (_("{n} untouched line") if gaps == 1 else _("{n} untouched lines")).format(n=gaps)
    bound = prediction.bound
    return (_("one warp, {kernel}: {useful} B asked for, {sectors} sectors ({sector_bytes} B), {lines}").format(
                kernel=kernel, useful=t["useful_bytes"], sectors=t["sectors"],
                sector_bytes=t["sectors"] * SECTOR_BYTES, lines=lines) + "\n"
            + _("model: the lines' spans, {span} B, read in {requests} (hatched: moved, unused)").format(
                span=t["span_sectors"] * SECTOR_BYTES, requests=requests)
            + (_(" ({untouched} not drawn)").format(untouched=untouched) if gaps else "") + "\n"
            + _("predicted zero-copy useful bandwidth: {rate:.1f} GB/s (bound by {bound})").format(
                rate=prediction.useful_GBps, bound=_(BOUNDS[bound]) if bound in BOUNDS else bound))


class _null_context:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def sector_explorer(model: Model | None = None) -> Any:
    """Sliders for stride, offset and vector width, redrawing :func:`draw_warp` (coalesce-and-align-accesses)."""
    import ipywidgets as w

    model = model or default_model()
    stride = w.IntSlider(value=1, min=1, max=64, description=_("stride"))
    offset = w.IntSlider(value=0, min=0, max=32, description=_("offset"))
    width = w.ToggleButtons(options=[("float", 1), ("float2", 2), ("float4", 4)], value=1,
                            description=_("width"))
    image = w.Image(format="png")
    note = w.HTML("<small>" + _("Model: {model}. Offset and stride are in elements of the chosen width.").format(
        model=model.describe()) + "</small>")

    def redraw(_: object = None) -> None:
        fig = draw_warp(stride.value, offset.value, width.value, model)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90)
        image.value = buffer.getvalue()

    for control in (stride, offset, width):
        control.observe(redraw, names="value")
    redraw()
    return w.VBox([w.HBox([stride, offset]), width, image, note])
