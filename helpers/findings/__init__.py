"""Per lesson, the sentences that quote measured figures: computed from the results as Markdown
(:class:`helpers.tables.Text`), so the text beside a figure agrees with it live and in replay.

One module per lesson, named by its slug with underscores (``helpers.findings.measure_bandwidth``); reach it as
``zc.findings.measure_bandwidth``. A lesson shows what a function returns as the cell's last expression.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType
from typing import Any

from ..i18n import _


def computed_from(result: Any) -> str:
    """The head of a lesson's "What you saw" list: where its figures come from, "this run" only when it ran live
    (start-here, measure-bandwidth, map-pages-on-the-gpu and every lesson with a "What you saw")."""
    if getattr(result, "live", False):
        return _("Computed from this run:")
    if getattr(result, "class_record", None):
        return _("Computed from the instructor's run:")
    return _("Computed from the record (replay):")


def __getattr__(name: str) -> ModuleType:
    """``helpers.findings.<slug>``: the lesson's module, imported on first use."""
    if name.startswith("_") or name not in {m.name for m in pkgutil.iter_modules(__path__)}:
        raise AttributeError(f"module 'helpers.findings' has no attribute {name!r}")
    module = importlib.import_module(f"{__name__}.{name}")
    globals()[name] = module
    return module
