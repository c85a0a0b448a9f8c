"""How a prediction was typed: one of a few words (the English keyword the lesson names, or the Chinese edition's word
for it: write-your-first-zero-copy-kernel, measure-latency), or a share typed as a percentage."""

from __future__ import annotations

from typing import Any

# The Chinese edition's word for each keyword, as its lessons gloss them: "runs"（照常运行）.
CHINESE_WORDS = {
    "照常运行": "runs", "被拒绝": "refused", "垃圾地址": "garbage",
    "更快": "faster", "一样": "same", "更慢": "slower",
}


def chosen(predicted: Any, choices: tuple[str, ...]) -> str | None:
    """The keyword ``predicted`` names among ``choices`` (case, spaces and quotes aside; a Chinese word counts as
    its keyword), or None when it names none."""
    if not isinstance(predicted, str):
        return None
    said = predicted.strip().strip("\"'“”‘’「」").strip().lower()
    said = CHINESE_WORDS.get(said, said)
    return said if said in choices else None


def as_share(value: float, above: float = 1.5) -> tuple[float, str]:
    """A share typed as a percentage (74 for 74 %, any value past ``above`` up to 100) as the fraction it means, with
    the note that says how it was read; any other value as given, with no note (keep-enough-bytes-in-flight,
    coalesce-and-align-accesses, take-zero-copy-beyond-one-pcie-gpu)."""
    from ..i18n import _

    if above < value <= 100:
        return value / 100, _("(read {x:g} as {x:g} %, i.e. {fraction:g}) ").format(x=value, fraction=value / 100)
    return value, ""
