"""The SASS (the GPU's own machine code) of the spin kernels in hazards.cu: does each loop load the flag on every
turn, or did the compiler hoist the load out of it (avoid-hazards-on-mapped-memory)?

Live, PyCUDA builds hazards.cu to a cubin with the options :func:`helpers.kernels.load_kernel` uses and
``cuobjdump -sass`` (from the CUDA toolkit) disassembles it. In replay mode the listing comes from a file in
``data/sass/`` that a live run wrote with ``python -m helpers sass``, with its provenance (GPU, toolkit, disassembler,
date, command, and a hash of the kernels' source, so a listing of an older source is said to be one). Nothing here
is typed by hand: without such a file the result has no rows and says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import kernels
from ..mode import detect
from ..paths import data_dir
from .hazards import SPIN_KERNELS
from .result import Result, Row

FORMAT = "zero-copy-course sass listing 1"
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;?\s*(?:/\*.*)?$")
_BRANCH = re.compile(r"\bBRA\b(?:\s+!?U?P\w+,)?\s+0x([0-9a-f]+)")
_GLOBAL_LOAD = re.compile(r"^(?:@!?U?P\w+\s+)?(LDG|LD)\b[.\w]*")


def source_hash() -> str:
    """SHA-256 of the spin kernels' source: a recorded listing of other source is not this source's."""
    return hashlib.sha256(kernels.source("hazards", *SPIN_KERNELS.values()).encode()).hexdigest()


def functions(listing: str) -> dict[str, list[tuple[int, str]]]:
    """Each function of a ``cuobjdump -sass`` listing: its instructions as (address, text), NOPs left out."""
    found: dict[str, list[tuple[int, str]]] = {}
    current: list[tuple[int, str]] | None = None
    for line in listing.splitlines():
        head = re.search(r"Function\s*:\s*(\w+)", line)
        if head:
            current = found.setdefault(head.group(1), [])
            continue
        m = _INSTRUCTION.match(line)
        if m and current is not None and not m.group(2).startswith("NOP"):
            current.append((int(m.group(1), 16), m.group(2).rstrip(" ;")))
    return found


def loops(instructions: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """(first, last) address of every loop: a branch back to an earlier address (the trap ``BRA`` to itself after
    ``EXIT`` is not a loop)."""
    spans = []
    for address, text in instructions:
        m = _BRANCH.search(text)
        if m and int(m.group(1), 16) < address:
            spans.append((int(m.group(1), 16), address))
    return spans


def analyse(load: str, kernel: str, instructions: list[tuple[int, str]]) -> Row:
    """One kernel's row: its instructions, loops, and each global load with whether it lies inside a loop."""
    spans = loops(instructions)
    loads = [{"address": a, "instruction": _GLOBAL_LOAD.match(t).group(0).split()[-1],
              "in_loop": any(s <= a <= e for s, e in spans)}
             for a, t in instructions if _GLOBAL_LOAD.match(t)]
    return {"load": load, "kernel": kernel, "instructions": [[a, t] for a, t in instructions],
            "loops": [list(s) for s in spans], "loads": loads, "load_in_loop": any(x["in_loop"] for x in loads)}


def _disassembler() -> list[str]:
    tool = shutil.which("cuobjdump")
    if tool is None:
        raise FileNotFoundError("cuobjdump (CUDA toolkit, beside nvcc) is not on PATH: put the toolkit's bin/ on PATH.")
    return [tool, "-sass"]


def disassemble(cubin: bytes) -> str:
    """``cuobjdump -sass`` of a cubin."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hazards.cubin"
        path.write_bytes(cubin)
        return subprocess.run([*_disassembler(), str(path)], capture_output=True, text=True, check=True,
                              timeout=120).stdout


def _version(command: list[str]) -> str:
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
        return out[-2] if len(out) > 1 else (out[0] if out else "?")
    except (OSError, subprocess.SubprocessError):
        return "?"


def _live() -> Result:
    import pycuda.driver as drv

    listing = functions(disassemble(kernels.cubin("hazards")))
    rows = [analyse(load, name, listing.get(name, [])) for load, name in SPIN_KERNELS.items()]
    device = drv.Context.get_device()
    provenance = {"gpu": device.name(), "compute_capability": ".".join(map(str, device.compute_capability())),
                  "driver": drv.get_driver_version(), "arch": kernels.arch(),
                  "nvcc": _version(["nvcc", "--version"]), "disassembler": _version([_disassembler()[0], "--version"]),
                  "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "command": " ".join([Path(sys.executable).name, *sys.argv]), "source_sha256": source_hash()}
    return Result("spin_sass", {"kernels": SPIN_KERNELS}, rows, True, provenance)


def listings(directory: Path | None = None) -> list[Path]:
    """The recorded listings, oldest first by name (``data/sass/<gpu>-<date>.json``)."""
    return sorted(((directory or data_dir()) / "sass").glob("*.json"))


def _replay(directory: Path | None = None) -> Result:
    found = listings(directory)
    if not found:
        return Result("spin_sass", {"kernels": SPIN_KERNELS}, [], False, {"gpu": "no GPU"}, None)
    data = json.loads(found[-1].read_text())
    if data.get("format") != FORMAT or not isinstance(data.get("rows"), list):
        raise ValueError(f"{found[-1]} is not a SASS listing of this course ({FORMAT!r}); restore data/sass/ "
                         "with git, or write one on a GPU with `python -m helpers sass`.")
    return Result("spin_sass", data.get("params", {}), data["rows"], False, data["provenance"],
                  f"sass/{found[-1].name}")


def spin_sass() -> Result:
    """The SASS of hazards.cu's spin kernels: live, built and disassembled here; in replay, the newest listing a live
    run saved in data/sass/ (no rows if there is none) (avoid-hazards-on-mapped-memory)."""
    return _live() if detect().live else _replay()


def save(result: Result, output: str | None = None) -> Path:
    """Write a live listing to ``output`` (default ``data/sass/<gpu>-<date>.json``), never over an existing file."""
    if not result.live or not result.rows:
        raise ValueError("only a live listing is saved: run `python -m helpers sass` on a machine with a GPU.")
    gpu = re.sub(r"[^a-z0-9]+", "-", result.provenance["gpu"].lower()).strip("-")
    path = Path(output) if output else data_dir() / "sass" / f"{gpu}-{result.provenance['date'][:10]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"format": FORMAT, "provenance": result.provenance, "params": result.params,
                       "rows": result.rows}, indent=1)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=".sass-", delete=False) as tmp:
        tmp.write(text + "\n")
    try:
        os.link(tmp.name, path)   # fails if the file exists: never overwrite a listing silently
    finally:
        os.unlink(tmp.name)
    return path


def summary(result: Result) -> dict[str, Any]:
    """Per way of loading: whether the flag's load sits inside the spin loop (for the command line)."""
    return {row["load"]: ("inside the loop" if row["load_in_loop"] else "hoisted out of the loop")
            for row in result.rows}
