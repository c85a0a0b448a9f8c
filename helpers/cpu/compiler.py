"""Build transformed kernel source into a shared library, once (lesson 04).

The library is cached under ``$ZC_CPU_CACHE`` (or ``$XDG_CACHE_HOME/zero-copy-course/cpu``,
or ``~/.cache/zero-copy-course/cpu``), named by a hash of the C++ text, the header
``cuda_cpu.h``, the compiler's identity and the flags: the same source compiles once per
machine, and editing the header or changing compiler rebuilds.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from .errors import CxxCompilerNotFoundError, KernelCompileError

__all__ = ["HEADER", "FLAGS", "cache_dir", "find_compiler", "build"]

HEADER = Path(__file__).with_name("cuda_cpu.h")
# -O2 for speed; -ffp-contract=off so a*b+c is never fused: results then equal numpy's.
FLAGS = ("-std=c++20", "-O2", "-ffp-contract=off", "-fno-strict-aliasing", "-fPIC", "-shared", "-w")

_loaded: dict[str, ctypes.CDLL] = {}


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$ZC_CPU_CACHE`` or a ``zero-copy-course/cpu`` user cache."""
    override = os.environ.get("ZC_CPU_CACHE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "zero-copy-course" / "cpu"


@lru_cache(maxsize=None)
def _identity(compiler: str) -> str:
    try:
        out = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.splitlines()[0] if out.stdout else compiler
    except (OSError, subprocess.SubprocessError):
        return compiler


def find_compiler() -> str:
    """The C++ compiler to use: ``$CXX``, else c++, g++ or clang++ on PATH."""
    candidates = [os.environ["CXX"]] if os.environ.get("CXX") else []
    candidates += ["c++", "g++", "clang++"]
    for name in candidates:
        path = shutil.which(name)
        if path:
            return path
    raise CxxCompilerNotFoundError(
        "The CPU backend compiles kernels with a C++ compiler, and none was found (tried "
        + ", ".join(candidates) + "). Install one: `sudo apt-get install g++` (Debian/Ubuntu), "
        "`xcode-select --install` (macOS), or `conda install -c conda-forge cxx-compiler`; "
        "or set CXX to a compiler's path."
    )


def build(cpp: str, source_name: str = "kernel.cu") -> ctypes.CDLL:
    """Compile ``cpp`` (which includes ``cuda_cpu.h``) to a shared library and load it."""
    compiler = find_compiler()
    key = hashlib.sha256("\0".join([cpp, HEADER.read_text(), _identity(compiler), *FLAGS]).encode()).hexdigest()[:24]
    if key in _loaded:
        return _loaded[key]
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    library = directory / f"{key}.so"
    if not library.exists():
        with tempfile.TemporaryDirectory(dir=directory, prefix=".build-") as tmp:
            src = Path(tmp) / f"{key}.cpp"
            src.write_text(cpp)
            out = Path(tmp) / f"{key}.so"
            cmd = [compiler, *FLAGS, "-I", str(HEADER.parent), str(src), "-o", str(out)]
            result = subprocess.run(cmd, capture_output=True, text=True)
            if result.returncode != 0:
                raise KernelCompileError(_explain(result.stderr, source_name))
            os.replace(out, library)  # atomic: a parallel build of the same key is harmless
    lib = ctypes.CDLL(str(library))
    _loaded[key] = lib
    return lib


def _explain(stderr: str, source_name: str) -> str:
    lines = [ln for ln in stderr.splitlines() if "error" in ln or ln.startswith(source_name)]
    shown = "\n".join((lines or stderr.splitlines())[:15])
    hint = ""
    if "cpu::ptr" in stderr:
        hint = ("\nHint: the CPU backend turns pointer parameters into checked pointers (cpu::ptr<T>). "
                "Declare a local pointer made from one with `auto` (auto q = p + k;), not as T*.")
    return f"The C++ compiler rejected {source_name} (line numbers are the kernel source's):\n{shown}{hint}"
