"""English left in the Chinese edition's outputs (issue 35): runs of three or more English words in what a Chinese
lesson shows (stream text, Markdown and HTML outputs, figure text), outside what stays English by design: code and
identifiers, kernel sources, the English term in parentheses at its first use, quoted text, links, and the tool or
driver text listed in :data:`QUOTED` (tests/test_i18n_outputs.py runs every Chinese lesson through it).
"""

from __future__ import annotations

import html
import re
from typing import Any, Iterable

__all__ = ["QUOTED", "english_runs", "output_texts"]

# Text that stays English because it is quoted as a tool, driver or source gives it.
QUOTED = (
    r"Cuda compilation tools, release [\d.]+",                 # nvcc --version, quoted with a SASS listing
    r"\w+Error: [^|\n]*",                                      # a backend's or driver's error, quoted
    r"Invalid (?:\\?_){2}global(?:\\?_){2} (?:read|write) of size [^|\n]*",  # the CPU backend's, as sanitizer says it
    r"(CUDA C\+\+ )?(Best Practices|Programming) Guide",       # primary sources by their titles
    r"Runtime API|Driver API|Unified Addressing|Zero Copy",
)
_WORD = r"[A-Za-z][a-z]*(?:'[a-z]+)?"
_RUN = re.compile(rf"(?<![\w./-])(?:{_WORD}[,;:]?\s+){{2,}}{_WORD}(?![\w(./-])")
_PAIR = re.compile(rf"{_WORD}\s+{_WORD}")
_CODE = re.compile(r"__global__|extern \"C\"|#include|^\s*//", re.M)
_STRIP = (
    re.compile(r"<(code|pre|script|style)\b[^>]*>.*?</\1>", re.S),
    re.compile(r"<[^>]+>"),
    re.compile(r"```.*?```", re.S),
    re.compile(r"`[^`\n]*`"),
    re.compile(r"https?://\S+|\]\([^)]*\)"),
    re.compile(r"\([^()]*\)|（[^（）]*）|“[^”]*”|「[^」]*」|\"[^\"\n]*\"|(?<!\w)'[^'\n]*'(?!\w)"),
    re.compile("|".join(QUOTED)),
)


def english_runs(text: str) -> list[str]:
    """The runs of three or more English words in ``text``, two of them side by side, outside what stays English
    (code, parentheses, quotes, links, :data:`QUOTED`)."""
    text = html.unescape(text)
    for pattern in _STRIP:
        text = pattern.sub(" ", text)
    # a list of names (``a, b, c``; ``inflight, caching, latency``) is not a sentence: two words must meet
    return [m.group(0) for m in _RUN.finditer(text) if _PAIR.search(m.group(0))]


def output_texts(notebook: Any) -> Iterable[tuple[int, str]]:
    """(cell index, text) for what each code cell of an executed notebook shows in words: stream text, else its
    Markdown, HTML or plain text; kernel sources (CUDA code printed) are code and left out."""
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                text = output.get("text", "")
            else:
                data = output.get("data", {})
                chosen = next((m for m in ("text/markdown", "text/html") if m in data), None)
                text = data[chosen] if chosen else ("" if "image/png" in data else data.get("text/plain", ""))
            text = "".join(text) if isinstance(text, list) else text
            if text and not _CODE.search(text):
                yield index, text
