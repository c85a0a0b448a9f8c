"""Tables and figures of the platforms lesson's results (take-zero-copy-beyond-one-pcie-gpu).

Each function takes an experiment's :class:`~helpers.experiments.Result` and returns something that shows
itself in a notebook: a :class:`~helpers.tables.Table` or a matplotlib figure.
"""

from __future__ import annotations

from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from ..experiments import quiet
from ..experiments.result import Result
from ..i18n import N_, _, sentences
from ..tables import Table, table
from .plots import _size_label, _source_note, course_style, plain_log_axis


# The kinds of memory the records name (their rows' "memory"), as a table, legend or sentence shows them: the record
# keeps the English key, the chosen language names it.
MEMORY_KINDS = {"mapped": N_("mapped"), "managed, migrating": N_("managed, migrating"),
                "managed, preferred CPU + accessed by GPU": N_("managed, preferred CPU + accessed by GPU"),
                "anonymous memory": N_("anonymous memory"), "read-only file mapping": N_("read-only file mapping")}


def memory_kind(kind: Any) -> str:
    """A record's kind of memory in the chosen language (the key itself when the table does not know it)."""
    return _(MEMORY_KINDS[kind]) if kind in MEMORY_KINDS else str(kind)


def _yes_no(value: Any) -> Any:
    return (_("yes") if value else _("no")) if isinstance(value, bool) else value


def _spread(seconds: list[float]) -> str:
    """The repeats' spread around the median, in percent: (max - min) / median."""
    values = np.asarray(seconds, dtype=float)
    return f"{(values.max() - values.min()) / np.median(values):.1%}"


def managed_table(result: Result) -> Table:
    """GB/s delivered by each kind of memory, per size and number of passes (managed experiment)."""
    return table([_("memory"), _("size"), _("passes"), _("GB/s (median)"), _("spread of the repeats")],
                 [(memory_kind(r["memory"]), _size_label(r["nbytes"]), r["passes"], f"{r['GBps']:.1f}",
                   _spread(r["seconds"]))
                  for r in result.rows])


def managed_figure(result: Result) -> Figure:
    """Delivered GB/s against passes over the data, one line per kind of memory, for the largest size."""
    largest = max(r["nbytes"] for r in result.rows)
    with course_style():
        fig, ax = plt.subplots(figsize=(7, 3.8))
        # Lines that coincide (mapped and advised managed memory take the same road) stay told apart: each kind has its
        # own line style and marker, the first drawn largest and hollow, so the next shows through it.
        styles = zip(dict.fromkeys(r["memory"] for r in result.rows), "osD^v", ("-", "--", ":", "-.", "-"),
                     (11, 7, 5, 5, 5))
        for order, (kind, marker, style, size) in enumerate(styles):
            rows = sorted(result.select(memory=kind, nbytes=largest), key=lambda r: r["passes"])
            passes = [r["passes"] for r in rows]
            rates = [r["GBps"] for r in rows]
            low = [r["nbytes"] * r["passes"] / max(r["seconds"]) / 1e9 for r in rows]
            high = [r["nbytes"] * r["passes"] / min(r["seconds"]) / 1e9 for r in rows]
            line, = ax.plot(passes, rates, marker=marker, linestyle=style, markersize=size, label=memory_kind(kind),
                            markerfacecolor="none" if order == 0 else None, zorder=2 + order)
            ax.fill_between(passes, low, high, color=line.get_color(), alpha=0.2)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ticks = sorted({r["passes"] for r in result.rows})
        ax.set_xticks(ticks, [str(k) for k in ticks])             # 1, 2, 4, 8: not 2^0 ... 2^3
        ax.xaxis.set_minor_formatter(NullFormatter())
        plain_log_axis(ax)                                          # 10, 20, 50, 100: not 2x10^1, nor 8, 9, 10...
        ax.set_xlabel(_("passes over the data (the CPU wrote it just before)"))
        ax.set_ylabel(_("delivered GB/s"))
        ax.set_title(_("Reading {size} the CPU has just written").format(size=_size_label(largest)))
        ax.legend(fontsize=8)
        _source_note(fig, result)
    return fig


def registration_table(result: Result) -> Table:
    """Whether each memory registered with and without the read-only flag, and its read rate."""
    return table([_("memory"), _("READ_ONLY flag"), _("registered"), _("GPU read GB/s"), _("driver said")],
                 [(memory_kind(r["memory"]), _yes_no(r["read_only_flag"]), _yes_no(r["registered"]),
                   f"{r['GBps']:.1f}" if r.get("GBps") else "-", r["error"] or "-") for r in result.rows])


def cpu_traffic_figure(result: Result) -> Figure:
    """The kernel's zero-copy read rate, and the CPU threads' copy rate with and without it, against threads."""
    rows = sorted(result.rows, key=lambda r: r["cpu_threads"])
    threads = [r["cpu_threads"] for r in rows]
    with course_style():
        fig, (ax_gpu, ax_cpu) = plt.subplots(1, 2, figsize=(11, 3.8))
        rates = [r["GBps"] for r in rows]
        low = [r["nbytes"] / max(r["seconds"]) / 1e9 for r in rows]
        high = [r["nbytes"] / min(r["seconds"]) / 1e9 for r in rows]
        line, = ax_gpu.plot(threads, rates, marker="o", label=_("zero-copy read kernel"))
        ax_gpu.fill_between(threads, low, high, color=line.get_color(), alpha=0.2, label=_("fastest to slowest repeat"))
        ax_gpu.set_ylim(0, max(high) * 1.15)
        ax_gpu.set_xlabel(_("CPU threads copying memory meanwhile"))
        ax_gpu.set_ylabel(_("GPU reads of mapped memory, GB/s"))
        ax_gpu.legend(fontsize=8)
        busy = [r for r in rows if r["cpu_threads"]]
        ax_cpu.plot([r["cpu_threads"] for r in busy], [r["cpu_GBps_alone"] for r in busy], marker="s",
                    linestyle="--", label=_("CPU threads alone"))
        ax_cpu.plot([r["cpu_threads"] for r in busy], [r["cpu_GBps_with_kernel"] for r in busy], marker="^",
                    label=_("while the kernel reads"))
        ax_cpu.set_xlabel(_("CPU threads copying memory"))
        ax_cpu.set_ylabel(_("CPU copy traffic, GB/s (read + written)"))
        ax_cpu.set_ylim(bottom=0)
        ax_cpu.legend(fontsize=8)
        _source_note(fig, result)
    return fig


def cpu_traffic_table(result: Result) -> Table:
    """The kernel's rate and the CPU's, per number of CPU threads."""
    base = result.one(cpu_threads=0)["GBps"]
    return table([_("CPU threads"), _("kernel GB/s"), _("share of the kernel's rate alone"), _("spread of the repeats"),
                  _("CPU GB/s alone"), _("CPU GB/s with the kernel")],
                 [(r["cpu_threads"], f"{r['GBps']:.1f}", f"{r['GBps'] / base:.0%}", _spread(r["seconds"]),
                   f"{r['cpu_GBps_alone']:.1f}" if r["cpu_threads"] else "-",
                   f"{r['cpu_GBps_with_kernel']:.1f}" if r["cpu_threads"] else "-")
                  for r in sorted(result.rows, key=lambda r: r["cpu_threads"])])


def row_table(row: dict[str, Any]) -> Table:
    """One row of a result as a two-column table (pageable access, NUMA)."""
    return table([_("field"), _("value")], [(k, _yes_no(v)) for k, v in row.items()])


class Sentence:
    """A sentence computed from a result, shown as Markdown in a notebook and as text elsewhere."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_markdown_(self) -> str:
        return self.text

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def compare_rows(result: Result, a: str, b: str, *, key: str = "memory", **where: Any) -> Sentence:
    """Compare the rates of the rows whose ``key`` is ``a`` and ``b`` (and match ``where``): a difference is
    claimed only when the ranges of their repeats do not overlap (the course's measurement rule)."""
    row_a, row_b = result.one(**{key: a}, **where), result.one(**{key: b}, **where)
    (low_a, _mid_a, high_a), (low_b, _mid_b, high_b) = quiet.band(row_a, "GBps"), quiet.band(row_b, "GBps")
    ratio = row_b["GBps"] / row_a["GBps"]
    head = _("{b}: {rate_b:.1f} GB/s ({low_b:.1f} to {high_b:.1f} over {count} repeats); "
             "{a}: {rate_a:.1f} GB/s ({low_a:.1f} to {high_a:.1f}).").format(
        b=memory_kind(b), rate_b=row_b["GBps"], low_b=low_b, high_b=high_b, count=len(row_b["seconds"]),
        a=memory_kind(a), rate_a=row_a["GBps"], low_a=low_a, high_a=high_a)
    if not quiet.differ(row_a, row_b, "GBps"):
        verdict = _("The ranges overlap: on {gpu} this run cannot tell the two apart (ratio {ratio:.3f}).").format(
            gpu=result.gpu, ratio=ratio)
    else:
        verdict = _("The ranges do not overlap: on {gpu}, {b} delivered {ratio:.2f}x the rate of {a}.").format(
            gpu=result.gpu, b=memory_kind(b), ratio=ratio, a=memory_kind(a))
    return Sentence(sentences(head, verdict))

