"""make test's workers: every test file and lesson whole on one worker, the cases of CASES_APART spread."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _conftest(config: pytest.Config):
    here = str(HERE / "conftest.py")  # by file: `import conftest` may find tests/browser's
    return next(p for p in config.pluginmanager.get_plugins() if getattr(p, "__file__", None) == here)


def test_the_tests_whose_cases_run_apart_exist(request: pytest.FixtureRequest) -> None:
    """A renamed test would run whole on one worker again, unnoticed."""
    for prefix in _conftest(request.config).CASES_APART:
        path, name = prefix.rstrip("[").split("::")
        tree = ast.parse((HERE.parent / path).read_text())
        tests = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert name in tests, f"{prefix} names no test in {path}"


def test_a_lesson_stays_whole_and_the_leak_test_spreads_by_lesson(request: pytest.FixtureRequest,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("xdist")
    config = request.config
    monkeypatch.setattr(config.option, "dist", "loadfile", raising=False)
    monkeypatch.setattr(config.option, "tx", ["popen", "popen"], raising=False)
    monkeypatch.setattr(config.option, "maxworkerrestart", None, raising=False)
    scheduler = _conftest(config).pytest_xdist_make_scheduler(config=config, log=None)
    scope = scheduler._split_scope
    assert scope("lessons/00-start-here.ipynb::Cell 3") == scope("lessons/00-start-here.ipynb::Cell 9")
    assert scope("tests/test_records.py::test_a") == scope("tests/test_records.py::test_b")
    leak = "tests/test_gpu_live.py::test_rerunning_a_lesson_three_times_leaks_nothing"
    assert scope(f"{leak}[00-start-here]") != scope(f"{leak}[01-pin-host-memory]")
    assert scope("tests/test_gpu_live.py::test_experiments_run_live[latency]") == scope(
        "tests/test_gpu_live.py::test_experiments_run_live[stale_read]")
