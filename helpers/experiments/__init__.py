"""One function per experiment; each returns a :class:`Result` (which lessons use which: helpers.lessons).

Live, the function measures on this machine's GPU. In replay mode the same call returns the
rows recorded on a real GPU by ``python -m helpers record`` and says so in
:meth:`Result.describe`. ``python -m helpers record`` runs every function in :data:`ALL`.
"""

from __future__ import annotations

from typing import Callable

from .result import FigureCheckError, Result, check_figure, expect, reference, run
from .transfer import caching, inflight, kernel_bandwidth, memcpy
from .latency import latency, latency_footprint, loaded_latency
from .access import offset, stride, vector_width
from .end_to_end import end_to_end, out_of_core, reuse
from .sparse import read_once_strided
from .mapping import address_identity, pagemap_pinned, pass_by_value, registered, write_combined
from .hazards import atomics, handshake, spin_loop, stale_read
from .sass import spin_sass  # a listing, not a measurement: not in ALL, kept in data/sass/
from .counters import counters
from .contexts import contexts
from .platforms import cpu_traffic, managed, numa_topology, pageable_access, read_only_registration

ALL: dict[str, Callable[..., Result]] = {
    function.__name__: function
    for function in (
        memcpy, kernel_bandwidth, inflight, caching, latency, latency_footprint, loaded_latency,
        stride, offset, vector_width, counters,
        end_to_end, reuse, out_of_core, read_once_strided, address_identity, pagemap_pinned, write_combined,
        registered, stale_read, atomics, handshake, spin_loop, pass_by_value,
        managed, cpu_traffic, read_only_registration, pageable_access, numa_topology, contexts,
    )
}

# Experiments added after the reference record: replayed from a record without them, each returns a model computed
# from that record and labelled as one (helpers/experiments/sparse.py), until `python -m helpers record` adds it.
MODELLED_UNTIL_RECORDED: tuple[str, ...] = ("read_once_strided",)

__all__ = ["ALL", "MODELLED_UNTIL_RECORDED", "FigureCheckError", "Result", "check_figure", "expect", "reference",
           "run", *ALL]
