"""Measurement records: the format, provenance, validation on load, atomic save (start-here on).

A record is one JSON file in data/ made by ``python -m helpers record`` on a real GPU::

    {"format": "zero-copy-course/record", "version": 1,
     "provenance": {"gpu": ..., "driver_version": ..., "cuda_version": ..., "pycuda_version": ...,
                    "date": ..., "command": ..., ...},
     "experiments": {"<name>": {"params": {...}, "rows": [{...}, ...]}, ...}}

Units are part of the key names (``seconds``, ``nbytes``, ``GBps`` = 1e9 bytes per second,
``ns``). data/README.md documents every experiment's rows.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

from . import paths
from .errors import RecordError

FORMAT = "zero-copy-course/record"
VERSION = 1
PROVENANCE_KEYS = ("gpu", "driver_version", "cuda_version", "pycuda_version", "date", "command")

Record = dict[str, Any]


def data_dir() -> Path:
    """The folder of recorded measurements: ``$ZC_DATA_DIR`` or the repository's data/."""
    return paths.data_dir()


def new_record(provenance: dict[str, Any]) -> Record:
    """An empty record with this provenance (:func:`helpers.platform.provenance.provenance`, live only)."""
    return {"format": FORMAT, "version": VERSION, "provenance": provenance, "experiments": {}}


# --------------------------------------------------------------------------- validation
def _fail(source: str, problem: str) -> RecordError:
    return RecordError(
        f"{source} is not a valid measurement record: {problem}. "
        "Restore it with `git checkout -- data/` or record a new one on a GPU with `python -m helpers record`."
    )


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Kind:
    """A type a row value must have: a test and the words for an error message."""

    words: str
    test: Callable[[Any], bool]


STR = Kind("a string", lambda v: isinstance(v, str))
BOOL = Kind("true or false", lambda v: isinstance(v, bool))
INT = Kind("an integer", _is_int)
COUNT = Kind("an integer of at least 0", lambda v: _is_int(v) and v >= 0)
POSITIVE = Kind("an integer of at least 1", lambda v: _is_int(v) and v >= 1)
BYTES = Kind("a byte count (an integer of at least 0)", lambda v: _is_int(v) and v >= 0)
RATE = Kind("a rate above 0", lambda v: _is_number(v) and v > 0)
NUMBER = Kind("a finite number", _is_number)
NONNEGATIVE = Kind("a finite number of at least 0", lambda v: _is_number(v) and v >= 0)
SECONDS = Kind("a non-empty list of times above 0 s", lambda v: isinstance(v, list) and bool(v)
               and all(_is_number(s) and s > 0 for s in v))
FRAMES = Kind("a list of frame numbers (integers of at least 0, or null)",
              lambda v: isinstance(v, list) and all(f is None or (_is_int(f) and f >= 0) for f in v))
STARTS = Kind("a list of times of at least 0 s", lambda v: isinstance(v, list) and all(_is_number(t) and t >= 0 for t in v))
LIMIT = Kind("a byte count of at least 0, or -1 for unlimited", lambda v: _is_int(v) and v >= -1)

# Row keys each experiment's rows must have, and their types; "key?" marks a key only some rows have.
# Adding an experiment is one line here (data/README.md says so); an experiment missing from this table
# gets the generic checks of _check_generic only.
SCHEMAS: dict[str, dict[str, Kind]] = {
    "memcpy": {"direction": STR, "host_memory": STR, "nbytes": BYTES, "seconds": SECONDS, "GBps": RATE},
    "kernel_bandwidth": {"memory": STR, "op": STR, "kernel": STR, "nbytes": BYTES, "grid": POSITIVE, "block": POSITIVE, "seconds": SECONDS, "GBps": RATE},
    "inflight": {"kernel": STR, "vector_bytes": POSITIVE, "loads_per_thread": POSITIVE, "threads": POSITIVE, "grid": POSITIVE, "block": POSITIVE, "nbytes": BYTES, "bytes_in_flight": BYTES, "seconds": SECONDS, "GBps": RATE},
    "caching": {"memory": STR, "nbytes": BYTES, "passes": POSITIVE, "seconds": SECONDS, "delivered_GBps": RATE, "grid?": POSITIVE,
                "load?": STR, "pattern?": STR, "design?": STR, "sm_rereads?": Kind("a list of counts", lambda v: isinstance(v, list)
                and all(_is_int(x) and x >= 0 for x in v)), "placement_retries?": COUNT},
    "latency": {"memory": STR, "nbytes": BYTES, "steps": POSITIVE, "seconds": SECONDS, "load_ns": RATE, "cpu_cache?": STR},
    "latency_footprint": {"memory": STR, "nbytes": BYTES, "warm": BOOL, "steps": POSITIVE, "seconds": SECONDS, "load_ns": RATE},
    "loaded_latency": {"steps": POSITIVE, "seconds": SECONDS, "load_ns": RATE, "load_kernel?": STR, "load_GBps?": RATE, "bytes_in_flight?": BYTES},
    "counters": {"kernel": STR, "stride": POSITIVE, "offset_floats": COUNT, "count": POSITIVE, "useful_bytes": BYTES,
                 "lts__t_requests_aperture_sysmem_op_read": NONNEGATIVE, "lts__t_sectors_aperture_sysmem_op_read": NONNEGATIVE,
                 "pcie__read_bytes": NONNEGATIVE, "pcie__write_bytes": NONNEGATIVE},
    "stride": {"memory": STR, "stride": POSITIVE, "offset_floats": COUNT, "count": POSITIVE, "grid": POSITIVE, "seconds": SECONDS, "useful_GBps": RATE},
    "offset": {"memory": STR, "stride": POSITIVE, "offset_floats": COUNT, "count": POSITIVE, "grid": POSITIVE, "seconds": SECONDS, "useful_GBps": RATE},
    "vector_width": {"memory": STR, "kernel": STR, "vector_bytes": POSITIVE, "nbytes": BYTES, "seconds": SECONDS, "useful_GBps": RATE},
    "end_to_end": {"method": STR, "n": POSITIVE, "nbytes": BYTES, "seconds": SECONDS},
    "reuse": {"method": STR, "uses": POSITIVE, "n": POSITIVE, "seconds": SECONDS},
    "out_of_core": {"method": STR, "budget_bytes": BYTES, "n": POSITIVE, "total_bytes": BYTES, "seconds": SECONDS, "chunk_elements?": POSITIVE},
    "address_identity": {"allocation": STR, "host_pointer": STR, "device_pointer": STR, "equal": BOOL, "kernel_through_host_pointer_ok": BOOL, "host_flags?": Kind("a list of flag names", lambda v: isinstance(v, list) and all(isinstance(f, str) for f in v))},
    "pagemap_pinned": {"allocation": STR, "address?": STR, "pages?": COUNT, "present_pages?": COUNT, "pfns?": FRAMES, "maps_line?": STR, "mapping_bytes?": BYTES, "pfns_visible?": BOOL, "memlock_soft_bytes?": LIMIT, "held_bytes?": BYTES, "VmLck?": COUNT, "VmPin?": COUNT},
    "write_combined": {"allocation": STR, "side": STR, "op": STR, "nbytes": BYTES, "seconds": SECONDS, "GBps": RATE},
    "registered": {"allocation": STR, "works?": BOOL, "error?": STR, "nbytes?": BYTES, "seconds?": SECONDS, "GBps?": RATE},
    "stale_read": {"after_launch_ms": NONNEGATIVE, "synchronized": BOOL, "filled": COUNT, "n": POSITIVE},
    "atomics": {"method": STR, "memory": STR, "expected": COUNT, "counted": COUNT, "seconds": SECONDS},
    "spin_loop": {"load": STR, "spins": POSITIVE, "turns": POSITIVE, "seconds": SECONDS, "turn_ns": RATE},
    "managed": {"memory": STR, "nbytes": BYTES, "passes": POSITIVE, "seconds": SECONDS, "GBps": RATE},
    "cpu_traffic": {"cpu_threads": COUNT, "nbytes": BYTES, "seconds": SECONDS, "GBps": RATE, "cpu_GBps_with_kernel?": RATE,
                    "cpu_GBps_alone?": RATE},
    "read_only_registration": {"memory": STR, "read_only_flag": BOOL, "nbytes": BYTES, "registered": BOOL, "error": STR,
                               "seconds?": SECONDS, "GBps?": RATE},
    "pageable_access": {"n": POSITIVE, "outcome": STR, "error": STR, "PAGEABLE_MEMORY_ACCESS": COUNT},
    "numa_topology": {"host_numa_nodes": COUNT, "pci_bus_id": STR, "sysfs_numa_node": Kind(
        "an integer (-1: unknown)", lambda v: isinstance(v, int) and not isinstance(v, bool)), "local_cpulist": STR},
}

# Keys that hold a byte count in any experiment, with the exceptions a schema may allow (-1 = unlimited).
_SIGNED_BYTES = {"memlock_soft_bytes"}


def _generic_kind(key: str) -> Kind | None:
    """The type the name of a key implies, in every experiment (units are in the key names)."""
    if key in ("seconds", "allocation_seconds"):  # every repeat; each fresh allocation's median (access.py)
        return SECONDS
    if key == "started_s":  # when each repeat of a sweep timed in rounds started
        return STARTS
    if key.endswith("GBps") or key.endswith("_ns"):
        return RATE
    if key == "nbytes" or key.endswith("_bytes"):
        return LIMIT if key in _SIGNED_BYTES else Kind("a byte count of at least 0", lambda v: _is_number(v) and v >= 0)
    if key.endswith("_ms"):
        return NONNEGATIVE
    return None


def _check_rows(name: str, rows: list[Any], source: str) -> None:
    schema = SCHEMAS.get(name, {})
    required = [key for key in schema if not key.endswith("?")]
    kinds = {key.rstrip("?"): kind for key, kind in schema.items()}
    for i, row in enumerate(rows):
        where = f"row {i} of {name!r}"
        if not isinstance(row, dict):
            raise _fail(source, f"{where} is not an object")
        missing = [key for key in required if key not in row]
        if missing:
            raise _fail(source, f"{where} lacks {', '.join(missing)} (every {name!r} row needs "
                                f"{', '.join(required)})")
        for key, value in row.items():
            kind = kinds.get(key) or _generic_kind(key)
            if kind is not None and not kind.test(value):
                raise _fail(source, f"{where}: {key!r} should be {kind.words}, found {value!r}")


def parse_date(text: Any) -> datetime:
    """A provenance date (ISO 8601) as an aware datetime; naive dates are taken as UTC. ValueError if not a date."""
    if not isinstance(text, str):
        raise ValueError(f"{text!r} is not a string")
    when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def _check_provenance(prov: Any, source: str) -> None:
    if not isinstance(prov, dict):
        raise _fail(source, "'provenance' is missing")
    missing = [key for key in PROVENANCE_KEYS if not prov.get(key)]
    if missing:
        raise _fail(source, f"provenance lacks {', '.join(missing)}")
    for key in (*PROVENANCE_KEYS, "compute_capability", "numpy_version", "python_version", "platform"):
        if key in prov and not isinstance(prov[key], str):
            raise _fail(source, f"provenance {key!r} should be a string, found {prov[key]!r}")
    try:
        parse_date(prov["date"])
    except ValueError:
        raise _fail(source, f"provenance 'date' should be an ISO 8601 date such as 2026-12-02T11:16:33+00:00, "
                            f"found {prov['date']!r}") from None
    for key in ("attributes", "experiment_wall_seconds", "machine_state"):
        if key in prov and not isinstance(prov[key], dict):
            raise _fail(source, f"provenance {key!r} should be an object, found {prov[key]!r}")
    for name, seconds in prov.get("experiment_wall_seconds", {}).items():
        if not NONNEGATIVE.test(seconds):
            raise _fail(source, f"provenance experiment_wall_seconds[{name!r}] should be {NONNEGATIVE.words}, "
                                f"found {seconds!r}")


def validate(record: Any, source: str = "record") -> Record:
    """Check a record's structure and values; return it, or raise RecordError saying what is wrong.

    Every experiment gets the checks its key names imply (``seconds``: a non-empty list of times
    above 0; ``*GBps`` and ``*_ns``: above 0; ``nbytes`` and ``*_bytes``: at least 0); an experiment
    in :data:`SCHEMAS` also needs its required keys, with their types.
    """
    if not isinstance(record, dict):
        raise _fail(source, "the top level is not an object")
    if record.get("format") != FORMAT:
        raise _fail(source, f"'format' is {record.get('format')!r}, expected {FORMAT!r}")
    if record.get("version") != VERSION:
        raise _fail(source, f"'version' is {record.get('version')!r}; this course reads version {VERSION}")
    _check_provenance(record.get("provenance"), source)
    experiments = record.get("experiments")
    if not isinstance(experiments, dict) or not experiments:
        raise _fail(source, "'experiments' is missing or empty")
    for name, experiment in experiments.items():
        if not isinstance(experiment, dict) or not isinstance(experiment.get("params"), dict):
            raise _fail(source, f"experiment {name!r} has no 'params' object")
        rows = experiment.get("rows")
        if not isinstance(rows, list) or not rows:
            raise _fail(source, f"experiment {name!r} has no rows")
        _check_rows(name, rows, source)
    return record


# --------------------------------------------------------------------------- files
def load_record(path: str | os.PathLike[str]) -> Record:
    """Read and validate one record file (start-here)."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(
            f"No measurement record at {path}. The recorded data ships in the repository's data/ folder: "
            "restore it with `git checkout -- data/`, or record one on a GPU with `python -m helpers record`."
        )
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _fail(str(path), f"it is not JSON ({' '.join(str(exc).split())})") from exc
    except RecursionError:
        raise _fail(str(path), "its JSON is nested too deeply to be a record") from None
    except OSError as exc:
        raise RecordError(f"Cannot read the measurement record {path}: {exc.strerror or exc}. "
                          "Check the file's permissions, or restore it with `git checkout -- data/`.") from exc
    return validate(record, str(path))


def list_records(directory: Path | None = None) -> list[Path]:
    """Every record file in data/, sorted by name (classroom-*.json files, a different format, are not records)."""
    return sorted(p for p in (directory or data_dir()).glob("*.json") if not p.name.startswith("classroom-"))


def matching_records(gpu: str = "H200", directory: Path | None = None) -> list[tuple[Record, Path]]:
    """Every valid record whose GPU name contains ``gpu``, oldest first (by provenance date, then file name).

    A corrupt record raises RecordError rather than being skipped.
    """
    found = []
    for path in list_records(directory):
        record = load_record(path)
        if gpu.lower() in record["provenance"]["gpu"].lower():
            found.append((parse_date(record["provenance"]["date"]), path.name, record, path))
    return [(record, path) for _, _, record, path in sorted(found, key=lambda item: item[:2])]


FUTURE_SLACK = timedelta(days=1)   # a record dated later than now + this is never the reference (issue 20)


def reference_record(gpu: str = "H200", directory: Path | None = None) -> tuple[Record, Path]:
    """The newest valid record whose GPU name contains ``gpu``, and its path (replay mode)."""
    found = matching_records(gpu, directory)
    late = datetime.now(timezone.utc) + FUTURE_SLACK
    future = [path for record, path in found if parse_date(record["provenance"]["date"]) > late]
    found = [(record, path) for record, path in found if path not in future]
    if future and not found:
        raise RecordError(f"The records {', '.join(p.name for p in future)} are dated in the future, so none can be "
                          "the reference. Fix the machine's clock, or restore data/ with `git checkout -- data/`.")
    if not found:
        raise RecordError(
            f"No recorded measurements from a GPU named like {gpu!r} in {directory or data_dir()}. "
            "Restore data/ with `git checkout -- data/`, or record one on a GPU with `python -m helpers record`."
        )
    return found[-1]


def default_name(record: Record) -> str:
    """``<gpu>-<date>.json``, e.g. ``nvidia-h200-2026-12-02.json``."""
    gpu = re.sub(r"[^a-z0-9]+", "-", record["provenance"]["gpu"].lower()).strip("-")
    return f"{gpu}-{record['provenance']['date'][:10]}.json"


def dumps(record: Record) -> str:
    """JSON text with one row per line, so that a new recording diffs row by row."""
    lines = ["{", f' "format": {json.dumps(record["format"])},', f' "version": {record["version"]},',
             f' "provenance": {json.dumps(record["provenance"], sort_keys=True)},', ' "experiments": {']
    names = list(record["experiments"])
    for n, name in enumerate(names):
        experiment = record["experiments"][name]
        lines.append(f'  {json.dumps(name)}: {{"params": {json.dumps(experiment["params"], sort_keys=True)}, "rows": [')
        rows = experiment["rows"]
        for r, row in enumerate(rows):
            lines.append("   " + json.dumps(row) + ("," if r < len(rows) - 1 else ""))
        lines.append("  ]}" + ("," if n < len(names) - 1 else ""))
    lines += [" }", "}", ""]
    return "\n".join(lines)


def _umask() -> int:
    """The process's umask, read without changing it where Linux allows."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it, and put it back at once
    os.umask(mask)
    return mask


def _publish(tmp: Path, target: Path) -> bool:
    """Give the finished file ``tmp`` the name ``target`` unless that name exists; True if it did.

    A hard link creates the name only if it is free, atomically, with the whole content in place, so
    two writers can never take the same name. Where the file system has no hard links, the name is
    reserved with O_EXCL and the content moved over it.
    """
    try:
        os.link(tmp, target)
    except FileExistsError:
        return False
    except OSError:
        try:
            os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        except FileExistsError:
            return False
        os.replace(tmp, target)
        return True
    tmp.unlink()
    return True


def check_can_save(path: str | os.PathLike[str] | None = None) -> Path:
    """Before a long live run: raise :class:`RecordError` now if :func:`save_record` could not write
    ``path`` (it exists, or its folder is missing or read-only) or, without ``path``, into data/.
    Returns the folder checked."""
    if path is not None:
        target = Path(path)
        if target.exists():
            raise RecordError(f"--output {target} exists: a record never replaces a file. Choose another path "
                              "(checked before the first measurement, so no GPU time was spent).")
        directory = target.parent
    else:
        directory = data_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=directory, prefix=".record-check-", suffix=".json")
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        raise RecordError(f"Cannot write a record into {directory} ({exc.strerror or exc}); checked before the first "
                          "measurement. Make the folder writable, or pass --output with a path in a folder you can "
                          "write.") from exc
    return directory


def save_record(record: Record, path: str | os.PathLike[str] | None = None, *, overwrite: bool = False) -> Path:
    """Validate and write a record atomically; never replace an existing file unless ``overwrite``.

    Without ``path`` the file goes to data/ under :func:`default_name`, with ``-2``, ``-3``, ...
    added when that name is taken: processes saving at the same time each get a file of their own.
    The file gets the permissions the umask gives a new file (e.g. 0644 under umask 022).
    """
    validate(record, "the record to save")
    if path is None:
        directory = data_dir()
        directory.mkdir(parents=True, exist_ok=True)
        first = directory / default_name(record)
        candidates = (first if n == 1 else first.with_name(f"{first.stem}-{n}.json") for n in range(1, 10_000))
    else:
        target = Path(path)
        if target.exists() and not overwrite:
            raise FileExistsError(f"{target} exists; pass overwrite=True to replace it, or choose another path.")
        directory, candidates = target.parent, iter([target])
    text = dumps(record)
    json.loads(text)  # the writer's own output must parse
    fd, name = tempfile.mkstemp(dir=directory, prefix=".record-", suffix=".json")
    tmp = Path(name)
    try:
        with os.fdopen(fd, "w") as handle:
            os.fchmod(handle.fileno(), 0o666 & ~_umask())
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        for candidate in candidates:
            if path is not None and overwrite:
                os.replace(tmp, candidate)
                return candidate
            if _publish(tmp, candidate):
                return candidate
            if path is not None:
                raise FileExistsError(f"{candidate} exists; pass overwrite=True to replace it, or choose another path.")
        raise RecordError(f"{directory} already holds 9999 records named like {default_name(record)}; "
                          "move some away or pass a path.")
    finally:
        tmp.unlink(missing_ok=True)


def command_line() -> str:
    """The command that is running, for provenance (``python -m helpers record ...``)."""
    program = sys.argv[0]
    if program.endswith(("helpers/__main__.py", "helpers\\__main__.py")):
        program = "-m helpers"
    return " ".join([Path(sys.executable).name, program, *sys.argv[1:]])
