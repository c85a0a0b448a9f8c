"""A CJK font for the Chinese edition's figures: Noto Sans CJK SC (SIL Open Font License 1.1), shipped by the
``manimgx-fonts-cjk`` package that the set-up installs, registered with matplotlib when Chinese is chosen.

Every figure of the course (start-here's data paths on) then draws Chinese titles, labels and legends without
missing glyphs; Latin text and digits come from the same font.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources
from pathlib import Path

__all__ = ["FAMILY", "PACKAGE", "font_file", "use_cjk_font"]

FAMILY = "Noto Sans CJK SC"      # the simplified-Chinese face of the collection
PACKAGE = "manimgx_fonts_cjk"    # the package that ships the font file


class CjkFontMissing(RuntimeError):
    """The font package is not installed."""


def font_file() -> Path:
    """The font collection's file in the installed package."""
    try:
        folder = resources.files(PACKAGE)
    except ModuleNotFoundError:
        raise CjkFontMissing(f"no CJK font: `pip install manimgx-fonts-cjk` (make setup installs it) so that "
                             "figures can show Chinese") from None
    found = sorted(p for p in Path(str(folder)).iterdir() if p.suffix in {".ttc", ".otf", ".ttf"})
    if not found:
        raise CjkFontMissing(f"the package {PACKAGE} holds no font file: reinstall it")
    return found[0]


def use_cjk_font() -> str:
    """Register the CJK font with matplotlib and put it first among the sans-serif fonts (the course's style uses
    sans-serif); returns the family's name."""
    from matplotlib import font_manager, rcParams

    path = str(font_file())
    manager = font_manager.fontManager
    if not any(entry.fname == path for entry in manager.ttflist):
        manager.addfont(path)
        # A variable font: matplotlib reads its weight as 100 and draws its default instance whatever the weight
        # asked. Listing that instance as regular and as bold lets the style's weights find it without a warning.
        ours = [e for e in manager.ttflist if e.fname == path]
        manager.ttflist = [e for e in manager.ttflist if e.fname != path] + [
            replace(e, weight=weight) for e in ours for weight in (400, 700)]
        manager._findfont_cached.cache_clear()
    rest = [name for name in rcParams["font.sans-serif"] if name != FAMILY]
    rcParams["font.sans-serif"] = [FAMILY, *rest]
    return FAMILY
