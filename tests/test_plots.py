"""Figures draw from recorded data and leave matplotlib's global settings alone (helpers.display.plots)."""

from __future__ import annotations

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402

from helpers import experiments
from helpers.display import plots  # noqa: E402


def test_importing_plots_changes_no_rcparams():
    code = ("import matplotlib; before = dict(matplotlib.rcParams); import helpers.display.plots; "
            "after = dict(matplotlib.rcParams); print(sorted(k for k in before if before[k] != after[k]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_every_figure_draws_from_the_reference():
    ref = experiments.reference
    figures = [
        plots.memcpy_bandwidth(ref("memcpy")),
        plots.bandwidth_sweep(ref("memcpy"), ref("kernel_bandwidth")),
        plots.inflight(ref("inflight"), 55.0, 1200.0),
        plots.latency(ref("latency")),
        plots.latency_footprint(ref("latency_footprint"), l2_bytes=60 << 20),
        plots.access_sweep(ref("stride"), "stride"),
        plots.access_sweep(ref("offset"), "offset_floats", predicted={0: 40.0, 1: 35.0}),
        plots.end_to_end(ref("end_to_end")),
        plots.reuse(ref("reuse")),
        plots.bars(["a", "b"], [1.0, 2.0], title="t", ylabel="y"),
        plots.page_mapping([1, 2, 3], [7, None, 9], gpu_pages=[1, 2, 3]),
        plots.data_paths(),
    ]
    for figure in figures:
        assert isinstance(figure, Figure) and figure.axes
        assert any(ax.has_data() or ax.patches for ax in figure.axes)


def test_the_bandwidth_sweep_draws_every_series_lesson_06_lists():
    """Lesson 06's table lists eight ways of moving bytes: the figure's right panel draws all eight, the left
    panel (PCIe only) the six that cross the link."""
    ref = experiments.reference
    figure = plots.bandwidth_sweep(ref("memcpy"), ref("kernel_bandwidth"))
    link, everything = figure.axes[:2]
    labels = [line.get_label() for line in everything.get_lines()]
    assert len(labels) == 8 and "memcpy DtoH pageable" in labels, labels
    assert len(link.get_lines()) == 6
