"""Headline figures of a record: your GPU against the reference (keep-enough-bytes-in-flight, ``python -m helpers
summary``)."""

from __future__ import annotations

import math
from typing import Any

from ..i18n import _
from ..records import Record


def _rows(record: Record, name: str) -> list[dict[str, Any]]:
    return record["experiments"].get(name, {}).get("rows", [])


def _best(rows: list[dict[str, Any]], key: str, **where: Any) -> float | None:
    values = [row[key] for row in rows if all(row.get(k) == v for k, v in where.items())]
    return max(values) if values else None


def headline(record: Record) -> dict[str, Any]:
    """The figures that sum a record up; absent experiments give None.

    Each bandwidth is the best median over the sizes and kernel variants the record holds (for
    pageable copies that is often a mid-sized copy, not the largest); each ratio compares two
    figures of the same record, i.e. of the same run.
    """
    memcpy = _rows(record, "memcpy")
    streams = _rows(record, "kernel_bandwidth")
    inflight = _rows(record, "inflight")
    # the zero-copy chase over a table the CPU's caches no longer hold (older records have one row)
    latency = {row["memory"]: row["load_ns"] for row in _rows(record, "latency")
               if row.get("cpu_cache", "evicted") == "evicted"}
    caching = _rows(record, "caching")
    small = max((row["nbytes"] for row in caching if row.get("load")), default=None)
    reads = [v for v in (_best(streams, "GBps", memory="zero_copy", op="read"), _best(inflight, "GBps"))
             if v is not None]
    figures: dict[str, Any] = {
        "gpu": record["provenance"]["gpu"],
        "date": record["provenance"]["date"],
        "zero_copy_read_GBps": max(reads) if reads else None,
        "zero_copy_write_GBps": _best(streams, "GBps", memory="zero_copy", op="write"),
        "memcpy_htod_pinned_GBps": _best(memcpy, "GBps", direction="htod", host_memory="pinned"),
        "memcpy_dtoh_pinned_GBps": _best(memcpy, "GBps", direction="dtoh", host_memory="pinned"),
        "memcpy_htod_pageable_GBps": _best(memcpy, "GBps", direction="htod", host_memory="pageable"),
        "memcpy_dtoh_pageable_GBps": _best(memcpy, "GBps", direction="dtoh", host_memory="pageable"),
        "device_read_GBps": _best(streams, "GBps", memory="device", op="read"),
        "device_write_GBps": _best(streams, "GBps", memory="device", op="write"),
        "zero_copy_latency_ns": latency.get("zero_copy"),
        "device_latency_ns": latency.get("device"),
        "l2_latency_ns": latency.get("l2"),
        # a small mapped buffer re-read by the blocks that read it first: through the SM's read-only/L1
        # path (__ldg), then through the L2 only (__ldcg)
        "zero_copy_reread_ldg_GBps": _best(caching, "delivered_GBps", memory="zero_copy", load="ldg",
                                           pattern="same_sm", nbytes=small),
        "zero_copy_reread_ldcg_GBps": _best(caching, "delivered_GBps", memory="zero_copy", load="ldcg",
                                            pattern="same_sm", nbytes=small),
    }
    if figures["zero_copy_read_GBps"] and figures["memcpy_htod_pinned_GBps"]:
        figures["zero_copy_read_over_memcpy_htod"] = figures["zero_copy_read_GBps"] / figures["memcpy_htod_pinned_GBps"]
    if figures["zero_copy_write_GBps"] and figures["memcpy_dtoh_pinned_GBps"]:
        figures["zero_copy_write_over_memcpy_dtoh"] = figures["zero_copy_write_GBps"] / figures["memcpy_dtoh_pinned_GBps"]
    return figures


def _without_unit(label: str) -> str:
    """A headline label in the chosen language, less its unit after the last comma ("pageable memcpy HtoD")."""
    said = _(label)
    cut = max(said.rfind(", "), said.rfind("，"))
    return said[:cut] if cut > 0 else said


def gap_sentence(mine: dict[str, Any], reference: dict[str, Any], labels: list[tuple[str, str]], *,
                 live: bool) -> str:
    """What the last column of keep-enough-bytes-in-flight's table shows, computed from the same two
    :func:`headline` dicts so that it agrees with the table live and in replay: the ratio furthest from 1, where
    the others lie, and what such a ratio means in this mode. ``labels`` are (key, label) pairs; a label's unit,
    after its last comma, is dropped."""
    ratios = {_without_unit(label): mine[key] / reference[key] for key, label in labels
              if mine.get(key) and reference.get(key)}
    if not ratios:
        return _("The two runs share no headline figure, so there is nothing to compare.")
    if not live and mine["date"] == reference["date"]:
        return _("Both columns come from the one recorded run there is, so every ratio is 1.")
    far = max(ratios, key=lambda name: abs(math.log(ratios[name])))
    rest = [ratio for name, ratio in ratios.items() if name != far]
    others = _("; the other {count} lie between {low:.2f}x and {high:.2f}x").format(
        count=len(rest), low=min(rest), high=max(rest)) if rest else ""
    found = _("Furthest from 1: {far}, at {ratio:.2f}x the reference{others}.").format(
        far=far, ratio=ratios[far], others=others)
    if live:
        return _("{found} A ratio far from 1 means that your system differs from the reference (a Gen4 link "
                 "carries about half of Gen5's rate, for example) or that a measurement went wrong; the figures above "
                 "show which.").format(found=found)
    return _("In replay both columns are recorded {gpu} runs ({mine} against {reference}), so the last column is "
             "how far the recorded figures moved between two runs, not your system against the reference. "
             "{found}").format(gpu=reference["gpu"], mine=mine["date"][:10], reference=reference["date"][:10],
                               found=found)
