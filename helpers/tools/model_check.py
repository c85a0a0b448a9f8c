"""``python -m helpers model``: the PCIe model fitted on one record's sweeps, checked on the others.

A model checked on the data it was fitted on proves little, so by default it is fitted on the oldest H200
record with quiet sweeps, counters and sweeps timed over fresh allocations, and checked on every other H200 record
(:mod:`helpers.analysis.pcie_model`); each check reports the floor it is judged against (its allocations' spread).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import records

__all__ = ["model"]


def model(fit: str | None, check: list[str] | str | None, allow_same: bool) -> dict[str, Any]:
    """The ``model`` command's JSON: fit file, held-out errors on each check file, the fitted parameters.

    The top-level errors are those of the first quiet check record timed over fresh allocations (else the first quiet
    one, else the first),
    together with the fit record's other sweeps; ``checks`` lists every check file with the errors on
    its own points alone, its counts against its counters, and its quiet label."""
    from ..analysis import pcie_model

    checks = [check] if isinstance(check, str) else list(check or [])
    if fit is None or not checks:
        found = records.matching_records()
        if not found:
            records.reference_record()  # raises the RecordError that says how to restore data/
        fit_path = Path(fit) if fit else pcie_model.choose_records(found)[0][1]
        check_paths = [Path(c) for c in checks] or [p for _, p in found if p.resolve() != fit_path.resolve()] \
            or [found[-1][1]]
    else:
        fit_path, check_paths = Path(fit), [Path(c) for c in checks]
    for check_path in check_paths:
        if fit_path.resolve() == check_path.resolve() and not allow_same:
            raise pcie_model.ModelError(
                f"the model would be fitted and checked on the same file, {fit_path}"
                + (" (data/ holds only one H200 record)" if fit is None and not checks else "")
                + ": a model checked on the data it was fitted on proves little. Record a second run on an H200 with "
                "`python -m helpers record`, pass --fit FILE and --check FILE, or --allow-same to compare anyway.")
    fit_record = records.load_record(fit_path)
    results = [pcie_model.check(fit_record, records.load_record(c), allow_same=allow_same) for c in check_paths]
    quiet = [i for i, r in enumerate(results) if r["quiet"]["check record"]]
    floored = [i for i in quiet if (results[i].get("allocation_floor") or {}).get("check record")]
    head = (floored or quiet or [0])[0]  # the first record judged against its own allocations, else the first quiet
    summary = []
    for c, r in zip(check_paths, results):
        own = r.get("check_record_only", r)  # that record's points alone (a same-run check: its held-out sweeps)
        summary.append({"check_file": str(c), "quiet": r["quiet"]["check record"], "points": own["points"],
                        "median_abs_error": own["median_abs_error"], "max_abs_error": own["max_abs_error"],
                        "meets_targets": own["meets_targets"] if "meets_targets" in own else r["meets_targets"],
                        # the floor it is judged against: its allocations' spread (None: one allocation a point)
                        "allocation_floor": (r.get("allocation_floor") or {}).get("check record"),
                        "judged_by": own.get("judged_by"), "points_beyond_floor": own.get("points_beyond_floor"),
                        "counts": r["counts"].get("check record"), "run_to_run": r["run_to_run"]})
    # the targets are stated against a record's own allocations: records that carry them decide; without any, the
    # quiet ones (judged against the fixed targets)
    deciding = [s for s in summary if s["quiet"] and s["allocation_floor"]] or [s for s in summary if s["quiet"]] \
        or summary
    return {"fit_file": str(fit_path), "check_file": str(check_paths[head]), **results[head],
            "checks": summary, "all_quiet_checks_meet_targets": all(s["meets_targets"] for s in deciding)}
