"""Accessible figures: a colour-blind-safe palette, series told apart without colour, alt text in every lesson
figure's output and in the book (helpers/display/course.mplstyle, helpers.display.plots, helpers.display.alt_text, helpers.tools.book)."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from helpers.display import alt_text, plots
from helpers.tools import book
from helpers import experiments  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


OKABE_ITO = {"#000000", "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7"}


def figures() -> dict[str, object]:
    ref = experiments.reference
    return {
        "memcpy_bandwidth": plots.memcpy_bandwidth(ref("memcpy")),
        "bandwidth_sweep": plots.bandwidth_sweep(ref("memcpy"), ref("kernel_bandwidth")),
        "inflight": plots.inflight(ref("inflight"), 55.0, 1200.0),
        "latency": plots.latency(ref("latency")),
        "latency_footprint": plots.latency_footprint(ref("latency_footprint"), l2_bytes=60 << 20),
        "access_sweep": plots.access_sweep(ref("stride"), "stride", predicted={1: 40.0, 2: 30.0}),
        "end_to_end": plots.end_to_end(ref("end_to_end")),
        "reuse": plots.reuse(ref("reuse")),
        "bars": plots.bars(["a", "b"], [1.0, 2.0], title="Two bars", ylabel="GB/s"),
        "page_mapping": plots.page_mapping([1, 2, 3], [7, None, 9], gpu_pages=[1, 2, 3]),
        "data_paths": plots.data_paths(),
    }


def test_the_course_style_is_okabe_ito_with_a_marker_for_each_colour():
    with plots.course_style():
        cycle = list(matplotlib.rcParams["axes.prop_cycle"])
    assert {to_hex(entry["color"]) for entry in cycle} == OKABE_ITO
    markers = [entry["marker"] for entry in cycle]
    assert len(set(markers)) == len(markers) == len(cycle)


def test_every_figure_uses_only_the_palette_and_tells_its_series_apart_without_colour():
    for name, fig in figures().items():
        for ax in fig.axes:
            labelled = [line for line in ax.get_lines() if not str(line.get_label()).startswith("_")]
            looks = [(line.get_marker(), line.get_linestyle(), line.get_fillstyle()) for line in labelled]
            assert len(set(looks)) == len(looks), f"{name}: two series differ by colour alone: {looks}"
            for line in labelled:
                colour = to_hex(line.get_color())
                assert colour in OKABE_ITO or colour[1:3] == colour[3:5] == colour[5:7], f"{name}: {colour} is not in the palette"
        plt.close(fig)


def test_alt_text_says_what_each_figure_shows_and_its_headline_number():
    for name, fig in figures().items():
        text = alt_text.describe(fig)
        for ax in fig.axes:
            assert ax.get_title() in text, f"{name}: the alt text does not name the panel {ax.get_title()!r}"
        assert any(ch.isdigit() for ch in text), name
        assert len(text) <= 900, name
        plt.close(fig)
    ref = experiments.reference("memcpy")
    best = max(r["GBps"] for r in ref.select(direction="htod", host_memory="pinned"))
    assert f"to {best:.3g} at" in alt_text.describe(plots.memcpy_bandwidth(ref))  # the headline: peak pinned GB/s
    fig = plots.bars(["x"], [1.0], title="t", ylabel="y")
    fig.alt_text = "Given by the lesson."
    assert alt_text.describe(fig) == "Given by the lesson."


def test_every_lesson_registers_alt_text_in_its_first_code_cell():
    for lesson in sorted((ROOT / "lessons").glob("[0-9][0-9]-*.ipynb")):
        cells = json.loads(lesson.read_text())["cells"]
        first = "".join(next(c for c in cells if c["cell_type"] == "code")["source"])
        assert "zc.start()" in first, f"{lesson.name}: the first code cell does not call zc.start()"


def test_a_figure_shown_in_a_kernel_gets_alt_text_and_the_book_an_img_alt(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("%matplotlib inline\nimport helpers as zc\nzc.start()"),
        nbformat.v4.new_code_cell("fig = zc.plots.bars(['pinned', 'pageable'], [55.0, 7.0], title='Copies', ylabel='GB/s')"),
        nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nplt.plot([1, 2], [3, 4], label='own')\n"
                                  "plt.title('Drawn in the cell')"),
    ])
    book.execute(nb, ROOT / "lessons")
    images = alt_text.image_outputs(nb)
    assert len(images) == 2
    alts = [alt_text.output_alt(out) for _, out in images]
    assert "Copies" in alts[0] and "pinned: 55" in alts[0] and "pageable: 7" in alts[0]
    assert "Drawn in the cell" in alts[1] and "own" in alts[1]
    assert book.give_figures_alt_text(nb) == 2
    html = images[0][1]["data"]["text/html"]
    assert html.startswith('<img src="data:image/png;base64,') and 'alt="Bar chart &#x27;Copies&#x27;' in html


def test_the_book_refuses_a_figure_without_alt_text():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("fig")])
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="})]
    with pytest.raises(book.BookError, match="cell.*no alt text"):
        book.give_figures_alt_text(nb, "99-test.ipynb")


def test_alt_text_names_categories_on_the_x_axis():
    fig, ax = plt.subplots()
    ax.plot(["pinned", "pageable", "mapped"], [55.0, 7.0, 51.0], label="H2D")
    ax.set(title="By memory", ylabel="GB/s")
    assert "H2D: from 7 at pageable to 55 at pinned" in alt_text.describe(fig)


# --------------------------------------------------------------------------- coinciding series (issue 33)
def every_figure() -> dict[str, object]:
    """Every figure function of helpers.display.plots and platform_views, drawn from the reference record as the
    lessons draw it."""
    from helpers.display import platform_views

    ref = experiments.reference
    drawn = dict(figures())
    drawn.update({
        "stale_read": plots.stale_read(ref("stale_read")),
        "caching_bars": plots.caching_bars(ref("caching")),
        "out_of_core": plots.out_of_core(ref("out_of_core")),
        "write_combined": plots.write_combined(ref("write_combined")),
        "offset_sweep": plots.access_sweep(ref("offset"), "offset_floats"),
        "managed_figure": platform_views.managed_figure(ref("managed")),
        "cpu_traffic_figure": platform_views.cpu_traffic_figure(ref("cpu_traffic")),
        "parameter_bytes": plots.parameter_bytes(28, 3 * 4096 + 4, 1024),  # lesson 05: "PPPi" beside 3 arrays
    })
    return drawn


def _apart(a: object, b: object) -> bool:
    """Two lines drawn over the same points can both be seen: one of them has larger markers (by 30 % or more), or
    different marker shapes with one of them hollow, so the other shows through it."""
    if a.get_marker() in (None, "None", "") or b.get_marker() in (None, "None", ""):
        return False
    hollow = any(str(line.get_markerfacecolor()) == "none" or line.get_fillstyle() == "none" for line in (a, b))
    sizes = sorted((a.get_markersize(), b.get_markersize()))
    return sizes[1] >= 1.3 * sizes[0] or (hollow and a.get_marker() != b.get_marker())


def coinciding(ax: object, tolerance: float = 0.02) -> list[tuple[str, str]]:
    """Pairs of labelled lines of ``ax`` whose every point lies within ``tolerance`` of the axes' span of the other's
    (in display space, so log axes count as drawn), and which nothing else tells apart."""
    import numpy as np

    lines = [line for line in ax.get_lines() if not str(line.get_label()).startswith("_")]
    width, height = ax.bbox.width, ax.bbox.height
    pairs = []
    for i, a in enumerate(lines):
        for b in lines[i + 1:]:
            pa = ax.transData.transform(np.column_stack(a.get_data()).astype(float))
            pb = ax.transData.transform(np.column_stack(b.get_data()).astype(float))
            if pa.shape != pb.shape:
                continue
            close = (np.abs(pa[:, 0] - pb[:, 0]) <= tolerance * width) & (np.abs(pa[:, 1] - pb[:, 1]) <= tolerance * height)
            if close.all() and not _apart(a, b):
                pairs.append((a.get_label(), b.get_label()))
    return pairs


def test_every_figure_function_is_checked_for_coinciding_series():
    import inspect

    from helpers.display import platform_views

    drawn = every_figure()
    for module in (plots, platform_views):
        for name, function in inspect.getmembers(module, inspect.isfunction):
            if function.__module__ == module.__name__ and not name.startswith("_") \
                    and inspect.signature(function).return_annotation in ("Figure", "Any"):
                assert name in drawn or name == "allocation_spread", \
                    f"{module.__name__}.{name} draws a figure this test does not check: add it to every_figure()"
    for name, fig in drawn.items():
        fig.canvas.draw()
        for ax in fig.axes:
            assert not coinciding(ax), f"{name}: these series lie on each other and look alike: {coinciding(ax)}"


def test_a_hidden_series_is_found_and_a_hollow_larger_marker_shows_it():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 4], [51, 51.2, 51.1], marker="o", label="managed, preferred CPU")
    ax.plot([1, 2, 4], [51, 51.1, 51.2], marker="s", label="mapped")
    ax.plot([1, 2, 4], [10, 20, 30], marker="D", label="device")
    fig.canvas.draw()
    assert coinciding(ax) == [("managed, preferred CPU", "mapped")]
    ax.get_lines()[0].set_markerfacecolor("none")
    ax.get_lines()[0].set_markersize(11)
    assert coinciding(ax) == []


# --------------------------------------------------------------------------- plain, uncrowded ticks (issues 31, 33)
def _shown_tick_labels(axis: object) -> list[str]:
    """The tick labels ``axis`` shows inside its view, major and minor."""
    low, high = sorted(axis.get_view_interval())
    ticks = [(t, label) for minor in (False, True)
             for t, label in zip(axis.get_ticklocs(minor=minor), axis.get_ticklabels(minor=minor))]
    return [label.get_text() for t, label in ticks if low <= t <= high and label.get_text()]


def test_log_axes_show_few_plain_tick_labels():
    """A log axis labels a few round values in plain numbers: not "2x10^1" nor every minor tick (8, 9, 10, 20...
    90, 100 crowd each other: lesson 15's managed figure)."""
    for name, fig in every_figure().items():
        fig.canvas.draw()
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                if axis.get_scale() != "log":
                    continue
                shown = _shown_tick_labels(axis)
                assert len(shown) <= 9, f"{name}: {len(shown)} tick labels crowd a log axis: {shown}"
                assert not [s for s in shown if "times" in s], f"{name}: tick labels {shown}"
                if axis.get_transform().base == 10:        # 2^20 floats may say so; 10^2 GB/s says 100
                    assert not [s for s in shown if "^" in s], f"{name}: tick labels {shown}"
