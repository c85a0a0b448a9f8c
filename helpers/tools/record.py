"""``python -m helpers record``: every experiment run live on this machine's GPU, into one record in data/.

The record's provenance comes first (:mod:`helpers.platform.provenance`); a progress bar with the time left
goes to stderr (:mod:`helpers.display.progress`). The file is checked before the first measurement, so a run
of minutes is never lost at the end.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .. import records
from ..display.progress import progress_bar
from ..errors import ProfilerUnavailableError

__all__ = ["record", "measure_into"]


def record(output: str | None, only: list[str] | None) -> Path:
    """Run every experiment (or ``only`` those) live and save the record; return its path."""
    from .. import experiments
    from ..experiments.result import CLASS_SETTING, class_limit
    from ..mode import require_live
    from ..platform.provenance import provenance

    records.check_can_save(output)  # a run of minutes must not be lost at the end (issue 20)
    require_live("python -m helpers record")
    if class_limit() is not None:
        raise SystemExit(f"{CLASS_SETTING} is set: some experiments would replay instead of being measured. "
                         f"Unset it (`unset {CLASS_SETTING}`) to record.")
    new = records.new_record(provenance(records.command_line()))
    names = only or list(experiments.ALL)
    unknown = sorted(set(names) - set(experiments.ALL))
    if unknown:
        raise SystemExit(f"Unknown experiment(s): {', '.join(unknown)}. Known: {', '.join(experiments.ALL)}")
    measure_into(new, names)
    return records.save_record(new, output)


def measure_into(new: records.Record, names: list[str]) -> records.Record:
    """Run the experiments ``names`` live into the record ``new`` with a progress bar; an experiment that needs
    a profiler this machine lacks is skipped. Returns ``new``, its provenance completed."""
    from .. import experiments
    from ..platform import machine_state

    elapsed = {}
    states = {}
    with progress_bar(names) as bar:
        for name in names:
            t0 = time.perf_counter()
            before = machine_state.snapshot()
            try:
                result = experiments.ALL[name]()
            except ProfilerUnavailableError as exc:  # counters need ncu; the rest of the record does not
                bar.write(f"skipped {name}: {exc}", file=sys.stderr)
                bar.done(name)
                continue
            elapsed[name] = round(time.perf_counter() - t0, 2)
            new["experiments"][name] = {"params": result.params, "rows": result.rows}
            after = machine_state.snapshot()
            states[name] = {"before": before, "after": after, "change": machine_state.change(before, after)}
            bar.write(f"recorded {name} in {elapsed[name]} s", file=sys.stderr)
            bar.done(name)
    new["provenance"]["experiment_wall_seconds"] = elapsed
    new["provenance"]["gpu_board"] = machine_state.board() or "unknown"  # a hash of the GPU's UUID
    new["provenance"]["machine_state"] = states  # what may differ between two runs (helpers/platform/machine_state.py)
    return new
