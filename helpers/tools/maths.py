"""Maths rendered at build time as MathML, so the book and the decks show formulas offline (``make book``,
``make slides``; the formulas of keep-enough-bytes-in-flight and model-zero-copy-reads).

The TeX of a formula is converted by the latex2mathml package (the ``book`` and ``slides`` extras install it);
browsers draw MathML themselves (Chromium 109 and later, Firefox, Safari), so no MathJax is loaded from a CDN.
Two users: the decks convert a lesson's Markdown (:func:`markdown_with_mathml`), and the book registers this module
as a Sphinx extension whose math renderer ``mathml`` (:func:`setup`) replaces MathJax.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import CourseError

# A Markdown text's code (fenced blocks, then code spans), which keeps its dollars; then display maths $$...$$,
# then inline maths $...$ in pandoc's sense: no space inside either dollar and no digit right after the closing one
# (so "$5 and $6" stays text).
_CODE = re.compile(r"(?ms)^(```|~~~).*?^\1[^\n]*$|(`+)(?!`).+?(?<!`)\2(?!`)")
_DISPLAY = re.compile(r"(?<!\\)\$\$(.+?)(?<!\\)\$\$", re.S)
_INLINE = re.compile(r"(?<![\\$])\$(?=\S)([^$\n]+?)(?<=\S)(?<!\\)\$(?![$\d])")


class MathsError(CourseError):
    """A formula could not be converted; the message names it and says what to do."""


def mathml(tex: str, display: bool = False) -> str:
    """The MathML of one TeX formula (``display``: a block of its own, else inline in the text)."""
    try:
        from latex2mathml.converter import convert
    except ImportError:
        raise MathsError("formulas are rendered with the latex2mathml package, which is not installed: run "
                         "`make book` or `make slides`, or `pip install -e '.[slides]'`.") from None
    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception as exc:   # latex2mathml raises its own types and plain ones on TeX it cannot read
        raise MathsError(f"latex2mathml cannot convert the formula {tex.strip()!r} ({exc}); rewrite it in the "
                         "TeX that latex2mathml reads.") from None


def _outside_code(text: str, convert: Any) -> str:
    pieces, last = [], 0
    for match in _CODE.finditer(text):
        pieces += [convert(text[last:match.start()]), match.group(0)]
        last = match.end()
    return "".join(pieces + [convert(text[last:])])


def markdown_with_mathml(text: str) -> str:
    """Markdown with each ``$$...$$`` and ``$...$`` outside code replaced by its MathML (the decks' lessons)."""
    def convert(part: str) -> str:
        part = _DISPLAY.sub(lambda m: mathml(m.group(1), display=True), part)
        return _INLINE.sub(lambda m: mathml(m.group(1)), part)

    return _outside_code(text, convert)


def _visit_math(self: Any, node: Any) -> None:
    from docutils import nodes

    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate nohighlight"))
    self.body.append(mathml(node.astext()) + "</span>")
    raise nodes.SkipNode


def _visit_displaymath(self: Any, node: Any) -> None:
    from docutils import nodes
    from sphinx.locale import _
    from sphinx.util.math import get_node_equation_number

    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if node["number"]:
        self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})')
        self.add_permalink_ref(node, _("Link to this equation"))
        self.body.append("</span>")
    for part in (p for p in node.astext().split("\n\n") if p.strip()):
        tex = rf"\begin{{split}}{part}\end{{split}}" if r"\\" in part else part
        self.body.append(mathml(tex, display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app: Any) -> dict[str, Any]:
    """The Sphinx extension: the math renderer ``mathml`` (select it with ``html_math_renderer = "mathml"``)."""
    app.add_html_math_renderer("mathml", (_visit_math, None), (_visit_displaymath, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
