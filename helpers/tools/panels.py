"""Wide figures on a phone (``make book``): a two-panel figure is split at build time into its two panels, which a
narrow screen shows one above the other; a wide figure of one panel fits the width; either zooms when tapped.

The panels are found in the PNG itself: two panels side by side (``plt.subplots(1, 2)``, as in measure-bandwidth,
coalesce-and-align-accesses and decide-when-zero-copy-wins) are parted by a band of blank columns near the middle,
which no single panel has. The book's CSS (:data:`CSS`) shows the whole figure on a wide screen and the stacked
panels at most 640 px wide.
"""

from __future__ import annotations

import base64
import html
import io
import re
import struct
from typing import Any

WIDE = 2.3        # a figure wider than this times its height is wide
GUTTER_PX = 6     # the fewest blank columns that part two panels
MIDDLE = (0.3, 0.7)   # where the parting is looked for, as fractions of the width
INK = 235         # a channel below this is ink, not the white background
ZOOM = 'tabindex="0" title="Tap to zoom"'   # a tap focuses the image, which the CSS then shows wider

CSS = """\
.cell_output .zc-panels { display: none; }
@media (max-width: 640px) {
  .cell_output img.zc-split { display: none; }
  .cell_output .zc-panels { display: block; }
  .cell_output .zc-panels img { display: block; width: 100%; height: auto; margin-bottom: 0.6em; }
  .cell_output img.zc-wide { width: 100%; height: auto; }
  .cell_output .zc-panels img, .cell_output img.zc-wide { cursor: zoom-in; }
  .cell_output .zc-panels img:focus, .cell_output img.zc-wide:focus {
    width: 190vw; max-width: none !important; cursor: zoom-out; }
}
"""


def size(png: bytes) -> tuple[int, int]:
    """Width and height of a PNG, from its header."""
    return struct.unpack(">II", png[16:24])


def parting(png: bytes) -> int | None:
    """The column that parts two panels side by side (the middle of the widest blank band near the middle of the
    figure, at least :data:`GUTTER_PX` wide), or None for a figure of one panel."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    inked = (pixels < INK).any(axis=2).any(axis=0)
    width = len(inked)
    lo, hi = int(width * MIDDLE[0]), int(width * MIDDLE[1])
    best, start = (0, None), None
    for x in range(lo, hi + 1):
        if x < hi and not inked[x]:
            start = x if start is None else start
        elif start is not None:
            best = max(best, (x - start, (start + x) // 2), key=lambda b: b[0])
            start = None
    return best[1] if best[0] >= GUTTER_PX else None


def split(png: bytes, column: int) -> tuple[bytes, bytes]:
    """The two panels of a figure parted at ``column``, as PNGs."""
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    pieces = []
    for box in ((0, 0, column, image.height), (column, 0, image.width, image.height)):
        out = io.BytesIO()
        image.crop(box).save(out, format="PNG", optimize=True)
        pieces.append(out.getvalue())
    return pieces[0], pieces[1]


def _panels_html(alt: str, left: bytes, right: bytes) -> str:
    images = "".join(f'<img {ZOOM} src="data:image/png;base64,{base64.b64encode(p).decode()}" alt="">'
                     for p in (left, right))
    return f'<span class="zc-panels" role="img" aria-label="{html.escape(alt)}">{images}</span>'


def stack_wide_figures(nb: Any, ratio: float = WIDE) -> dict[str, int]:
    """Prepare each wide figure of an executed lesson for a phone: a two-panel one gets its panels beside it
    (class ``zc-split``), a one-panel one is marked ``zc-wide`` and tap-to-zoom. Returns the counts of both."""
    counts = {"split": 0, "zoom": 0}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            markup = "".join(data.get("text/html", ""))
            if "image/png" not in data or not markup.startswith("<img "):
                continue
            png = base64.b64decode("".join(data["image/png"]))
            width, height = size(png)
            if width <= ratio * height:
                continue
            column = parting(png)
            if column is None:
                data["text/html"] = markup.replace("<img ", f'<img class="zc-wide" {ZOOM} ', 1)
                counts["zoom"] += 1
                continue
            alt = html.unescape(m.group(1)) if (m := re.search(r'alt="([^"]*)"', markup)) else ""
            data["text/html"] = (markup.replace("<img ", '<img class="zc-wide zc-split" ', 1)
                                 + _panels_html(alt, *split(png, column)))
            counts["split"] += 1
    return counts
