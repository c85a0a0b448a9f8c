"""The code cells' comments (Python ``#``, CUDA ``//`` and ``/* */`` in kernel strings) and docstrings: translated
in the Chinese edition, the code never. A code cell is in its lesson's catalog when it has any (or is tagged
``exercise`` or ``predict``); :func:`skeleton` is what a translation must keep identical. The printed solutions
(:mod:`.solutions`) follow the same rule.
"""

from __future__ import annotations

import io
import re
import tokenize

__all__ = ["LEARNER_TAGS", "is_learner_code", "has_comments", "skeleton"]

LEARNER_TAGS = frozenset({"exercise", "predict"})
_C_COMMENT = re.compile(r"(?<![:\\])//[^\n]*|/\*.*?\*/", re.S)   # not the // of a URL (https://)
_NAMES = {tokenize.NEWLINE: "<newline>", tokenize.INDENT: "<indent>", tokenize.DEDENT: "<dedent>"}


def is_learner_code(cell) -> bool:  # an nbformat cell
    """A code cell whose comments or docstrings the learner reads (every one that has some), or an exercise's or
    a prediction's."""
    return cell.cell_type == "code" and (bool(LEARNER_TAGS & set(cell.metadata.get("tags", [])))
                                         or has_comments(cell.source))


def _split(source: str) -> tuple[list[str], int] | None:
    """The code's tokens without comments and docstrings (a docstring kept as ``""``, a string without its CUDA
    comments), and how many comments and docstrings there were; None if the code does not tokenize."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                  if t.type not in (tokenize.NL, tokenize.COMMENT)]
        comments = sum(t.type == tokenize.COMMENT for t in tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    kept: list[str] = []
    for i, token in enumerate(tokens):
        text = _NAMES.get(token.type, token.string)   # the statements' lines and blocks are code too
        if token.type == tokenize.STRING:
            after = tokens[i + 1].type if i + 1 < len(tokens) else tokenize.ENDMARKER
            if kept[-3:] == [":", "<newline>", "<indent>"] or (kept[-1:] == [":"] and after in (
                    tokenize.NEWLINE, tokenize.ENDMARKER)):       # a body's first statement, `def f(): "..."`
                text, comments = '""', comments + 1
            elif _C_COMMENT.search(text):
                text, comments = " ".join(_C_COMMENT.sub(" ", text).split()), comments + 1
        kept.append(text)
    return kept, comments


def has_comments(source: str) -> bool:
    """Whether the code has a comment, a docstring or a CUDA comment in a string: something to translate."""
    found = _split(source)
    return found is not None and found[1] > 0


def skeleton(source: str) -> str:
    """The code without its comments (Python ``#``, CUDA ``//`` and ``/* */`` inside strings) and docstrings, as
    tokens: a translation may change only what this drops. Code that does not tokenize is its own skeleton."""
    found = _split(source)
    return source if found is None else " ".join(found[0])
