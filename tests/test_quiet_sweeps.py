"""The quiet-sweep rule (issue 19): a sweep a lesson's conclusion rests on has >= 9 repeats and
reads >= 256 MiB (or >= 20 ms a repeat). Table: helpers/experiments/quiet.py."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import pytest

from helpers import experiments
from helpers.experiments import quiet

LESSONS = Path(__file__).resolve().parents[1] / "lessons"


def _defaults(name: str) -> dict:
    signature = inspect.signature(experiments.ALL[name])
    return {k: p.default for k, p in signature.parameters.items() if p.default is not inspect.Parameter.empty}


def _constant(node: ast.AST) -> object:
    """The value of a literal expression such as ``[1 << 28]`` or ``9``; ValueError otherwise."""
    allowed = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.List, ast.Tuple, ast.operator, ast.unaryop, ast.Load)
    if not all(isinstance(n, allowed) for n in ast.walk(node)):
        raise ValueError(ast.unparse(node))
    return eval(compile(ast.Expression(node), "<lesson>", "eval"), {"__builtins__": {}})


def _lesson_calls(name: str) -> list[tuple[str, dict]]:
    """(lesson file, the arguments it passes) for every ``experiments.<name>(...)`` call in a lesson's code."""
    calls = []
    for path in sorted(LESSONS.glob("[0-9][0-9]-*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            try:
                tree = ast.parse("".join(cell["source"]))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name \
                        and isinstance(node.func.value, ast.Name) and node.func.value.id == "experiments":
                    calls.append((path.name, {k.arg: _constant(k.value) for k in node.keywords if k.arg}))
    return calls


@pytest.mark.parametrize("name", sorted(quiet.QUIET_SWEEPS))
def test_sweep_defaults_are_quiet(name: str) -> None:
    assert name in experiments.ALL, f"{name} is in QUIET_SWEEPS but is no experiment"
    assert quiet.violations(name, _defaults(name)) == []


@pytest.mark.parametrize("name", sorted(quiet.QUIET_SWEEPS))
def test_lessons_call_sweeps_quietly(name: str) -> None:
    """A lesson that passes its own sizes or repeats to a sweep keeps to the rule too."""
    broken = [(lesson, quiet.violations(name, {**_defaults(name), **args})) for lesson, args in _lesson_calls(name)]
    assert [b for b in broken if b[1]] == []


@pytest.mark.parametrize("name", sorted(quiet.PENDING))
def test_pending_sweeps(name: str) -> None:
    """Sweeps another change owns: expected to break the rule until it lands, then move into QUIET_SWEEPS."""
    if name not in experiments.ALL or quiet.violations(name, _defaults(name), quiet.PENDING[name]):
        pytest.xfail(f"{name} does not meet the quiet-sweep rule yet: "
                     f"{quiet.violations(name, _defaults(name), quiet.PENDING[name]) if name in experiments.ALL else 'absent'}")
    pytest.fail(f"{name} now meets the quiet-sweep rule: move it from PENDING into QUIET_SWEEPS "
                "(helpers/experiments/quiet.py)")


def test_rule_catches_a_loud_sweep() -> None:
    assert quiet.violations("stride", {"repeats": 5, "nbytes": 16 << 20})  # the old default
    assert quiet.violations("memcpy", {"repeats": 9, "sizes": [4096, 1 << 20]})
    assert quiet.violations("inflight", {"repeats": 9, "nbytes": 256 << 20, "min_seconds": 0.001})
    assert not quiet.violations("memcpy", {"repeats": 9, "sizes": [4096, 1 << 28]})


def test_row_check() -> None:
    loud = {"memory": "zero_copy", "stride": 1, "count": 1 << 22, "seconds": [4e-4] * 5}
    assert quiet.row_violations("stride", [loud])
    long_enough = {"kernel": "read_float4", "threads": 32, "nbytes": 8 << 20, "seconds": [0.03] * 9}
    assert not quiet.row_violations("inflight", [long_enough])
    assert quiet.row_violations("inflight", [{**long_enough, "seconds": [0.03] * 8}])


def test_counters_profile_every_zero_copy_point_of_the_sweeps_the_model_is_judged_on() -> None:
    """Lesson 10 checks its counts launch by launch: the counters must cover the same patterns as the sweeps."""
    import importlib

    from helpers.experiments import access

    counters = importlib.import_module("helpers.experiments.counters")
    profiled = {(p["kernel"], p["stride"], p["offset_floats"]) for p in counters.default_patterns()}
    swept = {("read_strided", s, 0) for s in access.STRIDES} | {("read_strided", 1, o) for o in access.OFFSETS}
    swept |= {("read_strided", 1, 0), ("read_strided_float4", 1, 0)}  # vector_width's two kernels
    assert profiled == swept
    for p in counters.default_patterns():  # each launch reads across the same bytes, whatever the stride
        span = p["count"] * p["stride"] * (16 if p["kernel"].endswith("float4") else 4)
        assert counters.NBYTES - 4 * p["stride"] < span <= counters.NBYTES


@pytest.mark.parametrize("probe_seconds, expected_mib", [(0.010, 12), (0.040, 4), (0.0001, 256)])
def test_inflight_rows_read_enough_for_min_seconds(monkeypatch, probe_seconds, expected_mib) -> None:
    """A slow row (few threads) reads fewer bytes, but enough for min_seconds by the probe; a fast one reads nbytes."""
    from helpers.experiments import transfer
    from helpers.memory.timing import Timing

    launched = []
    monkeypatch.setattr(transfer, "time_gpu", lambda work, **_: (work(), Timing((probe_seconds,)))[1])
    size = transfer._row_size(launched.append, 256 << 20, 0.025, 1 << 20)
    assert launched == [transfer.INFLIGHT_PROBE]  # the probe launch
    assert size == expected_mib << 20
    assert size == 256 << 20 or size / transfer.INFLIGHT_PROBE * probe_seconds >= 0.025  # >= min_seconds at the probe's rate


def test_a_sweep_over_fresh_allocations_counts_its_repeats_on_every_allocation() -> None:
    from helpers.experiments import quiet

    base = {"repeats": 3, "nbytes": 1 << 30}
    assert quiet.violations("stride", {**base, "allocations": 3}) == []
    assert quiet.violations("stride", {**base, "allocations": 2})  # 6 repeats in all: too few
    assert quiet.violations("stride", base)  # 3 repeats on one allocation
