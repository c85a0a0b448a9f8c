"""``python -m helpers class-record``: the instructor records this GPU's figures for a class (measure-bandwidth).

Run once on the server at the start of the class, by the instructor (or root). Under the class setting
(``ZC_CLASS_GPU_SECONDS``) every learner's long experiments are then shown from this record, labelled "measured on
this GPU at HH:MM by the instructor's run", instead of data/'s reference; short ones and the learners' own kernels
run live. The rules that keep a learner from showing others forged figures are in
:mod:`helpers.sharing.class_record`.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from typing import Any

from .. import records
from ..sharing import class_record as shared

__all__ = ["record_class", "shared_experiments", "readable_by_all"]


def shared_experiments(record: dict[str, Any], limit: float) -> list[str]:
    """The experiments a class under ``ZC_CLASS_GPU_SECONDS=limit`` is shown from ``record``: those that held the
    GPU longer than ``limit`` in its own run."""
    held = record["provenance"].get("experiment_wall_seconds", {})
    return sorted(name for name in record["experiments"] if held.get(name, 0.0) > limit)


def readable_by_all(path: Path) -> bool:
    """Whether every user can read ``path``: the file readable by others, every folder above it searchable."""
    try:
        if not os.stat(path).st_mode & 0o004:
            return False
        return all(os.stat(folder).st_mode & 0o001 for folder in path.resolve().parents)
    except OSError:
        return False


def _user() -> str:
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid {os.getuid()}"


def record_class(output: str | None = None, only: list[str] | None = None) -> tuple[Path, dict[str, Any]]:
    """Run every experiment (or ``only`` those) live, as ``python -m helpers record`` does, and save the class
    record where the class setting looks for it (or ``output``); return its path and a summary."""
    from .. import experiments
    from ..experiments.result import CLASS_SETTING, class_limit, class_record
    from ..memory import gpu
    from ..mode import require_live
    from ..platform.provenance import provenance
    from ..sharing.gpu_queue import gpu_key
    from .record import measure_into

    require_live("python -m helpers class-record")
    names = only or list(experiments.ALL)
    unknown = sorted(set(names) - set(experiments.ALL))
    if unknown:
        raise shared.ClassRecordProblem(f"Unknown experiment(s): {', '.join(unknown)}.")
    key = gpu_key()
    path = Path(output) if output else shared.record_path(key)
    limit = class_limit()
    setting = os.environ.pop(CLASS_SETTING, None)  # this run measures every experiment, whatever the class sees
    try:
        new = records.new_record(provenance(records.command_line()))
        new["provenance"][shared.MARK] = {"gpu_key": key, "by": _user(), "uid": os.getuid(),
                                          "class_gpu_seconds": limit}
        measure_into(new, names)
    finally:
        if setting is not None:
            os.environ[CLASS_SETTING] = setting
    saved = shared.save(new, path)
    checked = shared.load(saved, gpu=gpu.device_name(), board=new["provenance"].get("gpu_board"), key=key)
    summary = {"saved": str(saved), "measured_at": checked.clock(), "gpu": new["provenance"]["gpu"],
               "experiments": len(new["experiments"]), "class_gpu_seconds": limit,
               "shown_from_it": shared_experiments(new, limit) if limit is not None else None,
               "readable_by_every_user": readable_by_all(saved),
               "problem_seen_by_this_user": class_record()[1] or None}
    return saved, summary
