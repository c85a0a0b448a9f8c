"""The value every experiment returns, and the one place that chooses live or replay."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

import numpy as np

from .. import records
from ..errors import CourseError, RecordError
from ..i18n import N_, _, sentences
from ..mode import detect
from ..tables import Table, Text, bullets, column_name

Row = dict[str, Any]


@dataclass
class Result:
    """An experiment's parameters and rows, and where they came from."""

    name: str
    params: dict[str, Any]
    rows: list[Row]
    live: bool
    provenance: dict[str, Any] = field(default_factory=dict)
    record_file: str | None = None
    # live only: processes outside the course seen on the GPU while it ran (None: NVML could not say)
    other_gpu_processes: list[dict[str, Any]] | None = None
    # replayed although the mode is live: why (the class setting, :func:`class_replay_reason`)
    replay_reason: str = ""
    # shown from the instructor's record of this GPU (the class setting): the local time it was measured, HH:MM
    class_record: str = ""

    def select(self, **where: Any) -> list[Row]:
        """Rows whose fields equal every ``key=value`` given."""
        return [row for row in self.rows if all(row.get(k) == v for k, v in where.items())]

    def column(self, key: str, **where: Any) -> np.ndarray:
        """One field of the selected rows, as an array."""
        return np.array([row[key] for row in self.select(**where)])

    def one(self, **where: Any) -> Row:
        """The single row that matches; an error if none or several do."""
        rows = self.select(**where)
        if len(rows) != 1:
            raise LookupError(f"{len(rows)} rows of {self.name!r} match {where}, expected exactly one.")
        return rows[0]

    def need(self, **where: Any) -> Row:
        """The first row that matches; when a replayed record predates that row, a :class:`RecordError` that says how to
        record it (use-write-combined-and-registered-memory). Experiments that keep one row per repeat have several."""
        rows = self.select(**where)
        if not rows and not self.live:
            raise RecordError(
                f"data/{self.record_file} has no row of '{self.name}' with {where}: it was recorded before "
                f"this row existed. On a GPU, run `python -m helpers record --only {self.name}`."
            )
        if not rows:
            raise LookupError(f"0 rows of {self.name!r} match {where}.")
        return rows[0]

    @property
    def gpu(self) -> str:
        return str(self.provenance.get("gpu", "unknown GPU"))

    def origin(self, dated: bool = False) -> str:
        """Where the figures come from, in a few words for a caption: "live on <GPU>" or "recorded on <GPU>"; with
        ``dated``, "measured live on <GPU>" or "recorded on <GPU> on <date>"."""
        if self.live:
            return (_("measured live on {gpu}") if dated else _("live on {gpu}")).format(gpu=self.gpu)
        if self.class_record:
            return _("measured on this GPU at {time} by the instructor's run").format(time=self.class_record)
        if dated:
            return _("recorded on {gpu} on {date}").format(gpu=self.gpu,
                                                           date=str(self.provenance.get("date", "?"))[:10])
        return _("recorded on {gpu}").format(gpu=self.gpu)

    def describe(self) -> str:
        """One sentence that says where the numbers come from."""
        if self.live:
            return (_("{name}: measured live on {gpu} just now.").format(name=self.name, gpu=self.gpu)
                    + self._contention_note())
        p = self.provenance
        if self.class_record:
            return (_("{name}: measured on this GPU ({gpu}) at {time} by the instructor's run ({file}), shown "
                      "to the whole class.").format(name=self.name, gpu=self.gpu, time=self.class_record,
                                                    file=self.record_file)
                    + (f" {self.replay_reason}" if self.replay_reason else ""))
        said = _("{name}: REPLAY of a measurement recorded on {gpu} on {date} (driver {driver}, CUDA {cuda}, "
                 "PyCUDA {pycuda}; data/{file}), not on this machine.").format(
            name=self.name, gpu=self.gpu, date=p.get("date", "?")[:10], driver=p.get("driver_version"),
            cuda=p.get("cuda_version"), pycuda=p.get("pycuda_version"), file=self.record_file)
        return sentences(said, self.replay_reason or "")


    def table(self, columns: list[str] | None = None, *, limit: int = 24, **where: Any) -> Table:
        """The selected rows as a :class:`Table`: the given ``columns``, or every field that holds one value (lists of
        repeats are summed up by their median); at most ``limit`` rows, the rest counted in the caption."""
        rows = self.select(**where)
        if columns is None:
            columns = [key for key in (rows[0] if rows else {}) if not isinstance(rows[0][key], dict)]
        shown = [[_shown(row.get(key)) for key in columns] for row in rows[:limit]]
        more = (_("; {count} more rows: `.select(...)` or `.table(limit=...)`").format(count=len(rows) - limit)
                if len(rows) > limit else "")
        return Table([_header(key, rows) for key in columns], shown,
                     caption="*" + _("{count} rows").format(count=len(rows)) + f"{more}*")

    def _repr_markdown_(self) -> str:
        """A result shows where it came from and its rows (the first of them for a long sweep)."""
        return f"**{self.describe()}**\n\n" + self.table(limit=12)._repr_markdown_()

    def __str__(self) -> str:
        return f"{self.describe()}\n{self.table(limit=12)}"

    def _contention_note(self) -> str:
        others = self.other_gpu_processes
        if not others:
            return ""
        named = ", ".join(f"pid {p['pid']} ({p['name']})" for p in others[:3]) + (", ..." if len(others) > 3 else "")
        return _(" Note: {count} process(es) outside the course's measurement queue held this GPU while it ran "
                 "({named}); if they were busy, these figures may be lower than on an idle GPU.").format(
            count=len(others), named=named)


def _numbers(value: Any) -> bool:
    return (isinstance(value, (list, tuple)) and bool(value)
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value))


def _shown(value: Any) -> Any:
    if _numbers(value):
        return float(np.median(value))
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return value


# Headers shown translated in the Chinese edition (the address table of map-pages-on-the-gpu and
# use-write-combined-and-registered-memory); other headers show as column_name words them.
_TRANSLATED_HEADERS = (N_("allocation"), N_("host pointer"), N_("device pointer"), N_("equal"),
                       N_("kernel through host pointer ok"))


def _header(key: str, rows: list[Row]) -> str:
    first = rows[0].get(key) if rows else None
    name = column_name(key, f"median of {len(first)}" if _numbers(first) else "")
    return _(name) if name in _TRANSLATED_HEADERS else name


def check_figure(ok: bool, expected: str, got: str, why: str = "") -> Text:
    """A sentence on a measured figure, for a lesson to print: as expected, or what was expected, what came,
    and the likely causes; it does not raise, as another learner or program may share the GPU (measure-bandwidth).

    With ``ZC_STRICT_FIGURES=1`` (set by the test suite) an unexpected figure raises
    :class:`FigureCheckError` instead, so that a wrong record or a broken method still fails the tests.
    """
    if ok:
        return Text(_("As expected: {got} ({expected}).").format(got=got, expected=expected))
    causes = why or ("the GPU or its PCIe link was shared with another program during the run (see the note "
                     "under the result, if any), or this GPU and machine differ from the H200 the course was "
                     "written on")
    sentence = (f"Unexpected figure: expected {expected}, measured {got}. Likely causes: {causes}. "
                "Re-run the cell when the GPU is quiet; the lesson carries on with the figures measured.")
    if os.environ.get("ZC_STRICT_FIGURES", "") not in ("", "0"):
        raise FigureCheckError(sentence)
    return Text(sentence)


def expect(*checks: tuple[bool, str, str]) -> Text:
    """Several :func:`check_figure` sentences as one Markdown list, each check an ``(ok, expected, got)`` triple."""
    return bullets(check_figure(*c) for c in checks)


class FigureCheckError(CourseError):
    """A measured figure missed what the lesson expects, under ``ZC_STRICT_FIGURES=1`` (the tests)."""


def reference(name: str) -> Result:
    """The recorded H200 result of experiment ``name``, in either mode (to plot beside a live run); in a class
    (live, the class setting, an instructor's record that holds ``name``), this GPU's from that record."""
    if detect().live and class_limit() is not None:
        shared, _ = class_record()
        if shared is not None and name in shared.record["experiments"]:
            found = _from_class_record(name, shared)
            _log_result(found, "class-record")
            return found
        replayed = _reference(name)
        _log_result(replayed, "reference")
        return replayed
    return _reference(name)


def _reference(name: str) -> Result:
    record, path = records.reference_record()
    experiment = record["experiments"].get(name)
    if experiment is None:
        raise RecordError(
            f"{path.name} holds no '{name}' experiment (it has {', '.join(record['experiments'])}). "
            "Record a complete set on a GPU with `python -m helpers record`."
        )
    return Result(name, experiment["params"], experiment["rows"], False, record["provenance"], path.name)


CLASS_SETTING = "ZC_CLASS_GPU_SECONDS"


def class_limit() -> float | None:
    """The most GPU seconds one experiment may hold per learner in a class sharing one GPU:
    ``$ZC_CLASS_GPU_SECONDS`` (set by the instructor, instructor guide), or None when unset."""
    text = os.environ.get(CLASS_SETTING, "").strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1e6:
        raise CourseError(f"{CLASS_SETTING}={text!r} is not a number of seconds; unset it to measure every "
                          "experiment live, or give e.g. 2 to replay the experiments that hold the GPU longer.")
    return value


def class_replay_reason(name: str) -> str:
    """Why experiment ``name`` replays although a GPU is here, or "" when it runs live: under the class
    setting, an experiment that held the GPU longer than the limit in the reference record's own run
    (its provenance's ``experiment_wall_seconds``) replays that record, so a class of N learners does
    not wait N times its sweep."""
    limit = class_limit()
    if limit is None:
        return ""
    record, _path = records.reference_record()
    held = record["provenance"].get("experiment_wall_seconds", {}).get(name)
    if held is None or held <= limit:
        return ""
    return _("It replays because the instructor set {setting}={limit:g} for a class sharing one GPU: this "
             "experiment held the GPU for {held:g} s in that run; unset {setting} to measure it live.").format(
        setting=CLASS_SETTING, limit=limit, held=held)


_class_cache: dict[tuple[Any, ...], Any] = {}


def class_record() -> tuple[Any, str]:
    """The instructor's record of this GPU (:class:`helpers.sharing.class_record.ClassRecord`) and "", or None and
    why it cannot be shown; checked again whenever the file changes."""
    from ..memory import gpu
    from ..platform import machine_state
    from ..sharing import class_record as shared
    from ..sharing.gpu_queue import gpu_key

    try:
        key = gpu_key()
        path = shared.record_path(key)
        st = os.lstat(path)
        stamp: tuple[Any, ...] = (str(path), st.st_ino, st.st_mtime_ns, st.st_size, st.st_uid, st.st_mode)
    except FileNotFoundError:
        return None, _("there is no instructor's record at {path}").format(path=path)
    except CourseError as exc:
        return None, str(exc)
    if stamp not in _class_cache:
        try:
            found = shared.load(path, gpu=gpu.device_name(), board=machine_state.board(), key=key)
            _class_cache.clear()
            _class_cache[stamp] = (found, "")
        except shared.ClassRecordProblem as exc:
            return None, str(exc)  # not cached: its age or the mount may change
    return _class_cache[stamp]


def _held_seconds(name: str, shared: Any) -> float | None:
    """Seconds experiment ``name`` held the GPU: in the instructor's record's run on this GPU when it timed it,
    else in the reference record's."""
    if shared is not None:
        held = shared.record["provenance"].get("experiment_wall_seconds", {}).get(name)
        if held is not None:
            return float(held)
    record, _ = records.reference_record()
    held = record["provenance"].get("experiment_wall_seconds", {}).get(name)
    return None if held is None else float(held)


def _from_class_record(name: str, shared: Any, why: str = "") -> Result:
    experiment = shared.record["experiments"][name]
    return Result(name, experiment["params"], experiment["rows"], False, shared.record["provenance"],
                  str(shared.path), replay_reason=why, class_record=shared.clock())


def class_result(name: str) -> Result | None:
    """Under the class setting, what to show instead of measuring ``name`` live, or None to measure it: an
    experiment that held the GPU longer than the limit comes from the instructor's record of this GPU when a
    valid one holds it, else replays data/'s reference and says why (measure-bandwidth)."""
    limit = class_limit()
    if limit is None:
        return None
    shared, problem = class_record()
    held = _held_seconds(name, shared)
    if held is None or held <= limit:
        return None
    why = _("It is shared because the instructor set {setting}={limit:g} for a class sharing one GPU: this "
            "experiment held the GPU for {held:g} s.").format(setting=CLASS_SETTING, limit=limit, held=held)
    if shared is not None and name in shared.record["experiments"]:
        return _from_class_record(name, shared, why)
    replayed = _reference(name)
    replayed.replay_reason = _("It replays because the instructor set {setting}={limit:g} for a class sharing one "
                               "GPU: this experiment held the GPU for {held:g} s; the instructor's record of this GPU "
                               "was not used: {why}.").format(setting=CLASS_SETTING, limit=limit, held=held,
                                                              why=problem or _("it holds no {name}").format(name=name))
    return replayed


def _requested(found: Result, params: dict[str, Any]) -> Result:
    """A replayed size sweep narrowed to the sizes the call asked for, where the record holds every one of them
    (``memcpy(sizes=[1 << 28])`` replays the 256 MiB rows, not the whole sweep); any other replay as recorded."""
    sizes = params.get("sizes")
    if not sizes or not found.rows or not all("nbytes" in r for r in found.rows):
        return found
    wanted = {int(n) for n in sizes}
    if not wanted <= {int(r["nbytes"]) for r in found.rows}:
        return found
    from dataclasses import replace

    return replace(found, rows=[r for r in found.rows if int(r["nbytes"]) in wanted])


def run(name: str, params: dict[str, Any], measure: Callable[..., list[Row]]) -> Result:
    """Measure live, or replay the recording of ``name``: the mode is decided in one place (and, under
    the class setting, :func:`class_result`)."""
    if not detect().live:
        return _requested(_reference(name), params)
    shown = class_result(name)
    if shown is not None:
        _log_result(shown, "class-record" if shown.class_record else "reference")
        return shown
    from ..memory import gpu

    from ..sharing import contention

    seen = contention.outsiders()
    rows = measure(**params)
    after = contention.outsiders()  # NVML sees contexts, not activity: sampled before and after the run
    others = None if seen is None or after is None else list({p["pid"]: p for p in seen + after}.values())
    provenance = {"gpu": gpu.device_name(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    result = Result(name, params, rows, True, provenance, other_gpu_processes=others)
    _log_result(result)
    return result


def _log_result(result: Result, source: str = "live") -> None:
    """Append a result to ``$ZC_RESULT_LOG`` (a JSON-lines file) when it is set: how ``python -m helpers
    classroom`` reads each simulated learner's figures (``live``, with its rows) and counts those shown from
    the instructor's record (``class-record``) or from another machine (``reference``)."""
    path = os.environ.get("ZC_RESULT_LOG")
    if not path:
        return
    entry: dict[str, Any] = {"name": result.name, "source": source, "gpu": result.gpu,
                             "date": result.provenance.get("date"), "record": result.record_file}
    if source == "live":
        entry.update(params=result.params, rows=result.rows, other_gpu_processes=result.other_gpu_processes)
    with open(path, "a") as f:
        f.write(json.dumps(entry, default=str) + "\n")
