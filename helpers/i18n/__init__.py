"""The course's languages: English, the source, and the Chinese edition (zh_CN) built from it (issue 35).

A learner chooses the language once: the Chinese notebooks' first cell says ``zc.start(language="zh")``, and
``ZC_LANG=zh`` in the environment (``make lab ZC_LANG=zh``) chooses it for a whole Jupyter server. Python strings
shown to learners are marked ``_("...")`` (figures go in with ``.format`` after the lookup, so both languages carry
the same numbers) and looked up in ``helpers/locale/zh_CN/LC_MESSAGES/helpers.po``; a string without a current
translation shows in English, and the tests fail on it (tests/test_i18n_strings.py). start-here's exercises are the
first module so marked.

Below the runtime, :mod:`.edition` says which lessons are translated, :mod:`.catalogs` keeps the lessons' catalogs
in step with the English notebooks, :mod:`.notebooks` builds the Chinese notebooks, :mod:`.strings` the Python
strings' catalog, :mod:`.fonts` gives matplotlib a CJK font, :mod:`.glossary` checks the terms.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from .. import paths

__all__ = ["ENGLISH", "CHINESE", "LANGUAGES", "language", "use_language", "gettext", "_", "N_", "STRINGS_CATALOG",
           "sentences", "series"]

ENGLISH, CHINESE = "en", "zh_CN"
# What a learner may type -> the locale the catalogs are filed under.
LANGUAGES = {"en": ENGLISH, "english": ENGLISH, "zh": CHINESE, "zh_cn": CHINESE, "zh-cn": CHINESE, "chinese": CHINESE}
STRINGS_CATALOG = paths.PACKAGE / "locale" / CHINESE / "LC_MESSAGES" / "helpers.po"

_chosen: str | None = None


def _normalise(name: str) -> str:
    try:
        return LANGUAGES[name.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown language {name!r}: use one of 'en', 'zh'") from None


def language() -> str:
    """The language chosen (:func:`use_language`), else ``$ZC_LANG``, else English."""
    if _chosen is not None:
        return _chosen
    return _normalise(os.environ.get("ZC_LANG") or ENGLISH)


def use_language(name: str) -> str:
    """Choose the language of what helpers show from now on ("en" or "zh"); returns the locale chosen. In
    Chinese, figures get a CJK font (:func:`helpers.i18n.fonts.use_cjk_font`)."""
    global _chosen
    _chosen = _normalise(name)
    if _chosen == CHINESE:
        from .fonts import use_cjk_font

        use_cjk_font()
    return _chosen


@lru_cache(maxsize=None)
def translations(catalog: Path = STRINGS_CATALOG) -> dict[str, str]:
    """English -> Chinese for every translated, current (not fuzzy) entry of a catalog ({} if there is none)."""
    if not catalog.exists():
        return {}
    import polib

    return {e.msgid: e.msgstr for e in polib.pofile(str(catalog)) if e.msgstr and not e.fuzzy and not e.obsolete}


def gettext(message: str) -> str:
    """``message`` in the chosen language: its translation when there is a current one, else the English."""
    if language() == ENGLISH:
        return message
    return translations().get(message, message)


_ = gettext


def N_(message: str) -> str:
    """Marks a string for the catalog where it is defined; :func:`gettext` translates it where it is shown."""
    return message


# Full-width punctuation that ends a Chinese sentence or clause: no space follows it (issue 35).
FULL_WIDTH_ENDS = "。？！：；，、）"


def sentences(*parts: str) -> str:
    """Sentences joined as the chosen language joins them: a space between them in English, none after full-width
    punctuation in Chinese (every lesson's hints and findings; start-here first)."""
    joined = ""
    for part in (p for p in parts if p):
        if not joined:
            joined = part
        elif language() == CHINESE and joined.rstrip(" ")[-1:] in FULL_WIDTH_ENDS:
            joined = joined.rstrip(" ") + part.lstrip(" ")
        else:
            joined += " " + part
    return joined


def series(items: Iterable[str]) -> str:
    """Words listed as the chosen language lists them: ``a, b, c`` in English, ``a、b、c`` in Chinese
    (write-your-first-zero-copy-kernel's outcomes)."""
    return ("、" if language() == CHINESE else ", ").join(items)
