"""coalesce-and-align-accesses's exercises: count the sectors a warp touches; make a strided zero-copy kernel read
whole sectors.

* ``sectors_per_warp``: the learner writes ``sectors_per_warp(stride, offset, width)``; the check compares it with
  the CPU backend's trace of the same warp (:func:`helpers.sector_explorer.warp_pattern`).
* ``coalesce``: the learner fixes ``copy_matrix`` (:mod:`helpers.coalescing_exercise`); the check traces it on the
  CPU backend (correct copy, fewer sectors), catches a missing bounds check with a matrix that does not fill the
  last block, and live also runs it on the GPU over mapped memory.
* :func:`compare_prediction`: the learner's guess of stride 32's useful bandwidth as a fraction of stride 1's,
  against the run (the ``predict`` cell of section 4).
"""

from __future__ import annotations

import math
import re
from typing import Any, Callable

import numpy as np

from ..i18n import _, sentences
from . import (Feedback, bounds_hint, fenced, live_module, correct as _correct, hint as _hint, is_placeholder,
               not_yet as _not_yet, quoted)
from .choices import as_share
from .returns import returned_none

SECTOR, LINE = 32, 128

# --------------------------------------------------------------------------- sectors_per_warp
# (stride, offset, width): width in floats (1 float, 2 float2, 4 float4), stride and offset in elements of that width
SECTOR_CASES = ((1, 0, 1), (2, 0, 1), (4, 0, 1), (8, 0, 1), (16, 0, 1), (32, 0, 1), (3, 0, 1), (1, 1, 1), (1, 8, 1),
                (1, 16, 1), (3, 5, 1), (12, 0, 1), (1, 0, 4), (2, 0, 4), (1, 1, 4), (3, 5, 4), (1, 3, 2))


def traced_sectors(stride: int, offset: int, width: int = 1) -> int:
    """Distinct sectors of one warp's load, from the CPU backend's trace (the sector explorer's pattern)."""
    from ..analysis.sector_explorer import warp_pattern

    return int(warp_pattern(stride, offset, width).sectors)


def _span_sectors(stride: int, offset: int, width: int) -> int:
    """A typical wrong answer: every sector from the warp's first byte to its last, gaps included."""
    size = 4 * width
    first, last = offset * size, (offset + 31 * stride) * size + size - 1
    return last // SECTOR - first // SECTOR + 1


def _slipped(stride: int, offset: int, width: int, size: int, span: int, unit: int = SECTOR) -> int:
    """Typical wrong answers: thread t's first byte (offset + t * stride) * size, its last byte span on (the right
    answer has size 4 * width, span 4 * width - 1, unit 32), counted in units of ``unit`` bytes."""
    first = (offset + np.arange(32) * stride) * size
    return len(set((first // unit).tolist()) | set(((first + span) // unit).tolist()))


def _slips(cases: list[tuple[int, int, int]]) -> dict[str, list[np.ndarray]]:
    """What each typical slip returns on ``cases``: 128-byte lines; the last byte one too far; element numbers as
    bytes (the x4 missing, or the element number alone; with width elements as bytes too it equals lines); one
    sector per thread."""
    return {"lines": [np.array([_slipped(s, o, w, 4 * w, 4 * w - 1, LINE) for s, o, w in cases])],
            "past": [np.array([_slipped(s, o, w, 4 * w, 4 * w) for s, o, w in cases])],
            "elements": [np.array([_slipped(s, o, w, w, 4 * w - 1) for s, o, w in cases]),
                         np.array([_slipped(s, o, w, 1, 4 * w - 1) for s, o, w in cases]),
                         # the element number alone divided by 32: (offset + t * stride) // 32
                         np.array([_slipped(s, o, w, 1, 0) for s, o, w in cases])],
            "per_thread": [np.full(len(cases), 32)]}


def _mentions_lines(function: Callable[..., Any]) -> bool | None:
    """Whether the learner's code divides by a line's 128 bytes (None if its source cannot be read): lines and
    element numbers taken as bytes give the same counts on every input, so only the code tells them apart."""
    import inspect

    try:
        code = inspect.getsource(function)
    except (OSError, TypeError):
        return None
    return bool(re.search(r"\b128\b", re.sub(r"#[^\n]*", "", code)))


def check_sectors_per_warp(sectors_per_warp: Callable[..., Any]) -> Feedback:
    """coalesce-and-align-accesses: ``sectors_per_warp(stride, offset, width=1)`` counts the distinct 32-byte
    sectors of one warp's load."""
    if is_placeholder(sectors_per_warp):
        return _not_yet(_("define sectors_per_warp(stride, offset, width=1): the number of distinct 32-byte "
                          "sectors touched when thread t (0..31) reads 4 * width bytes at element offset + t * "
                          "stride."))
    got_all, want_all = [], []
    for stride, offset, width in SECTOR_CASES:
        got = sectors_per_warp(stride, offset, width)
        forgot = returned_none(sectors_per_warp, got)
        if forgot is not None:
            return forgot
        if is_placeholder(got):
            return _not_yet(_("write the body of sectors_per_warp (it still returns `...`): each thread's first "
                              "byte is (offset + t * stride) * 4 * width, its last byte 4 * width - 1 further; their "
                              "sectors are byte // 32; return how many distinct sectors the 32 threads touch."))
        if isinstance(got, (float, np.floating)) and not float(got).is_integer():
            return _hint(_("for stride {stride}, offset {offset} you returned {got}, not a whole number: a sector "
                           "is touched or not. Which division gives the sector a byte falls in?").format(
                stride=stride, offset=offset, got=repr(got)),
                         _("use integer division `//` to find the sector of a byte, and count sectors, not "
                           "fractions."))
        if not isinstance(got, (int, np.integer, float, np.floating)):
            return _hint(_("return a number (how many sectors); for stride {stride}, offset {offset} you returned "
                           "{type}.").format(stride=stride, offset=offset, type=type(got).__name__),
                         _("return the count of distinct sectors, len(...) of them, not the sectors themselves."))
        got_all.append(int(got))
        want_all.append(traced_sectors(stride, offset, width))
    got_a, want_a = np.array(got_all), np.array(want_all)
    if np.array_equal(got_a, want_a):
        return _correct(_("each thread's bytes fall in the sector `byte // 32`, and the warp moves every distinct "
                          "sector it touches, whole: 4 sectors (128 bytes) for 128 useful bytes at stride 1, 32 "
                          "sectors (1024 bytes) for the same 128 useful bytes at stride 8 and above."))
    cases = list(SECTOR_CASES)
    first_bad = int(np.flatnonzero(got_a != want_a)[0])
    stride, offset, width = cases[first_bad]
    if np.array_equal(got_a, SECTOR * want_a):
        return _hint(_("you returned bytes, 32 times the sectors. What does the function count?"),
                     _("count the sectors: a sector is 32 bytes, so do not multiply the count by 32."))
    useful = np.array([32 * 4 * w for _, _, w in cases])
    if np.array_equal(got_a, useful) or np.array_equal(got_a, useful // SECTOR):
        return _hint(_("that is what the threads asked for (useful bytes, or their size in sectors), whatever the "
                       "stride. Does the stride change which sectors the addresses fall in?"),
                     _("compute each thread's byte address from its element index, then count the sectors those "
                       "bytes actually fall in."))
    aligned = np.array([traced_sectors(s, 0, w) for s, _, w in cases])
    if np.array_equal(got_a, aligned):
        return _hint(_("right when the warp starts on a line, wrong for offset {offset}: add the offset to every "
                       "thread's element index. What does a misaligned start do to the sectors (draw it: "
                       "zc.sector_explorer.draw_warp(1, 1))?").format(offset=offset),
                     _("thread t reads element offset + t * stride: use the offset in every thread's address; a "
                       "misaligned start touches one sector more."))
    span = np.array([_span_sectors(*c) for c in cases])
    if np.array_equal(got_a, span) or np.array_equal(got_a, span - 1):
        return _hint(_("you counted every sector from the warp's first byte to its last. At stride {stride}, are "
                       "the sectors between the threads fetched too?").format(stride=stride),
                     _("the threads skip sectors, which are not fetched: count only the distinct sectors that some "
                       "thread's bytes fall in."))
    floats = np.array([traced_sectors(s, o, 1) for s, o, _ in cases])
    if np.array_equal(got_a, floats):
        return _hint(_("right for float, wrong for width {width}. A thread reads 4 * width bytes: in which unit "
                       "do stride and offset count?").format(width=width),
                     _("stride and offset count elements of 4 * width bytes (a float4 element is 16 bytes): scale "
                       "the element index by that size, and the last byte is that many bytes on, less one."))
    if np.array_equal(got_a, want_a - 1) or np.array_equal(got_a, want_a + 1):
        return _hint(_("off by one. Do you count the distinct sectors themselves, or the distance between the first "
                       "and the last?"),
                     _("collect the distinct sectors (a set) and count them, for example len(set(...))."))
    slip = _slip_hint(sectors_per_warp, cases, got_a, (stride, offset, width, got_all[first_bad]))
    if slip is not None:
        return slip
    return _hint(_("for stride {stride}, offset {offset}, width {width} you returned {got}. Draw that warp with "
                   "zc.sector_explorer.draw_warp({stride}, {offset}, {width}): which sectors do its threads' bytes "
                   "fall in?").format(stride=stride, offset=offset, width=width, got=got_all[first_bad]),
                 _("the trace counts {want} sectors there: for each thread take its first and its last byte, the "
                   "sector of each (byte // 32), and count the distinct sectors of all 32 threads.").format(
                     want=want_all[first_bad]))


def _slip_hint(function: Callable[..., Any], cases: list[tuple[int, int, int]], got: np.ndarray,
               case: tuple[int, int, int, int]) -> Feedback | None:
    """The hint for a typical slip of ``sectors_per_warp`` (issue 31), judged on all the check's cases; None if the
    counts match none."""
    stride, offset, width, returned = case
    said = {"stride": stride, "offset": offset, "width": width, "got": returned}
    slips = {kind for kind, answers in _slips(cases).items() if any(np.array_equal(got, a) for a in answers)}
    if "lines" in slips:   # the same counts as element numbers taken for bytes, width included
        lines = _mentions_lines(function)
        slips = {"lines"} if lines else {"elements"} if lines is False else {"either"}
    if "either" in slips:
        return _hint(_("for stride {stride}, offset {offset}, width {width} you returned {got}: those are the "
                       "128-byte lines the warp touches, or the sectors of addresses counted in elements, not bytes. "
                       "Which unit does your code divide by, and does it turn element numbers into bytes?").format(
            **said),
                     _("check both: divide by the sector's size in bytes, not the line's, and multiply the element "
                       "number by the element's size in bytes before dividing."))
    if "lines" in slips:
        return _hint(_("for stride {stride}, offset {offset}, width {width} you returned {got}: you counted 128-byte "
                       "lines, not 32-byte sectors. Which piece of a line does a load move over PCIe?").format(**said),
                     _("a line holds several sectors and a load moves only those its bytes fall in: divide each "
                       "byte by the sector's size, not the line's, for the first byte and the last."))
    if "elements" in slips:
        return _hint(_("for stride {stride}, offset {offset}, width {width} you returned {got}: your addresses "
                       "count elements (or floats), not bytes, so too few sectors. At which byte does element "
                       "offset + t * stride start?").format(**said),
                     _("an element of width w holds w floats, and a float is several bytes: turn the element number "
                       "into a byte address with the element's size in bytes before dividing by the sector size."))
    if "past" in slips:
        return _hint(_("for stride {stride}, offset {offset}, width {width} you returned {got}: your last byte is one "
                       "too far, so an element that ends on a sector boundary counts the next sector too. An "
                       "element of n bytes starting at byte b ends at which byte?").format(**said),
                     _("count the bytes from b to b + n inclusive for n = 2: are there n of them? The last byte is "
                       "the one before the next element's first."))
    if "per_thread" in slips:
        return _hint(_("you returned {got} whatever the stride: one sector per thread. At stride 1 neighbouring "
                       "threads read neighbouring bytes: can two threads fall in the same sector?").format(**said),
                     _("the sectors are counted once however many threads touch them: gather every thread's sector, "
                       "drop the repeats, then count what is left."))
    return None


# --------------------------------------------------------------------------- coalesce
_NOISE = re.compile(r"//[^\n]*|/\*.*?\*/|\s+", re.S)


def _code(source: str) -> str:
    """Source without comments or white space, to recognise the untouched broken kernel."""
    return _NOISE.sub("", source)


# a matrix whose size is not a multiple of the block (128 threads): the last block has threads past the end
GUARD_ROWS, GUARD_COLS = 33, 50


def _live_copy(source: str) -> str | None:
    """Live only: run the kernel on the GPU over mapped memory; None if it copied exactly, else what went wrong."""
    from . import coalescing as ex
    from ..memory import gpu

    fn = live_module(source).get_function(ex.FUNCTION_NAME)
    rows, cols = ex.ROWS, ex.COLS
    n = rows * cols
    src, dst = gpu.mapped_empty(n, np.float32), gpu.mapped_empty(n, np.float32)
    try:
        src[:] = np.random.default_rng(3).random(n, dtype=np.float32)
        dst[:] = 0
        fn(gpu.device_pointer(src), gpu.device_pointer(dst), np.int32(rows), np.int32(cols),
           block=(ex.BLOCK, 1, 1), grid=((n + ex.BLOCK - 1) // ex.BLOCK, 1))
        gpu.synchronize()
        ok = bool(np.array_equal(dst, src))
    finally:
        gpu.free(src, dst)
    return None if ok else "on the GPU, dst differs from src"


def _gloss(error: Exception | None) -> str:
    """A bounds error's one-line gloss in the chosen language, after the quoted English ('' in English)."""
    gloss = getattr(error, "gloss", None)
    return gloss() if gloss else ""


def check_coalesce(source: str) -> Feedback:
    """coalesce-and-align-accesses: the fixed ``copy_matrix`` copies exactly and its loads from ``src`` touch fewer
    sectors."""
    from . import coalescing as ex
    from ..cpu import CpuBackendError

    if is_placeholder(source) or not isinstance(source, str) or _code(source) == _code(ex.BROKEN_SOURCE):
        return _not_yet(_("rewrite the two index lines of copy_matrix (r = ..., c = ...) so that consecutive "
                          "threads read consecutive floats of src."))
    result = ex.check_fix(source)
    if not result.passed:
        text = result.message
        if not result.ran and ("outside" in text or "OutOfBounds" in text or "bounds" in text.lower()):
            error = str(result.error) if result.error is not None else text   # the backend's own words
            return bounds_hint(error, _gloss(result.error), _("a load or store fell outside the matrix"),
                               _(". In a row-major matrix a row holds cols consecutive elements: for thread t, how "
                                 "many whole rows come before it, and where in its row is it?"),
                               _("thread t's row is t divided by the row length (cols, not rows), its column what "
                                 "is left over."))
        if result.ran and not result.correct:
            return _hint(_("the copy is wrong: {error} Do your r and c name a different element for every t in "
                           "0 .. rows*cols-1?").format(error=quoted(text)),
                         _("r and c both come from dividing t by the same number, the row length cols: one is the "
                           "quotient, the other the remainder."))
        if not result.ran:
            lead, _newline, output = text.partition("\n")   # the backend's lead-in, then the compiler's own lines
            return _hint(quoted(lead, None) + (fenced(output) if output.strip() else ""),
                         _("read the first error line: it names the line of your source and what the compiler "
                           "expected there (a missing `;`, a name not declared)."))
        return _hint(_("{error} Which of r and c must change from one thread to the next, for neighbouring threads "
                       "to read neighbouring floats?").format(error=quoted(text)),
                     _("in a row-major matrix the column is the fast index: compute r and c so that t and t + 1 have "
                       "the same row and neighbouring columns."))
    try:
        ex.trace_copy(source, rows=GUARD_ROWS, cols=GUARD_COLS)
    except CpuBackendError as exc:
        return bounds_hint(str(exc), _gloss(exc),
                           _("with a {rows} x {cols} matrix the last block has threads past the end, and one of them "
                             "read or wrote outside the arrays").format(rows=GUARD_ROWS, cols=GUARD_COLS),
                           _(": keep `if (t < rows * cols)`. What stops the threads past the end?"),
                           _("the guard must wrap both the load and the store, with the index lines inside or "
                             "before it."))
    from ..mode import detect

    where = _("on the CPU backend")
    if detect().live:
        try:
            problem = _live_copy(source)
        except Exception as exc:  # noqa: BLE001 (a check never raises)
            return _hint(_("the kernel passed on the CPU backend but did not build or run on the GPU: {type}: "
                           "{error}. What does the GPU's compiler accept that the CPU backend does not, or the other "
                           "way round?").format(type=type(exc).__name__, error=quoted(exc)),
                         _("read the error's first line: it names the line of your source and what went wrong."))
        if problem:
            return _hint(_("on the GPU, dst differs from src, though the CPU backend copied it right. What can differ "
                           "between two runs of the same kernel?"),
                         _("look for a race (two threads writing one element) or a value read before it is set."))
        where = _("on the CPU backend and on the GPU")
    room = "" if result.fixed_sectors <= result.ideal_sectors else _(" (the minimum is {ideal})").format(
        ideal=result.ideal_sectors)
    return _correct(_("the copy is exact {where}, and its loads from src touch {fixed} sectors instead of {broken}"
                      "{room}: {times:.0f}x fewer bytes over PCIe, because consecutive threads now read consecutive "
                      "floats and a warp's 32 loads share one 128-byte line instead of touching 32.").format(
        where=where, fixed=result.fixed_sectors, broken=result.broken_sectors, room=room,
        times=result.broken_sectors / result.fixed_sectors))


# --------------------------------------------------------------------------- the prediction of section 4
def _as_fraction(value: Any) -> tuple[float | None, str]:
    """(fraction, note) from what the learner wrote; None if it is not a usable number."""
    if is_placeholder(value):
        return None, ""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None, _("`{value}` is not a number. ").format(value=repr(value))
    if not math.isfinite(x) or x <= 0:
        return None, _("{value} is not a positive fraction. ").format(value=repr(value))
    typed = (_(" You typed the text {given}, read as the number {guess} (a number needs no quotes).").format(
        given=repr(value), guess=f"{x:g}").strip() if isinstance(value, str) else "")
    share, read = as_share(x, above=1)
    return share, sentences(typed, read) if read else typed


def compare_prediction(predicted: Any, result: Any) -> str:
    """coalesce-and-align-accesses, section 4: the learner's predicted ``useful GB/s at stride 32 / at stride 1``
    against the run.

    ``result`` is ``experiments.stride()`` (live or recorded); never raises."""
    try:
        s1 = result.one(memory="zero_copy", stride=1)["useful_GBps"]
        s32 = result.one(memory="zero_copy", stride=32)["useful_GBps"]
        d1 = result.one(memory="device", stride=1)["useful_GBps"]
        d32 = result.one(memory="device", stride=32)["useful_GBps"]
    except Exception as exc:  # noqa: BLE001
        return _("Cannot compare: this run lacks stride 1 or 32 ({error}).").format(error=exc)
    measured = s32 / s1
    sectors_only = traced_sectors(1, 0) / traced_sectors(32, 0)
    run = _("This run: zero-copy at stride 32 reached {measured:.1%} of its stride-1 useful bandwidth ({s32:.2f} of "
            "{s1:.1f} GB/s); device memory {device:.1%}.").format(measured=measured, s32=s32, s1=s1, device=d32 / d1)
    if measured < 0.8 * sectors_only:
        why = _("Counting sectors alone (the trace: {one} per warp at stride 1, {many} at stride 32) would allow "
                "{sectors:.1%}; zero-copy fell below even that, because over PCIe every scattered float is also its "
                "own read request, and the rate of requests, not the bytes, sets the limit (the next lesson counts "
                "them).").format(one=traced_sectors(1, 0), many=traced_sectors(32, 0), sectors=sectors_only)
    elif measured > 1.25 * sectors_only:
        why = _("Counting sectors alone would allow {sectors:.1%}; zero-copy did better, so at stride 1 it was not "
                "moving sector bytes at the link's full rate (fewer bytes in flight, or a shared GPU).").format(
            sectors=sectors_only)
    else:
        why = _("That is close to what counting sectors alone allows ({sectors:.1%}: 4 sectors per warp at stride 1, "
                "32 at stride 32), so here the wasted sector bytes explain the loss.").format(sectors=sectors_only)
    fraction, note = _as_fraction(predicted)
    if fraction is None:
        ask = (_("No prediction made (predicted_fraction is still `...`). ") if not note else
               _("Write a fraction such as 0.5. "))
        return sentences(note.strip(), ask.strip(), run, why)
    ratio = fraction / measured
    if 0.67 <= ratio <= 1.5:
        verdict = _("You predicted {fraction:.1%}: close (within a factor 1.5).").format(fraction=fraction)
    elif ratio > 1.5:
        verdict = _("You predicted {fraction:.1%}, {ratio:.1f}x the measured fraction: strided reads cost more than "
                    "the bytes the threads ask for suggest.").format(fraction=fraction, ratio=ratio)
    else:
        verdict = _("You predicted {fraction:.1%}, {ratio:.1f}x below the measured fraction: stride costs less than "
                    "you expected.").format(fraction=fraction, ratio=1 / ratio)
    return sentences(note.strip(), verdict, run, why)


CHECKS = {"sectors_per_warp": check_sectors_per_warp, "coalesce": check_coalesce}
