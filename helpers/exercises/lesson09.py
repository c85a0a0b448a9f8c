"""Lesson 09's exercise: make a strided zero-copy kernel read whole sectors (helpers.coalescing_exercise)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet


def check_coalesce(source: str) -> Feedback:
    """Lesson 09: :func:`helpers.coalescing_exercise.check_fix`, as a :class:`Feedback`."""
    from .. import coalescing_exercise as ex

    if is_placeholder(source) or source == ex.BROKEN_SOURCE:
        return _not_yet("rewrite the index arithmetic of copy_matrix so that consecutive threads read consecutive "
                        "floats.")
    result = ex.check_fix(source)
    return Feedback("correct" if result.passed else "hint", result.message)


CHECKS = {"coalesce": check_coalesce}
