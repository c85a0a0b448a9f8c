"""helpers.findings.model_zero_copy_reads: the figures it quotes are the rows' own, on the replayed results and on
changed copies of them, and its words follow the results (live/recorded, above/below the tags)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from helpers import experiments
from helpers.findings import model_zero_copy_reads as findings


@pytest.fixture(scope="module")
def stride():
    return experiments.reference("stride")


@pytest.fixture(scope="module")
def fit():
    return findings.fit()


def _scaled(result, k):
    rows = [{**r, "useful_GBps": r["useful_GBps"] * k} for r in result.rows]
    return replace(result, rows=rows)


@pytest.mark.parametrize("k", [1.0, 0.5, 3.0])
def test_sweep_quotes_the_rows(stride, k):
    changed = _scaled(stride, k)
    text = findings.sweep(changed)._repr_markdown_()
    first = changed.one(memory="zero_copy", stride=1)["useful_GBps"]
    far = changed.one(memory="zero_copy", stride=32)["useful_GBps"]
    assert f"stride 1 {first:.1f} GB/s" in text and f"stride 32 {far:.2f} GB/s" in text
    assert f"{first / far:.1f}x slower" in text


def test_sweep_says_live_or_recorded_from_the_result(stride):
    assert "(recorded)" in findings.sweep(stride)._repr_markdown_()
    assert "(live)" in findings.sweep(replace(stride, live=True))._repr_markdown_()


def test_counts_quote_the_fitted_race_and_the_header():
    counters = experiments.reference("counters")
    counted = findings.Counted(counters)
    text = str(findings.counts(counters))
    assert f"{counted.race.lower_first:.0%} of shared lines" in text
    assert f"{counted.header:.1f} bytes beyond its data" in text


def test_errors_quote_the_held_out_record_and_judge_it_against_its_own_floor(fit):
    own = fit.check.get("check_record_only", fit.check)
    text = str(findings.errors(fit))
    assert f"median error {own['median_abs_error']:.1%}" in text and f"largest {own['max_abs_error']:.1%}" in text
    assert f"data/{fit.name}" in text and f"{own['points']} points" in text
    floor = {"allocations": 3, "points": own["points"], "median": 0.012, "max": 0.05, "worst": "stride 64"}
    with_floor = dict(fit.check, allocation_floor={"fit record": None, "check record": floor})
    met = dict(with_floor, check_record_only=dict(own, meets_targets=True, points_beyond_floor=[]))
    assert "disagree by 1.2% (median over the points) and up to 5.0% (stride 64)" in str(findings.errors(
        replace(fit, check=met)))
    assert "The model meets both." in str(findings.errors(replace(fit, check=met)))
    missed = dict(with_floor, check_record_only=dict(own, median_abs_error=0.04, meets_targets=False,
                                                     points_beyond_floor=["stride 32"]))
    said = str(findings.errors(replace(fit, check=missed)))
    assert "The median target is met; 1 of" in said and "beyond their floor: stride 32." in said
    # a record timed on one allocation has no floor of its own: the fixed targets judge it
    one = dict(fit.check, allocation_floor={"fit record": None, "check record": None})
    good = dict(one, check_record_only=dict(own, median_abs_error=0.01, max_abs_error=0.02))
    assert "meets both" in str(findings.errors(replace(fit, check=good)))
    bad = dict(one, check_record_only=dict(own, median_abs_error=0.2, max_abs_error=0.3))
    assert "misses both" in str(findings.errors(replace(fit, check=bad)))


def test_spread_shows_each_allocation_and_names_link_and_request_bound_points(fit):
    found = findings.spread(fit)
    if not found.points:
        assert "one allocation a point" in found._repr_markdown_()
        return
    assert {bound for _, bound, _ in found.points} == {"link", "requests"}
    assert all(len(d) == found.floor["allocations"] for _, _, d in found.points)
    text = found._repr_markdown_()
    assert "link-bound points: allocations within" in text and "request-bound points" in text
    from helpers.display import plots

    assert len(plots.allocation_spread(found.points, found.source).axes[0].get_xticks()) == len(found.points)


def test_tags_quote_littles_law_and_flip_above_and_below(fit):
    latency = experiments.reference("latency")
    load_ns = latency.select(memory="zero_copy")[0]["load_ns"]
    r = fit.model.request_rate
    text = str(findings.tags(fit, latency))
    assert f"{r * load_ns * 1e-9:,.0f} requests in flight" in text
    assert f"held {768 / r * 1e9:,.0f} ns" in text
    assert ("exceed the 768 tags" in text) == (r * load_ns * 1e-9 > 768)
    slow = replace(fit, model=replace(fit.model, request_rate=r / 4))
    assert "stay below the 768 tags" in str(findings.tags(slow, latency))
    fast = replace(fit, model=replace(fit.model, request_rate=r * 4))
    assert "exceed the 768 tags" in str(findings.tags(fast, latency))
    live = replace(latency, live=True)
    assert "(live, lesson 07)" in str(findings.tags(fit, live))


def test_yours_says_recorded_or_compares_a_live_sweep(stride, fit):
    assert "recorded" in str(findings.yours(stride, fit))
    live = replace(stride, live=True)
    text = str(findings.yours(live, fit))
    assert "live stride sweep" in text and "median |error|" in text


def test_seen_quotes_the_model(stride, fit):
    counters = experiments.reference("counters")
    text = str(findings.seen(stride, counters, fit))
    assert f"r = {fit.model.request_rate / 1e9:.2f} G/s" in text and "Counters (recorded)" in text
    assert np.isfinite(fit.model.half_line_rate)


def test_levels_quote_the_groups_and_the_machine_state(fit):
    from helpers.analysis import pcie_model

    groups = pcie_model.level_groups(fit.checks)
    text = " ".join(findings.levels(fit))
    ratios = groups["same"]["ratios"] + groups["other"]["ratios"]
    assert f"within {groups['link']:.1%} in every quiet held-out record" in text and "(-04-" in text
    assert f"runs from {min(ratios) - 1:+.1%}" in text and f"to {max(ratios) - 1:+.1%}" in text
    assert "meets its targets" in text
    assert f"on {len(groups['same']['meets'])} of the {len(groups['same']['records'])} records" in text
    if groups["other"]["records"]:
        assert f"on {len(groups['other']['meets'])} of the {len(groups['other']['records'])} further away" in text
    kept = [n for n, st in fit.states.items() if st]
    if kept:
        first = fit.states[kept[0]]
        assert f"{first['sm_clock_MHz'][0]} MHz SM" in text
        # a machine state that differs between records is not called the same
        changed = {**fit.states, kept[0]: {**fit.states[kept[0]], "sm_clock_MHz": [1]}}
        assert "GPU states that differ" in " ".join(findings.levels(replace(fit, states=changed)))
    assert findings.levels(replace(fit, checks={})) == []
    boards = {st["board"] for st in fit.states.values() if st and st.get("board")}
    assert (f"ran on {len(boards)} different GPUs" in text) == (len(boards) > 1)


@pytest.mark.parametrize("ratios, said", [((0.91, 0.94), "from -9.0% (r0) to -6.0% (r1)"),
                                          ((1.05, 1.08), "from +5.0% (r0) to +8.0% (r1)")])
def test_levels_quote_the_lowest_and_highest_request_bound_level(fit, ratios, said):
    def made_up(ratio):
        return {"levels": {"request_bound": {"points": 30, "median_ratio": ratio, "max_abs_difference": 0.1},
                           "link_bound": {"points": 10, "median_ratio": 1.0, "max_abs_difference": 0.004},
                           "same_level": False},
                "quiet": {"check record": True}, "meets_targets": False}
    checks = {f"r{i}.json": made_up(r) for i, r in enumerate(ratios)}
    text = " ".join(findings.levels(replace(fit, checks=checks, states={})))
    assert said in text and "within 0.4%" in text and "on 0 of the 2 further away (r0, r1)" in text
    assert "No held-out record's request-bound points sit within 3%" in text and "0 of the 0" not in text


def test_errors_say_where_the_shown_record_moved_beyond_the_fit_records_allocations(fit):
    from helpers.analysis import pcie_model

    apart = findings._apart(fit)
    text = str(findings.errors(fit))
    assert (f"At {len(apart)} of" in text) == bool(apart)
    if apart:
        assert pcie_model.compact(apart) in text and f"data/{fit.fit_name}" in text
