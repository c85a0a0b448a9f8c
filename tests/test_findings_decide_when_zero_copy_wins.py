"""decide-when-zero-copy-wins's findings quote the figures of the results they are given, and their words follow
those figures: on the replayed record and on changed copies of it (live, faster zero-copy)."""

from __future__ import annotations

import dataclasses

import numpy as np

from helpers import experiments
from helpers.exercises.lesson12 import first_copy_win, fitted_rates
from helpers.findings import decide_when_zero_copy_wins as found


def _scaled(result, factor, **where):
    """A copy of ``result`` whose rows matching ``where`` took ``factor`` times as long."""
    rows = [dict(r, seconds=[s * factor for s in r["seconds"]]) if all(r.get(k) == v for k, v in where.items())
            else dict(r) for r in result.rows]
    return dataclasses.replace(result, rows=rows)


def _ms(result, **where):
    return f"{float(np.median(result.one(**where)['seconds'])) * 1e3:.1f} ms"


def test_out_of_core_quotes_the_rows_and_flips_the_verdict():
    ooc = experiments.reference("out_of_core")
    said = str(found.out_of_core(ooc))
    assert f"zero-copy {_ms(ooc, method='zero_copy')}" in said
    assert "recorded on" in said and "beats zero-copy" in said          # the record: overlapped chunks ahead
    faster = _scaled(ooc, 0.5, method="zero_copy")
    said = str(found.out_of_core(faster))
    assert "zero-copy beats every chunked version" in said and f"zero-copy {_ms(faster, method='zero_copy')}" in said
    live = str(found.out_of_core(dataclasses.replace(ooc, live=True)))
    assert "measured live" in live and "recorded on" not in live


def test_crossing_quotes_the_fitted_rates():
    reuse = experiments.reference("reuse")
    link, device, zc = fitted_rates(reuse)
    said = str(found.crossing(reuse))
    assert f"{link:.1f} GB/s" in said and f"{zc:.1f} GB/s" in said and "recorded on" in said
    slower = _scaled(reuse, 2.0, method="zero_copy")
    assert f"{fitted_rates(slower)[2]:.1f} GB/s" in str(found.crossing(slower))
    assert "measured live" in str(found.crossing(dataclasses.replace(reuse, live=True)))


def test_the_decision_and_the_summary_follow_the_run():
    reuse, ooc, e2e = experiments.reference("reuse"), experiments.reference("out_of_core"), experiments.reference("end_to_end")
    attributes = {"INTEGRATED": 0}
    first = first_copy_win(reuse)
    assert f"copy once if k >= {first}" in str(found.decision_table(reuse, ooc, e2e, attributes))
    assert f"copying first won from k = {first}" in str(found.summary(reuse, ooc))
    never = _scaled(reuse, 0.01, method="zero_copy")          # zero-copy faster at every k
    assert first_copy_win(never) is None
    assert "zero-copy for every k measured" in str(found.decision_table(never, ooc, e2e, attributes))
    assert "no measured k" in str(found.summary(never, ooc))
    faster = _scaled(ooc, 0.5, method="zero_copy")
    assert "zero-copy (simplest)" in str(found.decision_table(reuse, faster, e2e, attributes))
    assert "INTEGRATED = 1" in str(found.decision_table(reuse, ooc, e2e, {"INTEGRATED": 1}))
