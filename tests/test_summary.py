"""The sentence under lesson 08's table is computed from the figures it describes (summary.gap_sentence)."""

from helpers.analysis import summary

LABELS = [("a_GBps", "pageable memcpy HtoD, GB/s"), ("b_GBps", "pinned memcpy HtoD, GB/s"), ("c_ns", "latency, ns")]


def figures(date, a, b, c):
    return {"gpu": "NVIDIA H200", "date": date, "a_GBps": a, "b_GBps": b, "c_ns": c}


def test_the_sentence_names_the_ratio_furthest_from_1_and_where_the_rest_lie():
    old, new = figures("2026-12-02T11:00:00", 4.4, 55.1, 1212.0), figures("2026-12-04T02:00:00", 12.2, 55.2, 1100.0)
    replay = summary.gap_sentence(new, old, LABELS, live=False)
    assert "pageable memcpy HtoD, at 2.77x" in replay and "between 0.91x and 1.00x" in replay
    assert "recorded NVIDIA H200 runs (2026-12-04 against 2026-12-02)" in replay and "your system differs" not in replay
    live = summary.gap_sentence(new, old, LABELS, live=True)
    assert "pageable memcpy HtoD, at 2.77x" in live and "your system differs" in live
    slower = summary.gap_sentence(figures("2026-12-04T02:00:00", 4.0, 20.0, 1200.0), old, LABELS, live=True)
    assert "Furthest from 1: pinned memcpy HtoD, at 0.36x" in slower   # a ratio below 1 counts as far as its inverse


def test_one_record_against_itself_and_no_shared_figure():
    one = figures("2026-12-04T02:00:00", 12.2, 55.2, 1100.0)
    assert "every ratio is 1" in summary.gap_sentence(one, one, LABELS, live=False)
    assert "nothing to compare" in summary.gap_sentence(one, {**one, "a_GBps": None, "b_GBps": None, "c_ns": None},
                                                        LABELS, live=True)
