"""decide-when-zero-copy-wins's exercises: a model of copy-once against zero-copy for data used k times, and the
chunk size a
device-memory budget allows. ``compare_prediction`` compares the learner's predicted break-even k with the run."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet

BLOCK = 256


def _number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


# --------------------------------------------------------------------------- copy once, or cross PCIe k times
def model_seconds_rule(k: int, n: int, link_GBps: float, device_GBps: float, zc_GBps: float) -> tuple[float, float]:
    """(copy, zero-copy) seconds for k vector adds on n floats: 12n bytes each time, over the link once or k times."""
    nbytes = 12 * n
    return nbytes / (link_GBps * 1e9) + k * nbytes / (device_GBps * 1e9), k * nbytes / (zc_GBps * 1e9)


MODEL_CASES = ((1, 1 << 24, 55.0, 2000.0, 70.0), (5, 1 << 20, 25.0, 900.0, 30.0), (8, 3000, 12.0, 400.0, 20.0))


def _model_hint(got: tuple[float, float], case: tuple) -> Feedback | None:
    k, n, link, device, zc = case
    copy, zero = (float(v) for v in got)
    want_copy, want_zero = model_seconds_rule(*case)
    nb = 12 * n

    def close(a: float, b: float) -> bool:
        return bool(np.isclose(a, b, rtol=1e-6))

    if close(copy, want_copy / 4) or close(zero, want_zero / 4):
        return _hint("a quarter of the right time: n counts floats. How many bytes does one pass move for a, b and "
                     "c, each 4 bytes per element?", "one pass moves 12n bytes: a and b read, c written, 4 bytes "
                     "each.")
    if close(copy, want_copy * 1e3) or close(zero, want_zero * 1e3):
        return _hint("you returned milliseconds. Where does your code scale the result?",
                     "return seconds: bytes / (bytes per second) already is.")
    if close(copy, want_copy * 1e9 / 2**30) or close(zero, want_zero * 1e9 / 2**30):
        return _hint("GB/s means 10^9 bytes per second, not 2^30. How many bytes per second is one GB/s?",
                     "multiply each rate by 1e9, not 2**30.")
    if close(copy, want_zero) and close(zero, want_copy):
        return _hint("the two times are swapped: the exercise asks for (copy, zero_copy) in that order. Which did "
                     "you return first?", "return copy first, then zero_copy.")
    if not close(zero, want_zero):
        if close(zero, nb / (zc * 1e9)) and k > 1:
            return _hint("zero-copy: your time does not grow with k. What does each further use cost when the "
                         "data stays in host memory?",
                         "every use crosses PCIe again: multiply the time of one use at zc_GBps by k.")
        if close(zero, k * 8 * n / (zc * 1e9)):
            return _hint("zero-copy: each use reads a and b over the link; what happens to c, 12 bytes per element, "
                         "not 8?", "the kernel writes c back to host memory over the link too: 12 bytes per "
                         "element each use.")
        return _hint(f"zero-copy for k = {k}, n = {n}: you returned {zero:.4g} s. Which bytes cross the link on "
                     "each use, and how many uses are there?",
                     f"the model gives {want_zero:.4g} s there: the bytes of one use (a, b and c) at zc_GBps, times "
                     "the number of uses.")
    if close(copy, k * nb / (link * 1e9) + k * nb / (device * 1e9)) and k > 1:
        return _hint("copy: you pay the link k times. How often does the data cross the link when it is copied to "
                     "the device?", "the data crosses the link once, whatever k; only the kernels run k times.")
    if close(copy, nb / (link * 1e9)):
        return _hint("copy: you counted only the copies over the link. Where do the k kernels on device memory "
                     "run, and do they take time?",
                     "the k kernels move k x 12n bytes at device_GBps: small, but they are the copy line's slope.")
    if close(copy, 8 * n / (link * 1e9) + k * nb / (device * 1e9)):
        return _hint("copy: you moved a and b over the link. What about c, 12 bytes per element, not 8?",
                     "c comes back over the link too: 12n bytes cross it, not 8n.")
    if not close(copy, want_copy):
        return _hint(f"copy for k = {k}, n = {n}: you returned {copy:.4g} s. How often does the data cross the "
                     "link, and how often do the kernels run on device memory?",
                     f"the model gives {want_copy:.4g} s there: the bytes of one pass at link_GBps once, plus k "
                     "passes at device_GBps.")
    return None


def check_model_seconds(model_seconds: Callable[..., tuple[float, float]], *, measured: Any = None,
                        rates: tuple[float, float, float] | None = None) -> Feedback:
    """decide-when-zero-copy-wins: ``model_seconds(k, n, link_GBps, device_GBps, zc_GBps)`` returns (copy,
    zero-copy) seconds. With
    ``measured`` (``reuse``) and ``rates`` (link, device, zero-copy GB/s), the message compares with the rows."""
    if is_placeholder(model_seconds):
        return _not_yet("define model_seconds(k, n, link_GBps, device_GBps, zc_GBps) returning (copy, zero_copy).")
    for case in MODEL_CASES:
        got = model_seconds(*case)
        if is_placeholder(got):
            return _not_yet("model_seconds has no body yet (it returns None): return (copy seconds, zero-copy seconds).")
        if not (isinstance(got, (tuple, list)) and len(got) == 2 and all(_number(v) for v in got)):
            return _hint(f"return a pair of numbers (copy seconds, zero-copy seconds); you returned {got!r}."[:300],
                         "end with `return copy, zero_copy`: Python makes the pair from the two values.")
        problem = _model_hint(got, case)
        if problem:
            return problem
    extra = ""
    if measured is not None and rates:
        n = int(measured.params["n"])
        ks = sorted({int(k) for k in measured.column("uses")})
        worst, crossing = 0.0, None
        for k in ks:
            copy, zero = model_seconds(k, n, *rates)
            for method, model in (("copy", copy), ("zero_copy", zero)):
                real = float(np.median(measured.one(method=method, uses=k)["seconds"]))
                worst = max(worst, abs(model - real) / real)
            if crossing is None and copy < zero:
                crossing = k
        first = next((k for k in ks if np.median(measured.one(method="copy", uses=k)["seconds"])
                      < np.median(measured.one(method="zero_copy", uses=k)["seconds"])), None)
        link, device, zc = rates
        extra = (f" With this run's rates it is within {worst:.0%} of every measured row, and it has copying win "
                 f"from k = {crossing} (measured: k = {first}). Solve copy(k) = zero_copy(k): "
                 f"k = (1/link) / (1/zc - 1/device) = {(1 / link) / (1 / zc - 1 / device):.2f}. n cancels: in this model "
                 "the crossing does not depend on the size, as long as the rates hold (for small n they do not, "
                 "lesson 11).")
    return _correct("copying pays the link once and then runs k cheap kernels on device memory; zero-copy pays the "
                    "link on every use." + extra)


# --------------------------------------------------------------------------- chunks that fit a budget
def chunk_elements_rule(budget_bytes: int, sets: int) -> int:
    """helpers.experiments.out_of_core's chunk: ``sets`` sets of three float buffers, whole blocks of 256."""
    return max(BLOCK, budget_bytes // (12 * sets) // BLOCK * BLOCK)


CHUNK_CASES = ((64 << 20, 1), (64 << 20, 2), (256 << 20, 1), (256 << 20, 2), (1 << 20, 2), (100_000, 1), (4096, 2))


def check_chunk_elements(chunk_elements: Callable[[int, int], int], *, measured: Any = None) -> Feedback:
    """decide-when-zero-copy-wins: ``chunk_elements(budget_bytes, sets)``; with ``measured`` (``out_of_core``) it is
    also compared
    with the chunk size each recorded or measured chunked row used."""
    if is_placeholder(chunk_elements):
        return _not_yet("define chunk_elements(budget_bytes, sets) returning a whole number of elements.")
    cases = list(CHUNK_CASES)
    if measured is not None:
        cases += [(int(r["budget_bytes"]), 2 if r["method"] == "chunked_overlap" else 1)
                  for r in measured.rows if r["method"] != "zero_copy"]
    for budget, sets in cases:
        got = chunk_elements(budget, sets)
        if is_placeholder(got):
            return _not_yet("chunk_elements has no body yet (it returns None): return the number of elements.")
        want = chunk_elements_rule(budget, sets)
        if not _number(got):
            return _hint(f"return a number of elements; you returned {got!r}."[:300],
                         "compute the count with integer arithmetic and return it alone.")
        if isinstance(got, (float, np.floating)):
            if float(got).is_integer() and int(got) == want:
                return _hint("right value, but a float. What happens when a float is used as a slice bound?",
                             "a chunk is a whole number of elements: use // (a float slice bound raises TypeError).")
            return _hint("you returned a float: a chunk is a whole number of elements, in whole blocks of "
                         f"{BLOCK}. Which division keeps integers?",
                         f"use integer division // and round down to whole blocks of {BLOCK}.")
        got = int(got)
        if got == want:
            continue
        raw = budget // (12 * sets)
        if got == raw or got == budget // 12 // sets:
            return _hint(f"{budget} bytes, {sets} set(s): {got} is not a whole number of {BLOCK}-thread blocks. How "
                         f"do you round a count down to a multiple of {BLOCK}?",
                         f"divide by {BLOCK} with //, then multiply by {BLOCK} (and never go below one block).")
        if got in (budget // 12 // BLOCK * BLOCK, max(BLOCK, budget // 12 // BLOCK * BLOCK)) and sets == 2:
            return _hint("with overlap there are two buffer sets (one per stream). How much of the budget does "
                         "each get?", "each set gets half the budget: the bytes per element double with two sets.")
        if got in (budget // (3 * sets) // BLOCK * BLOCK, max(BLOCK, budget // (3 * sets) // BLOCK * BLOCK)):
            return _hint("that counts bytes as elements. How many bytes does one element of a float32 buffer "
                         "take?", "each float is 4 bytes, so a set of three buffers takes 12 bytes per element.")
        if got in (budget // (4 * sets) // BLOCK * BLOCK, max(BLOCK, budget // (4 * sets) // BLOCK * BLOCK)):
            return _hint("that is one buffer per set. How many arrays does a buffer set hold?",
                         "a, b and c: three arrays of 4 bytes per element, 12 bytes per element, not 4.")
        if got in (budget // (8 * sets) // BLOCK * BLOCK, max(BLOCK, budget // (8 * sets) // BLOCK * BLOCK)):
            return _hint("that counts a and b only. Where does the kernel write its result: does c need its device "
                         "buffer too?",
                         "the result c needs its device buffer too: three arrays, 12 bytes per element.")
        if got < BLOCK <= want:
            return _hint(f"for a budget of {budget} bytes you returned {got}. What is the smallest chunk a launch "
                         f"of whole {BLOCK}-thread blocks can use?", f"never less than one block ({BLOCK} elements): "
                         "take the larger of one block and your count.")
        return _hint(f"for a budget of {budget} bytes and {sets} set(s) you returned {got}. How many bytes does one "
                     "element cost across all the sets, and how many whole blocks fit?",
                     f"the chunk there is {want}: the budget over the bytes per element, rounded down to whole "
                     f"blocks of {BLOCK}.")
    extra = ""
    if measured is not None:
        rows = [r for r in measured.rows if r["method"] != "zero_copy"]
        extra = f" It matches the chunk size of all {len(rows)} chunked rows of this run."
    return _correct(f"each buffer set holds a chunk of a, b and c (12 bytes per element), the overlapped version "
                    f"needs two sets, and a chunk is whole blocks of {BLOCK} threads." + extra)


# --------------------------------------------------------------------------- predict, then measure
def compare_prediction(predicted: Any, first_copy_win: int | None, k_even: float) -> str:
    """decide-when-zero-copy-wins: the predicted smallest k at which copying first wins, against the run."""
    measured = (f"copying first won from k = {first_copy_win} on" if first_copy_win
                else "copying first won at no measured k")
    fits = f" (the fitted lines cross at k = {k_even:.2f})"
    if is_placeholder(predicted):
        return f"No prediction made (predicted_k is still `...`). This run: {measured}{fits}."
    try:
        guess = float(predicted)
    except (TypeError, ValueError):
        return f"Write your prediction as a number, e.g. 4 (you wrote {predicted!r}). This run: {measured}{fits}."
    text = f"You predicted k = {guess:g}; {measured}{fits}. "
    if first_copy_win is None:
        return text + "Zero-copy held out over every k measured here: its per-use cost was close to the copy's."
    if guess == first_copy_win:
        return text + "Right."
    if guess > first_copy_win:
        return text + ("Copying won sooner than you thought: each zero-copy use moves the same 12n bytes over the "
                       "link that the one copy moves, so one extra use already costs most of a copy, while a "
                       "kernel on device memory costs a small fraction of it.")
    return text + ("Zero-copy held out longer than you thought: at k = 1 it overlaps its reads and writes on the two "
                   "directions of the link (lesson 11), so one use costs less than copying in and out.")


CHECKS = {"model_seconds": check_model_seconds, "chunk_elements": check_chunk_elements}
