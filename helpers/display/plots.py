"""One function per figure; each returns a matplotlib Figure drawn in the course style.

The style file ``course.mplstyle`` is applied explicitly inside each function, so importing
this module changes no global matplotlib setting. Functions that take a live result also take
the recorded ``reference`` and draw it beside, dashed, so a learner compares with the H200.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, Rectangle
from matplotlib.ticker import FuncFormatter, NullFormatter

from .. import paths
from ..experiments import Result
from ..experiments.latency import load_ns_spread
from ..experiments.quiet import band
from ..i18n import CHINESE, N_, _, language

STYLE = paths.STYLE
KiB = 1024


@contextmanager
def course_style() -> Iterator[None]:
    """Apply the course's style for the figures drawn inside the ``with`` block."""
    with plt.style.context(str(STYLE)):
        yield
        _fix_cycle_colours()


def _fix_cycle_colours() -> None:
    """Lines and texts keep a "C0".."C9" colour as a name and look it up when drawn, after the style has gone:
    resolve them now, in the style's (colour-blind-safe) palette."""
    from matplotlib import colors
    from matplotlib.lines import Line2D
    from matplotlib.text import Text

    for manager in plt._pylab_helpers.Gcf.get_all_fig_managers():
        for artist in manager.canvas.figure.findobj(lambda a: isinstance(a, (Line2D, Text))):
            colour = artist.get_color()
            if isinstance(colour, str) and colour[:1] == "C" and colour[1:].isdigit():
                artist.set_color(colors.to_rgba(colour))


def _median(row: dict[str, Any]) -> float:
    return float(np.median(row["seconds"]))


def _size_label(nbytes: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes:g} B"


def _size_axis(ax: Any, sizes: Sequence[float]) -> None:
    ax.set_xscale("log", base=2)
    ticks = sorted(set(sizes))[:: -(-len(set(sizes)) // 6)]
    ax.set_xticks(ticks, [_size_label(t) for t in ticks])


def plain_log_ticks(low: float, high: float, most: int = 6) -> list[float]:
    """Round values (1, 2 or 5 times a power of ten, fewer where the range is wide) from ``low`` to ``high``, at
    most ``most`` of them: the labels of a log axis (take-zero-copy-beyond-one-pcie-gpu's managed figure)."""
    start, stop = int(np.floor(np.log10(low))), int(np.ceil(np.log10(high)))
    for steps, every in (((1, 2, 5), 1), ((1, 3), 1), ((1,), 1), ((1,), 2), ((1,), 3)):
        ticks = [m * 10.0 ** e for e in range(start, stop + 1, every) for m in steps]
        inside = [t for t in ticks if low <= t * (1 + 1e-9) and t <= high * (1 + 1e-9)]
        if len(inside) <= most:
            break
    return inside if len(inside) >= 2 else [float(f"{low:.2g}"), float(f"{high:.2g}")]


def _plain(value: float, _: Any = None) -> str:
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def plain_log_axis(ax: Any, which: str = "y") -> None:
    """Label a base-10 log axis of ``ax`` with a few round values in plain numbers, minor ticks unlabelled: not
    "2x10^1", nor every minor tick crowding the next (issues 31, 33). Call it once the data are drawn."""
    axis, limits = (ax.yaxis, ax.get_ylim()) if which == "y" else (ax.xaxis, ax.get_xlim())
    low, high = sorted(limits)
    axis.set_ticks(plain_log_ticks(low, high))
    axis.set_major_formatter(FuncFormatter(_plain))
    axis.set_minor_formatter(NullFormatter())


def _source_note(fig: Figure, *results: Result | None) -> None:
    notes = []
    for result in results:
        if result is not None:
            when = _("live") if result.live else _("recorded {date}").format(
                date=result.provenance.get("date", "")[:10])
            notes.append(f"{result.gpu}（{when}）" if language() == CHINESE else f"{result.gpu} ({when})")
    # a figure-level x label is laid out by constrained layout, so it never overlaps the axes' labels
    fig.supxlabel(" · ".join(dict.fromkeys(notes)), x=0.99, ha="right", fontsize=7, color="0.4")


def _each(result: Result, reference: Result | None) -> list[tuple[Result, str, str]]:
    """(result, line style, label suffix) for the run and, if it is a different one, the reference."""
    runs = [(result, "-", "")]
    if reference is not None and (result.live or reference.record_file != result.record_file):
        runs.append((reference, "--", _(" ({gpu}, recorded)").format(gpu=reference.gpu)))
    return runs


# --------------------------------------------------------------------------- copies and bandwidth
# A host-device copy's series, named as the tables name it (its direction and the host memory it copies).
MEMCPY_SERIES = {("htod", "pinned"): N_("htod pinned"), ("htod", "pageable"): N_("htod pageable"),
                 ("dtoh", "pinned"): N_("dtoh pinned"), ("dtoh", "pageable"): N_("dtoh pageable")}


def memcpy_bandwidth(result: Result, reference: Result | None = None) -> Figure:
    """Copy bandwidth against size, pinned against pageable (measure-what-pinning-buys)."""
    with course_style():
        fig, ax = plt.subplots()
        for run, style, suffix in _each(result, reference):
            for direction in ("htod", "dtoh"):
                for host_memory, color in (("pinned", "C0"), ("pageable", "C1")):
                    rows = run.select(direction=direction, host_memory=host_memory)
                    ax.plot([r["nbytes"] for r in rows], [r["GBps"] for r in rows], style, color=color,
                            marker=("o" if direction == "htod" else "s") if host_memory == "pinned"
                            else ("^" if direction == "htod" else "v"), alpha=1 if direction == "htod" else 0.55,
                            label=_(MEMCPY_SERIES[direction, host_memory]) + suffix)
        _size_axis(ax, result.column("nbytes"))
        ax.set(xlabel=_("bytes per copy"), ylabel="GB/s (1e9 B/s)",
               title=_("cudaMemcpy: page-locked against pageable"))
        ax.legend(ncol=2)
        _source_note(fig, result, reference)
    return fig


def bandwidth_sweep(memcpy: Result, kernels: Result) -> Figure:
    """Every way of moving data, against size: copies, zero-copy kernels, device memory (measure-bandwidth)."""
    with course_style():
        fig, (ax_link, ax_all) = plt.subplots(1, 2, figsize=(13, 4.2))
        series = [
            (memcpy.select(direction="htod", host_memory="pinned"), "GBps", _("memcpy HtoD pinned"), "C0", "-"),
            (memcpy.select(direction="dtoh", host_memory="pinned"), "GBps", _("memcpy DtoH pinned"), "C0", ":"),
            (memcpy.select(direction="htod", host_memory="pageable"), "GBps", _("memcpy HtoD pageable"), "C3", "-"),
            (memcpy.select(direction="dtoh", host_memory="pageable"), "GBps", _("memcpy DtoH pageable"), "C3", ":"),
            (kernels.select(memory="zero_copy", op="read"), "GBps", _("zero-copy read kernel"), "C1", "-"),
            (kernels.select(memory="zero_copy", op="write"), "GBps", _("zero-copy write kernel"), "C1", ":"),
            (kernels.select(memory="device", op="read"), "GBps", _("device-memory read kernel"), "C2", "-"),
            (kernels.select(memory="device", op="write"), "GBps", _("device-memory write kernel"), "C2", ":"),
        ]
        for ax, skip_device in ((ax_link, True), (ax_all, False)):
            for rows, key, label, color, style in series:
                if skip_device and color == "C2":   # the device-memory kernels
                    continue
                # not by colour alone; the dotted one of each pair (the other direction, which runs at about the
                # same rate) is hollow and larger, so where the two coincide both stay visible
                hollow = {"markerfacecolor": "none", "markersize": 10} if style == ":" else {}
                ax.plot([r["nbytes"] for r in rows], [r[key] for r in rows], style, color=color, label=label,
                        marker={"C0": "o", "C3": "^", "C1": "s", "C2": "D"}[color], **hollow)
            _size_axis(ax, memcpy.column("nbytes"))
            ax.set(xlabel=_("bytes moved"))
        ax_link.set(ylabel="GB/s", title=_("Over PCIe (linear scale)"))
        ax_all.set(yscale="log", title=_("With device memory (log scale)"))
        plain_log_axis(ax_all)
        ax_all.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))   # outside: it hid the device-memory curves
        _source_note(fig, memcpy, kernels)
    return fig


def inflight(result: Result, link_GBps: float | None = None, latency_ns: float | None = None) -> Figure:
    """Zero-copy read bandwidth against bytes in flight, with Little's law (keep-enough-bytes-in-flight)."""
    with course_style():
        fig, ax = plt.subplots()
        for name, color, style in (("read_float4", "C0", "o-"), ("read_float4_x4", "C1", "s--")):
            rows = sorted(result.select(kernel=name), key=lambda r: r["bytes_in_flight"])
            ax.plot([r["bytes_in_flight"] for r in rows], [r["GBps"] for r in rows], style, color=color,
                    label=_("{name} ({loads} load(s) of 16 B per thread)").format(
                        name=name, loads=rows[0]["loads_per_thread"]))
        if latency_ns:
            x = np.logspace(np.log10(min(result.column("bytes_in_flight"))), np.log10(max(result.column("bytes_in_flight"))))
            ax.plot(x, x / latency_ns, "k:",
                    label=_("Little's law: bytes in flight / {ns:.0f} ns").format(ns=latency_ns))
        if link_GBps:
            ax.axhline(link_GBps, color="0.5", ls="--",
                       label=_("pinned memcpy HtoD {rate:.1f} GB/s").format(rate=link_GBps))
        ax.set(xscale="log", yscale="log", xlabel=_("bytes the GPU asks for at once (threads x loads x 16 B)"),
               ylabel="GB/s", title=_("Zero-copy reads need many requests in flight"))
        ax.set_ylim(top=(link_GBps or max(result.column("GBps"))) * 2)
        plain_log_axis(ax, "x")
        plain_log_axis(ax)
        ax.legend()
        _source_note(fig, result)
    return fig


def bars(labels: Sequence[str], values: Sequence[float], *, title: str, ylabel: str, log: bool = False,
         colors: Sequence[str] | None = None, note: Result | None = None, fmt: str = "{:.3g}") -> Figure:
    """A labelled bar chart (several lessons draw one)."""
    with course_style():
        fig, ax = plt.subplots(figsize=(7.5, 3.8))
        positions = np.arange(len(values))
        drawn = ax.bar(positions, values, color=colors or [f"C{i % 8}" for i in range(len(values))])
        ax.bar_label(drawn, labels=[fmt.format(v) for v in values], fontsize=8.5, padding=2)
        ax.set_xticks(positions, labels, rotation=0 if max(map(len, labels)) < 14 else 15, ha="center")
        ax.set(title=title, ylabel=ylabel)
        ax.margins(y=0.15)
        if log:
            ax.set_yscale("log")
            plain_log_axis(ax)
        if note is not None:
            _source_note(fig, note)
    return fig


def parameter_bytes(declared: int, packed: int, n: int) -> Figure:
    """The seed kernel's parameter bytes as it declares them beside three ``n``-float arrays passed by value
    (write-your-first-zero-copy-kernel)."""
    names = [_("what the kernel declares\n(3 pointers + int)"),
             _("three {n}-float arrays\npassed by value").format(n=n)]
    return bars(names, [declared, packed], title=_("Kernel parameter bytes"), ylabel=_("bytes (log scale)"),
                log=True, fmt="{:,.0f} B")


# --------------------------------------------------------------------------- avoid-hazards-on-mapped-memory
def stale_read(result: Result) -> Figure:
    """The share of a mapped buffer the host saw written while one GPU thread filled it, and after synchronising
    (avoid-hazards-on-mapped-memory)."""
    labels = [f"{r['after_launch_ms']:.1f} ms" + (_("\nafter sync") if r["synchronized"] else "") for r in result.rows]
    values = [100 * r["filled"] / r["n"] for r in result.rows]
    return bars(labels, values, title=_("What the host saw in a mapped buffer while one GPU thread filled it"),
                ylabel=_("% of elements written"), note=result, fmt="{:.0f}%")


# --------------------------------------------------------------------------- measure-latency
def latency(result: Result, reference: Result | None = None) -> Figure:
    """Nanoseconds per dependent load, by memory (measure-latency)."""
    names = {"l2": _("L2-resident\n(device memory)"), "device": _("device memory\n(HBM)"),
             "zero_copy": _("zero-copy\n(host over PCIe)")}
    labels, values = [], []
    for run, _style, suffix in _each(result, reference):
        for memory in ("l2", "device", "zero_copy"):
            labels.append(names[memory] + ("\n" + suffix.strip(" ()") if suffix else ""))
            # the zero-copy table out of the CPU's caches (records before 2026-12-02-2 have one zero-copy row)
            rows = [r for r in run.select(memory=memory) if r.get("cpu_cache", "evicted") == "evicted"]
            values.append(rows[0]["load_ns"])
    return bars(labels, values, title=_("One dependent load after another"), ylabel=_("ns per load"), log=True,
                note=result, fmt="{:.0f} ns")


def latency_footprint(result: Result, l2_bytes: int | None = None) -> Figure:
    """Nanoseconds per dependent load against the buffer chased, device and mapped memory (measure-latency).

    The line joins the medians; the shaded band spans the lowest to the highest repeat.
    """
    with course_style():
        fig, ax = plt.subplots(figsize=(7.5, 3.8))
        for memory, color, label in (("device", "C2", _("device memory")), ("zero_copy", "C1", _("zero-copy"))):
            rows = sorted(result.select(memory=memory), key=lambda r: r["nbytes"])
            if not rows:
                continue
            sizes = [r["nbytes"] for r in rows]
            low, mid, high = zip(*(load_ns_spread(r) for r in rows))
            ax.fill_between(sizes, low, high, color=color, alpha=0.25, linewidth=0)
            ax.plot(sizes, mid, "-" if memory == "device" else "--", color=color,
                    label=_("{label} (median; band: lowest to highest repeat)").format(label=label))
            for warm, marker in ((True, "o"), (False, "s")):
                chosen = [(size, m) for size, m, r in zip(sizes, mid, rows) if r["warm"] == warm]
                ax.plot([c[0] for c in chosen], [c[1] for c in chosen], marker, color=color,
                        fillstyle="full" if warm else "none")
        warmed = (_("warm: whole cycle chased first, same launch") if any("warm_steps" in r for r in result.rows)
                  else _("warmed: whole cycle chased first (earlier launch)"))
        ax.plot([], [], "ko", label=warmed)
        ax.plot([], [], "ks", fillstyle="none", label=_("cold: no line visited twice"))
        if l2_bytes:
            ax.axvline(l2_bytes, color="0.5", linestyle=":",
                       label=_("L2 size ({size})").format(size=_size_label(l2_bytes)))
        _size_axis(ax, result.column("nbytes"))
        ax.set(yscale="log", xlabel=_("buffer chased"), ylabel=_("ns per load"),
               title=_("Latency against footprint"))
        plain_log_axis(ax)
        ax.legend(fontsize=7.5)
        _source_note(fig, result)
    return fig


# --------------------------------------------------------------------------- keep-enough-bytes-in-flight
def caching_bars(result: Result) -> Figure:
    """Bytes delivered per second re-reading a mapped buffer, by load kind and who re-reads, beside the link
    (keep-enough-bytes-in-flight). Each bar is the median; the black tick spans the lowest to the highest repeat."""
    link = result.one(memory="memcpy_htod_pinned")
    size = max(result.column("nbytes", memory="zero_copy"))
    labels, rates, colors = [_("pinned memcpy\n(the link)")], [link], ["0.5"]
    for pattern, color in (("same_sm", "C0"), ("other_sm", "C3")):
        for load in ("ldg", "ldca", "ldcg", "ldcv"):
            labels.append(f"__{load}\n" + {"same_sm": _("same SM"), "other_sm": _("other SM")}[pattern])
            rates.append(result.one(memory="zero_copy", nbytes=size, load=load, pattern=pattern))
            colors.append(color)
    values = [r["delivered_GBps"] for r in rates]
    fig = bars(labels, values, colors=colors, ylabel=_("GB/s delivered to the threads"),
               title=_("Re-reading {size} of mapped memory in one kernel").format(size=_size_label(size)),
               log=True, note=result, fmt="{:.0f}")
    ax = fig.axes[0]
    # delivered bytes over each repeat's seconds: the fastest repeat gives the highest rate
    highs = [v * float(np.median(r["seconds"])) / min(r["seconds"]) for v, r in zip(values, rates)]
    lows = [v * float(np.median(r["seconds"])) / max(r["seconds"]) for v, r in zip(values, rates)]
    ax.errorbar(np.arange(len(values)), values, yerr=[np.subtract(values, lows), np.subtract(highs, values)],
                fmt="none", ecolor="k", elinewidth=1, capsize=3)
    ax.axhline(values[0], color="0.5", linestyle="--", linewidth=1)
    return fig


# --------------------------------------------------------------------------- coalesce-and-align-accesses
def access_sweep(result: Result, key: str, *, reference: Result | None = None,
                 predicted: dict[int, float] | None = None) -> Figure:
    """Useful bandwidth against stride or offset, zero-copy and device memory (coalesce-and-align-accesses): the median
    of each point's repeats, and the band from its slowest to its fastest repeat."""
    xlabel = {"stride": _("stride (floats between neighbouring threads)"),
              "offset_floats": _("misalignment (floats past a 128-byte boundary)")}[key]
    with course_style():
        fig, (ax_zc, ax_dev) = plt.subplots(1, 2, figsize=(11, 4.0))
        for run, style, suffix in _each(result, reference):
            for ax, memory, color in ((ax_zc, "zero_copy", "C1"), (ax_dev, "device", "C2")):
                rows = sorted(run.select(memory=memory), key=lambda r: r[key])
                ax.plot([r[key] for r in rows], [r["useful_GBps"] for r in rows], style, marker="o", color=color,
                        label=_("measured{suffix} (median of {count})").format(suffix=suffix,
                                                                              count=len(rows[0]["seconds"])))
                low, _mid, high = zip(*(band(r, "useful_GBps") for r in rows))
                ax.fill_between([r[key] for r in rows], low, high, color=color, alpha=0.25 if not suffix else 0.12,
                                linewidth=0, label=_("slowest to fastest repeat{suffix}").format(suffix=suffix))
        if predicted:
            xs = sorted(predicted)
            ax_zc.plot(xs, [predicted[x] for x in xs], "k^:", label=_("predicted by the PCIe model"))
        for ax, title in ((ax_zc, _("zero-copy (mapped host memory)")), (ax_dev, _("device memory"))):
            ax.set(xlabel=xlabel, ylabel=_("useful GB/s"), title=title)
            if key == "stride":
                ax.set(xscale="log", yscale="log")
                plain_log_axis(ax)
                ax.set_xticks([1, 2, 4, 8, 16, 32, 64], ["1", "2", "4", "8", "16", "32", "64"])
            else:
                ax.set_ylim(bottom=0)
            ax.legend()
        _source_note(fig, result, reference)
    return fig


def allocation_spread(points: Sequence[tuple[str, str, Sequence[float]]], source: str) -> Figure:
    """Each point's rate on each fresh allocation, against the point's median (model-zero-copy-reads): ``points`` are
    (label, bound, deviations), bound ``link`` or ``requests``; the same kernel on a fresh buffer."""
    colours = {"link": "C0", "requests": "C3"}
    markers = {"link": "o", "requests": "s"}
    with course_style():
        fig, ax = plt.subplots(figsize=(11, 3.6))
        for i, (_label, bound, deviations) in enumerate(points):
            ax.plot([i] * len(deviations), [100 * d for d in deviations], markers[bound], color=colours[bound],
                    alpha=0.8, markersize=5)
            ax.plot([i, i], [100 * min(deviations), 100 * max(deviations)], "-", color=colours[bound], linewidth=1)
        for bound, words in (("link", _("link-bound (the model's link term is the largest)")),
                             ("requests", _("request-bound (requests or halves of lines are)"))):
            ax.plot([], [], markers[bound], color=colours[bound], label=words)
        ax.axhline(0, color="0.5", linewidth=0.8)
        ax.set_xticks(range(len(points)), [label.replace("stride ", "s").replace("offset ", "o")
                                           for label, _bound, _d in points], rotation=90, fontsize=7)
        ax.set(ylabel=_("rate on each allocation\nagainst the median (%)"),
               title=_("The same kernel on three fresh buffers ({source})").format(source=source))
        ax.legend(loc="lower left", fontsize=8)
        fig.text(0.01, 0.01, _("s = stride, o = offset (floats)"), fontsize=7, color="0.4")
    return fig


# --------------------------------------------------------------------------- end to end, reuse
def end_to_end(result: Result, reference: Result | None = None) -> Figure:
    """Time of a host-to-host vector add against n: copies + kernel, or zero-copy (overlap-copies-with-streams)."""
    with course_style():
        fig, (ax_time, ax_ratio) = plt.subplots(1, 2, figsize=(11, 4.0))
        for run, style, suffix in _each(result, reference):
            times = {}
            for method, color in (("copy", "C0"), ("zero_copy", "C1")):
                rows = sorted(run.select(method=method), key=lambda r: r["n"])
                times[method] = np.array([_median(r) for r in rows])
                ns = [r["n"] for r in rows]
                ax_time.plot(ns, times[method] * 1e6, style, marker="o" if method == "copy" else "s", color=color,
                             label=(_("explicit copies + kernel") if method == "copy"
                                    else _("zero-copy kernel")) + suffix)
            ax_ratio.plot(ns, times["copy"] / times["zero_copy"], style, marker="o", color="C4", label=_("copy / zero-copy") + suffix)
        ax_time.set(xscale="log", yscale="log", xlabel=_("n (floats per array)"), ylabel=_("microseconds, median"),
                    title=_("c = a + b, host data in, host result out"))
        ax_ratio.axhline(1, color="0.3", lw=1)
        ax_ratio.set(xscale="log", xlabel=_("n (floats per array)"), ylabel=_("time ratio (>1: zero-copy faster)"),
                     title=_("Speed-up of zero-copy"))
        ax_time.set_xscale("log", base=2)
        ax_ratio.set_xscale("log", base=2)
        plain_log_axis(ax_time)
        ax_time.legend()
        ax_ratio.legend()
        _source_note(fig, result, reference)
    return fig


def reuse(result: Result) -> Figure:
    """Time against how many kernels use the same inputs (decide-when-zero-copy-wins)."""
    with course_style():
        fig, ax = plt.subplots()
        for method, color, label in (("copy", "C0", _("copy once, then k kernels on device memory")),
                                     ("zero_copy", "C1", _("k zero-copy kernels"))):
            rows = sorted(result.select(method=method), key=lambda r: r["uses"])
            ax.plot([r["uses"] for r in rows], [_median(r) * 1e3 for r in rows], "o-" if method == "copy" else "s--",
                    color=color, label=label)
        ax.set(xlabel=_("k, kernels that read the same inputs"), ylabel=_("milliseconds, median"),
               title=_("Data used k times (n = {n:,} floats per array)").format(n=result.rows[0]["n"]))
        ax.legend()
        _source_note(fig, result)
    return fig


def out_of_core(result: Result) -> Figure:
    """Milliseconds for c = a + b over a data set larger than the device-memory budgets: zero-copy in place, chunked
    copies, chunked copies on two streams (decide-when-zero-copy-wins)."""
    names = {"zero_copy": _("zero-copy"), "chunked": _("chunked"), "chunked_overlap": _("chunked +\n2 streams")}
    labels = [names[r["method"]] + (_("\n{mib} MiB budget").format(mib=r["budget_bytes"] >> 20) if r["budget_bytes"]
                                     else _("\nno device buffer")) for r in result.rows]
    total = result.rows[0]["total_bytes"]
    return bars(labels, [_median(r) * 1e3 for r in result.rows], ylabel=_("milliseconds, median"), note=result,
                title=_("c = a + b over {gib:.1f} GiB of host data").format(gib=total / 2**30), fmt="{:.1f} ms")


def write_combined(result: Result) -> Figure:
    """GB/s of the CPU and the GPU reading and writing ordinary against write-combined mapped memory
    (use-write-combined-and-registered-memory). Each bar is the median; the black tick spans the slowest to the
    fastest repeat, the spread the lesson's verdict compares."""
    labels, spans, colors = [], [], []
    for side in ("cpu", "gpu"):
        for op in ("read", "write"):
            for allocation, short, color in (("mapped", _("ordinary"), "C0"), ("mapped + write-combined", "WC", "C3")):
                labels.append(f"{side.upper()} " + {"read": _("read"), "write": _("write")}[op] + f"\n{short}")
                spans.append(band(result.one(allocation=allocation, side=side, op=op), "GBps"))
                colors.append(color)
    low, values, high = (np.array(column) for column in zip(*spans))
    fig = bars(labels, values, title=_("Ordinary mapped memory against write-combined (WC)\n"
                                           "bar: median; tick: slowest to fastest repeat"),
               ylabel="GB/s", colors=colors, note=result,
               fmt="{:.1f}")
    fig.axes[0].errorbar(np.arange(len(values)), values, yerr=[values - low, high - values], fmt="none", ecolor="k",
                         elinewidth=1, capsize=3)
    return fig


# --------------------------------------------------------------------------- page tables
def page_mapping(virtual_pages: Sequence[int], frames: Sequence[int | None], *, gpu_pages: Sequence[int] | None = None,
                 title: str | None = None) -> Figure:
    """Boxes for virtual pages on the left (and GPU pages on the right) and arrows to frames (map-pages-on-the-cpu,
    map-pages-on-the-gpu).

    With ``gpu_pages`` the GPU's arrows pass through an IOMMU column: the GPU's page tables give DMA (bus)
    addresses, which an IOMMU, where one is in use, translates to memory addresses (in a virtual machine, the
    physical host's IOMMU, with mappings the hypervisor sets up). The frames are the ones /proc/self/pagemap reports
    (guest-physical in a VM). Without ``title``, the figure says what it shows in general.
    """
    n = len(virtual_pages)
    known = sorted({f for f in frames if f is not None})
    with course_style():
        fig, ax = plt.subplots(figsize=(10.5 if gpu_pages is not None else 9, 0.55 * max(n, len(known)) + 1.8))
        ax.axis("off")
        ax.grid(False)
        columns = {"cpu": 0.0, "ram": 4.0, "iommu": 7.4, "gpu": 9.6}

        def box(x: float, y: float, text: str, color: str) -> None:
            ax.add_patch(Rectangle((x, y), 2.6, 0.8, facecolor=color, edgecolor="0.3"))
            ax.text(x + 1.3, y + 0.4, text, ha="center", va="center", fontsize=8,  # Chinese: CJK font as fallback
                    family="monospace" if text.isascii() else ["monospace", "sans-serif"])

        def arrow(start: tuple[float, float], end: tuple[float, float], color: str) -> None:
            ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10, color=color))

        frame_y = {f: (len(known) - 1 - i) * 1.0 for i, f in enumerate(known)}
        top = max(n, len(known))
        iommu_right = columns["iommu"] + 0.8
        if gpu_pages is not None:
            ax.add_patch(Rectangle((columns["iommu"], -0.1), 0.8, top, facecolor="#eeeeee", edgecolor="0.5",
                                   linestyle="--"))
        for i, (page, frame) in enumerate(zip(virtual_pages, frames)):
            y = (n - 1 - i) * 1.0
            box(columns["cpu"], y, f"VA {page * 4096:#x}", "#dbe9f6")
            if frame is not None:
                arrow((2.6, y + 0.4), (columns["ram"], frame_y[frame] + 0.4), "C0")
            if gpu_pages is not None:
                box(columns["gpu"], y, f"VA {gpu_pages[i] * 4096:#x}", "#fde3cf")
                if frame is not None:  # GPU page -> DMA address at the IOMMU -> frame
                    arrow((columns["gpu"], y + 0.4), (iommu_right, y + 0.4), "C3")
                    arrow((columns["iommu"], y + 0.4), (columns["ram"] + 2.6, frame_y[frame] + 0.4), "C3")
        for frame, y in frame_y.items():
            box(columns["ram"], y, _("frame {frame}").format(frame=f"{frame:#x}"), "#e3f1dc")
        ax.text(1.3, top + 0.1, _("CPU virtual pages\n(host MMU, page tables)"), ha="center", fontsize=9)
        ax.text(5.3, top + 0.1, _("physical page frames\n(as /proc/self/pagemap shows them)"), ha="center",
                fontsize=9)
        if gpu_pages is not None:
            ax.text(columns["iommu"] + 0.4, top + 0.1, _("IOMMU\nDMA addr.\n-> memory"), ha="center", fontsize=8)
            ax.text(columns["gpu"] + 1.3, top + 0.1, _("GPU virtual pages\n(GPU MMU -> DMA address,\nover PCIe)"),
                    ha="center", fontsize=9)
            ax.text(0.0, -0.45, _("The GPU's page tables hold DMA (bus) addresses; where an IOMMU is in use, it "
                                  "translates them to memory.\n"
                                  "In a VM: the physical host's IOMMU, with mappings the hypervisor sets up; the "
                                  "frames above are guest-physical.\nThe GPU's side follows the rule that section "
                                  "2 measured on allocations of the same kind."),
                    fontsize=7, color="0.35", va="top")
        ax.set_xlim(-0.2, 12.4 if gpu_pages is not None else 7)
        ax.set_ylim(-1.2 if gpu_pages is not None else -0.3, top + 1.4)
        ax.set_title(title if title is not None else _("Virtual pages and the physical frames behind them"))
    return fig


# --------------------------------------------------------------------------- start-here
def data_paths() -> Figure:
    """Where the data of a vector add move: explicit copies against zero-copy (start-here). The two panels are
    stacked and every label sits beside its arrow, not on it, so the text stays legible in a narrow column."""
    def box(ax: Any, x: float, y: float, w: float, h: float, text: str, color: str) -> None:
        ax.add_patch(Rectangle((x, y), w, h, facecolor=color, edgecolor="0.3"))
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=11)

    def arrow(ax: Any, start: tuple[float, float], end: tuple[float, float], text: str, color: str,
              below: bool = False, style: str = "-|>") -> None:
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle=style, mutation_scale=16, color=color, lw=2))
        y = (start[1] + end[1]) / 2 + (-0.15 if below else 0.15)
        ax.text((start[0] + end[0]) / 2, y, text, ha="center", va="top" if below else "bottom", fontsize=10.5,
                color=color, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})

    with course_style():
        fig, (left, right) = plt.subplots(2, 1, figsize=(7.5, 7.2))
        for ax, title in ((left, _("explicit copies: cudaMalloc + cudaMemcpy")),
                          (right, _("zero-copy: cudaHostAlloc(..., cudaHostAllocMapped)"))):
            ax.set(xlim=(0, 10), ylim=(0, 4.2), title=title)
            ax.axis("off")
            ax.axvline(4.9, ymin=0.04, ymax=0.88, color="0.6", linestyle=":")
            ax.text(1.8, 3.85, _("host (CPU side)"), ha="center", fontsize=10.5, color="0.3")
            ax.text(8.1, 3.85, "GPU", ha="center", fontsize=10.5, color="0.3")
            ax.text(4.9, 0.05, _("PCIe link"), ha="center", va="bottom", fontsize=10, color="0.4",
                    bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
        box(left, 0.3, 1.0, 3.0, 2.4, _("host RAM\na, b, c"), "#dbe9f6")
        box(left, 6.5, 2.3, 3.2, 1.1, _("device memory\n(HBM): d_a, d_b, d_c"), "#e5f5e0")
        box(left, 6.5, 0.3, 3.2, 1.0, _("SMs run\nc = a + b"), "#fdebd0")
        arrow(left, (3.3, 3.05), (6.5, 3.05), _("1. copy a, b in"), "C0")
        arrow(left, (6.5, 2.6), (3.3, 2.6), _("3. copy c out"), "C3", below=True)
        left.add_patch(FancyArrowPatch((8.1, 2.3), (8.1, 1.3), arrowstyle="<|-|>", mutation_scale=16, color="C2",
                                       lw=2))
        left.text(8.3, 1.8, _("2. read a, b;\nwrite c"), va="center", fontsize=10.5, color="C2")
        box(right, 0.3, 1.0, 3.0, 2.4, _("host RAM,\npage-locked\nand mapped:\na, b, c"), "#dbe9f6")
        box(right, 6.5, 1.6, 3.2, 1.2, _("SMs run\nc = a + b"), "#fdebd0")
        arrow(right, (3.3, 2.55), (6.5, 2.55), _("loads of a, b"), "C0")
        arrow(right, (6.5, 1.85), (3.3, 1.85), _("stores of c"), "C3", below=True)
        right.text(8.1, 0.75, _("no device buffers, no copy:\nthe kernel moves the data"), ha="center", va="center",
                   fontsize=10, color="0.3")
    return fig
