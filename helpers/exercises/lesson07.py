"""measure-latency's exercises: follow a pointer chase as the kernel does (chase), turn two latencies into orders of
magnitude (orders_of_magnitude); and :func:`compare_prediction`, which measure-latency and
keep-enough-bytes-in-flight use after a measurement."""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet


def _reference_chase(table: np.ndarray, start: int, steps: int) -> int:
    j = int(start)
    for _ in range(steps):
        j = int(table[j])
    return j


# (lines in the cycle, seed, steps): a short cycle, a long chase, one step over a large cycle
CHASE_CASES = ((8, 1, 5), (64, 2, 100), (1024, 3, 1))
# (slow ns, fast ns): a fraction of an order, two orders, none
ORDER_CASES = ((1200.0, 480.0), (5000.0, 50.0), (300.0, 300.0))


def chase_case(lines: int, seed: int, steps: int) -> tuple[np.ndarray, int, int]:
    """(table, start, steps) of one chase case: a random cycle over ``lines`` 128-byte lines, from its first element."""
    from ..experiments.latency import LINE, random_cycle

    table, order = random_cycle(lines * LINE, seed=seed)
    return table, int(order[0]), steps


def check_chase(chase: Callable[[np.ndarray, int, int], Any]) -> Feedback:
    """measure-latency: ``chase(table, start, steps)`` returns the element reached after ``steps`` dependent loads."""
    if is_placeholder(chase) or not callable(chase):
        return _not_yet("define chase(table, start, steps): start at element `start`, do j = table[j] `steps` "
                        "times, return j.")
    from ..experiments.latency import LINE

    per_line = LINE // 4
    for lines, seed, steps in CHASE_CASES:
        table, start, steps = chase_case(lines, seed, steps)
        got = chase(table, start, steps)
        if got is None or got is Ellipsis:
            return _not_yet("chase returns nothing yet: return the element index j after the last step.")
        if isinstance(got, (list, tuple, np.ndarray)):
            return _hint("return one element index (the j after the last step), not the list of visited ones. "
                         "Which value does the kernel's thread hold at the end?",
                         "keep only the current j in the loop, and return it after the last step.")
        want = _reference_chase(table, start, steps)
        if int(got) == want:
            continue
        if int(got) == start:
            return _hint("chase returned its start. What changes j at each step?",
                         "inside the loop, load the next index from the table at the current one, j = table[j], "
                         "and return j after the loop.")
        if int(got) == want // per_line:
            return _hint("that is the line number of the element, not the element. Which does the kernel's thread "
                         "hold, an element index or a line?",
                         "return the element index j itself, without dividing by the elements per line (32).")
        if int(got) == _reference_chase(table, start, steps - 1) or int(got) == _reference_chase(table, start, steps + 1):
            return _hint(f"off by one step. After {steps} steps, how many loads has the kernel done?",
                         f"exactly {steps} loads j = table[j]: check your loop bounds (how many times the body runs).")
        if int(got) == int(table[start]):
            return _hint("every step loaded table[start]. Where must the address of each load come from, for the "
                         "chase to measure latency (j = table[j], section 2)?",
                         "the address of each load is the value the previous load returned: index the table with "
                         "the current j, not with start.")
        return _hint(f"on a {lines}-line cycle from element {start}, after {steps} steps yours returned {got}. "
                     "Follow two steps by hand: which element does each load reach?",
                     f"the chase reaches element {want} there: start at j = start and replace j by table[j] once "
                     "per step.")
    return _correct("each load's address is the previous load's value, so no load can start before the one before it "
                    "returns: the kernel's time over steps is one load's latency.")


def check_orders_of_magnitude(orders_of_magnitude: Callable[[float, float], Any]) -> Feedback:
    """measure-latency: ``orders_of_magnitude(slow_ns, fast_ns)`` = log10(slow / fast)."""
    if is_placeholder(orders_of_magnitude) or not callable(orders_of_magnitude):
        return _not_yet("define orders_of_magnitude(slow_ns, fast_ns): how many factors of 10 separate the two "
                        "latencies.")
    for slow, fast in ORDER_CASES:
        got = orders_of_magnitude(slow, fast)
        if got is None or got is Ellipsis:
            return _not_yet("orders_of_magnitude returns nothing yet: return a number.")
        try:
            got = float(got)
        except (TypeError, ValueError):
            return _hint(f"return one number; yours returned {type(got).__name__}.",
                         "return the count of factors of 10 as a float, not a list or a string.")
        want = math.log10(slow / fast)
        if math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
            continue
        if math.isclose(got, slow / fast, rel_tol=1e-9):
            return _hint("that is the factor (slow / fast). An order of magnitude is a factor of 10: how many "
                         "factors of 10 make this factor, and which function counts them?",
                         "a factor of 1000 is three factors of 10: the logarithm to base 10 counts them.")
        if math.isclose(got, -want, rel_tol=1e-9):
            return _hint("the sign is reversed. The slow latency is the larger one: which goes on top?",
                         "divide the slow latency by the fast one, not the other way round.")
        if math.isclose(got, math.log(slow / fast), rel_tol=1e-9):
            return _hint("that is the natural logarithm (np.log), which counts factors of e. Which logarithm counts "
                         "factors of 10?", "use NumPy's base-10 logarithm, np.log10.")
        if math.isclose(got, math.log10(slow - fast) if slow > fast else -1.0, rel_tol=1e-9):
            return _hint("orders of magnitude compare a ratio, not a difference. How many times slower is one "
                         "latency than the other?", "take the logarithm of slow / fast, not of slow - fast.")
        return _hint(f"for {slow:g} ns against {fast:g} ns yours gave {got:.6g}. How many times slower is the "
                     "slow one, and how many factors of 10 is that?",
                     f"the factor here is {slow / fast:g}: count its factors of 10 with a base-10 logarithm.")
    return _correct("log10 of the ratio: 1 means ten times slower, 2 a hundred times; 'several orders' would need a "
                    "ratio of 100 or more.")


def compare_prediction(predicted: Any, measured: float, what: str, *, fmt: str = "{:.1f}", why: str = "") -> str:
    """Text comparing a learner's prediction with the measured value; ``...`` (untouched) says none was made."""
    shown = fmt.format(measured)
    if predicted is None or predicted is Ellipsis:
        return (f"No prediction made (the cell still holds `...`). Measured {what}: {shown}. "
                "Next time, write your guess down first: a surprise is how a measurement teaches.")
    try:
        guess = float(predicted)
    except (TypeError, ValueError):
        return f"Your prediction {predicted!r} is not a number. Measured {what}: {shown}."
    if guess <= 0 or measured <= 0:
        return f"You predicted {fmt.format(guess)}; measured {what}: {shown}. {why}".strip()
    factor = measured / guess
    if 0.8 <= factor <= 1.25:
        verdict = "Within 25%: a good model of the machine."
    elif factor > 1:
        verdict = f"The run gave {factor:.1f}x your guess."
    else:
        verdict = f"The run gave {1 / factor:.1f}x less than your guess."
    return f"You predicted {fmt.format(guess)}; measured {what}: {shown}. {verdict} {why}".strip()


def compare_latency_prediction(predicted: Any, zero_copy_ns: float, device_ns: float) -> str:
    """measure-latency: a predicted zero-copy / device-memory latency factor against the run."""
    factor = zero_copy_ns / device_ns
    scale = ("less than one order of magnitude" if factor < 10 else
             f"{math.log10(factor):.1f} orders of magnitude")
    return compare_prediction(predicted, factor, "zero-copy / device-memory latency factor", fmt="{:.1f}x",
                              why=(f"A dependent load pays one full round trip: {device_ns:.0f} ns to device memory "
                                   f"inside the GPU, {zero_copy_ns:.0f} ns across PCIe to host memory and back; here "
                                   f"the trip to the host cost {scale}."))


CHECKS = {"chase": check_chase, "orders_of_magnitude": check_orders_of_magnitude}
