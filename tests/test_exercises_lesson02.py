"""Lesson 02's exercises and prediction (issue 10): each typical wrong answer gets its specific hint; the checks
and the prediction's comparison work on the run's rows (recorded in replay).

tests/test_exercises.py covers the placeholder ("not yet") and the solution ("correct") generically.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from helpers import exercises, experiments
from helpers.tables import Text
from helpers.exercises import lesson02
from typical_wrong import Typical, fixed

NOTEBOOK = Path(__file__).resolve().parent.parent / "lessons" / "02-measure-what-pinning-buys.ipynb"


def _time(copies, direction, memory, nbytes, unit=1e9):
    return nbytes / (copies.one(direction=direction, host_memory=memory, nbytes=nbytes)["GBps"] * unit)


def _parts(nbytes, chunk, host, dma, unit=1e9):
    return nbytes // chunk, chunk / (host * unit), chunk / (dma * unit)


def test_the_checks_use_the_recorded_rows():
    copies = experiments.memcpy()
    feedback = exercises.check("02", "seconds_saved", lesson02.saved, copies=copies)
    assert feedback.correct and "this run's rows" in feedback.message, feedback
    feedback = exercises.check("02", "staged_seconds", lesson02.staged, copies=copies)
    assert feedback.correct and "measured pageable copy took" in feedback.message, feedback


def test_the_prediction_cell_and_its_comparison():
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    ids = [i for i, cell in enumerate(cells) if "predict" in cell["metadata"].get("tags", [])]
    assert len(ids) == 1
    after = "".join(s for cell in cells[ids[0] + 1:] for s in cell["source"])
    assert 'zc.exercises.compare("02", predicted_speedup, copies)' in after
    namespace: dict = {}
    exec("".join(cells[ids[0]]["source"]), namespace)
    copies = experiments.reference("memcpy")
    untouched = exercises.compare("02", namespace["predicted_speedup"], copies)
    assert isinstance(untouched, Text) and "no prediction" in untouched, untouched
    n = int(max(copies.column("nbytes")))
    measured = (copies.one(direction="htod", host_memory="pinned", nbytes=n)["GBps"]
                / copies.one(direction="htod", host_memory="pageable", nbytes=n)["GBps"])
    assert f"{measured:.1f}x" in untouched and "recorded" in untouched
    assert "within 25%" in lesson02.compare_prediction(measured, copies)
    across = lesson02.factor_across_records(n)
    assert across.words("x") in untouched
    inside = lesson02.compare_prediction(across.high, copies)
    assert across.words("x") in inside and ("inside the records' range" in inside or "within 25%" in inside)
    for guess, phrase in ((across.low / 3, "slower than you expected"), (across.high * 3, "faster than you expected"),
                          ("six", "a number"), (-1, "positive")):
        said = lesson02.compare_prediction(guess, copies)
        assert isinstance(said, Text) and phrase in said, said
    live = dataclasses.replace(copies, live=True)
    assert "live" in lesson02.compare_prediction(measured, live) and "recorded" not in lesson02.compare_prediction(
        measured, live)


# --------------------------------------------------------------------------- typical wrong answers
# This lesson's typical wrong answers, one list per exercise (typical_wrong.Typical says what each holds):
# tests/test_hints.py gives each to its check and requires a first hint that asks without the answer (and says
# its phrase, the mistake it names), then a smaller step, then the way to the solution. This is the lesson's one
# list of wrong answers: a new hint gets its entry here, not a test of its own.


def _seconds_saved_cases() -> list[tuple]:
    copies = lesson02._fixed_copies()
    return [(copies, n, d) for n in lesson02._SIZES for d in ("htod", "dtoh")]


TYPICAL: dict[tuple[str, str], list[Typical]] = {
    ("02", "seconds_saved"): [
        Typical(fixed(lambda c, n, d: _time(c, d, "pageable", n)), ("nbytes / (", '- one_copy("pinned")'),
                _seconds_saved_cases),
        Typical(fixed(lambda c, n, d: _time(c, d, "pinned", n) - _time(c, d, "pageable", n)),
                ("nbytes / (", '- one_copy("pinned")'), _seconds_saved_cases, phrase="sign is reversed"),
        Typical(fixed(lambda c, n, d: (_time(c, d, "pageable", n) - _time(c, d, "pinned", n)) * 1e3),
                phrase="not milliseconds"),
        Typical(fixed(lambda c, n, d: _time(c, d, "pageable", n, 2**30) - _time(c, d, "pinned", n, 2**30)),
                phrase="not 2^30"),
        Typical(fixed(lambda c, n, d: _time(c, d, "pageable", n) / _time(c, d, "pinned", n)), phrase="ratio"),
        # issue 35 (a Chinese reader's walk): GB/s taken for bytes per second, the 1e9 forgotten
        Typical(fixed(lambda c, n, d: _time(c, d, "pageable", n, 1) - _time(c, d, "pinned", n, 1)),
                phrase="10^9 times too large"),
        Typical(fixed(lambda c, n, d: n / ((c.one(direction=d, host_memory="pinned", nbytes=n)["GBps"]
                                            - c.one(direction=d, host_memory="pageable", nbytes=n)["GBps"]) * 1e9)),
                phrase="do not subtract"),
        Typical(fixed(lambda c, n, d: _time(c, "htod", "pageable", n) - _time(c, "htod", "pinned", n)),
                phrase="the htod rows"),
        Typical(fixed(lambda c, n, d: _time(c, "htoh", "host_memcpy", n) - _time(c, d, "pinned", n)),
                phrase="host_memcpy")],
    ("02", "staged_seconds"): [
        Typical(fixed(lambda n, c, hr, dr: n / (hr * 1e9) + n / (dr * 1e9)), ("(k - 1) * max(h, d)",),
                lambda: lesson02.STAGE_CASES, phrase="no overlap"),
        Typical(fixed(lambda n, c, hr, dr: n / (hr * 1e9) * 0.75), ("(k - 1) * max(h, d)",),
                lambda: lesson02.STAGE_CASES),
        Typical(fixed(lambda n, c, hr, dr: max(n / (hr * 1e9), n / (dr * 1e9))), phrase="fill and drain"),
        Typical(fixed(lambda n, c, hr, dr: (lambda k, h, d: h + d + k * max(h, d))(*_parts(n, c, hr, dr))),
                phrase="off-by-one"),
        Typical(fixed(lambda n, c, hr, dr: (lambda k, h, d: h + d + (k - 1) * min(h, d))(*_parts(n, c, hr, dr))),
                phrase="not min"),
        Typical(fixed(lambda n, c, hr, dr: (lambda k, h, d: h + d + (k - 1) * max(h, d))(
            *_parts(n, c, hr, dr, 2**30))), phrase="10^9"),
        Typical(fixed(lambda n, c, hr, dr: 1e3 * lesson02.staged(n, c, hr, dr)), phrase="not milliseconds")],
}
