"""The code cells a learner must read to do an exercise (tagged ``exercise`` or ``predict``): their comments and
docstrings are translated in the Chinese edition, their code never. :func:`skeleton` is what must stay identical.
"""

from __future__ import annotations

import io
import re
import tokenize

__all__ = ["LEARNER_TAGS", "is_learner_code", "skeleton"]

LEARNER_TAGS = frozenset({"exercise", "predict"})
_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def is_learner_code(cell) -> bool:  # an nbformat cell
    """A code cell whose comments the learner reads to do an exercise or a prediction."""
    return cell.cell_type == "code" and bool(LEARNER_TAGS & set(cell.metadata.get("tags", [])))


def skeleton(source: str) -> str:
    """The code without its comments (Python ``#``, CUDA ``//`` and ``/* */`` inside strings) and docstrings, as
    tokens: a translation may change only what this drops. Code that does not tokenize is its own skeleton."""
    kept: list[str] = []
    previous = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.COMMENT, tokenize.NL):
                continue
            text = {tokenize.NEWLINE: "<newline>", tokenize.INDENT: "<indent>", tokenize.DEDENT: "<dedent>"}.get(
                token.type, token.string)   # the statements' lines and blocks are code too
            if token.type == tokenize.STRING:
                text = '""' if previous == ":" else " ".join(_C_COMMENT.sub(" ", text).split())
            kept.append(text)
            previous = token.string if token.type not in (tokenize.NEWLINE, tokenize.INDENT) else previous
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    return " ".join(kept)
