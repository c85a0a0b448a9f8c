"""Measurement records: the format, provenance, validation on load, atomic save (lesson 00 on).

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
import platform
import re
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .errors import RecordError
from .machine import detect_virtualization

FORMAT = "zero-copy-course/record"
VERSION = 1
PROVENANCE_KEYS = ("gpu", "driver_version", "cuda_version", "pycuda_version", "date", "command")

Record = dict[str, Any]


def data_dir() -> Path:
    """The folder of recorded measurements: ``$ZC_DATA_DIR`` or the repository's data/."""
    override = os.environ.get("ZC_DATA_DIR")
    return Path(override) if override else Path(__file__).resolve().parent.parent / "data"


def provenance(command: str) -> dict[str, Any]:
    """Where and how a live record was made: GPU, driver, CUDA, PyCUDA, date, command."""
    from . import gpu

    gpu.context()
    import numpy
    import pycuda
    import pycuda.driver as drv

    major, minor = drv.Device(0).compute_capability()
    driver = drv.get_driver_version()
    return {
        "gpu": gpu.device_name(),
        "compute_capability": f"{major}.{minor}",
        "driver_version": _nvidia_driver_version() or "unknown",
        "cuda_version": f"{driver // 1000}.{driver % 1000 // 10}",
        "pycuda_version": pycuda.VERSION_TEXT,
        "numpy_version": numpy.__version__,
        "python_version": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "attributes": gpu.device_attributes(),
        "virtualization": detect_virtualization(),
        "cpu": _cpu_model(),
    }


def _cpu_model() -> str:
    """The host CPU's model name and last-level cache size as /proc/cpuinfo gives them."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or "unknown"
    fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    return f"{fields.get('model name', 'unknown')}; cache size {fields.get('cache size', '?')}"


def _nvidia_driver_version() -> str | None:
    try:
        text = Path("/proc/driver/nvidia/version").read_text()
    except OSError:
        return None
    match = re.search(r"Kernel Module(?: for \w+)?\s+([\d.]+)", text)
    return match.group(1) if match else None


def new_record(command: str) -> Record:
    """An empty record with this machine's provenance (live only)."""
    return {"format": FORMAT, "version": VERSION, "provenance": provenance(command), "experiments": {}}


# --------------------------------------------------------------------------- validation
def _fail(source: str, problem: str) -> RecordError:
    return RecordError(
        f"{source} is not a valid measurement record: {problem}. "
        "Restore it with `git checkout -- data/` or record a new one on a GPU with `python -m helpers record`."
    )


def _check_number(value: Any, where: str, source: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(source, f"{where} should be a finite number, found {value!r}")


def validate(record: Any, source: str = "record") -> Record:
    """Check a record's structure and values; return it, or raise RecordError saying what is wrong."""
    if not isinstance(record, dict):
        raise _fail(source, "the top level is not an object")
    if record.get("format") != FORMAT:
        raise _fail(source, f"'format' is {record.get('format')!r}, expected {FORMAT!r}")
    if record.get("version") != VERSION:
        raise _fail(source, f"'version' is {record.get('version')!r}; this course reads version {VERSION}")
    prov = record.get("provenance")
    if not isinstance(prov, dict):
        raise _fail(source, "'provenance' is missing")
    missing = [key for key in PROVENANCE_KEYS if not prov.get(key)]
    if missing:
        raise _fail(source, f"provenance lacks {', '.join(missing)}")
    experiments = record.get("experiments")
    if not isinstance(experiments, dict) or not experiments:
        raise _fail(source, "'experiments' is missing or empty")
    for name, experiment in experiments.items():
        if not isinstance(experiment, dict) or not isinstance(experiment.get("params"), dict):
            raise _fail(source, f"experiment {name!r} has no 'params' object")
        rows = experiment.get("rows")
        if not isinstance(rows, list) or not rows:
            raise _fail(source, f"experiment {name!r} has no rows")
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise _fail(source, f"row {i} of {name!r} is not an object")
            seconds = row.get("seconds")
            if seconds is not None:
                if not isinstance(seconds, list) or not seconds:
                    raise _fail(source, f"row {i} of {name!r}: 'seconds' should be a non-empty list")
                for s in seconds:
                    _check_number(s, f"row {i} of {name!r}: seconds", source)
                    if s <= 0:
                        raise _fail(source, f"row {i} of {name!r}: a time of {s} s is not positive")
            for key, value in row.items():
                if key.endswith(("GBps", "_ns", "_bytes")) or key in ("nbytes",):
                    _check_number(value, f"row {i} of {name!r}: {key}", source)
    return record


# --------------------------------------------------------------------------- files
def load_record(path: str | os.PathLike[str]) -> Record:
    """Read and validate one record file (lesson 00)."""
    path = Path(path)
    if not path.is_file():
        raise RecordError(
            f"No measurement record at {path}. The recorded data ships in the repository's data/ folder: "
            "restore it with `git checkout -- data/`, or record one on a GPU with `python -m helpers record`."
        )
    try:
        record = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _fail(str(path), f"it is not JSON ({exc})") from exc
    return validate(record, str(path))


def list_records(directory: Path | None = None) -> list[Path]:
    """Every record file in data/, sorted by name."""
    return sorted((directory or data_dir()).glob("*.json"))


def reference_record(gpu: str = "H200", directory: Path | None = None) -> tuple[Record, Path]:
    """The newest valid record whose GPU name contains ``gpu``, and its path (replay mode)."""
    found: list[tuple[str, Path, Record]] = []
    for path in list_records(directory):
        record = load_record(path)
        if gpu.lower() in record["provenance"]["gpu"].lower():
            found.append((record["provenance"]["date"], path, record))
    if not found:
        raise RecordError(
            f"No recorded measurements from a GPU named like {gpu!r} in {directory or data_dir()}. "
            "Restore data/ with `git checkout -- data/`, or record one on a GPU with `python -m helpers record`."
        )
    _, path, record = max(found, key=lambda item: item[0])
    return record, path


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


def save_record(record: Record, path: str | os.PathLike[str] | None = None, *, overwrite: bool = False) -> Path:
    """Validate and write a record atomically; never replace an existing file unless ``overwrite``.

    Without ``path`` the file goes to data/ under :func:`default_name`, with ``-2``, ``-3``, ...
    added when that name is taken.
    """
    validate(record, "the record to save")
    if path is None:
        directory = data_dir()
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / default_name(record)
        n = 2
        while target.exists():
            target = directory / default_name(record).replace(".json", f"-{n}.json")
            n += 1
    else:
        target = Path(path)
        if target.exists() and not overwrite:
            raise FileExistsError(f"{target} exists; pass overwrite=True to replace it, or choose another path.")
    text = dumps(record)
    json.loads(text)  # the writer's own output must parse
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".record-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def command_line() -> str:
    """The command that is running, for provenance (``python -m helpers record ...``)."""
    program = sys.argv[0]
    if program.endswith(("helpers/__main__.py", "helpers\\__main__.py")):
        program = "-m helpers"
    return " ".join([Path(sys.executable).name, program, *sys.argv[1:]])
