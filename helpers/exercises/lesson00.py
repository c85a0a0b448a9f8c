"""start-here's exercise: read the attribute table, and say how large the GPU's L2 cache is in MiB.

The check compares the learner's value with the session's ``L2_CACHE_SIZE`` (live: this GPU's; replay: the recorded
one's), so it needs no GPU; a typical wrong answer (bytes, KiB, GiB, or MB of 10^6 bytes) gets a hint about units.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

from . import Feedback, correct, hint, is_placeholder, not_yet


def _attributes() -> dict[str, int]:
    """The GPU's attributes as the session has them (``zc.session().attributes``): live from the driver, in replay
    from the reference record."""
    from ..mode import detect

    if detect().live:
        from ..memory import gpu

        return gpu.device_attributes()
    from .. import records

    return dict(records.reference_record()[0]["provenance"]["attributes"])


def namespace() -> dict[str, Any]:
    """The exercise cell reads ``course.attributes`` (the session's, in the notebook); tests get the same values."""
    return {"course": SimpleNamespace(attributes=_attributes())}


def check_my_l2_mib(my_l2_mib: Any, attributes: dict[str, int] | None = None) -> Feedback:
    """start-here: ``my_l2_mib`` is the L2 cache's size in MiB, computed from the attribute ``L2_CACHE_SIZE``."""
    if is_placeholder(my_l2_mib):
        return not_yet("replace ... with an expression that gives the L2 cache's size in MiB, from "
                       "course.attributes[\"L2_CACHE_SIZE\"].")
    if attributes is None:
        attributes = _attributes()
    size = attributes["L2_CACHE_SIZE"]
    try:
        got = float(my_l2_mib)
    except (TypeError, ValueError):
        return hint(f"my_l2_mib is {my_l2_mib!r}: make it a number, the size in MiB.",
                    "start from course.attributes[\"L2_CACHE_SIZE\"], a number of bytes, and convert it.")

    def near(value: float) -> bool:
        return math.isclose(got, value, rel_tol=1e-6)

    if near(size / 2**20):
        return correct(f"the L2 holds {size / 2**20:g} MiB ({size:,} bytes), shared by every SM. A bandwidth "
                       "buffer must be many times that (the course's sweeps use 256 MiB and more), or repeated "
                       "passes over device memory read the cache, not the memory behind it.")
    if near(size):
        return hint("that is the attribute itself, in bytes. Which unit does the exercise ask for?",
                    "a MiB is 1024 KiB and a KiB is 1024 bytes: how many times do you divide by 1024?")
    if near(size / 1e6) or near(size / 1e3):
        return hint("close, but that counts in powers of ten (MB or kB). A MiB (mebibyte) is a power of two: which "
                    "one?", "a MiB is 1024 KiB and a KiB is 1024 bytes: divide by 1024, then by 1024 again.")
    if near(size / 2**10):
        return hint("that is KiB (kibibytes): one step short. How many KiB make a MiB?",
                    "divide by 1024 once more.")
    if near(size / 2**30):
        return hint("that is GiB (gibibytes): one step too far. How many MiB make a GiB?",
                    "divide the bytes by 1024 twice, not three times.")
    return hint(f"{got:g} is not the L2 size in MiB. Which attribute holds the L2 size, and in which unit?",
                "read L2_CACHE_SIZE in the table (it is in bytes) and convert bytes to MiB.")


CHECKS = {"my_l2_mib": check_my_l2_mib}
