"""Sweeps timed over fresh allocations (helpers.memory.timing.time_gpu_rounds_over, coalesce-and-align-accesses):
every point on every buffer, the rotated rounds taken in turns, each allocation's median kept. The GPU timing itself
is replaced by a made-up one here: what is tested is the bookkeeping, which runs the same live."""

from __future__ import annotations

from contextlib import contextmanager

import pytest

from helpers.experiments.buffers import seconds_row
from helpers.memory import timing


def test_rounds_over_allocations_take_every_rotated_round_once_and_label_each_repeat(monkeypatch) -> None:
    orders, made, freed = [], [], []

    def fake_rounds(works, *, repeats, warmup, order, t0):
        orders.append([list(v) for v in order])
        buffer = made[-1]
        # point i on buffer b takes (i + 1) + b / 10 seconds, a little more each round
        return [timing.RoundTiming(tuple(i + 1 + buffer / 10 + r / 1000 for r in range(len(order))),
                                   tuple(0.0 for _ in order)) for i, _ in enumerate(works)]

    @contextmanager
    def allocate():
        made.append(len(made))
        yield made[-1]
        freed.append(made[-1])

    monkeypatch.setattr(timing, "time_gpu_rounds", fake_rounds)
    result = timing.time_gpu_rounds_over(allocate, lambda buffer: [lambda: None] * 4, allocations=3, repeats=3)
    assert made == freed == [0, 1, 2]                       # each buffer made, used and freed in turn
    assert [visit for order in orders for visit in order] == timing.rounds(4, 9)
    assert all(len(order) == 3 for order in orders)
    first = result[0]
    assert first.allocation == (0, 0, 0, 1, 1, 1, 2, 2, 2) and len(first.seconds) == 9
    assert first.allocation_medians() == pytest.approx((1.001, 1.101, 1.201))
    row = seconds_row(first, stride=1)
    assert row["allocation"] == list(first.allocation)
    assert row["allocation_seconds"] == pytest.approx([1.001, 1.101, 1.201])
