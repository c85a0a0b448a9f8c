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


def test_out_of_core_quotes_the_rows_and_flips_the_verdict(monkeypatch):
    ooc = experiments.reference("out_of_core")
    said = str(found.out_of_core(ooc))
    assert f"zero-copy {_ms(ooc, method='zero_copy')}" in said and "recorded on" in said
    chunked = {(r["method"], r["budget_bytes"]): np.median(r["seconds"]) for r in ooc.rows if r["method"] != "zero_copy"}
    apart = found.ways_apart(ooc, min(chunked, key=chunked.get))
    assert ("not told apart by the course's rule" in said) == (not apart)
    monkeypatch.setattr(found, "ways_apart", lambda ooc, best: True)   # made up: every record agreeing
    assert "beats zero-copy" in str(found.out_of_core(ooc)) or "zero-copy beats" in str(found.out_of_core(ooc))
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
    strided = experiments.read_once_strided()
    attributes = {"INTEGRATED": 0}
    first = first_copy_win(reuse)
    assert f"copy once if k >= {first}" in str(found.decision_table(reuse, ooc, e2e, attributes, strided))
    assert f"copying first won from k = {first}" in str(found.summary(reuse, ooc, strided))
    never = _scaled(reuse, 0.01, method="zero_copy")          # zero-copy faster at every k
    assert first_copy_win(never) is None
    assert "zero-copy for every k measured" in str(found.decision_table(never, ooc, e2e, attributes, strided))
    assert "no measured k" in str(found.summary(never, ooc, strided))
    faster = _scaled(ooc, 0.5, method="zero_copy")
    assert "zero-copy (simplest)" in str(found.decision_table(reuse, faster, e2e, attributes, strided))
    assert "INTEGRATED = 1" in str(found.decision_table(reuse, ooc, e2e, {"INTEGRATED": 1}, strided))


def _strided_sweep(zero_copy_ms, copy_ms=5.0, live=True, allocations=None):
    """A read_once_strided result with the given zero-copy medians by stride and a flat copy-then-read time."""
    rows = []
    for i, (s, zero) in enumerate(zero_copy_ms.items()):
        n = (256 << 20) // (4 * s)
        for method, ms in (("copy_then_read", copy_ms), ("zero_copy", zero)):
            row = {"method": method, "stride": s, "count": n, "nbytes": 256 << 20,
                   "seconds": [ms * 1e-3 * f for f in (0.99, 1.0, 1.01)], "useful_GBps": n * 4 / (ms * 1e-3) / 1e9}
            if allocations is not None:
                row["allocation_seconds"] = [ms * 1e-3 * f for f in allocations[method][i]]
            rows.append(row)
    return experiments.Result("read_once_strided", {"nbytes": 256 << 20}, rows, live, {"gpu": "Test GPU"})


def test_sparse_finds_the_crossing_and_quotes_the_rows():
    sweep = _strided_sweep({1: 5.3, 8: 5.2, 16: 4.0, 32: 3.0})
    said = str(found.sparse(sweep))
    assert "zero-copy was faster from stride 16 on" in said and "measured live on Test GPU" in said
    cap = sweep.one(method="copy_then_read", stride=32)["useful_GBps"]
    assert f"stride 32 it delivered {cap:.2f} GB/s" in said
    never = _strided_sweep({1: 9.0, 8: 9.0, 16: 9.0, 32: 9.0})
    assert "copy-then-read was faster at every stride" in str(found.sparse(never))
    table = str(found.decision_table(experiments.reference("reuse"), experiments.reference("out_of_core"),
                                     experiments.reference("end_to_end"), {"INTEGRATED": 0}, sweep))
    assert "zero-copy from stride 16 on" in table and "copy-then-read was faster below stride 16" in table
    assert "zero-copy won at no stride measured" in str(found.decision_table(
        experiments.reference("reuse"), experiments.reference("out_of_core"), experiments.reference("end_to_end"),
        {"INTEGRATED": 0}, never))


def test_sparse_says_where_allocations_disagree():
    flat = [(1.0, 1.0, 1.0)] * 4
    zero = [(1.0, 1.0, 1.0), (1.0, 1.0, 1.0), (0.9, 1.5, 0.9), (1.0, 1.0, 1.0)]  # allocation 1 crosses later
    sweep = _strided_sweep({1: 5.3, 8: 5.2, 16: 4.8, 32: 3.0}, allocations={"copy_then_read": flat, "zero_copy": zero})
    assert "on each of the 3 allocations alone, from stride 16 / 32" in str(found.sparse(sweep))


def test_replayed_sparse_is_the_record_or_a_labelled_model(reference, replay):
    strided = experiments.read_once_strided()
    said = str(found.sparse(strided))
    if "read_once_strided" in reference[0]["experiments"]:
        assert "recorded on" in said and "MODELLED" not in said
    else:
        assert "MODELLED" in said and "not measured" in said
        rate = max(r["GBps"] for r in experiments.reference("memcpy").select(direction="htod", host_memory="pinned",
                                                                             nbytes=256 << 20))
        assert f"({rate:.1f} GB/s)" in said


def test_dependent_lookups_compare_with_copying_from_the_record():
    chase = found.dependent_loads(levels=20)
    latency = experiments.reference("latency").one(memory="zero_copy", cpu_cache="evicted")["load_ns"]
    assert abs(chase["zero_copy_s"] - 20 * latency * 1e-9) < 1e-12
    gib = experiments.reference("memcpy").one(direction="htod", host_memory="pinned", nbytes=1 << 30)["GBps"]
    assert abs(chase["copy_s"] - (1 << 30) / (gib * 1e9)) < 1e-9
    strided = experiments.read_once_strided()
    table = found.decision_table(experiments.reference("reuse"), experiments.reference("out_of_core"),
                                 experiments.reference("end_to_end"), {"INTEGRATED": 0}, strided)
    (situation, choose, evidence), = [row for row in table.rows if "levels of a tree" in row[0]]
    assert f"{chase['zero_copy_s'] * 1e6:.0f} us of zero-copy loads against {chase['copy_s'] * 1e3:.1f} ms" in evidence
    assert choose == ("zero-copy" if chase["zero_copy_s"] < chase["copy_s"] else "copy")
    many = [row for row in table.rows if row[0].startswith("Many dependent loads")][0]
    assert f"{found._two_digits(chase['break_even_loads']):,.0f} dependent loads" in many[2]
