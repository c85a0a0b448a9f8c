"""A CJK web font for the book and the decks (``make book``, ``make slides``), so that the glossary's Chinese terms (and
the Chinese edition's text) render on a machine without a CJK font, offline.

At build time the Noto Sans CJK SC face that the set-up installs for the figures (:mod:`helpers.i18n.fonts`, SIL Open
Font License 1.1) is cut down to the CJK characters the built pages use and written beside them as WOFF2 (WOFF
where brotli is missing); :func:`css` declares it with ``@font-face`` and puts it after the Latin fonts, so a
browser reaches for it only for characters those fonts lack.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Iterable

FAMILY = "Course CJK"
FACE = "Noto Sans CJK SC"   # the face of helpers.i18n.fonts' collection that the Chinese edition uses
# Ideographs, kana, hangul, CJK punctuation and full-width forms: what a Latin font lacks and Chinese text holds.
CJK = re.compile("[\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
                 "\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")


class WebFontError(RuntimeError):
    """The web font could not be made; the message says what to install."""


def flavor() -> str:
    """``woff2`` where brotli is installed (the book and slides extras install it), else ``woff``."""
    return "woff2" if importlib.util.find_spec("brotli") else "woff"


def file_name() -> str:
    """The font file's name beside the CSS that loads it."""
    return f"course-cjk.{flavor()}"


def characters(texts: Iterable[str]) -> str:
    """The distinct CJK characters of ``texts``, sorted."""
    return "".join(sorted({c for text in texts for c in CJK.findall(text)}))


def characters_in(folder: Path, patterns: tuple[str, ...] = ("*.html", "*.js")) -> str:
    """The CJK characters of every built page (and the search index) under ``folder``."""
    files = [p for pattern in patterns for p in folder.rglob(pattern) if "_static" not in p.parts]
    return characters(p.read_text(encoding="utf-8", errors="ignore") for p in files)


def _source_font() -> object:
    from fontTools.ttLib import TTCollection, TTFont

    from ..i18n import fonts

    try:
        path = fonts.font_file()
    except fonts.CjkFontMissing as exc:
        raise WebFontError(str(exc)) from None
    if path.suffix == ".ttc":
        for face in TTCollection(str(path)).fonts:
            if face["name"].getDebugName(1) == FACE:
                return face
        raise WebFontError(f"{path.name} has no {FACE} face; reinstall manimgx-fonts-cjk")
    return TTFont(str(path))


def subset(chars: str, target: Path) -> Path | None:
    """Write the CJK face cut down to ``chars`` to ``target`` (WOFF2 or WOFF, by its flavour); None when ``chars`` is
    empty (nothing to show, no file)."""
    if not chars:
        return None
    from fontTools import subset as ft_subset

    font = _source_font()
    options = ft_subset.Options()
    options.flavor = flavor()
    options.layout_features = ["*"]
    options.name_IDs = ["*"]           # keep the licence and the font's names
    options.notdef_outline = True
    subsetter = ft_subset.Subsetter(options)
    subsetter.populate(text=chars)
    subsetter.subset(font)
    target.parent.mkdir(parents=True, exist_ok=True)
    font.flavor = options.flavor
    font.save(str(target))
    return target


def covered(font_path: Path) -> set[str]:
    """The characters a font file has glyphs for."""
    from fontTools.ttLib import TTFont

    return {chr(code) for code in TTFont(str(font_path)).getBestCmap()}


# Chromium keeps the boxes it drew for CJK text that was laid out while the font was loading (the text that asked
# for it), and a change of the font lists does not lay it out again. When the font has loaded, the page is given a
# feature tag no font has (no visible change, and no theme sets this property), so every line is shaped anew.
SCRIPT = ('document.fonts.addEventListener("loadingdone", (e) => { '
          f'if (e.fontfaces.some(f => f.family.includes("{FAMILY}"))) '
          'document.documentElement.style.fontFeatureSettings = \'"zcjk" 1\'; });\n')
SCRIPT_NAME = "course-cjk.js"


def _face(url: str) -> str:
    return (f'@font-face {{\n  font-family: "{FAMILY}";\n  src: url("{url}") format("{flavor()}");\n'
            "  font-weight: 100 900;\n  font-display: swap;\n}\n")


def _lists(selectors: list[str], lists: dict[str, str]) -> str:
    """The rule giving ``lists`` (property: Latin fonts) the CJK font last."""
    body = "".join(f"  {name}: {latin}, \"{FAMILY}\";\n" for name, latin in lists.items())
    return f"{', '.join(selectors)} {{\n{body}}}\n"


def css(url: str) -> str:
    """``@font-face`` for the subset at ``url`` (relative to the CSS), and the book's font families with it after the
    Latin fonts (pydata-sphinx-theme's variables; :data:`SCRIPT` shapes the text anew when it has loaded)."""
    base = "var(--pst-font-family-base-system)"
    return _face(url) + _lists(["html"], {"--pst-font-family-base": base, "--pst-font-family-heading": base,
                                         "--pst-font-family-monospace": "var(--pst-font-family-monospace-system)"})


# JupyterLab's content font, which nbconvert's reveal.js template sets on the cells (it overrides the theme's).
JUPYTER_SANS = ("system-ui, -apple-system, blinkmacsystemfont, 'Segoe UI', helvetica, arial, sans-serif, "
                "'Apple Color Emoji', 'Segoe UI Emoji', 'Segoe UI Symbol'")


def deck_css(url: str) -> str:
    """The same for a reveal.js deck: the cells' fonts (JupyterLab's variables), the theme's headings (Source Sans
    Pro) and the link to the deck's twin (outside the slides), the CJK font after their Latin ones."""
    cells = {"--jp-content-font-family": JUPYTER_SANS, "--jp-ui-font-family": JUPYTER_SANS,
             "--jp-code-font-family": "var(--jp-code-font-family-default)"}
    return (_face(url) + _lists([":root"], cells)
            + _lists([".reveal", ".reveal h1", ".reveal h2", ".reveal h3", ".reveal h4", ".zc-twin"],
                     {"font-family": '"Source Sans Pro", Helvetica, sans-serif'}))
