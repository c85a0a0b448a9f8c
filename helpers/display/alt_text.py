"""Alt text for the course's figures: what a figure shows and its headline numbers, read from the figure itself.

Every lesson draws its figures with :mod:`helpers.display.plots`, whose functions give each figure a title, labelled
axes and labelled series. :func:`describe` turns those into a sentence or two, e.g. "Line chart 'Over PCIe (linear
scale)': GB/s against bytes moved. memcpy HtoD pinned: highest 55.1 at 1 GiB; ...". A figure can also carry its own text
in ``fig.alt_text``, which wins.

The text reaches the notebook through IPython: :func:`register` (called by ``course.start()``, the first cell of every
lesson, e.g. start-here's) adds ``{"image/png": {"alt": ...}}`` to the output metadata of every figure shown.
:func:`embed_in_html` gives such an output an HTML ``<img alt=...>`` beside the PNG, which the book
(``helpers.tools.book``) and the slides (``helpers.tools.slides``) render in place of a bare image. Not used by the
lessons' text; nothing here prints.
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np

_LIMIT = 900  # characters: screen readers read alt text in one go; longer series lists are cut, saying so


def _number(value: float) -> str:
    if not np.isfinite(value):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def _size(value: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale:
            return f"{value / scale:g} {unit}"
    return f"{value:g} B"


class _Named:
    """An axes whose x values are positions in a list of names (a line over categories or dates)."""

    def __init__(self, ax: Any, names: list[str]) -> None:
        self.ax, self.names = ax, names

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ax, name)


def _x(ax: Any, value: float) -> str:
    """An x value as the axis reads: sizes in KiB/MiB/GiB on the course's log-2 size axes."""
    if isinstance(ax, _Named):
        return ax.names[int(value)]
    label = ax.get_xlabel().lower()
    if ax.get_xscale() == "log" and value >= 1024 and ("byte" in label or "buffer" in label):
        return _size(value)
    return _number(value)


def _unit(label: str) -> str:
    """The unit of an axis label: 'GB/s (1e9 B/s)' -> 'GB/s', 'ns per load' -> 'ns per load'."""
    return label.split(" (")[0].strip()


def _lines(ax: Any) -> list[str]:
    parts = []
    for line in ax.get_lines():
        label = str(line.get_label())
        xdata, ydata = line.get_data()
        try:
            y = np.asarray(ydata, dtype=float)
        except (TypeError, ValueError):
            continue
        where: Any = ax
        try:
            x = np.asarray(xdata, dtype=float)
        except (TypeError, ValueError):  # categories or dates: name them as they are
            x = np.arange(len(y), dtype=float)
            where = _Named(ax, [str(v) for v in xdata])
        if label.startswith("_") or y.size == 0 or not np.isfinite(y).any():
            continue
        if line.get_transform() != ax.transData:  # axhline / axvline: a marker line, its label says what it is
            parts.append(f"a line marks {label}")
            continue
        if y.size == 1 or np.allclose(y, y[0]):
            parts.append(f"{label}: {_number(float(y[0]))}")
            continue
        best = int(np.nanargmax(y))
        low = int(np.nanargmin(y))
        parts.append(f"{label}: from {_number(float(y[low]))} at {_x(where, float(x[low]))} "
                     f"to {_number(float(y[best]))} at {_x(where, float(x[best]))}")
    return parts


def _bars(ax: Any) -> list[str]:
    from matplotlib.container import BarContainer

    names = [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()]
    parts = []
    for container in ax.containers:
        if isinstance(container, BarContainer):
            for i, patch in enumerate(container.patches):
                name = names[i] if i < len(names) and names[i] else f"bar {i + 1}"
                parts.append(f"{name}: {_number(float(patch.get_height()))}")
    return parts


def describe_axes(ax: Any, seen: set[str] | None = None, ylabel: str = "") -> str:
    """One sentence for one set of axes: its kind, title, axes and each series' range or value.

    Series already in ``seen`` (described for an earlier panel) are named as such, not repeated; an axes without
    a y label takes ``ylabel`` (its neighbour's)."""
    seen = set() if seen is None else seen
    title = ax.get_title()
    named = f" '{title}'" if title else ""
    ylabel, xlabel = _unit(ax.get_ylabel()) or ylabel, ax.get_xlabel()
    bars = _bars(ax)
    if bars:
        head = f"Bar chart{named}" + (f", in {ylabel}" if ylabel else "")
        return head + ": " + "; ".join(bars) + "."
    lines = _lines(ax)
    if lines:
        scale = " (log scale)" if ax.get_yscale() == "log" else ""
        head = f"Line chart{named}: {ylabel or 'value'}{scale} against {xlabel or 'x'}"
        new = [line for line in lines if line not in seen]
        again = len(lines) - len(new)
        seen.update(lines)
        return (head + ". " + (f"The {again} series of the panel before, and " if again and new else
                               f"The {again} series of the panel before" if again else "")
                + "; ".join(new) + ".")
    texts = [t.get_text().replace("\n", " ").strip().rstrip(".") for t in ax.texts]
    texts = list(dict.fromkeys(t for t in texts if t))
    if texts:
        return f"Diagram{named}, with the labels: " + "; ".join(texts) + "."
    return f"Figure{named}." if title else ""


def describe(fig: Any) -> str:
    """Alt text for a matplotlib figure: ``fig.alt_text`` if set, else what its axes show (see the module)."""
    given = getattr(fig, "alt_text", None)
    if given:
        return str(given)
    parts = []
    suptitle = getattr(fig, "_suptitle", None)
    if suptitle is not None and suptitle.get_text():
        parts.append(suptitle.get_text())
    seen: set[str] = set()
    ylabel = ""
    for ax in fig.axes:
        if ax.get_visible():
            parts.append(describe_axes(ax, seen, ylabel))
            ylabel = _unit(ax.get_ylabel()) or ylabel
    parts = [part for part in parts if part]
    source = getattr(fig, "_supxlabel", None)
    if source is not None and source.get_text():
        parts.append(f"Data: {source.get_text()}.")
    text = " ".join(parts) or "A figure without title, axes labels or series labels."
    return text if len(text) <= _LIMIT else text[: _LIMIT - 40].rsplit(";", 1)[0] + "; ... (more series in the figure)."


def _metadata(fig: Any) -> tuple[dict, dict]:
    """IPython mimebundle formatter: no data of its own, only the PNG's alt text as metadata."""
    try:
        return {}, {"image/png": {"alt": describe(fig)}}
    except Exception:  # a description must never stop a figure from showing
        return {}, {}


def register() -> bool:
    """Give every matplotlib figure shown in this IPython kernel alt text in its output metadata; False outside
    IPython. Safe to call again; the inline backend's PNG formatter is left as it is."""
    try:
        from IPython import get_ipython
        from matplotlib.figure import Figure
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    shell.display_formatter.mimebundle_formatter.for_type(Figure, _metadata)
    return True


def output_alt(output: dict) -> str | None:
    """The alt text of a notebook output's PNG, or None."""
    meta = output.get("metadata", {}).get("image/png", {})
    alt = meta.get("alt") if isinstance(meta, dict) else None
    return str(alt) if alt else None


def image_outputs(nb: Any) -> list[tuple[int, dict]]:
    """(cell index, output) of every PNG output of a notebook."""
    return [(i, out) for i, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"
            for out in cell.get("outputs", []) if "image/png" in out.get("data", {})]


def embed_in_html(nb: Any) -> int:
    """Add ``text/html`` ``<img alt=...>`` beside each PNG output that has alt text; return how many.

    HTML renderers (nbconvert, MyST-NB) prefer ``text/html`` to ``image/png``, and neither reads alt text from
    an output's metadata, so this is how the book's and the slides' images get their ``alt`` attribute."""
    done = 0
    for _, out in image_outputs(nb):
        alt = output_alt(out)
        if alt is None or "text/html" in out["data"]:
            continue
        png = out["data"]["image/png"]
        png = "".join(png) if isinstance(png, list) else png
        out["data"]["text/html"] = (f'<img src="data:image/png;base64,{png.strip()}" '
                                    f'alt="{html.escape(alt, quote=True)}" style="max-width: 100%"/>')
        done += 1
    return done
