"""model-zero-copy-reads's exercises: the bytes the model puts on the link, and the time it predicts.

* ``link_bytes``: the learner writes ``link_bytes(addresses, size, h)``, the bytes a launch's loads put on the link
  when every distinct 128-byte line is one read carrying the span of touched sectors, plus ``h`` per read (what
  the counters show for lines no two warps share); the check compares it with :mod:`helpers.pcie_model`'s own count of CPU-backend traces.
* ``predicted_seconds``: the learner writes ``predicted_seconds(counts, model)``, the model's time formula (three
  terms); the check compares it with :meth:`helpers.pcie_model.Model.cost` for several models and traced patterns.
* ``predict_stride``: the learner writes ``predict_useful_GBps(sweep, stride)``, fitting the read-request rate on the
  stride sweep's plateau and predicting a stride it never measured; the check compares with the fitted PCIe model
  and, held out, with the measured stride 64.
* :func:`compare_prediction`: the learner's guess of the model's median error on held-out points, against the run.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from ..i18n import N_, _
from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet
from .returns import returned_none

BASE = 0x7F44_0000_0000  # a 128-byte-aligned "device" address for the patterns


# --------------------------------------------------------------------------- link_bytes
def _pattern(stride: int, offset: int, threads: int = 64, size: int = 4, repeat: int = 1,
             shuffle: bool = False) -> np.ndarray:
    addresses = BASE + (offset + np.arange(threads) * stride) * size
    addresses = np.tile(addresses, repeat)
    if shuffle:
        addresses = np.random.default_rng(11).permutation(addresses)
    return addresses.astype(np.int64)


# (what the case shows, addresses, size, h)
def _link_cases() -> list[tuple[str, np.ndarray, int, float]]:
    return [
        (_("stride 1, two warps"), _pattern(1, 0), 4, 18.0),
        ("stride 2", _pattern(2, 0), 4, 18.0),
        (_("stride 12 (48 bytes apart: sectors skipped inside a line)"), _pattern(12, 0), 4, 18.0),
        (_("stride 16 (64 bytes apart)"), _pattern(16, 0), 4, 0.0),
        (_("stride 32 (one float per line)"), _pattern(32, 0), 4, 24.0),
        ("offset 1 (misaligned)", _pattern(1, 1), 4, 18.0),
        (_("the same floats read twice, in shuffled order"), _pattern(1, 0, repeat=2, shuffle=True), 4, 18.0),
        ("float4, stride 3", _pattern(3, 0, size=16), 16, 24.0),
        ("float4, offset 1", _pattern(1, 1, size=16), 16, 18.0),
    ]


def _sectors(addresses: np.ndarray, size: int, distinct: bool = True) -> np.ndarray:
    a = np.asarray(addresses, dtype=np.int64)
    s = np.concatenate([a // 32, (a + size - 1) // 32])
    return np.unique(s) if distinct else s


def traced_link(addresses: np.ndarray, size: int) -> tuple[int, int]:
    """(span sectors, distinct lines) of the loads, counted by :mod:`helpers.pcie_model` from a CPU-backend trace."""
    from ..cpu.trace import Trace
    from ..analysis.pcie_model import _trace_counts

    counts = _trace_counts(Trace.from_addresses(np.asarray(addresses, dtype=np.uint64), size))
    return int(counts.span_sectors), int(counts.lines)


def check_link_bytes(link_bytes: Callable[..., Any]) -> Feedback:
    """model-zero-copy-reads: ``link_bytes(addresses, size, h)`` = 32 B x span sectors + h x distinct lines."""
    if is_placeholder(link_bytes):
        return _not_yet(_("define link_bytes(addresses, size, h): 32 bytes per span sector plus h per distinct "
                          "128-byte line, for loads of `size` bytes at `addresses`."))
    rows = []
    for what, addresses, size, h in _link_cases():
        got = link_bytes(addresses.copy(), size, h)
        forgot = returned_none(link_bytes, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("write the body of link_bytes (it still returns `...`): find the distinct sectors "
                              "the loads touch (byte // 32) and their lines (sector // 4); per line, span = last - "
                              "first + 1 sectors; return 32 * total span + h * number of lines."))
        try:
            got = float(got)
        except (TypeError, ValueError):
            return _hint(_("return one number of bytes; for {what} you returned {name}.").format(
                             what=what, name=type(got).__name__),
                         _("add up the bytes over all lines and return that total, a number."))
        span, lines = traced_link(addresses, size)
        touched = len(_sectors(addresses, size))
        variants = {"touched": 32 * touched + h * lines, "sectors": span + h * lines, "no_h": 32 * span,
                    "per_sector": 32 * span + h * touched, "per_load": 32 * span + h * len(addresses),
                    "useful": size * len(addresses), "useful_h": size * len(addresses) + h * lines}
        rows.append((what, addresses, size, h, got, 32 * span + h * lines, span, lines, variants))
    wrong = [r for r in rows if not math.isclose(r[4], r[5], rel_tol=1e-9, abs_tol=1e-6)]
    if wrong:
        def everywhere(name: str) -> bool:
            return all(math.isclose(r[4], r[8][name], rel_tol=1e-9, abs_tol=1e-6) for r in wrong)

        what, addresses, size, h, got, want, span, lines, _rest = wrong[0]
        if everywhere("touched"):
            return _hint(_("for {what} you counted the touched sectors, not the span. By the model of section 2, "
                           "what does a line's completion carry when the touched sectors have gaps between them?").format(
                             what=what),
                         _("a line's completion carries every sector from the first to the last touched one, gaps "
                           "included: per line, last - first + 1."))
        if everywhere("sectors"):
            return _hint(_("span is counted in sectors, and the link carries bytes: did you multiply it by 32 (the "
                           "bytes of one sector)?"), _("32 bytes per span sector, then add the overhead."))
        if everywhere("useful") or everywhere("useful_h"):
            return _hint(_("that counts the bytes the threads asked for. In which units does the link move data?"),
                         _("the link carries whole 32-byte sectors: count the sectors the loads touch, per line."))
        if everywhere("no_h"):
            return _hint(_("each read request costs h bytes beyond its data (h = {h:g} for {what}): did you add h "
                           "* lines? How many read requests does the model make?").format(h=h, what=what),
                         _("one read per distinct 128-byte line: add h for each of them."))
        if everywhere("per_sector") or everywhere("per_load"):
            return _hint(_("the overhead h is paid once per read request. How many read requests does the model "
                           "make: one per sector, per load, or per line?"),
                         _("the model makes one read request per distinct 128-byte line, so h is added once per "
                           "line."))
        if len(np.unique(addresses)) < len(addresses):
            return _hint(_("for {what} you returned {got:g} bytes: the addresses repeat and come in any order. "
                           "Does your code count each distinct sector and line once (a set), as the model's one "
                           "read per line assumes?").format(what=what, got=got),
                         _("take the distinct sectors first (a set), then their distinct lines, and compute the "
                           "spans from those."))
        return _hint(_("for {what} (size {size}, h = {h:g}) you returned {got:g} bytes. Which sectors do the loads "
                       "touch, which lines hold them, and how many sectors does each line's read carry?").format(
                         what=what, size=size, h=h, got=got),
                     _("the model counts {span} span sectors in {lines} lines there: 32 bytes per span sector plus "
                       "h per line.").format(span=span, lines=lines))
    return _correct(_("one read per distinct line, carrying the sectors from the first to the last touched one: a "
                      "stride that skips sectors inside a line still pays for them, and a misaligned warp pays one "
                      "line more. Section 3's counters show this holds for lines no two warps share; where two "
                      "warps share a line, the L2 may send two requests."))


# --------------------------------------------------------------------------- predicted_seconds
@lru_cache(maxsize=1)
def _count_cases() -> tuple[tuple[str, Any], ...]:
    from ..analysis.pcie_model import launch_counts, strided_trace

    useful = 4.0 * (1 << 22)
    cases = []
    for label, stride, offset in (("stride 1", 1, 0), ("stride 32", 32, 0), ("offset 1", 1, 1), ("stride 4", 4, 0)):
        cases.append((label, launch_counts(lambda w, s=stride, o=offset: strided_trace(s, o, warps=w), useful)))
    return tuple(cases)


def _models() -> list[Any]:
    from ..analysis.pcie_model import Model

    inf = float("inf")   # no third term: half_lines / inf is 0
    return [Model(55.0, 18.0, 6.6e8, 13e-6, half_line_rate=inf), Model(25.0, 40.0, 2.0e9, 5e-6, half_line_rate=inf),
            Model(55.0, 0.0, 1.0e8, 20e-6, half_line_rate=inf), Model(55.0, 12.0, 7.0e8, 15e-6, half_line_rate=4.0e8)]


def _variants(c: Any, m: Any) -> dict[str, float]:
    link = m.link_GBps * 1e9
    on_link = (32 * c.request_sectors + m.overhead_bytes * c.requests) / link
    requests = c.requests / m.request_rate
    halves = c.half_lines / m.half_line_rate
    return {
        "sum": on_link + requests + halves + m.launch_seconds,
        "gb": max((32 * c.request_sectors + m.overhead_bytes * c.requests) / m.link_GBps, requests, halves)
        + m.launch_seconds,
        "sectors": max((c.request_sectors + m.overhead_bytes * c.requests) / link, requests, halves) + m.launch_seconds,
        "lines": max((32 * c.span_sectors + m.overhead_bytes * c.lines) / link,
                     c.line_requests / m.request_rate, halves) + m.launch_seconds,
        "no_launch": max(on_link, requests, halves),
        "no_h": max(32 * c.request_sectors / link, requests, halves) + m.launch_seconds,
        "two_terms": max(on_link, requests) + m.launch_seconds,
        "link_only": on_link + m.launch_seconds,
        "requests_only": requests + m.launch_seconds,
    }


_VARIANT_HINTS = {   # (question, smaller step)
    "sum": (N_("you added the terms. Limits that overlap: does the time add them, or is it the largest of them, the "
               "slowest one setting the pace (an assumption of section 4)?"),
            N_("take the largest of the link, request and half-line times, then add the launch time.")),
    "gb": (N_("link_GBps is in GB/s: did you multiply it by 1e9 before dividing bytes by it?"),
           N_("bytes / (link_GBps * 1e9) is seconds; bytes / link_GBps is nanoseconds.")),
    "sectors": (N_("request_sectors counts 32-byte sectors: are the link's bytes request_sectors, or "
                   "32 * request_sectors?"), N_("the link carries 32 bytes of data per requested sector, plus the "
                   "overhead per request.")),
    "lines": (N_("that is the trace's lines and spans, before the L2 merges warps' requests. What crosses the link, "
                 "per section 3's counters?"),
              N_("the model charges counts.requests read requests and the counts.request_sectors they ask for.")),
    "no_launch": (N_("every launch pays a fixed cost too (measured with the bandwidth sweeps): did you add model.launch_seconds?"),
                  N_("add model.launch_seconds on top of the largest term.")),
    "no_h": (N_("each read request on the link also costs model.overhead_bytes. Where is that cost in your link "
                "term?"), N_("the link term's bytes are the data (32 per requested sector) plus overhead_bytes per request.")),
    "two_terms": (N_("your time has the link and request terms, and misses one that binds for this model. What else "
                     "does section 4's formula compare, counted in halves of lines?"),
                  N_("the third term is counts.half_lines / model.half_line_rate; take the largest of the three.")),
    "link_only": (N_("that is only the link time. What limits the time at large strides, where every float needs "
                     "its own request?"), N_("the request time is requests / request_rate: take the largest term.")),
    "requests_only": (N_("that is only the request time. What limits the time at stride 1, where few requests carry "
                         "many bytes?"), N_("the link time is the bytes on the link over the link rate: take the largest "
                         "term.")),
}


def check_predicted_seconds(predicted_seconds: Callable[..., Any], *, model: Any = None) -> Feedback:
    """model-zero-copy-reads: ``predicted_seconds(counts, model)`` = max(link, request, half-line time) + launch time.

    With ``model`` (the lesson's fitted one), a correct answer also reports what it predicts for strides 1 and 32."""
    if is_placeholder(predicted_seconds):
        return _not_yet(_("define predicted_seconds(counts, model): the largest of the link time, the request time "
                          "and the half-line time, plus the launch time."))
    for m in _models():
        for label, c in _count_cases():
            try:
                got = predicted_seconds(c, m)
            except (TypeError, KeyError) as exc:
                if "subscriptable" not in str(exc) and not isinstance(exc, KeyError):
                    raise
                return _hint(_("your function raised {name}: {exc}. `counts` and `model` are objects, not dicts: "
                               "read their fields as attributes.").format(name=type(exc).__name__, exc=exc),
                             _("write `counts.requests`, `counts.request_sectors`, `counts.half_lines`, "
                               "`model.link_GBps`, `model.overhead_bytes`, `model.request_rate`, "
                               "`model.half_line_rate` and `model.launch_seconds`."))
            forgot = returned_none(predicted_seconds, got)
            if forgot is not None:
                return forgot
            if is_placeholder(got):
                return _not_yet(_("write the body of predicted_seconds (it still returns `...`): compute the two "
                                  "terms of section 4's formula in seconds, and return the largest plus the launch "
                                  "time."))
            try:
                got = float(got)
            except (TypeError, ValueError):
                return _hint(_("return a time in seconds (a number); you returned {name}.").format(
                                 name=type(got).__name__),
                             _("compute the terms as numbers and return the largest plus the launch time."))
            want = m.cost(c)[0]
            if math.isclose(got, want, rel_tol=1e-6):
                continue
            for name, value in _variants(c, m).items():
                if math.isclose(got, value, rel_tol=1e-6) and not math.isclose(value, want, rel_tol=1e-6):
                    return _hint(*(_(text) for text in _VARIANT_HINTS[name]))
            return _hint(_("for {label} with link {link_GBps:g} GB/s, h = {overhead_bytes:g} B, r = "
                           "{request_rate:.3g}/s, q = {half_line_rate:.3g}/s and launch {launch_seconds:g} us you "
                           "returned {got:.4g} s. Which limits does section 4's formula compare, and in which "
                           "units is each quantity?").format(
                             label=label, link_GBps=m.link_GBps, overhead_bytes=m.overhead_bytes, request_rate=m.request_rate, half_line_rate=m.half_line_rate, launch_seconds=m.launch_seconds * 1e6, got=got),
                         _("the model gives {want:.4g} s there: the link term (bytes on the link / bytes per "
                           "second), the request term (requests / requests per second), the half-line term "
                           "(half_lines / half_line_rate), the largest of them, plus the launch time.").format(
                             want=want))
    extra = ""
    if model is not None:
        try:
            parts = []
            for label, c in _count_cases()[:2]:
                seconds = float(predicted_seconds(c, model))
                bound = {"requests": "request", "link": "link", "half_lines": "half-line"}.get(model.cost(c)[1],
                                                                                               model.cost(c)[1])
                parts.append(f"{label} {c.useful_bytes / seconds / 1e9:.2f} GB/s ({bound}-bound)")
            extra = _(" With the fitted model your function predicts ") + " and ".join(parts) + "."
        except Exception:  # noqa: BLE001
            extra = ""
    return _correct(_("limits that overlap, the slowest one sets the time: bytes on the link at stride 1, read "
                      "requests per second once every float needs its own line, halves of lines where a warp's "
                      "requests straddle the middle of a line.") + extra)


# --------------------------------------------------------------------------- the prediction of section 4
def compare_prediction(predicted: Any, check: dict[str, Any]) -> str:
    """model-zero-copy-reads: the learner's guess of the model's median |error| on held-out points, against
    ``pcie_model.check`` (or the lesson's fit, whose ``check`` it is)."""
    name = getattr(check, "name", None)
    check = getattr(check, "check", check)
    own = check.get("check_record_only", check)  # the held-out record's own points: the row the table shows for it
    try:
        measured = float(own["median_abs_error"])
        largest = float(own["max_abs_error"])
    except Exception as exc:  # noqa: BLE001
        return _("Cannot compare: the check lacks its errors ({exc}).").format(exc=exc)
    where = f"data/{name}" if name else _("the held-out record")
    run = (_("The model's median |error| on {where} ({get} points the model was not fitted on, its row in the "
             "table above): {measured:.1%} (largest {largest:.1%}).").format(
               where=where, get=own.get('points', '?'), measured=measured, largest=largest))
    floor_found = (check.get("allocation_floor") or {}).get("check record")
    floor = float(floor_found["median"]) if floor_found else None
    if floor is not None:
        run += (_(" That record's own fresh allocations disagree by {floor:.1%} (median): no model can predict a "
                  "point more closely than its allocations agree with one another.").format(floor=floor))
    note = ""
    value = None if is_placeholder(predicted) else predicted
    if value is not None:
        try:
            value = float(value)
            if not math.isfinite(value) or value < 0:
                note, value = _("{predicted!r} is not an error (a fraction >= 0). ").format(predicted=predicted), None
            elif 1 < value <= 100:
                note, value = _("(read {value:g} as {value:g} %) ").format(value=value), value / 100
        except (TypeError, ValueError):
            note, value = _("`{predicted!r}` is not a number. ").format(predicted=predicted), None
    if value is None:
        lead = note + (_("Write a fraction such as 0.2. ") if note else
                       _("You made no prediction (predicted_median_error is still `...`). "))
        return lead + run
    if value > 1.5 * measured:
        why = (_("The model's median error came out smaller than you guessed: counting lines, spans and requests "
                 "from the trace captures most of what stride and offset do (section 5 says where it still misses "
                 "its targets)."))
    elif value < measured / 1.5:
        why = (_("You expected a closer fit than the model achieved") +
               (_("; part of the gap is the allocations' own disagreement ({floor:.1%})").format(floor=floor) if floor is not None else "") +
               _(", the rest is what requests and their sectors do not explain (section 5 shows where)."))
    else:
        why = _("Close: within a factor 1.5 of the run.")
    return f"{note}You predicted {value:.1%}. {run} {why}"


# --------------------------------------------------------------------------- predict_stride: the request limit
NEW_STRIDES = (40, 96, 128)   # strides the sweeps never measured, each float on a 128-byte line of its own
PLATEAU = 32                  # floats per 128-byte line: from this stride on, one read request per float


def _zero_copy(sweep: Any) -> list[dict[str, Any]]:
    return [row for row in sweep.rows if row.get("memory", "zero_copy") == "zero_copy"]


def _plateau_GBps(sweep: Any) -> list[float]:
    """Useful GB/s at the sweep's strides of a line or more (4 useful bytes per read request)."""
    return [4.0 * row["count"] / float(np.median(row["seconds"])) / 1e9 for row in _zero_copy(sweep)
            if row["stride"] >= PLATEAU]


def _scaled(sweep: Any, k: float) -> Any:
    """The sweep with every repeat ``k`` times as long (the same GPU at a ``k`` times lower rate)."""
    from dataclasses import replace

    rows = [{**row, "seconds": [k * s for s in row["seconds"]],
             **({"useful_GBps": row["useful_GBps"] / k} if "useful_GBps" in row else {})} for row in sweep.rows]
    return replace(sweep, rows=rows)


def _without(sweep: Any, strides: tuple[int, ...]) -> Any:
    from dataclasses import replace

    return replace(sweep, rows=[row for row in sweep.rows if row["stride"] not in strides])


def _fitted_model() -> Any:
    """The PCIe model fitted on the reference record, its note in the chosen language."""
    from .. import i18n

    return _fitted_model_in(i18n.language())


# What limits a modelled point (pcie_model.Model.cost's terms), as the check's sentence names it.
BOUND_NAMES = {"link": N_("link"), "requests": N_("request"), "half_lines": N_("half-line"), "writes": N_("write")}


@lru_cache(maxsize=2)
def _fitted_model_in(language: str) -> Any:
    from .. import records
    from ..analysis import pcie_model

    from dataclasses import replace

    (fit_record, path), _others = pcie_model.choose_records(records.matching_records())
    model = pcie_model.calibrate(fit_record)
    return replace(model, calibrated_on=_("fitted on the {sweeps} sweep of {record}").format(
        sweeps=_(pcie_model.SWEEP_NAMES["stride"]), record=f"data/{path.name}"))


def _model_GBps(model: Any, stride: int) -> tuple[float, str]:
    from ..analysis.pcie_model import pattern_counts

    prediction = model.predict(pattern_counts("read_strided", stride, 0, 4.0 * (1 << 24), model.race))
    return prediction.useful_GBps, prediction.bound


def check_predict_stride(predict: Callable[..., Any], *, sweep: Any = None, model: Any = None) -> Feedback:
    """model-zero-copy-reads: ``predict(sweep, stride)``, the useful GB/s at a stride of a line or more that the sweep
    did not measure, from the read-request rate its plateau shows. Judged on behaviour: within the sweep's own
    plateau, and following the sweep when every repeat takes twice as long. The message puts the prediction beside
    the PCIe model's (``model``, or :mod:`helpers.pcie_model` fitted as the lesson fits it) and, held out, beside
    the measured stride 64."""
    if is_placeholder(predict):
        return _not_yet(_("define predict_useful_GBps(sweep, stride): fit the read requests per second on the "
                          "points of the sweep where you can count the requests, and return useful GB/s at "
                          "`stride`."))
    if sweep is None:
        from ..experiments.result import reference

        sweep = reference("stride")
    plateau = _plateau_GBps(sweep)
    low, high = min(plateau), max(plateau)
    first = 4.0 * next(r["count"] / float(np.median(r["seconds"])) for r in _zero_copy(sweep) if r["stride"] == 1) / 1e9
    got: dict[int, float] = {}
    for stride in NEW_STRIDES:
        try:
            value = predict(sweep, stride)
        except (AttributeError, TypeError) as exc:
            if not isinstance(exc, AttributeError) and "indices" not in str(exc):
                raise
            return _hint(_('your function raised {name}: {exc}. The rows of `sweep.select(memory="zero_copy")` are '
                           "dicts: read their fields by key.").format(name=type(exc).__name__, exc=exc),
                         _('write `row["stride"]`, `row["count"]` and `row["seconds"]` (a list of every repeat\'s '
                           "seconds; take its median)."))
        forgot = returned_none(predict, value)
        if forgot is not None:
            return forgot
        if is_placeholder(value):
            return _not_yet(_("write the body of predict_useful_GBps (it still returns `...`): choose the sweep's "
                              "rows where every float needs a read request of its own, compute requests per second "
                              "there, and turn that into useful GB/s."))
        try:
            got[stride] = float(value)
        except (TypeError, ValueError):
            return _hint(_("return one number, useful GB/s; for stride {stride} you returned {name}.").format(
                             stride=stride, name=type(value).__name__),
                         _("compute the rate as a number and return it."))
    middle = float(np.median(plateau))
    stride = NEW_STRIDES[-1]
    g = got[stride]
    if not low * 0.9 <= g <= high * 1.1:
        ratio = g / middle
        if 0.5e9 < ratio < 2e9:
            return _hint(_("for stride {stride} you returned {g:.3g}: is that bytes per second or GB/s?").format(
                             stride=stride, g=g),
                         _("a GB/s is 1e9 bytes per second: divide by 1e9."))
        if 0.18 < ratio < 0.32:
            return _hint(_("for stride {stride} you returned {g:.3g}: that looks like read requests per second (in "
                           "G/s). How many useful bytes does each request bring back to the thread?").format(
                             stride=stride, g=g),
                         _("one float, 4 bytes: useful GB/s = 4 x requests per second / 1e9."))
        if 4 < ratio < 48:
            return _hint(_("for stride {stride} you returned {g:.3g} GB/s. Useful bytes are the bytes a thread "
                           "asked for: of the sector or line each request brings, how many bytes does the kernel "
                           "use?").format(stride=stride, g=g),
                         _("one 4-byte float per request: useful GB/s = 4 x requests per second / 1e9."))
        scales = got[NEW_STRIDES[0]] / got[stride]
        if abs(scales - stride / NEW_STRIDES[0]) < 0.1 * stride / NEW_STRIDES[0]:
            return _hint(_("your prediction falls as 1/stride ({value:.3g} GB/s at stride {value2}, {g:.3g} at "
                           "{stride}). Look at the sweep's strides 32, 48 and 64: does the useful GB/s still fall "
                           "there? What is left for a request to carry once every float has a line of its own?").format(
                             value=got[NEW_STRIDES[0]], value2=NEW_STRIDES[0], g=g, stride=stride),
                         _("from stride 32 on, every float is one request: the rate of requests, not the bytes on "
                           "the link, sets the time, and the stride no longer matters."))
        if abs(g / first - 1) < 0.2:
            return _hint(_("your prediction for stride {stride} is close to the sweep's stride 1. Which limit sets "
                           "the time at stride 1, and which one at the strides you are predicting?").format(
                             stride=stride),
                         _("fit on the sweep's points of stride 32 or more, where each float is its own request."))
        return _hint(_("for stride {stride} you returned {g:.3g} GB/s, outside what the sweep's points of one "
                       "float per line show. On which of the sweep's points can you count one read request per "
                       "float?").format(stride=stride, g=g),
                     _("those of stride 32 or more (a 128-byte line holds 32 floats); there, requests per second = "
                       "floats read (count) / seconds."))
    if any(not low * 0.9 <= v <= high * 1.1 for v in got.values()):
        odd = next(s for s, v in got.items() if not low * 0.9 <= v <= high * 1.1)
        return _hint(_("stride {stride} is right, stride {odd} is not ({value:.3g} GB/s). Do strides of 32 floats "
                       "or more differ in the requests each float needs?").format(
                         stride=stride, odd=odd, value=got[odd]),
                     _("each float is one request at any stride of 32 or more: the prediction is the same for all."))
    slower = float(predict(_scaled(sweep, 2.0), stride))
    if not math.isclose(slower, g / 2, rel_tol=0.02):
        return _hint(_("given the same sweep with every repeat twice as long, your function returned {slower:.3g} "
                       "GB/s instead of about half of {g:.3g}. Does it fit the sweep it is given, or a number?").format(
                         slower=slower, g=g),
                     _("compute the rate from sweep's rows (count and seconds, or useful_GBps), not from figures "
                       "typed in."))
    m = model if model is not None else _fitted_model()
    modelled, bound = _model_GBps(m, stride)
    said = (_("the sweep ({value}) gives {g:.3f} G read requests/s, {g2:.2f} useful GB/s at strides {join}. The "
              "PCIe model fitted by helpers/analysis/pcie_model.py ({value2}) predicts {modelled:.2f} GB/s there "
              "({replace}-bound, r = {request_rate:.3f} G/s); yours differs by {g3:+.0%}, as far as two runs of "
              "the sweep may (section 5).").format(
                value=_("live") if sweep.live else _("recorded"), g=g / 4, g2=g, join=', '.join(map(str, NEW_STRIDES)), value2=re.split(r' \(|（', m.calibrated_on)[0], modelled=modelled, replace=_(BOUND_NAMES.get(bound, bound)), request_rate=m.request_rate / 1e9, g3=g / modelled - 1))
    held = _without(sweep, (64,))
    measured = [r for r in _zero_copy(sweep) if r["stride"] == 64]
    if measured and len(_plateau_GBps(held)) >= 1:
        pred64 = float(predict(held, 64))
        meas64 = 4.0 * measured[0]["count"] / float(np.median(measured[0]["seconds"])) / 1e9
        said += (_(" Held out: fitted without stride 64, your function predicts {pred64:.2f} GB/s there; the sweep "
                   "measured {meas64:.2f} ({pred642:+.1%}).").format(
                     pred64=pred64, meas64=meas64, pred642=pred64 / meas64 - 1))
    return _correct(_("once every float has a 128-byte line of its own, each float is one read request, so the "
                      "useful rate is 4 bytes x requests per second whatever the stride: ") + said)


CHECKS = {"link_bytes": check_link_bytes, "predicted_seconds": check_predicted_seconds,
          "predict_stride": check_predict_stride}
