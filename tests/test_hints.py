"""Graded hints: every exercise check, given a typical wrong answer, first asks a question or names the
concept to revisit, without the solution's key expression or its value; the second try adds a smaller step; the
answer comes only from ``exercises.solution(...)``, which the third try points to. The untouched placeholder still
says "not yet" and counts as no try.

Every registered exercise needs an entry in :data:`TYPICAL`; a new exercise without one fails
:func:`test_every_exercise_has_a_typical_wrong_answer`, which lists it. The key expressions are fragments of the
solution's own text (the test checks they are there); the key value is what the solution returns on the check's
first case that the wrong answer gets wrong, computed here from lessons/solutions/, never typed by hand.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pytest

from helpers import exercises, experiments
from helpers.exercises import (lesson00, lesson01, lesson02, lesson03, lesson04, lesson06, lesson07, lesson08, lesson09,
                               lesson10, lesson11, lesson12, lesson13, lesson14, lesson15)
from tests.test_exercises import CELLS, IDS

ROOT = Path(__file__).resolve().parent.parent
EXERCISE_MODULES = sorted((ROOT / "helpers" / "exercises").glob("lesson[0-9][0-9].py"))


# --------------------------------------------------------------------------- the solutions, run
def solution_text(lesson: str, name: str) -> str:
    """The solution's source, from lessons/solutions/."""
    text = exercises.solution(lesson, name)
    assert "not here" not in text and "no solution" not in text, text
    return text


def solution_value(lesson: str, variable: str, name: str | None = None) -> Any:
    """What a solution defines under ``variable`` (its function, or its CUDA source)."""
    namespace = exercises.namespace(lesson)
    exec(compile(solution_text(lesson, name or variable), "<solution>", "exec"), namespace)
    return namespace[variable]


def edited(lesson: str, name: str, variable: str, old: str, new: str) -> Callable[[], Any]:
    """A wrong answer made from the solution by one edit (the solution must contain ``old``)."""
    def build() -> Any:
        text = solution_text(lesson, name)
        assert old in text, old
        namespace = exercises.namespace(lesson)
        exec(compile(text.replace(old, new), "<wrong answer>", "exec"), namespace)
        return namespace[variable]
    return build


def fixed(answer: Any) -> Callable[[], Any]:
    """A wrong answer given as it is (a lambda)."""
    return lambda: answer


# --------------------------------------------------------------------------- the check modules' own cases
def _time(copies: Any, direction: str, memory: str, nbytes: int) -> float:
    return nbytes / (copies.one(direction=direction, host_memory=memory, nbytes=nbytes)["GBps"] * 1e9)


def _seconds_saved_cases() -> list[tuple]:
    copies = lesson02._fixed_copies()
    return [(copies, n, d) for n in lesson02._SIZES for d in ("htod", "dtoh")]


def _physical_cases() -> list[tuple]:
    cases = []
    for row in lesson03._recorded_rows():
        if all(p is not None for p in row["pfns"]):
            start, pfns = int(row["address"], 16), list(row["pfns"])
            cases += [(start + page * lesson03.PAGE + offset, start, pfns)
                      for page, offset in ((0, 0), (1, 0x123), (2, 4095), (len(pfns) - 1, 8))]
    return cases


def _same_address_cases() -> list[tuple]:
    return [(kind, {"UNIFIED_ADDRESSING": uva, "CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM": can})
            for uva in (0, 1) for can in (1, 0) for kind in lesson04.KINDS]


def _fraction_cases() -> list[tuple]:
    memcpy, streams = experiments.reference("memcpy"), experiments.reference("kernel_bandwidth")
    return [(memcpy, streams, n) for n in sorted({int(n) for n in memcpy.column("nbytes")})]


def _predicted_cases() -> list[tuple]:
    return [(c, m) for m in lesson10._models() for _, c in lesson10._count_cases()]


def _stride_cases() -> list[tuple]:
    sweep = experiments.reference("stride")
    return [(sweep, s) for s in lesson10.NEW_STRIDES]


@dataclass(frozen=True)
class Typical:
    """One exercise's typical wrong answer: ``wrong`` builds it; ``keys`` are fragments of the solution's text the
    first hint must not contain; ``cases`` gives the check's own cases as argument tuples (None for a kernel or a
    procedure), from which the key value comes; ``variable`` names what the solution defines."""

    wrong: Callable[[], Any]
    keys: tuple[str, ...]
    cases: Callable[[], Sequence[tuple]] | None = None
    variable: str | None = None


def _off_by_one_pages(address: int, nbytes: int, page_size: int) -> int:
    return (address + nbytes) // page_size - address // page_size + 1


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("00", "l2_mib"): [
        Typical(fixed(lambda attributes: float(attributes["L2_CACHE_SIZE"])), ("2**20",),
                lambda: [(a,) for a in lesson00.l2_cases()]),
        Typical(fixed(lambda attributes: attributes["L2_CACHE_SIZE"] / 1e6), ("2**20",),
                lambda: [(a,) for a in lesson00.l2_cases()])],
    ("00", "bus_bytes"): [
        Typical(fixed(lambda n, reads: (12 * n, 12 * n)), ("reads * 2 * 4 * n",), lambda: lesson00.BUS_CASES),
        Typical(fixed(lambda n, reads: (12 * n * reads, 8 * n * reads + 4 * n)), ("3 * 4 * n", "reads * 2 * 4 * n"),
                lambda: lesson00.BUS_CASES)],
    ("01", "pages_spanned"): [
        Typical(fixed(_off_by_one_pages), ("(address + nbytes - 1) // page_size",), lambda: lesson01.SPAN_CASES),
        Typical(fixed(lambda address, nbytes, page_size: nbytes // page_size + 3),
                ("(address + nbytes - 1) // page_size",), lambda: lesson01.SPAN_CASES)],
    ("01", "decode_entry"): [
        Typical(fixed(lambda entry: (entry >> 63, entry & ((1 << 54) - 1))), ("(1 << 55) - 1",),
                lambda: [(e,) for e in lesson01.ENTRY_CASES]),
        Typical(fixed(lambda entry: (entry >> 63, entry >> 1)), ("(1 << 55) - 1",),
                lambda: [(e,) for e in lesson01.ENTRY_CASES])],
    ("02", "seconds_saved"): [
        Typical(fixed(lambda c, n, d: _time(c, d, "pageable", n)), ("nbytes / (", '- one_copy("pinned")'),
                _seconds_saved_cases),
        Typical(fixed(lambda c, n, d: _time(c, d, "pinned", n) - _time(c, d, "pageable", n)),
                ("nbytes / (", '- one_copy("pinned")'), _seconds_saved_cases)],
    ("02", "staged_seconds"): [
        Typical(fixed(lambda n, c, hr, dr: n / (hr * 1e9) + n / (dr * 1e9)), ("(k - 1) * max(h, d)",),
                lambda: lesson02.STAGE_CASES),
        Typical(fixed(lambda n, c, hr, dr: n / (hr * 1e9) * 0.75), ("(k - 1) * max(h, d)",),
                lambda: lesson02.STAGE_CASES)],
    ("03", "physical_address"): [
        Typical(fixed(lambda address, start, pfns: None if pfns[(address - start) // 4096] is None
                      else pfns[(address - start) // 4096] * 4096),
                ("address % PAGE", "(address - start) // PAGE"), _physical_cases),
        Typical(fixed(lambda address, start, pfns: None if pfns[0] is None else pfns[0] * 4096 + address % 4096),
                ("address % PAGE", "(address - start) // PAGE"), _physical_cases)],
    ("03", "could_be_huge"): [
        Typical(fixed(lambda address, pfns: address % (2 << 20) == 0), ("pfns[0] + i",),
                lambda: [(a, p) for _, a, p in lesson03._huge_cases()])],
    ("04", "device_address"): [
        Typical(fixed(lambda a, i, d_a: d_a + i), ("i * a.itemsize",), lambda: lesson04.address_cases()),
        Typical(fixed(lambda a, i, d_a: a.ctypes.data + i * a.itemsize), ("d_a + i * a.itemsize",),
                lambda: lesson04.address_cases())],
    ("04", "same_address"): [
        Typical(fixed(lambda allocation, attributes: True), ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',),
                _same_address_cases),
        Typical(fixed(lambda allocation, attributes: bool(attributes["UNIFIED_ADDRESSING"])),
                ('attributes["CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM"]',), _same_address_cases)],
    ("05", "add_on_gpu"): [
        Typical(edited("05", "add_on_gpu", "add_on_gpu", "blocks = (n + threads - 1) // threads",
                       "blocks = max(n // threads, 1)"), ("(n + threads - 1) // threads",))],
    ("05", "saxpy"): [
        Typical(edited("05", "saxpy", "SAXPY_SOURCE", "blockIdx.x * blockDim.x + threadIdx.x", "threadIdx.x"),
                ("blockIdx.x * blockDim.x + threadIdx.x",), variable="SAXPY_SOURCE"),
        Typical(edited("05", "saxpy", "SAXPY_SOURCE", "if (i < n) {", "{"), ("blockIdx.x * blockDim.x + threadIdx.x",),
                variable="SAXPY_SOURCE")],
    ("06", "model_GBps"): [
        Typical(fixed(lambda nbytes, t0, peak_GBps: peak_GBps * nbytes / (nbytes + 1e6 * t0)),
                ("t0 + nbytes / (peak_GBps * 1e9)",), lambda: lesson06.MODEL_CASES),
        Typical(fixed(lambda nbytes, t0, peak_GBps: nbytes / t0 / 1e9 + peak_GBps),
                ("t0 + nbytes / (peak_GBps * 1e9)",), lambda: lesson06.MODEL_CASES)],
    ("06", "fraction_of_copy"): [
        Typical(fixed(lambda memcpy, streams, nbytes: streams.one(nbytes=nbytes, memory="zero_copy", op="read")["GBps"]
                      / memcpy.one(nbytes=nbytes, direction="htod", host_memory="pageable")["GBps"]),
                ('host_memory="pinned"',), _fraction_cases),
        Typical(fixed(lambda memcpy, streams, nbytes: streams.one(nbytes=nbytes, memory="device", op="read")["GBps"]
                      / memcpy.one(nbytes=nbytes, direction="htod", host_memory="pinned")["GBps"]),
                ('memory="zero_copy", op="read"', 'host_memory="pinned"'), _fraction_cases)],
    ("07", "chase"): [
        Typical(edited("07", "chase", "CHASE_SOURCE", "j = next[j];", "j = next[start];"), ("j = next[j]",),
                variable="CHASE_SOURCE"),
        Typical(edited("07", "chase", "CHASE_SOURCE", "s < steps", "s <= steps"), ("s < steps",),
                variable="CHASE_SOURCE")],
    ("07", "line_cycle"): [
        Typical(fixed(lambda lines, seed: np.roll(np.arange(lines * 32, dtype=np.uint32), -32) // 32 * 32),
                ("np.roll(order, -1)", "permutation(lines)"), lambda: lesson07.CYCLE_CASES),
        Typical(fixed(lambda lines, seed: np.repeat(np.random.default_rng(seed).permutation(lines) * 32, 32)),
                ("np.roll(order, -1)",), lambda: lesson07.CYCLE_CASES)],
    ("08", "threads_for_link"): [
        Typical(fixed(lambda link, lat, per: link * lat), ("link_GBps * latency_ns",),
                lambda: lesson08.THREADS_CASES),
        Typical(fixed(lambda link, lat, per: link * lat / per / 3), ("link_GBps * latency_ns",),
                lambda: lesson08.THREADS_CASES)],
    ("08", "read_inflight"): [
        Typical(edited("08", "read_inflight", "READ_INFLIGHT_SOURCE", "i + 3 * step < n4", "i < n4"),
                ("i + 3 * step < n4",), variable="READ_INFLIGHT_SOURCE"),
        Typical(edited("08", "read_inflight", "READ_INFLIGHT_SOURCE", "i += 4 * step", "i += step"),
                ("i += 4 * step",), variable="READ_INFLIGHT_SOURCE")],
    ("08", "reread_load"): [
        Typical(edited("08", "reread_load", "REREAD_SOURCE", "__ldg(&base[i])", "__ldcg(&base[i])"),
                ("__ldg(&base[i])",), variable="REREAD_SOURCE"),
        Typical(edited("08", "reread_load", "REREAD_SOURCE", "__ldg(&base[i])", "__ldcv(&base[i])"),
                ("__ldg(&base[i])",), variable="REREAD_SOURCE")],
    ("09", "sectors_per_warp"): [
        Typical(lambda: (lambda s, o, w=1: solution_value("09", "sectors_per_warp")(s, o, w) + 1), ("len(set(",),
                lambda: lesson09.SECTOR_CASES),
        Typical(fixed(lambda s, o, w=1: 2 * s + o), ("len(set(", "offset + np.arange(32) * stride"),
                lambda: lesson09.SECTOR_CASES)],
    ("09", "coalesce"): [
        Typical(edited("09", "coalesce", "COPY_SOURCE", "int r = t / cols;", "int r = t / rows;"),
                ("t / cols", "t % cols"), variable="COPY_SOURCE"),
        Typical(edited("09", "coalesce", "COPY_SOURCE", "int c = t % cols;", "int c = t % rows;"),
                ("t / cols", "t % cols"), variable="COPY_SOURCE")],
    ("10", "link_bytes"): [
        Typical(fixed(lambda addresses, size, h: 32 * len(np.unique(np.asarray(addresses) // 32)) + 2 * h),
                ("(addresses + size - 1) // 32", "mine.max() - mine.min() + 1"),
                lambda: [(a, size, h) for _, a, size, h in lesson10._link_cases()])],
    ("10", "predicted_seconds"): [
        Typical(fixed(lambda c, m: c.requests / m.request_rate), ("max(on_link, on_requests, on_halves)",), _predicted_cases),
        Typical(fixed(lambda c, m: 2 * c.requests / m.request_rate + m.launch_seconds),
                ("max(on_link, on_requests, on_halves)", "model.overhead_bytes * counts.requests"), _predicted_cases)],
    ("10", "predict_stride"): [
        Typical(fixed(lambda sweep, s: sweep.one(memory="zero_copy", stride=1)["useful_GBps"] / s),
                ("row[\"stride\"] >= 32", "4 * requests_per_s / 1e9"), _stride_cases, "predict_useful_GBps"),
        Typical(fixed(lambda sweep, s: sweep.one(memory="zero_copy", stride=1)["useful_GBps"]),
                ("row[\"stride\"] >= 32",), _stride_cases, "predict_useful_GBps")],
    ("11", "double_buffered_add"): [
        Typical(edited("11", "double_buffered_add", "double_buffered_add", "range(0, a.size, chunk)",
                       "range(0, a.size // chunk * chunk, chunk)"), ("min(first + chunk",)),
        Typical(edited("11", "double_buffered_add", "double_buffered_add", "grid=((m + 255) // 256, 1)",
                       "grid=(m // 256, 1)"), ("(m + 255) // 256",))],
    ("11", "transfer_seconds"): [
        Typical(fixed(lambda n, r, both: 12 * n / (r * 1e9)), ("max(bytes_in, bytes_out)",),
                lambda: [(n, rate, both) for n, rate in lesson11.TRANSFER_CASES for both in (False, True)]),
        Typical(fixed(lambda n, r, both: 10 * n / (r * 1e9)), ("max(bytes_in, bytes_out)",),
                lambda: [(n, rate, both) for n, rate in lesson11.TRANSFER_CASES for both in (False, True)])],
    ("12", "model_seconds"): [
        Typical(fixed(lambda k, n, link, device, zc: (12 * n / (link * 1e9) + k * 12 * n / (device * 1e9),
                                                      12 * n / (zc * 1e9))),
                ("k * nbytes / (zc_GBps * 1e9)",), lambda: lesson12.MODEL_CASES),
        Typical(fixed(lambda k, n, link, device, zc: (12 * n / (link * 1e9) + k * 12 * n / (device * 1e9),
                                                      k * 20 * n / (zc * 1e9))),
                ("k * nbytes / (zc_GBps * 1e9)",), lambda: lesson12.MODEL_CASES)],
    ("12", "break_even_k"): [
        Typical(fixed(lambda link, device, zc: int(zc / link) + 1), ("(1 / zc_GBps - 1 / device_GBps)",),
                lambda: lesson12.BREAK_EVEN_CASES),
        Typical(fixed(lambda link, device, zc: int((1 / link) / (1 / zc - 1 / device))),
                ("int(crossing) + 1",), lambda: lesson12.BREAK_EVEN_CASES)],
    ("13", "reads_needed"): [
        Typical(fixed(lambda r, t, share=0.1: math.ceil(r / (share * t))), ("share) / (share *",),
                lambda: lesson13.READ_CASES),
        Typical(fixed(lambda r, t, share=0.1: math.ceil(r / t)), ("share) / (share *",), lambda: lesson13.READ_CASES)],
    ("13", "neighbours_pinned"): [
        Typical(fixed(lambda a, n, page_size=4096: (a % page_size, page_size - (a + n) % page_size)),
                ("-(address + nbytes) % page_size",), lambda: lesson13.NEIGHBOUR_CASES),
        Typical(fixed(lambda a, n, page_size=4096: (a % page_size, -n % page_size)),
                ("-(address + nbytes) % page_size",), lambda: lesson13.NEIGHBOUR_CASES)],
    ("14", "final_count"): [
        Typical(fixed(lambda schedule: sum(step == "write" for _, step in schedule)), ("register[thread] + 1",),
                lambda: [(s,) for s, _ in lesson14.RACE_CASES])],
    ("14", "publish"): [
        Typical(edited("14", "publish", "PUBLISH_SOURCE", "        __threadfence_system();", ""),
                ("__threadfence_system()",), variable="PUBLISH_SOURCE"),
        Typical(edited("14", "publish", "PUBLISH_SOURCE", "__threadfence_system();", "__threadfence();"),
                ("__threadfence_system()",), variable="PUBLISH_SOURCE")],
    ("14", "wait_for_flag"): [
        Typical(edited("14", "wait_for_flag", "WAIT_SOURCE", "const volatile unsigned int *flag",
                       "const unsigned int *flag"), ("volatile",), variable="WAIT_SOURCE"),
        Typical(edited("14", "wait_for_flag", "WAIT_SOURCE", "__threadfence_system();", "__threadfence();"),
                ("__threadfence_system()",), variable="WAIT_SOURCE")],
    ("15", "platform_class"): [
        Typical(fixed(lambda a: "integrated" if a["INTEGRATED"] else
                      "coherent_c2c" if a["PAGEABLE_MEMORY_ACCESS"] else "discrete_pcie"),
                ('USES_HOST_PAGE_TABLES"] and attributes["HOST_NATIVE_ATOMIC_SUPPORTED',),
                lambda: [(dict(a),) for _, a, _ in lesson15.PLATFORM_CASES])],
    ("15", "passes_until_migration_wins"): [
        Typical(fixed(lambda z, m: 8), ("m_step >= z_step",), lambda: lesson15.MIGRATION_CASES),
        Typical(fixed(lambda z, m: 3), ("m_step >= z_step",), lambda: lesson15.MIGRATION_CASES)],
}

WRONG = [(lesson, name, i) for (lesson, name), typical in TYPICAL.items() for i in range(len(typical))]
WRONG_IDS = [f"{lesson}-{name}-{i}" for lesson, name, i in WRONG]


# --------------------------------------------------------------------------- the key value
def _flat(value: Any) -> list[Any]:
    """Numbers, bools and strings in a (nested) value; arrays, dicts and objects are skipped."""
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, (bool, np.bool_, str)):
        return [value]
    if isinstance(value, (int, np.integer)):
        return [int(value)]
    if isinstance(value, (float, np.floating)):
        return [float(value)]
    return []


def _same(a: Any, b: Any) -> bool:
    fa, fb = _flat(a), _flat(b)
    if len(fa) != len(fb) or (not fa and a is not b):
        return False
    return all(_close(x, y) for x, y in zip(fa, fb))


def _numeric(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _close(x: Any, y: Any, rel_tol: float = 1e-6) -> bool:
    """Equal: exactly for two whole numbers (addresses are too large for a relative tolerance), else within
    ``rel_tol``."""
    if not (_numeric(x) and _numeric(y)):
        return x == y
    if float(x).is_integer() and float(y).is_integer():
        return int(x) == int(y)
    return math.isclose(x, y, rel_tol=rel_tol)


def key_values(lesson: str, name: str, typical: Typical) -> tuple[list[Any], list[Any]]:
    """(what the solution returns on the first case the wrong answer gets wrong, the numbers a hint may echo there:
    the case's inputs and the wrong answer's output)."""
    solution = solution_value(lesson, typical.variable or name, name)
    wrong = typical.wrong()
    for args in typical.cases():
        want = solution(*args)
        try:
            got = wrong(*args)
        except Exception:  # noqa: BLE001 (a wrong answer may raise; the check reports it)
            got = None
        if not _same(want, got):
            return _flat(want), _flat(args) + _flat(got)
    raise AssertionError(f"{lesson}/{name}: the wrong answer agrees with the solution on every case")


_NUMBER = re.compile(r"0x[0-9a-fA-F]+|(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def numbers(text: str) -> list[float]:
    """Every number written in ``text`` (decimal with its sign, scientific or hexadecimal; thousands separators
    removed)."""
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    return [int(m, 16) if m.startswith("0x") else float(m) for m in _NUMBER.findall(text)]


def gives_away(message: str, values: list[Any], echoed: list[Any]) -> list[str]:
    """The key values ``message`` states (a number it writes, or a verdict such as "expected True"), leaving out
    those that equal the case's own inputs or the wrong answer (a hint may echo what it was given)."""
    found = []
    written = numbers(message)
    for value in values:
        if any(_numeric(value) and _numeric(e) and _close(abs(value), abs(e), 5e-3) or value == e for e in echoed):
            continue
        if _numeric(value):
            if value != 0 and any(_close(n, value, 5e-3) for n in written):
                found.append(f"{value:g}")
        else:
            phrases = [f"{verb} {shown}" for verb in ("expected", "predict", "return", "should be", "answer is")
                       for shown in {str(value), repr(value)}]
            found += [p for p in phrases if p.lower() in message.lower()]
    return found


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", text)


# --------------------------------------------------------------------------- the tests
def test_every_exercise_has_a_typical_wrong_answer():
    uncovered = sorted(set(exercises.registered()) - set(TYPICAL))
    assert not uncovered, ("exercises without a typical wrong answer in tests/test_hints.py TYPICAL: "
                           + ", ".join(f"{lesson}/{name}" for lesson, name in uncovered))
    assert not set(TYPICAL) - set(exercises.registered()), "TYPICAL names an exercise that is not registered"


@pytest.mark.parametrize("lesson, name, i", WRONG, ids=WRONG_IDS)
def test_the_first_hint_asks_and_the_second_takes_a_smaller_step(lesson, name, i):
    typical = TYPICAL[(lesson, name)][i]
    text = _normal(solution_text(lesson, name))
    for key in typical.keys:
        assert _normal(key) in text, f"{key!r} is not in the solution of {lesson}/{name}: not its key expression"
    answer = typical.wrong()
    first = exercises.check(lesson, name, answer)
    assert first.status == "hint" and first.tries == 1, first
    leaked = [key for key in typical.keys if _normal(key) in _normal(first.message)]
    assert not leaked, f"the first hint gives the key expression {leaked}: {first}"
    if typical.cases is not None:
        values, echoed = key_values(lesson, name, typical)
        assert not gives_away(first.message, values, echoed), f"the first hint gives the answer's value: {first}"
    second = exercises.check(lesson, name, answer)
    assert second.status == "hint" and second.tries == 2, second
    assert second.message != first.message and "Next step:" in second.message, second
    assert "solution(" not in first.message and "solution(" not in second.message
    third = exercises.check(lesson, name, answer)
    assert f'exercises.solution("{lesson}", "{name}")' in third.message, third


@pytest.mark.parametrize("notebook, lesson, name, variable, placeholder", CELLS, ids=IDS)
def test_the_untouched_placeholder_still_says_not_yet_and_is_no_try(notebook, lesson, name, variable, placeholder):
    namespace = exercises.namespace(lesson)
    exec(compile(placeholder, "<exercise>", "exec"), namespace)
    untouched = namespace[variable]
    assert exercises.check(lesson, name, untouched).status == "not yet"
    assert exercises.tries(lesson, name) == 0
    exercises.check(lesson, name, TYPICAL[(lesson, name)][0].wrong())
    again = exercises.check(lesson, name, untouched)
    assert again.status == "not yet" and exercises.tries(lesson, name) == 1, again


def test_tries_count_per_exercise_and_a_right_answer_starts_again():
    wrong = _off_by_one_pages
    assert exercises.tries("01", "pages_spanned") == 0
    assert exercises.check("01", "pages_spanned", wrong).tries == 1
    assert exercises.check("01", "pages_spanned", wrong).tries == 2      # the same answer again is another try
    assert exercises.check("01", "decode_entry", lambda e: (e >> 63, e)).tries == 1   # each exercise its own count
    assert exercises.check("01", "pages_spanned", lesson01.spanned).correct
    assert exercises.tries("01", "pages_spanned") == 0 and exercises.tries("01", "decode_entry") == 1
    assert exercises.check("01", "pages_spanned", wrong).tries == 1
    exercises.reset_tries("01", "decode_entry")
    assert exercises.tries("01", "decode_entry") == 0 and exercises.tries("01", "pages_spanned") == 1
    exercises.reset_tries()
    assert exercises.tries("01", "pages_spanned") == 0


def test_a_raising_answer_is_a_graded_try_too():
    def raises(*args):
        raise ZeroDivisionError("boom")

    first = exercises.check("04", "device_address", raises)
    second = exercises.check("04", "device_address", raises)
    assert first.status == second.status == "hint" and "ZeroDivisionError" in first.message
    assert "Next step:" not in first.message and "Next step:" in second.message
    assert "try 2" in str(second) and "try 2" in second._repr_markdown_()


def _threads_variants() -> list[Callable[[float, float, int], Any]]:
    return [
        lambda link, lat, per: math.ceil(link * lat / per),
        lambda link, lat, per: -(-link * lat // per),
        lambda link, lat, per: (int(link * lat) + per - 1) // per,
        lambda link, lat, per: np.ceil(np.float64(link) * lat / per),
        lambda link, lat, per: np.float32(link) * np.float32(lat) / np.float32(per),
        lambda link, lat, per: np.divide(np.multiply(link, lat), per),
    ]


@pytest.mark.parametrize("variant", range(6), ids=["math.ceil", "-(-a // b)", "int ceil division", "np.ceil",
                                                    "float32", "np.divide"])
def test_threads_for_link_judges_behaviour_not_form(variant):
    feedback = exercises.check("08", "threads_for_link", _threads_variants()[variant])
    assert feedback.correct, feedback


@pytest.mark.parametrize("wrong", [lambda link, lat, per: math.floor(link * lat / per),
                                   lambda link, lat, per: round(link * lat / per),
                                   lambda link, lat, per: int(link * lat) // per])
def test_threads_for_link_rounded_down_gets_its_hint(wrong):
    feedback = exercises.check("08", "threads_for_link", wrong)
    assert feedback.status == "hint" and "rounded down" in feedback.message, feedback


@pytest.mark.parametrize("variant", [
    lambda r, t, share=0.1: math.ceil(r * (1 - share) / (share * t)),
    lambda r, t, share=0.1: -(-r * (1 - share) // (share * t)),
    lambda r, t, share=0.1: np.ceil(r * (1 - share) / (share * t)),
    lambda r, t, share=0.1: next(k for k in range(10**6) if r / (r + k * t) <= share),
], ids=["math.ceil", "-(-a // b)", "np.ceil", "search"])
def test_reads_needed_judges_behaviour_not_form(variant):
    assert exercises.check("13", "reads_needed", variant).correct


def _hint_calls(path: Path) -> list[tuple[int, str, int]]:
    """(line, enclosing function, arguments) of every hint(...) call in a lesson's exercise module, outside the
    prediction comparisons (which are not graded)."""
    calls, stack = [], []

    class Visitor(ast.NodeVisitor):
        def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
            stack.append(node.name)
            self.generic_visit(node)
            stack.pop()

        def visit_Call(self, node: ast.Call) -> None:
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in ("_hint", "hint") and not any(f.startswith("compare") for f in stack):
                starred = any(isinstance(a, ast.Starred) for a in node.args)   # hint(*pair): graded
                given = 2 if starred else len(node.args) + len(node.keywords)
                calls.append((node.lineno, stack[-1] if stack else "", given))
            self.generic_visit(node)

    Visitor().visit(ast.parse(path.read_text()))
    return calls


@pytest.mark.parametrize("path", EXERCISE_MODULES, ids=[p.stem for p in EXERCISE_MODULES])
def test_every_hint_in_a_check_is_graded(path):
    ungraded = [f"line {line} ({function})" for line, function, args in _hint_calls(path) if args < 2]
    assert not ungraded, f"{path.name}: hints without a smaller step: {', '.join(ungraded)}"
