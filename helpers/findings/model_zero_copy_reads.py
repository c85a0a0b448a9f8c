"""model-zero-copy-reads: the sentences that quote the run's figures, computed from its results (no figure typed).

``sweep`` (section 1), ``counters`` and ``counts`` (section 3), ``fit`` (section 4), ``spread`` and ``errors``
(section 5), ``seen`` (what you saw); going deeper: ``records_table``, ``counts_table``, ``header``, ``tags``. Live or recorded is said from each result's
``live``, never from the mode.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from ..lessons import lesson as _lesson
from ..analysis import pcie_model
from ..experiments.result import Result
from ..platform import machine_state
from ..i18n import _
from . import computed_from
from ..tables import Table, Text, bullets, join

TAGS_10_BIT = 768   # outstanding reads a requester may have with 10-bit tags (PCIe 4.0 on, sect. 2.2.6.2)


def _source(result: Any) -> str:
    return _("live") if getattr(result, "live", False) else _("recorded")


def _zero_copy_GBps(stride: Result, s: int) -> float:
    return float(stride.one(memory="zero_copy", stride=s)["useful_GBps"])


def sweep(stride: Result) -> Any:
    """The zero-copy stride sweep the model has to explain: its table and the fall from stride 1 to stride 32."""
    first, far = _zero_copy_GBps(stride, 1), _zero_copy_GBps(stride, 32)
    said = Text(_("Zero-copy useful bandwidth ({source}): stride 1 {first:.1f} GB/s, stride 32 {far:.2f} GB/s, "
                  "{first2:.1f}x slower.").format(source=_source(stride), first=first, far=far, first2=first / far))
    return join(Text(f"**{stride.describe()}**"), stride.table(["stride", "useful_GBps"], memory="zero_copy"), said)


# ---------------------------------------------------------------------- section 3: the counters
def counters() -> Result:
    """The counters of the sweeps' launches: Nsight Compute live, the recorded ones where it cannot count (no ncu
    here, or no permission to read the GPU's counters; in replay they are the record's anyway)."""
    from .. import experiments
    from ..errors import ProfilerUnavailableError

    try:
        return experiments.counters()
    except ProfilerUnavailableError as exc:
        found = experiments.reference("counters")
        found.replay_reason = _("Nsight Compute could not count on this machine ({exc}).").format(exc=exc)
        return found


@dataclass
class Counted:
    """The trace's counts against the counters: the fitted race, every launch compared, the summary."""

    counters: Result

    @cached_property
    def race(self) -> pcie_model.Race:
        return pcie_model.fit_race(self.counters)

    @cached_property
    def compared(self) -> list[pcie_model.CountRow]:
        return pcie_model.compare_counts(self.counters, self.race)

    @cached_property
    def summary(self) -> dict[str, Any]:
        return pcie_model.counts_summary(self.compared)

    @cached_property
    def header(self) -> float:
        return pcie_model.header_table(self.counters)[1]


def counts(counters: Result) -> Any:
    """Section 3: the race fitted on the counters, how close the trace's counts come, what the counters show per
    line, and the bytes each completion carries beyond its data."""
    c = Counted(counters)
    worst = max(c.summary["max_abs_requests_error"], c.summary["max_abs_bytes_error"])
    fit = Text(_("{describe} Fitted on these counters: the lower warp's request comes first in {lower_first:.0%} "
                 "of shared lines; {refetch:.0%} of partly merged requests ask for their whole span again. "
                 "Predicted against counted, every launch: within {worst:.1%} (the target: {COUNT_TARGET:.0%}).").format(
                   describe=counters.describe(), lower_first=c.race.lower_first, refetch=c.race.refetch, worst=worst, COUNT_TARGET=pcie_model.COUNT_TARGET))
    header = Text(_("Every completion carries {header:.1f} bytes beyond its data: the 12-byte header of the "
                    "specification").format(header=c.header) + (_(", and nothing else.") if abs(c.header - 12) < 0.5 else
                                     _(" and {header:+.1f} bytes more.").format(header=c.header - 12)))
    return join(fit, Text(pcie_model.read_counts(c.compared)), header)


def counts_table(counters: Result) -> Table:
    """Going deeper: per launch, counted against predicted, per 128-byte line."""
    c = Counted(counters)
    head, rows = pcie_model.counts_table(c.compared)
    return Table(head, rows, caption=f"*{len(rows)} profiled launches ({_source(counters)})*")


# ---------------------------------------------------------------------- sections 4 and 5: the time model
@dataclass
class Fit:
    """The model fitted on one record's stride sweep and checked on every point it was not fitted on."""

    model: pcie_model.Model
    check: dict[str, Any]
    name: str                          # the held-out record shown (a quiet one where there is one)
    checks: dict[str, dict[str, Any]]
    comparison: list[pcie_model.Row]   # the model against that record's points
    # per held-out record: what its snapshots say of the GPU and the VM (machine_state.summary; None before kept)
    states: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    fit_name: str = ""                 # the record the model was fitted on (its file in data/)

    @property
    def predicted(self) -> dict[int, float]:
        """Predicted useful GB/s per stride (the counts per useful byte do not depend on the record)."""
        return {r.stride: r.predicted_GBps for r in self.comparison if r.kind == "stride"}

    def _repr_markdown_(self) -> str:
        fitted = (_(" Fitted on data/{fit_name}, chosen among the committed H200 records as the oldest with quiet "
                    "sweeps, counters and fresh allocations.").format(fit_name=self.fit_name) if self.fit_name else "")
        shown = join(Text(_("**The model:** {model}.{fitted}").format(model=self.model.describe(), fitted=fitted)), held_out_table(self.checks))
        return shown._repr_markdown_()

    def __str__(self) -> str:
        return _("model: {describe}; held out: data/{name}").format(describe=self.model.describe(), name=self.name)


def _judged(check: dict[str, Any]) -> dict[str, Any]:
    """A held-out record's own points and their verdict (pcie_model.check's ``check_record_only``)."""
    return check.get("check_record_only", check)


def held_out_table(checks: dict[str, dict[str, Any]]) -> Table:
    """Section 4: one row per quiet held-out record, its points alone: the errors, and the floor it is judged
    against (its allocations' spread, or the fixed targets for a record timed on one allocation)."""
    rows = []
    with_floor = {n: c for n, c in checks.items() if c["quiet"]["check record"]
                  and (c.get("allocation_floor") or {}).get("check record")}
    others = sum(1 for c in checks.values() if c["quiet"]["check record"]) - len(with_floor)
    for name, c in (with_floor or {n: c for n, c in checks.items() if c["quiet"]["check record"]}).items():
        own = _judged(c)
        floor = (c.get("allocation_floor") or {}).get("check record")
        beyond = own.get("points_beyond_floor")
        rows.append((name, own["points"], f"{own['median_abs_error']:.1%}", f"{own['max_abs_error']:.1%}",
                     _("one allocation: fixed 10 %") if floor is None else
                     _("{count} allocations: {median:.1%} / {largest:.1%}").format(
                         count=floor["allocations"], median=floor["median"], largest=floor["max"]),
                     "-" if beyond is None else str(len(beyond)), _("yes") if own["meets_targets"] else _("no")))
    return Table([_("held out: record"), _("points"), _("median error"), _("largest error"),
                  _("floor: allocations' spread (median / largest)"),
                  _("points beyond floor + {FLOOR_MARGIN:.0%}").format(FLOOR_MARGIN=pcie_model.FLOOR_MARGIN),
                  _("meets targets?")], rows,
                 caption=(_("*Records timed over fresh allocations; the {others} earlier quiet ones (one "
                            "allocation a point) and the runs' own disagreement: Going deeper.*").format(
                              others=others)) if with_floor and others else
                 _("*Quiet records; every record, with the runs' own disagreement: Going deeper.*"))


def fit() -> Fit:
    """Calibrate on the oldest quiet H200 record with counters (``pcie_model.calibrate``: its stride sweep only) and
    check on every other record (``pcie_model.check``), as ``python -m helpers model`` does."""
    from .. import records

    (fit_record, fit_path), others = pcie_model.choose_records(records.matching_records())
    model = pcie_model.calibrate(fit_record)
    checks = {path.name: pcie_model.check(fit_record, rec) for rec, path in others} or \
        {fit_path.name: pcie_model.check(fit_record, fit_record, allow_same=True)}  # one H200 record only
    # shown: the newest record timed in rounds, else the first quiet one, else the first
    name = next((n for n, c in reversed(checks.items()) if c.get("timed_in_rounds", {}).get("check record")),
                next((n for n, c in checks.items() if c["quiet"]["check record"]), next(iter(checks))))
    record = next((rec for rec, path in others if path.name == name), fit_record)
    states = {path.name: machine_state.summary(rec["provenance"]) for rec, path in others}
    return Fit(model, checks[name], name, checks, pcie_model.compare_with_record(record, model), states,
               fit_path.name)


@dataclass(frozen=True)
class Spread:
    """One record's zero-copy sweep points, each allocation's rate against the point's median, and what bounds each
    point in the model: the floor of section 5, as a figure and its sentence."""

    name: str
    points: list[tuple[str, str, list[float]]]   # (label, bound, each allocation's rate / the point's rate - 1)
    floor: dict[str, Any] | None

    @property
    def source(self) -> str:
        """Where the points come from, as the figure's title says it."""
        return f"data/{self.name}"

    def _repr_markdown_(self) -> str:
        return spread_sentence(self)._repr_markdown_()


def spread(fit: Fit) -> Spread:
    """Section 5: the shown held-out record's allocations, point by point (pcie_model.allocation_floor)."""
    from .. import records

    record = next((rec for rec, path in records.matching_records() if path.name == fit.name), None)
    floor = pcie_model.allocation_floor(record) if record else None
    if record is None or floor is None:
        return Spread(fit.name, [], None)
    per = pcie_model._allocation_seconds(record, ("stride", "offset"))
    points = []
    for p in pcie_model.sweep_points(record, ("stride", "offset")):
        seconds = per[(p.kind, p.kernel, p.stride, p.offset)]
        bound = fit.model.cost(pcie_model._counts(p, fit.model.race))[1]
        label = f"stride {p.stride}" if p.kind == "stride" else f"offset {p.offset}"
        points.append((label, "link" if bound == "link" else "requests",
                       [float(np.median(seconds) / t - 1) for t in seconds]))
    return Spread(fit.name, points, pcie_model.public_floor(floor))


def spread_sentence(found: Spread) -> Text:
    """What the figure of section 5 shows, computed: how far allocations disagree at link- and request-bound points."""
    if not found.points:
        return Text(_("data/{name} was timed on one allocation a point: it shows no allocation spread (records "
                      "from nvidia-h200-2026-12-04-11 on are timed on three).").format(name=found.name))
    widths = {kind: [max(d) - min(d) for label, b, d in found.points if b == kind] for kind in ("link", "requests")}
    said = [(_("link-bound points: allocations within {median:.1%} of one another (median), {max_w:.1%} at most")
             if kind == "link" else
             _("request-bound points: allocations within {median:.1%} of one another (median), {max_w:.1%} at "
               "most")).format(median=np.median(w), max_w=max(w)) for kind, w in widths.items() if w]
    return Text(_("In data/{name}, {allocations} fresh allocations a point: ").format(
                    name=found.name, allocations=found.floor['allocations']) + "; ".join(said) + ".")


def errors(fit: Fit) -> Text:
    """Section 5: the model's errors on the shown held-out record, judged against that record's own floor."""
    own = _judged(fit.check)
    floor = (fit.check.get("allocation_floor") or {}).get("check record")
    lines = [_("On data/{name}, a record the model was not fitted on ({points} points: its stride, offset and "
               "vector-width sweeps): median error {median_abs_error:.1%}, largest {max_abs_error:.1%}.").format(
                 name=fit.name, points=own['points'], median_abs_error=own['median_abs_error'], max_abs_error=own['max_abs_error'])]
    if floor is None:
        lines.append(_("That record was timed on one allocation a point, so it has no floor of its own: it is "
                       "judged against fixed targets (median {TARGET_MEDIAN:.0%}, largest {TARGET:.0%}): the model "
                       "{verdict}.").format(
                         TARGET_MEDIAN=pcie_model.TARGET_MEDIAN, TARGET=pcie_model.TARGET, verdict=_verdict(own)))
    else:
        beyond = own.get("points_beyond_floor") or []
        lines.append(_("Its {allocations} allocations disagree by {median:.1%} (median over the points) and up to "
                       "{max:.1%} ({worst}). The targets: median error at most {TARGET_MEDIAN:.0%}, and no point "
                       "further from the model than its allocations are from one another plus {FLOOR_MARGIN:.0%}.").format(
                         allocations=floor['allocations'], median=floor['median'], max=floor['max'], worst=floor['worst'], TARGET_MEDIAN=pcie_model.TARGET_MEDIAN, FLOOR_MARGIN=pcie_model.FLOOR_MARGIN))
        lines.append(_("The model meets both.") if own["meets_targets"] else
                     _("The median target is {value}; {n_beyond} of {points} points lie beyond their floor: "
                       "{compact}.").format(
                         value=_("met") if own['median_abs_error'] <= pcie_model.TARGET_MEDIAN else _("missed"), n_beyond=len(beyond), points=own['points'], compact=pcie_model.compact(beyond)))
        same = ((fit.check.get("noise_floor") or {}).get("same_counts") or {}).get("check record") or {}
        if same.get("max_abs_error", 0) > pcie_model.FLOOR_MARGIN:
            lines.append(_("Within data/{name} alone, points with the same counts ({join}) differ so much that any "
                           "model of the counts misses one of them by {max_abs_error:.1%}: counts do not set those "
                           "points' level.").format(
                             name=fit.name, join=', '.join(same['group']), max_abs_error=same['max_abs_error']))
        apart = _apart(fit)
        if apart:
            lines.append(_("At {n_apart} of {points} points ({compact}) every allocation of data/{name} lies more "
                           "than {FLOOR_MARGIN:.0%} from every allocation of data/{fit_name}, the fit record: "
                           "there the level moved between the two device calls by more than any fresh allocation "
                           "moved it, so no model fitted on one call can meet the other's floor target there.").format(
                             n_apart=len(apart), points=own['points'], compact=pcie_model.compact(apart), name=fit.name, FLOOR_MARGIN=pcie_model.FLOOR_MARGIN, fit_name=fit.fit_name))
    counted = [n for n, c in fit.checks.items() if c["quiet"]["check record"]
               and (c.get("allocation_floor") or {}).get("check record")]
    if counted:
        met = [n for n in counted if _judged(fit.checks[n])["meets_targets"]]
        lines.append(_("Held-out records timed over several allocations: {n_counted}; the model meets the targets "
                       "on {n_met}").format(n_counted=len(counted), n_met=len(met)) + (" ({})".format(_names(met)) if met else "") + _("."))
    return bullets(lines)


def _apart(fit: Fit) -> list[str]:
    """The points at which the shown record's allocations and the fit record's do not overlap."""
    from .. import records

    found = {path.name: rec for rec, path in records.matching_records()}
    if fit.name not in found or fit.fit_name not in found or fit.name == fit.fit_name:
        return []
    return pcie_model.allocations_apart(found[fit.fit_name], found[fit.name])


def records_table(fit: Fit) -> Any:
    """Going deeper: every held-out record, the runs' own disagreement, the request-bound levels, the machine's
    states (pcie_model.check_table and :func:`levels`)."""
    return join(pcie_model.check_table(fit.checks), bullets(levels(fit)))


def _names(names: list[str]) -> str:
    """Record files as section 5 writes them: ``nvidia-h200-2026-12-04-5.json`` as ``-04-5``."""
    return ", ".join(n.removeprefix("nvidia-h200-2026-12").removesuffix(".json") for n in names)


def levels(fit: Fit) -> list[str]:
    """Section 5: how the quiet held-out records' link-bound and request-bound points compare with the fit record's
    (pcie_model.level_groups), where the model meets its targets, and what the records' machine states say."""
    groups = pcie_model.level_groups(fit.checks)
    same, other = groups["same"], groups["other"]
    names = same["records"] + other["records"]
    if not names:
        return []
    ratios = dict(zip(names, same["ratios"] + other["ratios"]))
    low, high = min(ratios, key=ratios.__getitem__), max(ratios, key=ratios.__getitem__)
    tol = pcie_model.LEVEL_TOLERANCE
    lines = [_("Link-bound points agree with the fit record's within {link:.1%} in every quiet held-out record; "
               "request-bound points do not: their median against the fit record's runs from {value:+.1%} "
               "({names}) to {value2:+.1%} ({names2}).").format(
                 link=groups['link'], value=ratios[low] - 1, names=_names([low]), value2=ratios[high] - 1, names2=_names([high])),
             (_("The model meets its targets (each record's own floor where it has one, else the fixed ones: the "
                "last column of section 4's table) on {n_meets} of the {n_records} records whose request-bound "
                "points sit within {tol:.0%} of the fit record's ({names})").format(
                  n_meets=len(same['meets']), n_records=len(same['records']), tol=tol, names=_names(same['records']))
              if same["records"] else
              _("No held-out record's request-bound points sit within {tol:.0%} of the fit record's").format(tol=tol))
             + ((_(", and on {n_meets} of the {n_records} further away ({names}): there the records' own points "
                   "differ from the fit record's by about as much as the model's errors, which no model fitted on "
                   "one run can remove.") if same["records"] else
                 _("; the model meets its targets on {n_meets} of the {n_records} further away ({names}): there the "
                   "records' own points differ from the fit record's by about as much as the model's errors, which "
                   "no model fitted on one run can remove.")).format(
                    n_meets=len(other['meets']), n_records=len(other['records']), names=_names(other['records']))
                if other["records"] else _("."))]
    kept = {n: st for n, st in fit.states.items() if st}
    if kept:
        keys = ("sm_clock_MHz", "memory_clock_MHz", "clock_event_reasons", "pcie_link")
        alike = all(st[k] == next(iter(kept.values()))[k] for st in kept.values() for k in keys)
        first = next(iter(kept.values()))
        in_both = any(n in same["records"] for n in kept) and any(n in other["records"] for n in kept)
        reasons = (_("no clock-event reason") if first["clock_event_reasons"] == [0]
                   else _("clock-event reasons {clock_event_reasons}").format(
                            clock_event_reasons=first['clock_event_reasons']))
        said = (_("{value} MHz SM and {value2} MHz memory clocks, {reasons}, PCIe {join}").format(
                    value=first['sm_clock_MHz'][0], value2=first['memory_clock_MHz'][0], reasons=reasons, join=', '.join(first['pcie_link'])) if alike else _("GPU states that differ"))
        steal = max(st["steal_share"] for st in kept.values())
        replays = sum(st["pcie_replays"] for st in kept.values())
        boards = sorted({st["board"] for st in kept.values() if st.get("board")})
        on = (_(" They ran on {n_boards} different GPUs (a hash of each GPU's UUID: {join}). The board does not "
                "explain the levels: records timed on fresh allocations on one board in one call spread their "
                "request-bound points allocation by allocation (section 5).").format(
                  n_boards=len(boards), join=', '.join(boards)) if len(boards) > 1 else "")
        lines.append(_("The records that keep the machine's state around their sweeps ({names}) show {said}, "
                       "{replays} new PCIe replays and at most {steal:.2%} of CPU time stolen by the hypervisor").format(
                         names=_names(list(kept)), said=said, replays=replays, steal=steal)
                     + (_("; none of these differ between the records near the fit record's level and those "
                          "further away.") if alike and in_both else ".") + on)
    return lines


def _verdict(check: dict[str, Any]) -> str:
    median = check["median_abs_error"] <= pcie_model.TARGET_MEDIAN
    largest = check["max_abs_error"] <= pcie_model.TARGET
    if median and largest:
        return "meets both"
    if not (median or largest):
        return "misses both"
    return _("meets the median target and misses the largest") if median else _("meets the largest and misses the median")


def yours(stride: Result, fit: Fit) -> Text:
    """The model against the stride sweep of this notebook: a live one is a test on a run it never saw."""
    if not stride.live:
        return Text(_("The stride sweep above is recorded: the held-out check of section 4 already judged the "
                      "model on a second recorded run of the same GPU."))
    mine = {"experiments": {"stride": {"params": stride.params, "rows": stride.rows}}}
    errs = np.array([abs(r.rel_error) for r in pcie_model.compare_with_record(mine, fit.model)])
    return Text(_("The H200-calibrated model against your {gpu}'s live stride sweep: median |error| {median:.1%}, "
                  "largest {max:.1%}.").format(gpu=stride.gpu, median=np.median(errs), max=errs.max()))


# ---------------------------------------------------------------------- what limits r (going deeper)
def tags(fit: Fit, latency: Result) -> Text:
    """Little's law with a dependent load's latency, beside the 768 tags of 10-bit tagging."""
    r = fit.model.request_rate
    load_ns = float(latency.select(memory="zero_copy")[0]["load_ns"])
    in_flight = r * load_ns * 1e-9
    hold_ns = TAGS_10_BIT / r * 1e9
    above = in_flight > TAGS_10_BIT
    fitted = _(" (fitted on data/{name})").format(name=fit.fit_name) if fit.fit_name else ""
    text = (_("r = {r:.3f} G requests/s{fitted} and a dependent zero-copy load's latency of {load_ns:,.0f} ns "
              "({source}, {label}) give r x latency = {in_flight:,.0f} requests in flight, if every request held "
              "its tag for a load's whole round trip. {TAGS_10_BIT} tags at this rate would each be held "
              "{hold_ns:,.0f} ns. ").format(
                r=r / 1e9, fitted=fitted, load_ns=load_ns, source=_source(latency), label=_lesson('measure-latency').label, in_flight=in_flight, TAGS_10_BIT=TAGS_10_BIT, hold_ns=hold_ns))
    if above:
        return Text(text + _("The {in_flight:,.0f} exceed the {TAGS_10_BIT} tags, and that does not refute a tag "
                             "limit: a tag is held only from the request leaving the GPU's PCIe interface to its "
                             "completion coming back, while the load's latency also counts the path inside the GPU "
                             "(SM, L2, PCIe interface and back). If the tags set r, each is held {hold_ns:,.0f} ns "
                             "and that path takes the other {load_ns:,.0f} ns of the {load_ns2:,.0f}.").format(
                               in_flight=in_flight, TAGS_10_BIT=TAGS_10_BIT, hold_ns=hold_ns, load_ns=load_ns - hold_ns, load_ns2=load_ns))
    return Text(text + _("The {in_flight:,.0f} stay below the {TAGS_10_BIT} tags: even holding a tag for a load's "
                         "whole round trip, the requests in flight would not use them all, so something else "
                         "limits r here.").format(in_flight=in_flight, TAGS_10_BIT=TAGS_10_BIT))


def header(fit: Fit, counters: Result) -> Any:
    """Going deeper: the bytes per completion beyond its data, per stride, and the fitted h beside them."""
    shown, counted = pcie_model.header_table(counters)
    return join(shown, Text(pcie_model.explain_h(fit.model, counted)))


# ---------------------------------------------------------------------- what you saw
def seen(stride: Result, counters: Result, fit: Fit) -> Text:
    """The lesson's figures, computed from this run."""
    c = Counted(counters)
    aligned = [r.counted_requests / r.lines for r in c.compared if r.offset_floats % 32 == 0]
    shared = max(r.counted_requests / r.lines for r in c.compared)
    worst = max(c.summary["max_abs_requests_error"], c.summary["max_abs_bytes_error"])
    own = fit.check.get("check_record_only", fit.check)
    m = fit.model
    third = (_(", q = {rate:.2f} G halves/s").format(rate=m.half_line_rate / 1e9) if m.half_line_rate > 0 else "")
    return bullets([
        _("Data from: {source}").format(source=stride.describe()),
        _("Counters ({source}): {min_aligned:.3f}-{max_aligned:.3f} PCIe read requests per line for aligned reads, "
          "up to {shared:.2f} when warps share a line; {header:.1f} B of header per completion; the trace's counts "
          "within {worst:.1%} of every launch.").format(
            source=_source(counters), min_aligned=min(aligned), max_aligned=max(aligned), shared=shared, header=c.header, worst=worst),
        _("Time model (h = {overhead_bytes:.0f} B, r = {request_rate:.2f} G/s{third}) on data/{name} alone: median "
          "error {median_abs_error:.1%}, largest {max_abs_error:.1%} ({value} sweeps).").format(
            overhead_bytes=m.overhead_bytes, request_rate=m.request_rate / 1e9, third=third, name=fit.name, median_abs_error=own['median_abs_error'], max_abs_error=own['max_abs_error'],
            value=_("quiet") if fit.check['quiet']['check record'] else _("not quiet"))], head=computed_from(stride))
