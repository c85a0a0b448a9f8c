"""overlap-copies-with-streams's exercises: the double-buffered chunk loop, and the transfer time of the vector add
over the link.

``double_buffered_add`` runs on :class:`SimDriver`, a recording stand-in for ``pycuda.driver`` (in replay and
live alike): asynchronous work waits in its stream until the stream is synchronised, as on a GPU, and a model
of the engines (one copy engine each way, the SMs) finds chunks on two streams that use one buffer at the same
time. ``compare_prediction`` compares the learner's predicted speed-up of two streams over one with the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..i18n import N_, _
from . import Feedback, correct as _correct, hint as _hint, is_placeholder, not_yet as _not_yet
from .returns import returned_none

BLOCK = 256


# --------------------------------------------------------------------------- a recording GPU for the chunk loop
@dataclass(eq=False)
class DeviceBuffer:
    """One device buffer of the simulated GPU: ``size`` floats, NaN until written."""

    name: str
    size: int
    data: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.data = np.full(self.size, np.nan, np.float32)

    def __repr__(self) -> str:
        return f"<device buffer {self.name}>"


@dataclass
class Op:
    """One queued operation: its engine, stream, the buffers it reads and writes, its work, its modelled cost."""

    kind: str            # "H2D", "add", "D2H"
    stream: Any
    reads: tuple[DeviceBuffer, ...]
    writes: tuple[DeviceBuffer, ...]
    run: Callable[[], None]
    cost: float
    chunk: int = -1
    start: float = 0.0
    end: float = 0.0


class SimStream:
    """A stream of the simulated GPU: its work runs, in order, when it is synchronised."""

    def __init__(self, gpu: "SimDriver", number: int) -> None:
        self.gpu, self.number, self.pending = gpu, number, []

    def synchronize(self) -> None:
        self.gpu.log.append(("sync", self.number))
        for op in self.pending:
            op.run()
        self.pending = []

    def __repr__(self) -> str:
        return f"<stream {self.number}>"


class SimDriver:
    """The few names of ``pycuda.driver`` the chunk loop uses, recording every call (overlap-copies-with-streams's
    check)."""

    def __init__(self) -> None:
        self.streams: list[SimStream] = []
        self.ops: list[Op] = []
        self.log: list[tuple[str, Any]] = []
        self.problem: Feedback | None = None
        gpu = self

        class Context:
            @staticmethod
            def synchronize() -> None:
                gpu.log.append(("sync", "all"))
                for stream in gpu.streams:
                    stream.synchronize()

        self.Context = Context

    def Stream(self) -> SimStream:  # noqa: N802 (PyCUDA's spelling)
        stream = SimStream(self, len(self.streams))
        self.streams.append(stream)
        return stream

    def _enqueue(self, op: Op) -> None:
        if self.problem:
            return
        if op.stream is None:
            self.problem = _hint(_("a {kind} went to the default stream (no stream given). What does the legacy "
                                   "default stream do to the work of the other streams (section 2)?").format(
                                     kind=op.kind),
                                 _("it waits for every other stream and they wait for it, so nothing overlaps: "
                                   "pass the chunk's stream, memcpy_htod_async(dst, src, stream), add(..., "
                                   "stream=stream)."))
            return
        if not isinstance(op.stream, SimStream):
            self.problem = _hint(_("{stream!r} is not a stream. Where do the streams come from?").format(
                                     stream=op.stream),
                                 _("make two with drv.Stream() before the loop and pass one of them."))
            return
        self.ops.append(op)
        op.stream.pending.append(op)

    def _need(self, what: Any, kind: str, role: str) -> bool:
        if self.problem:
            return False
        if kind == "device" and not isinstance(what, DeviceBuffer):
            self.problem = _hint(_("the {role} must be a device buffer; you passed {name}. Which buffers live on "
                                   "the device here?").format(role=role, name=type(what).__name__),
                                 _("da, db and dc, from the chunk's buffer set buffers[i % 2]."))
        elif kind == "host" and not isinstance(what, np.ndarray):
            said = _("the {role} must be host memory; you passed {what!r}.")
            self.problem = _hint(said.format(role=role, what=what)[:400],
                                 _("pass a slice of a host array, such as a[first:last]."))
        elif kind == "host" and isinstance(what, np.ndarray) and what.dtype != np.float32:
            self.problem = _hint(_("the {role} is {dtype}, not float32. Where did the conversion come from?").format(
                                     role=role, dtype=what.dtype),
                                 _("copy slices of a, b and c themselves, with no astype or arithmetic on them."))
        return self.problem is None

    def memcpy_htod_async(self, dest: Any, src: Any, stream: Any = None) -> None:
        if isinstance(src, DeviceBuffer) and isinstance(dest, np.ndarray) and not self.problem:
            self.problem = _hint(_("the arguments of memcpy_htod_async are swapped. Which comes first in PyCUDA's "
                                   "copies, the destination or the source?"),
                                 _("memcpy_htod_async takes (device destination, host source, stream)."))
        if not (self._need(dest, "device", _("destination of memcpy_htod_async"))
                and self._need(src, "host", _("source of memcpy_htod_async"))):
            return
        if src.size > dest.size:
            self.problem = _hint(_("memcpy_htod_async copies {size} floats into a buffer of {size2}. How much of a "
                                   "does one chunk need on the device?").format(size=src.size, size2=dest.size),
                                 _("copy one chunk, a slice of a from first to last, not the whole array."))
            return
        view = src  # read when the copy runs, as a DMA engine would

        def run() -> None:
            dest.data[:view.size] = view

        self._enqueue(Op("H2D", stream, (), (dest,), run, 4.0 * src.size))

    def memcpy_dtoh_async(self, dest: Any, src: Any, stream: Any = None) -> None:
        if isinstance(dest, DeviceBuffer) and isinstance(src, np.ndarray) and not self.problem:
            self.problem = _hint(_("the arguments of memcpy_dtoh_async are swapped. Which comes first in PyCUDA's "
                                   "copies, the destination or the source?"),
                                 _("memcpy_dtoh_async takes (host destination, device source, stream)."))
        if not (self._need(dest, "host", _("destination of memcpy_dtoh_async"))
                and self._need(src, "device", _("source of memcpy_dtoh_async"))):
            return
        if dest.size > src.size:
            self.problem = _hint(_("memcpy_dtoh_async copies {size} floats out of a buffer of {size2}. Where in c "
                                   "does this chunk's result go?").format(size=dest.size, size2=src.size),
                                 _("copy one chunk back, into c[first:last]."))
            return

        def run() -> None:
            dest[:] = src.data[:dest.size]

        self._enqueue(Op("D2H", stream, (src,), (), run, 4.0 * dest.size))

    def add(self, da: Any, db: Any, dc: Any, n: Any, block: Any = None, grid: Any = None, stream: Any = None) -> None:
        """The simulated ``vector_add_kernel``: c[i] = a[i] + b[i] for i < n, for the threads the grid launches."""
        if self.problem:
            return
        for role, buf in ((N_("first"), da), (N_("second"), db), (N_("third"), dc)):
            if isinstance(buf, np.ndarray):
                self.problem = _hint(_("the {role} argument of add is a host array. Which memory does the kernel "
                                       "read and write in the copy path?").format(role=_(role)),
                                     _("the kernel works on the device buffers, add(da, db, dc, ...), after the "
                                       "copies put the chunk there."))
                return
            if not self._need(buf, "device", _("{role} argument of add").format(role=_(role))):
                return
        if not isinstance(n, np.int32):
            self.problem = _hint(_("you passed the element count as {name}. The kernel takes a 4-byte int: how "
                                   "does PyCUDA know to pack 4 bytes? (np.int32 is a sized NumPy integer.)").format(
                                     name=type(n).__name__),
                                 _("pass the chunk's element count wrapped as np.int32(...)."))
            return
        try:
            threads = int(np.prod(block)) * int(np.prod(grid))
        except TypeError:
            self.problem = _hint(_("add could not read the launch's shape. What do block= and grid= take?"),
                                 _("launch with block=(256, 1, 1) and grid=(blocks, 1), both tuples."))
            return
        count = min(int(n), threads, da.size, db.size, dc.size)

        def run() -> None:
            dc.data[:count] = da.data[:count] + db.data[:count]

        self._enqueue(Op("add", stream, (da, db), (dc,), run, 0.5 * int(n)))   # device memory: faster than the link

    # ------------------------------------------------------------------ the model of the engines
    def schedule(self, one_stream: bool = False) -> float:
        """Start and end of every op: in issue order, after its stream's previous op and its engine's (copy engines:
        one each way, as with ASYNC_ENGINE_COUNT = 2); returns the makespan. ``one_stream``: as if all were on one."""
        stream_free: dict[Any, float] = {}
        engine_free: dict[str, float] = {}
        end = 0.0
        for op in self.ops:
            key = 0 if one_stream else id(op.stream)
            start = max(stream_free.get(key, 0.0), engine_free.get(op.kind, 0.0))
            if not one_stream:
                op.start, op.end = start, start + op.cost
            stream_free[key] = engine_free[op.kind] = start + op.cost
            end = max(end, start + op.cost)
        return end

    def race(self) -> tuple[Op, Op] | None:
        """Two ops of different streams that overlap in the model and touch one buffer, one of them writing."""
        self.schedule()
        for i, x in enumerate(self.ops):
            for y in self.ops[i + 1:]:
                if x.stream is y.stream or y.start >= x.end or x.start >= y.end:
                    continue
                shared = (set(x.writes) & (set(y.reads) | set(y.writes))) | (set(y.writes) & set(x.reads))
                if shared:
                    return x, y
        return None


def _buffers(chunk: int) -> list[tuple[DeviceBuffer, DeviceBuffer, DeviceBuffer]]:
    return [tuple(DeviceBuffer(f"{name}{s}", chunk) for name in ("da", "db", "dc")) for s in (0, 1)]  # type: ignore[misc]


DB_CASES = ((10_000, 1_000), (10_500, 1_000), (4_096, 512))


def check_double_buffered_add(double_buffered_add: Callable[..., Any]) -> Feedback:
    """overlap-copies-with-streams: ``double_buffered_add(drv, add, a, b, c, chunk, buffers)`` computes c = a + b in
    chunks, each with
    two asynchronous copies in, a kernel and a copy out on its stream, chunk i on buffers[i % 2] and stream i % 2."""
    if is_placeholder(double_buffered_add):
        return _not_yet(_("define double_buffered_add(drv, add, a, b, c, chunk, buffers)."))
    ratio = 1.0
    for n, chunk in DB_CASES:
        a = np.arange(n, dtype=np.float32) % 1000
        b = np.full(n, 2.0, np.float32)
        c = np.full(n, -1.0, np.float32)
        drv = SimDriver()
        buffers = _buffers(chunk)
        result = double_buffered_add(drv, drv.add, a, b, c, chunk, buffers)
        if drv.problem:
            return drv.problem
        if not drv.ops and not drv.streams:
            if is_placeholder(result):
                return _not_yet(_("double_buffered_add does nothing yet: make two streams with drv.Stream(), then "
                                  "loop over the chunks."))
            return _hint(_("double_buffered_add queued no work. What must happen to each chunk?"),
                         _("for each chunk, memcpy_htod_async a and b, add, memcpy_dtoh_async c, on the chunk's "
                           "stream."))
        used = {id(op.stream) for op in drv.ops}
        if not any(op.kind == "add" for op in drv.ops):
            return _hint(_("no kernel was launched. Which step computes the chunk's sums?"),
                         _("call add(da, db, dc, np.int32(m), block=(256, 1, 1), grid=(blocks, 1), stream=stream) "
                           "for each chunk."))
        if len(drv.streams) > 2:
            return _hint(_("you made {n_streams} streams. How many streams does double buffering need, and when "
                           "should they be made?").format(n_streams=len(drv.streams)),
                         _("make two, once, before the loop, and alternate them (a stream per chunk also breaks "
                           "the pairing of streams with buffer sets)."))
        pending = sum(len(s.pending) for s in drv.streams)
        if pending:
            if not any(kind == "sync" for kind, _ in drv.log):
                return _hint(_("no synchronisation. Is c written when an asynchronous copy call returns?"),
                             _("asynchronous copies return at once: wait for both streams at the end (each "
                               "stream's synchronize method)."))
            return _hint(_("{pending} operations were still queued when your function returned. Did you wait for "
                           "every stream you used?").format(pending=pending),
                         _("synchronise every stream, not only one: call each stream's synchronize method."))
        race = drv.race()
        if race:
            x, y = race
            return _hint(_("two streams use one device buffer at the same time ({kind} on {stream!r} and {kind2} "
                           "on {stream2!r}). Which buffer set may a stream reuse safely, and when?").format(
                             kind=x.kind, stream=x.stream, kind2=y.kind, stream2=y.stream),
                         _("chunk i must use buffers[i % 2] with stream i % 2, so that a stream reuses only its "
                           "own buffer set, after its previous chunk is done."))
        if not np.array_equal(c, a + b):
            wrong = np.flatnonzero(c != a + b)
            first = int(wrong[0])
            if np.all(c[first:] == -1.0) and first % chunk == 0:
                return _hint(_("c is unwritten from element {first} of {n} on: the last, partial chunk is missing. "
                               "Does your loop reach the end when n is not a multiple of chunk?").format(
                                 first=first, n=n),
                             _("loop over the chunk starts up to n, range(0, n, chunk), and cut the last chunk "
                               "short at n."))
            if np.all(c[wrong] == -1.0) or np.any(np.isnan(c)):
                pos = first % chunk
                if pos and pos % BLOCK == 0:
                    return _hint(_("element {first} (position {pos} of its chunk) was never computed: the grid has "
                                   "too few blocks. How many blocks of {BLOCK} cover a chunk of m when m is not a "
                                   "multiple of {BLOCK}? Round up, not down.").format(
                                     first=first, pos=pos, BLOCK=BLOCK),
                                 _("a whole number of blocks that covers m is m / {BLOCK} rounded up; in integers, "
                                   "add {BLOCK2} before the `//`.").format(BLOCK=BLOCK, BLOCK2=BLOCK - 1))
                return _hint(_("c is wrong from element {first} (NaN or unwritten). In one stream, in which order "
                               "must the copies in, the kernel and the copy out be issued?").format(first=first),
                             _("within a stream, the copies of a and b in must come before add, and the copy of c "
                               "out after it."))
            return _hint(_("c differs from a + b at {size} of {n} elements (first at {first}). Which slice does "
                           "each copy move, and in which order?").format(size=wrong.size, n=n, first=first),
                         _("each chunk's copies use the same slice [first:last] of a, b and c, in the order copy "
                           "in, add, copy out."))
        if len(used) < 2:
            return _hint(_("c is right, but all the work went to one stream, so it runs one operation after "
                           "another. How do two streams overlap a chunk's copy out with the next chunk's copies in?"),
                         _("put chunk i on stream i % 2 (two streams, made once, before the loop)."))
        ratio = drv.schedule() / drv.schedule(one_stream=True)
    return _correct(_("each stream runs copy in, add, copy out in order, and the two streams with their own buffer "
                      "sets overlap one chunk's copy out with the next chunk's copies in. On the check's model of "
                      "the engines (one copy engine each way) your loop takes {ratio:.2f} of the time it takes on "
                      "one stream.").format(ratio=ratio))


# --------------------------------------------------------------------------- transfer time over the link
def transfer_seconds_rule(n: int, link_GBps: float, both_directions: bool) -> float:
    """Seconds to move the vector add's a and b in (8n bytes) and c out (4n bytes) at link_GBps per direction."""
    return (8 * n if both_directions else 12 * n) / (link_GBps * 1e9)


TRANSFER_CASES = ((1 << 20, 55.0), (1 << 26, 25.0), (3000, 12.5))


def check_transfer_seconds(transfer_seconds: Callable[[int, float, bool], float], *, measured: Any = None,
                           link_GBps: float | None = None) -> Feedback:
    """overlap-copies-with-streams: ``transfer_seconds(n, link_GBps, both_directions)``; with ``measured``
    (``end_to_end``) and the
    measured ``link_GBps``, the message compares the model with the largest size's rows."""
    if is_placeholder(transfer_seconds):
        return _not_yet(_("define transfer_seconds(n, link_GBps, both_directions) returning seconds."))
    for n, rate in TRANSFER_CASES:
        got = {both: transfer_seconds(n, rate, both) for both in (False, True)}
        forgot = returned_none(transfer_seconds, got[False] if got[False] is None else got[True],
                               _("both_directions={both}").format(both=got[False] is not None))
        if forgot is not None:
            return forgot
        if any(is_placeholder(v) for v in got.values()):
            return _not_yet(_("transfer_seconds returns `None`: replace its `...` with the seconds."))
        if not all(isinstance(v, (int, float, np.floating, np.integer)) for v in got.values()):
            return _hint(_("return a number of seconds; you returned {value!r}.").format(value=got[False]),
                         _("compute the bytes, divide by the bytes per second, and return that number."))
        want = {both: transfer_rule for both, transfer_rule in
                ((b, transfer_seconds_rule(n, rate, b)) for b in (False, True))}
        ok = {both: np.isclose(got[both], want[both], rtol=1e-6) for both in (False, True)}
        if all(ok.values()):
            continue
        for both in (False, True):
            if ok[both]:
                continue
            g, w = float(got[both]), want[both]
            way = _("both directions at once") if both else _("one direction at a time")
            if np.isclose(g * 4, w, rtol=1e-6):
                return _hint(_("{way}: your time is a quarter of the right one. How many bytes is one element?").format(
                                 way=way),
                             _("n counts floats; each is 4 bytes."))
            if np.isclose(g, w * 1e3, rtol=1e-6):
                return _hint(_("{way}: you returned milliseconds. Where does your code scale the result?").format(
                                 way=way),
                             _("return seconds: bytes / (bytes per second) already is."))
            if np.isclose(g, w * 1e9 / 2**30, rtol=1e-6):
                return _hint(_("{way}: GB/s means 10^9 bytes per second, not 2^30. How many bytes per second is "
                               "one GB/s?").format(way=way), _("multiply link_GBps by 1e9, not 2**30."))
            if not both and np.isclose(g, w * 8 / 12, rtol=1e-6):
                return _hint(_("one direction at a time: what crosses the link in the copy path, besides a and b? "
                               "That is 12 bytes per element, not 8."),
                             _("c comes back out too: a and b in, then c out, all one after the other."))
            if both and np.isclose(g, w * 12 / 8, rtol=1e-6):
                return _hint(_("both directions at once: you counted all 12 bytes per element in turn. With the "
                               "two directions working together, which one sets the time: the busier one, or their "
                               "sum?"),
                             _("each direction carries its own bytes at link_GBps at the same time: the time is "
                               "that of the busier direction."))
            if both and np.isclose(g, w * 6 / 8, rtol=1e-6):
                return _hint(_("both directions at once: the two directions do not carry half each. Which arrays "
                               "go in, and which comes out?"),
                             _("a and b (8 bytes per element) go in, c (4 bytes) comes out: the time is that of "
                               "the busier direction."))
            if both and np.isclose(g, w * 4 / 8, rtol=1e-6):
                return _hint(_("both directions at once: the time is set by the busier direction, not by c's 4 "
                               "bytes out. Which direction carries more?"),
                             _("the inbound direction carries a and b: 8 bytes per element."))
            return _hint(_("{way}, n = {n}, {rate} GB/s: you returned {g:.4g} s. How many bytes cross the link, in "
                           "which direction, and which direction sets the time?").format(way=way, n=n, rate=rate, g=g),
                         _("the model gives {w:.4g} s there: bytes over the link divided by link_GBps * 1e9, per "
                           "direction.").format(w=w))
    extra = ""
    if measured is not None and link_GBps:
        n = max(int(v) for v in measured.column("n"))
        copy = float(np.median(measured.one(method="copy", n=n)["seconds"]))
        zero = float(np.median(measured.one(method="zero_copy", n=n)["seconds"]))
        extra = (_(" At n = 2^{bit_length} with this run's {link_GBps:.1f} GB/s, it gives {transfer_seconds:.2f} "
                   "ms one way at a time (measured copy path {copy:.2f} ms) and {transfer_seconds2:.2f} ms both "
                   "ways at once (measured zero-copy {zero:.2f} ms).").format(
                     bit_length=n.bit_length() - 1, link_GBps=link_GBps, transfer_seconds=transfer_seconds(n, link_GBps, False) * 1e3, copy=copy * 1e3, transfer_seconds2=transfer_seconds(n, link_GBps, True) * 1e3, zero=zero * 1e3))
    return _correct(_("one direction at a time, all 12 bytes per element cross in turn; both at once, the inbound "
                      "8 bytes set the pace, so overlap can save at most a third.") + extra)


# --------------------------------------------------------------------------- predict, then measure
def two_stream_speedup(pipelined: Any) -> float:
    """Time on one stream / time double-buffered on two (``out_of_core``), each at its fastest budget."""
    def best(method: str) -> float:
        return min(float(np.median(r["seconds"])) for r in pipelined.rows if r["method"] == method)

    return best("chunked") / best("chunked_overlap")


def compare_prediction(predicted: Any, measured: Any, bytes_in: int = 8, bytes_out: int = 4) -> str:
    """overlap-copies-with-streams: the predicted speed-up of double buffering on two streams over one stream,
    against the run: ``measured`` is the speed-up, or the ``out_of_core`` result it comes from."""
    if hasattr(measured, "rows"):
        measured = two_stream_speedup(measured)
    ideal = (bytes_in + bytes_out) / max(bytes_in, bytes_out)
    bound = (_("When the copies dominate, one stream moves all {bytes_in} bytes per element in turn; two streams "
               "can at best hide the smaller direction under the larger, so the bound is {bytes_in}/{max_bytes_in} "
               "= {ideal:.2f}x (less the pipeline's first and last chunks; a little more when the kernels, which "
               "also hide under the copies, take long).").format(
                 bytes_in=bytes_in + bytes_out, max_bytes_in=max(bytes_in, bytes_out), ideal=ideal))
    if is_placeholder(predicted):
        return (_("You made no prediction (predicted_speedup is still `...`). Measured, each at its fastest "
                  "budget: two streams took 1/{measured:.2f} of one stream's time, a speed-up of {measured:.2f}x. "
                  "{bound}").format(measured=measured, bound=bound))
    try:
        guess = float(predicted)
    except (TypeError, ValueError):
        return _("Write your prediction as a number, e.g. 1.2 (you wrote {predicted!r}). Measured: {measured:.2f}x.").format(
                   predicted=predicted, measured=measured)
    if not guess > 0:
        return _("A speed-up is a positive number of times (you wrote {guess}). Measured: {measured:.2f}x. {bound}").format(
                   guess=guess, measured=measured, bound=bound)
    text = _("You predicted {guess:.2f}x; the run measured {measured:.2f}x. ").format(guess=guess, measured=measured)
    if abs(guess - measured) <= 0.1 * measured:
        return text + _("Close. ") + bound
    if guess > ideal * 1.02:
        return text + (_("You expected more than overlap can give: it hides work, it does not make the link "
                         "faster. ") + bound)
    if guess < measured:
        return text + (_("Overlap gave more than you expected: on two streams one chunk's copy out runs in the "
                         "other direction of the link while the next chunk's copies come in, and the kernels hide "
                         "under the copies. ") + bound)
    return text + (_("Less than you expected: the inbound direction carries two thirds of the bytes whatever the "
                     "streams do. ") + bound)


CHECKS = {"double_buffered_add": check_double_buffered_add, "transfer_seconds": check_transfer_seconds}
